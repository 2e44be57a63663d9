#pragma once
/// \file
/// \brief The sampling loop of one rank: initialise, warm up (adapt), sample, record.
///
/// The loop knows nothing of MPI, files or logging: ensemble-wide sums go through
/// an Allreduce (core/ensemble_sum.hpp), progress through a callback, and it returns host copies of
/// what it recorded. Nor does it know the algorithm: the transition kernel
/// (sampler/kernel.hpp) is a template parameter, and its statistics, scratch and
/// random numbers are its own.

#include "hmc/core/draws.hpp"
#include "hmc/core/ensemble_sum.hpp"
#include "hmc/core/errors.hpp"
#include "hmc/core/types.hpp"
#include "hmc/model/concept.hpp"
#include "hmc/sampler/adapters.hpp"
#include "hmc/sampler/hmc_kernel.hpp"
#include "hmc/sampler/init.hpp"
#include "hmc/sampler/kernel.hpp"
#include "hmc/sampler/metric.hpp"
#include "hmc/sampler/settings.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <type_traits>
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
  int iteration = 0;      ///< iterations completed (warmup included); 0 after initialisation
  std::string algorithm;  ///< the kernel's name: a checkpoint of one is refused by another
  SavedState adapters;    ///< what the adapters saved (step size, metric, ChEES)
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
template <class Model, class Kernel = HmcKernel<Model>>
class EnsembleSampler {
  static_assert(model::check_model<Model>());
  static_assert(check_kernel<Kernel, Model>());
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
        chees_(adapts_length<Kernel>() && s.adapt.enabled && s.adapt.trajectory == TrajectoryKind::kChees),
        capacity_(capacity_for(s)),
        kernel_(model, Kernel::settings(s),
                StateView("hmc::kernel_scratch", n_, Kernel::scratch_size(dim_, Kernel::settings(s)))),
        step_size_(s.step_size, s.adapt),
        metric_(n_, dim_, s),
        // ChEES climbs from one step (s.step_size) to the first maximum of its criterion,
        // the cheapest, when the metric is adapted (the length starts over at 1 when the
        // first one is estimated); with the unit metric, or without warmup, the length
        // starts at (or is) step_size × leapfrog_steps.
        chees_adapter_(metric_.adapts() ? s.step_size : s.step_size * s.leapfrog_steps, s.adapt, s.warmup),
        centre_("hmc::ensemble_mean", chees_ && adapt_ ? dim_ : 0) {
    rec_.accept_sum = ParticleView("hmc::accept_sum", n_);
    rec_.divergences = ParticleView("hmc::divergences", n_);
    rec_.steps_sum = ParticleView("hmc::steps_sum", n_);
    rec_.adapt = StateView("hmc::transition_stats", n_, kAdaptColumns);
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
    const InitParticles<Model> init{model_,           state_,  dim_,
                                    s_.init_radius,   centre,  s_.init_strategy == InitStrategy::kPrior,
                                    s_.init_attempts, s_.seed, first_};
    if constexpr (model::has_team_gradient<Model>()) {
      if (team_size_ > 0) {
        Kokkos::parallel_reduce("hmc::init_teams", TeamPolicy(n_, team_size_), init, failed);
        return failed;
      }
    }
    Kokkos::parallel_reduce("hmc::init", Policy(0, n_), init, failed);
    return failed;
  }

  int total_iterations() const { return s_.warmup + s_.draws; }
  int iteration() const { return iteration_; }
  bool done() const { return iteration_ >= total_iterations(); }

