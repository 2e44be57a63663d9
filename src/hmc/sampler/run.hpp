#pragma once
/// \file
/// \brief The sampling loop of one rank: initialise, warm up (adapt), sample, record.
///
/// The loop knows nothing of MPI, files or logging: ensemble-wide sums go through
/// a parallel::Allreduce, progress through a callback, and it returns host copies of
/// what it recorded.

#include "hmc/core/types.hpp"
#include "hmc/model/concept.hpp"
#include "hmc/parallel/reduce.hpp"
#include "hmc/sampler/adaptation.hpp"
#include "hmc/sampler/metric.hpp"
#include "hmc/sampler/settings.hpp"
#include "hmc/sampler/transition.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

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
  double accept_rate;  ///< mean acceptance probability of the ensemble (all ranks), last iteration
  double step_size;
  double elapsed_s;
};

using ProgressCallback = std::function<void(const Progress&)>;

/// \brief What warmup settled on (identical on every rank).
struct Adapted {
  double step_size = 0.0;
  std::string metric = "unit";       ///< unit | diag | dense
  std::vector<double> inv_metric;    ///< diag: d values; dense: d×d row-major
  std::string trajectory = "fixed";  ///< fixed | chees
  double trajectory_length = 0.0;    ///< ChEES: adapted length (steps are jittered up to it)
  int leapfrog_steps = 0;            ///< fixed steps
};

/// \brief What one rank recorded, on the host, particle-major.
struct LocalDraws {
  using HostDraws = Kokkos::View<double***, Kokkos::LayoutRight, Kokkos::HostSpace>;
  using HostStats = Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace>;
  using HostVector = Kokkos::View<double*, Kokkos::HostSpace>;
  HostDraws draws;                                           ///< [particle][draw][param]
  HostStats lp, accept_prob, divergent, n_leapfrog, energy;  ///< [particle][draw]
  HostVector accept_sum, divergences;                        ///< per particle, post-warmup
  Adapted adapted;
  double sampling_s = 0.0;
  std::int64_t grad_evals = 0;  ///< leapfrog steps of warmup and sampling, on this rank
};

/// \brief The particles [first, first + count) of an ensemble of `s.particles` on one rank.
///
/// `initialise()` places the particles and reports how many found no finite log
/// density (so the caller can agree on that across ranks before anyone starts);
/// `run()` then performs warmup and sampling, one transition kernel per iteration.
template <class Model>
class EnsembleSampler {
  static_assert(model::check_model<Model>());
  using Policy = Kokkos::RangePolicy<ExecSpace>;

 public:
  EnsembleSampler(const Model& model, const Settings& s, std::int64_t first, std::int64_t count,
                  parallel::Allreduce allreduce = parallel::no_allreduce())
      : model_(model),
        s_(s),
        first_(first),
        n_(static_cast<int>(count)),
        dim_(model.dim()),
        state_(n_, dim_, model::scratch_size(model)),
        sums_(std::move(allreduce)) {}

  /// \brief Initial positions and their log densities; returns the number of local
  /// particles that found no finite log density in `s.init_attempts` draws.
  int initialise() {
    ScopedRegion region("hmc::initialise");
    VectorView centre("hmc::init_centre", dim_);
    if (!s_.init_values.empty()) {
      auto h = Kokkos::create_mirror_view(centre);
      for (int j = 0; j < dim_; ++j) h(j) = s_.init_values[j];
      Kokkos::deep_copy(centre, h);
    }
    int failed = 0;
    Kokkos::parallel_reduce("hmc::init", Policy(0, n_),
                            InitParticles<Model>{model_, state_, dim_, s_.init_radius, centre,
                                                 s_.init_strategy == "prior", s_.init_attempts, s_.seed, first_},
                            failed);
    return failed;
  }

