// The hard posteriors (tests/support/hard_posteriors.hpp) with the default warmup, its
// checks and restarts included, give on any number of ranks bitwise the draws of one
// process sampling every particle alone: each rank samples its share with the ensemble sums
// taken over all ranks, rank 0 gathers the draws and compares them.
#include "hmc/parallel/mpi_context.hpp"
#include "support/hard_posteriors.hpp"
#include "support/in_memory.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstring>
#include <vector>

namespace {

namespace hard = hmc::test::hard;

/// This rank's draws of `model`, gathered on rank 0 in particle order; rank 0 also returns
/// those of one process alone in `alone`, and the adapted repairs of both.
template <class Model>
void expect_same_draws(const Model& model, const hmc::sampler::Settings& s, bool expect_restarts) {
  const hmc::parallel::MpiContext mpi(nullptr, nullptr);
  const std::int64_t n = s.particles;
  const std::int64_t first = n * mpi.rank() / mpi.size(), last = n * (mpi.rank() + 1) / mpi.size();
  const auto mine = hmc::test::sample(model, s, first, last - first, {}, mpi.allreduce());
  const auto flat = [](const hmc::test::LocalDraws& d) {
    return std::vector<double>(d.draws.data(), d.draws.data() + d.draws.size());
  };
  const std::vector<double> local = flat(mine);
  const int count = static_cast<int>(local.size());
  std::vector<int> counts(static_cast<std::size_t>(mpi.size())), offsets(static_cast<std::size_t>(mpi.size()));
  MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, mpi.comm());
  int total = 0;
  for (int r = 0; r < mpi.size(); ++r) {
    offsets[static_cast<std::size_t>(r)] = total;
    total += counts[static_cast<std::size_t>(r)];
  }
  std::vector<double> all(static_cast<std::size_t>(mpi.root() ? total : 0));
  MPI_Gatherv(local.data(), count, MPI_DOUBLE, all.data(), counts.data(), offsets.data(), MPI_DOUBLE, 0, mpi.comm());
  if (!mpi.root()) return;
  const auto alone = hmc::test::sample(model, s, 0, n);
  const std::vector<double> want = flat(alone);
  ASSERT_EQ(all.size(), want.size());
  EXPECT_EQ(std::memcmp(all.data(), want.data(), want.size() * sizeof(double)), 0)
      << "the draws on " << mpi.size() << " rank(s) differ from one process's";
  EXPECT_EQ(mine.adapted.step_size, alone.adapted.step_size);
  EXPECT_EQ(mine.adapted.repairs.restarted, alone.adapted.repairs.restarted);
  if (expect_restarts) {
    EXPECT_GT(alone.adapted.repairs.restarted, 0) << "no restart: the test covers none";
  }
}

hmc::sampler::Settings defaults(hmc::Algorithm algorithm, std::int64_t particles, int warmup, int draws) {
  return hard::defaults(algorithm, particles, warmup, draws, 7);
}

// 45 particles: not a multiple of 2 or 4, so the ranks' shares differ in size.
TEST(MpiHardPosteriors, HeavyTailsNutsDefaults) {
  expect_same_draws(hard::make_heavy_tails({}), defaults(hmc::Algorithm::kNuts, 45, 200, 10), false);
}
TEST(MpiHardPosteriors, FunnelNutsDefaults) {
  expect_same_draws(hard::Funnel{}, defaults(hmc::Algorithm::kNuts, 45, 200, 10), false);
}
// MAMS with the low_rank metric: its eigen-decomposition runs on every rank from the same sums.
TEST(MpiHardPosteriors, FunnelMamsLowRank) {
  auto s = defaults(hmc::Algorithm::kMams, 45, 200, 10);
  s.adapt.metric = hmc::MetricKind::kLowRank;
  expect_same_draws(hard::Funnel{}, s, false);
}
// Started wide (init radius 8): particles far from the ensemble are restarted at the checks.
TEST(MpiHardPosteriors, HeavyTailsHmcStartedWideRestarts) {
  auto s = defaults(hmc::Algorithm::kHmc, 45, 200, 10);
  s.init_radius = 8.0;
  expect_same_draws(hard::make_heavy_tails({}), s, true);
}

}  // namespace
