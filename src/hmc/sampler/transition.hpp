#pragma once
/// \file
/// \brief One HMC transition for every particle of a rank, in one kernel launch.

#include "hmc/core/philox.hpp"
#include "hmc/core/types.hpp"
#include "hmc/sampler/leapfrog.hpp"
#include "hmc/sampler/metric.hpp"

#include <cstdint>

namespace hmc::sampler {

/// An energy error above this marks the transition divergent (and rejects it).
inline constexpr double kDivergenceThreshold = 1000.0;
/// Random-number uses within an iteration beyond the momentum pairs.
inline constexpr std::uint32_t kUseJitter = 0xFFFFFFFEu;

/// \brief The state of a rank's particles: positions, gradients, log densities,
/// and scratch for the transition. All Views are [local particle][dim].
struct EnsembleState {
  StateView q, grad;                 ///< current position and ∇ log p there
  ParticleView lp;                   ///< log p(q), Jacobian included
  StateView q_start, grad_start, p;  ///< scratch: start of the trajectory, momentum
  StateView work;                    ///< the model's per-particle working memory (model::scratch_size)

  EnsembleState() = default;
  EnsembleState(int n, int dim, int scratch = 0)
      : q("hmc::q", n, dim),
        grad("hmc::grad", n, dim),
        lp("hmc::lp", n),
        q_start("hmc::q_start", n, dim),
        grad_start("hmc::grad_start", n, dim),
        p("hmc::p", n, dim),
        work("hmc::model_scratch", scratch > 0 ? n : 0, scratch) {}

  KOKKOS_INLINE_FUNCTION Row scratch(int i) const { return work.extent(1) > 0 ? row(work, i) : Row{nullptr, 0}; }
};

/// \brief Per-transition outputs, and where to record a draw.
struct TransitionRecord {
  ParticleView accept_prob;  ///< Metropolis acceptance probability of the last transition
  ParticleView accept_sum;   ///< running sum of accept_prob over counted iterations
  ParticleView divergences;  ///< running count of divergences over counted iterations
  ParticleView steps_sum;    ///< leapfrog steps taken, all iterations (gradient evaluations)
  StateView stats;           ///< [particle][2]: a_i and a_i × ChEES gradient_i, for the warmup's reductions
  DrawView draws;            ///< [particle][slot][param], constrained values
  DrawStatView draw_lp, draw_accept, draw_divergent, draw_steps, draw_energy;
};

/// \brief Gaussian momentum refresh, L leapfrog steps, Metropolis accept.
///
/// The ensemble samples exp(-H/T) with H = -log p(q) + ½ pᵀ Σ p, so momenta are
/// drawn from N(0, T·Σ⁻¹) and a move is accepted with probability min(1, exp(-ΔH/T));
/// the positions then follow p(q)^(1/T). With `jitter`, the number of steps is
/// ceil(u · length / ε) for u uniform in (0, 1], drawn per particle and iteration.
template <class Model>
struct HmcTransition {
  Model model;
  EnsembleState state;
  TransitionRecord record;
  Metric metric;
  int dim;
  double step_size;
  int leapfrog_steps;  ///< without jitter
  bool jitter;         ///< ChEES: jittered steps for a trajectory of length `length`
  double length;
  int max_steps;
  double temperature;
  std::uint64_t seed;
  std::int64_t first_particle;  ///< global id of local particle 0
  std::uint32_t iteration;      ///< 1-based; 0 is the initialisation
  bool count;                   ///< add to accept_sum / divergences
  int slot;                     ///< draw slot to record into, or -1
  VectorView centre;            ///< ensemble mean of q, when the ChEES gradient is wanted (else empty)

  KOKKOS_INLINE_FUNCTION int steps_for(const rng::ParticleStream& stream) const {
    if (!jitter) return leapfrog_steps;
    double u, unused;
    stream.uniform2(iteration, kUseJitter, u, unused);
    const double n = math::ceil((1.0 - u) * length / step_size);                 // 1 - u lies in (0, 1]
    return !(n >= 1.0) ? 1 : (n > max_steps ? max_steps : static_cast<int>(n));  // NaN: 1
  }

  /// Acceptance-weighted ChEES gradient term t · δ · (q' - q̄)ᵀ W Σ p' with
  /// δ = |q' - q̄|²_W - |q - q̄|²_W and W = diag(Σ)⁻¹ (Hoffman, Radul & Sountsov 2021).
  template <class RE, class RB, class RP>
  KOKKOS_INLINE_FUNCTION double chees_term(const RE& q_end, const RB& q_begin, const RP& p_end, double t) const {
    double after = 0.0, before = 0.0, dot = 0.0;
    for (int j = 0; j < dim; ++j) {
      const double w = 1.0 / (metric.dense ? metric.full(j, j) : metric.diag(j));
      const double a = q_end(j) - centre(j), b = q_begin(j) - centre(j);
      after += w * a * a;
      before += w * b * b;
      dot += w * a * metric.velocity(p_end, j);
    }
    const double g = t * (after - before) * dot;
    return math::isfinite(g) ? g : 0.0;
  }

