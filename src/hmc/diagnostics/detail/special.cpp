#include "hmc/diagnostics/detail/special.hpp"

#include <cmath>
#include <limits>

namespace hmc::diagnostics::detail {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kPi = 3.14159265358979323846;

/// Φ⁻¹(p) for 0 < p ≤ 1/2.
double lower_normal_quantile(double p) {
  // P. J. Acklam's rational approximations (relative error < 1.15e-9), central
  // region |p − 1/2| ≤ 1/2 − 0.02425 and lower tail.
  static constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,  -2.759285104469687e+02,
                                 1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                                 6.680131188771972e+01, -1.328068155288572e+01};
  static constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                                 -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                                 3.754408661907416e+00};
  double x;
  if (p < 0.02425) {
    const double q = std::sqrt(-2.0 * std::log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
  } else {
    const double q = p - 0.5, r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1.0);
  }
  // One Halley step on Φ(x) − p (third order: 1e-9 -> rounding level). Φ through
  // erfc keeps full relative accuracy in the lower tail.
  const double e = 0.5 * std::erfc(-x / std::sqrt(2.0)) - p;
  const double u = e * std::sqrt(2.0 * kPi) * std::exp(0.5 * x * x);
  return x - u / (1.0 + 0.5 * x * u);
}

/// Continued fraction of I_x(a, b) (modified Lentz), valid for x < (a+1)/(a+b+2).
double beta_continued_fraction(double x, double a, double b) {
  constexpr double tiny = 1e-300, eps = 4e-16;
  double c = 1.0, d = 1.0 - (a + b) * x / (a + 1.0);
  if (std::fabs(d) < tiny) d = tiny;
  d = 1.0 / d;
  double f = d;
  for (int m = 1; m < 1000000; ++m) {
    // even term d_{2m}
    double num = m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m));
    d = 1.0 + num * d;
    if (std::fabs(d) < tiny) d = tiny;
    c = 1.0 + num / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1.0 / d;
    f *= d * c;
    // odd term d_{2m+1}
    num = -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0));
    d = 1.0 + num * d;
    if (std::fabs(d) < tiny) d = tiny;
    c = 1.0 + num / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1.0 / d;
    const double delta = d * c;
    f *= delta;
    if (std::fabs(delta - 1.0) < eps) break;
  }
  return f;
}

/// Stirling series remainder ω(x) = lnΓ(x) − [(x − ½)ln x − x + ½ln 2π], x ≥ 20
/// (the first omitted term is below 1e-17 there).
double stirling_remainder(double x) {
  const double r = 1.0 / x, r2 = r * r;
  return r * (1.0 / 12 - r2 * (1.0 / 360 - r2 * (1.0 / 1260 - r2 * (1.0 / 1680 - r2 / 1188))));
}

/// log of x^a (1 − x)^b / B(a, b). With lgamma the three ~s·ln s terms cancel and
/// leave an absolute error ~1e-16·s·ln s (1e-8 at s = a + b = 10^7); for large a, b
/// Stirling's form in δ = x(a + b) − a avoids the cancellation:
///   a·ln(1 + δ/a) + b·ln(1 − δ/b) + ½ln(ab/s) − ½ln 2π − ω(a) − ω(b) + ω(s).
double log_beta_density_front(double x, double a, double b) {
  if (a < 20.0 || b < 20.0)
    return a * std::log(x) + b * std::log1p(-x) - (std::lgamma(a) + std::lgamma(b) - std::lgamma(a + b));
  const double s = a + b;
  const double b_part = s - a;
  const double s_err = (a - (s - b_part)) + (b - b_part);  // a + b = s + s_err exactly (Knuth's TwoSum)
  const double delta = std::fma(x, s, -a) + x * s_err;
  return a * std::log1p(delta / a) + b * std::log1p(-delta / b) + 0.5 * std::log(a / s * b) -
         0.5 * std::log(2.0 * kPi) - stirling_remainder(a) - stirling_remainder(b) + stirling_remainder(s);
}

}  // namespace

double normal_quantile(double p) {
  if (std::isnan(p) || p < 0.0 || p > 1.0) return kNaN;
  if (p == 0.0) return -std::numeric_limits<double>::infinity();
  if (p == 1.0) return std::numeric_limits<double>::infinity();
  // 1 − p is exact for p in [1/2, 1] (Sterbenz).
  return p > 0.5 ? -lower_normal_quantile(1.0 - p) : lower_normal_quantile(p);
}

double incomplete_beta(double x, double a, double b) {
  if (std::isnan(x) || !(a > 0.0) || !(b > 0.0)) return kNaN;
  if (x <= 0.0) return 0.0;
  if (x >= 1.0) return 1.0;
  const double log_front = log_beta_density_front(x, a, b);
  if (x < (a + 1.0) / (a + b + 2.0)) return std::exp(log_front) * beta_continued_fraction(x, a, b) / a;
  return 1.0 - std::exp(log_front) * beta_continued_fraction(1.0 - x, b, a) / b;
}

double beta_quantile(double p, double a, double b) {
  if (std::isnan(p) || p < 0.0 || p > 1.0 || !(a > 0.0) || !(b > 0.0)) return kNaN;
  if (p == 0.0) return 0.0;
  if (p == 1.0) return 1.0;
  double lo = 0.0, hi = 1.0;
  for (int i = 0; i < 2000; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (mid <= lo || mid >= hi) break;
    (incomplete_beta(mid, a, b) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

}  // namespace hmc::diagnostics::detail
