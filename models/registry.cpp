#include "registry.hpp"

#include "coin_toss.hpp"
#include "eight_schools.hpp"
#include "harmonic_oscillator.hpp"
#include "hmc/parallel/decomposition.hpp"
#include "hmc/parallel/gather.hpp"
#include "hmm.hpp"
#include "linear_acceleration.hpp"

#include <chrono>
#include <type_traits>
#include <utility>

namespace hmc::models {

namespace {

/// A model may explain its results with `std::string note() const` (e.g. label switching).
template <class M, class = void>
struct has_note : std::false_type {};
template <class M>
struct has_note<M, std::void_t<decltype(std::string(std::declval<const M&>().note()))>> : std::true_type {};

template <class Model>
std::string model_note(const Model& m) {
  if constexpr (has_note<Model>::value) {
    return m.note();
  } else {
    (void)m;
    return {};
  }
}

template <class Model>
RunOutput run_model(const RunRequest& r) {
  const Model model = Model::from_config(r.model, r.data);
  const parallel::Decomposition dec{r.settings.particles, r.mpi.size(), r.mpi.rank()};
  sampler::EnsembleSampler<Model> ensemble(model, r.settings, dec.begin(), dec.count(), r.mpi.allreduce());
  // Every rank must agree before anyone starts: a failure on one rank ends them all.
  long long bad = ensemble.initialise(), bad_total = 0;
  MPI_Allreduce(&bad, &bad_total, 1, MPI_LONG_LONG, MPI_SUM, r.mpi.comm());
  if (bad_total > 0) {
    throw sampler::InitError("model " + r.model.at("name").get<std::string>() + ": " + std::to_string(bad_total) +
                             " of " + std::to_string(r.settings.particles) +
                             " particles found no finite log density in " + std::to_string(r.settings.init_attempts) +
                             " draws (try /sampler/init/radius or /sampler/init/values)");
  }
  const auto local = ensemble.run(r.progress);

  const auto start = std::chrono::steady_clock::now();
  RunOutput out;
  out.names = model.parameter_names();
  out.note = model_note(model);
  out.all = parallel::gather_draws(r.mpi, dec, local);
  out.sampling_s = out.all.sampling_s;
  out.gather_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
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
                    [](const nlohmann::json& m, const nlohmann::json& d) { return Model::from_config(m, d).dim(); },
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
