#pragma once
/// \file
/// \brief How the public functions of hmc/distributions reach their implementations: mixed argument
/// types become one type R (`promote_t`), a Pack is computed lane by lane in double, and the
/// vectorised `_sum` forms loop over the data.
///
/// Each univariate density `NAME` has, in `dist::impl`, `NAME<Propto, R>(args)` (its value)
/// and `NAME_grad<Propto, R>(args)` (value and partials) on R = double or Dual, with the
/// real-valued arguments as R and the integer ones as int. The macros at the end of this file
/// write the public `NAME`, `NAME_grad`, `NAME_sum` and `NAME_sum_grad` around them.

#include "hmc/distributions/special.hpp"

#include <type_traits>

namespace hmc::dist::detail {

/// An argument as the implementation takes it: an integer stays an int, anything else is R.
template <class R, class T>
KOKKOS_INLINE_FUNCTION auto arg(const T& x) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<int>(x);
  } else {
    return to<R>(x);
  }
}
/// Lane l of an argument: an integer stays an int, a Pack gives its lane, a double itself.
template <class T>
KOKKOS_INLINE_FUNCTION auto arg_lane(const T& x, int l) {
  if constexpr (std::is_integral_v<T>) {
    (void)l;
    return static_cast<int>(x);
  } else {
    return lane(x, l);
  }
}

/// Number of real-valued (non-integer) arguments: the slots of a ValueGrad.
template <class... A>
inline constexpr int num_real = ((std::is_integral_v<A> ? 0 : 1) + ... + 0);

/// An argument's value: a Var's, anything else itself.
template <class T>
KOKKOS_INLINE_FUNCTION auto value_arg(const T& x) {
  if constexpr (is_var_v<T>) {
    return x.v;
  } else {
    return x;
  }
}

/// The node of a real-valued argument (-1: a constant) and its tape; integers have no slot.
template <class S, class T>
KOKKOS_INLINE_FUNCTION void collect_node(const T& x, int* ids, int& j, ad::Tape<S>*& tape) {
  if constexpr (std::is_integral_v<T>) {
    (void)x, (void)ids, (void)j, (void)tape;
  } else if constexpr (is_var_v<T>) {
    ids[j++] = x.id;
    if (x.id >= 0) tape = x.tape;
  } else {
    (void)x, (void)tape;
    ids[j++] = -1;
  }
}

/// One node for a density whose value and partials are g: an edge to each argument that is a
/// Var with a node.
template <class S, int N, class... A>
KOKKOS_INLINE_FUNCTION Var<S> record_density(const ValueGrad<S, N>& g, const A&... a) {
  int ids[N > 0 ? N : 1] = {};
  ad::Tape<S>* tape = nullptr;
  int j = 0;
  (collect_node<S>(a, ids, j, tape), ...);
  return ad::record_n(g.value, tape, N, ids, g.d);
}

template <class F, bool Propto, class... A>
KOKKOS_INLINE_FUNCTION ValueGrad<promote_t<A...>, num_real<A...>> call_grad(const A&... a);

template <class F, bool Propto, class... A>
KOKKOS_INLINE_FUNCTION promote_t<A...> call_value(const A&... a) {
  using R = promote_t<A...>;
  if constexpr (is_var_v<R>) {
    // Reverse mode: the analytic partials on the values, one node.
    return record_density<typename R::scalar>(call_grad<F, Propto>(value_arg(a)...), a...);
  } else if constexpr (is_pack_v<R>) {
    R r;
    for (int l = 0; l < kLanes; ++l) r[l] = F::template value<Propto, double>(arg_lane(a, l)...);
    return r;
  } else {
    return F::template value<Propto, R>(arg<R>(a)...);
  }
}

