#include "registry.hpp"

#include "coin_toss.hpp"
#include "eight_schools.hpp"
#include "harmonic_oscillator.hpp"
#include "hmc/services/run_model.hpp"
#include "hmm.hpp"
#include "linear_acceleration.hpp"

#include <type_traits>
#include <utility>

namespace hmc::models {

namespace {

template <class Model>
int run_model(services::Session& session) {
  const auto& spec = session.spec();
  return services::run_model(Model::from_config(spec.config["model"], spec.data), session);
}

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

template <class Model>
ModelEntry entry(std::string name, std::string summary) {
  static_assert(model::check_model<Model>());
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

}  // namespace

const std::vector<ModelEntry>& registry() {
  static const std::vector<ModelEntry> models = {
      entry<CoinToss>("coin_toss", "independent coins, Bernoulli tosses, Beta(a, b) priors; p on the logit scale"),
      entry<EightSchools>("eight_schools",
                          "hierarchical normal (Rubin 1981), non-centred; gradient by forward-mode autodiff"),
      entry<HarmonicOscillator>("harmonic_oscillator", "U(q) = 1/2 (q - c)^T K (q - c): a Gaussian with known moments"),
      entry<Hmm>("hmm",
                 "hidden Markov model, categorical or Gaussian emissions; states summed out (forward algorithm)"),
      entry<LinearAcceleration>("linear_acceleration",
                                "z = h + v0 t + g t^2 + N(0, sigma): height under constant acceleration"),
  };
  return models;
}

const ModelEntry* find_model(const std::string& name) {
  for (const auto& m : registry())
    if (m.name == name) return &m;
  return nullptr;
}

std::vector<std::string> model_names() {
  std::vector<std::string> names;
  for (const auto& m : registry()) names.push_back(m.name);
  return names;
}

std::vector<io::KeySpec> model_keys(const std::string& name) {
  const ModelEntry* m = find_model(name);
  return m ? m->keys() : std::vector<io::KeySpec>{};
}

}  // namespace hmc::models
