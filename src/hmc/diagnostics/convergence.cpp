#include "hmc/diagnostics/convergence.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <mutex>
#include <new>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

// Every statistic transcribes ArviZ 0.23.4 (arviz/stats/diagnostics.py: _rhat,
// _rhat_rank, _ess, _ess_bulk, _ess_tail, _ess_mean, _ess_quantile, _mcse_mean,
// _mcse_quantile, _bfmi, _z_scale, _split_chains; arviz/stats/stats_utils.py:
// autocov, quantile), keeping its order of operations where rounding could show.
// The algorithms themselves are those of Vehtari et al. (2021) and, for nested
// R-hat, Margossian et al. (2024, arXiv:2110.13017), Eqs. (15)-(19) as numbered in
// the version the posterior R package's rhat_nested cites.
//
// Parallel steps split their work into blocks whose results either land in
// disjoint places or are combined in a fixed order (sums in the order a serial loop
// would add them), so no statistic depends on the number of threads.

namespace hmc::diagnostics {

// ---------------------------------------------------------------------------
// Parallel blocks.

namespace detail {

namespace {
std::atomic<int> g_forced_blocks{0};
/// Threads this thread may use for its parallel steps (0: all of OpenMP's); set
/// inside run_pair's two halves.
thread_local int t_threads = 0;

int available_threads() {
  if (t_threads > 0) return t_threads;
#ifdef _OPENMP
  if (!omp_in_parallel()) return std::max(1, omp_get_max_threads());
#endif
  return 1;
}
}  // namespace

double mean(const double* p, std::size_t n) {
  double s = 0.0;
  for (std::size_t i = 0; i < n; ++i) s += p[i];
  return s / static_cast<double>(n);
}

double variance(const double* p, std::size_t n) {
  const double m = mean(p, n);
  double ss = 0.0;
  for (std::size_t i = 0; i < n; ++i) ss += (p[i] - m) * (p[i] - m);
  return ss / static_cast<double>(n - 1);
}

int parallel_blocks() {
  const int forced = g_forced_blocks.load();
  return forced > 0 ? forced : available_threads();
}

void set_blocks_for_testing(int blocks) { g_forced_blocks.store(blocks > 0 ? blocks : 0); }

void run_blocks(int blocks, const std::function<void(int)>& f) {
  if (blocks <= 0) return;
  const int threads = std::min(blocks, available_threads());
  if (threads <= 1) {
    for (int b = 0; b < blocks; ++b) f(b);
    return;
  }
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(blocks));
#ifdef _OPENMP
#pragma omp parallel for schedule(static, 1) num_threads(threads)
#endif
  for (int b = 0; b < blocks; ++b) {
    try {
      f(b);
    } catch (...) {
      errors[static_cast<std::size_t>(b)] = std::current_exception();
    }
  }
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace detail

namespace {

using detail::mean;
using detail::run_blocks;
using detail::variance;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kPi = 3.14159265358979323846;

/// Blocks for `work` elements: one per thread, but not below ~16k elements a block
/// (a count forced for tests applies down to one element a block).
int blocks_for(std::size_t work) {
  constexpr std::size_t kMinWork = 16384;
  const int blocks = detail::parallel_blocks();
  const std::size_t limit = detail::g_forced_blocks.load() > 0 ? work : work / kMinWork;
  return static_cast<int>(std::max<std::size_t>(1, std::min<std::size_t>(static_cast<std::size_t>(blocks), limit)));
}

/// Start of block b of n items cut into `blocks` equal ranges.
std::size_t block_start(std::size_t n, int blocks, int b) {
  return static_cast<std::size_t>(static_cast<unsigned __int128>(n) * static_cast<unsigned>(b) /
                                  static_cast<unsigned>(blocks));
}

/// f(begin, end) over `blocks_for(n)` contiguous ranges of [0, n).
template <class F>
void parallel_ranges(std::size_t n, std::size_t work, F&& f) {
  const int blocks = std::min<int>(blocks_for(work), static_cast<int>(std::min<std::size_t>(n, 1u << 30)));
  if (blocks <= 1) {
    if (n > 0) f(std::size_t{0}, n);
    return;
  }
  run_blocks(blocks, [&](int b) { f(block_start(n, blocks, b), block_start(n, blocks, b + 1)); });
}

/// Freed scratch blocks kept for reuse. On the machines this runs on, touching
/// freshly mapped memory costs about ten times as much as reusing it (page faults
/// and zeroing: ~1 ms per MB), and every statistic here needs several arrays of tens
/// of MB; with a pool, all parameters after the first run in memory already mapped.
class Pool {
 public:
  Pool() = default;
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;
  ~Pool() {
    for (const auto& b : free_) std::free(b.first);
  }

  /// A block of at least `bytes`: the smallest free one that fits, else a new one.
  std::pair<void*, std::size_t> take(std::size_t bytes) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      auto best = free_.end();
      for (auto it = free_.begin(); it != free_.end(); ++it)
        if (it->second >= bytes && (best == free_.end() || it->second < best->second)) best = it;
      if (best != free_.end()) {
        const auto block = *best;
        free_.erase(best);
        return block;
      }
    }
    void* p = std::malloc(bytes);
    if (p == nullptr) throw std::bad_alloc();
    return {p, bytes};
  }
  void give(void* p, std::size_t bytes) {
    const std::lock_guard<std::mutex> lock(mutex_);
    free_.emplace_back(p, bytes);
  }

 private:
  std::mutex mutex_;
  std::vector<std::pair<void*, std::size_t>> free_;
};

/// The pool Buffers of this thread draw from (none: plain malloc/free).
thread_local Pool* t_pool = nullptr;

/// Makes `pool` the current thread's pool until the end of the scope.
class PoolScope {
 public:
  explicit PoolScope(Pool& pool) : previous_(std::exchange(t_pool, &pool)) {}
  ~PoolScope() { t_pool = previous_; }
  PoolScope(const PoolScope&) = delete;
  PoolScope& operator=(const PoolScope&) = delete;

