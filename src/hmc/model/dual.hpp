#pragma once
/// \file
/// \brief Forward-mode dual numbers: a value and one tangent, usable in device code.
///
/// `hmc::Dual{v, t}` carries f and df/ds along one direction s. Arithmetic and the
/// math functions below propagate the tangent by the chain rule, so a log density
/// written once as a template on its scalar type T gives its value for T = double
/// and one directional derivative for T = Dual (see hmc/model/autodiff.hpp).
///
/// Math on either type is spelled `math::exp(x)` (i.e. `hmc::math::exp`): the
/// Dual overloads are added to hmc::math next to the Kokkos ones for double.
/// They also live in hmc::ad, the namespace of Dual, so an unqualified call after
/// `using math::exp;` finds them by argument-dependent lookup whatever the order
/// of includes (hmc/model/transforms.hpp relies on that).
///
/// Comparisons look at values only, so branches (`if (x < 0)`) behave as in double.
/// Not provided: lgamma (its derivative, digamma, is not in the shim).

#include "hmc/core/kokkos_shim.hpp"
#include "hmc/model/reverse.hpp"

namespace hmc {

namespace ad {

/// \brief A value and its derivative along one direction.
struct Dual {
  double value;
  double tangent;

  KOKKOS_INLINE_FUNCTION constexpr Dual() : value(0.0), tangent(0.0) {}
  /// A constant: implicit, so `T x = 1.0;` works for T = double and T = Dual.
  KOKKOS_INLINE_FUNCTION constexpr Dual(double v) : value(v), tangent(0.0) {}  // NOLINT(google-explicit-constructor)
  KOKKOS_INLINE_FUNCTION constexpr Dual(double v, double t) : value(v), tangent(t) {}

