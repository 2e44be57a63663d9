#pragma once
/// \file
/// \brief Small dense linear algebra inside a log density, on every number type of hmc's
/// automatic differentiation: the squared-exponential covariance `gp_exp_quad_cov`, the
/// Cholesky factor `cholesky_decompose`, the lower-triangular product `multiply_lower_tri`
/// and the triangular solve `mdivide_left_tri_low`, as Stan has them.
///
/// T is double, hmc::Dual (forward mode), hmc::Var<double> or hmc::Var<Pack> (reverse mode,
/// hmc/model/reverse.hpp). The functions run on a GPU thread: they allocate nothing; the
/// caller owns the storage (a local array of T, kMax of them fixed at compile time) and passes
/// it through an accessor with `a(i, j)` (a matrix) or `v(i)` (a vector) returning a T&:
///
///   T cov[kMax * (kMax + 1) / 2];                 // the lower triangle, packed
///   const auto a = dist::lower_ref(cov);
///   dist::gp_exp_quad_cov(x, n, alpha, rho, 1e-10, a);
///   if (!dist::cholesky_decompose(a, n)) return T(-inf);   // not positive definite
///   dist::multiply_lower_tri(a, dist::slice(q, 2), dist::vector_ref(f), n);   // f = L z
///
/// Only entries with j <= i are read or written, so a packed lower triangle (`lower_ref`,
/// n(n+1)/2 entries) or a dense row-major array (`matrix_ref`) both serve.
///
/// **Cost.** On double and Dual, the usual flops: the Cholesky factor n^3/6 multiply-adds.
/// On Vars each entry of a result is ONE node of the tape whose edges carry the analytic
/// partials (its inner product is not recorded operation by operation): the covariance
/// n(n+1)/2 nodes of at most 2 edges; the Cholesky factor n(n+1)/2 nodes and about n^3/3
/// edges (entry (i, j) has 2j + 2); the product and the solve n nodes and about n^2 edges.
/// For n = 30 that is about 10^4 edges, a tape of ~0.2 MB per particle.

#include "hmc/core/pack.hpp"
#include "hmc/distributions/special.hpp"
#include "hmc/distributions/value_grad.hpp"

#include <type_traits>

namespace hmc::dist {

/// \brief A dense row-major matrix in caller-owned storage: `a(i, j)` is data[i * ld + j].
template <class T>
struct MatrixRef {
  T* data;
  int ld;
  KOKKOS_INLINE_FUNCTION T& operator()(int i, int j) const { return data[i * ld + j]; }
};
template <class T>
KOKKOS_INLINE_FUNCTION MatrixRef<T> matrix_ref(T* data, int ld) {
  return MatrixRef<T>{data, ld};
}

/// \brief A lower triangle packed by rows: `a(i, j)`, j <= i, is data[i (i + 1) / 2 + j]
/// (n(n+1)/2 entries for n rows).
template <class T>
struct LowerRef {
  T* data;
  KOKKOS_INLINE_FUNCTION T& operator()(int i, int j) const { return data[i * (i + 1) / 2 + j]; }
};
template <class T>
KOKKOS_INLINE_FUNCTION LowerRef<T> lower_ref(T* data) {
  return LowerRef<T>{data};
}

/// \brief A vector in caller-owned storage: `v(i)` is data[i].
template <class T>
struct VectorRef {
  T* data;
  KOKKOS_INLINE_FUNCTION T& operator()(int i) const { return data[i]; }
};
template <class T>
KOKKOS_INLINE_FUNCTION VectorRef<T> vector_ref(T* data) {
  return VectorRef<T>{data};
}

namespace detail {

/// The element type of a matrix or vector accessor.
template <class M>
using matrix_element_t = std::decay_t<decltype(std::declval<const M&>()(0, 0))>;
template <class V>
using vector_element_t = std::decay_t<decltype(std::declval<const V&>()(0))>;

/// Is a pivot positive: a value, a Dual's value; a Pack's in every lane.
KOKKOS_INLINE_FUNCTION bool all_positive(double x) { return x > 0.0; }
KOKKOS_INLINE_FUNCTION bool all_positive(const ad::Dual& x) { return x.value > 0.0; }
HMC_PACK_FUNCTION bool all_positive(const Pack& x) {
  bool ok = true;
  for (int l = 0; l < kLanes; ++l) ok = ok && x[l] > 0.0;
  return ok;
}

}  // namespace detail

/// \brief The squared-exponential covariance of the points x(0..n-1) (data), Stan's
/// `gp_exp_quad_cov(x, alpha, rho)` plus `jitter` on the diagonal:
///
///   a(i, j) = alpha^2 exp(-(x_i - x_j)^2 / (2 rho^2)) + jitter [i = j].
///
/// Writes the lower triangle of `a` (j <= i). On Vars each entry is one node with edges to
/// alpha and rho.
template <class X, class T, class M>
KOKKOS_INLINE_FUNCTION void gp_exp_quad_cov(const X& x, int n, const T& alpha, const T& rho, double jitter,
                                            const M& a) {
  if constexpr (is_var_v<T>) {
    using S = typename T::scalar;
    const S al = alpha.v, r = rho.v;
    const S a2 = al * al;
    const S inv_r2 = S(1.0) / (r * r);
    const S two_al = S(2.0) * al;
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < i; ++j) {
        const double d = static_cast<double>(x(i)) - static_cast<double>(x(j));
        const double d2 = d * d;
        const S e = math::exp(S(-0.5 * d2) * inv_r2);
        const S k = a2 * e;
        // ∂k/∂alpha = 2 alpha e; ∂k/∂rho = k d^2 / rho^3.
        a(i, j) = ad::record(k, alpha, S(two_al * e), rho, S(k * S(d2) * inv_r2 / r));
      }
      a(i, i) = ad::record(S(a2 + jitter), alpha, two_al);
    }
  } else {
    const T a2 = alpha * alpha;
    const T c = -0.5 / (rho * rho);
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < i; ++j) {
        const double d = static_cast<double>(x(i)) - static_cast<double>(x(j));
        a(i, j) = a2 * math::exp(c * (d * d));
      }
      a(i, i) = a2 + jitter;
    }
  }
}

