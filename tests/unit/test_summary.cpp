#include "hmc/diagnostics/summary.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace {

using hmc::sampler::LocalDraws;

LocalDraws make_draws(int particles, int draws, const std::function<double(int, int)>& f) {
  LocalDraws d;
  d.draws = LocalDraws::HostDraws("d", particles, draws, 1);
  for (int i = 0; i < particles; ++i)
    for (int t = 0; t < draws; ++t) d.draws(i, t, 0) = f(i, t);
  return d;
}

TEST(Summary, QuantilesInterpolateLikeNumpy) {
  std::vector<double> v = {10, 1, 9, 2, 8, 3, 7, 4, 6, 5};
  EXPECT_DOUBLE_EQ(hmc::diagnostics::quantile(v, 0.05), 1.45);
  EXPECT_DOUBLE_EQ(hmc::diagnostics::quantile(v, 0.5), 5.5);
  EXPECT_DOUBLE_EQ(hmc::diagnostics::quantile(v, 0.95), 9.55);
  EXPECT_DOUBLE_EQ(hmc::diagnostics::quantile(v, 1.0), 10);
  EXPECT_DOUBLE_EQ(hmc::diagnostics::quantile(v, 0.0), 1);
}

TEST(Summary, MeanSdAndParticleBatchMcse) {
  // Particle i's draws are i + {-1, +1}: per-particle means 0..3.
  const auto d = make_draws(4, 2, [](int i, int t) { return i + (t == 0 ? -1.0 : 1.0); });
  const auto s = hmc::diagnostics::summarize_parameter(d, 0, "x");
  EXPECT_DOUBLE_EQ(s.mean, 1.5);
  // values -1,1,0,2,1,3,2,4: sum of squares about 1.5 = 18 -> var 18/7
  EXPECT_NEAR(s.sd, std::sqrt(18.0 / 7.0), 1e-14);
  // per-particle mean squared deviations about 1.5: {3.25, 1.25, 1.25, 3.25}, sd sqrt(4/3)
  EXPECT_NEAR(s.mcse_sd, std::sqrt(4.0 / 3.0) / 2.0 / (2.0 * std::sqrt(18.0 / 7.0)), 1e-14);
}

TEST(Summary, McseMatchesTheSpreadOfIndependentRepeats) {
  // Autocorrelated AR(1) particles: the estimator must account for the correlation.
  auto run = [](unsigned seed) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> z;
    std::vector<double> state(200, 0.0);
    for (auto& x : state) x = z(rng);
    const double rho = 0.9;
    return make_draws(200, 100, [&](int i, int) {
      state[i] = rho * state[i] + std::sqrt(1 - rho * rho) * z(rng);
      return state[i];
    });
  };
  double sum_sq = 0.0, mcse = 0.0;
  const int repeats = 40;
  for (int r = 0; r < repeats; ++r) {
    const auto s = hmc::diagnostics::summarize_parameter(run(100 + r), 0, "x");
    sum_sq += s.mean * s.mean;  // true mean 0
    mcse += s.mcse_mean / repeats;
  }
  const double actual = std::sqrt(sum_sq / repeats);
  // The naive iid standard error would be 1/sqrt(20000) ~ 0.0071, 4.4x too small.
  EXPECT_NEAR(mcse / actual, 1.0, 0.3) << "mcse " << mcse << " vs actual spread " << actual;
  EXPECT_GT(mcse, 2.5 / std::sqrt(20000.0));
}

TEST(Summary, SingleParticleUsesBatchMeans) {
  const auto d = make_draws(1, 100, [](int, int t) { return t % 2 == 0 ? 1.0 : -1.0; });
  const auto s = hmc::diagnostics::summarize_parameter(d, 0, "x");
  EXPECT_DOUBLE_EQ(s.mean, 0.0);
  EXPECT_TRUE(std::isfinite(s.mcse_mean));
}

}  // namespace
