#include "hmc/diagnostics/detail/sort.hpp"

#include "hmc/diagnostics/detail/parallel.hpp"

#include <algorithm>
#include <cstddef>
#include <tuple>
#include <utility>
#include <vector>

namespace hmc::diagnostics::detail {

Sorted sort_with_index(const Buffer<double>& v) {
  constexpr int kBits = 11, kBuckets = 1 << kBits, kFirstPass = 3, kPasses = 6, kLowBits = kFirstPass * kBits;
  const std::size_t n = v.size();
  const int blocks = std::min<int>(blocks_for(n), static_cast<int>(std::max<std::size_t>(1, n)));
  Buffer<std::uint64_t> key(n), key_tmp(n);
  Buffer<std::uint32_t> idx(n), idx_tmp(n);
  // hist[(b * kPasses + p) * kBuckets + digit]: digit counts of block b's range.
  std::vector<std::size_t> hist(static_cast<std::size_t>(blocks) * kPasses * kBuckets, 0);
  const auto block_hist = [&](int b, int p) {
    return hist.data() + (static_cast<std::size_t>(b) * kPasses + p) * kBuckets;
  };
  run_blocks(blocks, [&](int b) {
    const std::size_t lo = block_start(n, blocks, b), hi = block_start(n, blocks, b + 1);
    for (std::size_t i = lo; i < hi; ++i) {
      const std::uint64_t k = order_key(v[i]);
      key[i] = k;
      idx[i] = static_cast<std::uint32_t>(i);
      for (int p = kFirstPass; p < kPasses; ++p) ++block_hist(b, p)[(k >> (p * kBits)) & (kBuckets - 1)];
    }
  });
  bool moved = false;  // the block histograms count the input order until a pass moves keys
  std::vector<std::size_t> total(kBuckets);
  for (int p = kFirstPass; p < kPasses; ++p) {
    const int shift = p * kBits;
    std::fill(total.begin(), total.end(), 0);
    for (int b = 0; b < blocks; ++b)
      for (int d = 0; d < kBuckets; ++d) total[d] += block_hist(b, p)[d];
    // A digit shared by every key leaves the order unchanged.
    if (std::any_of(total.begin(), total.end(), [n](std::size_t c) { return c == n; })) continue;
    if (moved) {
      run_blocks(blocks, [&](int b) {
        std::size_t* h = block_hist(b, p);
        std::fill(h, h + kBuckets, 0);
        const std::size_t lo = block_start(n, blocks, b), hi = block_start(n, blocks, b + 1);
        for (std::size_t i = lo; i < hi; ++i) ++h[(key[i] >> shift) & (kBuckets - 1)];
      });
    }
    // Offsets: digit d of block b goes after all keys with smaller digits and after
    // digit d of the blocks before b.
    std::size_t sum = 0;
    for (int d = 0; d < kBuckets; ++d)
      for (int b = 0; b < blocks; ++b) {
        std::size_t* h = block_hist(b, p);
        const std::size_t c = h[d];
        h[d] = sum;
        sum += c;
      }
    run_blocks(blocks, [&](int b) {
      std::size_t* h = block_hist(b, p);
      const std::size_t lo = block_start(n, blocks, b), hi = block_start(n, blocks, b + 1);
      for (std::size_t i = lo; i < hi; ++i) {
        const std::size_t pos = h[(key[i] >> shift) & (kBuckets - 1)]++;
        key_tmp[pos] = key[i];
        idx_tmp[pos] = idx[i];
      }
    });
    key.swap(key_tmp);
    idx.swap(idx_tmp);
    moved = true;
  }
  key_tmp = Buffer<std::uint64_t>();  // release before the next allocation
  idx_tmp = Buffer<std::uint32_t>();

  const auto runs =
      aligned_blocks(n, blocks, [&](std::size_t i) { return (key[i] >> kLowBits) != (key[i - 1] >> kLowBits); });
  run_blocks(blocks, [&](int b) {
    std::vector<std::pair<std::uint64_t, std::uint32_t>> run;
    const std::size_t end = runs[static_cast<std::size_t>(b) + 1];
    for (std::size_t lo = runs[static_cast<std::size_t>(b)]; lo < end;) {
      std::size_t hi = lo + 1;
      while (hi < end && (key[hi] >> kLowBits) == (key[lo] >> kLowBits)) ++hi;
      if (hi - lo <= 32) {  // insertion sort; equal keys (ties) do not move
        for (std::size_t i = lo + 1; i < hi; ++i) {
          const std::uint64_t k = key[i];
          const std::uint32_t x = idx[i];
          std::size_t j = i;
          for (; j > lo && key[j - 1] > k; --j) {
            key[j] = key[j - 1];
            idx[j] = idx[j - 1];
          }
          key[j] = k;
          idx[j] = x;
        }
      } else if (!std::is_sorted(key.data() + lo, key.data() + hi)) {
        run.clear();
        for (std::size_t i = lo; i < hi; ++i) run.emplace_back(key[i], idx[i]);
        std::sort(run.begin(), run.end());
        for (std::size_t i = lo; i < hi; ++i) std::tie(key[i], idx[i]) = run[i - lo];
      }
      lo = hi;
    }
  });

  return Sorted{std::move(key), std::move(idx)};
}

}  // namespace hmc::diagnostics::detail