  /// \brief One iteration: transitions of all local particles, warmup adaptation,
  /// recording, and (every s.progress_every iterations) a progress report.
  void iterate(const ProgressCallback& progress = {}, double elapsed_s = 0.0) {
    const int it = ++iteration_;
    const int total = total_iterations();
    const bool warm = it <= s_.warmup;
    if (it == s_.warmup + 1 && adapt_) {
      step_size_.freeze();
      if (chees_) chees_adapter_.freeze();
    }
    if constexpr (adapts_length<Kernel>()) {
      if (warm && adapt_ && chees_) {
        const auto means = column_means(state_.q);
        for (int j = 0; j < dim_; ++j) centre_h_(j) = means[j];
        Kokkos::deep_copy(centre_, centre_h_);
        chees_adapter_.begin_iteration();
      }
      kernel_.opts.length = chees_ ? chees_adapter_.length() : s_.step_size * s_.leapfrog_steps;
      kernel_.opts.centre = warm && adapt_ && chees_ ? centre_ : VectorView();
    }
    int slot = -1;
    if (records(it)) {
      if (rec_.draws.extent(1) == 0) allocate_record_buffers();
      if (filled_ == 0) {
        block_.warmup = warm;
        block_.first_draw = warm ? (it - 1) / s_.thin : (it - s_.warmup - 1) / s_.thin;
      }
      slot = filled_++;
    }
    Step& step = kernel_.step;
    step.state = state_;
    step.record = rec_;
    step.metric = metric_.metric();
    step.dim = dim_;
    step.step_size = step_size_.step_size();
    step.temperature = s_.temperature;
    step.seed = s_.seed;
    step.first_particle = first_;
    step.iteration = static_cast<std::uint32_t>(it);
    step.count = !warm;
    step.slot = slot;
    launch();

    double mean_accept = -1.0;
    if (warm && adapt_) {
      const auto sums = sums_(rec_.adapt, n_, s_.particles);
      mean_accept = sums[0] / static_cast<double>(s_.particles);
      step_size_.update(mean_accept);
      const double eps = step_size_.step_size();
      if (chees_) {
        // The shorter of this transition's step size and the next one: dual averaging's
        // first step after a restart tries a step size ten times larger, which must not
        // lift the length.
        const double shortest = std::min(step.step_size, eps);
        chees_adapter_.update(it, sums[1], sums[2], shortest, eps * s_.adapt.max_leapfrog);
      }
      if (!(std::isfinite(eps) && eps > 0.0) ||
          (chees_ && !(std::isfinite(chees_adapter_.current()) && chees_adapter_.current() > 0.0))) {
        throw AdaptationError("warmup adaptation diverged at iteration " + std::to_string(it) + ": step size " +
                              std::to_string(eps) +
                              (chees_ ? ", path length " + std::to_string(chees_adapter_.current()) : std::string()) +
                              " (is /sampler/step_size far too large, or the log density not finite?)");
      }
      const bool whitened = metric_.kind() != MetricKind::kUnit;
      if (metric_.update(it, state_.q, sums_)) {
        step_size_.restart();
        // The first estimated metric whitens the positions: the length, which had the scale
        // of the unit metric, starts over at that of a unit-scale posterior.
        if (chees_ && !whitened && metric_.kind() != MetricKind::kUnit) chees_adapter_.restart(1.0);
      }
    }

    // Every rank takes part in the reduction; only the caller's callback decides to print.
    if (s_.progress_every > 0 && (it % s_.progress_every == 0 || it == total)) {
      if (mean_accept < 0.0) {
        const auto sums = sums_(rec_.adapt, n_, s_.particles);
        mean_accept = sums[0] / static_cast<double>(s_.particles);
      }
      if (progress) progress(Progress{it, total, warm, mean_accept, step.step_size, elapsed_s});
    }
  }

  /// \brief Is there a block to hand over: the buffer is full, or its section (warmup,
  /// sampling) has ended?
  bool block_ready() const {
    if (filled_ == 0) return false;
    const int it = iteration_;
    return filled_ == capacity_ || it == s_.warmup || it == total_iterations();
  }
  /// \brief Recorded draws not handed over yet.
  int pending() const { return filled_; }

  /// \brief Copies the filled slots to the host and empties the buffer. The block stays
  /// valid until the next call to iterate().
  const DrawBlock& take_block() {
    ScopedRegion region("hmc::take_block");
    Kokkos::fence();
    if constexpr (!kRecordOnHost) {  // on the host, block_ holds the buffers themselves
      Kokkos::deep_copy(block_.draws, rec_.draws);
      Kokkos::deep_copy(block_.stats, rec_.stats);
    }
    block_.count = filled_;
    filled_ = 0;
    return block_;
  }

