#pragma once
/// \file
/// \brief The plumbing of hmc/distributions: the result type of mixed arguments (`promote_t`),
/// `ValueGrad`, lanes of a Pack, and the special functions the densities need (lgamma,
/// digamma, trigamma, log1p_exp, lchoose) on double, hmc::Dual and hmc::Pack.
///
/// Everything here is `KOKKOS_INLINE_FUNCTION` and calls `hmc::math::` only, so it compiles
/// for a GPU; the Pack overloads (host only, as Pack is) are loops over the lanes.
/// docs/distributions.md is the reference.

#include "hmc/core/kokkos_shim.hpp"
#include "hmc/core/pack.hpp"
#include "hmc/model/dual.hpp"
#include "hmc/model/reverse.hpp"

#include <type_traits>

namespace hmc::dist {

// ---- types ----------------------------------------------------------------------------

template <class T>
struct is_pack : std::is_same<std::decay_t<T>, Pack> {};
template <class T>
inline constexpr bool is_pack_v = is_pack<T>::value;
template <class T>
inline constexpr bool is_dual_v = std::is_same_v<std::decay_t<T>, Dual>;

using ad::is_var_v;
/// A Pack or a Var of Packs.
template <class T>
inline constexpr bool is_pack_like_v = is_pack_v<T> || std::is_same_v<std::decay_t<T>, Var<Pack>>;

/// \brief The result type of a density of arguments `Args...`: a Var (of Packs if any argument
/// is a Pack or a Var of Packs, else of doubles) if any is a Var, else Pack if any is a Pack,
/// else Dual if any is a Dual, else double (int and double arguments are data).
template <class... Args>
struct promote {
  using type = std::conditional_t<
      (is_var_v<Args> || ...), Var<std::conditional_t<(is_pack_like_v<Args> || ...), Pack, double>>,
      std::conditional_t<(is_pack_v<Args> || ...), Pack, std::conditional_t<(is_dual_v<Args> || ...), Dual, double>>>;
};
template <class... Args>
using promote_t = typename promote<Args...>::type;

/// \brief A log density and its partial derivatives, `d[j]` = ∂value/∂(j-th real-valued
/// argument), in argument order; integer (data) arguments have no slot.
template <class R, int N>
struct ValueGrad {
  R value;
  R d[N];
};

/// \brief Lane l of a Pack; any other argument (double, int, Dual) is the same in every lane.
inline double lane(const Pack& p, int l) { return p[l]; }
template <class T>
KOKKOS_INLINE_FUNCTION constexpr double lane(const T& x, int) {
  return static_cast<double>(x);
}

/// \brief A number as R (double, Dual): `to<R>(3)` is R(3.0).
template <class R, class T>
KOKKOS_INLINE_FUNCTION R to(const T& x) {
  if constexpr (std::is_arithmetic_v<T>) {
    return R(static_cast<double>(x));
  } else {
    return R(x);
  }
}

/// \brief An output that discards what is added to it: pass `dist::Ignore{}` for the gradient
/// outputs of the multivariate `_grad` functions that are not wanted (`dist::ignore`, a
/// namespace-scope object, is the host-only spelling: device code cannot use it).
struct Sink {
  template <class T>
  KOKKOS_INLINE_FUNCTION const Sink& operator+=(const T&) const {
    return *this;
  }
  template <class T>
  KOKKOS_INLINE_FUNCTION const Sink& operator-=(const T&) const {
    return *this;
  }
};
struct Ignore {
  template <class... I>
  KOKKOS_INLINE_FUNCTION Sink operator()(I...) const {
    return Sink{};
  }
};
inline constexpr Ignore ignore{};

// ---- constants ------------------------------------------------------------------------

namespace constants {
inline constexpr double log_pi = 1.14472988584940017414342735135305871;
inline constexpr double log_two = 0.693147180559945309417232121458176568;
/// 0.5 log(2π)
inline constexpr double log_sqrt_two_pi = 0.918938533204672741780329736405617640;
/// 0.5 log(2/π)
inline constexpr double log_sqrt_two_over_pi = -0.225791352644727432363097614947441071;
}  // namespace constants

KOKKOS_INLINE_FUNCTION constexpr double neg_inf() { return -math::infinity(); }
KOKKOS_INLINE_FUNCTION double quiet_nan() { return math::infinity() - math::infinity(); }

// ---- special functions on double ------------------------------------------------------

/// \brief log Γ(x) (Kokkos' lgamma: the C library's on a CPU, CUDA's or HIP's on a GPU).
KOKKOS_INLINE_FUNCTION double lgamma(double x) { return math::lgamma(x); }

/// \brief ψ(x) = d/dx log Γ(x): the recurrence ψ(x) = ψ(x + 1) - 1/x up to x >= 10, then
/// the asymptotic series to x^-14 (error below 1e-16 there); reflection for x < 0.
/// About 1e-15 relative, except near the root x0 = 1.4616... (absolute 1e-16 there).
/// NaN at 0, -1, -2, ...
KOKKOS_INLINE_FUNCTION double digamma(double x) {
  if (math::isnan(x) || x == -math::infinity()) return quiet_nan();
  if (x == math::infinity()) return x;
  double r = 0.0;
  if (x <= 0.0) {
    if (x == math::nearbyint(x)) return quiet_nan();
    // ψ(x) = ψ(1 - x) - π cot(πx)
    r = -math::pi() * math::cos(math::pi() * x) / math::sin(math::pi() * x);
    x = 1.0 - x;
  }
  while (x < 10.0) {
    r -= 1.0 / x;
    x += 1.0;
  }
  const double f = 1.0 / (x * x);
  // -Σ B_2k / (2k x^2k), k = 1..7
  const double t =
      f * (-1.0 / 12 +
           f * (1.0 / 120 + f * (-1.0 / 252 + f * (1.0 / 240 + f * (-1.0 / 132 + f * (691.0 / 32760 - f / 12.0))))));
  return r + math::log(x) - 0.5 / x + t;
}

/// \brief ψ'(x): recurrence ψ'(x) = ψ'(x + 1) + 1/x² up to x >= 10, then the asymptotic
/// series; reflection for x < 0. About 1e-15 relative.
KOKKOS_INLINE_FUNCTION double trigamma(double x) {
  if (math::isnan(x) || x == -math::infinity()) return quiet_nan();
  if (x == math::infinity()) return 0.0;
  double r = 0.0, sign = 1.0;
  if (x <= 0.0) {
    if (x == math::nearbyint(x)) return quiet_nan();
    // ψ'(x) = π² / sin²(πx) - ψ'(1 - x)
    const double s = math::sin(math::pi() * x);
    r = math::pi() * math::pi() / (s * s);
    sign = -1.0;
    x = 1.0 - x;
  }
  double acc = 0.0;
  while (x < 10.0) {
    acc += 1.0 / (x * x);
    x += 1.0;
  }
  const double f = 1.0 / (x * x);
  // 1/x + 1/(2x²) + Σ B_2k / x^(2k+1), k = 1..7
  const double t =
      f * (1.0 / 6 +
           f * (-1.0 / 30 + f * (1.0 / 42 + f * (-1.0 / 30 + f * (5.0 / 66 + f * (-691.0 / 2730 + f * 7.0 / 6))))));
  acc += (1.0 + 0.5 / x + t) / x;
  return r + sign * acc;
}

/// \brief log(1 + exp(x)) without overflow.
KOKKOS_INLINE_FUNCTION double log1p_exp(double x) { return -math::log_sigmoid(-x); }

/// \brief log C(n, k) for integers 0 <= k <= n (-infinity outside).
KOKKOS_INLINE_FUNCTION double lchoose(int n, int k) {
  if (k < 0 || k > n) return neg_inf();
  return math::lgamma(n + 1.0) - math::lgamma(k + 1.0) - math::lgamma(n - k + 1.0);
}

// ---- on Dual --------------------------------------------------------------------------

KOKKOS_INLINE_FUNCTION Dual lgamma(const Dual& x) { return Dual(math::lgamma(x.value), digamma(x.value) * x.tangent); }
KOKKOS_INLINE_FUNCTION Dual digamma(const Dual& x) { return Dual(digamma(x.value), trigamma(x.value) * x.tangent); }
KOKKOS_INLINE_FUNCTION Dual log1p_exp(const Dual& x) { return -math::log_sigmoid(-x); }

// ---- on Var (reverse mode): one node each ------------------------------------------------

template <class S>
KOKKOS_INLINE_FUNCTION Var<S> lgamma(const Var<S>& x) {
  return ad::record(ad::lanewise(x.v, [](double y) { return math::lgamma(y); }), x,
                    ad::lanewise(x.v, [](double y) { return digamma(y); }));
}
template <class S>
KOKKOS_INLINE_FUNCTION Var<S> digamma(const Var<S>& x) {
  return ad::record(ad::lanewise(x.v, [](double y) { return digamma(y); }), x,
                    ad::lanewise(x.v, [](double y) { return trigamma(y); }));
}
template <class S>
KOKKOS_INLINE_FUNCTION Var<S> log1p_exp(const Var<S>& x) {
  return -math::log_sigmoid(-x);
}

// ---- log_sum_exp ----------------------------------------------------------------------

/// \brief log(e^a + e^b) without overflow; -infinity when both are -infinity.
KOKKOS_INLINE_FUNCTION double log_sum_exp(double a, double b) {
  const double m = a > b ? a : b;
  if (m == neg_inf()) return m;
  return m + math::log1p(math::exp(-math::fabs(a - b)));
}
template <class A, class B>
KOKKOS_INLINE_FUNCTION promote_t<A, B> log_sum_exp(const A& a, const B& b) {
  using R = promote_t<A, B>;
  if constexpr (is_var_v<R>) {
    // One node: ∂/∂a = e^(a - v), ∂/∂b = e^(b - v).
    using S = typename R::scalar;
    const R ra = a, rb = b;
    const S v = ad::lanewise2(ra.v, rb.v, [](double x, double y) { return log_sum_exp(x, y); });
    return ad::record(v, ra, S(math::exp(S(ra.v - v))), rb, S(math::exp(S(rb.v - v))));
  } else if constexpr (is_pack_v<R>) {
    R r;
    for (int l = 0; l < kLanes; ++l) r[l] = log_sum_exp(lane(a, l), lane(b, l));
    return r;
  } else {
    const R ra = a, rb = b;
    const double m = value_of(ra) > value_of(rb) ? value_of(ra) : value_of(rb);
    if (m == neg_inf()) return R(m);
    return m + math::log(math::exp(ra - m) + math::exp(rb - m));
  }
}

// ---- on Pack (host): lane by lane -------------------------------------------------------

#define HMC_DIST_PACK_UNARY(NAME)                       \
  inline Pack NAME(const Pack& a) {                     \
    Pack r;                                             \
    for (int l = 0; l < kLanes; ++l) r[l] = NAME(a[l]); \
    return r;                                           \
  }
HMC_DIST_PACK_UNARY(lgamma)
HMC_DIST_PACK_UNARY(digamma)
HMC_DIST_PACK_UNARY(trigamma)
HMC_DIST_PACK_UNARY(log1p_exp)
#undef HMC_DIST_PACK_UNARY

// ---- helpers of the multivariate densities -------------------------------------------------

/// The element type of an indexable (a View, PackRow, Row, ...), by value.
template <class V, class... I>
using element_t = std::decay_t<decltype(std::declval<const V&>()(std::declval<I>()...))>;

/// Lane l of an indexable of Packs (or of doubles), as an indexable of doubles.
template <class V>
struct LaneIn {
  const V& v;
  int l;
  template <class... I>
  double operator()(I... i) const {
    return lane(v(i...), l);
  }
};
inline double& lane_ref(Pack& p, int l) { return p[l]; }
inline double& lane_ref(double& x, int) { return x; }
inline Sink lane_ref(Sink s, int) { return s; }
/// Lane l of an output indexable of Packs (or dist::ignore).
template <class V>
struct LaneOut {
  const V& v;
  int l;
  template <class... I>
  decltype(auto) operator()(I... i) const {
    return lane_ref(v(i...), l);
  }
};

}  // namespace hmc::dist
