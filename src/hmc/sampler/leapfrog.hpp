#pragma once
/// \file
/// \brief The leapfrog (Störmer-Verlet) integrator, generic over the model.

#include "hmc/core/types.hpp"
#include "hmc/model/concept.hpp"

namespace hmc::sampler {

/// \brief Kinetic energy ½ pᵀ M⁻¹ p for a diagonal inverse mass matrix.
KOKKOS_INLINE_FUNCTION double kinetic_energy(const Row& p, const VectorView& inv_mass, int dim) {
  double k = 0.0;
  for (int j = 0; j < dim; ++j) k += p(j) * p(j) * inv_mass(j);
  return 0.5 * k;
}

/// \brief `steps` leapfrog steps of size `eps` for H(q, p) = -log p(q) + ½ pᵀ M⁻¹ p.
///
/// On entry `grad` holds ∇ log p(q); on exit q, p and grad are advanced and the
/// return value is log p(q) at the end. The gradient of the end point is kept, so
/// each step costs one gradient evaluation. A non-finite log density stops the
/// trajectory early: the caller rejects it as divergent anyway.
/// `scratch` is the particle's working memory for models that need it (model::scratch_size).
template <class Model>
KOKKOS_INLINE_FUNCTION double leapfrog(const Model& model, const Row& q, const Row& p, const Row& grad,
                                       const Row& scratch, const VectorView& inv_mass, int dim, double eps, int steps) {
  const double half = 0.5 * eps;
  double lp = 0.0;
  for (int s = 0; s < steps; ++s) {
    for (int j = 0; j < dim; ++j) p(j) += half * grad(j);
    for (int j = 0; j < dim; ++j) q(j) += eps * inv_mass(j) * p(j);
    lp = model::log_density_gradient(model, q, grad, scratch);
    if (!math::isfinite(lp)) return lp;
    for (int j = 0; j < dim; ++j) p(j) += half * grad(j);
  }
  return lp;
}

/// \brief The same, for models that need no scratch memory.
template <class Model>
KOKKOS_INLINE_FUNCTION double leapfrog(const Model& model, const Row& q, const Row& p, const Row& grad,
                                       const VectorView& inv_mass, int dim, double eps, int steps) {
  return leapfrog(model, q, p, grad, Row{nullptr, 0}, inv_mass, dim, eps, steps);
}

}  // namespace hmc::sampler
