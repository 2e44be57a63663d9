#pragma once
/// \file
/// \brief The transition-kernel concept: what a sampling algorithm gives the ensemble
/// loop (sampler/run.hpp), and what the loop gives it.
///
/// A kernel K is a class template over the model, K<Model>, with
///
///   struct Settings;                                        // its own settings (from sampler::Settings)
///   static constexpr const char* name;                     // "hmc": /sampler/algorithm, checkpoints
///   static std::vector<StatColumn> stat_columns();         // what it records with every draw
///   static int scratch_size(int dim, const Settings&);     // doubles of scratch per particle
///   static Settings settings(const sampler::Settings&);    // its settings for a run
///   K(const Model&, const Settings&, const StateView& scratch);
///   Step step;                                             // set by the loop before each launch
///   KOKKOS_INLINE_FUNCTION void operator()(int i) const;   // one transition of local particle i
///
/// and, optionally, the transition of one particle by a team of threads
/// (`KOKKOS_INLINE_FUNCTION void operator()(const TeamMember&) const`, used where the
/// model's gradient runs on a team), transitions of particles in the host's vector lanes (a member
/// `void lanes(int task) const`, `static int lane_tasks(int n)` tasks for n particles,
/// and `static bool lanes_for(int dim)`), and an adaptation of its own (a nested type
/// `Adaptation`: the warmup part of its own settings, such as HMC's ChEES path length;
/// sampler/warmup.hpp gives its members). check_kernel<K, Model>() asserts each member
/// with a message naming it (tests/compile).
///
/// A transition reads and writes the particle's position, gradient and log density
/// (step.state), may use its scratch row freely (nothing in it outlives the
/// transition), and reports through step: tally() for the running sums and the
/// adaptation's acceptance statistic, record_params() and record_stat() for a recorded
/// draw. Its random numbers come from step.stream(i) with the use ids of
/// sampler/rng_uses.hpp. What the loop does with the results (warmup, writers,
/// checkpoints) does not depend on the kernel.

#include "hmc/core/draw_source.hpp"
#include "hmc/core/philox.hpp"
#include "hmc/core/types.hpp"
#include "hmc/model/concept.hpp"
#include "hmc/sampler/metric.hpp"
#include "hmc/sampler/settings.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace hmc::sampler {

/// An energy error above this marks the transition divergent (Stan's rule).
inline constexpr double kDivergenceThreshold = 1000.0;

/// \brief ΔH = H1 - H0 of an end point with log density lp1 and kinetic energy k1 from a
/// start of energy h0; a non-finite end point (log density -inf, +inf or NaN) has
/// ΔH = +inf. The one energy-error rule of every kernel, scalar and lane paths.
KOKKOS_INLINE_FUNCTION double energy_error(double lp1, double h0, double k1) {
  const double delta = (-lp1 + k1) - h0;
  return (!math::isfinite(lp1) || math::isnan(delta)) ? math::infinity() : delta;
}
/// Whether a step of energy error delta (energy_error) is a divergence.
KOKKOS_INLINE_FUNCTION bool is_divergence(double delta) { return delta > kDivergenceThreshold; }

/// \brief The state of a rank's particles: positions, gradients, log densities, and the
/// model's working memory. All Views are [local particle][...].
struct EnsembleState {
  StateView q, grad;  ///< current position and ∇ log p there
  ParticleView lp;    ///< log p(q), Jacobian included
  StateView work;     ///< the model's per-particle working memory (model::scratch_size)

  EnsembleState() = default;
  EnsembleState(int n, int dim, int scratch = 0)
      : q("hmc::q", n, dim),
        grad("hmc::grad", n, dim),
        lp("hmc::lp", n),
        work("hmc::model_scratch", scratch > 0 ? n : 0, scratch) {}

  KOKKOS_INLINE_FUNCTION Row scratch(int i) const { return work.extent(1) > 0 ? row(work, i) : Row{nullptr, 0}; }
};

/// \brief What transitions report: running sums per particle, the statistics the warmup
/// reduces, and the recorded draws.
struct TransitionRecord {
  ParticleView accept_sum;   ///< sum of the acceptance statistic over counted iterations
  ParticleView divergences;  ///< divergent transitions over counted iterations
  ParticleView steps_sum;    ///< gradient evaluations, all iterations
  StateView adapt;  ///< [particle][1 + the kernel adaptation's columns]: acceptance statistic a_i, then its own
  DrawView draws;   ///< [particle][slot][param], constrained values
  DrawView stats;   ///< [particle][slot][statistic], the kernel's stat_columns()
};

