#pragma once
/// \file
/// \brief How a model becomes an entry of the registry: the typed run, the gradient
/// check and the config check, from the model's members (model/concept.hpp). A type
/// that lacks a member fails to compile here with one message naming it.

#include "hmc/core/errors.hpp"
#include "hmc/model/concept.hpp"
#include "hmc/services/run_model.hpp"
#include "registry.hpp"

#include <string>
#include <utility>
#include <vector>

namespace hmc::models {

/// \brief The run of a model, built from the session's config and data.
template <class Model>
int run_model(services::Session& session) {
  const auto& spec = session.spec();
  return services::run_model(Model::from_config(spec.config["model"], spec.data), session);
}

/// \brief `hmc diagnose` for a model: its gradient against finite differences.
template <class Model>
DiagnoseOutput diagnose_model(const DiagnoseRequest& r) {
  const Model model = Model::from_config(r.model, r.data);
  const int d = model.dim();
  const auto& centre = r.settings.init_values;
  const auto points = model::initial_points(r.points, d, r.settings.init_radius, r.settings.seed,
                                            static_cast<int>(centre.size()) == d ? centre : std::vector<double>{});
  DiagnoseOutput out;
  out.check = model::check_gradient(model, points, r.rel_step);
  const auto names = model.parameter_names();
  for (int j = 0; j < d; ++j) {
    out.labels.push_back("theta[" + std::to_string(j + 1) + "]" +
                         (model.num_params() == d ? " (" + names[j] + ")" : std::string()));
  }
  return out;
}

/// \brief The registry's entry for `Model` (models/registry.cpp lists them).
template <class Model>
ModelEntry entry(std::string name, std::string summary) {
  // One message per missing member (model/concept.hpp), and nothing else: what uses
  // the members is not compiled for a model that lacks one.
  if constexpr (!model::check_registrable_model<Model>()) {
    return {};
  } else {
    return ModelEntry{std::move(name),
                      std::move(summary),
                      &Model::config_keys,
                      [](const nlohmann::json& m, const nlohmann::json& d) {
                        const Model model = Model::from_config(m, d);
                        if (model.dim() > model::kMaxDim) {
                          throw DataError("data error: the model has " + std::to_string(model.dim()) +
                                          " coordinates per particle, more than the " + std::to_string(model::kMaxDim) +
                                          " hmc supports (/model/data)");
                        }
                        return services::ModelShape{model.dim(), model.num_params(), model::scratch_size(model), 0};
                      },
                      &run_model<Model>,
                      &diagnose_model<Model>,
                      model::can_sample_prior<Model>()};
  }
}

}  // namespace hmc::models