/// \brief The Cholesky factor in place: the lower triangle of the symmetric `a` (n x n,
/// only j <= i read) becomes L with L L^T = a (Stan's `cholesky_decompose`; the upper
/// triangle is neither read nor written). False where a is not positive definite (a pivot
/// not > 0, or NaN): on scalars `a` is then partly overwritten; on Var<Pack> false means some
/// lane failed, the decomposition goes on and that lane's entries are NaN, so the other lanes'
/// values and gradients stay right (the sampler treats a lane of non-finite log density as
/// rejected).
///
/// On Vars, L(i, j) is one node with edges to a(i, j), L(j, j) and L(i, k), L(j, k) for k < j:
/// n(n+1)/2 nodes, ~n^3/3 edges.
template <class M>
KOKKOS_INLINE_FUNCTION bool cholesky_decompose(const M& a, int n) {
  using T = detail::matrix_element_t<M>;
  if constexpr (is_var_v<T>) {
    using S = typename T::scalar;
    ad::Tape<S>* tape = nullptr;
    for (int i = 0; i < n && tape == nullptr; ++i) {
      for (int j = 0; j <= i; ++j) detail::find_tape<S>(a(i, j), tape);
    }
    bool ok = true;
    for (int j = 0; j < n; ++j) {
      // L(j, j) = sqrt(a(j, j) - Σ_k L(j, k)^2): ∂/∂a(j, j) = 1 / (2 L(j, j)), ∂/∂L(j, k) = -L(j, k) / L(j, j).
      S s = a(j, j).v;
      for (int k = 0; k < j; ++k) s -= a(j, k).v * a(j, k).v;
      if (!detail::all_positive(s)) {
        ok = false;
        if constexpr (!is_pack_v<S>) return false;
      }
      const S d = math::sqrt(s);
      const S inv = S(1.0) / d;
      {
        detail::VectorNode<S> node(tape, j + 1);
        node.parent(0, a(j, j).id);
        node.partial(0) = S(0.5) * inv;
        for (int k = 0; k < j; ++k) {
          node.parent(1 + k, a(j, k).id);
          node.partial(1 + k) = S(-a(j, k).v * inv);
        }
        a(j, j) = node.result(d);
      }
      const int diag = a(j, j).id;
      // L(i, j) = (a(i, j) - Σ_k L(i, k) L(j, k)) / L(j, j), i > j.
      for (int i = j + 1; i < n; ++i) {
        S t = a(i, j).v;
        for (int k = 0; k < j; ++k) t -= a(i, k).v * a(j, k).v;
        const S l = t * inv;
        detail::VectorNode<S> node(tape, 2 * j + 2);
        node.parent(0, a(i, j).id);
        node.partial(0) = inv;
        node.parent(1, diag);
        node.partial(1) = S(-l * inv);
        for (int k = 0; k < j; ++k) {
          node.parent(2 + 2 * k, a(i, k).id);
          node.partial(2 + 2 * k) = S(-a(j, k).v * inv);
          node.parent(3 + 2 * k, a(j, k).id);
          node.partial(3 + 2 * k) = S(-a(i, k).v * inv);
        }
        a(i, j) = node.result(l);
      }
    }
    return ok;
  } else {
    for (int j = 0; j < n; ++j) {
      T s = a(j, j);
      for (int k = 0; k < j; ++k) s -= a(j, k) * a(j, k);
      if (!detail::all_positive(s)) return false;
      const T d = math::sqrt(s);
      a(j, j) = d;
      const T inv = 1.0 / d;
      for (int i = j + 1; i < n; ++i) {
        T t = a(i, j);
        for (int k = 0; k < j; ++k) t -= a(i, k) * a(j, k);
        a(i, j) = t * inv;
      }
    }
    return true;
  }
}

