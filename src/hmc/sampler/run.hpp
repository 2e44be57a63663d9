#pragma once
/// \file
/// \brief The sampling loop of one rank: initialise, warm up (adapt), sample, record.
///
/// The loop knows nothing of MPI, files or logging: ensemble-wide sums go through
/// an Allreduce (core/ensemble_sum.hpp), progress through a callback, and it returns host copies of
/// what it recorded. Nor does it know the algorithm: the transition kernel
/// (sampler/kernel.hpp) is a template parameter, and its statistics, scratch and
/// random numbers are its own; nor the adaptation: the warmup (sampler/warmup.hpp) is
/// one part, called before and after each iteration.

#include "hmc/core/draws.hpp"
#include "hmc/core/ensemble_sum.hpp"
#include "hmc/core/errors.hpp"
#include "hmc/core/types.hpp"
#include "hmc/model/concept.hpp"
#include "hmc/sampler/groups.hpp"
#include "hmc/sampler/hmc_kernel.hpp"
#include "hmc/sampler/init.hpp"
#include "hmc/sampler/kernel.hpp"
#include "hmc/sampler/lanes.hpp"
#include "hmc/sampler/metric.hpp"
#include "hmc/sampler/settings.hpp"
#include "hmc/sampler/warmup.hpp"

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
  SavedState adapters;    ///< what the warmup's parts saved (step size, metric, health, the kernel's own)
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
        sums_(allreduce),
        capacity_(capacity_for(s)),
        kernel_(model, Kernel::settings(s),
                StateView("hmc::kernel_scratch", n_, Kernel::scratch_size(dim_, Kernel::settings(s)))),
        warmup_(model, s, n_, dim_, first, allreduce) {
    rec_.accept_sum = ParticleView("hmc::accept_sum", n_);
    rec_.divergences = ParticleView("hmc::divergences", n_);
    rec_.steps_sum = ParticleView("hmc::steps_sum", n_);
    rec_.adapt = StateView("hmc::transition_stats", n_, Warmup<Model, Kernel>::columns());
    if constexpr (lanes_available<Model>() && model::has_lane_scratch_gradient<Model>()) {
      reserve_lane_scratch(model.lane_scratch_size());  // the lanes' tapes: never allocated in the loop
    }
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
    warmup_.before(it, kernel_, state_);
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
    step.metric = warmup_.metric();
    step.dim = dim_;
    step.step_size = warmup_.step_size();
    step.temperature = s_.temperature;
    step.seed = s_.seed;
    step.first_particle = first_;
    step.iteration = static_cast<std::uint32_t>(it);
    step.count = !warm;
    step.slot = slot;
    launch();
    if (slot >= 0 && groups_width_ > 0) record_groups(slot);

    double mean_accept = warmup_.after(it, state_, rec_);

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
      if (groups_width_ > 0) Kokkos::deep_copy(block_.groups, groups_);
    }
    block_.count = filled_;
    filled_ = 0;
    return block_;
  }

  /// \brief What warmup settled on (so far).
  Adapted adapted() const {
    Adapted a;
    a.algorithm = Kernel::name;
    warmup_.report(a);
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
  /// accept_sum, divergences, steps_sum, and the warmup's (metric window sums, health).
  int row_width() const { return 2 * dim_ + 4 + warmup_.row_columns(); }

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
    warmup_.save(l.adapters);
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
      warmup_.load(loop.adapters);
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
  /// What the model computes from each local particle's recorded draw (slot `slot` of the
  /// draw buffer, written by the transition) into the same slot of the groups' buffer
  /// (sampler/groups.hpp), keyed by the draw's index in its section.
  void record_groups(int slot) {
    sampler::record_groups(model_, rec_.draws, groups_, slot, n_, widths_, s_.seed, first_,
                           static_cast<std::uint32_t>(block_.first_draw + slot), block_.warmup);
  }

  /// Copies the checkpointed quantities into `rows` (see row_width()).
  void pack_rows(const Kokkos::View<double**, Kokkos::LayoutRight, MemSpace>& rows) const {
    const auto q = state_.q, g = state_.grad;
    const auto lp = state_.lp, acc = rec_.accept_sum, div = rec_.divergences, steps = rec_.steps_sum;
    const int d = dim_;
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
        });
    int offset = 2 * d + 4;
    for (const auto& part : warmup_.rows()) {
      const int o = offset, cols = static_cast<int>(part.extent(1));
      Kokkos::parallel_for(
          "hmc::pack_warmup", Policy(0, n_), KOKKOS_LAMBDA(const int i) {
            for (int j = 0; j < cols; ++j) rows(i, o + j) = part(i, j);
          });
      offset += cols;
    }
    Kokkos::fence();
  }

  /// The inverse of pack_rows().
  void unpack_rows(const Kokkos::View<double**, Kokkos::LayoutRight, MemSpace>& rows) {
    const auto q = state_.q, g = state_.grad;
    const auto lp = state_.lp, acc = rec_.accept_sum, div = rec_.divergences, steps = rec_.steps_sum;
    const int d = dim_;
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
        });
    int offset = 2 * d + 4;
    for (const auto& part : warmup_.rows()) {
      const int o = offset, cols = static_cast<int>(part.extent(1));
      Kokkos::parallel_for(
          "hmc::unpack_warmup", Policy(0, n_), KOKKOS_LAMBDA(const int i) {
            for (int j = 0; j < cols; ++j) part(i, j) = rows(i, o + j);
          });
      offset += cols;
    }
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
        static const std::string lanes_label = std::string("hmc::transition_lanes_") + Kernel::name;
        Kokkos::parallel_for(lanes_label, Policy(0, Kernel::lane_tasks(n_)), [&k](const int task) { k.lanes(task); });
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
    if (groups_width_ > 0) {
      groups_ = DrawView(view_alloc(WithoutInitializing, "hmc::draw_groups"), n_, capacity_, groups_width_);
    }
    if constexpr (kRecordOnHost) {
      // A generic lambda: its body is checked only where it is instantiated (a CUDA build's
      // compiler otherwise warns that a device View does not assign to a host one).
      [](auto& block, const auto& rec, const auto& groups) {
        block.draws = rec.draws;
        block.stats = rec.stats;
        block.groups = groups;
      }(block_, rec_, groups_);
    } else {
      block_.draws =
          DrawBlock::HostDraws(view_alloc(WithoutInitializing, "hmc::block_draws_host"), n_, capacity_, params);
      block_.stats =
          DrawBlock::HostDraws(view_alloc(WithoutInitializing, "hmc::block_stats_host"), n_, capacity_, stats);
      if (groups_width_ > 0) {
        block_.groups = DrawBlock::HostDraws(view_alloc(WithoutInitializing, "hmc::block_groups_host"), n_, capacity_,
                                             groups_width_);
      }
    }
  }

  /// Is a draw recorded at iteration `it` (1-based)?
  bool records(int it) const {
    if (it <= s_.warmup) return s_.save_warmup && (it - 1) % s_.thin == 0;
    return (it - s_.warmup - 1) % s_.thin == 0;
  }

  Model model_;
  Settings s_;
  std::int64_t first_;
  int n_;
  int dim_;
  EnsembleState state_;
  mutable ReproducibleSums sums_;  ///< ensemble sums over all ranks (progress); keeps its buffers
  int capacity_;                   ///< slots of the draw buffer (allocated at the first recorded draw)
  TransitionRecord rec_;
  /// Values per draw of the further groups: log_likelihood, posterior_predictive,
  /// generated_quantities, each 0 where the run does not record it; [particle][slot][value]
  /// in groups_.
  GroupWidths widths_ = group_widths(model_, s_);
  int groups_width_ = widths_.total();
  DrawView groups_;
  Kernel kernel_;
  Warmup<Model, Kernel> warmup_;
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
