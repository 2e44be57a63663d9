// /sampler/init/strategy "prior": initial positions are draws from the model's prior.
#include "coin_toss.hpp"
#include "eight_schools.hpp"
#include "hmc/sampler/run.hpp"
#include "linear_acceleration.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <vector>

namespace {

using nlohmann::json;
constexpr int kParticles = 20000;

/// Column j of the ensemble's initial unconstrained positions.
template <class Model>
std::vector<double> initial_column(const Model& m, int j, std::uint64_t seed) {
  hmc::sampler::Settings s;
  s.particles = kParticles;
  s.init_strategy = hmc::InitStrategy::kPrior;
  s.seed = seed;
  hmc::sampler::EnsembleSampler<Model> sampler(m, s, 0, kParticles);
  EXPECT_EQ(sampler.initialise(), 0);
  auto q = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), sampler.state().q);
  std::vector<double> out(kParticles);
  for (int i = 0; i < kParticles; ++i) out[i] = q(i, j);
  return out;
}

/// Mean and variance within 4 standard errors of the truth (iid draws).
void expect_moments(std::vector<double> x, double mean, double var, const char* what) {
  const double n = static_cast<double>(x.size());
  double m = 0, m2 = 0, m4 = 0;
  for (double v : x) m += v / n;
  for (double v : x) {
    m2 += (v - m) * (v - m) / n;
    m4 += std::pow(v - m, 4) / n;
  }
  EXPECT_NEAR(m, mean, 4 * std::sqrt(var / n)) << what << " mean";
  EXPECT_NEAR(m2, var, 4 * std::sqrt((m4 - m2 * m2) / n)) << what << " variance";
}

TEST(PriorInit, CoinTossDrawsBeta) {
  const auto m =
      hmc::models::CoinToss::from_config({{"priors", {{"a", 2.0}, {"b", 5.0}}}}, {{"tosses", {{1, 0, 1}, {0}}}});
  for (int c = 0; c < 2; ++c) {
    auto q = initial_column(m, c, 11);
    for (double& v : q) v = 1.0 / (1.0 + std::exp(-v));
    expect_moments(q, 2.0 / 7.0, 2.0 * 5.0 / (49.0 * 8.0), "Beta(2, 5)");
  }
  // Shapes below 1 take the boosted branch of the gamma sampler.
  const auto small = hmc::models::CoinToss::from_config({{"priors", {{"a", 0.5}, {"b", 0.7}}}}, {{"tosses", {{1}}}});
  auto q = initial_column(small, 0, 12);
  for (double& v : q) v = 1.0 / (1.0 + std::exp(-v));
  expect_moments(q, 0.5 / 1.2, 0.5 * 0.7 / (1.2 * 1.2 * 2.2), "Beta(0.5, 0.7)");
}

TEST(PriorInit, LinearAccelerationDrawsUniformAndNormal) {
  json t = json::array(), z = json::array();
  for (int i = 0; i < 5; ++i) {
    t.push_back(i);
    z.push_back(100.0 + 50.0 * i - 6.0 * i * i);
  }
  const auto m = hmc::models::LinearAcceleration::from_config({{"sigma", 3.0}}, {{"t", t}, {"z", z}});
  auto h = initial_column(m, 0, 13);
  for (double& v : h) v = hmc::transform::interval_forward(v, 70.0, 150.0);
  expect_moments(h, 110.0, 80.0 * 80.0 / 12.0, "h ~ U(70, 150)");
  expect_moments(initial_column(m, 2, 14), -6.0, 4.0, "g ~ N(-6, 2)");
}

TEST(PriorInit, EightSchoolsDrawsHalfCauchyTau) {
  const auto m = hmc::models::EightSchools::from_config(
      {{"priors", {{"mu_loc", 1.0}, {"mu_scale", 5.0}, {"tau_scale", 5.0}}}},
      {{"y", {28, 8, -3, 7, -1, 1, 18, 12}}, {"sigma", {15, 10, 16, 11, 9, 11, 10, 18}}});
  expect_moments(initial_column(m, 0, 15), 1.0, 25.0, "mu ~ N(1, 5)");
  // Half-Cauchy(5): median 5, quartiles 5 tan(pi/8) and 5 tan(3 pi/8).
  const auto log_tau = initial_column(m, 1, 16);
  double below = 0;
  for (double v : log_tau) below += std::exp(v) < 5.0 ? 1.0 : 0.0;
  EXPECT_NEAR(below / kParticles, 0.5, 4 * std::sqrt(0.25 / kParticles));
  expect_moments(initial_column(m, 2, 17), 0.0, 1.0, "theta_tilde[1] ~ N(0, 1)");
}

}  // namespace
