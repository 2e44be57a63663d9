#pragma once
/// \file
/// \brief The type-7 quantile (Hyndman & Fan; linear interpolation between the order
/// statistics at (n − 1)·prob), the one implementation the diagnostics use (host).
///
/// Its users reproduce references bit for bit, and those compute the same quantity
/// with different roundings, so the arithmetic is a parameter:
///  - Type7::kNumpy: h = (n − 1)·prob, x_⌊h⌋ + (h − ⌊h⌋)(x_⌊h⌋+1 − x_⌊h⌋) (the summary's
///    q5, q50, q95, the median). numpy's `quantile(method="linear")` uses this form for
///    h − ⌊h⌋ < 1/2 only (kNumpyLerp), so above 1/2 the two can differ in the last bit;
///  - Type7::kNumpyLerp: numpy's `quantile(method="linear")` bit for bit, as ArviZ 1.x
///    (arviz_stats `_CoreBase.quantile`) calls it: h = (n − 1)·prob, γ = h − ⌊h⌋, then
///    numpy's `_lerp`, a + (b − a)·γ for γ < 1/2 and b − (b − a)·(1 − γ) for γ ≥ 1/2
///    (the thresholds of ess_tail);
///  - Type7::kScipy: scipy's `mquantiles(alphap=1, betap=1)` as ArviZ 0.23's
///    `stats_utils.quantile` calls it, aleph = n·prob + 1 − prob,
///    (1 − γ)·x_k−1 + γ·x_k (the thresholds of ess_quantile and mcse_quantile).

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>
#include <vector>

namespace hmc::diagnostics::detail {

/// \brief The rounding of a type-7 quantile (file comment).
enum class Type7 { kNumpy, kNumpyLerp, kScipy };

/// \brief Type-7 quantile at `prob` of n ≥ 1 values, from kth(k), the k-th smallest
/// (0-based). kth is called once or twice, the second time for the next order
/// statistic (k + 1).
template <class Kth>
double type7_quantile(std::size_t n, double prob, Type7 form, Kth&& kth) {
  if (form == Type7::kScipy) {
    if (n == 1) return kth(0);
    const double m = 1.0 + prob * (1.0 - 1.0 - 1.0);
    const double aleph = static_cast<double>(n) * prob + m;
    const auto k = static_cast<std::size_t>(std::floor(std::clamp(aleph, 1.0, static_cast<double>(n - 1))));
    const double gamma = std::clamp(aleph - static_cast<double>(k), 0.0, 1.0);
    const double lo = kth(k - 1);
    const double hi = kth(k);
    return (1.0 - gamma) * lo + gamma * hi;
  }
  const double h = (static_cast<double>(n) - 1.0) * prob;
  const auto lo = static_cast<std::size_t>(std::floor(h));
  const double x_lo = kth(lo);
  if (lo + 1 >= n) return x_lo;
  const double x_hi = kth(lo + 1);
  const double gamma = h - static_cast<double>(lo);
  if (form == Type7::kNumpyLerp && gamma >= 0.5) return x_hi - (x_hi - x_lo) * (1.0 - gamma);
  return x_lo + gamma * (x_hi - x_lo);
}

/// \brief The 0-based ranks of the order statistics type7_quantile(n, prob, form, ·)
/// reads: {k, k + 1}, or {k, k} when it reads one.
inline std::pair<std::size_t, std::size_t> type7_order_statistics(std::size_t n, double prob, Type7 form) {
  std::size_t read[2] = {0, 0};
  int reads = 0;
  type7_quantile(n, prob, form, [&](std::size_t k) {
    read[reads++] = k;
    return 0.0;
  });
  return {read[0], reads > 1 ? read[1] : read[0]};
}

/// \brief Type-7 quantile of `values` by selection (nth_element, then the smallest
/// value above it); NaN for none. Reorders `values`.
double type7_quantile(std::vector<double>& values, double prob, Type7 form);

}  // namespace hmc::diagnostics::detail
