#include "hmc/services/preflight.hpp"

#include "hmc/core/errors.hpp"
#include "hmc/io/json_text.hpp"
#include "hmc/sampler/adaptation.hpp"

#include <cmath>
#include <cstdint>

namespace hmc::services {

using nlohmann::json;

void check_against_model(const json& c, const ModelShape& shape, const std::string& model, bool samples_prior) {
  const std::int64_t dim = shape.dim;
  const auto strategy = parse_mode<InitStrategy>(c["sampler"]["init"]["strategy"].get<std::string>());
  if (strategy == InitStrategy::kPrior && !samples_prior) {
    throw ConfigError("config error: /sampler/init/strategy \"prior\": model " + model +
                      " cannot draw from its prior (use \"uniform\" or \"values\")");
  }
  const auto& init = c["sampler"]["init"];
  const bool values = strategy == InitStrategy::kValues;
  if (values != init.contains("values")) {
    throw ConfigError(values ? "config error: /sampler/init/strategy \"values\" needs /sampler/init/values"
                             : "config error: /sampler/init/values needs /sampler/init/strategy \"values\"");
  }
  if (values && static_cast<std::int64_t>(init["values"].size()) != dim) {
    throw ConfigError("config error: /sampler/init/values has " + std::to_string(init["values"].size()) +
                      " entries; the model has " + std::to_string(dim) + " unconstrained coordinates");
  }
  if (c["output"]["dir"].get<std::string>().empty()) throw ConfigError("config error: /output/dir must not be empty");
  const double eps = c["sampler"]["step_size"].get<double>();
  const double length = eps * c["sampler"]["leapfrog_steps"].get<double>();
  if (!std::isfinite(length)) {
    throw ConfigError("config error: /sampler/step_size " + hmc::shown(c["sampler"]["step_size"]) +
                      " x /sampler/leapfrog_steps: the path length is not finite");
  }
  const double longest = eps * c["sampler"]["adapt"]["max_leapfrog"].get<double>();
  if (!std::isfinite(longest)) {
    throw ConfigError("config error: /sampler/step_size " + hmc::shown(c["sampler"]["step_size"]) +
                      " x /sampler/adapt/max_leapfrog: the longest path is not finite");
  }
  if (!(length > 0.0) || !(longest > 0.0)) {
    throw ConfigError("config error: /sampler/step_size " + hmc::shown(c["sampler"]["step_size"]) +
                      " is too small to move (its products with the step counts underflow to 0)");
  }
  const auto superchains = c["diagnostics"]["superchains"].get<std::int64_t>();
  const auto particles = c["sampler"]["particles"].get<std::int64_t>();
  if (superchains > 0 && (superchains < 2 || particles % superchains != 0)) {
    throw ConfigError("config error: /diagnostics/superchains must be at least 2 and divide /sampler/particles (" +
                      std::to_string(particles) + "), got " + std::to_string(superchains));
  }
  if (parse_mode<MetricKind>(c["sampler"]["adapt"]["metric"].get<std::string>()) == MetricKind::kDense &&
      dim > sampler::kMaxDenseDim) {
    throw ConfigError("config error: /sampler/adapt/metric \"dense\" supports up to " +
                      std::to_string(sampler::kMaxDenseDim) + " coordinates; the model has " + std::to_string(dim) +
                      " (use \"diag\")");
  }
}

void check_disk(const json& c, const ModelShape& shape) {
  const std::string dir = c["output"]["dir"].get<std::string>();
  const std::int64_t need = estimate_output_bytes(c, shape);
  const std::int64_t free = free_disk_bytes(dir);
  if (free >= 0 && need > free) {
    throw RunError("run error: /output/dir " + hmc::printable(dir) + ": the run needs about " + format_bytes(need) +
                   " of disk (store, results, checkpoint), but only " + format_bytes(free) +
                   " are free there (docs/output.md#disk-space)");
  }
}

}  // namespace hmc::services
