#include "hmc/services/resume.hpp"

#include "hmc/core/errors.hpp"
#include "hmc/core/version.hpp"
#include "hmc/io/checkpoint.hpp"
#include "hmc/io/config.hpp"
#include "hmc/io/json_text.hpp"
#include "hmc/services/collective.hpp"
#include "hmc/services/signals.hpp"

#include <algorithm>

namespace hmc::services {

using nlohmann::json;

namespace {

/// Version of the checkpoint header; a checkpoint of another is refused (2: the
/// adapters' saved state by name, and the algorithm).
constexpr int kCheckpointFormat = 2;

/// The loop's state: its iteration, its algorithm, and what each adapter saved (every
/// value as the bits of its double, so it comes back exactly).
json loop_json(const sampler::LoopState& l) {
  json saved = json::object();
  for (const auto& [name, values] : l.adapters.entries()) {
    json bits = json::array();
    for (double x : values) bits.push_back(io::double_bits(x));
    saved[name] = std::move(bits);
  }
  return {{"iteration", l.iteration}, {"algorithm", l.algorithm}, {"adapters", saved}};
}

sampler::LoopState loop_from_json(const json& j) {
  sampler::LoopState l;
  l.iteration = j.at("iteration").get<int>();
  l.algorithm = j.at("algorithm").get<std::string>();
  for (const auto& [name, bits] : j.at("adapters").items()) {
    std::vector<double> values;
    for (const auto& x : bits) values.push_back(io::double_from_bits(x.get<std::string>()));
    l.adapters.put(name, std::move(values));
  }
  return l;
}

/// The spec of the run in `paths`, from its run-config.json, with its data reloaded.
RunSpec load_spec(const OutputPaths& paths) {
  json j;
  try {
    j = io::parse_bounded(io::read_input_file(paths.run_config(), io::kMaxConfigBytes + io::kMaxDataBytes),
                          io::kMaxJsonDepth + 2);  // {"config": ...} wraps an accepted config
  } catch (const io::JsonInputError& e) {
    const std::string why = e.what();
    if (why.rfind("cannot open", 0) == 0) {
      throw RunError("cannot read " + paths.run_config() + " (not a checkpointed hmc run)");
    }
    if (why.rfind("is not a regular file", 0) == 0 || why.rfind("is a directory", 0) == 0) {
      throw RunError(paths.run_config() + " " + why);
    }
    throw RunError(paths.run_config() + " is not valid (corrupt staging directory): " + why);
  }
  RunSpec spec = spec_from_json(j, paths.run_config());
  spec.resume = true;
  spec.paths = paths;
  spec.data = io::load_data(spec.config);
  return spec;
}

}  // namespace

RunSpec resume_spec(const parallel::MpiContext& mpi, const std::string& dir, Clock::time_point t0,
                    const std::vector<std::string>& model_names) {
  RunSpec spec;
  on_root(mpi, [&] {
    {
      const ReadingInput reading("the run's config and data");  // a stop signal ends hmc here
      spec = load_spec(find_checkpointed(dir));
    }
    if (std::find(model_names.begin(), model_names.end(), spec.run.model) == model_names.end()) {
      throw RunError("the checkpointed run uses a model this build lacks");
    }
  });
  spec.t0 = t0;
  return broadcast_spec(mpi, spec);
}

json state_json(const CheckpointState& s) {
  return {{"iteration", s.iteration},
          {"loop", loop_json(s.loop)},
          {"flushed", {{"posterior", s.flushed_posterior}, {"warmup", s.flushed_warmup}}},
          {"elapsed", {{"sampling", s.sampling_s}, {"store", s.store_s}}}};
}

CheckpointState state_from_json(const json& j) {
  CheckpointState s;
  s.iteration = j.at("iteration").get<int>();
  s.loop = loop_from_json(j.at("loop"));
  s.flushed_posterior = j.at("flushed").at("posterior").get<std::int64_t>();
  s.flushed_warmup = j.at("flushed").at("warmup").get<std::int64_t>();
  s.sampling_s = j.at("elapsed").at("sampling").get<double>();
  s.store_s = j.at("elapsed").at("store").get<double>();
  return s;
}

json checkpoint_header(const RunSpec& spec, const hmc::StoreLayout& layout, std::int64_t row_width, int ranks,
                       const CheckpointState& state) {
  json h = {{"format", kCheckpointFormat},
            {"hmc", hmc::version()},
            {"fingerprint", io::config_fingerprint(spec.config, spec.data)},
            {"model", spec.run.model},
            {"algorithm", mode_name(spec.run.sampler.algorithm)},
            {"particles", layout.particles},
            {"params", layout.num_params()},
            {"row_width", row_width},
            {"ranks", ranks}};
  h.update(state_json(state));
  return h;
}

std::vector<double> read_checkpoint(const RunSpec& spec, const hmc::StoreLayout& layout, int row_width,
                                    std::unique_ptr<io::TileStore>& store, CheckpointState& state) {
  io::CheckpointData ckpt = io::read_checkpoint(spec.paths.checkpoint());
  const json& h = ckpt.header;
  const std::string where = "checkpoint " + spec.paths.checkpoint();
  if (h.value("format", 0) != kCheckpointFormat) throw RunError(where + " has an unknown format");
  const std::string algorithm = h.value("algorithm", std::string("?"));
  if (algorithm != mode_name(spec.run.sampler.algorithm)) {
    throw RunError(where + " was written by /sampler/algorithm " + algorithm + ", but " + spec.paths.run_config() +
                   " says " + mode_name(spec.run.sampler.algorithm) +
                   "; a run resumes only with the algorithm that wrote its checkpoint");
  }
  if (h.value("fingerprint", std::string()) != io::config_fingerprint(spec.config, spec.data)) {
    throw RunError(where + " does not match this run: the config or the data changed since it was written");
  }
  if (h.value("particles", std::int64_t{-1}) != layout.particles || h.value("row_width", -1) != row_width ||
      h.value("params", -1) != layout.num_params()) {
    throw RunError(where + " does not match this run (particles, parameters or state size differ)");
  }
  if (ckpt.rows.size() != static_cast<std::size_t>(layout.particles) * row_width) {
    throw RunError(where + " is truncated (particle rows)");
  }
  try {
    state = state_from_json(h);
  } catch (const json::exception& e) {
    throw RunError(where + " is not valid: " + e.what());
  }
  store = std::make_unique<io::TileStore>(spec.paths.blocks(), layout);
  store->truncate(hmc::Section::kPosterior, state.flushed_posterior);
  store->truncate(hmc::Section::kWarmup, state.flushed_warmup);
  store->verify();
  return std::move(ckpt.rows);
}

}  // namespace hmc::services
