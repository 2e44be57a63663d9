#pragma once
/// \file
/// \brief The isokinetic (ESH) dynamics of microcanonical HMC, written once for the MAMS kernel's
/// paths (one particle per thread, and the host's lanes), as leapfrog.hpp is for HMC's: the
/// velocity update, the McLachlan integrator step, and the jittered step counts.
///
/// The velocity u is a unit vector of the whitened coordinates y = L⁻¹ q (Σ = L Lᵀ the metric):
/// positions move as q' = q + t L u, and the gradient of log p enters as Lᵀ ∇ (metric.hpp's
/// move and whiten_gradient).

#include "hmc/core/types.hpp"
#include "hmc/sampler/metric.hpp"

#include <type_traits>

namespace hmc::sampler {

/// McLachlan's minimal-error two-stage integrator (b1, ½, 1 - 2 b1, ½, b1): velocity
/// updates with coefficients b1, b2, b1 around two half drifts (BlackJAX's `isokinetic_mclachlan`).
inline constexpr double kMcLachlanB1 = 0.1931833275037836;
inline constexpr double kMcLachlanB2 = 1.0 - 2.0 * kMcLachlanB1;

/// \brief s such that ceil(u · s), u uniform in (0, 1], has mean `mean` (>= 1): BlackJAX's
/// `rescale` of adjusted MCLMC's jittered step counts.
KOKKOS_INLINE_FUNCTION double jitter_scale(double mean) {
  if (!(mean >= 1.0)) return 1.0;
  if (mean > 1e9) mean = 1e9;  // far beyond any step cap, and an exact floor below
  const double k = static_cast<double>(static_cast<long long>(2.0 * mean - 1.0));
  return k + k * (mean - 0.5 * (k + 1.0)) / (k + 1.0 - mean);
}

/// \brief The ESH velocity update (Steeg & Galstyan 2021; the isokinetic kick of MCLMC) of the unit
/// velocity u by the whitened gradient of log p / T over a time eps. `w` is scratch (dim values):
/// it receives Lᵀ ∇ log p. Returns the kinetic energy change ΔK. V: Row with eps a double, or
/// PackRow with eps a double or a Pack (0 in a lane that does not move: its ΔK is exactly 0). In one
/// dimension the speed is all there is: u stays ±1 and ΔK is 0.
template <class V, class T>
KOKKOS_INLINE_FUNCTION auto esh_kick(const V& u, const V& grad, const V& w, const Metric& metric, int dim, const T& eps,
                                     double inv_temperature) {
  using N = std::decay_t<decltype(u(0))>;
  if (dim < 2) return N(0.0);
  metric.whiten_gradient(grad, w);
  N norm2 = 0.0, dot = 0.0;
  for (int j = 0; j < dim; ++j) {
    norm2 += w(j) * w(j);
    dot += u(j) * w(j);
  }
  // 1e-300 keeps a zero gradient finite (no kick, ΔK = 0) and changes no other norm.
  const N norm = math::sqrt(norm2 + 1e-300);
  const N ue = dot / norm;  // u · e, e = w / |w|
  const N delta = eps * (inv_temperature * norm) / (dim - 1);
  const N zeta = math::exp(-delta);
  const N a = (1.0 - zeta) * (1.0 + zeta + ue * (1.0 - zeta)) / norm, b = 2.0 * zeta;
  N length2 = 0.0;
  for (int j = 0; j < dim; ++j) {
    u(j) = a * w(j) + b * u(j);
    length2 += u(j) * u(j);
  }
  const N inv_length = 1.0 / math::sqrt(length2);
  for (int j = 0; j < dim; ++j) u(j) *= inv_length;
  return N((dim - 1) * (delta - 0.6931471805599453 + math::log((1.0 + ue) * (1.0 - zeta * zeta) + 2.0 * zeta * zeta)));
}

/// \brief One McLachlan step of the isokinetic dynamics: kick b1 ε, drift ε/2, gradient, kick b2 ε,
/// drift ε/2, gradient, kick b1 ε. On entry `grad` holds ∇ log p(q); `gradient(q, grad)` writes it at
/// the new q and returns log p. Adds the kinetic energy change to dk and returns log p at the end
/// (where the first half ends at a non-finite log density, that one: the caller rejects it).
template <class V, class T, class N, class Gradient>
KOKKOS_INLINE_FUNCTION auto mclachlan_step(const V& q, const V& u, const V& grad, const V& w, const Metric& metric,
                                           int dim, const T& eps, double inv_temperature, N& dk,
                                           const Gradient& gradient) {
  const T half = 0.5 * eps;
  dk += esh_kick(u, grad, w, metric, dim, T(kMcLachlanB1 * eps), inv_temperature);
  metric.move(q, u, half);
  gradient(q, grad);
  dk += esh_kick(u, grad, w, metric, dim, T(kMcLachlanB2 * eps), inv_temperature);
  metric.move(q, u, half);
  const auto lp = gradient(q, grad);
  dk += esh_kick(u, grad, w, metric, dim, T(kMcLachlanB1 * eps), inv_temperature);
  return lp;
}

/// \brief One velocity-Verlet (leapfrog) step of the isokinetic dynamics: kick ε/2, drift ε, gradient,
/// kick ε/2. One gradient a step; mclachlan_step's conventions.
template <class V, class T, class N, class Gradient>
KOKKOS_INLINE_FUNCTION auto isokinetic_leapfrog_step(const V& q, const V& u, const V& grad, const V& w,
                                                     const Metric& metric, int dim, const T& eps,
                                                     double inv_temperature, N& dk, const Gradient& gradient) {
  const T half = 0.5 * eps;
  dk += esh_kick(u, grad, w, metric, dim, half, inv_temperature);
  metric.move(q, u, eps);
  const auto lp = gradient(q, grad);
  dk += esh_kick(u, grad, w, metric, dim, half, inv_temperature);
  return lp;
}

}  // namespace hmc::sampler