 private:
  Pool* previous_;
};

/// Runs `a` and `b` at the same time, each with half of this thread's threads, or,
/// with one thread, `serial` (the same work in an order that needs no waiting). They
/// share the current pool. The first exception is rethrown after both have ended.
void run_pair(const std::function<void()>& a, const std::function<void()>& b, const std::function<void()>& serial) {
  const int threads = detail::available_threads();
  if (threads < 2) {
    serial();
    return;
  }
#ifdef _OPENMP
  Pool* const pool = t_pool;
  std::exception_ptr errors[2];
  const int levels = omp_get_max_active_levels();
  omp_set_max_active_levels(std::max(levels, omp_get_active_level() + 2));
#pragma omp parallel num_threads(2)
  {
    const int id = omp_get_thread_num();
    const int saved_threads = detail::t_threads;
    Pool* const saved_pool = t_pool;
    detail::t_threads = id == 0 ? (threads + 1) / 2 : threads / 2;
    t_pool = pool;
    try {
      (id == 0 ? a : b)();
    } catch (...) {
      errors[id] = std::current_exception();
    }
    detail::t_threads = saved_threads;
    t_pool = saved_pool;
  }
  omp_set_max_active_levels(levels);
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
#else
  (void)a;
  (void)b;
  serial();
#endif
}

/// A one-shot signal from one task of run_pair to the other; fail() releases the
/// waiter too (wait() then returns false), so an exception cannot leave it stuck.
class Latch {
 public:
  void set(bool ok = true) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
      ok_ = ok;
    }
    cv_.notify_all();
  }
  bool wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [this] { return done_; });
    return ok_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false, ok_ = false;
};

/// An uninitialised array, from the current pool (which must outlive it) if any.
template <class T>
class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(std::size_t n) : n_(n), pool_(t_pool) {
    if (n == 0) return;
    const std::size_t bytes = n * sizeof(T);
    if (pool_ != nullptr) {
      std::tie(p_, bytes_) = pool_->take(bytes);
    } else {
      p_ = std::malloc(bytes);
      if (p_ == nullptr) throw std::bad_alloc();
      bytes_ = bytes;
    }
  }
  Buffer(Buffer&& o) noexcept
      : p_(std::exchange(o.p_, nullptr)),
        n_(std::exchange(o.n_, 0)),
        bytes_(std::exchange(o.bytes_, 0)),
        pool_(std::exchange(o.pool_, nullptr)) {}
  Buffer& operator=(Buffer&& o) noexcept {
    swap(o);
    return *this;
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() {
    if (p_ == nullptr) return;
    if (pool_ != nullptr) {
      pool_->give(p_, bytes_);
    } else {
      std::free(p_);
    }
  }

  T* data() { return static_cast<T*>(p_); }
  const T* data() const { return static_cast<const T*>(p_); }
  std::size_t size() const { return n_; }
  T& operator[](std::size_t i) { return data()[i]; }
  const T& operator[](std::size_t i) const { return data()[i]; }
  void swap(Buffer& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
    std::swap(bytes_, o.bytes_);
    std::swap(pool_, o.pool_);
  }

 private:
  void* p_ = nullptr;
  std::size_t n_ = 0, bytes_ = 0;
  Pool* pool_ = nullptr;
};

/// Draws as a dense row-major [chain][draw] matrix.
struct Matrix {
  Buffer<double> v;
  int rows = 0, cols = 0;
  const double* row(int r) const { return v.data() + static_cast<std::size_t>(r) * cols; }
};

bool has_nan(const ChainDraws& x) {
  std::vector<char> found(static_cast<std::size_t>(std::max(1, x.chains)), 0);
  parallel_ranges(static_cast<std::size_t>(x.chains), static_cast<std::size_t>(x.chains) * x.draws,
                  [&](std::size_t c0, std::size_t c1) {
                    for (std::size_t c = c0; c < c1; ++c)
                      for (int t = 0; t < x.draws; ++t)
                        if (std::isnan(x(static_cast<int>(c), t))) {
                          found[c] = 1;
                          break;
                        }
                  });
  return std::find(found.begin(), found.end(), 1) != found.end();
}

/// Any draw −0.0 (ordered as +0.0 by the sort, so the order statistics it gives
/// could differ from nth_element's in the sign of a zero).
bool has_negative_zero(const ChainDraws& x) {
  std::vector<char> found(static_cast<std::size_t>(std::max(1, x.chains)), 0);
  parallel_ranges(static_cast<std::size_t>(x.chains), static_cast<std::size_t>(x.chains) * x.draws,
                  [&](std::size_t c0, std::size_t c1) {
                    for (std::size_t c = c0; c < c1; ++c)
                      for (int t = 0; t < x.draws; ++t) {
                        const double v = x(static_cast<int>(c), t);
                        if (v == 0.0 && std::signbit(v)) {
                          found[c] = 1;
                          break;
                        }
                      }
                  });
  return std::find(found.begin(), found.end(), 1) != found.end();
}

/// ArviZ's `_not_valid(ary, shape_kwargs=dict(min_draws=4, min_chains=...))`.
bool not_valid(const ChainDraws& x, int min_chains) {
  return x.data == nullptr || x.chains < min_chains || x.chains < 1 || x.draws < 4 || has_nan(x);
}

/// Split chains, `f` applied to every kept draw. Rows 0..C-1 hold the first halves,
/// rows C..2C-1 the second halves (ArviZ's `_split_chains` stacks them that way);
/// the middle draw of an odd-length chain belongs to neither.
template <class F>
Matrix split(const ChainDraws& x, F f) {
  Matrix m;
  const int half = x.draws / 2;
  m.rows = 2 * x.chains;
  m.cols = half;
  m.v = Buffer<double>(static_cast<std::size_t>(m.rows) * half);
  parallel_ranges(static_cast<std::size_t>(x.chains), static_cast<std::size_t>(x.chains) * x.draws,
                  [&](std::size_t c0, std::size_t c1) {
                    for (auto c = static_cast<int>(c0); c < static_cast<int>(c1); ++c) {
                      double* first = m.v.data() + static_cast<std::size_t>(c) * half;
                      double* second = m.v.data() + static_cast<std::size_t>(x.chains + c) * half;
                      for (int t = 0; t < half; ++t) {
                        first[t] = f(x(c, t));
                        second[t] = f(x(c, x.draws - half + t));
                      }
                    }
                  });
  return m;
}

