#pragma once
/// \file
/// \brief Sums over the whole ensemble that do not depend on how it is split.
///
/// Floating-point addition is not associative, so a sum over particles computed
/// by 1 or 4 ranks, or 1 or 16 threads, would differ in its last bits, and the
/// warmup (which feeds such sums back into the dynamics) would then give
/// different draws. Here each column is first scaled by a power of two fixed by
/// the global maximum |x| (a max is exact in any order), rounded to a 64-bit
/// integer and summed as integers, which is exact and so order-independent.
/// The rounding error per value is 2^-(61 - ceil(log2 N)) of the column's largest |x|
/// (N: particles), e.g. 2^-41 for a million particles. Non-finite values count as 0.

#include "hmc/core/types.hpp"

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace hmc {

/// \brief How the ranks combine partial results (in place, element-wise).
struct Allreduce {
  std::function<void(double*, int)> max;
  std::function<void(long long*, int)> sum;
};

/// \brief The single-process case: nothing to combine.
Allreduce no_allreduce();

/// \brief Column sums of values[0..rows)[0..cols) over every rank, bitwise the same
/// for any decomposition of the rows over ranks and threads. `global_rows` is the
/// total row count over all ranks (it bounds the integer sums).
///
/// The object keeps its small device and host buffers between calls, so a loop that
/// reduces every iteration (the warmup) allocates nothing after the first call.
class ReproducibleSums {
 public:
  explicit ReproducibleSums(Allreduce allreduce = no_allreduce()) : allreduce_(std::move(allreduce)) {}
  std::vector<double> operator()(const StateView& values, int rows, std::int64_t global_rows);

 private:
  void reserve(int cols);
  Allreduce allreduce_;
  Kokkos::View<double*> maxima_, scale_;
  Kokkos::View<long long*> sums_;
  Kokkos::View<double*>::HostMirror maxima_h_, scale_h_;
  Kokkos::View<long long*>::HostMirror sums_h_;
};

/// \brief One-off form of ReproducibleSums.
std::vector<double> reproducible_column_sums(const StateView& values, int rows, std::int64_t global_rows,
                                             const Allreduce& allreduce);

}  // namespace hmc
