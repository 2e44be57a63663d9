#pragma once
/// \file
/// \brief Radix sort of doubles carrying their indices (host, internal to the
/// convergence diagnostics). Rank normalisation needs the full permutation of up to
/// ~10^7 split draws; a few counting passes beat a comparison sort there by several times.

#include "hmc/diagnostics/detail/buffer.hpp"

#include <cstdint>
#include <cstring>

namespace hmc::diagnostics::detail {

/// Order-preserving integer key of a double (−0 and +0 map to the same key).
inline std::uint64_t order_key(double v) {
  if (v == 0.0) v = 0.0;  // -0 and +0 are ties
  std::uint64_t u;
  std::memcpy(&u, &v, sizeof u);
  return (u >> 63) != 0 ? ~u : (u | (std::uint64_t{1} << 63));
}

inline double from_order_key(std::uint64_t k) {
  const std::uint64_t u = (k >> 63) != 0 ? (k & ~(std::uint64_t{1} << 63)) : ~k;
  double v;
  std::memcpy(&v, &u, sizeof v);
  return v;
}

/// Order keys in ascending order and, for each, its position in the input. Equal
/// keys are equal values (ties).
struct Sorted {
  Buffer<std::uint64_t> key;
  Buffer<std::uint32_t> index;
  double value(std::size_t i) const { return from_order_key(key[i]); }
};

/// Sorts NaN-free `v`: LSD radix passes over the top 31 key bits only (three
/// 11-bit digits, half the memory traffic of a full 64-bit sort), then each run of
/// keys sharing those bits, short for continuous data, is sorted by the full key.
/// Each pass is stable and each block scatters its own range to offsets counted
/// beforehand, so the result is that of the serial sort: a stable sort by key.
/// Scratch from the current pool (buffer.hpp), as the parallel steps' blocks (parallel.hpp).
Sorted sort_with_index(const Buffer<double>& v);

}  // namespace hmc::diagnostics::detail
