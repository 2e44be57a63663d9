#pragma once
/// \file
/// \brief The sampling loop of one rank: initialise, warm up (adapt), sample, record.
///
/// The loop knows nothing of MPI, files or logging: ensemble-wide sums go through
/// an Allreduce (core/ensemble_sum.hpp), progress through a callback, and it returns host copies of
/// what it recorded.

#include "hmc/core/draws.hpp"
#include "hmc/core/ensemble_sum.hpp"
#include "hmc/core/errors.hpp"
#include "hmc/core/types.hpp"
#include "hmc/model/concept.hpp"
#include "hmc/sampler/adaptation.hpp"
#include "hmc/sampler/lanes.hpp"
#include "hmc/sampler/metric.hpp"
#include "hmc/sampler/settings.hpp"
#include "hmc/sampler/transition.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace hmc::sampler {

/// \brief Raised when the ensemble cannot start (no finite log density).
class InitError : public RunError {
 public:
  using RunError::RunError;
};

/// \brief Warmup adaptation left the step size or the path length non-finite or not
/// positive (an absurd /sampler/step_size, or a log density that overflows): the run
/// stops instead of sampling with them (and is not resumable: it would diverge again).
class AdaptationError : public RunError {
 public:
  explicit AdaptationError(const std::string& what) : RunError("run error: " + what) {}
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

/// \brief Host-side state of the sampling loop: with the particles' rows
/// (EnsembleSampler::particle_rows), everything needed to continue a run bit for bit.
struct LoopState {
  int iteration = 0;  ///< iterations completed (warmup included); 0 after initialisation
  double step_size = 0.0;
  double length = 0.0;  ///< ChEES trajectory length in use
  DualAveraging::State dual;
  ChEES::State chees;
  double log_length_sum = 0.0;
  int log_length_count = 0;
  MetricKind metric_kind = MetricKind::kUnit;
  std::vector<double> inv_metric;
  int window_iterations = 0;
};

/// \brief The particles [first, first + count) of an ensemble of `s.particles` on one rank.
///
/// `initialise()` places the particles and reports how many found no finite log
/// density (so the caller can agree on that across ranks before anyone starts), or
/// `restore()` puts back a checkpointed state. Then `iterate()` performs one warmup or
/// sampling iteration (one transition kernel) at a time. Recorded draws collect in a
/// device buffer of `s.block_draws` slots (0: as many as a section records), allocated
/// when the first draw is recorded; when `block_ready()`, `take_block()` copies them to
/// the host and empties the buffer. Every rank must call `iterate()` equally often:
/// warmup and progress reductions are collective.
template <class Model>
class EnsembleSampler {
  static_assert(model::check_model<Model>());
  using Policy = Kokkos::RangePolicy<ExecSpace>;

 public:
  EnsembleSampler(const Model& model, const Settings& s, std::int64_t first, std::int64_t count,
                  Allreduce allreduce = no_allreduce())
      : model_(model),
        s_(s),
        first_(first),
        n_(static_cast<int>(count)),
        dim_(model.dim()),
        state_(n_, dim_, model::scratch_size(model)),
        sums_(std::move(allreduce)),
        adapt_(s.adapt.enabled && s.warmup > 0),
        chees_(s.adapt.enabled && s.adapt.trajectory == TrajectoryKind::kChees),
        dense_(s.adapt.metric == MetricKind::kDense),
        capacity_(capacity_for(s)),
        rec_{ParticleView("hmc::accept_prob", n_),
             ParticleView("hmc::accept_sum", n_),
             ParticleView("hmc::divergences", n_),
             ParticleView("hmc::steps_sum", n_),
             StateView("hmc::transition_stats", n_, 2),
             {},
             {},
             {},
             {},
             {},
             {}},
        dual_(s.adapt.target_accept, s.adapt.gamma, s.adapt.t0, s.adapt.kappa),
        chees_adapter_(s.step_size * s.leapfrog_steps, s.adapt.chees_learning_rate),
        windows_(s.warmup, s.adapt),
        adapt_metric_(adapt_ && s.adapt.metric != MetricKind::kUnit && windows_.first() > 0),
        window_sums_("hmc::window_sums", adapt_metric_ && !dense_ ? n_ : 0, 2 * dim_),
        centre_("hmc::ensemble_mean", chees_ && adapt_ ? dim_ : 0),
        step_{model_,
              state_,
              rec_,
              unit_metric(dim_),
              dim_,
              s.step_size,
              s.leapfrog_steps,
              chees_,
              s.step_size * s.leapfrog_steps,
              s.adapt.max_leapfrog,
              s.temperature,
              s.seed,
              first_,
              0,
              false,
              -1,
              VectorView()} {
    loop_.step_size = s.step_size;
    loop_.length = s.step_size * s.leapfrog_steps;
    loop_.inv_metric.assign(dim_, 1.0);
    dual_.restart(s.step_size);
  }

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
    Kokkos::parallel_reduce(
        "hmc::init", Policy(0, n_),
        InitParticles<Model>{model_, state_, dim_, s_.init_radius, centre, s_.init_strategy == InitStrategy::kPrior,
                             s_.init_attempts, s_.seed, first_},
        failed);
    return failed;
  }

