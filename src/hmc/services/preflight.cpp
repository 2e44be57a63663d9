#include "hmc/services/preflight.hpp"

#include "hmc/core/errors.hpp"
#include "hmc/core/text.hpp"
#include "hmc/model/concept.hpp"
#include "hmc/sampler/adaptation.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <tuple>

namespace hmc::services {

namespace {

/// A setting as an error message shows it: the JSON number's shortest text.
std::string shown_number(double x) { return hmc::shown(nlohmann::json(x)); }

}  // namespace

void check_against_model(const io::RunConfig& run, const ModelShape& shape, bool samples_prior) {
  const std::int64_t dim = shape.dim;
  if (dim > model::kMaxDim) {
    throw DataError("data error: the model has " + std::to_string(dim) + " coordinates per particle, more than the " +
                    std::to_string(model::kMaxDim) + " hmc supports (/model/data)");
  }
  const auto& s = run.sampler;
  for (const auto& [wanted, has, key] :
       {std::tuple{s.log_likelihood, shape.observed >= 0, "log_likelihood"},
        std::tuple{s.posterior_predictive, shape.predicted >= 0, "posterior_predictive"},
        std::tuple{s.generated_quantities, shape.generated >= 0, "generated_quantities"}}) {
    if (wanted && !has) {
      throw ConfigError(std::string("config error: /output/") + key + ": model " + run.model + " has no " + key +
                        " member (docs/adding-a-model.md#after-sampling); set it to false");
    }
  }
  if (s.init_strategy == InitStrategy::kPrior && !samples_prior) {
    throw ConfigError("config error: /sampler/init/strategy \"prior\": model " + run.model +
                      " cannot draw from its prior (use \"uniform\" or \"values\")");
  }
  const bool values = s.init_strategy == InitStrategy::kValues;
  if (values != run.init_values_given) {
    throw ConfigError(values ? "config error: /sampler/init/strategy \"values\" needs /sampler/init/values"
                             : "config error: /sampler/init/values needs /sampler/init/strategy \"values\"");
  }
  if (values && static_cast<std::int64_t>(s.init_values.size()) != dim) {
    throw ConfigError("config error: /sampler/init/values has " + std::to_string(s.init_values.size()) +
                      " entries; the model has " + std::to_string(dim) + " unconstrained coordinates");
  }
  const double eps = s.step_size;
  const double length = eps * static_cast<double>(s.leapfrog_steps);
  if (!std::isfinite(length)) {
    throw ConfigError("config error: /sampler/step_size " + shown_number(eps) +
                      " x /sampler/leapfrog_steps: the path length is not finite");
  }
  const double longest = eps * static_cast<double>(s.adapt.max_leapfrog);
  if (!std::isfinite(longest)) {
    throw ConfigError("config error: /sampler/step_size " + shown_number(eps) +
                      " x /sampler/adapt/max_leapfrog: the longest path is not finite");
  }
  if (!(length > 0.0) || !(longest > 0.0)) {
    throw ConfigError("config error: /sampler/step_size " + shown_number(eps) +
                      " is too small to move (its products with the step counts underflow to 0)");
  }
  const std::int64_t superchains = run.diagnostics.superchains;
  if (superchains > 0 && (superchains < 2 || s.particles % superchains != 0)) {
    throw ConfigError("config error: /diagnostics/superchains must be at least 2 and divide /sampler/particles (" +
                      std::to_string(s.particles) + "), got " + std::to_string(superchains));
  }
  if (matrix_metric(s.adapt.metric) && dim > sampler::kMaxDenseDim) {
    throw ConfigError(std::string("config error: /sampler/adapt/metric \"") + mode_name(s.adapt.metric) +
                      "\" supports up to " + std::to_string(sampler::kMaxDenseDim) + " coordinates; the model has " +
                      std::to_string(dim) + " (use \"diag\" or \"fisher_diag\")");
  }
}

void check_disk(const io::RunConfig& run, const hmc::StoreLayout& layout, const ModelShape& shape,
                const io::DrawFormats& formats) {
  const std::string& dir = run.output.dir;
  const std::int64_t need = estimate_output_bytes(run, layout, shape, formats);
  const std::int64_t free = free_disk_bytes(dir);
  if (free >= 0 && need > free) {
    std::string group;
    for (const auto& g : layout.groups) {
      hmc::StoreLayout only = layout;
      only.param_names.clear();
      only.stats.clear();
      only.groups = {g};
      group += ", of which the " + g.name + " group takes about " + format_bytes(io::stored_bytes(only, 16)) +
               " (/output/" + g.name + " false or a larger /sampler/thin makes it smaller)";
    }
    throw RunError("run error: /output/dir " + hmc::printable(dir) + ": the run needs about " + format_bytes(need) +
                   " of disk (store, results, checkpoint" + group + "), but only " + format_bytes(free) +
                   " are free there (docs/output.md#disk-space)");
  }
}

}  // namespace hmc::services