  /// \brief What warmup settled on (so far).
  Adapted adapted() const {
    Adapted a;
    a.algorithm = Kernel::name;
    a.step_size = step_size_.step_size();
    a.metric = metric_.kind();
    a.inv_metric = metric_.inv_metric();
    if constexpr (adapts_length<Kernel>()) {
      a.trajectory = chees_ ? TrajectoryKind::kChees : TrajectoryKind::kFixed;
      a.trajectory_length = chees_ ? chees_adapter_.length() : step_size_.step_size() * s_.leapfrog_steps;
      a.leapfrog_steps = s_.leapfrog_steps;
    }
    return a;
  }

  /// \brief Gradient evaluations of all iterations so far, on this rank.
  std::int64_t grad_evals() const {
    double steps = 0.0;
    const auto steps_sum = rec_.steps_sum;
    Kokkos::parallel_reduce(
        "hmc::count_steps", Policy(0, n_), KOKKOS_LAMBDA(const int i, double& acc) { acc += steps_sum(i); }, steps);
    return static_cast<std::int64_t>(steps);
  }

  /// \brief Post-warmup sums per local particle: acceptance statistics and divergences.
  void totals(std::vector<double>& accept_sum, std::vector<double>& divergences) const {
    auto a = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), rec_.accept_sum);
    auto d = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), rec_.divergences);
    accept_sum.assign(a.data(), a.data() + n_);
    divergences.assign(d.data(), d.data() + n_);
  }

  // ---- checkpoints ------------------------------------------------------------
  /// \brief Doubles per particle in particle_rows(): q, grad (dim each), lp,
  /// accept_sum, divergences, steps_sum, and the metric adapter's (window sums, diag).
  int row_width() const { return 2 * dim_ + 4 + window_columns(); }
  /// Metric window sums per particle in a checkpoint row (the same on every rank).
  int window_columns() const { return metric_.row_columns(); }

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
    LoopState l;
    l.iteration = iteration_;
    l.algorithm = Kernel::name;
    step_size_.save(l.adapters);
    metric_.save(l.adapters);
    if (chees_) chees_adapter_.save(l.adapters);
    return l;
  }

  /// \brief Puts back a checkpointed state (instead of initialise()): `rows` are this
  /// rank's particles as particle_rows() wrote them, `loop` the loop state. Throws
  /// RunError when the state is another algorithm's or does not fit.
  void restore(const std::vector<double>& rows, const LoopState& loop) {
    if (loop.algorithm != Kernel::name) {
      throw RunError("the checkpoint is of /sampler/algorithm " + loop.algorithm + ", this run's is " + Kernel::name);
    }
    const int w = row_width();
    if (rows.size() != static_cast<std::size_t>(n_) * w) throw RunError("checkpoint rows do not fit");
    Kokkos::View<double**, Kokkos::LayoutRight, MemSpace> dev("hmc::checkpoint_rows", n_, w);
    auto h = Kokkos::create_mirror_view(dev);
    std::copy(rows.begin(), rows.end(), h.data());
    Kokkos::deep_copy(dev, h);
    unpack_rows(dev);
    iteration_ = loop.iteration;
    try {
      step_size_.load(loop.adapters);
      metric_.load(loop.adapters);
      if (chees_) chees_adapter_.load(loop.adapters);
    } catch (const std::exception& e) {
      throw RunError(std::string("checkpoint state is incomplete: ") + e.what());
    }
    filled_ = 0;
  }

  /// \brief Threads per team of the team path, or 0: one particle per thread (or per lane).
  int team_size() const { return team_size_; }

  /// Current ensemble state (for tests).
  const EnsembleState& state() const { return state_; }

  // The member functions below launch kernels with KOKKOS_LAMBDA, which CUDA allows only
  // in public member functions; they are not part of the interface.
  /// Copies the checkpointed quantities into `rows` (see row_width()).
  void pack_rows(const Kokkos::View<double**, Kokkos::LayoutRight, MemSpace>& rows) const {
    const auto q = state_.q, g = state_.grad, ws = metric_.rows();
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
    const auto q = state_.q, g = state_.grad, ws = metric_.rows();
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
  /// The transitions of all local particles: a particle per team where the model's
  /// gradient runs on a team, else the kernel's lane path where it has one for this model
  /// and dimension (host), else one particle per thread.
  void launch() {
    if constexpr (has_team_transition<Kernel>() && model::has_team_gradient<Model>()) {
      if (team_size_ > 0) {
        static const std::string label = std::string("hmc::transition_teams_") + Kernel::name;
        Kokkos::parallel_for(label, TeamPolicy(n_, team_size_), kernel_);
        return;
      }
    }
    if constexpr (has_lane_transition<Kernel>() && lanes_available<Model>()) {
      if (lanes_) {
        const Kernel& k = kernel_;
        Kokkos::parallel_for("hmc::transition_lanes", Policy(0, Kernel::lane_tasks(n_)),
                             [&k](const int task) { k.lanes(task); });
        return;
      }
    }
    static const std::string label = std::string("hmc::transition_") + Kernel::name;  // not rebuilt per iteration
    Kokkos::parallel_for(label, Policy(0, n_), kernel_);
  }

  /// Slots of the draw buffer: s.block_draws (0: all), never more than a section records.
  static int capacity_for(const Settings& s) {
    const int recorded = std::max(s.kept(), s.kept_warmup());
    return std::max(1, s.block_draws > 0 ? std::min(s.block_draws, recorded) : recorded);
  }

  /// Whether the draw buffers are in host memory: then the block handed over is the
  /// buffer itself (valid until the next iteration writes into it), not a copy.
  static constexpr bool kRecordOnHost = std::is_same_v<DrawView, DrawBlock::HostDraws>;

  /// The device buffer of recorded draws and its host copy, `capacity_` slots each; not
  /// zeroed (only the filled slots are read).
  void allocate_record_buffers() {
    const int params = model_.num_params();
    const int stats = static_cast<int>(Kernel::stat_columns().size());
    using Kokkos::view_alloc, Kokkos::WithoutInitializing;
    rec_.draws = DrawView(view_alloc(WithoutInitializing, "hmc::draws"), n_, capacity_, params);
    rec_.stats = DrawView(view_alloc(WithoutInitializing, "hmc::draw_stats"), n_, capacity_, stats);
    if constexpr (kRecordOnHost) {
      // A generic lambda: its body is checked only where it is instantiated (a CUDA build's
      // compiler otherwise warns that a device View does not assign to a host one).
      [](auto& block, const auto& rec) {
        block.draws = rec.draws;
        block.stats = rec.stats;
      }(block_, rec_);
    } else {
      block_.draws =
          DrawBlock::HostDraws(view_alloc(WithoutInitializing, "hmc::block_draws_host"), n_, capacity_, params);
      block_.stats =
          DrawBlock::HostDraws(view_alloc(WithoutInitializing, "hmc::block_stats_host"), n_, capacity_, stats);
    }
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
  bool adapt_, chees_;
  int capacity_;  ///< slots of the draw buffer (allocated at the first recorded draw)
  TransitionRecord rec_;
  Kernel kernel_;
  StepSizeAdapter step_size_;
  MetricAdapter metric_;
  ChEESAdapter chees_adapter_;
  VectorView centre_;  ///< ensemble mean of q (ChEES)
  VectorView::HostMirror centre_h_ = Kokkos::create_mirror_view(centre_);
  /// Threads per team of the team path (0: none): a particle per team, for a model whose
  /// gradient runs on a team and a kernel that has the path.
  int team_size_ = team_size_for_kernel();
  /// Transitions by the kernel's lane path (lanes.hpp) instead of one particle per thread.
  bool lanes_ = team_size_ == 0 && lanes_for_kernel();
  int iteration_ = 0;
  DrawBlock block_;
  int filled_ = 0;  ///< filled slots of the draw buffer

  /// The model's team size, at most what the execution space allows for the transition
  /// (0 where the kernel has no team path: NUTS runs the sequential gradient).
  int team_size_for_kernel() const {
    const int wanted = model::gradient_team_size(model_);
    if constexpr (has_team_transition<Kernel>() && model::has_team_gradient<Model>()) {
      if (wanted <= 0 || n_ == 0) return 0;
      const int most = TeamPolicy(n_, 1).team_size_max(kernel_, Kokkos::ParallelForTag());
      return std::max(1, std::min(wanted, most));
    } else {
      return 0;
    }
  }

  bool lanes_for_kernel() const {
    if constexpr (has_lane_transition<Kernel>()) {
      return Kernel::lanes_for(dim_);
    } else {
      return false;
    }
  }
};

}  // namespace hmc::sampler
