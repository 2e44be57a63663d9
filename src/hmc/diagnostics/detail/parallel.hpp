#pragma once
/// \file
/// \brief The parallel steps of the convergence diagnostics (host): work cut into
/// blocks run on OpenMP threads (serially without OpenMP or inside a parallel region),
/// whose results either land in disjoint places or are combined in a fixed order, so
/// no statistic depends on the number of threads.

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <vector>

namespace hmc::diagnostics::detail {

/// \brief Number of blocks the parallel steps split their work into: the OpenMP
/// threads available (omp_get_max_threads()), 1 without OpenMP or inside a parallel
/// region; set_blocks_for_testing(b > 0) overrides it (results do not depend on it).
int parallel_blocks();
void set_blocks_for_testing(int blocks);

/// \brief Runs f(b) for b in [0, blocks) on OpenMP threads (serially without OpenMP
/// or when already inside a parallel region). Each block must write only its own
/// results. The first exception thrown by a block is rethrown after all have run.
void run_blocks(int blocks, const std::function<void(int)>& f);

/// Threads this thread may use for its parallel steps: those run_pair gave its half,
/// else all of OpenMP's outside a parallel region, else 1.
int available_threads();

/// Blocks for `work` elements: one per thread, but not below ~16k elements a block
/// (a count forced for tests applies down to one element a block).
int blocks_for(std::size_t work);

/// Start of block b of n items cut into `blocks` equal ranges.
inline std::size_t block_start(std::size_t n, int blocks, int b) {
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

/// Runs `a` and `b` at the same time, each with half of this thread's threads, or,
/// with one thread, `serial` (the same work in an order that needs no waiting). They
/// share the current pool (buffer.hpp). The first exception is rethrown after both have ended.
void run_pair(const std::function<void()>& a, const std::function<void()>& b, const std::function<void()>& serial);

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

}  // namespace hmc::diagnostics::detail
