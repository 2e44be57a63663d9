#pragma once
/// \file
/// \brief Adjusted microcanonical HMC (MAMS; Robnik, Cohn-Gordon & Seljak 2025, BlackJAX's
/// `adjusted_mclmc`): `/sampler/algorithm` `mams`.
///
/// Each transition draws a velocity u uniformly on the unit sphere of the whitened
/// coordinates y = L⁻¹ q (Σ = L Lᵀ the metric), follows the isokinetic (ESH) dynamics of
/// log p / T for a jittered number of steps of the leapfrog (one gradient a step) or, with
/// /sampler/integrator mclachlan, McLachlan's integrator (two gradients a step, BlackJAX's
/// default), and accepts the end point with probability min(1, exp(-ΔE)),
/// ΔE = (log p(q) - log p(q')) / T + ΔK, ΔK the kinetic energy change that the velocity
/// updates accumulate. The number of steps is ceil(u · s) with u uniform in (0, 1] and s
/// chosen so that its mean is L / ε (BlackJAX's `rescale`), L the decoherence length; the
/// trajectory's step size is ε jittered by ±30 % (kStepJitter), independently of u.
///
/// Its own warmup part (MamsAdaptation) sets L from the ensemble: L = 1.3 sqrt(E|L⁻¹(q - q̄)|²),
/// the size of the typical set in the current metric (BlackJAX's L = 1.3 sqrt(Σ Var q_j) of its
/// diagonal preconditioning); the step size follows the acceptance by dual averaging, as for
/// the other kernels. A transition kernel of sampler/kernel.hpp, with a lane path (lanes.hpp).

#include "hmc/core/draw_source.hpp"
#include "hmc/core/draws.hpp"
#include "hmc/core/pack.hpp"
#include "hmc/sampler/adaptation.hpp"
#include "hmc/sampler/isokinetic.hpp"
#include "hmc/sampler/kernel.hpp"
#include "hmc/sampler/lanes.hpp"
#include "hmc/sampler/rng_uses.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

namespace hmc::sampler {

/// \brief MAMS's own warmup part: the decoherence length L, from two ensemble statistics of the
/// healthy particles in the whitened coordinates around their mean c (taken before the
/// iteration): the spread E|L⁻¹(q - c)|² and the lag-one autocorrelation ρ of L⁻¹(q - c) across
/// a transition. Until the first metric is estimated (or, with no metric to adapt, through the
/// initial buffer), L = 1.3 sqrt(spread), the size of the typical set (BlackJAX's initial L).
/// From then on L follows the autocorrelation: with τ = (1 + ρ) / (1 - ρ) the transitions per
/// effective sample, L τ is the decorrelation time and L moves towards 0.4 L τ (BlackJAX's
/// ESS-based L of adjusted MCLMC), a damped step in log L per iteration, kept within
/// [ε, ε · max_leapfrog]. After warmup: the geometric mean of the second half's values. Without
/// adaptation L is /sampler/step_size × /sampler/leapfrog_steps.
template <class K>
class MamsAdaptation {
 public:
  /// The statistics of a transition: |a|², a·b, |b|² for the whitened distances from the centre
  /// after (a) and before (b) it.
  static constexpr int kColumns = 3;
  /// The initial L over the typical set's size (BlackJAX's tuning_factor of adjusted MCLMC).
  static constexpr double kSizeFactor = 1.3;
  /// L over the decorrelation time L τ at the fixed point (BlackJAX's Lfactor).
  static constexpr double kDecorrelationFactor = 0.4;
  /// The fraction of log(0.4 τ) that one iteration moves log L by.
  static constexpr double kDamping = 0.3;

  MamsAdaptation(const Settings& s, bool metric_adapts)
      : s_(s),
        adapting_(s.adapt.enabled && s.warmup > 0),
        by_size_until_(metric_adapts ? s.warmup + 1 : std::min(s.adapt.init_buffer, static_cast<int>(0.15 * s.warmup))),
        length_(s.step_size * s.leapfrog_steps) {}