Matrix split(const ChainDraws& x) {
  return split(x, [](double v) { return v; });
}

/// All draws, chain after chain.
std::vector<double> flatten(const ChainDraws& x) {
  std::vector<double> all;
  all.reserve(static_cast<std::size_t>(x.chains) * x.draws);
  for (int c = 0; c < x.chains; ++c)
    for (int t = 0; t < x.draws; ++t) all.push_back(x(c, t));
  return all;
}

/// variance(flatten(x)) without the copy: the same sums in the same order.
double variance_of_all(const ChainDraws& x) {
  const std::size_t n = static_cast<std::size_t>(x.chains) * static_cast<std::size_t>(x.draws);
  double s = 0.0;
  for (int c = 0; c < x.chains; ++c)
    for (int t = 0; t < x.draws; ++t) s += x(c, t);
  const double m = s / static_cast<double>(n);
  double ss = 0.0;
  for (int c = 0; c < x.chains; ++c)
    for (int t = 0; t < x.draws; ++t) ss += (x(c, t) - m) * (x(c, t) - m);
  return ss / static_cast<double>(n - 1);
}

// ---------------------------------------------------------------------------
// Sorting: radix sort of order-preserving integer keys, carrying the indices.
// Rank normalisation needs the full permutation of up to ~10^7 split draws; a
// few counting passes beat a comparison sort there by several times.

std::uint64_t order_key(double v) {
  if (v == 0.0) v = 0.0;  // -0 and +0 are ties
  std::uint64_t u;
  std::memcpy(&u, &v, sizeof u);
  return (u >> 63) != 0 ? ~u : (u | (std::uint64_t{1} << 63));
}

