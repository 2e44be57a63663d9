#pragma once
/// \file
/// \brief Overflow-checked 64-bit size arithmetic for the estimates of memory and disk:
/// a product or a sum that would overflow is INT64_MAX, so an absurd config asks for "too
/// much", never for a negative or wrapped amount.

#include <cstdint>
#include <limits>

namespace hmc {

/// \brief a * b, saturating at INT64_MAX (0 when either is not positive).
constexpr std::int64_t mul_sat(std::int64_t a, std::int64_t b) {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  if (a <= 0 || b <= 0) return 0;
  return a > kMax / b ? kMax : a * b;
}

/// \brief a + b (b >= 0), saturating at INT64_MAX.
constexpr std::int64_t add_sat(std::int64_t a, std::int64_t b) {
  return a > std::numeric_limits<std::int64_t>::max() - b ? std::numeric_limits<std::int64_t>::max() : a + b;
}

}  // namespace hmc
