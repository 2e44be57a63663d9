#include "hmc/io/run_config.hpp"

#include "hmc/core/draw_source.hpp"
#include "hmc/core/text.hpp"
#include "hmc/diagnostics/summary.hpp"
#include "hmc/io/checksum.hpp"
#include "hmc/io/schema.hpp"
#include "hmc/keys/values.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

namespace hmc::io {

using nlohmann::json;

RunConfig run_config(const json& config) {
  // Any model and format name: the config was validated against the real lists.
  const keys::Values v(config, generic_keys({}, {}), "");
  RunConfig r;
  r.model = v.string("/model/name");
  r.model_section = config.at("model");

  sampler::Settings& s = r.sampler;
  s.particles = v.integer("/sampler/particles");
  s.warmup = static_cast<int>(v.integer("/sampler/warmup"));
  s.draws = static_cast<int>(v.integer("/sampler/draws"));
  s.thin = static_cast<int>(v.integer("/sampler/thin"));
  s.step_size = v.number("/sampler/step_size");
  s.leapfrog_steps = static_cast<int>(v.integer("/sampler/leapfrog_steps"));
  s.temperature = v.number("/sampler/temperature");
  s.init_strategy = parse_mode<InitStrategy>(v.string("/sampler/init/strategy"));
  s.init_radius = v.number("/sampler/init/radius");
  r.init_values_given = v.given("/sampler/init/values");
  if (r.init_values_given) s.init_values = v.numbers("/sampler/init/values");
  s.adapt.enabled = v.boolean("/sampler/adapt/enabled");
  s.adapt.target_accept = v.number("/sampler/adapt/target_accept");
  s.adapt.metric = parse_mode<MetricKind>(v.string("/sampler/adapt/metric"));
  s.adapt.rank = static_cast<int>(v.integer("/sampler/adapt/rank"));
  s.adapt.trajectory = parse_mode<TrajectoryKind>(v.string("/sampler/adapt/trajectory"));
  s.adapt.max_leapfrog = static_cast<int>(v.integer("/sampler/adapt/max_leapfrog"));
  s.adapt.restarts = v.boolean("/sampler/adapt/restarts");
  s.algorithm = parse_mode<Algorithm>(v.string("/sampler/algorithm"));
  s.max_tree_depth = static_cast<int>(v.integer("/sampler/max_tree_depth"));
  s.integrator = parse_mode<Integrator>(v.string("/sampler/integrator"));
  s.adapt.init_buffer = static_cast<int>(v.integer("/sampler/adapt/init_buffer"));
  s.adapt.term_buffer = static_cast<int>(v.integer("/sampler/adapt/term_buffer"));
  s.adapt.base_window = static_cast<int>(v.integer("/sampler/adapt/base_window"));
  s.seed = v.unsigned_integer("/seed");
  s.save_warmup = v.boolean("/output/save_warmup");

  r.output.dir = v.string("/output/dir");
  r.output.formats = v.strings("/output/formats");
  r.output.save_warmup = s.save_warmup;
  s.log_likelihood = v.boolean("/output/log_likelihood");
  s.posterior_predictive = v.boolean("/output/posterior_predictive");
  s.generated_quantities = v.boolean("/output/generated_quantities");
  r.output.flush_every = static_cast<int>(v.integer("/output/flush_every"));
  r.output.checkpoint_every = static_cast<int>(v.integer("/output/checkpoint_every"));
  r.output.precision = static_cast<int>(v.integer("/output/precision"));
  r.output.compression = static_cast<int>(v.integer("/output/compression"));

  r.diagnostics.superchains = static_cast<int>(v.integer("/diagnostics/superchains"));
  r.diagnostics.max_draws = v.integer("/diagnostics/max_draws");

  r.log.level = v.string("/log/level");
  r.log.progress_every = static_cast<int>(v.integer("/log/progress_every"));
  const int total = s.warmup + s.draws;
  s.progress_every = r.log.progress_every > 0 ? r.log.progress_every : (total >= 10 ? total / 10 : 1);

  r.run.rank_timeout_s = v.number("/run/rank_timeout_s");
  return r;
}

int RunConfig::block_draws(std::int64_t columns) const {
  const std::int64_t kept = std::max(kept_draws(), kept_warmup_draws());
  if (output.flush_every > 0)
    return static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(output.flush_every, kept)));
  const double per_draw =
      static_cast<double>(sampler.particles) * static_cast<double>(columns) * static_cast<double>(sizeof(double));
  const double target = 32.0 * 1024 * 1024;
  return static_cast<int>(std::max<std::int64_t>(
      1, std::min<std::int64_t>(kept, static_cast<std::int64_t>(std::min(1e9, target / per_draw)))));
}

int RunConfig::superchains() const {
  return diagnostics.superchains > 0 ? diagnostics.superchains : diagnostics::default_superchains(sampler.particles);
}

json recorded_config(const json& config) {
  json c = config;
  if (c.contains("output") && c["output"].is_object()) c["output"].erase("dir");
  return c;
}

std::string config_fingerprint(const json& config, const json& data) {
  json c = config;
  c.erase("output");
  c.erase("log");
  c.erase("run");
  const std::string text = hmc::dump_text(c) + "\n" + hmc::dump_text(data);
  Checksum sum;
  sum.update(text.data(), text.size());
  char buf[24];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, sum.value());
  return buf;
}

std::int64_t data_bytes(const json& data) {
  std::int64_t numbers = 0;
  // Iteratively: data nest at most kMaxJsonDepth deep, but no recursion is needed.
  std::vector<const json*> todo{&data};
  while (!todo.empty()) {
    const json* j = todo.back();
    todo.pop_back();
    if (j->is_number()) {
      ++numbers;
    } else if (j->is_structured()) {
      for (const auto& x : *j) todo.push_back(&x);
    }
  }
  return numbers * static_cast<std::int64_t>(sizeof(double));
}

}  // namespace hmc::io