double from_order_key(std::uint64_t k) {
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

/// Block boundaries of [0, n) moved forward to the next i with differs(i) (i = 0 and
/// i = n always qualify), so that no block splits a run.
template <class Differs>
std::vector<std::size_t> aligned_blocks(std::size_t n, int blocks, Differs differs) {
  std::vector<std::size_t> start(static_cast<std::size_t>(blocks) + 1, n);
  start[0] = 0;
  for (int b = 1; b < blocks; ++b) {
    std::size_t s = std::max(start[static_cast<std::size_t>(b) - 1], block_start(n, blocks, b));
    while (s > 0 && s < n && !differs(s)) ++s;
    start[static_cast<std::size_t>(b)] = s;
  }
  return start;
}

/// Sorts NaN-free `v`: LSD radix passes over the top 31 key bits only (three
/// 11-bit digits, half the memory traffic of a full 64-bit sort), then each run of
/// keys sharing those bits, short for continuous data, is sorted by the full key.
/// Each pass is stable and each block scatters its own range to offsets counted
/// beforehand, so the result is that of the serial sort: a stable sort by key.
Sorted sort_with_index(const Buffer<double>& v) {
  constexpr int kBits = 11, kBuckets = 1 << kBits, kFirstPass = 3, kPasses = 6, kLowBits = kFirstPass * kBits;
  const std::size_t n = v.size();
  const int blocks = std::min<int>(blocks_for(n), static_cast<int>(std::max<std::size_t>(1, n)));
  Buffer<std::uint64_t> key(n), key_tmp(n);
  Buffer<std::uint32_t> idx(n), idx_tmp(n);
  // hist[(b * kPasses + p) * kBuckets + digit]: digit counts of block b's range.
  std::vector<std::size_t> hist(static_cast<std::size_t>(blocks) * kPasses * kBuckets, 0);
  const auto block_hist = [&](int b, int p) { return hist.data() + (static_cast<std::size_t>(b) * kPasses + p) * kBuckets; };
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

  const auto runs = aligned_blocks(n, blocks, [&](std::size_t i) { return (key[i] >> kLowBits) != (key[i - 1] >> kLowBits); });
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

/// Φ⁻¹((r − 3/8)/(S + 1/4)) for integer ranks r = 1..⌈S/2⌉ (score_table()); the
/// upper half follows by symmetry (scipy's ndtri also evaluates p > 1/2 as −ndtri(1 − p)).
class NormalScores {
 public:
  NormalScores(std::size_t size, const std::vector<double>& table) : size_(size), denom_(denom(size)), table_(table) {}

  static double denom(std::size_t size) { return static_cast<double>(size) - 2.0 * 0.375 + 1.0; }
  static double of_rank(double r, double denom) { return detail::normal_quantile((r - 0.375) / denom); }

  /// Score of the average rank (lo + 1 + hi) / 2 shared by sorted positions [lo, hi).
  double of_positions(std::size_t lo, std::size_t hi) const {
    if (hi == lo + 1) {  // no tie: an integer rank
      const std::size_t r = hi;
      return r <= table_.size() ? table_[r - 1] : -table_[size_ - r];
    }
    return of_rank(0.5 * static_cast<double>(lo + 1 + hi), denom_);
  }

 private:
  std::size_t size_;
  double denom_;
  const std::vector<double>& table_;
};

/// z[s.index[k]] = normal score of the (average) rank of the k-th smallest value;
/// ties are equal neighbouring keys.
void rank_scores(const Sorted& s, const NormalScores& scores, Buffer<double>& z) {
  const std::size_t n = s.key.size();
  if (z.size() != n) z = Buffer<double>(n);
  const int blocks = blocks_for(n);
  const auto start = aligned_blocks(n, blocks, [&](std::size_t i) { return s.key[i] != s.key[i - 1]; });
  run_blocks(blocks, [&](int b) {
    const std::size_t end = start[static_cast<std::size_t>(b) + 1];
    std::size_t i = start[static_cast<std::size_t>(b)];
    while (i < end) {
      std::size_t j = i + 1;
      while (j < end && s.key[j] == s.key[i]) ++j;
      const double score = scores.of_positions(i, j);
      for (std::size_t k = i; k < j; ++k) z[s.index[k]] = score;
      i = j;
    }
  });
}

/// rank_scores of the sorted split draws folded about their median, |x − med|,
/// without sorting again: |x − med| is non-increasing over the sorted lower half and
/// non-decreasing over the upper half, so one merge (walking down the lower half and
/// up the upper half) visits the folded keys in order; each run of equal keys (a tie)
/// gets the score of its average rank. One pass, no array besides z.
void tail_rank_scores(const Sorted& sorted, const NormalScores& scores, Buffer<double>& z) {
  const std::size_t size = sorted.key.size(), mid = size / 2;
  if (z.size() != size) z = Buffer<double>(size);
  const double median = (sorted.value(mid - 1) + sorted.value(mid)) / 2.0;
  const auto fold_key = [&](std::size_t i) { return order_key(std::fabs(sorted.value(i) - median)); };
  std::ptrdiff_t a = static_cast<std::ptrdiff_t>(mid) - 1;  // walks down the lower half
  std::size_t b = mid;                                      // walks up the upper half
  std::uint64_t key_a = a >= 0 ? fold_key(static_cast<std::size_t>(a)) : 0, key_b = b < size ? fold_key(b) : 0;
  std::vector<std::uint32_t> tie;  // indices of the current run of equal keys
  std::uint64_t tie_key = 0;
  std::size_t tie_start = 0;
  for (std::size_t out = 0; out < size; ++out) {
    std::uint64_t key;
    std::uint32_t index;
    if (a < 0 || (b < size && key_b < key_a)) {
      key = key_b;
      index = sorted.index[b++];
      if (b < size) key_b = fold_key(b);
    } else {
      key = key_a;
      index = sorted.index[static_cast<std::size_t>(a--)];
      if (a >= 0) key_a = fold_key(static_cast<std::size_t>(a));
    }
    if (out > 0 && key != tie_key) {
      const double score = scores.of_positions(tie_start, out);
      for (std::uint32_t i : tie) z[i] = score;
      tie.clear();
      tie_start = out;
    }
    tie_key = key;
    tie.push_back(index);
  }
  const double score = scores.of_positions(tie_start, size);
  for (std::uint32_t i : tie) z[i] = score;
}

// ---------------------------------------------------------------------------
// FFT autocovariance.

/// In-place iterative radix-2 FFT, X_k = Σ_j x_j e^{−2πi jk/n}.
class Fft {
 public:
  explicit Fft(int n) : n_(n), rev_(n) {
    int bits = 0;
    while ((1 << bits) < n) ++bits;
    for (int i = 0; i < n; ++i) {
      int r = 0;
      for (int b = 0; b < bits; ++b) r |= ((i >> b) & 1) << (bits - 1 - b);
      rev_[i] = r;
    }
    std::vector<double> cos(n / 2), sin(n / 2);
    for (int k = 0; k < n / 2; ++k) {
      const double a = -2.0 * kPi * k / n;
      cos[k] = std::cos(a);
      sin[k] = std::sin(a);
    }
    // The twiddles of the stage of length len at [len/2 − 1, len − 1), contiguous.
    tw_re_.resize(static_cast<std::size_t>(std::max(1, n - 1)));
    tw_im_.resize(tw_re_.size());
    for (int len = 2; len <= n; len <<= 1) {
      const int half = len / 2, step = n / len;
      for (int j = 0; j < half; ++j) {
        tw_re_[half - 1 + j] = cos[j * step];
        tw_im_[half - 1 + j] = sin[j * step];
      }
    }
  }

  void forward(double* re, double* im) const {
    for (int i = 0; i < n_; ++i)
      if (i < rev_[i]) {
        std::swap(re[i], re[rev_[i]]);
        std::swap(im[i], im[rev_[i]]);
      }
    stages(2, re, im);
  }

  /// forward() of x − mx (real part) and y − my (imaginary part; 0 if y is null),
  /// m ≤ n/2 values zero-padded to n. The inputs land at the bit-reversed
  /// positions, which are even; their odd neighbours hold padding, so the first
  /// stage is x' = x + 0 (as the butterfly computes it: -0 becomes +0) and x.
  void forward_padded(const double* x, double mx, const double* y, double my, int m, double* re, double* im) const {
    for (int i = 0; i < n_ / 2; ++i) {
      const int p = rev_[i];
      const double a = i < m ? x[i] - mx : 0.0;
      const double b = i < m && y != nullptr ? y[i] - my : 0.0;
      re[p] = a + 0.0;
      re[p + 1] = a;
      im[p] = b + 0.0;
      im[p + 1] = b;
    }
    stages(4, re, im);
  }

 private:
  void stages(int first_len, double* re, double* im) const {
    for (int len = first_len; len <= n_; len <<= 1) {
      const int half = len / 2;
#if defined(__SSE2__)
      // Two butterflies at a time: the same IEEE operations as the scalar loop below.
      if (half % 2 == 0) {
        const double* wr = tw_re_.data() + half - 1;
        const double* wi = tw_im_.data() + half - 1;
        for (int start = 0; start < n_; start += len) {
          double* ra = re + start;
          double* rb = ra + half;
          double* ia = im + start;
          double* ib = ia + half;
          for (int j = 0; j < half; j += 2) {
            const __m128d w_r = _mm_loadu_pd(wr + j), w_i = _mm_loadu_pd(wi + j);
            const __m128d b_r = _mm_loadu_pd(rb + j), b_i = _mm_loadu_pd(ib + j);
            const __m128d a_r = _mm_loadu_pd(ra + j), a_i = _mm_loadu_pd(ia + j);
            const __m128d tr = _mm_sub_pd(_mm_mul_pd(b_r, w_r), _mm_mul_pd(b_i, w_i));
            const __m128d ti = _mm_add_pd(_mm_mul_pd(b_r, w_i), _mm_mul_pd(b_i, w_r));
            _mm_storeu_pd(rb + j, _mm_sub_pd(a_r, tr));
            _mm_storeu_pd(ib + j, _mm_sub_pd(a_i, ti));
            _mm_storeu_pd(ra + j, _mm_add_pd(a_r, tr));
            _mm_storeu_pd(ia + j, _mm_add_pd(a_i, ti));
          }
        }
        continue;
      }
#endif
      const double* __restrict wr = tw_re_.data() + half - 1;
      const double* __restrict wi = tw_im_.data() + half - 1;
      for (int start = 0; start < n_; start += len) {
        double* __restrict ra = re + start;
        double* __restrict rb = re + start + half;
        double* __restrict ia = im + start;
        double* __restrict ib = im + start + half;
        for (int j = 0; j < half; ++j) {
          const double tr = rb[j] * wr[j] - ib[j] * wi[j];
          const double ti = rb[j] * wi[j] + ib[j] * wr[j];
          rb[j] = ra[j] - tr;
          ib[j] = ia[j] - ti;
          ra[j] += tr;
          ia[j] += ti;
        }
      }
    }
  }

  int n_;
  std::vector<int> rev_;
  std::vector<double> tw_re_, tw_im_;
};

/// Mean over chains of each chain's autocovariance at lags 0..n-1,
/// acov_c(t) = (1/n) Σ_i (x_i − x̄)(x_{i+t} − x̄), as ArviZ's `autocov` computes it:
/// FFT zero-padded to ≥ 2n (a power of two here; any length ≥ 2n − 1 gives the
/// same linear correlation). By linearity the mean needs a single inverse transform
/// of the summed power spectra, and two real chains share one complex transform:
/// with Z = FFT(x + iy), |X_k|² + |Y_k|² = (|Z_k|² + |Z_{N−k}|²) / 2.
/// The pairs' spectra are computed in parallel, a chunk of pairs at a time, and
/// added to the sum in pair order, as one serial loop would add them.
std::vector<double> mean_autocovariance(const Matrix& m, const std::vector<double>& chain_mean) {
  const int n = m.cols;
  int size = 1;
  while (size < 2 * n) size <<= 1;
  const Fft fft(size);
  const auto usize = static_cast<std::size_t>(size);
  const int pairs = (m.rows + 1) / 2;
  const int blocks = std::min(blocks_for(static_cast<std::size_t>(m.rows) * n), pairs);
  // Up to 8 MB of spectra per chunk: few synchronisations, and the sums stream.
  const int chunk = std::max(blocks, std::min(pairs, std::max(1, (1 << 17) / size)));
  std::vector<double> power(usize, 0.0);
  Buffer<double> spectra(static_cast<std::size_t>(chunk) * usize), scratch(static_cast<std::size_t>(blocks) * 2 * usize);
  for (int c0 = 0; c0 < pairs; c0 += chunk) {
    const int c1 = std::min(pairs, c0 + chunk);
    run_blocks(blocks, [&](int b) {
      double* re = scratch.data() + static_cast<std::size_t>(b) * 2 * usize;
      double* im = re + usize;
      const auto p0 = static_cast<int>(c0 + block_start(static_cast<std::size_t>(c1 - c0), blocks, b));
      const auto p1 = static_cast<int>(c0 + block_start(static_cast<std::size_t>(c1 - c0), blocks, b + 1));
      for (int pair = p0; pair < p1; ++pair) {
        const int r = 2 * pair;
        const bool both = r + 1 < m.rows;
        fft.forward_padded(m.row(r), chain_mean[r], both ? m.row(r + 1) : nullptr, both ? chain_mean[r + 1] : 0.0, n,
                           re, im);
        double* out = spectra.data() + static_cast<std::size_t>(pair - c0) * usize;
        if (both) {
          // q = (size − k) mod size: 0 for k = 0, size − k after.
          out[0] = 0.5 * (re[0] * re[0] + im[0] * im[0] + re[0] * re[0] + im[0] * im[0]);
          for (int k = 1; k < size; ++k) {
            const int q = size - k;
            out[k] = 0.5 * (re[k] * re[k] + im[k] * im[k] + re[q] * re[q] + im[q] * im[q]);
          }
        } else {
          for (int k = 0; k < size; ++k) out[k] = re[k] * re[k] + im[k] * im[k];
        }
      }
    });
    run_blocks(blocks, [&](int b) {
      const std::size_t k0 = block_start(usize, blocks, b), k1 = block_start(usize, blocks, b + 1);
      for (int pair = c0; pair < c1; ++pair) {
        const double* in = spectra.data() + static_cast<std::size_t>(pair - c0) * usize;
        for (std::size_t k = k0; k < k1; ++k) power[k] += in[k];
      }
    });
  }
  // The summed spectrum is real and even, so the forward transform is the inverse
  // up to the 1/size factor.
  std::vector<double> im(usize, 0.0);
  fft.forward(power.data(), im.data());
  std::vector<double> acov(n);
  const double scale = 1.0 / (static_cast<double>(size) * n * m.rows);
  for (int t = 0; t < n; ++t) acov[t] = power[t] * scale;
  return acov;
}

/// ArviZ's `_ess` on a [chain][draw] matrix (relative=False).
double ess_of(const Matrix& m) {
  const std::size_t total = m.v.size();
  const int blocks = blocks_for(total);
  std::vector<double> lo(static_cast<std::size_t>(blocks)), hi(lo.size());
  std::vector<char> nan(lo.size(), 0);
  run_blocks(blocks, [&](int b) {
    const std::size_t i0 = block_start(total, blocks, b), i1 = block_start(total, blocks, b + 1);
    double mn = std::numeric_limits<double>::infinity(), mx = -mn;
    for (std::size_t i = i0; i < i1; ++i) {
      const double v = m.v[i];
      if (std::isnan(v)) nan[static_cast<std::size_t>(b)] = 1;
      mn = v < mn ? v : mn;
      mx = v > mx ? v : mx;
    }
    lo[static_cast<std::size_t>(b)] = mn;
    hi[static_cast<std::size_t>(b)] = mx;
  });
  if (std::find(nan.begin(), nan.end(), 1) != nan.end()) return kNaN;
  // Only the range matters here, so the per-block extremes may be combined in any order.
  if (*std::max_element(hi.begin(), hi.end()) - *std::min_element(lo.begin(), lo.end()) < 1e-15)
    return static_cast<double>(total);  // np.finfo(float).resolution
  const int n_chain = m.rows, n_draw = m.cols;
  std::vector<double> chain_mean(n_chain);
  parallel_ranges(static_cast<std::size_t>(n_chain), total, [&](std::size_t c0, std::size_t c1) {
    for (std::size_t c = c0; c < c1; ++c) chain_mean[c] = mean(m.row(static_cast<int>(c)), n_draw);
  });
  const std::vector<double> acov = mean_autocovariance(m, chain_mean);

  const double mean_var = acov[0] * n_draw / (n_draw - 1.0);
  double var_plus = mean_var * (n_draw - 1.0) / n_draw;
  if (n_chain > 1) var_plus += variance(chain_mean.data(), chain_mean.size());

  std::vector<double> rho(n_draw, 0.0);
  double rho_even = 1.0;
  rho[0] = rho_even;
  double rho_odd = 1.0 - (mean_var - acov[1]) / var_plus;
  rho[1] = rho_odd;

  // Geyer's initial positive sequence.
  int t = 1;
  while (t < n_draw - 3 && (rho_even + rho_odd) > 0.0) {
    rho_even = 1.0 - (mean_var - acov[t + 1]) / var_plus;
    rho_odd = 1.0 - (mean_var - acov[t + 2]) / var_plus;
    if ((rho_even + rho_odd) >= 0) {
      rho[t + 1] = rho_even;
      rho[t + 2] = rho_odd;
    }
    t += 2;
  }
  const int max_t = t - 2;
  if (rho_even > 0) rho[max_t + 1] = rho_even;  // max_t >= -1
  // Geyer's initial monotone sequence.
  t = 1;
  while (t <= max_t - 2) {
    if ((rho[t + 1] + rho[t + 2]) > (rho[t - 1] + rho[t])) {
      rho[t + 1] = (rho[t - 1] + rho[t]) / 2.0;
      rho[t + 2] = rho[t + 1];
    }
    t += 2;
  }

  const double ess = static_cast<double>(n_chain) * n_draw;
  double sum_head = 0.0;
  for (int i = 0; i <= max_t; ++i) sum_head += rho[i];
  double tau_hat = -1.0 + 2.0 * sum_head + (max_t + 1 < n_draw ? rho[max_t + 1] : 0.0);
  tau_hat = std::max(tau_hat, 1.0 / std::log10(ess));
  for (double r : rho)
    if (std::isnan(r)) return kNaN;
  return ess / tau_hat;
}

/// ArviZ's `_rhat` (classic R-hat of the given chains).
double rhat_of(const Matrix& m) {
  const int n = m.cols;
  std::vector<double> chain_mean(m.rows), chain_var(m.rows);
  parallel_ranges(static_cast<std::size_t>(m.rows), m.v.size(), [&](std::size_t c0, std::size_t c1) {
    for (auto c = static_cast<int>(c0); c < static_cast<int>(c1); ++c) {
      chain_mean[c] = mean(m.row(c), n);
      chain_var[c] = variance(m.row(c), n);
    }
  });
  const double between = n * variance(chain_mean.data(), chain_mean.size());
  const double within = mean(chain_var.data(), chain_var.size());
  return std::sqrt((between / within + n - 1) / n);
}

/// R's type-7 quantile of `n` draws, computed as scipy's `mquantiles(alphap=1,
/// betap=1)` does (ArviZ's `stats_utils.quantile`), from kth(k), the k-th smallest.
template <class Kth>
double quantile7(std::size_t n, double prob, Kth kth) {
  if (n == 1) return kth(0);
  const double m = 1.0 + prob * (1.0 - 1.0 - 1.0);
  const double aleph = static_cast<double>(n) * prob + m;
  const auto k = static_cast<std::size_t>(std::floor(std::clamp(aleph, 1.0, static_cast<double>(n - 1))));
  const double gamma = std::clamp(aleph - static_cast<double>(k), 0.0, 1.0);
  const double lo = kth(k - 1);
  const double hi = kth(k);
  return (1.0 - gamma) * lo + gamma * hi;
}

/// The same of all draws, by selection. Reorders `all`.
double quantile7(std::vector<double>& all, double prob) {
  const std::size_t n = all.size();
  if (n == 1) return all[0];
  const double m = 1.0 + prob * (1.0 - 1.0 - 1.0);
  const double aleph = static_cast<double>(n) * prob + m;
  const auto k = static_cast<std::size_t>(std::floor(std::clamp(aleph, 1.0, static_cast<double>(n - 1))));
  const double gamma = std::clamp(aleph - static_cast<double>(k), 0.0, 1.0);
  std::nth_element(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(k - 1), all.end());
  const double lo = all[k - 1];
  const double hi = *std::min_element(all.begin() + static_cast<std::ptrdiff_t>(k), all.end());
  return (1.0 - gamma) * lo + gamma * hi;
}

double ess_of_indicator(const ChainDraws& x, double q) {
  return ess_of(split(x, [q](double v) { return v <= q ? 1.0 : 0.0; }));
}

/// The k-th smallest of `all` (reorders it).
double order_statistic(std::vector<double>& all, std::size_t k) {
  std::nth_element(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(k), all.end());
  return all[k];
}

/// The rank statistics index split draws with 32 bits.
bool too_many_for_ranks(const ChainDraws& x) {
  return static_cast<std::uint64_t>(x.chains) * static_cast<std::uint64_t>(x.draws / 2) * 2u >
         std::numeric_limits<std::uint32_t>::max();
}

/// mcse_quantile's interval for an ESS of `ess` and N = `size` draws: the positions
/// of the order statistics th1, th2 with mcse = (th2 − th1) / 2.
std::pair<std::size_t, std::size_t> mcse_quantile_positions(double ess, double prob, std::size_t n) {
  const double a = ess * prob + 1, b = ess * (1 - prob) + 1;
  const double ppf_low = detail::beta_quantile(0.1586553, a, b);
  const double ppf_high = detail::beta_quantile(0.8413447, a, b);
  const auto size = static_cast<std::ptrdiff_t>(n);
  const double lo_pos = ppf_low * static_cast<double>(size) - 1;
  const double hi_pos = ppf_high * static_cast<double>(size) - 1;
  // np.nanmax / np.nanmin ignore a NaN quantile; a negative index counts from the end.
  auto index = [size](double pos) {
    auto i = static_cast<std::ptrdiff_t>(pos);
    return i < 0 ? i + size : i;
  };
  const std::ptrdiff_t i1 = index(std::floor(std::isnan(lo_pos) ? 0.0 : std::max(lo_pos, 0.0)));
  const std::ptrdiff_t i2 = index(
      std::ceil(std::isnan(hi_pos) ? static_cast<double>(size - 1) : std::min(hi_pos, static_cast<double>(size - 1))));
  return {static_cast<std::size_t>(i1), static_cast<std::size_t>(i2)};
}

}  // namespace

// ---------------------------------------------------------------------------

struct Workspace::Impl {
  Pool pool;
  std::size_t size = 0;
  bool filled = false;
  std::vector<double> table;
};

Workspace::Workspace() : impl_(std::make_unique<Impl>()) {}
Workspace::~Workspace() = default;

namespace {

/// The normal scores of the integer ranks 1..⌈S/2⌉ for S split draws, computed in
/// parallel when S changes.
const std::vector<double>& score_table(Workspace::Impl& w, std::size_t split_draws) {
  if (w.filled && w.size == split_draws) return w.table;
  w.filled = false;
  w.table.assign((split_draws + 1) / 2, 0.0);
  const double denom = NormalScores::denom(split_draws);
  parallel_ranges(w.table.size(), w.table.size() * 8, [&](std::size_t r0, std::size_t r1) {
    for (std::size_t r = r0 + 1; r <= r1; ++r) w.table[r - 1] = NormalScores::of_rank(static_cast<double>(r), denom);
  });
  w.size = split_draws;
  w.filled = true;
  return w.table;
}

}  // namespace

double rhat(const ChainDraws& x) {
  if (not_valid(x, 2) || too_many_for_ranks(x)) return kNaN;
  Workspace w;
  const PoolScope scope(w.impl().pool);
  Matrix z = split(x);
  const Sorted sorted = sort_with_index(z.v);
  const NormalScores scores(z.v.size(), score_table(w.impl(), z.v.size()));
  rank_scores(sorted, scores, z.v);
  const double rhat_bulk = rhat_of(z);
  tail_rank_scores(sorted, scores, z.v);
  const double rhat_tail = rhat_of(z);
  return rhat_tail > rhat_bulk ? rhat_tail : rhat_bulk;  // Python's max(bulk, tail)
}

double ess_bulk(const ChainDraws& x) {
  if (not_valid(x, 1) || too_many_for_ranks(x)) return kNaN;
  Workspace w;
  const PoolScope scope(w.impl().pool);
  Matrix z = split(x);
  const Sorted sorted = sort_with_index(z.v);
  rank_scores(sorted, NormalScores(z.v.size(), score_table(w.impl(), z.v.size())), z.v);
  return ess_of(z);
}

double ess_quantile(const ChainDraws& x, double prob) {
  if (not_valid(x, 1)) return kNaN;
  std::vector<double> all = flatten(x);
  return ess_of_indicator(x, quantile7(all, prob));
}

double ess_tail(const ChainDraws& x) {
  if (not_valid(x, 1)) return kNaN;
  std::vector<double> all = flatten(x);
  const double q_low = quantile7(all, 0.05);
  const double q_high = quantile7(all, 0.95);
  const double ess_low = ess_of_indicator(x, q_low);
  const double ess_high = ess_of_indicator(x, q_high);
  return ess_high < ess_low ? ess_high : ess_low;  // Python's min(low, high)
}

double ess_mean(const ChainDraws& x) {
  if (not_valid(x, 1)) return kNaN;
  return ess_of(split(x));
}

double mcse_mean(const ChainDraws& x) {
  if (not_valid(x, 1)) return kNaN;
  const double sd = std::sqrt(variance_of_all(x));
  return sd / std::sqrt(ess_mean(x));
}

double mcse_quantile(const ChainDraws& x, double prob) {
  if (not_valid(x, 1)) return kNaN;
  const double ess = ess_quantile(x, prob);
  std::vector<double> all = flatten(x);
  const auto [i1, i2] = mcse_quantile_positions(ess, prob, all.size());
  const double th1 = order_statistic(all, i1);
  const double th2 = order_statistic(all, i2);
  return (th2 - th1) / 2;
}

Statistics statistics(const ChainDraws& x, Workspace* workspace, const std::vector<std::size_t>& order,
                      std::vector<double>* order_values) {
  Statistics st{kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN};
  const std::size_t n = x.data == nullptr ? 0 : static_cast<std::size_t>(x.chains) * static_cast<std::size_t>(x.draws);
  if (order_values != nullptr) order_values->assign(order.size(), kNaN);
  if (not_valid(x, 1) || too_many_for_ranks(x) || has_negative_zero(x)) {
    // The rare cases, one statistic at a time.
    st.rhat = rhat(x);
    st.ess_bulk = ess_bulk(x);
    st.ess_tail = ess_tail(x);
    st.ess_mean = ess_mean(x);
    st.mcse_mean = mcse_mean(x);
    st.mcse_q5 = mcse_quantile(x, 0.05);
    st.mcse_q95 = mcse_quantile(x, 0.95);
    if (order_values != nullptr && n > 0) {
      std::vector<double> all = flatten(x);
      for (std::size_t i = 0; i < order.size(); ++i)
        if (order[i] < n) (*order_values)[i] = order_statistic(all, order[i]);
    }
    return st;
  }

  // One split, one sort, one table of normal scores, shared by every statistic. The
  // work runs as two tasks: A sorts the split draws, then rank-normalises them (in
  // place, once B is done with them) for R-hat; B computes the four ESS (mean, the
  // two quantile indicators, bulk), waiting for A's sort (the quantiles) and bulk
  // ranks. With an even number of draws per chain the split draws are all the
  // draws, so the sort gives the order statistics too; with an odd number, they
  // come from selection. Peak scratch: about 40 bytes per draw.
  Workspace local;
  Workspace::Impl& w = (workspace != nullptr ? workspace : &local)->impl();
  const PoolScope scope(w.pool);
  const bool even = x.draws % 2 == 0;
  Matrix z = split(x);
  const std::size_t size = z.v.size();
  const NormalScores scores(size, score_table(w, size));
  Sorted sorted;
  std::vector<double> all;  // odd draws: all draws, for selection
  if (!even) all = flatten(x);
  const auto kth = [&](std::size_t k) { return even ? sorted.value(k) : order_statistic(all, k); };
  double rhat_bulk = kNaN, rhat_tail = kNaN, ess_low = kNaN, ess_high = kNaN;

  const auto a_sort = [&] { sorted = sort_with_index(z.v); };
  const auto a_bulk = [&] {
    rank_scores(sorted, scores, z.v);
    if (x.chains >= 2) rhat_bulk = rhat_of(z);
  };
  const auto a_tail = [&] {
    if (x.chains < 2) return;
    Matrix tail{Buffer<double>(), z.rows, z.cols};
    tail_rank_scores(sorted, scores, tail.v);
    rhat_tail = rhat_of(tail);
  };
  const auto b_mean = [&] {
    st.ess_mean = ess_of(z);
    st.mcse_mean = std::sqrt(variance_of_all(x)) / std::sqrt(st.ess_mean);
  };
  const auto b_tail = [&] {
    ess_low = ess_of_indicator(x, quantile7(n, 0.05, kth));
    ess_high = ess_of_indicator(x, quantile7(n, 0.95, kth));
  };
  const auto b_bulk = [&] { st.ess_bulk = ess_of(z); };

  Latch sorted_ready, z_free, bulk_ready;
  run_pair(
      [&] {
        try {
          a_sort();
          sorted_ready.set();
          if (!z_free.wait()) throw std::runtime_error("statistics: the other task failed");
          a_bulk();
          bulk_ready.set();
        } catch (...) {
          sorted_ready.set(false);
          bulk_ready.set(false);
          throw;
        }
        a_tail();
      },
      [&] {
        try {
          b_mean();
          z_free.set();
        } catch (...) {
          z_free.set(false);
          throw;
        }
        if (!sorted_ready.wait()) return;
        b_tail();
        if (!bulk_ready.wait()) return;
        b_bulk();
      },
      [&] {
        b_mean();
        a_sort();
        b_tail();
        a_bulk();
        a_tail();
        b_bulk();
      });

  st.rhat = rhat_tail > rhat_bulk ? rhat_tail : rhat_bulk;  // Python's max(bulk, tail)
  st.ess_tail = ess_high < ess_low ? ess_high : ess_low;    // Python's min(low, high)
  const double probs[2] = {0.05, 0.95}, ess_q[2] = {ess_low, ess_high};
  std::size_t positions[2][2];
  // The bisections for the Beta quantiles are independent: two blocks.
  run_blocks(2, [&](int i) {
    std::tie(positions[i][0], positions[i][1]) = mcse_quantile_positions(ess_q[i], probs[i], n);
  });
  st.mcse_q5 = (kth(positions[0][1]) - kth(positions[0][0])) / 2;
  st.mcse_q95 = (kth(positions[1][1]) - kth(positions[1][0])) / 2;
  if (order_values != nullptr)
    for (std::size_t i = 0; i < order.size(); ++i)
      if (order[i] < n) (*order_values)[i] = kth(order[i]);
  return st;
}

double rhat_nested_from_moments(const std::vector<double>& chain_mean, const std::vector<double>& chain_var,
                                int superchains) {
  const int k_super = superchains;
  const auto chains = static_cast<int>(chain_mean.size());
  if (k_super < 2 || chains < k_super || chains % k_super != 0 || chain_var.size() != chain_mean.size()) return kNaN;
  const int m_chains = chains / k_super;
  std::vector<double> super_mean(k_super), within(k_super);
  for (int k = 0; k < k_super; ++k) {
    const double* cm = chain_mean.data() + static_cast<std::size_t>(k) * m_chains;
    const double* cv = chain_var.data() + static_cast<std::size_t>(k) * m_chains;
    // Eq. (15): equal-length chains, so the superchain mean is the mean of its chain means.
    super_mean[k] = mean(cm, m_chains);
    const double between_chain = m_chains > 1 ? variance(cm, m_chains) : 0.0;  // B̃_k
    within[k] = between_chain + mean(cv, m_chains);                            // B̃_k + W̃_k
  }
  const double between_super = variance(super_mean.data(), k_super);  // B̂ν, Eqs. (16)-(17)
  const double within_super = mean(within.data(), k_super);           // Ŵν, Eq. (18)
  return std::sqrt(1.0 + between_super / within_super);               // Eq. (19)
}

double rhat_nested(const ChainDraws& x, int superchains) {
  const int k_super = superchains;
  if (x.data == nullptr || k_super < 2 || x.chains < k_super || x.chains % k_super != 0 || x.draws < 1 || has_nan(x))
    return kNaN;
  const int n = x.draws;
  std::vector<double> chain_mean(x.chains), chain_var(x.chains, 0.0), row(n);
  for (int c = 0; c < x.chains; ++c) {
    for (int t = 0; t < n; ++t) row[t] = x(c, t);
    chain_mean[c] = mean(row.data(), n);
    if (n > 1) chain_var[c] = variance(row.data(), n);  // W̃_k's terms; 0 if N = 1
  }
  return rhat_nested_from_moments(chain_mean, chain_var, k_super);
}

double e_bfmi(const double* energy, int draws, std::ptrdiff_t stride) {
  if (energy == nullptr || draws < 2) return kNaN;
  std::vector<double> e(draws);
  for (int t = 0; t < draws; ++t) e[t] = energy[t * stride];
  double num = 0.0;
  for (int t = 1; t < draws; ++t) num += (e[t] - e[t - 1]) * (e[t] - e[t - 1]);
  num /= (draws - 1);
  return num / variance(e.data(), e.size());
}

// ---------------------------------------------------------------------------

namespace detail {

namespace {

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

}  // namespace detail

}  // namespace hmc::diagnostics
