#pragma once
/// \file
/// \brief Rows of every rank's particles to rank 0, in global particle order, and back.
///
/// Ranks hold contiguous blocks of particle ids, so concatenating the blocks in rank
/// order is the global particle order: the result does not depend on the rank count.

#include "hmc/parallel/decomposition.hpp"
#include "hmc/parallel/mpi_context.hpp"

#include <cstdint>
#include <vector>

namespace hmc::parallel {

/// \brief Rows of `width` doubles per particle, from every rank to rank 0 in global
/// particle order (rank 0 gets dec.global × width values, the others nothing).
std::vector<double> gather_rows(const MpiContext& mpi, const Decomposition& dec, const std::vector<double>& local,
                                std::int64_t width);

/// \brief The same into `all` (rank 0: dec.global × width doubles; ignored elsewhere),
/// for callers that reuse their buffers.
void gather_rows(const MpiContext& mpi, const Decomposition& dec, const double* local, double* all, std::int64_t width);

/// \brief The inverse: rank 0's dec.global × width values, each rank gets its particles' rows.
std::vector<double> scatter_rows(const MpiContext& mpi, const Decomposition& dec, const std::vector<double>& global,
                                 std::int64_t width);

}  // namespace hmc::parallel
