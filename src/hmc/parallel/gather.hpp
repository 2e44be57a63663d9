#pragma once
/// \file
/// \brief Gathers every rank's recorded draws to rank 0, in global particle order.

#include "hmc/parallel/decomposition.hpp"
#include "hmc/parallel/mpi_context.hpp"
#include "hmc/sampler/run.hpp"

namespace hmc::parallel {

/// \brief The whole ensemble's draws on rank 0 (other ranks get empty views).
///
/// Ranks hold contiguous blocks of particle ids, so concatenating the blocks in
/// rank order is the global particle order: the result does not depend on the
/// rank count.
sampler::LocalDraws gather_draws(const MpiContext& mpi, const Decomposition& dec, const sampler::LocalDraws& local);

}  // namespace hmc::parallel
