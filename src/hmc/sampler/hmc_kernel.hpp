#pragma once
/// \file
/// \brief Static HMC, with ChEES-jittered path lengths: `/sampler/algorithm` `hmc`.
///
/// Gaussian momentum refresh, L leapfrog steps, Metropolis accept. The ensemble samples
/// exp(-H/T) with H = -log p(q) + ½ pᵀ Σ p, so momenta are drawn from N(0, T·Σ⁻¹) and a
/// move is accepted with probability min(1, exp(-ΔH/T)); the positions then follow
/// p(q)^(1/T). With `jitter` (ChEES), the number of steps is ceil(u · length / ε) for u
/// uniform in (0, 1], drawn per particle and iteration. A transition kernel of
/// sampler/kernel.hpp, with a lane path (lanes.hpp).

#include "hmc/core/pack.hpp"
#include "hmc/sampler/chees.hpp"
#include "hmc/sampler/kernel.hpp"
#include "hmc/sampler/lanes.hpp"
#include "hmc/sampler/leapfrog.hpp"
#include "hmc/sampler/rng_uses.hpp"

#include <vector>

namespace hmc::sampler {

template <class Model>
struct HmcKernel {
  struct Settings {
    int leapfrog_steps = 10;  ///< without jitter
    bool jitter = false;      ///< ChEES: jittered steps for a trajectory of length `length`
    double length = 1.0;
    int max_steps = 1000;
    VectorView centre;  ///< ensemble mean of q, when the ChEES gradient is wanted (else empty)
  };
  static constexpr const char* name = "hmc";
  /// Its own warmup part: the ChEES path length (sampler/chees.hpp).
  using Adaptation = ChEESAdaptation<HmcKernel>;
  /// Columns of stat_columns().
  enum Column : int { kLp = 0, kAccept, kStepSize, kSteps, kDiverging, kEnergy };
  static std::vector<StatColumn> stat_columns() { return hmc_stat_columns(); }
  /// Scratch row: the start of the trajectory (q, ∇) and the momentum.
  static int scratch_size(int dim, const Settings&) { return 3 * dim; }
  static Settings settings(const sampler::Settings& s) {
    Settings k;
    k.leapfrog_steps = s.leapfrog_steps;
    k.jitter = s.adapt.enabled && s.adapt.trajectory == TrajectoryKind::kChees;
    k.length = s.step_size * s.leapfrog_steps;
    k.max_steps = s.adapt.max_leapfrog;
    return k;
  }
  static bool lanes_for(int dim) { return use_lanes<Model>(dim); }
  /// Most particles per task of the lane path: sorted by step count, then run kLanes at a time.
  static constexpr int kLaneTask = 4 * kLanes;
  /// Particles per task for n particles: kLaneTask, or fewer (a multiple of kLanes) where
  /// there would be fewer tasks than threads. The draws do not depend on it.
  static int lane_task_size(int n) { return sampler::lane_task_size(n, kLaneTask); }
  static int lane_tasks(int n) { return sampler::lane_tasks(n, kLaneTask); }

  HmcKernel(const Model& m, const Settings& s, const StateView& rows) : model(m), opts(s), scratch(rows) {}

  Model model;
  Settings opts;
  StateView scratch;
  Step step;

  /// Part k (0: q at the start, 1: ∇ there, 2: p) of particle i's scratch row.
  KOKKOS_INLINE_FUNCTION Row part(int i, int k) const {
    return Row{&scratch(i, k * step.dim), static_cast<std::ptrdiff_t>(scratch.stride(1))};
  }

  KOKKOS_INLINE_FUNCTION int steps_for(const rng::ParticleStream& stream) const {
    if (!opts.jitter) return opts.leapfrog_steps;
    double u, unused;
    stream.uniform2(step.iteration, kUseJitter, u, unused);
    return jittered_steps(u);
  }
  /// The step count of the jitter uniform u.
  KOKKOS_INLINE_FUNCTION int jittered_steps(double u) const {
    const double n = math::ceil((1.0 - u) * opts.length / step.step_size);                 // 1 - u lies in (0, 1]
    return !(n >= 1.0) ? 1 : (n > opts.max_steps ? opts.max_steps : static_cast<int>(n));  // NaN: 1
  }