  void before(const AdaptationContext& c, K& kernel) {
    kernel.opts.centre = adapting_ && c.warmup ? c.healthy_mean() : VectorView();
    kernel.opts.length = length_;
  }
  void update(const AdaptationContext& c, const double* sums) {
    if (!adapting_ || !(c.healthy > 0.0)) return;
    const double spread = sums[0] / c.healthy;
    if (c.iteration <= by_size_until_) {
      if (std::isfinite(spread) && spread > 0.0) length_ = kSizeFactor * std::sqrt(spread);
    } else if (sums[2] > 0.0) {
      const double rho = std::min(0.99, std::max(-0.99, sums[1] / sums[2]));
      const double tau = (1.0 + rho) / (1.0 - rho);
      const double target = std::log(kDecorrelationFactor * tau);
      if (std::isfinite(target)) length_ *= std::exp(kDamping * target);
      const double lo = std::min(c.last_step_size, c.step_size), hi = c.step_size * s_.adapt.max_leapfrog;
      length_ = std::min(hi, std::max(lo, length_));
    }
    if (c.iteration > s_.warmup - std::max(1, s_.warmup / 2)) {
      log_length_sum_ += std::log(length_);
      ++log_length_count_;
    }
  }
  /// The first metric estimate ends the initial phase: L follows the autocorrelation from here.
  void metric_changed(bool first) {
    if (first) by_size_until_ = 0;
  }
  void freeze() {
    if (adapting_ && log_length_count_ > 0) length_ = std::exp(log_length_sum_ / log_length_count_);
  }
  std::string failed() const {
    if (std::isfinite(length_) && length_ > 0.0) return {};
    return "decoherence length " + std::to_string(length_);
  }
  void save(SavedState& out) const {
    out.put("mams_length",
            {length_, log_length_sum_, static_cast<double>(log_length_count_), static_cast<double>(by_size_until_)});
  }
  void load(const SavedState& in) {
    const auto& v = in.get("mams_length");
    length_ = v.at(0);
    log_length_sum_ = v.at(1);
    log_length_count_ = static_cast<int>(v.at(2));
    by_size_until_ = static_cast<int>(v.at(3));
  }
  void report(Adapted& a) const {
    a.values.emplace_back("trajectory_length", length_);
    a.values.emplace_back("mean_integration_steps", a.step_size > 0.0 ? length_ / a.step_size : 0.0);
  }

 private:
  Settings s_;
  bool adapting_;
  int by_size_until_;  ///< the last iteration whose L comes from the spread
  double length_;
  double log_length_sum_ = 0.0;
  int log_length_count_ = 0;
};

/// \brief The half-width of MAMS's step-size jitter: each trajectory's step size is ε times a
/// uniform factor in [0.7, 1.3] (the second uniform of the jitter pair, independent of the step
/// count). With one fixed ε a particle that reaches a region needing smaller steps (the narrow
/// ridge of a non-centred scale, tests/stats heavy_tails) has every proposal rejected and stays:
/// at 0.9 acceptance 3 of 6 seeds of heavy_tails lost 90 % of their ESS per gradient that way
/// and one missed log τ's variance by 5 MCSE; with the jitter all 8 seeds tried passed, at
/// 0 to 12 % fewer effective samples per gradient elsewhere (docs/sampler.md#which-algorithm).
inline constexpr double kStepJitter = 0.3;

template <class Model>
struct MamsKernel {
  struct Settings {
    double length = 1.0;     ///< the decoherence length L (the mean trajectory length)
    bool mclachlan = false;  ///< McLachlan's two-stage integrator (two gradients a step), else leapfrog
    int max_steps = 1000;
    /// The step size of a trajectory is ε (1 + step_jitter (2v - 1)), v uniform in [0, 1).
    double step_jitter = kStepJitter;
    VectorView centre;  ///< ensemble mean of q, when the warmup wants each particle's spread (else empty)
  };
  static constexpr const char* name = "mams";
  /// Its own warmup part: the decoherence length (MamsAdaptation).
  using Adaptation = MamsAdaptation<MamsKernel>;
  /// Columns of stat_columns().
  enum Column : int { kLp = 0, kAccept, kAccepted, kStepSize, kIntegrationSteps, kSteps, kDivergent, kEnergy, kError };
  /// BlackJAX's names (its HMCInfo of adjusted_mclmc: acceptance_rate, is_accepted,
  /// num_integration_steps, energy), with hmc's lp, step_size, n_steps (gradient evaluations: two
  /// per integration step) and energy_error, and ArviZ's `diverging` for BlackJAX's is_divergent
  /// (the name ArviZ's plots and hmc's diagnostics read).
  static std::vector<StatColumn> stat_columns() {
    return {{"lp", StatType::kReal, false},
            {"acceptance_rate", StatType::kReal, false},
            {"is_accepted", StatType::kBool, true},
            {"step_size", StatType::kReal, true},
            {"num_integration_steps", StatType::kInteger, true},
            {"n_steps", StatType::kInteger, true},
            {"diverging", StatType::kBool, true},
            {"energy", StatType::kReal, false},
            {"energy_error", StatType::kReal, false}};
  }
  /// Scratch row: the start (q, ∇), the velocity u and the whitened gradient.
  static int scratch_size(int dim, const Settings&) { return 4 * dim; }
  static Settings settings(const sampler::Settings& s) {
    Settings k;
    k.length = s.step_size * s.leapfrog_steps;
    k.max_steps = s.adapt.max_leapfrog;
    k.mclachlan = s.integrator == Integrator::kMcLachlan;
    return k;
  }
  static bool lanes_for(int dim) { return use_lanes<Model>(dim); }
  static constexpr int kLaneTask = 4 * kLanes;
  static int lane_task_size(int n) { return sampler::lane_task_size(n, kLaneTask); }
  static int lane_tasks(int n) { return sampler::lane_tasks(n, kLaneTask); }