  LocalDraws run(const ProgressCallback& progress = {}) {
    ScopedRegion region("hmc::sample");
    const auto start = std::chrono::steady_clock::now();
    const int kept = s_.kept();
    const AdaptSettings& ad = s_.adapt;
    const bool adapt = ad.enabled && s_.warmup > 0;
    // adapt.enabled = false switches everything off: fixed steps, no jitter.
    const bool chees = ad.enabled && ad.trajectory == "chees";

    TransitionRecord rec{
        ParticleView("hmc::accept_prob", n_),          ParticleView("hmc::accept_sum", n_),
        ParticleView("hmc::divergences", n_),          ParticleView("hmc::steps_sum", n_),
        StateView("hmc::transition_stats", n_, 2),     DrawView("hmc::draws", n_, kept, model_.num_params()),
        DrawStatView("hmc::draw_lp", n_, kept),        DrawStatView("hmc::draw_accept", n_, kept),
        DrawStatView("hmc::draw_divergent", n_, kept), DrawStatView("hmc::draw_steps", n_, kept),
        DrawStatView("hmc::draw_energy", n_, kept)};

    Metric metric = unit_metric(dim_);
    std::vector<double> inv_metric(dim_, 1.0);
    std::string metric_kind = "unit";
    HmcTransition<Model> step{model_,
                              state_,
                              rec,
                              metric,
                              dim_,
                              s_.step_size,
                              s_.leapfrog_steps,
                              chees,
                              s_.step_size * s_.leapfrog_steps,
                              ad.max_leapfrog,
                              s_.temperature,
                              s_.seed,
                              first_,
                              0,
                              false,
                              -1,
                              VectorView()};

    DualAveraging dual(ad.target_accept, ad.gamma, ad.t0, ad.kappa);
    dual.restart(s_.step_size);
    ChEES chees_adapter(s_.step_size * s_.leapfrog_steps, ad.chees_learning_rate);
    const WindowSchedule windows(s_.warmup, ad);
    const bool adapt_metric = adapt && ad.metric != "unit" && windows.first() > 0;
    const bool dense = ad.metric == "dense";
    // Per-particle sums over the current window: q_j and q_j² (diag).
    StateView window_sums("hmc::window_sums", adapt_metric && !dense ? n_ : 0, 2 * dim_);
    int window_iterations = 0;
    VectorView centre("hmc::ensemble_mean", chees && adapt ? dim_ : 0);
    auto centre_h = Kokkos::create_mirror_view(centre);
    double log_length_sum = 0.0;
    int log_length_count = 0;

    const int total = s_.warmup + s_.draws;
    for (int it = 1; it <= total; ++it) {
      const bool warm = it <= s_.warmup;
      const int post = it - s_.warmup - 1;  // 0-based post-warmup index
      if (it == s_.warmup + 1 && adapt) {
        // Freeze: the averaged step size (and length) from here on.
        step.step_size = dual.final_step_size();
        if (chees) step.length = log_length_count > 0 ? std::exp(log_length_sum / log_length_count) : step.length;
        step.centre = VectorView();
      }
      if (warm && adapt && chees) {
        const auto means = column_means(state_.q);
        for (int j = 0; j < dim_; ++j) centre_h(j) = means[j];
        Kokkos::deep_copy(centre, centre_h);
        step.centre = centre;
        step.length = chees_adapter.length();
      }
      step.iteration = static_cast<std::uint32_t>(it);
      step.count = !warm;
      step.slot = (!warm && post % s_.thin == 0) ? post / s_.thin : -1;
      Kokkos::parallel_for("hmc::transition", Policy(0, n_), step);

      double mean_accept = -1.0;
      if (warm && adapt) {
        const auto sums = sums_(rec.stats, n_, s_.particles);
        mean_accept = sums[0] / static_cast<double>(s_.particles);
        step.step_size = dual.update(mean_accept);
        if (chees) {
          const double grad = sums[0] > 0.0 ? sums[1] / sums[0] : 0.0;
          chees_adapter.update(grad, step.step_size, step.step_size * ad.max_leapfrog);
          if (it > s_.warmup - std::max(1, s_.warmup / 2)) {
            log_length_sum += std::log(chees_adapter.length());
            ++log_length_count;
          }
        }
        if (adapt_metric && windows.in_window(it)) {
          if (!dense) accumulate(window_sums);
          ++window_iterations;
          if (windows.window_end(it)) {
            const auto estimate = dense ? ensemble_covariance() : window_variances(window_sums, window_iterations);
            try {
              metric = dense ? dense_metric(estimate, dim_) : diagonal_metric(estimate);
              inv_metric = estimate;
              metric_kind = ad.metric;
              step.metric = metric;
            } catch (const std::runtime_error&) {
              // Too few particles for a positive definite covariance: keep the previous metric.
            }
            if (!dense) Kokkos::deep_copy(window_sums, 0.0);
            window_iterations = 0;
            dual.restart(step.step_size);
          }
        }
      }

      // Every rank takes part in the reduction; only the caller's callback decides to print.
      if (s_.progress_every > 0 && (it % s_.progress_every == 0 || it == total)) {
        if (mean_accept < 0.0) {
          const auto sums = sums_(rec.stats, n_, s_.particles);
          mean_accept = sums[0] / static_cast<double>(s_.particles);
        }
        const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (progress) progress(Progress{it, total, warm, mean_accept, step.step_size, elapsed});
      }
    }
    Kokkos::fence();

    LocalDraws out;
    out.draws = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), rec.draws);
    out.lp = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), rec.draw_lp);
    out.accept_prob = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), rec.draw_accept);
    out.divergent = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), rec.draw_divergent);
    out.n_leapfrog = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), rec.draw_steps);
    out.energy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), rec.draw_energy);
    out.accept_sum = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), rec.accept_sum);
    out.divergences = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), rec.divergences);
    out.adapted = Adapted{step.step_size,
                          metric_kind,
                          inv_metric,
                          chees ? "chees" : "fixed",
                          chees ? step.length : step.step_size * s_.leapfrog_steps,
                          s_.leapfrog_steps};
    out.sampling_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    double steps = 0.0;
    const auto steps_sum = rec.steps_sum;
    Kokkos::parallel_reduce(
        "hmc::count_steps", Policy(0, n_), KOKKOS_LAMBDA(const int i, double& acc) { acc += steps_sum(i); }, steps);
    out.grad_evals = static_cast<std::int64_t>(steps);
    return out;
  }

  /// Current ensemble state (for tests and, later, checkpoints).
  const EnsembleState& state() const { return state_; }

  // The two helpers below launch kernels with KOKKOS_LAMBDA, which CUDA allows only in
  // public member functions; they are not part of the interface.
  /// Adds q_j and q_j² of every particle to its window sums.
  void accumulate(const StateView& sums) const {
    const auto q = state_.q;
    const int d = dim_;
    Kokkos::parallel_for(
        "hmc::window_accumulate", Policy(0, n_), KOKKOS_LAMBDA(const int i) {
          for (int j = 0; j < d; ++j) {
            sums(i, j) += q(i, j);
            sums(i, d + j) += q(i, j) * q(i, j);
          }
        });
  }

  /// Regularised variances of the window's draws of all particles.
  std::vector<double> window_variances(const StateView& sums, int iterations) const {
    const auto total = sums_(sums, n_, s_.particles);
    const double n = static_cast<double>(s_.particles) * iterations;
    std::vector<double> var(dim_);
    for (int j = 0; j < dim_; ++j) {
      const double mean = total[j] / n;
      const double v = n > 1 ? (total[dim_ + j] - n * mean * mean) / (n - 1) : 1.0;
      var[j] = regularise(v > 0 ? v : 0.0, n, true);
    }
    return var;
  }

  /// Regularised covariance of the ensemble's current positions (dense metric).
  std::vector<double> ensemble_covariance() const {
    const int d = dim_;
    const int cols = d + d * (d + 1) / 2;
    StateView products("hmc::covariance_terms", n_, cols);
    const auto q = state_.q;
    Kokkos::parallel_for(
        "hmc::covariance_terms", Policy(0, n_), KOKKOS_LAMBDA(const int i) {
          int c = d;
          for (int a = 0; a < d; ++a) {
            products(i, a) = q(i, a);
            for (int b = 0; b <= a; ++b) products(i, c++) = q(i, a) * q(i, b);
          }
        });
    const auto total = sums_(products, n_, s_.particles);
    const double n = static_cast<double>(s_.particles);
    std::vector<double> cov(d * d);
    int c = d;
    for (int a = 0; a < d; ++a)
      for (int b = 0; b <= a; ++b) {
        const double v = n > 1 ? (total[c++] - n * (total[a] / n) * (total[b] / n)) / (n - 1) : (a == b ? 1.0 : 0.0);
        cov[a * d + b] = cov[b * d + a] = regularise(v, n, a == b);
      }
    return cov;
  }

 private:
  /// Ensemble mean of each column of `v` (all ranks).
  std::vector<double> column_means(const StateView& v) const {
    auto sums = sums_(v, n_, s_.particles);
    for (auto& x : sums) x /= static_cast<double>(s_.particles);
    return sums;
  }

  Model model_;
  Settings s_;
  std::int64_t first_;
  int n_;
  int dim_;
  EnsembleState state_;
  mutable parallel::ReproducibleSums sums_;  ///< ensemble sums over all ranks; keeps its buffers
};

/// \brief Single-process convenience: initialise (throwing InitError if any particle
/// cannot start) and run.
template <class Model>
LocalDraws sample(const Model& model, const Settings& s, std::int64_t first, std::int64_t count,
                  const ProgressCallback& progress = {}, parallel::Allreduce allreduce = parallel::no_allreduce()) {
  EnsembleSampler<Model> sampler(model, s, first, count, std::move(allreduce));
  if (const int bad = sampler.initialise(); bad > 0) {
    throw InitError(std::to_string(bad) + " of " + std::to_string(count) +
                    " particles found no finite log density in " + std::to_string(s.init_attempts) + " draws");
  }
  return sampler.run(progress);
}

}  // namespace hmc::sampler
