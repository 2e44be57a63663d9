#pragma once
/// \file
/// \brief The metric (inverse mass matrix) Σ of the kinetic energy ½ pᵀ Σ p.
///
/// Diagonal or dense. Momenta are drawn from N(0, T Σ⁻¹) and positions move with
/// velocity Σ p, so Σ ≈ Cov(q) makes every direction equally easy to integrate.

#include "hmc/core/types.hpp"

#include <type_traits>
#include <vector>

namespace hmc::sampler {

/// Its member functions take a Row, or any vector with operator()(int) -> double&
/// (the lane kernel's LaneRow).
struct Metric {
  int dim = 0;
  bool dense = false;
  VectorView diag;  ///< Σ_jj (used when !dense)
  MatrixView full;  ///< Σ (dense)
  MatrixView chol;  ///< lower L with Σ = L Lᵀ (dense)

  /// ½ pᵀ Σ p: a double for a vector of doubles, a Pack for a PackRow (each lane what the
  /// double code computes for it).
  template <class R = Row>
  KOKKOS_INLINE_FUNCTION auto kinetic(const R& p) const {
    using T = std::decay_t<decltype(p(0))>;
    T k = 0.0;
    if (!dense) {
      for (int j = 0; j < dim; ++j) k += p(j) * p(j) * diag(j);
    } else {
      for (int i = 0; i < dim; ++i) {
        T s = 0.0;
        for (int j = 0; j < dim; ++j) s += full(i, j) * p(j);
        k += p(i) * s;
      }
    }
    return T(0.5 * k);
  }

  /// q += eps Σ p. V is a vector of doubles (Row) with eps a double, or of Packs
  /// (PackRow, one lane per particle) with eps a double or a Pack (a step per lane).
  template <class V, class T>
  KOKKOS_INLINE_FUNCTION void drift(const V& q, const V& p, const T& eps) const {
    if (!dense) {
      for (int j = 0; j < dim; ++j) q(j) += eps * diag(j) * p(j);
    } else {
      for (int i = 0; i < dim; ++i) {
        auto s = full(i, 0) * p(0);
        for (int j = 1; j < dim; ++j) s += full(i, j) * p(j);
        q(i) += eps * s;
      }
    }
  }

  /// Turns independent standard normals in p into p ~ N(0, scale² Σ⁻¹).
  template <class R = Row>
  KOKKOS_INLINE_FUNCTION void momentum_from_normals(const R& p, double scale) const {
    if (!dense) {
      for (int j = 0; j < dim; ++j) p(j) *= scale / math::sqrt(diag(j));
    } else {
      // Solve Lᵀ p = z in place: Cov(L⁻ᵀ z) = (L Lᵀ)⁻¹ = Σ⁻¹.
      for (int i = dim - 1; i >= 0; --i) {
        double s = p(i);
        for (int k = i + 1; k < dim; ++k) s -= chol(k, i) * p(k);
        p(i) = s / chol(i, i);
      }
      for (int j = 0; j < dim; ++j) p(j) *= scale;
    }
  }

  /// out = Lᵀ g with Σ = L Lᵀ (diag: L = diag(sqrt(Σ_jj))): the gradient g of log p in the whitened
  /// coordinates y = L⁻¹ q, where Σ is the identity (MAMS's velocity update). V: Row or PackRow.
  template <class V>
  KOKKOS_INLINE_FUNCTION void whiten_gradient(const V& g, const V& out) const {
    if (!dense) {
      for (int j = 0; j < dim; ++j) out(j) = math::sqrt(diag(j)) * g(j);
    } else {
      for (int i = 0; i < dim; ++i) {
        auto s = chol(i, i) * g(i);
        for (int k = i + 1; k < dim; ++k) s += chol(k, i) * g(k);
        out(i) = s;
      }
    }
  }

  /// q += eps L u: a move along the whitened velocity u (MAMS's position update). V: Row with eps a
  /// double, or PackRow with eps a double or a Pack (0 in a lane that does not move: its q stays exactly).
  template <class V, class T>
  KOKKOS_INLINE_FUNCTION void move(const V& q, const V& u, const T& eps) const {
    if (!dense) {
      for (int j = 0; j < dim; ++j) q(j) += eps * (math::sqrt(diag(j)) * u(j));
    } else {
      for (int i = 0; i < dim; ++i) {
        auto s = chol(i, 0) * u(0);
        for (int k = 1; k <= i; ++k) s += chol(i, k) * u(k);
        q(i) += eps * s;
      }
    }
  }

  /// |L⁻¹ x|² = xᵀ Σ⁻¹ x (diag: Σ x_j² / Σ_jj). A dense metric overwrites x with L⁻¹ x (forward
  /// substitution in place: entry r of the solution replaces x(r) once x(r) has been read).
  template <class V>
  KOKKOS_INLINE_FUNCTION double whitened_norm2(const V& x) const {
    double s = 0.0;
    if (!dense) {
      for (int j = 0; j < dim; ++j) s += x(j) * x(j) / diag(j);
    } else {
      for (int r = 0; r < dim; ++r) {
        double t = x(r);
        for (int k = 0; k < r; ++k) t -= chol(r, k) * x(k);
        x(r) = t / chol(r, r);
        s += x(r) * x(r);
      }
    }
    return s;
  }

  /// (Σ p)_j, the velocity of coordinate j (a Pack for a PackRow).
  template <class R = Row>
  KOKKOS_INLINE_FUNCTION auto velocity(const R& p, int j) const {
    using T = std::decay_t<decltype(p(0))>;
    if (!dense) return T(diag(j) * p(j));
    T s = 0.0;
    for (int k = 0; k < dim; ++k) s += full(j, k) * p(k);
    return s;
  }
};

/// \brief The identity metric of dimension d.
Metric unit_metric(int dim);
/// \brief A diagonal metric with Σ_jj = variances[j].
Metric diagonal_metric(const std::vector<double>& variances);
/// \brief A dense metric Σ (row-major d×d, symmetric positive definite); throws
/// std::runtime_error if the Cholesky factorisation fails.
Metric dense_metric(const std::vector<double>& sigma, int dim);
/// \brief Σ back on the host: d values (diagonal) or d×d row-major (dense).
std::vector<double> metric_values(const Metric& m);

}  // namespace hmc::sampler
