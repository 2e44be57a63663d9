#pragma once
/// \file
/// \brief MPI lifetime and the job's communicator, owned in one RAII object.

#include "hmc/parallel/reduce.hpp"

#include <mpi.h>

#include <string>

namespace hmc::parallel {

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
  /// \brief Element-wise max / sum over all ranks, for parallel::reproducible_column_sums.
  Allreduce allreduce() const;
  /// \brief Ends every rank of the job with `code` (for errors that reach one rank only).
  [[noreturn]] void abort(int code) const;

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  bool owns_init_ = false;
};

/// \brief "Open MPI v4.1.4, ..." — the MPI library this binary runs on.
std::string mpi_library_version();

}  // namespace hmc::parallel
