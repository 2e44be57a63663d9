// PSIS-LOO (diagnostics/loo.hpp) against ArviZ 0.23.4's arviz.loo and ArviZ 1.3's
// arviz_stats.loo on the same made-up draws (the reference figures below were printed
// by those functions for the inputs this file builds; tests/python checks hmc's runs
// against the installed ArviZ too).
#include "hmc/core/draw_source.hpp"
#include "hmc/core/errors.hpp"
#include "hmc/diagnostics/loo.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace {

using hmc::diagnostics::LooRule;

// 4 chains x 250 draws of one parameter theta and a log-likelihood of 3 observations:
// theta = sin(0.11 s) + 0.3 cos(0.013 s²), ll_i = -(1.3 sin(0.37 s + i) + 0.2 i)² / 2 -
// 0.1 cos(1.7 s) - 2 [s mod 97 = i], s = 0..999 the draw's index in chain-major order.
hmc::MemorySource reference_draws() {
  constexpr int kChains = 4, kDraws = 250, kObs = 3;
  hmc::StoreLayout l;
  l.particles = kChains;
  l.draws = kDraws;
  l.param_names = {"theta"};
  l.stats.clear();
  hmc::DrawGroup g;
  g.name = "log_likelihood";
  g.arrays.push_back({"y", {"obs"}, {kObs}});
  l.groups.push_back(g);
  std::vector<double> v;  // [column][particle][draw]
  for (int c = 0; c < 1 + kObs; ++c) {
    for (int s = 0; s < kChains * kDraws; ++s) {
      const double x = s;
      if (c == 0) {
        v.push_back(std::sin(0.11 * x) + 0.3 * std::cos(0.013 * x * x));
      } else {
        const int i = c - 1;
        const double a = 1.3 * std::sin(0.37 * x + i) + 0.2 * i;
        v.push_back(-0.5 * a * a - 0.1 * std::cos(1.7 * x) - (s % 97 == i ? 2.0 : 0.0));
      }
    }
  }
  return hmc::MemorySource(l, v);
}

TEST(Loo, EqualsArviz1) {
  const auto r = hmc::diagnostics::loo(reference_draws(), LooRule::kArviz1);
  EXPECT_NEAR(r.elpd_loo, -1.7520085119287172, 1e-12);
  EXPECT_NEAR(r.p_loo, 0.562611836067362, 1e-12);
  EXPECT_NEAR(r.se, 0.15416193359842514, 1e-12);  // ddof 1
  ASSERT_EQ(r.pareto_k.size(), 3u);
  EXPECT_NEAR(r.pareto_k[0], 0.6482206617792134, 1e-12);
  EXPECT_NEAR(r.pareto_k[1], 0.3881271313694487, 1e-12);
  EXPECT_NEAR(r.pareto_k[2], 0.2597890616966184, 1e-12);
  EXPECT_EQ(r.n_samples, 1000);
  EXPECT_EQ(r.n_data_points, 3);
  EXPECT_EQ(r.k_good, 3);
}

TEST(Loo, EqualsArviz023) {
  const auto r = hmc::diagnostics::loo(reference_draws(), LooRule::kArviz023);
  EXPECT_NEAR(r.elpd_loo, -1.752008511928718, 1e-12);
  EXPECT_NEAR(r.p_loo, 0.5626118360673642, 1e-12);
  EXPECT_NEAR(r.se, 0.1258726916923211, 1e-12);  // ddof 0
  EXPECT_NEAR(r.pareto_k[0], 0.6482206617792134, 1e-12);
}

TEST(Loo, SmoothedWeightsAreNormalisedAndKeepTheirOrder) {
  // Log weights of a heavy right tail: smoothing keeps the order and sums to one.
  std::vector<double> lw;
  for (int s = 0; s < 400; ++s) lw.push_back(0.9 * std::log1p(s) + 0.01 * std::sin(s));
  const std::vector<double> raw = lw;
  const double k = hmc::diagnostics::psis_log_weights(lw, 1.0, LooRule::kArviz1);
  EXPECT_TRUE(std::isfinite(k));
  double sum = 0.0;
  for (double x : lw) sum += std::exp(x);
  EXPECT_NEAR(sum, 1.0, 1e-12);
  for (std::size_t a = 1; a < raw.size(); ++a) {
    if (raw[a] > raw[a - 1]) EXPECT_GE(lw[a], lw[a - 1]) << a;
  }
}

TEST(Loo, NoLogLikelihoodGroupIsAnError) {
  hmc::StoreLayout l;
  l.particles = 2;
  l.draws = 3;
  l.param_names = {"theta"};
  l.stats.clear();
  const hmc::MemorySource src(l, std::vector<double>(6, 0.5));
  EXPECT_THROW(hmc::diagnostics::loo(src), hmc::RunError);
}

}  // namespace