  MamsKernel(const Model& m, const Settings& s, const StateView& rows) : model(m), opts(s), scratch(rows) {}

  Model model;
  Settings opts;
  StateView scratch;
  Step step;

  /// Part k (0: q at the start, 1: ∇ there, 2: u, 3: the whitened gradient) of particle i's scratch row.
  KOKKOS_INLINE_FUNCTION Row part(int i, int k) const {
    return Row{&scratch(i, k * step.dim), static_cast<std::ptrdiff_t>(scratch.stride(1))};
  }

  /// The integration steps of jitter uniform u: ceil((1 - u) s), s = jitter_scale(L / ε).
  KOKKOS_INLINE_FUNCTION int steps_of(double u) const {
    const double n = math::ceil((1.0 - u) * jitter_scale(opts.length / step.step_size));  // 1 - u lies in (0, 1]
    return !(n >= 1.0) ? 1 : (n > opts.max_steps ? opts.max_steps : static_cast<int>(n));
  }

  /// The step size of a trajectory with jitter uniform v (the second of the jitter pair).
  KOKKOS_INLINE_FUNCTION double step_of(double v) const {
    return step.step_size * (1.0 + opts.step_jitter * (2.0 * v - 1.0));
  }

  /// Normals of uses 0, 1, ... (Step::draw_momentum's) scaled to a unit vector.
  template <class R>
  KOKKOS_INLINE_FUNCTION void draw_velocity(const rng::ParticleStream& s, const R& u) const {
    double length2 = 0.0;
    for (int j = 0; j < step.dim; j += 2) {
      double z0, z1;
      s.normal2(step.iteration, static_cast<std::uint32_t>(j / 2), z0, z1);
      u(j) = z0;
      length2 += z0 * z0;
      if (j + 1 < step.dim) {
        u(j + 1) = z1;
        length2 += z1 * z1;
      }
    }
    const double inv = 1.0 / math::sqrt(length2);
    for (int j = 0; j < step.dim; ++j) u(j) *= inv;
  }

  /// The Metropolis test of an end point with log density lp1 from lp0, with kinetic energy change dk.
  struct Verdict {
    double accept_prob, error;
    bool diverged, accepted;
  };
  KOKKOS_INLINE_FUNCTION Verdict verdict(double lp0, double lp1, double dk, double u) const {
    const double inv_t = 1.0 / step.temperature;
    const double delta = energy_error(lp1 * inv_t, -lp0 * inv_t, dk);
    const bool diverged = is_divergence(delta);
    const double a = diverged ? 0.0 : (delta <= 0.0 ? 1.0 : math::exp(-delta));
    return {a, delta, diverged, u < a};
  }

