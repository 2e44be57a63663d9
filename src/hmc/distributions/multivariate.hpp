#pragma once
/// \file
/// \brief Multivariate log densities: categorical, dirichlet, multi_normal_cholesky.
///
/// Vectors and matrices are any indexables: `theta(i)`, `L(i, j)` (a Kokkos View, hmc::Row,
/// hmc::PackRow, a lambda, ...), with their size K passed. The element types may be double,
/// Dual or Pack (mixed as for the univariate densities: promote_t). Their gradients are
/// vectors, so a `_grad` form returns the value and ADDS the partials into output indexables
/// (`d(i) += ...`); pass `dist::Ignore{}` for an output that is not wanted (`dist::ignore` on the host).

#include "hmc/distributions/special.hpp"
#include "hmc/distributions/value_grad.hpp"

namespace hmc::dist {

/// Largest K of multi_normal_cholesky_lpdf by default: its scratch (two vectors of K
/// numbers) lives on the stack. A larger K needs the template argument MaxK; K > MaxK gives NaN.
inline constexpr int kMultiNormalMaxK = 32;

namespace impl {

// ---- categorical(k | theta), k in 0..K-1, theta a simplex (not checked) ----------------------
// log θ_k. Propto drops nothing.

template <bool P, class R, class Theta>
KOKKOS_INLINE_FUNCTION R categorical_lpmf(int k, const Theta& theta, int K) {
  if (k < 0 || k >= K) return neg_inf();
  const R t = to<R>(theta(k));
  if (!(t >= 0.0)) return neg_inf();
  return math::log(t);
}
template <bool P, class R, class Theta, class DTheta>
KOKKOS_INLINE_FUNCTION R categorical_lpmf_grad(int k, const Theta& theta, int K, const DTheta& d_theta) {
  if (k < 0 || k >= K) return neg_inf();
  const R t = to<R>(theta(k));
  if (!(t >= 0.0)) return neg_inf();
  d_theta(k) += 1.0 / t;
  return math::log(t);
}

// ---- dirichlet(theta | alpha), theta_i > 0 (sum 1 not checked), alpha_i > 0 ---------------------
// lgamma(Σ α_i) - Σ lgamma(α_i) + Σ (α_i - 1) log θ_i. Propto drops nothing.

template <bool P, class R, class Theta, class Alpha>
KOKKOS_INLINE_FUNCTION R dirichlet_lpdf(const Theta& theta, const Alpha& alpha, int K) {
  R sum_alpha = 0.0, lp = 0.0;
  for (int i = 0; i < K; ++i) {
    const R a = to<R>(alpha(i));
    const R t = to<R>(theta(i));
    if (!(a > 0.0) || !(t > 0.0)) return neg_inf();
    sum_alpha += a;
    lp += (a - 1.0) * math::log(t) - dist::lgamma(a);
  }
  return lp + dist::lgamma(sum_alpha);
}
template <bool P, class R, class Theta, class Alpha, class DTheta, class DAlpha>
KOKKOS_INLINE_FUNCTION R dirichlet_lpdf_grad(const Theta& theta, const Alpha& alpha, int K, const DTheta& d_theta,
                                             const DAlpha& d_alpha) {
  R sum_alpha = 0.0;
  for (int i = 0; i < K; ++i) {
    const R a = to<R>(alpha(i));
    const R t = to<R>(theta(i));
    if (!(a > 0.0) || !(t > 0.0)) return neg_inf();
    sum_alpha += a;
  }
  const R psi_sum = dist::digamma(sum_alpha);
  R lp = 0.0;
  for (int i = 0; i < K; ++i) {
    const R a = to<R>(alpha(i));
    const R t = to<R>(theta(i));
    const R log_t = math::log(t);
    lp += (a - 1.0) * log_t - dist::lgamma(a);
    d_theta(i) += (a - 1.0) / t;
    d_alpha(i) += psi_sum - dist::digamma(a) + log_t;
  }
  return lp + dist::lgamma(sum_alpha);
}

// ---- multi_normal_cholesky(y | mu, L), L lower triangular with L_ii > 0, Σ = L Lᵀ ---------------
// -Σ log L_ii - 0.5 |z|² - K/2 log(2π), L z = y - mu. Propto drops -K/2 log(2π).
// Gradient: w = L⁻ᵀ z; ∂y = -w, ∂mu = w, ∂L_ij = w_i z_j - [i = j] / L_ii (j <= i).

/// The forward solve L z = y - mu (z[0..K-1]) and the log density; -inf for a diagonal
/// entry that is not > 0, NaN for K outside 0..MaxK.
template <bool P, int MaxK, class R, class Y, class Mu, class L>
KOKKOS_INLINE_FUNCTION R multi_normal_cholesky_solve(const Y& y, const Mu& mu, const L& chol, int K, R* z) {
  if (K < 0 || K > MaxK) return quiet_nan();
  R lp = 0.0;
  for (int i = 0; i < K; ++i) {
    R s = to<R>(y(i)) - to<R>(mu(i));
    for (int j = 0; j < i; ++j) s -= to<R>(chol(i, j)) * z[j];
    const R lii = to<R>(chol(i, i));
    if (!(lii > 0.0)) return neg_inf();
    z[i] = s / lii;
    lp -= math::log(lii) + 0.5 * z[i] * z[i];
  }
  if constexpr (!P) lp -= K * constants::log_sqrt_two_pi;
  return lp;
}

template <bool P, int MaxK, class R, class Y, class Mu, class L>
KOKKOS_INLINE_FUNCTION R multi_normal_cholesky_lpdf(const Y& y, const Mu& mu, const L& chol, int K) {
  R z[MaxK];
  return multi_normal_cholesky_solve<P, MaxK, R>(y, mu, chol, K, z);
}
template <bool P, int MaxK, class R, class Y, class Mu, class L, class DY, class DMu, class DL>
KOKKOS_INLINE_FUNCTION R multi_normal_cholesky_lpdf_grad(const Y& y, const Mu& mu, const L& chol, int K, const DY& d_y,
                                                         const DMu& d_mu, const DL& d_chol) {
  R z[MaxK];
  R w[MaxK];
  const R lp = multi_normal_cholesky_solve<P, MaxK, R>(y, mu, chol, K, z);
  if (!(lp > -math::infinity())) return lp;  // outside (-inf) or K out of range (NaN): no partials
  for (int i = K - 1; i >= 0; --i) {
    R s = z[i];
    for (int j = i + 1; j < K; ++j) s -= to<R>(chol(j, i)) * w[j];
    w[i] = s / to<R>(chol(i, i));
  }
  for (int i = 0; i < K; ++i) {
    d_y(i) -= w[i];
    d_mu(i) += w[i];
    for (int j = 0; j < i; ++j) d_chol(i, j) += w[i] * z[j];
    d_chol(i, i) += w[i] * z[i] - 1.0 / to<R>(chol(i, i));
  }
  return lp;
}

}  // namespace impl

// ---- public forms --------------------------------------------------------------------------

namespace detail {

/// The values of an indexable of Vars (or of anything else) as S.
template <class S, class V>
struct ValuesOf {
  const V& v;
  template <class... I>
  KOKKOS_INLINE_FUNCTION S operator()(I... i) const {
    return S(value_arg(v(i...)));
  }
};

/// An output indexable whose every element is *p.
template <class S>
struct OneOut {
  S* p;
  KOKKOS_INLINE_FUNCTION S& operator()(int) const { return *p; }
};

/// The tape of the first element of a vector (n) or lower triangle (n x n) that has a node.
template <class S, class V>
KOKKOS_INLINE_FUNCTION void find_vector_tape(const V& v, int n, ad::Tape<S>*& tape) {
  if constexpr (is_var_v<element_t<V, int>>) {
    for (int i = 0; i < n && tape == nullptr; ++i) {
      if (v(i).id >= 0) tape = v(i).tape;
    }
  } else {
    (void)v, (void)n, (void)tape;
  }
}
template <class S, class V>
KOKKOS_INLINE_FUNCTION void find_triangle_tape(const V& v, int n, ad::Tape<S>*& tape) {
  if constexpr (is_var_v<element_t<V, int, int>>) {
    for (int i = 0; i < n && tape == nullptr; ++i) {
      for (int j = 0; j <= i && tape == nullptr; ++j) {
        if (v(i, j).id >= 0) tape = v(i, j).tape;
      }
    }
  } else {
    (void)v, (void)n, (void)tape;
  }
}
}  // namespace detail

/// log θ_k, k in 0..K-1 (-infinity outside); theta(i) double, Dual or Pack.
template <bool Propto = false, class Theta>
KOKKOS_INLINE_FUNCTION promote_t<element_t<Theta, int>> categorical_lpmf(int k, const Theta& theta, int K);
template <bool Propto = false, class Theta, class DTheta>
KOKKOS_INLINE_FUNCTION promote_t<element_t<Theta, int>> categorical_lpmf_grad(int k, const Theta& theta, int K,
                                                                              const DTheta& d_theta);
template <bool Propto, class Theta>
KOKKOS_INLINE_FUNCTION promote_t<element_t<Theta, int>> categorical_lpmf(int k, const Theta& theta, int K) {
  using R = promote_t<element_t<Theta, int>>;
  if constexpr (is_var_v<R>) {
    // One node: an edge to theta(k).
    using S = typename R::scalar;
    S d(0.0);
    const S v = categorical_lpmf_grad<Propto>(k, detail::ValuesOf<S, Theta>{theta}, K, detail::OneOut<S>{&d});
    if (k < 0 || k >= K) return R(v);
    const R t = theta(k);
    return ad::record(v, t, d);
  } else if constexpr (is_pack_v<R>) {
    R r;
    for (int l = 0; l < kLanes; ++l) r[l] = impl::categorical_lpmf<Propto, double>(k, LaneIn<Theta>{theta, l}, K);
    return r;
  } else {
    return impl::categorical_lpmf<Propto, R>(k, theta, K);
  }
}
/// The value; adds ∂/∂θ_k = 1/θ_k into d_theta(k) (nothing outside the support).
template <bool Propto, class Theta, class DTheta>
KOKKOS_INLINE_FUNCTION promote_t<element_t<Theta, int>> categorical_lpmf_grad(int k, const Theta& theta, int K,
                                                                              const DTheta& d_theta) {
  using R = promote_t<element_t<Theta, int>>;
  if constexpr (is_pack_v<R>) {
    R r;
    for (int l = 0; l < kLanes; ++l) {
      r[l] = impl::categorical_lpmf_grad<Propto, double>(k, LaneIn<Theta>{theta, l}, K, LaneOut<DTheta>{d_theta, l});
    }
    return r;
  } else {
    return impl::categorical_lpmf_grad<Propto, R>(k, theta, K, d_theta);
  }
}

template <bool Propto = false, class Theta, class Alpha, class DTheta, class DAlpha>
KOKKOS_INLINE_FUNCTION promote_t<element_t<Theta, int>, element_t<Alpha, int>> dirichlet_lpdf_grad(
    const Theta& theta, const Alpha& alpha, int K, const DTheta& d_theta, const DAlpha& d_alpha);
template <bool Propto = false, int MaxK = kMultiNormalMaxK, class Y, class Mu, class L, class DY, class DMu, class DL>
KOKKOS_INLINE_FUNCTION promote_t<element_t<Y, int>, element_t<Mu, int>, element_t<L, int, int>>
multi_normal_cholesky_lpdf_grad(const Y& y, const Mu& mu, const L& chol, int K, const DY& d_y, const DMu& d_mu,
                                const DL& d_chol);

/// Dirichlet(theta | alpha) of K components.
template <bool Propto = false, class Theta, class Alpha>
KOKKOS_INLINE_FUNCTION promote_t<element_t<Theta, int>, element_t<Alpha, int>> dirichlet_lpdf(const Theta& theta,
                                                                                              const Alpha& alpha,
                                                                                              int K) {
  using R = promote_t<element_t<Theta, int>, element_t<Alpha, int>>;
  if constexpr (is_var_v<R>) {
    // One node: an edge to each theta(i), then to each alpha(i).
    using S = typename R::scalar;
    ad::Tape<S>* tape = nullptr;
    detail::find_vector_tape<S>(theta, K, tape);
    detail::find_vector_tape<S>(alpha, K, tape);
    detail::VectorNode<S> node(tape, 2 * K);
    for (int i = 0; i < K; ++i) {
      node.parent(i, detail::node_of(theta(i)));
      node.parent(K + i, detail::node_of(alpha(i)));
    }
    const S v = dirichlet_lpdf_grad<Propto>(
        detail::ValuesOf<S, Theta>{theta}, detail::ValuesOf<S, Alpha>{alpha}, K,
        [&](int i) -> S& { return node.partial(i); }, [&](int i) -> S& { return node.partial(K + i); });
    return node.result(v);
  } else if constexpr (is_pack_v<R>) {
    R r;
    for (int l = 0; l < kLanes; ++l) {
      r[l] = impl::dirichlet_lpdf<Propto, double>(LaneIn<Theta>{theta, l}, LaneIn<Alpha>{alpha, l}, K);
    }
    return r;
  } else {
    return impl::dirichlet_lpdf<Propto, R>(theta, alpha, K);
  }
}
/// The value; adds ∂/∂θ_i into d_theta(i) and ∂/∂α_i into d_alpha(i) (nothing outside the support).
template <bool Propto, class Theta, class Alpha, class DTheta, class DAlpha>
KOKKOS_INLINE_FUNCTION promote_t<element_t<Theta, int>, element_t<Alpha, int>> dirichlet_lpdf_grad(
    const Theta& theta, const Alpha& alpha, int K, const DTheta& d_theta, const DAlpha& d_alpha) {
  using R = promote_t<element_t<Theta, int>, element_t<Alpha, int>>;
  if constexpr (is_pack_v<R>) {
    R r;
    for (int l = 0; l < kLanes; ++l) {
      r[l] = impl::dirichlet_lpdf_grad<Propto, double>(LaneIn<Theta>{theta, l}, LaneIn<Alpha>{alpha, l}, K,
                                                       LaneOut<DTheta>{d_theta, l}, LaneOut<DAlpha>{d_alpha, l});
    }
    return r;
  } else {
    return impl::dirichlet_lpdf_grad<Propto, R>(theta, alpha, K, d_theta, d_alpha);
  }
}

/// MultiNormal(y | mu, L Lᵀ) of K components, L(i, j) (j <= i) the lower-triangular Cholesky
/// factor of the covariance (the upper triangle is not read). K <= MaxK (NaN above).
template <bool Propto = false, int MaxK = kMultiNormalMaxK, class Y, class Mu, class L>
KOKKOS_INLINE_FUNCTION promote_t<element_t<Y, int>, element_t<Mu, int>, element_t<L, int, int>>
multi_normal_cholesky_lpdf(const Y& y, const Mu& mu, const L& chol, int K) {
  using R = promote_t<element_t<Y, int>, element_t<Mu, int>, element_t<L, int, int>>;
  if constexpr (is_var_v<R>) {
    // One node: edges to y(i), mu(i), then L(i, j), j <= i, row by row.
    using S = typename R::scalar;
    ad::Tape<S>* tape = nullptr;
    detail::find_vector_tape<S>(y, K, tape);
    detail::find_vector_tape<S>(mu, K, tape);
    detail::find_triangle_tape<S>(chol, K, tape);
    detail::VectorNode<S> node(tape, 2 * K + K * (K + 1) / 2);
    for (int i = 0; i < K; ++i) {
      node.parent(i, detail::node_of(y(i)));
      node.parent(K + i, detail::node_of(mu(i)));
      for (int j = 0; j <= i; ++j) node.parent(2 * K + i * (i + 1) / 2 + j, detail::node_of(chol(i, j)));
    }
    const S v = multi_normal_cholesky_lpdf_grad<Propto, MaxK>(
        detail::ValuesOf<S, Y>{y}, detail::ValuesOf<S, Mu>{mu}, detail::ValuesOf<S, L>{chol}, K,
        [&](int i) -> S& { return node.partial(i); }, [&](int i) -> S& { return node.partial(K + i); },
        [&](int i, int j) -> S& { return node.partial(2 * K + i * (i + 1) / 2 + j); });
    return node.result(v);
  } else if constexpr (is_pack_v<R>) {
    R r;
    for (int l = 0; l < kLanes; ++l) {
      r[l] = impl::multi_normal_cholesky_lpdf<Propto, MaxK, double>(LaneIn<Y>{y, l}, LaneIn<Mu>{mu, l},
                                                                    LaneIn<L>{chol, l}, K);
    }
    return r;
  } else {
    return impl::multi_normal_cholesky_lpdf<Propto, MaxK, R>(y, mu, chol, K);
  }
}
/// The value; adds ∂/∂y_i into d_y(i), ∂/∂mu_i into d_mu(i) and ∂/∂L_ij into d_chol(i, j)
/// for j <= i (nothing outside the support).
template <bool Propto, int MaxK, class Y, class Mu, class L, class DY, class DMu, class DL>
KOKKOS_INLINE_FUNCTION promote_t<element_t<Y, int>, element_t<Mu, int>, element_t<L, int, int>>
multi_normal_cholesky_lpdf_grad(const Y& y, const Mu& mu, const L& chol, int K, const DY& d_y, const DMu& d_mu,
                                const DL& d_chol) {
  using R = promote_t<element_t<Y, int>, element_t<Mu, int>, element_t<L, int, int>>;
  if constexpr (is_pack_v<R>) {
    R r;
    for (int l = 0; l < kLanes; ++l) {
      r[l] = impl::multi_normal_cholesky_lpdf_grad<Propto, MaxK, double>(LaneIn<Y>{y, l}, LaneIn<Mu>{mu, l},
                                                                         LaneIn<L>{chol, l}, K, LaneOut<DY>{d_y, l},
                                                                         LaneOut<DMu>{d_mu, l}, LaneOut<DL>{d_chol, l});
    }
    return r;
  } else {
    return impl::multi_normal_cholesky_lpdf_grad<Propto, MaxK, R>(y, mu, chol, K, d_y, d_mu, d_chol);
  }
}

}  // namespace hmc::dist
