#pragma once
/// \file
/// \brief MPI lifetime and the job's communicator, owned in one RAII object.

#include "hmc/core/ensemble_sum.hpp"

#include <mpi.h>

#include <functional>
#include <memory>
#include <string>

namespace hmc::parallel {

class Watchdog;

/// \brief Initialises MPI (unless someone already did), duplicates COMM_WORLD and
/// finalises in reverse order. Create it first in main, before Kokkos.
class MpiContext {
 public:
  MpiContext(int* argc, char*** argv);
  ~MpiContext();
  MpiContext(const MpiContext&) = delete;
  MpiContext& operator=(const MpiContext&) = delete;

  MPI_Comm comm() const { return comm_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  bool root() const { return rank_ == 0; }
  /// The number of ranks on this rank's node (MPI_COMM_TYPE_SHARED), this one included.
  int node_size() const { return node_size_; }

  /// \brief Rank 0's string on every rank.
  std::string broadcast(const std::string& s) const;
  /// \brief Rank 0's value on every rank.
  int broadcast(int value) const;
  /// \brief The largest `value` of any rank, on every rank.
  int max(int value) const;
  /// \brief The sum over ranks of `value`, on every rank.
  long long sum(long long value) const;
  /// \brief The largest `value` of any rank, on rank 0 (for timings).
  double max_on_root(double value) const;
  /// \brief Element-wise max / sum over all ranks, for reproducible_column_sums (core/ensemble_sum.hpp).
  Allreduce allreduce() const;
  /// \brief Ends every rank of the job with `code` (for errors that reach one rank only).
  [[noreturn]] void abort(int code) const;
  /// \brief Ends every rank of the job with `code` after the one-line message `line`
  /// ("hmc: rank N: ..."). While the watchdog runs, another rank hands the line to
  /// rank 0, which prints it (so it is in rank 0's log) and ends the job; otherwise,
  /// or if rank 0 does not within a few seconds, this rank prints it and ends the job.
  [[noreturn]] void fail(const std::string& line, int code) const;

  /// \brief Starts the rank watchdog (parallel/watchdog.hpp; collective): a rank that
  /// makes no progress for `timeout_s` ends the job with exit code 4. No-op on one
  /// rank or with `timeout_s` 0. Returns false, and does nothing, when this MPI
  /// library does not provide MPI_THREAD_MULTIPLE.
  bool watch(double timeout_s) const;
  /// \brief Stops the watchdog at the end of a run (collective; no-op if none runs).
  void unwatch() const;
  /// \brief What rank 0 does just before the job is aborted by fail() or the
  /// watchdog (e.g. remove an output directory that holds nothing worth keeping).
  void on_abort(std::function<void()> cleanup) const { cleanup_ = std::move(cleanup); }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  int node_size_ = 1;
  bool owns_init_ = false;
  // The job's fault handling; mutable as the job itself is shared as const.
  mutable std::unique_ptr<Watchdog> watchdog_;
  mutable std::function<void()> cleanup_;
};

/// \brief "Open MPI v4.1.4, ..." — the MPI library this binary runs on.
std::string mpi_library_version();

}  // namespace hmc::parallel