  KOKKOS_INLINE_FUNCTION void operator()(const int i) const {
    const rng::ParticleStream stream(seed, static_cast<std::uint64_t>(first_particle + i));
    const Row q = row(state.q, i), g = row(state.grad, i), p = row(state.p, i);
    const Row q0 = row(state.q_start, i), g0 = row(state.grad_start, i);

    for (int j = 0; j < dim; ++j) {
      q0(j) = q(j);
      g0(j) = g(j);
    }
    for (int j = 0; j < dim; j += 2) {
      double z0, z1;
      stream.normal2(iteration, static_cast<std::uint32_t>(j / 2), z0, z1);
      p(j) = z0;
      if (j + 1 < dim) p(j + 1) = z1;
    }
    metric.momentum_from_normals(p, math::sqrt(temperature));

    const int steps = steps_for(stream);
    const double lp0 = state.lp(i);
    const double h0 = -lp0 + metric.kinetic(p);
    const double lp1 = leapfrog(model, q, p, g, state.scratch(i), metric, dim, step_size, steps);
    const Verdict v = judge(stream, lp1, h0, metric.kinetic(p));
    record.stats(i, 0) = v.accept_prob;
    record.stats(i, 1) =
        (centre.extent(0) > 0 && v.accept_prob > 0.0) ? v.accept_prob * chees_term(q, q0, p, steps * step_size) : 0.0;
    if (v.accepted) {
      state.lp(i) = lp1;
    } else {
      for (int j = 0; j < dim; ++j) {
        q(j) = q0(j);
        g(j) = g0(j);
      }
    }
    record_transition(i, v, steps, q);
  }

  /// \brief The Metropolis test of a trajectory from energy h0 to log density lp1 with
  /// kinetic energy k1 at its end.
  struct Verdict {
    double accept_prob;
    bool diverged, accepted;
    double energy;  ///< H of the state kept
  };
  KOKKOS_INLINE_FUNCTION Verdict judge(const rng::ParticleStream& stream, double lp1, double h0, double k1) const {
    const double h1 = -lp1 + k1;
    // A non-finite end point (log density -inf, +inf or NaN) is a divergence.
    double delta = h1 - h0;
    if (!math::isfinite(lp1) || math::isnan(delta)) delta = math::infinity();
    const bool diverged = delta > kDivergenceThreshold;
    const double a = diverged ? 0.0 : (delta <= 0.0 ? 1.0 : math::exp(-delta / temperature));
    double u, unused;
    stream.uniform2(iteration, rng::ParticleStream::kUseAccept, u, unused);
    const bool accepted = u < a;
    return {a, diverged, accepted, accepted ? h1 : h0};
  }

  /// \brief The records of particle i's transition; `q` is its position after the test
  /// (state.lp(i) its log density).
  KOKKOS_INLINE_FUNCTION void record_transition(int i, const Verdict& v, int steps, const Row& q) const {
    record.accept_prob(i) = v.accept_prob;
    record.steps_sum(i) += steps;
    if (count) {
      record.accept_sum(i) += v.accept_prob;
      record.divergences(i) += v.diverged ? 1.0 : 0.0;
    }
    if (slot >= 0) {
      model.constrain(q, Row{&record.draws(i, slot, 0), 1});
      record.draw_lp(i, slot) = state.lp(i);
      record.draw_accept(i, slot) = v.accept_prob;
      record.draw_divergent(i, slot) = v.diverged ? 1.0 : 0.0;
      record.draw_steps(i, slot) = steps;
      record.draw_energy(i, slot) = v.energy;
    }
  }
};

/// \brief Initial positions, a function of (seed, global particle id) alone:
/// uniform in (-radius, radius) on the unconstrained scale around `centre` (zero, or
/// the user's values), or a draw from the model's prior. A particle whose log density
/// is not finite is re-drawn, up to `attempts` times; the reduction counts those that
/// never found one.
template <class Model>
struct InitParticles {
  Model model;
  EnsembleState state;
  int dim;
  double radius;
  VectorView centre;
  bool prior;
  int attempts;
  std::uint64_t seed;
  std::int64_t first_particle;

  KOKKOS_INLINE_FUNCTION void operator()(const int i, int& failed) const {
    const rng::ParticleStream stream(seed, static_cast<std::uint64_t>(first_particle + i));
    const Row q = row(state.q, i);
    const auto pairs = static_cast<std::uint32_t>((dim + 1) / 2);
    for (int attempt = 0; attempt < attempts; ++attempt) {
      if (prior) {
        // 2^20 uses per attempt: room for many gamma draws (256 uses each).
        model::sample_prior(model, stream, static_cast<std::uint32_t>(attempt) << 20, q);
      } else {
        for (int j = 0; j < dim; j += 2) {
          double u0, u1;
          stream.uniform2(0, static_cast<std::uint32_t>(attempt) * pairs + static_cast<std::uint32_t>(j / 2), u0, u1);
          q(j) = centre(j) + radius * (2.0 * u0 - 1.0);
          if (j + 1 < dim) q(j + 1) = centre(j + 1) + radius * (2.0 * u1 - 1.0);
        }
      }
      state.lp(i) = model::log_density_gradient(model, q, row(state.grad, i), state.scratch(i));
      if (math::isfinite(state.lp(i))) return;
    }
    ++failed;
  }
};

}  // namespace hmc::sampler