  /// \brief The ChEES terms of a trajectory (Hoffman, Radul & Sountsov 2021): with
  /// δ = |q' - q̄|²_W - |q - q̄|²_W and W = diag(Σ)⁻¹, the gradient term t · δ · (q' - q̄)ᵀ W Σ p'
  /// (d δ² / d log T is 4 times it) and the spread δ² (ChEES is E[δ²] / 4). Both 0 where
  /// not finite.
  struct CheesTerms {
    double gradient = 0.0, spread = 0.0;
  };
  template <class RE, class RB, class RP>
  KOKKOS_INLINE_FUNCTION CheesTerms chees_terms(const RE& q_end, const RB& q_begin, const RP& p_end, double t) const {
    const Metric& metric = step.metric;
    const VectorView& centre = opts.centre;
    double after = 0.0, before = 0.0, dot = 0.0;
    for (int j = 0; j < step.dim; ++j) {
      const double w = 1.0 / (metric.dense ? metric.full(j, j) : metric.diag(j));
      const double a = q_end(j) - centre(j), b = q_begin(j) - centre(j);
      after += w * a * a;
      before += w * b * b;
      dot += w * a * metric.velocity(p_end, j);
    }
    const double delta = after - before;
    const double g = t * delta * dot;
    if (!math::isfinite(g)) return {};
    return {g, delta * delta};
  }

  /// The warmup's ChEES statistics of particle i (its adaptation's columns 0 and 1:
  /// a · gradient term, a · δ², a the acceptance probability); 0 when the length is not adapted.
  template <class RE, class RB, class RP>
  KOKKOS_INLINE_FUNCTION void record_chees(int i, double accept_prob, const RE& q_end, const RB& q_begin,
                                           const RP& p_end, int steps) const {
    CheesTerms c;
    if (opts.centre.extent(0) > 0 && accept_prob > 0.0) c = chees_terms(q_end, q_begin, p_end, steps * step.step_size);
    step.adapt_stat(i, 0, accept_prob * c.gradient);
    step.adapt_stat(i, 1, accept_prob * c.spread);
  }

  /// \brief The Metropolis test of a trajectory from energy h0 to log density lp1 with
  /// kinetic energy k1 at its end.
  struct Verdict {
    double accept_prob;
    bool diverged, accepted;
    double energy;  ///< H of the state kept
  };
  KOKKOS_INLINE_FUNCTION Verdict judge(const rng::ParticleStream& stream, double lp1, double h0, double k1) const {
    const double delta = energy_error(lp1, h0, k1);
    double u, unused;
    stream.uniform2(step.iteration, kUseAccept, u, unused);
    return verdict(delta, math::exp(-delta / step.temperature), u, -lp1 + k1, h0);
  }
  /// The test itself, from ΔH, exp(-ΔH / T) (computed by the caller: the lane path does
  /// all lanes at once), the uniform u and the two energies.
  static KOKKOS_INLINE_FUNCTION Verdict verdict(double delta, double exp_delta, double u, double h1, double h0) {
    const bool diverged = is_divergence(delta);
    const double a = diverged ? 0.0 : (delta <= 0.0 ? 1.0 : exp_delta);
    const bool accepted = u < a;
    return {a, diverged, accepted, accepted ? h1 : h0};
  }

  KOKKOS_INLINE_FUNCTION void operator()(const int i) const {
    const rng::ParticleStream stream = step.stream(i);
    const EnsembleState& state = step.state;
    const int dim = step.dim;
    const Row q = row(state.q, i), g = row(state.grad, i);
    const Row q0 = part(i, 0), g0 = part(i, 1), p = part(i, 2);
    start(stream, q, g, q0, g0, p);
    const int steps = steps_for(stream);
    const double h0 = -state.lp(i) + step.metric.kinetic(p);
    const double lp1 = leapfrog(model, q, p, g, state.scratch(i), step.metric, dim, step.step_size, steps);
    const Verdict v = judge(stream, lp1, h0, step.metric.kinetic(p));
    finish(i, v, lp1, q, g, q0, g0, p, steps);
  }