template <class F, bool Propto, class... A>
KOKKOS_INLINE_FUNCTION ValueGrad<promote_t<A...>, num_real<A...>> call_grad(const A&... a) {
  using R = promote_t<A...>;
  constexpr int N = num_real<A...>;
  if constexpr (is_var_v<R>) {
    // The value as a node; the partials as constants (no second derivatives).
    const auto g = call_grad<F, Propto>(value_arg(a)...);
    ValueGrad<R, N> r;
    r.value = record_density<typename R::scalar>(g, a...);
    for (int j = 0; j < N; ++j) r.d[j] = R(g.d[j]);
    return r;
  } else if constexpr (is_pack_v<R>) {
    ValueGrad<R, N> r;
    for (int l = 0; l < kLanes; ++l) {
      const ValueGrad<double, N> g = F::template grad<Propto, double>(arg_lane(a, l)...);
      r.value[l] = g.value;
      for (int j = 0; j < N; ++j) r.d[j][l] = g.d[j];
    }
    return r;
  } else {
    return F::template grad<Propto, R>(arg<R>(a)...);
  }
}

/// Element i of a data argument of a `_sum` form: a container's xs(i), or a scalar itself.
template <class T>
KOKKOS_INLINE_FUNCTION auto data_at(const T& x, int i) {
  if constexpr (std::is_arithmetic_v<T>) {
    (void)i;
    return x;
  } else {
    return x(i);
  }
}

/// A node with one edge per scalar argument and one per element of a vector argument,
/// its partials filled in by the caller through `partial(e)` (zeroed first). Without a
/// tape (every argument a constant) or on a tape that counts, the partials go to a local.
template <class S>
struct VectorNode {
  ad::Tape<S>* tape = nullptr;
  int node = -1;
  int e0 = 0;
  S scratch[1];

  KOKKOS_INLINE_FUNCTION VectorNode(ad::Tape<S>* t, int edges) : tape(t) {
    scratch[0] = S(0.0);
    if (tape == nullptr) return;
    node = tape->begin_node(edges);
    if (node < 0) {
      tape = nullptr;
      return;
    }
    e0 = tape->edges - edges;
    if (!tape->counting()) {
      for (int e = 0; e < edges; ++e) tape->partial(e0 + e) = S(0.0);
    }
  }
  KOKKOS_INLINE_FUNCTION bool recording() const { return tape != nullptr && !tape->counting(); }
  /// The partial of edge e (a local sink where nothing is recorded).
  KOKKOS_INLINE_FUNCTION S& partial(int e) { return recording() ? tape->partial(e0 + e) : scratch[0]; }
  /// Edge e comes from `id` (< 0: a constant, whose edge goes to the tape's sink).
  KOKKOS_INLINE_FUNCTION void parent(int e, int id) const {
    if (recording()) tape->store.index(tape->parent0 + e0 + e) = static_cast<double>(id < 0 ? tape->sink() : id);
  }
  /// The partials of edges e, e + 1, ... as a strided array (only while recording()).
  KOKKOS_INLINE_FUNCTION S* partials_from(int e) const { return &tape->partial(e0 + e); }
  KOKKOS_INLINE_FUNCTION std::ptrdiff_t partial_stride() const { return tape->store.value_stride(); }
  KOKKOS_INLINE_FUNCTION Var<S> result(const S& value) const {
    return tape != nullptr ? Var<S>(value, node, tape) : Var<S>(value, -1, nullptr);
  }
};

/// The tape of a scalar argument (or none).
template <class S, class T>
KOKKOS_INLINE_FUNCTION void find_tape(const T& x, ad::Tape<S>*& tape) {
  if constexpr (is_var_v<T>) {
    if (x.id >= 0) tape = x.tape;
  } else {
    (void)x, (void)tape;
  }
}
template <class T>
KOKKOS_INLINE_FUNCTION int node_of(const T& x) {
  if constexpr (is_var_v<T>) {
    return x.id;
  } else {
    (void)x;
    return -1;
  }
}

