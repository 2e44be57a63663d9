#include "hmc/parallel/gather.hpp"

#include "hmc/parallel/traffic.hpp"
#include "hmc/parallel/watchdog.hpp"

#include <vector>

namespace hmc::parallel {

namespace {

/// One particle's block of `width` doubles as an MPI datatype, with every rank's count
/// and offset in particles: the counts stay in particles, so they fit in an int however
/// many draws a particle has.
struct ParticleBlocks {
  MPI_Datatype type{};
  std::vector<int> counts, displs;
  ParticleBlocks(const Decomposition& dec, std::int64_t width) : counts(dec.ranks), displs(dec.ranks) {
    MPI_Type_contiguous(static_cast<int>(width), MPI_DOUBLE, &type);
    MPI_Type_commit(&type);
    for (int r = 0; r < dec.ranks; ++r) {
      counts[r] = static_cast<int>(dec.count_of(r));
      displs[r] = static_cast<int>(Decomposition::block_begin(dec.global, dec.ranks, r));
    }
  }
  ~ParticleBlocks() { MPI_Type_free(&type); }
  ParticleBlocks(const ParticleBlocks&) = delete;
  ParticleBlocks& operator=(const ParticleBlocks&) = delete;
};

/// Payload of one gather or scatter on this rank: its own rows on a rank other than 0,
/// the other ranks' rows on rank 0 (its own rows are a local copy).
std::int64_t payload_bytes(const MpiContext& mpi, const Decomposition& dec, std::int64_t width) {
  const std::int64_t rows = mpi.root() ? dec.global - dec.count() : dec.count();
  return rows * width * static_cast<std::int64_t>(sizeof(double));
}

/// Gathers `width` doubles per particle (contiguous, particle-major) to rank 0.
void gather_block(const MpiContext& mpi, const Decomposition& dec, const double* send, double* recv,
                  std::int64_t width) {
  if (width == 0) return;
  const ParticleBlocks b(dec, width);
  const WaitingForRanks waiting;
  const TimedCollective timed(Collective::kGather, payload_bytes(mpi, dec, width));
  MPI_Gatherv(send, static_cast<int>(dec.count()), b.type, recv, b.counts.data(), b.displs.data(), b.type, 0,
              mpi.comm());
}

/// The same in reverse, from rank 0 to every rank.
void scatter_block(const MpiContext& mpi, const Decomposition& dec, const double* send, double* recv,
                   std::int64_t width) {
  if (width == 0) return;
  const ParticleBlocks b(dec, width);
  const WaitingForRanks waiting;
  const TimedCollective timed(Collective::kGather, payload_bytes(mpi, dec, width));
  MPI_Scatterv(send, b.counts.data(), b.displs.data(), b.type, recv, static_cast<int>(dec.count()), b.type, 0,
               mpi.comm());
}

}  // namespace

std::vector<double> gather_rows(const MpiContext& mpi, const Decomposition& dec, const std::vector<double>& local,
                                std::int64_t width) {
  std::vector<double> all(mpi.root() ? static_cast<std::size_t>(dec.global * width) : 0);
  gather_block(mpi, dec, local.data(), all.data(), width);
  return all;
}

void gather_rows(const MpiContext& mpi, const Decomposition& dec, const double* local, double* all,
                 std::int64_t width) {
  gather_block(mpi, dec, local, all, width);
}

std::vector<double> scatter_rows(const MpiContext& mpi, const Decomposition& dec, const std::vector<double>& global,
                                 std::int64_t width) {
  std::vector<double> mine(static_cast<std::size_t>(dec.count() * width));
  scatter_block(mpi, dec, global.data(), mine.data(), width);
  return mine;
}

}  // namespace hmc::parallel