  /// The start of a transition: the position q and gradient g kept in q0 and g0, a momentum
  /// drawn into p.
  KOKKOS_INLINE_FUNCTION void start(const rng::ParticleStream& stream, const Row& q, const Row& g, const Row& q0,
                                    const Row& g0, const Row& p) const {
    for (int j = 0; j < step.dim; ++j) {
      q0(j) = q(j);
      g0(j) = g(j);
    }
    step.draw_momentum(stream, p);
  }

  /// The end of particle i's transition, whose trajectory ended at (q, g, p) with log
  /// density lp1: the verdict v applied (q and g back to q0 and g0 where it rejects) and
  /// recorded.
  KOKKOS_INLINE_FUNCTION void finish(int i, const Verdict& v, double lp1, const Row& q, const Row& g, const Row& q0,
                                     const Row& g0, const Row& p, int steps) const {
    record_chees(i, v.accept_prob, q, q0, p, steps);
    if (v.accepted) {
      step.state.lp(i) = lp1;
    } else {
      for (int j = 0; j < step.dim; ++j) {
        q(j) = q0(j);
        g(j) = g0(j);
      }
    }
    record(i, v, steps, q);
  }

  /// \brief The transition of particle team.league_rank() by a team of threads, for a
  /// model whose gradient runs on a team (model::gradient_team_size()): operator()(i)'s
  /// arithmetic, the vector updates and records by one thread of the team, the gradient
  /// by all of them (the leapfrog steps of leapfrog_step, in its order).
  KOKKOS_INLINE_FUNCTION void operator()(const TeamMember& team) const {
    const int i = team.league_rank();
    const rng::ParticleStream stream = step.stream(i);
    const EnsembleState& state = step.state;
    const Metric& metric = step.metric;
    const int dim = step.dim;
    const Row q = row(state.q, i), g = row(state.grad, i);
    const Row q0 = part(i, 0), g0 = part(i, 1), p = part(i, 2);
    Kokkos::single(Kokkos::PerTeam(team), [&]() { start(stream, q, g, q0, g0, p); });
    team.team_barrier();
    const int steps = steps_for(stream);
    const double h0 = -state.lp(i) + metric.kinetic(p);
    const double half = 0.5 * step.step_size;
    double lp1 = 0.0;
    for (int s = 0; s < steps; ++s) {
      Kokkos::single(Kokkos::PerTeam(team), [&]() {
        for (int j = 0; j < dim; ++j) p(j) += half * g(j);
        metric.drift(q, p, step.step_size);
      });
      team.team_barrier();
      lp1 = model::log_density_gradient(model, team, q, g, state.scratch(i));
      Kokkos::single(Kokkos::PerTeam(team), [&]() {
        for (int j = 0; j < dim; ++j) p(j) += half * g(j);
      });
      team.team_barrier();
      if (!math::isfinite(lp1)) break;
    }
    const Verdict v = judge(stream, lp1, h0, metric.kinetic(p));
    Kokkos::single(Kokkos::PerTeam(team), [&]() { finish(i, v, lp1, q, g, q0, g0, p, steps); });
  }

  /// \brief The records of particle i's transition; `q` is its position after the test
  /// (state.lp(i) its log density).
  template <class R>
  KOKKOS_INLINE_FUNCTION void record(int i, const Verdict& v, int steps, const R& q) const {
    step.tally(i, v.accept_prob, v.diverged, steps);
    step.record_params(model, i, q);
    step.record_stat(i, kLp, step.state.lp(i));
    step.record_stat(i, kAccept, v.accept_prob);
    step.record_stat(i, kStepSize, step.step_size);
    step.record_stat(i, kSteps, steps);
    step.record_stat(i, kDiverging, v.diverged ? 1.0 : 0.0);
    step.record_stat(i, kEnergy, v.energy);
  }

