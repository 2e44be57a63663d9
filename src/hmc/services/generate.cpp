#include "hmc/services/generate.hpp"

#include "hmc/core/errors.hpp"
#include "hmc/core/kokkos_shim.hpp"
#include "hmc/core/version.hpp"
#include "hmc/diagnostics/loo.hpp"
#include "hmc/diagnostics/summary.hpp"
#include "hmc/io/config.hpp"
#include "hmc/io/json_text.hpp"
#include "hmc/io/results.hpp"
#include "hmc/io/run_config.hpp"
#include "hmc/services/resolve.hpp"

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <iostream>

namespace hmc::services {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const char* const kGroups[3] = {"log_likelihood", "posterior_predictive", "generated_quantities"};

}  // namespace

RunSpec generate_spec(const parallel::MpiContext& mpi, const GenerateRequest& request,
                      const std::vector<std::string>& model_names) {
  RunSpec spec;
  on_root(mpi, [&] {
    const std::string dir = fs::absolute(request.dir).lexically_normal().string();
    const std::string run_json = dir + "/run.json", draws = dir + "/draws.nc";
    if (!fs::is_regular_file(run_json) || !fs::is_regular_file(draws)) {
      throw RunError("hmc generate reads a finished run's run.json and draws.nc; " + dir + " has " +
                     (fs::is_regular_file(run_json) ? "no draws.nc (its /output/formats has no \"netcdf\")"
                                                    : "no run.json (not a finished hmc run)"));
    }
    json j;
    try {
      j = io::parse_bounded(io::read_input_file(run_json, io::kMaxConfigBytes + io::kMaxDataBytes),
                            io::kMaxJsonDepth + 2);
      spec.config = j.at("config");
    } catch (const std::exception& e) {
      throw RunError(run_json + " is not a run's record: " + e.what());
    }
    std::string out = request.output.empty() ? dir + ".generated" : request.output;
    // the posterior draws only, into draws.nc (apply_override: the --set of a run)
    for (const std::string set : {"output.save_warmup=false", "output.formats=[\"netcdf\"]"})
      io::apply_override(spec.config, set);
    for (const char* g : kGroups) io::apply_override(spec.config, std::string("output.") + g + "=false");
    io::apply_override(spec.config, "output.dir=" + json(out).dump());
    try {
      spec.run = io::run_config(spec.config);
    } catch (const std::exception& e) {
      throw RunError(run_json + ": its config is not valid for this build: " + e.what());
    }
    if (std::find(model_names.begin(), model_names.end(), spec.run.model) == model_names.end()) {
      throw RunError("the run in " + dir + " uses model " + spec.run.model + ", which this build lacks");
    }
    spec.data = io::load_data(spec.config);
    spec.paths = output_paths(out);
    spec.overwrite = request.overwrite;
    spec.started_utc = utc_now();
  });
  return broadcast_spec(mpi, spec);
}

RunSpec with_groups(const RunSpec& spec, const std::vector<std::string>& asked, const bool has[3]) {
  RunSpec s = spec;
  bool any = false;
  for (int k = 0; k < 3; ++k) {
    const bool want =
        asked.empty() ? has[k] : std::find(asked.begin(), asked.end(), std::string(kGroups[k])) != asked.end();
    io::apply_override(s.config, std::string("output.") + kGroups[k] + (want ? "=true" : "=false"));
    any = any || want;
  }
  if (!any) {
    throw ConfigError("config error: model " + spec.run.model +
                      " has no log_likelihood, posterior_predictive or generated_quantities member: nothing to "
                      "generate (docs/adding-a-model.md#after-sampling)");
  }
  s.run = io::run_config(s.config);
  return s;
}

void check_source(const hmc::DrawSource& src, const hmc::StoreLayout& layout, const std::string& path) {
  if (src.layout().param_names != layout.param_names || src.layout().particles != layout.particles) {
    throw RunError(path + " does not hold draws of this model's parameters and particles (" +
                   std::to_string(src.layout().num_params()) + " parameters of " +
                   std::to_string(src.layout().particles) + " particles; the model has " +
                   std::to_string(layout.num_params()) + ", the config " + std::to_string(layout.particles) + ")");
  }
}

void finish_generate(const RunSpec& spec, const GenerateRequest& request, const io::TileStore& store,
                     const io::DrawFormats& formats, std::vector<hmc::DataArray> data) {
  const std::string& dir = spec.paths.staging;
  io::WriterOptions o;
  o.compression = spec.run.output.compression;
  o.attributes = {{"hmc_version", hmc::version()},
                  {"hmc_git", hmc::git_hash()},
                  {"kokkos_version", hmc::kokkos_version()},
                  {"seed", std::to_string(spec.run.sampler.seed)},
                  {"particles", spec.run.sampler.particles},
                  {"thin", spec.run.sampler.thin},
                  {"config", hmc::dump_text(io::recorded_config(spec.config))}};
  o.data = std::move(data);
  for (const auto& w : io::make_writers(formats, {"netcdf"}, o)) w->write(dir + "/" + w->file_name(), store, {});
  diagnostics::SummaryOptions opt;
  opt.superchains = spec.run.superchains();
  opt.max_draws = spec.run.diagnostics.max_draws;
  const auto params = diagnostics::summarize(store, opt);
  json summary = io::parameters_json(params);
  const std::string source = fs::absolute(request.dir).lexically_normal().string();
  summary["generated_from"] = source;
  if (store.layout().group_index("log_likelihood") >= 0) summary["loo"] = io::loo_json(diagnostics::loo(store));
  json run = {{"hmc_version", hmc::version()},
              {"command", "generate"},
              {"generated_from", source},
              {"started_utc", spec.started_utc},
              {"config", io::recorded_config(spec.config)}};
  io::write_file_atomic(dir + "/run.json", hmc::dump_text(run, 2) + "\n");
  io::write_file_atomic(dir + "/summary.json", hmc::dump_text(summary, 2) + "\n");
  publish(spec.paths, spec.overwrite);
  std::string groups;
  for (const auto& g : store.layout().groups) groups += (groups.empty() ? "" : ", ") + g.name;
  spdlog::info("{} of {} x {} draws of {} in {}/ (draws.nc, summary.json, run.json)", groups, store.layout().particles,
               store.layout().draws, source, spec.paths.final_dir);
}

}  // namespace hmc::services