template <class R, int N>
KOKKOS_INLINE_FUNCTION ValueGrad<R, N> zero_value_grad() {
  ValueGrad<R, N> r;
  r.value = 0.0;
  for (int j = 0; j < N; ++j) r.d[j] = 0.0;
  return r;
}

}  // namespace hmc::dist::detail

/// The functor of `impl::NAME` / `impl::NAME_grad` that call_value and call_grad take.
#define HMC_DIST_IMPL_FN(NAME)                               \
  namespace impl {                                           \
  struct NAME##_fn {                                         \
    template <bool P, class R, class... X>                   \
    KOKKOS_INLINE_FUNCTION static R value(const X&... x) {   \
      return impl::NAME<P, R>(x...);                         \
    }                                                        \
    template <bool P, class R, class... X>                   \
    KOKKOS_INLINE_FUNCTION static auto grad(const X&... x) { \
      return impl::NAME##_grad<P, R>(x...);                  \
    }                                                        \
  };                                                         \
  }

/// A continuous density of (x, a1): NAME, NAME_grad (∂x, ∂a1), NAME_sum(xs, a1),
/// NAME_sum_grad(xs, a1) (∂a1 only).
#define HMC_DIST_CONTINUOUS2(NAME)                                                                 \
  HMC_DIST_IMPL_FN(NAME)                                                                           \
  template <bool Propto = false, class X, class A1>                                                \
  KOKKOS_INLINE_FUNCTION promote_t<X, A1> NAME(const X& x, const A1& a1) {                         \
    return detail::call_value<impl::NAME##_fn, Propto>(x, a1);                                     \
  }                                                                                                \
  template <bool Propto = false, class X, class A1>                                                \
  KOKKOS_INLINE_FUNCTION ValueGrad<promote_t<X, A1>, 2> NAME##_grad(const X& x, const A1& a1) {    \
    return detail::call_grad<impl::NAME##_fn, Propto>(x, a1);                                      \
  }                                                                                                \
  template <bool Propto = false, class Xs, class A1>                                               \
  KOKKOS_INLINE_FUNCTION ValueGrad<promote_t<A1>, 1> NAME##_sum_grad(const Xs& xs, const A1& a1) { \
    auto r = detail::zero_value_grad<promote_t<A1>, 1>();                                          \
    const int n = static_cast<int>(xs.extent(0));                                                  \
    for (int i = 0; i < n; ++i) {                                                                  \
      const auto g = NAME##_grad<Propto>(static_cast<double>(xs(i)), a1);                          \
      r.value += g.value;                                                                          \
      r.d[0] += g.d[1];                                                                            \
    }                                                                                              \
    return r;                                                                                      \
  }                                                                                                \
  template <bool Propto = false, class Xs, class A1>                                               \
  KOKKOS_INLINE_FUNCTION promote_t<A1> NAME##_sum(const Xs& xs, const A1& a1) {                    \
    if constexpr (is_var_v<promote_t<A1>>) {                                                       \
      const auto g = NAME##_sum_grad<Propto>(xs, detail::value_arg(a1));                           \
      return detail::record_density<typename promote_t<A1>::scalar>(g, a1);                        \
    } else {                                                                                       \
      promote_t<A1> lp = 0.0;                                                                      \
      const int n = static_cast<int>(xs.extent(0));                                                \
      for (int i = 0; i < n; ++i) lp += NAME<Propto>(static_cast<double>(xs(i)), a1);              \
      return lp;                                                                                   \
    }                                                                                              \
  }