  /// \brief The transitions of the particles of task `task` (lane_task_size() each) in
  /// the lanes (lanes.hpp), sorted by their step counts (sorted_lane_blocks); host only.
  void lanes(const int task) const {
    if constexpr (lanes_available<Model>()) {
      const int n = static_cast<int>(step.state.lp.extent(0));
      const int size = lane_task_size(n);
      const int first = task * size;
      const int count = (n - first < size ? n - first : size);
      sorted_lane_blocks<kLaneTask>(
          first, count, step.iteration, kUseJitter, kUseAccept, opts.jitter, [this](int i) { return step.stream(i); },
          [this](double u) { return opts.jitter ? jittered_steps(u) : opts.leapfrog_steps; },
          [this](const int* particle, const int* steps, const Pack& u_accept, int m) {
            block(particle, steps, u_accept, m);
          });
    }
  }

 private:
  /// The transitions of kLanes particles in lock step: particle[l] in lane l, which takes
  /// steps[l] leapfrog steps and u_accept[l] as its Metropolis uniform; the first m lanes
  /// are recorded (the others are padding).
  void block(const int* particle, const int* steps, const Pack& u_accept, int m) const {
    if constexpr (lanes_available<Model>()) {
      constexpr int W = kLanes;
      const int dim = step.dim;
      Pack q[kMaxLaneDim], p[kMaxLaneDim], g[kMaxLaneDim];
      Pack lp, h0;
      bool finite[W];
      for (int j = 0; j < dim; ++j) {
        for (int l = 0; l < W; ++l) {
          q[j][l] = step.state.q(particle[l], j);
          g[j][l] = step.state.grad(particle[l], j);
        }
      }
      rng::ParticleStream streams[W];
      for (int l = 0; l < W; ++l) streams[l] = step.stream(particle[l]);
      lane_momenta(streams, step.iteration, dim, p);
      for (int l = 0; l < W; ++l) step.metric.momentum_from_normals(LaneRow{p, l}, math::sqrt(step.temperature));
      const Pack k0 = step.metric.kinetic(PackRow{p});
      int longest = 0;
      for (int l = 0; l < W; ++l) {
        longest = steps[l] > longest ? steps[l] : longest;
        lp[l] = step.state.lp(particle[l]);
        finite[l] = true;
      }
      h0 = -lp + k0;

      const LaneGradient<Model> gradient{model};
      for (int s = 0; s < longest; ++s) {
        // A lane moves while its trajectory goes on and its log density is finite; the
        // others take a step of size 0.
        Pack eps;
        int running = 0;
        for (int l = 0; l < W; ++l) {
          const bool moves = s < steps[l] && finite[l];
          eps[l] = moves ? step.step_size : 0.0;
          running += moves;
        }
        if (running == 0) break;
        const Pack lpn = leapfrog_step(PackRow{q}, PackRow{p}, PackRow{g}, step.metric, dim, eps, gradient);
        for (int l = 0; l < W; ++l) {
          if (eps[l] == 0.0) continue;
          lp[l] = lpn[l];
          finite[l] = math::isfinite(lpn[l]);
        }
      }

      // The Metropolis tests of all lanes: energies and exp(-ΔH / T) as vector operations.
      const Pack k1 = step.metric.kinetic(PackRow{p});
      Pack delta;
      HMC_LANES_LOOP delta[l] = energy_error(lp[l], h0[l], k1[l]);
      const Pack exp_delta = math::exp(-delta / step.temperature);
      for (int l = 0; l < m; ++l) {
        const Verdict v = verdict(delta[l], exp_delta[l], u_accept[l], -lp[l] + k1[l], h0[l]);
        finish_lane(particle[l], v, LaneRow{q, l}, LaneRow{g, l}, LaneRow{p, l}, lp[l], steps[l]);
      }
    }
  }

  /// The records of particle i after its Metropolis test v: its trajectory ended at (q,
  /// grad, p) with log density lp1; the start point is still in the state.
  void finish_lane(int i, const Verdict& v, const LaneRow& q, const LaneRow& grad, const LaneRow& p, double lp1,
                   int steps) const {
    const Row q0 = row(step.state.q, i);
    record_chees(i, v.accept_prob, q, q0, p, steps);
    if (v.accepted) {
      step.state.lp(i) = lp1;
      const Row g0 = row(step.state.grad, i);
      for (int j = 0; j < step.dim; ++j) {
        q0(j) = q(j);
        g0(j) = grad(j);
      }
    }
    record(i, v, steps, q0);
  }
};

}  // namespace hmc::sampler
