#include "registry.hpp"

#include "coin_toss.hpp"
#include "eight_schools.hpp"
#include "harmonic_oscillator.hpp"
#include "hmm.hpp"
#include "linear_acceleration.hpp"
#include "logistic_regression.hpp"
#include "model_entry.hpp"

namespace hmc::models {

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
      entry<LogisticRegression>("logistic_regression", "Bayesian logistic regression, Normal priors on alpha, beta"),
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

keys::Keys model_keys(const std::string& name) {
  const ModelEntry* m = find_model(name);
  return m ? m->keys() : keys::Keys{};
}

}  // namespace hmc::models
