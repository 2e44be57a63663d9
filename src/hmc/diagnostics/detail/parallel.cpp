#include "hmc/diagnostics/detail/parallel.hpp"

#include "hmc/diagnostics/detail/buffer.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace hmc::diagnostics::detail {

namespace {
std::atomic<int> g_forced_blocks{0};
/// Threads this thread may use for its parallel steps (0: all of OpenMP's); set
/// inside run_pair's two halves.
thread_local int t_threads = 0;
}  // namespace

int available_threads() {
  if (t_threads > 0) return t_threads;
#ifdef _OPENMP
  if (!omp_in_parallel()) return std::max(1, omp_get_max_threads());
#endif
  return 1;
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

int blocks_for(std::size_t work) {
  constexpr std::size_t kMinWork = 16384;
  const int blocks = parallel_blocks();
  const std::size_t limit = g_forced_blocks.load() > 0 ? work : work / kMinWork;
  return static_cast<int>(std::max<std::size_t>(1, std::min<std::size_t>(static_cast<std::size_t>(blocks), limit)));
}

void run_pair(const std::function<void()>& a, const std::function<void()>& b, const std::function<void()>& serial) {
  const int threads = available_threads();
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
    const int saved_threads = t_threads;
    Pool* const saved_pool = t_pool;
    t_threads = id == 0 ? (threads + 1) / 2 : threads / 2;
    t_pool = pool;
    try {
      (id == 0 ? a : b)();
    } catch (...) {
      errors[id] = std::current_exception();
    }
    t_threads = saved_threads;
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

}  // namespace hmc::diagnostics::detail