/// \brief What the loop hands a kernel at each launch.
struct Step {
  EnsembleState state;
  TransitionRecord record;
  Metric metric;
  int dim = 0;
  double step_size = 0.0;
  double temperature = 1.0;
  std::uint64_t seed = 0;
  std::int64_t first_particle = 0;  ///< global id of local particle 0
  std::uint32_t iteration = 0;      ///< 1-based; 0 is the initialisation
  bool count = false;               ///< post-warmup: add to accept_sum / divergences
  int slot = -1;                    ///< draw slot to record into, or -1

  /// The random numbers of local particle i (keyed by its global id).
  KOKKOS_INLINE_FUNCTION rng::ParticleStream stream(int i) const {
    return rng::ParticleStream(seed, static_cast<std::uint64_t>(first_particle + i));
  }
  /// Momenta p ~ N(0, T Σ⁻¹) from the normals of uses 0, 1, ... (a pair per use).
  template <class R>
  KOKKOS_INLINE_FUNCTION void draw_momentum(const rng::ParticleStream& s, const R& p) const {
    for (int j = 0; j < dim; j += 2) {
      double z0, z1;
      s.normal2(iteration, static_cast<std::uint32_t>(j / 2), z0, z1);
      p(j) = z0;
      if (j + 1 < dim) p(j + 1) = z1;
    }
    metric.momentum_from_normals(p, math::sqrt(temperature));
  }
  /// The running sums of particle i's transition: its acceptance statistic (also the
  /// warmup's, adapt column 0), whether it diverged, its gradient evaluations.
  KOKKOS_INLINE_FUNCTION void tally(int i, double accept, bool diverged, double grad_evals) const {
    record.adapt(i, 0) = accept;
    record.steps_sum(i) += grad_evals;
    if (count) {
      record.accept_sum(i) += accept;
      record.divergences(i) += diverged ? 1.0 : 0.0;
    }
  }
  /// Column k of the statistics that particle i's transition gives the kernel's own
  /// adaptation (warmup.hpp: Adaptation::kColumns of them; reduced over the healthy particles).
  KOKKOS_INLINE_FUNCTION void adapt_stat(int i, int k, double value) const { record.adapt(i, 1 + k) = value; }
  /// Records the constrained parameters of q (when this iteration records a draw).
  template <class Model, class R>
  KOKKOS_INLINE_FUNCTION void record_params(const Model& model, int i, const R& q) const {
    if (slot >= 0)
      model.constrain(q, Row{&record.draws(i, slot, 0), static_cast<std::ptrdiff_t>(record.draws.stride(2))});
  }
  /// Records statistic `column` (of the kernel's stat_columns()) of particle i.
  KOKKOS_INLINE_FUNCTION void record_stat(int i, int column, double value) const {
    if (slot >= 0) record.stats(i, slot, column) = value;
  }
};

/// \brief What a kernel's own adaptation (K::Adaptation, sampler/warmup.hpp) is told of
/// an iteration: before it (`before`) or after it, in warmup (`update`).
struct AdaptationContext {
  const Settings* settings = nullptr;
  int iteration = 0;            ///< 1-based, warmup included
  bool warmup = false;          ///< iteration <= settings->warmup
  bool adapting = false;        ///< a warmup iteration of a run that adapts
  double step_size = 0.0;       ///< before: this iteration's; update: the next one's
  double last_step_size = 0.0;  ///< update: the step size this iteration ran with
  double healthy = 0.0;         ///< update: the particles of weight 1 (its sums are over them)
  /// The ensemble mean of q over the healthy particles (all ranks: collective, so every
  /// rank calls it equally often).
  std::function<VectorView()> healthy_mean;
};

/// \brief A kernel's settings, statistics and scratch, for callers that hold no kernel
/// (the services' memory estimate and store layout: sampler/kernels.hpp).
struct KernelInfo {
  std::string name;
  std::vector<StatColumn> stats;
  int scratch_size = 0;  ///< doubles per particle
};