/// \brief out(i) = Σ_{k <= i} L(i, k) z(k), i < n: a lower-triangular matrix times a
/// vector (Stan's `L * z` for a Cholesky factor L). z(k) may be a T or data (a double); out
/// must not be z. On Vars out(i) is one node with 2(i + 1) edges.
template <class M, class Z, class O>
KOKKOS_INLINE_FUNCTION void multiply_lower_tri(const M& L, const Z& z, const O& out, int n) {
  using T = detail::vector_element_t<O>;
  if constexpr (is_var_v<T>) {
    using S = typename T::scalar;
    ad::Tape<S>* tape = nullptr;
    for (int i = 0; i < n && tape == nullptr; ++i) {
      detail::find_tape<S>(z(i), tape);
      for (int k = 0; k <= i; ++k) detail::find_tape<S>(L(i, k), tape);
    }
    for (int i = 0; i < n; ++i) {
      detail::VectorNode<S> node(tape, 2 * (i + 1));
      S sum(0.0);
      for (int k = 0; k <= i; ++k) {
        const auto lik = L(i, k);
        const auto zk = z(k);
        const S lv = detail::value_arg(lik), zv = detail::value_arg(zk);
        sum += lv * zv;
        node.parent(2 * k, detail::node_of(lik));
        node.partial(2 * k) = zv;
        node.parent(2 * k + 1, detail::node_of(zk));
        node.partial(2 * k + 1) = lv;
      }
      out(i) = node.result(sum);
    }
  } else {
    for (int i = 0; i < n; ++i) {
      T sum = 0.0;
      for (int k = 0; k <= i; ++k) sum += L(i, k) * z(k);
      out(i) = sum;
    }
  }
}

/// \brief Forward substitution: x with L x = b, L lower-triangular with a non-zero diagonal
/// (Stan's `mdivide_left_tri_low(L, b)`). b(i) may be a T or data; x may be b itself (b(i)
/// is read before x(i) is written). On Vars x(i) is one node with 2i + 2 edges.
template <class M, class B, class O>
KOKKOS_INLINE_FUNCTION void mdivide_left_tri_low(const M& L, const B& b, const O& x, int n) {
  using T = detail::vector_element_t<O>;
  if constexpr (is_var_v<T>) {
    using S = typename T::scalar;
    ad::Tape<S>* tape = nullptr;
    for (int i = 0; i < n && tape == nullptr; ++i) {
      detail::find_tape<S>(b(i), tape);
      for (int k = 0; k <= i; ++k) detail::find_tape<S>(L(i, k), tape);
    }
    for (int i = 0; i < n; ++i) {
      // x_i = (b_i - Σ_{k<i} L(i, k) x_k) / L(i, i).
      const auto bi = b(i);
      const auto lii = L(i, i);
      const S inv = S(1.0) / S(detail::value_arg(lii));
      S t = detail::value_arg(bi);
      for (int k = 0; k < i; ++k) t -= S(detail::value_arg(L(i, k))) * x(k).v;
      const S xi = t * inv;
      detail::VectorNode<S> node(tape, 2 * i + 2);
      node.parent(0, detail::node_of(bi));
      node.partial(0) = inv;
      node.parent(1, detail::node_of(lii));
      node.partial(1) = S(-xi * inv);
      for (int k = 0; k < i; ++k) {
        const auto lik = L(i, k);
        node.parent(2 + 2 * k, detail::node_of(lik));
        node.partial(2 + 2 * k) = S(-x(k).v * inv);
        node.parent(3 + 2 * k, x(k).id);
        node.partial(3 + 2 * k) = S(-S(detail::value_arg(lik)) * inv);
      }
      x(i) = node.result(xi);
    }
  } else {
    for (int i = 0; i < n; ++i) {
      T t = b(i);
      for (int k = 0; k < i; ++k) t -= L(i, k) * x(k);
      x(i) = t / L(i, i);
    }
  }
}

}  // namespace hmc::dist