  int total_iterations() const { return s_.warmup + s_.draws; }
  int iteration() const { return loop_.iteration; }
  bool done() const { return loop_.iteration >= total_iterations(); }

  /// \brief One iteration: transitions of all local particles, warmup adaptation,
  /// recording, and (every s.progress_every iterations) a progress report.
  void iterate(const ProgressCallback& progress = {}, double elapsed_s = 0.0) {
    const int it = ++loop_.iteration;
    const int total = total_iterations();
    const bool warm = it <= s_.warmup;
    const AdaptSettings& ad = s_.adapt;
    if (it == s_.warmup + 1 && adapt_) {
      // Freeze: the averaged step size (and length) from here on.
      loop_.step_size = dual_.final_step_size();
      if (chees_)
        loop_.length =
            loop_.log_length_count > 0 ? std::exp(loop_.log_length_sum / loop_.log_length_count) : loop_.length;
    }
    if (warm && adapt_ && chees_) {
      const auto means = column_means(state_.q);
      for (int j = 0; j < dim_; ++j) centre_h_(j) = means[j];
      Kokkos::deep_copy(centre_, centre_h_);
      loop_.length = chees_adapter_.length();
    }
    step_.step_size = loop_.step_size;
    step_.length = loop_.length;
    step_.centre = warm && adapt_ && chees_ ? centre_ : VectorView();
    step_.iteration = static_cast<std::uint32_t>(it);
    step_.count = !warm;
    step_.slot = -1;
    if (records(it)) {
      if (rec_.draws.extent(1) == 0) allocate_record_buffers();
      if (filled_ == 0) {
        block_.warmup = warm;
        block_.first_draw = warm ? (it - 1) / s_.thin : (it - s_.warmup - 1) / s_.thin;
      }
      block_.step_size[filled_] = loop_.step_size;
      step_.slot = filled_++;
    }
    if constexpr (lanes_available<Model>()) {
      if (lanes_) {
        Kokkos::parallel_for("hmc::transition_lanes", Policy(0, HmcLaneTransition<Model>::blocks(n_)),
                             HmcLaneTransition<Model>{step_, n_});
      } else {
        Kokkos::parallel_for("hmc::transition", Policy(0, n_), step_);
      }
    } else {
      Kokkos::parallel_for("hmc::transition", Policy(0, n_), step_);
    }

    double mean_accept = -1.0;
    if (warm && adapt_) {
      const auto sums = sums_(rec_.stats, n_, s_.particles);
      mean_accept = sums[0] / static_cast<double>(s_.particles);
      loop_.step_size = dual_.update(mean_accept);
      if (chees_) {
        const double grad = sums[0] > 0.0 ? sums[1] / sums[0] : 0.0;
        chees_adapter_.update(grad, loop_.step_size, loop_.step_size * ad.max_leapfrog);
        if (it > s_.warmup - std::max(1, s_.warmup / 2)) {
          loop_.log_length_sum += std::log(chees_adapter_.length());
          ++loop_.log_length_count;
        }
      }
      if (!(std::isfinite(loop_.step_size) && loop_.step_size > 0.0) ||
          (chees_ && !(std::isfinite(chees_adapter_.length()) && chees_adapter_.length() > 0.0))) {
        throw AdaptationError("warmup adaptation diverged at iteration " + std::to_string(it) + ": step size " +
                              std::to_string(loop_.step_size) +
                              (chees_ ? ", path length " + std::to_string(chees_adapter_.length()) : std::string()) +
                              " (is /sampler/step_size far too large, or the log density not finite?)");
      }
      if (adapt_metric_ && windows_.in_window(it)) {
        if (!dense_) accumulate(window_sums_);
        ++loop_.window_iterations;
        if (windows_.window_end(it)) {
          const auto estimate =
              dense_ ? ensemble_covariance() : window_variances(window_sums_, loop_.window_iterations);
          try {
            step_.metric = dense_ ? dense_metric(estimate, dim_) : diagonal_metric(estimate);
            loop_.inv_metric = estimate;
            loop_.metric_kind = ad.metric;
          } catch (const std::runtime_error&) {
            // Too few particles for a positive definite covariance: keep the previous metric.
          }
          if (!dense_) Kokkos::deep_copy(window_sums_, 0.0);
          loop_.window_iterations = 0;
          dual_.restart(loop_.step_size);
        }
      }
    }

    // Every rank takes part in the reduction; only the caller's callback decides to print.
    if (s_.progress_every > 0 && (it % s_.progress_every == 0 || it == total)) {
      if (mean_accept < 0.0) {
        const auto sums = sums_(rec_.stats, n_, s_.particles);
        mean_accept = sums[0] / static_cast<double>(s_.particles);
      }
      if (progress) progress(Progress{it, total, warm, mean_accept, step_.step_size, elapsed_s});
    }
  }

