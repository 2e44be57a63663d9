#pragma once
/// \file
/// \brief One HMC transition for every particle of a rank, in one kernel launch.

#include "hmc/core/philox.hpp"
#include "hmc/core/types.hpp"
#include "hmc/sampler/leapfrog.hpp"

#include <cstdint>

namespace hmc::sampler {

/// An energy error above this marks the transition divergent (and rejects it).
inline constexpr double kDivergenceThreshold = 1000.0;

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
};

/// \brief Per-transition outputs of one iteration, and where to record a draw.
struct TransitionRecord {
  ParticleView accept_prob;  ///< Metropolis acceptance probability of the last transition
  ParticleView divergent;    ///< 1 if the last transition diverged
  ParticleView accept_sum;   ///< running sum of accept_prob over counted iterations
  ParticleView divergences;  ///< running count of divergences over counted iterations
  DrawView draws;            ///< [particle][slot][param], constrained values
  DrawStatView draw_lp, draw_accept, draw_divergent;
};

/// \brief Gaussian momentum refresh, L leapfrog steps, Metropolis accept.
///
/// The ensemble samples exp(-H/T) with H = -log p(q) + ½ pᵀ M⁻¹ p, so momenta are
/// drawn from N(0, T·M) and a move is accepted with probability min(1, exp(-ΔH/T));
/// the positions then follow p(q)^(1/T).
template <class Model>
struct HmcTransition {
  Model model;
  EnsembleState state;
  TransitionRecord record;
  VectorView inv_mass;
  int dim;
  double step_size;
  int leapfrog_steps;
  double temperature;
  std::uint64_t seed;
  std::int64_t first_particle;  ///< global id of local particle 0
  std::uint32_t iteration;      ///< 1-based; 0 is the initialisation
  bool count;                   ///< add to accept_sum / divergences
  int slot;                     ///< draw slot to record into, or -1

  KOKKOS_INLINE_FUNCTION Row scratch_row(int i) const {
    return state.work.extent(1) > 0 ? row(state.work, i) : Row{nullptr, 0};
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
      p(j) = z0 * math::sqrt(temperature / inv_mass(j));
      if (j + 1 < dim) p(j + 1) = z1 * math::sqrt(temperature / inv_mass(j + 1));
    }

    const double lp0 = state.lp(i);
    const double h0 = -lp0 + kinetic_energy(p, inv_mass, dim);
    const double lp1 = leapfrog(model, q, p, g, scratch_row(i), inv_mass, dim, step_size, leapfrog_steps);
    const double h1 = -lp1 + kinetic_energy(p, inv_mass, dim);
    // A non-finite end point (log density -inf, +inf or NaN) is a divergence.
    double delta = h1 - h0;
    if (!math::isfinite(lp1) || math::isnan(delta)) delta = math::infinity();

    const bool diverged = delta > kDivergenceThreshold;
    const double a = diverged ? 0.0 : (delta <= 0.0 ? 1.0 : math::exp(-delta / temperature));
    double u, unused;
    stream.uniform2(iteration, rng::ParticleStream::kUseAccept, u, unused);
    if (u < a) {
      state.lp(i) = lp1;
    } else {
      for (int j = 0; j < dim; ++j) {
        q(j) = q0(j);
        g(j) = g0(j);
      }
    }

    record.accept_prob(i) = a;
    record.divergent(i) = diverged ? 1.0 : 0.0;
    if (count) {
      record.accept_sum(i) += a;
      record.divergences(i) += diverged ? 1.0 : 0.0;
    }
    if (slot >= 0) {
      model.constrain(q, Row{&record.draws(i, slot, 0), 1});
      record.draw_lp(i, slot) = state.lp(i);
      record.draw_accept(i, slot) = a;
      record.draw_divergent(i, slot) = diverged ? 1.0 : 0.0;
    }
  }
};

/// \brief Initial positions: uniform in (-radius, radius) on the unconstrained scale,
/// a function of (seed, global particle id) alone; then log p and its gradient there.
template <class Model>
struct InitUniform {
  Model model;
  EnsembleState state;
  int dim;
  double radius;
  std::uint64_t seed;
  std::int64_t first_particle;

  KOKKOS_INLINE_FUNCTION void operator()(const int i, int& non_finite) const {
    const rng::ParticleStream stream(seed, static_cast<std::uint64_t>(first_particle + i));
    const Row q = row(state.q, i);
    for (int j = 0; j < dim; j += 2) {
      double u0, u1;
      stream.uniform2(0, static_cast<std::uint32_t>(j / 2), u0, u1);
      q(j) = radius * (2.0 * u0 - 1.0);
      if (j + 1 < dim) q(j + 1) = radius * (2.0 * u1 - 1.0);
    }
    const Row scratch = state.work.extent(1) > 0 ? row(state.work, i) : Row{nullptr, 0};
    state.lp(i) = model::log_density_gradient(model, q, row(state.grad, i), scratch);
    if (!math::isfinite(state.lp(i))) ++non_finite;
  }
};

}  // namespace hmc::sampler