  KOKKOS_INLINE_FUNCTION void operator()(const int i) const {
    const rng::ParticleStream stream = step.stream(i);
    const EnsembleState& state = step.state;
    const int dim = step.dim;
    const Row q = row(state.q, i), g = row(state.grad, i);
    const Row q0 = part(i, 0), g0 = part(i, 1), u = part(i, 2), w = part(i, 3);
    for (int j = 0; j < dim; ++j) {
      q0(j) = q(j);
      g0(j) = g(j);
    }
    draw_velocity(stream, u);
    double uj, uv, ua, unused;
    stream.uniform2(step.iteration, kUseJitter, uj, uv);
    const double eps = step_of(uv);
    stream.uniform2(step.iteration, kUseAccept, ua, unused);
    const int steps = steps_of(uj);
    const RowGradient<Model> gradient{model, state.scratch(i)};
    const double inv_t = 1.0 / step.temperature;
    double dk = 0.0, lp1 = state.lp(i);
    for (int s = 0; s < steps; ++s) {
      lp1 = opts.mclachlan ? mclachlan_step(q, u, g, w, step.metric, dim, eps, inv_t, dk, gradient)
                           : isokinetic_leapfrog_step(q, u, g, w, step.metric, dim, eps, inv_t, dk, gradient);
      if (!math::isfinite(lp1)) break;
    }
    const Verdict v = verdict(state.lp(i), lp1, dk, ua);
    if (v.accepted) {
      state.lp(i) = lp1;
    } else {
      for (int j = 0; j < dim; ++j) {
        q(j) = q0(j);
        g(j) = g0(j);
      }
    }
    record(i, v, steps, q, q0, w, u);
  }

  /// The records of particle i's transition: `q` is its position after the test, `q0` before it;
  /// `a` and `b` are scratch (dim values each).
  KOKKOS_INLINE_FUNCTION void record(int i, const Verdict& v, int steps, const Row& q, const Row& q0, const Row& a,
                                     const Row& b) const {
    step.tally(i, v.accept_prob, v.diverged, (opts.mclachlan ? 2.0 : 1.0) * steps);
    if (opts.centre.extent(0) > 0) {
      // The warmup's statistics in the whitened coordinates, around the ensemble centre c:
      // |a|², a·b and |b|² for a = L⁻¹(q - c), b = L⁻¹(q0 - c).
      const Metric& metric = step.metric;
      for (int j = 0; j < step.dim; ++j) {
        a(j) = q(j) - opts.centre(j);
        b(j) = q0(j) - opts.centre(j);
      }
      const double after = metric.whitened_norm2(a), before = metric.whitened_norm2(b);
      double cross = 0.0;
      for (int j = 0; j < step.dim; ++j) cross += a(j) * b(j) / (metric.dense ? 1.0 : metric.diag(j));
      step.adapt_stat(i, 0, after);
      step.adapt_stat(i, 1, cross);
      step.adapt_stat(i, 2, before);
    }
    step.record_params(model, i, q);
    step.record_stat(i, kLp, step.state.lp(i));
    step.record_stat(i, kAccept, v.accept_prob);
    step.record_stat(i, kAccepted, v.accepted ? 1.0 : 0.0);
    step.record_stat(i, kStepSize, step.step_size);
    step.record_stat(i, kIntegrationSteps, steps);
    step.record_stat(i, kSteps, (opts.mclachlan ? 2.0 : 1.0) * steps);
    step.record_stat(i, kDivergent, v.diverged ? 1.0 : 0.0);
    step.record_stat(i, kEnergy, -step.state.lp(i));
    step.record_stat(i, kError, math::isfinite(v.error) ? v.error : math::infinity());
  }

