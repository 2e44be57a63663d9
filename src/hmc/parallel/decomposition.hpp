#pragma once
/// \file
/// \brief Contiguous blocks of global particle ids per rank.

#include <cstdint>

namespace hmc::parallel {

/// \brief Rank r owns global ids [begin, begin + count); the first (n mod R) ranks
/// get one extra particle. Any rank count works, including more ranks than particles.
struct Decomposition {
  std::int64_t global = 0;
  int ranks = 1;
  int rank = 0;

  static constexpr std::int64_t block_begin(std::int64_t n, int ranks, int r) {
    const std::int64_t base = n / ranks, extra = n % ranks;
    return r * base + (r < extra ? r : extra);
  }
  std::int64_t begin() const { return block_begin(global, ranks, rank); }
  std::int64_t count() const { return block_begin(global, ranks, rank + 1) - begin(); }
  std::int64_t count_of(int r) const { return block_begin(global, ranks, r + 1) - block_begin(global, ranks, r); }
};

}  // namespace hmc::parallel
