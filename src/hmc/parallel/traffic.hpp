#pragma once
/// \file
/// \brief Cheap counters of this process's MPI collectives: calls, payload bytes and
/// the time spent inside them (run.json's /per_rank, docs/output.md).
///
/// Every collective of MpiContext and of gather.cpp is wrapped in a TimedCollective:
/// two steady_clock reads and three additions, against the microseconds a collective
/// costs. The time inside a call includes waiting for the slowest rank to arrive, so
/// on a balanced run it is the communication cost and on an unbalanced one it also
/// shows the imbalance. The watchdog's heartbeats (a communicator and a thread of their
/// own) are not counted. Main thread only: the counters are not atomic.

#include <chrono>
#include <cstdint>

namespace hmc::parallel {

/// \brief What a collective is for.
enum class Collective : int {
  kReduce = 0,   ///< ensemble sums (ReproducibleSums: warmup adaptation, progress reports)
  kGather = 1,   ///< particle rows to or from rank 0 (draw blocks, checkpoints, end totals, resume)
  kControl = 2,  ///< small agreements: broadcasts, stop checks, error codes, maxima of timings
};
inline constexpr int kNumCollectives = 3;

/// \brief Calls, payload bytes and seconds of one kind of collective on this process.
struct CollectiveCount {
  std::int64_t calls = 0;
  std::int64_t bytes = 0;  ///< payload: what this rank hands to MPI or receives from other ranks
  double seconds = 0.0;
};

/// \brief A snapshot of this process's counters, indexed by Collective.
struct Traffic {
  CollectiveCount kinds[kNumCollectives];
  const CollectiveCount& operator[](Collective c) const { return kinds[static_cast<int>(c)]; }
};

/// \brief The counters since the process started (or since reset_traffic()).
Traffic traffic();
/// \brief Zeroes the counters (tests).
void reset_traffic();

namespace detail {
void add_collective(Collective c, std::int64_t bytes, double seconds);
}  // namespace detail

/// \brief Counts one collective call of `bytes` payload and the time until the end of
/// the scope.
class TimedCollective {
 public:
  TimedCollective(Collective c, std::int64_t bytes)
      : kind_(c), bytes_(bytes), start_(std::chrono::steady_clock::now()) {}
  ~TimedCollective() {
    detail::add_collective(kind_, bytes_,
                           std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
  }
  TimedCollective(const TimedCollective&) = delete;
  TimedCollective& operator=(const TimedCollective&) = delete;

 private:
  Collective kind_;
  std::int64_t bytes_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace hmc::parallel