  /// \brief The transitions of the particles of task `task` in the lanes (lanes.hpp), sorted by
  /// their step counts (sorted_lane_blocks); host only.
  void lanes(const int task) const {
    if constexpr (lanes_available<Model>()) {
      const int n = static_cast<int>(step.state.lp.extent(0));
      const int size = lane_task_size(n);
      const int first = task * size;
      const int count = (n - first < size ? n - first : size);
      sorted_lane_blocks<kLaneTask>(
          first, count, step.iteration, kUseJitter, kUseAccept, true, [this](int i) { return step.stream(i); },
          [this](double u) { return steps_of(u); },
          [this](const int* particle, const int* steps, const Pack& u_accept, int m) {
            block(particle, steps, u_accept, m);
          });
    }
  }

 private:
  /// The transitions of kLanes particles in lock step (hmc_kernel.hpp's block, with the isokinetic
  /// dynamics): particle[l] in lane l takes steps[l] steps; the first m lanes are recorded.
  void block(const int* particle, const int* steps, const Pack& u_accept, int m) const {
    if constexpr (lanes_available<Model>()) {
      constexpr int W = kLanes;
      const int dim = step.dim;
      Pack q[kMaxLaneDim], u[kMaxLaneDim], g[kMaxLaneDim], w[kMaxLaneDim];
      Pack lp, dk = 0.0;
      bool finite[W];
      for (int j = 0; j < dim; ++j) {
        for (int l = 0; l < W; ++l) {
          q[j][l] = step.state.q(particle[l], j);
          g[j][l] = step.state.grad(particle[l], j);
        }
      }
      rng::ParticleStream streams[W];
      double step_sizes[W];  // the jitter pair again (sorted_lane_blocks read its first uniform): one Philox a lane
      for (int l = 0; l < W; ++l) {
        streams[l] = step.stream(particle[l]);
        double uj, uv;
        streams[l].uniform2(step.iteration, kUseJitter, uj, uv);
        step_sizes[l] = step_of(uv);
      }
      lane_momenta(streams, step.iteration, dim, u);
      Pack length2 = 0.0;
      for (int j = 0; j < dim; ++j) length2 += u[j] * u[j];
      const Pack inv_length = 1.0 / math::sqrt(length2);
      for (int j = 0; j < dim; ++j) u[j] *= inv_length;
      int longest = 0;
      for (int l = 0; l < W; ++l) {
        longest = steps[l] > longest ? steps[l] : longest;
        lp[l] = step.state.lp(particle[l]);
        finite[l] = true;
      }
      const double inv_t = 1.0 / step.temperature;
      const LaneGradient<Model> gradient{model};
      for (int s = 0; s < longest; ++s) {
        Pack eps;
        int running = 0;
        for (int l = 0; l < W; ++l) {
          const bool moves = s < steps[l] && finite[l];
          eps[l] = moves ? step_sizes[l] : 0.0;
          running += moves;
        }
        if (running == 0) break;
        Pack dk_step = 0.0;
        const Pack lpn = opts.mclachlan ? mclachlan_step(PackRow{q}, PackRow{u}, PackRow{g}, PackRow{w}, step.metric,
                                                         dim, eps, inv_t, dk_step, gradient)
                                        : isokinetic_leapfrog_step(PackRow{q}, PackRow{u}, PackRow{g}, PackRow{w},
                                                                   step.metric, dim, eps, inv_t, dk_step, gradient);
        for (int l = 0; l < W; ++l) {
          if (eps[l] == 0.0) continue;
          lp[l] = lpn[l];
          dk[l] += dk_step[l];
          finite[l] = math::isfinite(lpn[l]);
        }
      }
      for (int l = 0; l < m; ++l) {
        const int i = particle[l];
        const Verdict v = verdict(step.state.lp(i), lp[l], dk[l], u_accept[l]);
        const Row q1 = row(step.state.q, i), start = part(i, 0);
        if (opts.centre.extent(0) > 0) {  // the warmup's statistics read the start (record)
          for (int j = 0; j < dim; ++j) start(j) = q1(j);
        }
        if (v.accepted) {
          step.state.lp(i) = lp[l];
          const Row g1 = row(step.state.grad, i);
          for (int j = 0; j < dim; ++j) {
            q1(j) = q[j][l];
            g1(j) = g[j][l];
          }
        }
        record(i, v, steps[l], q1, start, part(i, 3), part(i, 2));
      }
    }
  }
};

}  // namespace hmc::sampler