namespace detail {
template <class, class = void>
struct has_settings : std::false_type {};
template <class K>
struct has_settings<K, std::void_t<typename K::Settings>> : std::true_type {};

template <class, class = void>
struct has_name : std::false_type {};
template <class K>
struct has_name<K, std::enable_if_t<std::is_convertible_v<decltype(K::name), const char*>>> : std::true_type {};

template <class, class = void>
struct has_stat_columns : std::false_type {};
template <class K>
struct has_stat_columns<K, std::enable_if_t<std::is_same_v<decltype(K::stat_columns()), std::vector<StatColumn>>>>
    : std::true_type {};

template <class, class = void>
struct has_scratch_size : std::false_type {};
template <class K>
struct has_scratch_size<
    K, std::enable_if_t<std::is_convertible_v<
           decltype(K::scratch_size(std::declval<int>(), std::declval<const typename K::Settings&>())), int>>>
    : std::true_type {};

template <class, class = void>
struct has_kernel_settings : std::false_type {};
template <class K>
struct has_kernel_settings<
    K, std::enable_if_t<std::is_same_v<decltype(K::settings(std::declval<const Settings&>())), typename K::Settings>>>
    : std::true_type {};

template <class, class = void>
struct has_step : std::false_type {};
template <class K>
struct has_step<K, std::enable_if_t<std::is_same_v<decltype(std::declval<K&>().step), Step>>> : std::true_type {};

template <class, class = void>
struct has_transition : std::false_type {};
template <class K>
struct has_transition<K, std::void_t<decltype(std::declval<const K&>()(std::declval<int>()))>> : std::true_type {};

template <class, class = void>
struct has_lanes : std::false_type {};
template <class K>
struct has_lanes<K,
                 std::void_t<decltype(std::declval<const K&>().lanes(std::declval<int>())),
                             decltype(K::lanes_for(std::declval<int>())), decltype(K::lane_tasks(std::declval<int>()))>>
    : std::true_type {};

template <class, class = void>
struct has_team : std::false_type {};
template <class K>
struct has_team<K, std::void_t<decltype(std::declval<const K&>()(std::declval<const TeamMember&>()))>>
    : std::true_type {};

template <class, class = void>
struct has_adaptation : std::false_type {};
template <class K>
struct has_adaptation<K, std::void_t<typename K::Adaptation>> : std::true_type {};
}  // namespace detail

/// Whether kernel K has a transition of a block of lanes (host only).
template <class K>
constexpr bool has_lane_transition() {
  return detail::has_lanes<K>::value;
}

/// Whether kernel K has a transition of one particle by a team of threads (for models
/// whose gradient runs on a team: model::gradient_team_size()).
template <class K>
constexpr bool has_team_transition() {
  return detail::has_team<K>::value;
}

/// Whether kernel K adapts settings of its own in warmup (a nested type K::Adaptation).
template <class K>
constexpr bool has_own_adaptation() {
  return detail::has_adaptation<K>::value;
}

/// \brief Compile-time check of a transition kernel K for Model: one message per
/// missing member. Use as static_assert(check_kernel<K, Model>()).
template <class K, class Model>
constexpr bool check_kernel() {
  static_assert(detail::has_settings<K>::value, "hmc kernel: needs a nested type `Settings`");
  static_assert(detail::has_name<K>::value,
                "hmc kernel: needs `static constexpr const char* name` (its /sampler/algorithm name)");
  static_assert(detail::has_stat_columns<K>::value,
                "hmc kernel: needs `static std::vector<StatColumn> stat_columns()` (what it records)");
  if constexpr (detail::has_settings<K>::value) {
    static_assert(detail::has_scratch_size<K>::value,
                  "hmc kernel: needs `static int scratch_size(int dim, const Settings&)` (doubles per particle)");
    static_assert(detail::has_kernel_settings<K>::value,
                  "hmc kernel: needs `static Settings settings(const sampler::Settings&)`");
    static_assert(std::is_constructible_v<K, const Model&, const typename K::Settings&, const StateView&>,
                  "hmc kernel: needs a constructor K(const Model&, const Settings&, const StateView& scratch)");
  }
  static_assert(detail::has_step<K>::value, "hmc kernel: needs a member `Step step` (set before each launch)");
  static_assert(detail::has_transition<K>::value,
                "hmc kernel: needs `KOKKOS_INLINE_FUNCTION void operator()(int i) const` (one transition)");
  if constexpr (detail::has_settings<K>::value) {
    return detail::has_name<K>::value && detail::has_stat_columns<K>::value && detail::has_scratch_size<K>::value &&
           detail::has_kernel_settings<K>::value &&
           std::is_constructible_v<K, const Model&, const typename K::Settings&, const StateView&> &&
           detail::has_step<K>::value && detail::has_transition<K>::value;
  } else {
    return false;
  }
}

}  // namespace hmc::sampler
