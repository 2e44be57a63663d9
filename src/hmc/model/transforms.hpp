#pragma once
/// \file
/// \brief Constraint transforms: unconstrained y in R^n -> constrained x, with log|J|.
///
/// Each transform gives the forward map (y -> x), its inverse, log|det J| of the
/// forward map, the gradient of log|J| with respect to y, and (where x is a
/// vector) the chain rule that turns df/dx into df/dy. All are device-safe and
/// templated on the vector accessor V (anything with `operator()(int)`, e.g. hmc::Row)
/// and, for the scalar maps and the forward maps of simplex and ordered vectors, on the
/// number type T (double, hmc::Dual, hmc::Var): a templated `log_density_t` calls
/// `simplex_forward<T>(y, x, K)` with x a `transform::Local<T, K>` and gets log|J| as a T,
/// so its gradient comes from automatic differentiation (posteriordb's hmm_drive_0 example).
///
/// A model's log density on the unconstrained scale is
///   log p(x(y)) + log|J(y)|,
/// and its gradient is J^T ∇_x log p + ∇_y log|J|.

#include "hmc/core/kokkos_shim.hpp"
#include "hmc/core/pack.hpp"
#include "hmc/model/dual.hpp"

namespace hmc::transform {

/// N numbers of type T on the stack with `operator()(int)`: where a templated log density
/// keeps a constrained vector (e.g. a simplex) made by a forward map.
template <class T, int N>
struct Local {
  T v[N];
  KOKKOS_INLINE_FUNCTION T& operator()(int i) { return v[i]; }
  KOKKOS_INLINE_FUNCTION const T& operator()(int i) const { return v[i]; }
};

// ---- interval (a, b) via the logistic function ---------------------------------
// x = a + (b - a) σ(y),  log|J| = log(b - a) + log σ(y) + log σ(-y)

template <class T>
KOKKOS_INLINE_FUNCTION T interval_forward(const T& y, double a, double b) {
  using math::exp;
  return a + (b - a) / (1.0 + exp(-y));
}
KOKKOS_INLINE_FUNCTION double interval_inverse(double x, double a, double b) {
  const double u = (x - a) / (b - a);
  return math::log(u) - math::log1p(-u);
}
KOKKOS_INLINE_FUNCTION double interval_log_jacobian(double y, double a, double b) {
  return math::log(b - a) + math::log_sigmoid(y) + math::log_sigmoid(-y);
}
/// d log|J| / dy = 1 - 2σ(y)
template <class T>
KOKKOS_INLINE_FUNCTION T interval_log_jacobian_grad(const T& y) {
  return 1.0 - 2.0 * math::sigmoid(y);
}
/// dx/dy = (b - a) σ(y) σ(-y)
template <class T>
KOKKOS_INLINE_FUNCTION T interval_dx_dy(const T& y, double a, double b) {
  const T s = math::sigmoid(y);
  return (b - a) * s * (1.0 - s);
}

// ---- positive via exp (and lower bound a + exp(y)) ------------------------------
// x = exp(y), log|J| = y, d log|J|/dy = 1, dx/dy = x

template <class T>
KOKKOS_INLINE_FUNCTION T positive_forward(const T& y) {
  using math::exp;
  return exp(y);
}
KOKKOS_INLINE_FUNCTION double positive_inverse(double x) { return math::log(x); }
KOKKOS_INLINE_FUNCTION double positive_log_jacobian(double y) { return y; }
KOKKOS_INLINE_FUNCTION double positive_log_jacobian_grad(double) { return 1.0; }

// ---- simplex of K entries from K - 1 unconstrained values: stick-breaking -------
// As in Stan: z_k = σ(y_k - log(K - 1 - k)), x_k = r_k z_k with r_0 = 1 and
// r_{k+1} = r_k (1 - z_k), x_{K-1} = r_{K-1}. The offset makes y = 0 the uniform
// simplex. log|J| = Σ_k [log z_k + (K - 1 - k) log(1 - z_k)], k = 0..K-2.

/// Writes x(0..K-1) from y(0..K-2); returns log|J|. T is the number type of the result
/// (double unless given: `simplex_forward<T>(y, x, K)` in a templated log density).
template <class T = double, class VY, class VX>
KOKKOS_INLINE_FUNCTION T simplex_forward(const VY& y, VX&& x, int K) {
  using math::log_sigmoid;
  using math::sigmoid;
  T r = 1.0, log_j = 0.0;
  for (int k = 0; k < K - 1; ++k) {
    const T t = T(y(k)) - math::log(static_cast<double>(K - 1 - k));
    const T z = sigmoid(t);
    x(k) = r * z;
    log_j += log_sigmoid(t) + (K - 1 - k) * log_sigmoid(-t);
    r *= 1.0 - z;
  }
  x(K - 1) = r;
  return log_j;
}

/// y(0..K-2) from a simplex x(0..K-1) with positive entries.
template <class VX, class VY>
KOKKOS_INLINE_FUNCTION void simplex_inverse(const VX& x, const VY& y, int K) {
  double r = 1.0;
  for (int k = 0; k < K - 1; ++k) {
    const double z = x(k) / r;
    y(k) = math::log(z) - math::log1p(-z) + math::log(static_cast<double>(K - 1 - k));
    r -= x(k);
  }
}

/// Given the simplex x = simplex_forward(y) and g_x = d f / d x (K values), adds
/// d f / d y + d log|J| / d y to g_y (K - 1 values).
template <class VY, class VX, class VGX, class VGY>
KOKKOS_INLINE_FUNCTION void simplex_backward(const VY& y, const VX& x, const VGX& g_x, const VGY& g_y, int K) {
  // Walk the sticks backwards: r_k = r_{k+1} + x_k, with r_{K-1} = x_{K-1}.
  double r_next = x(K - 1), g_r_next = g_x(K - 1);
  for (int k = K - 2; k >= 0; --k) {
    const double t = y(k) - math::log(static_cast<double>(K - 1 - k));
    const double z = math::sigmoid(t);
    const double r = r_next + x(k);
    const double g_z = r * (g_x(k) - g_r_next);
    g_y(k) += g_z * z * (1.0 - z) + (1.0 - z) - (K - 1 - k) * z;
    g_r_next = g_x(k) * z + g_r_next * (1.0 - z);
    r_next = r;
  }
}

// ---- ordered vectors: x_0 = y_0, x_k = x_{k-1} + exp(y_k) -----------------------
// log|J| = Σ_{k>=1} y_k. Positive-ordered: x_0 = exp(y_0) as well, log|J| = Σ_k y_k.

/// Writes x(0..n-1); returns log|J|. T as for simplex_forward.
template <class T = double, class VY, class VX>
KOKKOS_INLINE_FUNCTION T ordered_forward(const VY& y, VX&& x, int n, bool positive = false) {
  using math::exp;
  T log_j = 0.0;
  for (int k = 0; k < n; ++k) {
    const T yk = y(k);
    if (k == 0 && !positive) {
      x(0) = yk;
    } else {
      const T step = exp(yk);
      x(k) = k == 0 ? step : T(x(k - 1)) + step;
      log_j += yk;
    }
  }
  return log_j;
}

template <class VX, class VY>
KOKKOS_INLINE_FUNCTION void ordered_inverse(const VX& x, const VY& y, int n, bool positive = false) {
  for (int k = 0; k < n; ++k) {
    if (k == 0 && !positive)
      y(0) = x(0);
    else
      y(k) = math::log(x(k) - (k == 0 ? 0.0 : x(k - 1)));
  }
}

/// Given x = ordered_forward(y) and g_x = d f / d x, adds d f / d y + d log|J| / d y to g_y.
/// Each x_k depends on y_j for j <= k, so d f / d y_j = (Σ_{k>=j} g_x(k)) dx_j/dy_j.
template <class VY, class VX, class VGX, class VGY>
KOKKOS_INLINE_FUNCTION void ordered_backward(const VY& y, const VX& /*x*/, const VGX& g_x, const VGY& g_y, int n,
                                             bool positive = false) {
  double tail = 0.0;
  for (int k = n - 1; k >= 0; --k) {
    tail += g_x(k);
    if (k == 0 && !positive) {
      g_y(0) += tail;
    } else {
      g_y(k) += tail * math::exp(y(k)) + 1.0;
    }
  }
}

}  // namespace hmc::transform
