// Simulation-based calibration (Talts et al. 2018): draw parameters from the prior,
// simulate data, sample the posterior, and rank the true value among the posterior
// draws. If the sampler (warmup included) is right, the ranks are uniform.
#include "coin_toss.hpp"
#include "hmc/model/transforms.hpp"
#include "hmc/sampler/run.hpp"
#include "linear_acceleration.hpp"
#include "support/in_memory.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <random>
#include <vector>

namespace {

using nlohmann::json;

constexpr int kReplicates = 200;
constexpr int kParticles = 99;  // one draw per particle: 100 possible ranks, 10 bins
constexpr int kBins = 10;
// Upper 0.1% point of chi-squared with 9 degrees of freedom: p > 0.001 <=> statistic below it.
constexpr double kChi2Critical = 27.877;

hmc::sampler::Settings sbc_settings(std::uint64_t seed) {
  hmc::sampler::Settings s;
  s.particles = kParticles;
  s.warmup = 150;
  s.draws = 10;
  s.thin = 10;  // keep the last draw of each particle only: independent across particles
  s.step_size = 0.1;
  s.leapfrog_steps = 10;
  s.seed = seed;
  return s;
}

/// rank of `truth` among the draws of parameter k (one per particle).
int rank_of(const hmc::test::LocalDraws& d, int k, double truth) {
  int r = 0;
  for (std::size_t i = 0; i < d.draws.extent(0); ++i) r += d.draws(i, d.draws.extent(1) - 1, k) < truth ? 1 : 0;
  return r;
}

double chi2(const std::vector<int>& ranks) {
  std::vector<int> counts(kBins, 0);
  for (int r : ranks) ++counts[r * kBins / (kParticles + 1)];
  const double expected = static_cast<double>(ranks.size()) / kBins;
  double c = 0.0;
  for (int n : counts) c += (n - expected) * (n - expected) / expected;
  return c;
}

void coin_toss_ranks(hmc::Algorithm algorithm) {
  std::mt19937_64 rng(2024);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::vector<int> ranks;
  for (int r = 0; r < kReplicates; ++r) {
    const double p = uniform(rng);  // Beta(1, 1) prior
    json tosses = json::array();
    for (int t = 0; t < 20; ++t) tosses.push_back(uniform(rng) < p ? 1 : 0);
    const auto model =
        hmc::models::CoinToss::from_config({{"priors", {{"a", 1.0}, {"b", 1.0}}}}, {{"tosses", json::array({tosses})}});
    auto s = sbc_settings(1000 + r);
    s.algorithm = algorithm;
    const auto draws = hmc::test::sample(model, s, 0, kParticles);
    ranks.push_back(rank_of(draws, 0, p));
  }
  EXPECT_LT(chi2(ranks), kChi2Critical);
}

TEST(Sbc, CoinTossRanksAreUniform) { coin_toss_ranks(hmc::Algorithm::kHmc); }
TEST(Sbc, NutsCoinTossRanksAreUniform) { coin_toss_ranks(hmc::Algorithm::kNuts); }
TEST(Sbc, MamsCoinTossRanksAreUniform) { coin_toss_ranks(hmc::Algorithm::kMams); }

double clamp(double x, double lo, double hi) {
  const double margin = 1e-3 * (hi - lo);
  return std::min(hi - margin, std::max(lo + margin, x));
}

/// Least-squares (h, v0, g) of z = h + v0 t + g t^2, by the normal equations.
std::vector<double> least_squares(const json& t, const json& z) {
  double a[3][4] = {};
  for (std::size_t i = 0; i < t.size(); ++i) {
    const double ti = t[i].get<double>(), x[3] = {1.0, ti, ti * ti};
    for (int r = 0; r < 3; ++r) {
      for (int c = 0; c < 3; ++c) a[r][c] += x[r] * x[c];
      a[r][3] += x[r] * z[i].get<double>();
    }
  }
  for (int c = 0; c < 3; ++c)
    for (int r = 0; r < 3; ++r)
      if (r != c) {
        const double f = a[r][c] / a[c][c];
        for (int k = 0; k < 4; ++k) a[r][k] -= f * a[c][k];
      }
  return {a[0][3] / a[0][0], a[1][3] / a[1][1], a[2][3] / a[2][2]};
}

void linear_acceleration_ranks(hmc::Algorithm algorithm) {
  std::mt19937_64 rng(2025);
  std::uniform_real_distribution<double> h_prior(70.0, 150.0), v_prior(20.0, 100.0);
  std::normal_distribution<double> g_prior(-6.0, 2.0), noise(0.0, 3.0);
  std::vector<std::vector<int>> ranks(3);
  for (int r = 0; r < kReplicates; ++r) {
    const double h = h_prior(rng), v0 = v_prior(rng), g = g_prior(rng);
    json t = json::array(), z = json::array();
    for (int i = 0; i < 15; ++i) {
      const double ti = 0.5 * i;
      t.push_back(ti);
      z.push_back(h + v0 * ti + g * ti * ti + noise(rng));
    }
    const auto model = hmc::models::LinearAcceleration::from_config({{"name", "linear_acceleration"}, {"sigma", 3.0}},
                                                                    {{"t", t}, {"z", z}});
    auto s = sbc_settings(5000 + r);
    s.algorithm = algorithm;
    s.adapt.metric = hmc::MetricKind::kDense;  // h, v0 and g are strongly correlated
    s.warmup = 200;
    // Start near the least-squares fit of the simulated data (as configs/linear_acceleration.json
    // does): from far away the first trajectories can strand particles in the flat tails of the
    // uniform priors' logit maps. The start depends on the data only, never on the truth.
    const auto fit = least_squares(t, z);
    s.init_strategy = hmc::InitStrategy::kValues;
    s.init_radius = 0.05;
    s.init_values = {hmc::transform::interval_inverse(clamp(fit[0], 70.0, 150.0), 70.0, 150.0),
                     hmc::transform::interval_inverse(clamp(fit[1], 20.0, 100.0), 20.0, 100.0), fit[2]};
    const auto draws = hmc::test::sample(model, s, 0, kParticles);
    const double truth[3] = {h, v0, g};
    for (int k = 0; k < 3; ++k) ranks[k].push_back(rank_of(draws, k, truth[k]));
  }
  for (int k = 0; k < 3; ++k) EXPECT_LT(chi2(ranks[k]), kChi2Critical) << "parameter " << k;
}

TEST(Sbc, LinearAccelerationRanksAreUniform) { linear_acceleration_ranks(hmc::Algorithm::kHmc); }
TEST(Sbc, NutsLinearAccelerationRanksAreUniform) { linear_acceleration_ranks(hmc::Algorithm::kNuts); }
TEST(Sbc, MamsLinearAccelerationRanksAreUniform) { linear_acceleration_ranks(hmc::Algorithm::kMams); }

}  // namespace