  KOKKOS_INLINE_FUNCTION Dual& operator+=(const Dual& o) {
    value += o.value;
    tangent += o.tangent;
    return *this;
  }
  KOKKOS_INLINE_FUNCTION Dual& operator-=(const Dual& o) {
    value -= o.value;
    tangent -= o.tangent;
    return *this;
  }
  KOKKOS_INLINE_FUNCTION Dual& operator*=(const Dual& o) {
    tangent = tangent * o.value + value * o.tangent;
    value *= o.value;
    return *this;
  }
  KOKKOS_INLINE_FUNCTION Dual& operator/=(const Dual& o) {
    const double r = value / o.value;
    tangent = (tangent - r * o.tangent) / o.value;
    value = r;
    return *this;
  }
  KOKKOS_INLINE_FUNCTION Dual& operator+=(double c) {
    value += c;
    return *this;
  }
  KOKKOS_INLINE_FUNCTION Dual& operator-=(double c) {
    value -= c;
    return *this;
  }
  KOKKOS_INLINE_FUNCTION Dual& operator*=(double c) {
    value *= c;
    tangent *= c;
    return *this;
  }
  KOKKOS_INLINE_FUNCTION Dual& operator/=(double c) {
    value /= c;
    tangent /= c;
    return *this;
  }
};

// ---- arithmetic -----------------------------------------------------------------

KOKKOS_INLINE_FUNCTION Dual operator+(const Dual& a) { return a; }
KOKKOS_INLINE_FUNCTION Dual operator-(const Dual& a) { return Dual(-a.value, -a.tangent); }

KOKKOS_INLINE_FUNCTION Dual operator+(const Dual& a, const Dual& b) {
  return Dual(a.value + b.value, a.tangent + b.tangent);
}
KOKKOS_INLINE_FUNCTION Dual operator+(const Dual& a, double b) { return Dual(a.value + b, a.tangent); }
KOKKOS_INLINE_FUNCTION Dual operator+(double a, const Dual& b) { return Dual(a + b.value, b.tangent); }

KOKKOS_INLINE_FUNCTION Dual operator-(const Dual& a, const Dual& b) {
  return Dual(a.value - b.value, a.tangent - b.tangent);
}
KOKKOS_INLINE_FUNCTION Dual operator-(const Dual& a, double b) { return Dual(a.value - b, a.tangent); }
KOKKOS_INLINE_FUNCTION Dual operator-(double a, const Dual& b) { return Dual(a - b.value, -b.tangent); }

KOKKOS_INLINE_FUNCTION Dual operator*(const Dual& a, const Dual& b) {
  return Dual(a.value * b.value, a.tangent * b.value + a.value * b.tangent);
}
KOKKOS_INLINE_FUNCTION Dual operator*(const Dual& a, double b) { return Dual(a.value * b, a.tangent * b); }
KOKKOS_INLINE_FUNCTION Dual operator*(double a, const Dual& b) { return Dual(a * b.value, a * b.tangent); }

KOKKOS_INLINE_FUNCTION Dual operator/(const Dual& a, const Dual& b) {
  const double r = a.value / b.value;
  return Dual(r, (a.tangent - r * b.tangent) / b.value);
}
KOKKOS_INLINE_FUNCTION Dual operator/(const Dual& a, double b) { return Dual(a.value / b, a.tangent / b); }
KOKKOS_INLINE_FUNCTION Dual operator/(double a, const Dual& b) {
  const double r = a / b.value;
  return Dual(r, -r * b.tangent / b.value);
}

// ---- comparisons: values only ---------------------------------------------------

#define HMC_DUAL_COMPARISON(OP)                                                                        \
  KOKKOS_INLINE_FUNCTION bool operator OP(const Dual& a, const Dual& b) { return a.value OP b.value; } \
  KOKKOS_INLINE_FUNCTION bool operator OP(const Dual& a, double b) { return a.value OP b; }            \
  KOKKOS_INLINE_FUNCTION bool operator OP(double a, const Dual& b) { return a OP b.value; }
HMC_DUAL_COMPARISON(==)
HMC_DUAL_COMPARISON(!=)
HMC_DUAL_COMPARISON(<)
HMC_DUAL_COMPARISON(<=)
HMC_DUAL_COMPARISON(>)
HMC_DUAL_COMPARISON(>=)
#undef HMC_DUAL_COMPARISON

// ---- math functions (the double versions are hmc::math's) -----------------------

KOKKOS_INLINE_FUNCTION Dual exp(const Dual& x) {
  const double e = math::exp(x.value);
  return Dual(e, e * x.tangent);
}
KOKKOS_INLINE_FUNCTION Dual log(const Dual& x) { return Dual(math::log(x.value), x.tangent / x.value); }
KOKKOS_INLINE_FUNCTION Dual log1p(const Dual& x) { return Dual(math::log1p(x.value), x.tangent / (1.0 + x.value)); }
KOKKOS_INLINE_FUNCTION Dual expm1(const Dual& x) { return Dual(math::expm1(x.value), math::exp(x.value) * x.tangent); }
KOKKOS_INLINE_FUNCTION Dual sqrt(const Dual& x) {
  const double s = math::sqrt(x.value);
  return Dual(s, 0.5 * x.tangent / s);
}
KOKKOS_INLINE_FUNCTION Dual sin(const Dual& x) { return Dual(math::sin(x.value), math::cos(x.value) * x.tangent); }
KOKKOS_INLINE_FUNCTION Dual cos(const Dual& x) { return Dual(math::cos(x.value), -math::sin(x.value) * x.tangent); }
/// |x|; at x = 0 the tangent is passed through (one-sided derivative from the right).
KOKKOS_INLINE_FUNCTION Dual fabs(const Dual& x) { return x.value < 0.0 ? -x : x; }

/// x^p for a constant exponent: d/dx = p x^(p-1), and 0 for p = 0 (also at x = 0).
KOKKOS_INLINE_FUNCTION Dual pow(const Dual& x, double p) {
  if (p == 0.0) return Dual(1.0, 0.0);
  return Dual(math::pow(x.value, p), p * math::pow(x.value, p - 1.0) * x.tangent);
}
/// a^y for a constant base a > 0: d/dy = a^y log a.
KOKKOS_INLINE_FUNCTION Dual pow(double a, const Dual& y) {
  const double v = math::pow(a, y.value);
  return Dual(v, v * math::log(a) * y.tangent);
}
/// x^y with both varying, x > 0.
KOKKOS_INLINE_FUNCTION Dual pow(const Dual& x, const Dual& y) {
  const double v = math::pow(x.value, y.value);
  return Dual(v, y.value * math::pow(x.value, y.value - 1.0) * x.tangent + v * math::log(x.value) * y.tangent);
}

/// log σ(x); d/dx = σ(-x).
KOKKOS_INLINE_FUNCTION Dual log_sigmoid(const Dual& x) {
  return Dual(math::log_sigmoid(x.value), math::sigmoid(-x.value) * x.tangent);
}
/// σ(x); d/dx = σ(x) σ(-x).
KOKKOS_INLINE_FUNCTION Dual sigmoid(const Dual& x) {
  const double s = math::sigmoid(x.value);
  return Dual(s, s * math::sigmoid(-x.value) * x.tangent);
}

/// Value tests, as for double.
KOKKOS_INLINE_FUNCTION bool isfinite(const Dual& x) { return math::isfinite(x.value); }
KOKKOS_INLINE_FUNCTION bool isnan(const Dual& x) { return math::isnan(x.value); }

}  // namespace ad

using ad::Dual;

/// \brief The value of a double (itself) or of a Dual (dropping the tangent).
KOKKOS_INLINE_FUNCTION constexpr double value_of(double x) { return x; }
KOKKOS_INLINE_FUNCTION constexpr double value_of(const Dual& x) { return x.value; }

/// \brief The tangent of a Dual; 0 for a double (a constant).
KOKKOS_INLINE_FUNCTION constexpr double tangent_of(double) { return 0.0; }
KOKKOS_INLINE_FUNCTION constexpr double tangent_of(const Dual& x) { return x.tangent; }

namespace math {
// `math::exp(x)` works for x of type double (Kokkos), Dual (above) and Var (hmc/model/reverse.hpp).
using ad::cos;
using ad::exp;
using ad::expm1;
using ad::fabs;
using ad::isfinite;
using ad::isnan;
using ad::log;
using ad::log1p;
using ad::log_sigmoid;
using ad::pow;
using ad::sigmoid;
using ad::sin;
using ad::sqrt;
}  // namespace math

}  // namespace hmc
