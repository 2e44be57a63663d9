#pragma once
/// \file
/// \brief Sums over data as single operations, as Stan has them: the generalised linear
/// models `normal_id_glm_lpdf`, `bernoulli_logit_glm_lpmf`, `poisson_log_glm_lpmf` and the
/// parameter-times-data product `dot`, plus `slice`, a view of part of a vector.
///
/// η_i = alpha + Σ_j X(i, j) beta(j) over the rows i of a data matrix X (any indexable
/// `X(i, j)` with `X.extent(0)` rows and `X.extent(1)` columns: a MatrixView). alpha,
/// beta(j) and sigma may be double, Dual, Pack or Var (mixed as for the other densities).
/// On Vars each call is ONE node of the tape (hmc/model/reverse.hpp) with an edge to alpha,
/// to each beta(j) and to sigma, its partials accumulated in one pass over the data: the
/// gradient of a regression costs about one evaluation of it, whatever the number of rows.

#include "hmc/distributions/special.hpp"
#include "hmc/distributions/value_grad.hpp"

namespace hmc::dist {

/// \brief Part of a vector: `slice(q, offset)(i)` is q(offset + i); with a length n it
/// also has extent(0) = n, so a slice of a data View can be the data of a `_sum` form. A
/// slice of a (1-D, contiguous) View holds its data pointer, not a copy of the View (which
/// would count references on every call).
template <class V>
struct Slice {
  V v;
  int offset;
  int n;
  KOKKOS_INLINE_FUNCTION auto operator()(int i) const {
    if constexpr (std::is_pointer_v<V>) {
      return v[offset + i];
    } else {
      return v(offset + i);
    }
  }
  KOKKOS_INLINE_FUNCTION int extent(int) const { return n; }
};
template <class V>
KOKKOS_INLINE_FUNCTION auto slice(const V& v, int offset, int n = 0) {
  if constexpr (Kokkos::is_view<V>::value) {
    static_assert(V::rank == 1, "dist::slice: a 1-D View");
    return Slice<typename V::const_value_type*>{v.data(), offset, n};
  } else {
    return Slice<V>{v, offset, n};
  }
}

/// \brief A data vector as the one column of a matrix: `as_column(x)(i, 0)` is x(i), with
/// `extent(0)` = x.extent(0) rows and 1 column (a GLM of one covariate). Holds the View's data
/// pointer.
struct Column {
  const double* v;
  int n;
  KOKKOS_INLINE_FUNCTION double operator()(int i, int) const { return v[i]; }
  KOKKOS_INLINE_FUNCTION int extent(int r) const { return r == 0 ? n : 1; }
};
template <class V>
KOKKOS_INLINE_FUNCTION Column as_column(const V& v) {
  static_assert(Kokkos::is_view<V>::value && V::rank == 1, "dist::as_column: a 1-D View");
  return Column{v.data(), static_cast<int>(v.extent(0))};
}

namespace detail {

/// Partials accumulated in a strided array (a node's edges on the tape).
template <class S>
struct StridedOut {
  S* p;
  std::ptrdiff_t stride;
  KOKKOS_INLINE_FUNCTION S& operator()(int j) const { return p[j * stride]; }
};
/// Partials not wanted (no tape, or a tape that counts).
struct NoOut {
  template <class T>
  KOKKOS_INLINE_FUNCTION void add(int, const T&) const {}
};

template <class S>
KOKKOS_INLINE_FUNCTION void add_partial(const StridedOut<S>& out, int j, const S& v) {
  out(j) += v;
}
template <class S>
KOKKOS_INLINE_FUNCTION void add_partial(const NoOut&, int, const S&) {}

/// The linear predictors' sum: f(η_i, i, dη) gives the i-th term and its derivative in η;
/// returns Σ value and accumulates Σ dη into d_alpha and Σ dη X(i, j) into d_beta(j).
template <class S, class X, class BetaValue, class F, class DBeta>
KOKKOS_INLINE_FUNCTION S glm_pass(const X& x, const S& alpha, const BetaValue& beta, int p, F f, S& d_alpha,
                                  const DBeta& d_beta) {
  const int n = static_cast<int>(x.extent(0));
  S lp(0.0);
  for (int i = 0; i < n; ++i) {
    S eta = alpha;
    for (int j = 0; j < p; ++j) eta += x(i, j) * beta(j);
    S d_eta(0.0);
    lp += f(eta, i, d_eta);
    d_alpha += d_eta;
    for (int j = 0; j < p; ++j) add_partial(d_beta, j, S(x(i, j) * d_eta));
  }
  return lp;
}

/// A GLM on Vars: one node with edges alpha, extra (sigma: 1 or 0 of them), beta(0..p-1).
/// term(eta, i, d_eta, extra_value, d_extra) is the i-th term; finish(sum, extra, d_extra)
/// the value (and d_extra) from the sum of the terms.
template <class R, int Extra, class X, class A, class B, class E, class Term, class Finish>
KOKKOS_INLINE_FUNCTION R glm_node(const X& x, const A& alpha, const B& beta, const E& extra, Term term, Finish finish) {
  using S = typename R::scalar;
  const int p = static_cast<int>(x.extent(1));
  ad::Tape<S>* tape = nullptr;
  find_tape<S>(alpha, tape);
  find_tape<S>(extra, tape);
  for (int j = 0; j < p && tape == nullptr; ++j) find_tape<S>(beta(j), tape);
  VectorNode<S> node(tape, 1 + Extra + p);
  node.parent(0, node_of(alpha));
  if (Extra > 0) node.parent(1, node_of(extra));
  for (int j = 0; j < p; ++j) node.parent(1 + Extra + j, node_of(beta(j)));
  const S a = value_arg(alpha), e = value_arg(extra);
  S d_alpha(0.0), d_extra(0.0);
  const auto beta_value = [&](int j) { return S(value_arg(beta(j))); };
  const auto f = [&](const S& eta, int i, S& d_eta) { return term(eta, i, d_eta, e, d_extra); };
  const S sum = node.recording() ? glm_pass(x, a, beta_value, p, f, d_alpha,
                                            StridedOut<S>{node.partials_from(1 + Extra), node.partial_stride()})
                                 : glm_pass(x, a, beta_value, p, f, d_alpha, NoOut{});
  const S value = finish(sum, e, d_extra);
  node.partial(0) = d_alpha;
  if (Extra > 0) node.partial(1) = d_extra;
  return node.result(value);
}

}  // namespace detail

/// \brief Σ_i log Normal(y_i | alpha + X_i · beta, sigma): `normal_id_glm`. sigma > 0 (else
/// -infinity). Propto drops the -n/2 log(2π).
template <bool Propto = false, class Y, class X, class A, class B, class Sg>
KOKKOS_INLINE_FUNCTION promote_t<A, element_t<B, int>, Sg> normal_id_glm_lpdf(const Y& y, const X& x, const A& alpha,
                                                                              const B& beta, const Sg& sigma) {
  using R = promote_t<A, element_t<B, int>, Sg>;
  const int n = static_cast<int>(x.extent(0)), p = static_cast<int>(x.extent(1));
  const double c = Propto ? 0.0 : n * constants::log_sqrt_two_pi;
  if constexpr (is_var_v<R>) {
    using S = typename R::scalar;
    if constexpr (std::is_same_v<S, double>) {
      if (!(detail::value_arg(sigma) > 0.0)) return R(neg_inf());
    }
    return detail::glm_node<R, 1>(
        x, alpha, beta, sigma,
        [&](const S& eta, int i, S& d_eta, const S& s, S& d_s) {
          const S z = (y(i) - eta) / s;
          d_eta = z / s;
          d_s += z * z;
          return S(-0.5 * z * z);
        },
        [&](const S& sum, const S& s, S& d_s) {
          d_s = (d_s - static_cast<double>(n)) / s;
          return S(sum - static_cast<double>(n) * math::log(s) - c);
        });
  } else {
    R lp = 0.0;
    for (int i = 0; i < n; ++i) {
      R eta = alpha;
      for (int j = 0; j < p; ++j) eta += x(i, j) * beta(j);
      const R z = (y(i) - eta) / sigma;
      lp += -0.5 * z * z;
    }
    return lp - static_cast<double>(n) * math::log(R(sigma)) - c;
  }
}

/// \brief Σ_i log Bernoulli(y_i | logit⁻¹(alpha + X_i · beta)), y_i in {0, 1}: `bernoulli_logit_glm`.
template <bool Propto = false, class Y, class X, class A, class B>
KOKKOS_INLINE_FUNCTION promote_t<A, element_t<B, int>> bernoulli_logit_glm_lpmf(const Y& y, const X& x, const A& alpha,
                                                                                const B& beta) {
  using R = promote_t<A, element_t<B, int>>;
  const int n = static_cast<int>(x.extent(0)), p = static_cast<int>(x.extent(1));
  if constexpr (is_var_v<R>) {
    using S = typename R::scalar;
    return detail::glm_node<R, 0>(
        x, alpha, beta, 0.0,
        [&](const S& eta, int i, S& d_eta, const S&, S&) {
          const double yi = static_cast<double>(y(i));
          d_eta = yi - math::sigmoid(eta);
          return S(yi * eta + math::log_sigmoid(S(-eta)));
        },
        [](const S& sum, const S&, S&) { return sum; });
  } else {
    R lp = 0.0;
    for (int i = 0; i < n; ++i) {
      R eta = alpha;
      for (int j = 0; j < p; ++j) eta += x(i, j) * beta(j);
      lp += static_cast<double>(y(i)) * eta + math::log_sigmoid(R(-eta));
    }
    return lp;
  }
}

/// \brief Σ_i log Poisson(y_i | exp(alpha + X_i · beta)), y_i counts: `poisson_log_glm`.
/// Propto drops the Σ log y_i!.
template <bool Propto = false, class Y, class X, class A, class B>
KOKKOS_INLINE_FUNCTION promote_t<A, element_t<B, int>> poisson_log_glm_lpmf(const Y& y, const X& x, const A& alpha,
                                                                            const B& beta) {
  using R = promote_t<A, element_t<B, int>>;
  const int n = static_cast<int>(x.extent(0)), p = static_cast<int>(x.extent(1));
  double c = 0.0;
  if constexpr (!Propto) {
    for (int i = 0; i < n; ++i) c += math::lgamma(static_cast<double>(y(i)) + 1.0);
  }
  if constexpr (is_var_v<R>) {
    using S = typename R::scalar;
    return detail::glm_node<R, 0>(
        x, alpha, beta, 0.0,
        [&](const S& eta, int i, S& d_eta, const S&, S&) {
          const double yi = static_cast<double>(y(i));
          const S mu = math::exp(eta);
          d_eta = yi - mu;
          return S(yi * eta - mu);
        },
        [&](const S& sum, const S&, S&) { return S(sum - c); });
  } else {
    R lp = 0.0;
    for (int i = 0; i < n; ++i) {
      R eta = alpha;
      for (int j = 0; j < p; ++j) eta += x(i, j) * beta(j);
      lp += static_cast<double>(y(i)) * eta - math::exp(eta);
    }
    return lp - c;
  }
}

/// \brief Σ_j xs(j) beta(j), j < n: data times parameters, one node of n edges on Vars.
template <class Xs, class B>
KOKKOS_INLINE_FUNCTION promote_t<element_t<B, int>> dot(const Xs& xs, const B& beta, int n) {
  using R = promote_t<element_t<B, int>>;
  if constexpr (is_var_v<R>) {
    using S = typename R::scalar;
    ad::Tape<S>* tape = nullptr;
    for (int j = 0; j < n && tape == nullptr; ++j) detail::find_tape<S>(beta(j), tape);
    detail::VectorNode<S> node(tape, n);
    S sum(0.0);
    for (int j = 0; j < n; ++j) {
      const auto b = beta(j);
      sum += static_cast<double>(xs(j)) * detail::value_arg(b);
      node.parent(j, detail::node_of(b));
      node.partial(j) = S(static_cast<double>(xs(j)));
    }
    return node.result(sum);
  } else {
    R sum = 0.0;
    for (int j = 0; j < n; ++j) sum += static_cast<double>(xs(j)) * beta(j);
    return sum;
  }
}

}  // namespace hmc::dist
