// Each rank samples its block of particles; the gathered ensemble on rank 0 must be
// bitwise the ensemble one process samples alone, for any rank count.
#include "harmonic_oscillator.hpp"
#include "hmc/parallel/gather.hpp"
#include "hmc/parallel/mpi_context.hpp"
#include "hmc/sampler/run.hpp"

#include <gtest/gtest.h>

#include <cstring>

namespace {

hmc::sampler::Settings small_run() {
  hmc::sampler::Settings s;
  s.particles = 37;  // not a multiple of 2 or 4: exercises the remainders
  s.warmup = 20;
  s.draws = 30;
  s.thin = 3;
  s.step_size = 0.2;
  s.leapfrog_steps = 5;
  s.seed = 99;
  return s;
}

template <class View>
bool bitwise_equal(const View& a, const View& b) {
  return a.span() == b.span() && std::memcmp(a.data(), b.data(), a.span() * sizeof(double)) == 0;
}

TEST(MpiGather, GatheredDrawsEqualSingleProcessDraws) {
  hmc::parallel::MpiContext mpi(nullptr, nullptr);
  const auto model = hmc::models::HarmonicOscillator::from_config(
      {{"precision", {{2, 0.3}, {0.3, 1}}}, {"centres", {1, -1}}}, nullptr);
  const auto s = small_run();
  const hmc::parallel::Decomposition dec{s.particles, mpi.size(), mpi.rank()};
  const auto local = hmc::sampler::sample(model, s, dec.begin(), dec.count(), {}, mpi.allreduce());
  const auto all = hmc::parallel::gather_draws(mpi, dec, local);
  if (!mpi.root()) {
    EXPECT_EQ(all.draws.extent(0), 0u);
    return;
  }
  const auto alone = hmc::sampler::sample(model, s, 0, s.particles);
  ASSERT_EQ(all.draws.extent(0), 37u);
  ASSERT_EQ(all.draws.extent(1), 10u);  // ceil(30 / 3)
  EXPECT_TRUE(bitwise_equal(all.draws, alone.draws));
  EXPECT_TRUE(bitwise_equal(all.lp, alone.lp));
  EXPECT_TRUE(bitwise_equal(all.accept_prob, alone.accept_prob));
  EXPECT_TRUE(bitwise_equal(all.divergent, alone.divergent));
  EXPECT_TRUE(bitwise_equal(all.accept_sum, alone.accept_sum));
  EXPECT_EQ(all.grad_evals, alone.grad_evals);  // jittered ChEES steps, summed over ranks
  EXPECT_GT(all.grad_evals, 0);
  EXPECT_EQ(all.adapted.step_size, alone.adapted.step_size);
  EXPECT_EQ(all.adapted.inv_metric, alone.adapted.inv_metric);
}

TEST(MpiGather, BroadcastReachesEveryRank) {
  hmc::parallel::MpiContext mpi(nullptr, nullptr);
  const std::string s = mpi.broadcast(mpi.root() ? std::string("config from rank 0") : std::string());
  EXPECT_EQ(s, "config from rank 0");
  EXPECT_EQ(mpi.broadcast(mpi.root() ? 42 : 0), 42);
}

}  // namespace
