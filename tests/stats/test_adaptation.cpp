// Warmup adaptation on hard Gaussians, and posteriors of the shipped configs with
// adaptation on; tolerances in units of the run's Monte Carlo standard error.
#include "coin_toss.hpp"
#include "harmonic_oscillator.hpp"
#include "hmc/app/models.hpp"
#include "hmc/diagnostics/summary.hpp"
#include "hmc/io/config.hpp"
#include "hmc/io/run_config.hpp"
#include "hmc/sampler/run.hpp"
#include "support/in_memory.hpp"
#include "support/moments.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>

namespace {

using nlohmann::json;

/// The Gaussian tests also require every R-hat < 1.01.
void expect_moments(const hmc::diagnostics::ParameterSummary& s, double mean, double var, bool check_rhat = true) {
  hmc::test::expect_moments(s, mean, var, check_rhat);
}

double post_warmup_acceptance(const hmc::test::LocalDraws& d) {
  double sum = 0.0;
  const auto accept = d.stat("acceptance_rate");
  for (std::size_t i = 0; i < accept.extent(0); ++i)
    for (std::size_t t = 0; t < accept.extent(1); ++t) sum += accept(i, t);
  return sum / static_cast<double>(accept.extent(0) * accept.extent(1));
}

hmc::sampler::Settings adaptive(const std::string& metric, const std::string& trajectory, std::uint64_t seed) {
  hmc::sampler::Settings s;
  // R-hat of stationary chains is about 1 + (tau - 1) / draws (tau: integrated
  // autocorrelation time), so the chains must be long enough for the 1.01 bar.
  s.particles = 512;
  s.warmup = 400;
  s.draws = 600;
  s.step_size = 0.01;  // far too small for most directions: adaptation must fix it
  s.leapfrog_steps = 10;
  s.seed = seed;
  s.adapt.metric = hmc::parse_mode<hmc::MetricKind>(metric);
  s.adapt.trajectory = hmc::parse_mode<hmc::TrajectoryKind>(trajectory);
  return s;
}

void badly_scaled_gaussian(hmc::Algorithm algorithm, const std::string& metric = "diag") {
  // k from 1 to 10^4: standard deviations from 1 to 0.01.
  std::vector<double> k;
  for (int i = 0; i < 10; ++i) k.push_back(std::pow(10.0, 4.0 * i / 9.0));
  const auto model = hmc::models::HarmonicOscillator::from_config({{"spring_constants", k}}, nullptr);
  auto s = adaptive(metric, algorithm == hmc::Algorithm::kHmc ? "chees" : "fixed", 31);
  s.algorithm = algorithm;
  const auto draws = hmc::test::sample(model, s, 0, s.particles);

  EXPECT_NEAR(post_warmup_acceptance(draws), s.adapt.target_accept, 0.05);
  ASSERT_EQ(draws.adapted.metric, hmc::parse_mode<hmc::MetricKind>(metric));
  ASSERT_EQ(draws.adapted.inv_metric.size(), k.size());
  for (std::size_t i = 0; i < k.size(); ++i) {
    EXPECT_NEAR(draws.adapted.inv_metric[i] * k[i], 1.0, 0.2) << "metric entry " << i;
  }
  const auto summary = hmc::test::summarize(draws, model.parameter_names());
  for (std::size_t i = 0; i < k.size(); ++i) expect_moments(summary[i], 0.0, 1.0 / k[i]);
}

TEST(Adaptation, BadlyScaledGaussianDiagonalMetric) { badly_scaled_gaussian(hmc::Algorithm::kHmc); }
// NUTS: dual averaging drives the mean acceptance statistic of its trees to the target.
TEST(Adaptation, NutsBadlyScaledGaussianDiagonalMetric) { badly_scaled_gaussian(hmc::Algorithm::kNuts); }
// MAMS: the same step size adaptation, its decoherence length from the ensemble's spread.
TEST(Adaptation, MamsBadlyScaledGaussianDiagonalMetric) { badly_scaled_gaussian(hmc::Algorithm::kMams); }
// The Fisher diagonal sqrt(Var q / Var ∇) of a Gaussian with independent coordinates is its
// variances, from the draws and gradients of the windows.
TEST(Adaptation, NutsBadlyScaledGaussianFisherDiagonalMetric) {
  badly_scaled_gaussian(hmc::Algorithm::kNuts, "fisher_diag");
}

void correlated_gaussian(hmc::Algorithm algorithm, const std::string& metric) {
  // Four coordinates, scales 1, 2, 0.5, 3, every correlation 0.95.
  const std::vector<double> sd = {1.0, 2.0, 0.5, 3.0};
  const int d = 4;
  std::vector<std::vector<double>> cov(d, std::vector<double>(d));
  for (int i = 0; i < d; ++i)
    for (int j = 0; j < d; ++j) cov[i][j] = sd[i] * sd[j] * (i == j ? 1.0 : 0.95);
  // Precision = cov^-1 by Gauss-Jordan.
  std::vector<std::vector<double>> a = cov, inv(d, std::vector<double>(d, 0.0));
  for (int i = 0; i < d; ++i) inv[i][i] = 1.0;
  for (int c = 0; c < d; ++c) {
    const double p = a[c][c];
    for (int j = 0; j < d; ++j) {
      a[c][j] /= p;
      inv[c][j] /= p;
    }
    for (int r = 0; r < d; ++r)
      if (r != c) {
        const double f = a[r][c];
        for (int j = 0; j < d; ++j) {
          a[r][j] -= f * a[c][j];
          inv[r][j] -= f * inv[c][j];
        }
      }
  }
  const auto model =
      hmc::models::HarmonicOscillator::from_config({{"precision", inv}, {"centres", {1.0, -1.0, 0.5, 2.0}}}, nullptr);
  auto s = adaptive(metric, algorithm == hmc::Algorithm::kHmc ? "chees" : "fixed", 32);
  s.algorithm = algorithm;
  const auto draws = hmc::test::sample(model, s, 0, s.particles);

  EXPECT_NEAR(post_warmup_acceptance(draws), s.adapt.target_accept, 0.05);
  ASSERT_EQ(draws.adapted.metric, hmc::parse_mode<hmc::MetricKind>(metric));
  ASSERT_EQ(draws.adapted.inv_metric.size(), static_cast<std::size_t>(d * d));
  for (int i = 0; i < d; ++i)
    for (int j = 0; j < d; ++j) {
      EXPECT_NEAR(draws.adapted.inv_metric[i * d + j], cov[i][j], 0.2 * sd[i] * sd[j])
          << "metric (" << i << "," << j << ")";
    }
  if (algorithm == hmc::Algorithm::kHmc) {
    EXPECT_GT(draws.adapted.trajectory_length, 0.0);
  }
  const auto summary = hmc::test::summarize(draws, model.parameter_names());
  const std::vector<double> centre = {1.0, -1.0, 0.5, 2.0};
  for (int i = 0; i < d; ++i) expect_moments(summary[i], centre[i], cov[i][i]);
}

TEST(Adaptation, CorrelatedGaussianDenseMetricWithChees) { correlated_gaussian(hmc::Algorithm::kHmc, "dense"); }
// low_rank: the Fisher diagonal and the directions of the positions' and gradients'
// covariances; with every correlation 0.95 all four directions are far from the diagonal's,
// so the metric is the covariance (as dense), with NUTS and with MAMS.
TEST(Adaptation, NutsCorrelatedGaussianLowRankMetric) { correlated_gaussian(hmc::Algorithm::kNuts, "low_rank"); }
TEST(Adaptation, MamsCorrelatedGaussianLowRankMetric) { correlated_gaussian(hmc::Algorithm::kMams, "low_rank"); }

TEST(Adaptation, ReachesTargetFromAHugeInitialStepSize) {
  const auto model = hmc::models::HarmonicOscillator::from_config({{"spring_constants", {1.0, 100.0}}}, nullptr);
  auto s = adaptive("diag", "fixed", 33);
  s.step_size = 5.0;  // every first trajectory diverges
  s.adapt.target_accept = 0.9;
  const auto draws = hmc::test::sample(model, s, 0, s.particles);
  EXPECT_NEAR(post_warmup_acceptance(draws), 0.9, 0.05);
}

TEST(Adaptation, DisabledKeepsTheGivenStepSizeAndUnitMetric) {
  const auto model = hmc::models::HarmonicOscillator::from_config({{"spring_constants", {1.0, 4.0}}}, nullptr);
  auto s = adaptive("diag", "fixed", 34);
  s.adapt.enabled = false;
  s.step_size = 0.07;
  s.particles = 64;
  const auto draws = hmc::test::sample(model, s, 0, s.particles);
  EXPECT_EQ(draws.adapted.step_size, 0.07);
  EXPECT_EQ(draws.adapted.metric, hmc::MetricKind::kUnit);
  for (double v : draws.adapted.inv_metric) EXPECT_EQ(v, 1.0);
}

// ChEES's criterion has a maximum about every half period of a Gaussian; the adaptation
// climbs from one step (and from 1 once the metric whitens the positions) to the first,
// about 2.25 for a unit Gaussian with jitter. Before 2026-12-04 a restarted dual averaging's
// tenfold step size lifted the length past it, to about 7 (mean 3.5 steps instead of 1.2).
TEST(Adaptation, CheesSettlesAtTheFirstMaximum) {
  const auto model =
      hmc::models::HarmonicOscillator::from_config({{"spring_constants", {1.0, 4.0, 9.0, 16.0}}}, nullptr);
  auto s = adaptive("diag", "chees", 35);
  s.warmup = 200;
  s.draws = 100;
  s.particles = 256;
  const auto draws = hmc::test::sample(model, s, 0, s.particles);
  ASSERT_EQ(draws.adapted.metric, hmc::MetricKind::kDiag);
  EXPECT_GT(draws.adapted.trajectory_length, 0.5);
  EXPECT_LT(draws.adapted.trajectory_length, 3.14);  // half a period of the whitened Gaussian
}

// The shipped coin-toss config, adaptation on as it ships, against Beta(1 + heads, 1 + tails).
TEST(Adaptation, CoinTossDefaultConfigMatchesBeta) {
  const auto resolved = hmc::io::resolve_config(std::string(HMC_SOURCE_DIR) + "/configs/coin_toss.json", {},
                                                hmc::app::registry().catalog());
  auto s = hmc::io::run_config(resolved.config).sampler;
  ASSERT_TRUE(s.adapt.enabled) << "configs/coin_toss.json should adapt";
  const auto model = hmc::models::CoinToss::from_config(resolved.config["model"], resolved.data);
  const auto counts = hmc::models::CoinToss::count_tosses(resolved.data);
  const auto draws = hmc::test::sample(model, s, 0, s.particles);
  const auto summary = hmc::test::summarize(draws, model.parameter_names());
  for (std::size_t c = 0; c < counts.size(); ++c) {
    const double a = 1.0 + counts[c].first, b = 1.0 + counts[c].second;
    expect_moments(summary[c], a / (a + b), a * b / ((a + b) * (a + b) * (a + b + 1)));
  }
}

}  // namespace