  /// \brief Is there a block to hand over: the buffer is full, or its section (warmup,
  /// sampling) has ended?
  bool block_ready() const {
    if (filled_ == 0) return false;
    const int it = loop_.iteration;
    return filled_ == capacity_ || it == s_.warmup || it == total_iterations();
  }
  /// \brief Recorded draws not handed over yet.
  int pending() const { return filled_; }

  /// \brief Copies the filled slots to the host and empties the buffer. The block stays
  /// valid until the next call to iterate().
  const DrawBlock& take_block() {
    ScopedRegion region("hmc::take_block");
    Kokkos::fence();
    Kokkos::deep_copy(block_.draws, rec_.draws);
    Kokkos::deep_copy(block_.lp, rec_.draw_lp);
    Kokkos::deep_copy(block_.accept_prob, rec_.draw_accept);
    Kokkos::deep_copy(block_.divergent, rec_.draw_divergent);
    Kokkos::deep_copy(block_.n_leapfrog, rec_.draw_steps);
    Kokkos::deep_copy(block_.energy, rec_.draw_energy);
    block_.count = filled_;
    filled_ = 0;
    return block_;
  }

  /// \brief What warmup settled on (so far).
  Adapted adapted() const {
    return Adapted{loop_.step_size,
                   loop_.metric_kind,
                   loop_.inv_metric,
                   chees_ ? TrajectoryKind::kChees : TrajectoryKind::kFixed,
                   chees_ ? loop_.length : loop_.step_size * s_.leapfrog_steps,
                   s_.leapfrog_steps};
  }

  /// \brief Leapfrog steps of all iterations so far, on this rank.
  std::int64_t grad_evals() const {
    double steps = 0.0;
    const auto steps_sum = rec_.steps_sum;
    Kokkos::parallel_reduce(
        "hmc::count_steps", Policy(0, n_), KOKKOS_LAMBDA(const int i, double& acc) { acc += steps_sum(i); }, steps);
    return static_cast<std::int64_t>(steps);
  }

