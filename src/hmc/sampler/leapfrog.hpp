#pragma once
/// \file
/// \brief The leapfrog (Störmer-Verlet) integrator: one step, written once for every
/// kernel and both paths (one particle per thread, and the host's lanes).

#include "hmc/core/types.hpp"
#include "hmc/model/concept.hpp"
#include "hmc/sampler/metric.hpp"

namespace hmc::sampler {

/// \brief One leapfrog step of size `eps` for H(q, p) = -log p(q) + ½ pᵀ Σ p: half a
/// kick, a drift, the gradient, half a kick. Returns log p at the new q.
///
/// V is a vector of doubles (Row; eps a double) or of Packs (PackRow: kLanes particles,
/// one lane each; eps a double or a Pack, which may be 0 in a lane that does not move:
/// with a finite p and gradient, such a lane keeps its q, p and gradient exactly).
/// On entry `grad` holds ∇ log p(q); `gradient(q, grad)` writes ∇ log p at q into grad
/// and returns log p. A non-finite log density leaves p and grad meaningless: every
/// caller rejects such a point.
template <class V, class T, class Gradient>
KOKKOS_INLINE_FUNCTION auto leapfrog_step(const V& q, const V& p, const V& grad, const Metric& metric, int dim,
                                          const T& eps, const Gradient& gradient) {
  const T half = 0.5 * eps;
  for (int j = 0; j < dim; ++j) p(j) += half * grad(j);
  metric.drift(q, p, eps);
  const auto lp = gradient(q, grad);
  for (int j = 0; j < dim; ++j) p(j) += half * grad(j);
  return lp;
}

/// \brief The model's log density and gradient at a Row (scratch: the particle's
/// working memory for models that need it, model::scratch_size).
template <class Model>
struct RowGradient {
  const Model& model;
  Row scratch;
  KOKKOS_INLINE_FUNCTION double operator()(const Row& q, const Row& grad) const {
    return model::log_density_gradient(model, q, grad, scratch);
  }
};

/// \brief `steps` leapfrog steps; returns log p(q) at the end. On entry `grad` holds
/// ∇ log p(q); on exit q, p and grad are advanced. A non-finite log density stops the
/// trajectory early: the caller rejects it as divergent.
template <class Model>
KOKKOS_INLINE_FUNCTION double leapfrog(const Model& model, const Row& q, const Row& p, const Row& grad,
                                       const Row& scratch, const Metric& metric, int dim, double eps, int steps) {
  const RowGradient<Model> gradient{model, scratch};
  double lp = 0.0;
  for (int s = 0; s < steps; ++s) {
    lp = leapfrog_step(q, p, grad, metric, dim, eps, gradient);
    if (!math::isfinite(lp)) return lp;
  }
  return lp;
}

/// \brief Leapfrog with a diagonal metric and no model scratch (tests, simple callers).
template <class Model>
KOKKOS_INLINE_FUNCTION double leapfrog(const Model& model, const Row& q, const Row& p, const Row& grad,
                                       const VectorView& inv_mass, int dim, double eps, int steps) {
  return leapfrog(model, q, p, grad, Row{nullptr, 0}, Metric{dim, false, inv_mass, {}, {}}, dim, eps, steps);
}

}  // namespace hmc::sampler