/// A continuous density of (x, a1, a2): NAME, NAME_grad (∂x, ∂a1, ∂a2), NAME_sum(xs, a1, a2),
/// NAME_sum_grad(xs, a1, a2) (∂a1, ∂a2).
#define HMC_DIST_CONTINUOUS3(NAME)                                                                                   \
  HMC_DIST_IMPL_FN(NAME)                                                                                             \
  template <bool Propto = false, class X, class A1, class A2>                                                        \
  KOKKOS_INLINE_FUNCTION promote_t<X, A1, A2> NAME(const X& x, const A1& a1, const A2& a2) {                         \
    return detail::call_value<impl::NAME##_fn, Propto>(x, a1, a2);                                                   \
  }                                                                                                                  \
  template <bool Propto = false, class X, class A1, class A2>                                                        \
  KOKKOS_INLINE_FUNCTION ValueGrad<promote_t<X, A1, A2>, 3> NAME##_grad(const X& x, const A1& a1, const A2& a2) {    \
    return detail::call_grad<impl::NAME##_fn, Propto>(x, a1, a2);                                                    \
  }                                                                                                                  \
  template <bool Propto = false, class Xs, class A1, class A2>                                                       \
  KOKKOS_INLINE_FUNCTION ValueGrad<promote_t<A1, A2>, 2> NAME##_sum_grad(const Xs& xs, const A1& a1, const A2& a2) { \
    auto r = detail::zero_value_grad<promote_t<A1, A2>, 2>();                                                        \
    const int n = static_cast<int>(xs.extent(0));                                                                    \
    for (int i = 0; i < n; ++i) {                                                                                    \
      const auto g = NAME##_grad<Propto>(static_cast<double>(xs(i)), a1, a2);                                        \
      r.value += g.value;                                                                                            \
      r.d[0] += g.d[1];                                                                                              \
      r.d[1] += g.d[2];                                                                                              \
    }                                                                                                                \
    return r;                                                                                                        \
  }                                                                                                                  \
  template <bool Propto = false, class Xs, class A1, class A2>                                                       \
  KOKKOS_INLINE_FUNCTION promote_t<A1, A2> NAME##_sum(const Xs& xs, const A1& a1, const A2& a2) {                    \
    if constexpr (is_var_v<promote_t<A1, A2>>) {                                                                     \
      const auto g = NAME##_sum_grad<Propto>(xs, detail::value_arg(a1), detail::value_arg(a2));                      \
      return detail::record_density<typename promote_t<A1, A2>::scalar>(g, a1, a2);                                  \
    } else {                                                                                                         \
      promote_t<A1, A2> lp = 0.0;                                                                                    \
      const int n = static_cast<int>(xs.extent(0));                                                                  \
      for (int i = 0; i < n; ++i) lp += NAME<Propto>(static_cast<double>(xs(i)), a1, a2);                            \
      return lp;                                                                                                     \
    }                                                                                                                \
  }

/// A discrete mass of (int k, a1): NAME, NAME_grad (∂a1), NAME_sum(ks, a1), NAME_sum_grad(ks, a1).
/// ks(i) may hold doubles (counts): each is converted to int.
#define HMC_DIST_DISCRETE1(NAME)                                                                   \
  HMC_DIST_IMPL_FN(NAME)                                                                           \
  template <bool Propto = false, class A1>                                                         \
  KOKKOS_INLINE_FUNCTION promote_t<A1> NAME(int k, const A1& a1) {                                 \
    return detail::call_value<impl::NAME##_fn, Propto>(k, a1);                                     \
  }                                                                                                \
  template <bool Propto = false, class A1>                                                         \
  KOKKOS_INLINE_FUNCTION ValueGrad<promote_t<A1>, 1> NAME##_grad(int k, const A1& a1) {            \
    return detail::call_grad<impl::NAME##_fn, Propto>(k, a1);                                      \
  }                                                                                                \
  template <bool Propto = false, class Ks, class A1>                                               \
  KOKKOS_INLINE_FUNCTION ValueGrad<promote_t<A1>, 1> NAME##_sum_grad(const Ks& ks, const A1& a1) { \
    auto r = detail::zero_value_grad<promote_t<A1>, 1>();                                          \
    const int n = static_cast<int>(ks.extent(0));                                                  \
    for (int i = 0; i < n; ++i) {                                                                  \
      const auto g = NAME##_grad<Propto>(static_cast<int>(ks(i)), a1);                             \
      r.value += g.value;                                                                          \
      r.d[0] += g.d[0];                                                                            \
    }                                                                                              \
    return r;                                                                                      \
  }                                                                                                \
  template <bool Propto = false, class Ks, class A1>                                               \
  KOKKOS_INLINE_FUNCTION promote_t<A1> NAME##_sum(const Ks& ks, const A1& a1) {                    \
    if constexpr (is_var_v<promote_t<A1>>) {                                                       \
      const auto g = NAME##_sum_grad<Propto>(ks, detail::value_arg(a1));                           \
      return detail::record_density<typename promote_t<A1>::scalar>(g, a1);                        \
    } else {                                                                                       \
      promote_t<A1> lp = 0.0;                                                                      \
      const int n = static_cast<int>(ks.extent(0));                                                \
      for (int i = 0; i < n; ++i) lp += NAME<Propto>(static_cast<int>(ks(i)), a1);                 \
      return lp;                                                                                   \
    }                                                                                              \
  }