  /// \brief Post-warmup sums per local particle: acceptance probabilities and divergences.
  void totals(std::vector<double>& accept_sum, std::vector<double>& divergences) const {
    auto a = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), rec_.accept_sum);
    auto d = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), rec_.divergences);
    accept_sum.assign(a.data(), a.data() + n_);
    divergences.assign(d.data(), d.data() + n_);
  }

  // ---- checkpoints ------------------------------------------------------------
  /// \brief Doubles per particle in particle_rows(): q, grad (dim each), lp,
  /// accept_sum, divergences, steps_sum, and the metric window sums (2 dim, diag only).
  int row_width() const { return 2 * dim_ + 4 + window_columns(); }
  /// Metric window sums per particle in a checkpoint row (the same on every rank).
  int window_columns() const { return adapt_metric_ && !dense_ ? 2 * dim_ : 0; }

  /// \brief The local particles' state, row by row (n × row_width()). Take the pending
  /// block first: the device buffer of draws is not part of it.
  std::vector<double> particle_rows() const {
    const int w = row_width();
    Kokkos::View<double**, Kokkos::LayoutRight, MemSpace> rows("hmc::checkpoint_rows", n_, w);
    pack_rows(rows);
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), rows);
    return std::vector<double>(h.data(), h.data() + static_cast<std::size_t>(n_) * w);
  }

  /// \brief The loop's host state, for a checkpoint.
  LoopState loop_state() const {
    LoopState l = loop_;
    l.dual = dual_.state();
    l.chees = chees_adapter_.state();
    return l;
  }

  /// \brief Puts back a checkpointed state (instead of initialise()): `rows` are this
  /// rank's particles as particle_rows() wrote them, `loop` the loop state.
  void restore(const std::vector<double>& rows, const LoopState& loop) {
    const int w = row_width();
    if (rows.size() != static_cast<std::size_t>(n_) * w) throw std::runtime_error("checkpoint rows do not fit");
    Kokkos::View<double**, Kokkos::LayoutRight, MemSpace> dev("hmc::checkpoint_rows", n_, w);
    auto h = Kokkos::create_mirror_view(dev);
    std::copy(rows.begin(), rows.end(), h.data());
    Kokkos::deep_copy(dev, h);
    unpack_rows(dev);
    loop_ = loop;
    dual_.restore(loop.dual);
    chees_adapter_.restore(loop.chees);
    if (loop_.metric_kind == MetricKind::kDense) {
      step_.metric = dense_metric(loop_.inv_metric, dim_);
    } else if (loop_.metric_kind == MetricKind::kDiag) {
      step_.metric = diagonal_metric(loop_.inv_metric);
    } else {
      step_.metric = unit_metric(dim_);
    }
    filled_ = 0;
  }

  /// Current ensemble state (for tests).
  const EnsembleState& state() const { return state_; }

  // The member functions below launch kernels with KOKKOS_LAMBDA, which CUDA allows only
  // in public member functions; they are not part of the interface.
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

  /// Copies the checkpointed quantities into `rows` (see row_width()).
  void pack_rows(const Kokkos::View<double**, Kokkos::LayoutRight, MemSpace>& rows) const {
    const auto q = state_.q, g = state_.grad, ws = window_sums_;
    const auto lp = state_.lp, acc = rec_.accept_sum, div = rec_.divergences, steps = rec_.steps_sum;
    const int d = dim_, wc = window_columns();
    Kokkos::parallel_for(
        "hmc::pack_checkpoint", Policy(0, n_), KOKKOS_LAMBDA(const int i) {
          for (int j = 0; j < d; ++j) {
            rows(i, j) = q(i, j);
            rows(i, d + j) = g(i, j);
          }
          rows(i, 2 * d) = lp(i);
          rows(i, 2 * d + 1) = acc(i);
          rows(i, 2 * d + 2) = div(i);
          rows(i, 2 * d + 3) = steps(i);
          for (int j = 0; j < wc; ++j) rows(i, 2 * d + 4 + j) = ws(i, j);
        });
    Kokkos::fence();
  }

  /// The inverse of pack_rows().
  void unpack_rows(const Kokkos::View<double**, Kokkos::LayoutRight, MemSpace>& rows) {
    const auto q = state_.q, g = state_.grad, ws = window_sums_;
    const auto lp = state_.lp, acc = rec_.accept_sum, div = rec_.divergences, steps = rec_.steps_sum;
    const int d = dim_, wc = window_columns();
    Kokkos::parallel_for(
        "hmc::unpack_checkpoint", Policy(0, n_), KOKKOS_LAMBDA(const int i) {
          for (int j = 0; j < d; ++j) {
            q(i, j) = rows(i, j);
            g(i, j) = rows(i, d + j);
          }
          lp(i) = rows(i, 2 * d);
          acc(i) = rows(i, 2 * d + 1);
          div(i) = rows(i, 2 * d + 2);
          steps(i) = rows(i, 2 * d + 3);
          for (int j = 0; j < wc; ++j) ws(i, j) = rows(i, 2 * d + 4 + j);
        });
    Kokkos::fence();
  }

 private:
  /// Slots of the draw buffer: s.block_draws (0: all), never more than a section records.
  static int capacity_for(const Settings& s) {
    const int recorded = std::max(s.kept(), s.kept_warmup());
    return std::max(1, s.block_draws > 0 ? std::min(s.block_draws, recorded) : recorded);
  }

  /// The device buffer of recorded draws and its host copy, `capacity_` slots each.
  void allocate_record_buffers() {
    const int params = model_.num_params();
    rec_.draws = DrawView("hmc::draws", n_, capacity_, params);
    rec_.draw_lp = DrawStatView("hmc::draw_lp", n_, capacity_);
    rec_.draw_accept = DrawStatView("hmc::draw_accept", n_, capacity_);
    rec_.draw_divergent = DrawStatView("hmc::draw_divergent", n_, capacity_);
    rec_.draw_steps = DrawStatView("hmc::draw_steps", n_, capacity_);
    rec_.draw_energy = DrawStatView("hmc::draw_energy", n_, capacity_);
    step_.record = rec_;
    block_.draws = DrawBlock::HostDraws("hmc::block_draws_host", n_, capacity_, params);
    block_.lp = DrawBlock::HostStats("hmc::block_lp_host", n_, capacity_);
    block_.accept_prob = DrawBlock::HostStats("hmc::block_accept_host", n_, capacity_);
    block_.divergent = DrawBlock::HostStats("hmc::block_divergent_host", n_, capacity_);
    block_.n_leapfrog = DrawBlock::HostStats("hmc::block_steps_host", n_, capacity_);
    block_.energy = DrawBlock::HostStats("hmc::block_energy_host", n_, capacity_);
    block_.step_size.assign(capacity_, 0.0);
  }

  /// Is a draw recorded at iteration `it` (1-based)?
  bool records(int it) const {
    if (it <= s_.warmup) return s_.save_warmup && (it - 1) % s_.thin == 0;
    return (it - s_.warmup - 1) % s_.thin == 0;
  }

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
  mutable ReproducibleSums sums_;  ///< ensemble sums over all ranks; keeps its buffers
  bool adapt_, chees_, dense_;
  int capacity_;  ///< slots of the draw buffer (allocated at the first recorded draw)
  TransitionRecord rec_;
  DualAveraging dual_;
  ChEES chees_adapter_;
  WindowSchedule windows_;
  bool adapt_metric_;
  StateView window_sums_;  ///< per particle: sums of q_j and q_j² over the current window (diag)
  VectorView centre_;      ///< ensemble mean of q (ChEES)
  VectorView::HostMirror centre_h_ = Kokkos::create_mirror_view(centre_);
  HmcTransition<Model> step_;
  /// Transitions by HmcLaneTransition (lanes.hpp) instead of HmcTransition.
  bool lanes_ = use_lanes<Model>(dim_);
  LoopState loop_;
  DrawBlock block_;
  int filled_ = 0;  ///< filled slots of the draw buffer
};

}  // namespace hmc::sampler
