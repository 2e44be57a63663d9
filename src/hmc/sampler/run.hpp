#pragma once
/// \file
/// \brief The sampling loop of one rank: initialise, warm up, sample, record.
///
/// The loop knows nothing of MPI, files or logging: it reports progress through a
/// callback and returns host copies of what it recorded.

#include "hmc/core/types.hpp"
#include "hmc/model/concept.hpp"
#include "hmc/sampler/settings.hpp"
#include "hmc/sampler/transition.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>

namespace hmc::sampler {

/// \brief Raised when the ensemble cannot start (no finite log density).
class InitError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Progress {
  int iteration;  ///< 1-based, warmup included
  int total;      ///< warmup + draws
  bool warmup;
  double accept_rate;  ///< mean acceptance probability of this rank's particles, last iteration
  double elapsed_s;
};

using ProgressCallback = std::function<void(const Progress&)>;

/// \brief What one rank recorded, on the host, particle-major.
struct LocalDraws {
  using HostDraws = Kokkos::View<double***, Kokkos::LayoutRight, Kokkos::HostSpace>;
  using HostStats = Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace>;
  using HostVector = Kokkos::View<double*, Kokkos::HostSpace>;
  HostDraws draws;                       ///< [particle][draw][param]
  HostStats lp, accept_prob, divergent;  ///< [particle][draw]
  HostVector accept_sum, divergences;    ///< per particle, post-warmup
  double sampling_s = 0.0;
  std::int64_t grad_evals = 0;  ///< particles x (warmup + draws) x leapfrog steps, on this rank
};

/// \brief The particles [first, first + count) of an ensemble on one rank.
///
/// `initialise()` places the particles and reports how many start where the log
/// density is not finite (so the caller can agree on that across ranks before
/// anyone starts); `run()` then performs warmup and sampling, one kernel launch per
/// iteration, and returns host copies of what it recorded.
template <class Model>
class EnsembleSampler {
  static_assert(model::check_model<Model>());
  using Policy = Kokkos::RangePolicy<ExecSpace>;

 public:
  EnsembleSampler(const Model& model, const Settings& s, std::int64_t first, std::int64_t count)
      : model_(model),
        s_(s),
        first_(first),
        n_(static_cast<int>(count)),
        dim_(model.dim()),
        state_(n_, dim_, model::scratch_size(model)),
        inv_mass_("hmc::inv_mass", dim_) {
    Kokkos::deep_copy(inv_mass_, 1.0);
  }

  /// \brief Initial positions and their log densities; returns the number of local
  /// particles whose log density is not finite.
  int initialise() {
    ScopedRegion region("hmc::initialise");
    int non_finite = 0;
    Kokkos::parallel_reduce("hmc::init", Policy(0, n_),
                            InitUniform<Model>{model_, state_, dim_, s_.init_radius, s_.seed, first_}, non_finite);
    return non_finite;
  }

  LocalDraws run(const ProgressCallback& progress = {}) {
    ScopedRegion region("hmc::sample");
    const auto start = std::chrono::steady_clock::now();
    const int kept = s_.kept();
    TransitionRecord rec{ParticleView("hmc::accept_prob", n_),
                         ParticleView("hmc::divergent", n_),
                         ParticleView("hmc::accept_sum", n_),
                         ParticleView("hmc::divergences", n_),
                         DrawView("hmc::draws", n_, kept, model_.num_params()),
                         DrawStatView("hmc::draw_lp", n_, kept),
                         DrawStatView("hmc::draw_accept", n_, kept),
                         DrawStatView("hmc::draw_divergent", n_, kept)};

    HmcTransition<Model> step{model_,  state_, rec, inv_mass_, dim_, s_.step_size, s_.leapfrog_steps, s_.temperature,
                              s_.seed, first_, 0,   false,     -1};
    const int total = s_.warmup + s_.draws;
    for (int it = 1; it <= total; ++it) {
      const bool warm = it <= s_.warmup;
      const int post = it - s_.warmup - 1;  // 0-based post-warmup index
      step.iteration = static_cast<std::uint32_t>(it);
      step.count = !warm;
      step.slot = (!warm && post % s_.thin == 0) ? post / s_.thin : -1;
      Kokkos::parallel_for("hmc::transition", Policy(0, n_), step);

      if (progress && s_.progress_every > 0 && (it % s_.progress_every == 0 || it == total)) {
        double sum = 0.0;
        const auto a = rec.accept_prob;
        Kokkos::parallel_reduce(
            "hmc::progress_accept", Policy(0, n_), KOKKOS_LAMBDA(const int i, double& acc) { acc += a(i); }, sum);
        const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        progress(Progress{it, total, warm, n_ > 0 ? sum / n_ : 0.0, elapsed});
      }
    }
    Kokkos::fence();

    LocalDraws out;
    out.draws = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), rec.draws);
    out.lp = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), rec.draw_lp);
    out.accept_prob = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), rec.draw_accept);
    out.divergent = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), rec.draw_divergent);
    out.accept_sum = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), rec.accept_sum);
    out.divergences = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), rec.divergences);
    out.sampling_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    // Leapfrog gradients of warmup and sampling (the initial one is not timed either).
    out.grad_evals = static_cast<std::int64_t>(n_) * total * s_.leapfrog_steps;
    return out;
  }

  /// Current ensemble state (for tests and, later, checkpoints).
  const EnsembleState& state() const { return state_; }

 private:
  Model model_;
  Settings s_;
  std::int64_t first_;
  int n_;
  int dim_;
  EnsembleState state_;
  VectorView inv_mass_;
};

/// \brief Single-process convenience: initialise (throwing InitError if any particle
/// cannot start) and run.
template <class Model>
LocalDraws sample(const Model& model, const Settings& s, std::int64_t first, std::int64_t count,
                  const ProgressCallback& progress = {}) {
  EnsembleSampler<Model> sampler(model, s, first, count);
  if (const int bad = sampler.initialise(); bad > 0) {
    throw InitError(std::to_string(bad) + " of " + std::to_string(count) +
                    " particles start where the log density is not finite");
  }
  return sampler.run(progress);
}

}  // namespace hmc::sampler
