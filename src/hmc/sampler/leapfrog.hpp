#pragma once
/// \file
/// \brief The leapfrog (Störmer-Verlet) integrator, generic over the model.

#include "hmc/core/types.hpp"
#include "hmc/model/concept.hpp"
#include "hmc/sampler/metric.hpp"

namespace hmc::sampler {

/// \brief `steps` leapfrog steps of size `eps` for H(q, p) = -log p(q) + ½ pᵀ Σ p.
///
/// On entry `grad` holds ∇ log p(q); on exit q, p and grad are advanced and the
/// return value is log p(q) at the end. The gradient of the end point is kept, so
/// each step costs one gradient evaluation. A non-finite log density stops the
/// trajectory early: the caller rejects it as divergent anyway. `scratch` is the
/// particle's working memory for models that need it (model::scratch_size).
template <class Model>
KOKKOS_INLINE_FUNCTION double leapfrog(const Model& model, const Row& q, const Row& p, const Row& grad,
                                       const Row& scratch, const Metric& metric, int dim, double eps, int steps) {
  const double half = 0.5 * eps;
  double lp = 0.0;
  for (int s = 0; s < steps; ++s) {
    for (int j = 0; j < dim; ++j) p(j) += half * grad(j);
    metric.drift(q, p, eps);
    lp = model::log_density_gradient(model, q, grad, scratch);
    if (!math::isfinite(lp)) return lp;
    for (int j = 0; j < dim; ++j) p(j) += half * grad(j);
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