/// A discrete mass of (int k, int n, a1): NAME, NAME_grad (∂a1), NAME_sum(ks, ns, a1) and
/// NAME_sum_grad(ks, ns, a1), where ns is a container like ks or one int for all.
#define HMC_DIST_DISCRETE2(NAME)                                                                                 \
  HMC_DIST_IMPL_FN(NAME)                                                                                         \
  template <bool Propto = false, class A1>                                                                       \
  KOKKOS_INLINE_FUNCTION promote_t<A1> NAME(int k, int n, const A1& a1) {                                        \
    return detail::call_value<impl::NAME##_fn, Propto>(k, n, a1);                                                \
  }                                                                                                              \
  template <bool Propto = false, class A1>                                                                       \
  KOKKOS_INLINE_FUNCTION ValueGrad<promote_t<A1>, 1> NAME##_grad(int k, int n, const A1& a1) {                   \
    return detail::call_grad<impl::NAME##_fn, Propto>(k, n, a1);                                                 \
  }                                                                                                              \
  template <bool Propto = false, class Ks, class Ns, class A1>                                                   \
  KOKKOS_INLINE_FUNCTION ValueGrad<promote_t<A1>, 1> NAME##_sum_grad(const Ks& ks, const Ns& ns, const A1& a1) { \
    auto r = detail::zero_value_grad<promote_t<A1>, 1>();                                                        \
    const int m = static_cast<int>(ks.extent(0));                                                                \
    for (int i = 0; i < m; ++i) {                                                                                \
      const auto g = NAME##_grad<Propto>(static_cast<int>(ks(i)), static_cast<int>(detail::data_at(ns, i)), a1); \
      r.value += g.value;                                                                                        \
      r.d[0] += g.d[0];                                                                                          \
    }                                                                                                            \
    return r;                                                                                                    \
  }                                                                                                              \
  template <bool Propto = false, class Ks, class Ns, class A1>                                                   \
  KOKKOS_INLINE_FUNCTION promote_t<A1> NAME##_sum(const Ks& ks, const Ns& ns, const A1& a1) {                    \
    if constexpr (is_var_v<promote_t<A1>>) {                                                                     \
      const auto g = NAME##_sum_grad<Propto>(ks, ns, detail::value_arg(a1));                                     \
      return detail::record_density<typename promote_t<A1>::scalar>(g, a1);                                      \
    } else {                                                                                                     \
      promote_t<A1> lp = 0.0;                                                                                    \
      const int m = static_cast<int>(ks.extent(0));                                                              \
      for (int i = 0; i < m; ++i) {                                                                              \
        lp += NAME<Propto>(static_cast<int>(ks(i)), static_cast<int>(detail::data_at(ns, i)), a1);               \
      }                                                                                                          \
      return lp;                                                                                                 \
    }                                                                                                            \
  }
