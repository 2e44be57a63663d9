#pragma once
/// \file
/// \brief Scratch memory of the convergence diagnostics (host, internal): a pool of
/// freed blocks kept for reuse, the thread's current pool, uninitialised arrays drawn
/// from it, and the dense [chain][draw] matrix the statistics work on.

#include <cstddef>
#include <cstdlib>
#include <mutex>
#include <new>
#include <tuple>
#include <utility>
#include <vector>

namespace hmc::diagnostics::detail {

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
inline thread_local Pool* t_pool = nullptr;

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

}  // namespace hmc::diagnostics::detail
