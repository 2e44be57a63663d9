#include "registry.hpp"

#include "coin_toss.hpp"
#include "harmonic_oscillator.hpp"
#include "hmc/parallel/decomposition.hpp"
#include "hmc/parallel/gather.hpp"

#include <chrono>

namespace hmc::models {

namespace {

template <class Model>
RunOutput run_model(const RunRequest& r) {
  const Model model = Model::from_config(r.model, r.data);
  const parallel::Decomposition dec{r.settings.particles, r.mpi.size(), r.mpi.rank()};
  sampler::EnsembleSampler<Model> ensemble(model, r.settings, dec.begin(), dec.count());
  // Every rank must agree before anyone starts: a failure on one rank ends them all.
  long long bad = ensemble.initialise(), bad_total = 0;
  MPI_Allreduce(&bad, &bad_total, 1, MPI_LONG_LONG, MPI_SUM, r.mpi.comm());
  if (bad_total > 0) {
    throw sampler::InitError("model " + r.model.at("name").get<std::string>() + ": " + std::to_string(bad_total) +
                             " of " + std::to_string(r.settings.particles) +
                             " particles start where the log density is not finite");
  }
  const auto local = ensemble.run(r.progress);

  const auto start = std::chrono::steady_clock::now();
  RunOutput out;
  out.names = model.parameter_names();
  out.all = parallel::gather_draws(r.mpi, dec, local);
  out.sampling_s = out.all.sampling_s;
  out.gather_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

template <class Model>
ModelEntry entry(std::string name, std::string summary) {
  static_assert(model::check_model<Model>());
  return ModelEntry{std::move(name), std::move(summary), &Model::config_keys,
                    [](const nlohmann::json& m, const nlohmann::json& d) { (void)Model::from_config(m, d); },
                    &run_model<Model>};
}

}  // namespace

const std::vector<ModelEntry>& registry() {
  static const std::vector<ModelEntry> models = {
      entry<CoinToss>("coin_toss", "independent coins, Bernoulli tosses, Beta(a, b) priors; p on the logit scale"),
      entry<HarmonicOscillator>("harmonic_oscillator", "U(q) = 1/2 (q - c)^T K (q - c): a Gaussian with known moments"),
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
