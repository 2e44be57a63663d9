// Every model's analytic gradient against central finite differences at many random
// points, its log density against the closed form, and its config/data checks.
#include "coin_toss.hpp"
#include "harmonic_oscillator.hpp"
#include "support/device_eval.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <random>

namespace {

using hmc::Row;
using nlohmann::json;

// For each point: [0] lp from log_density, [1] lp from log_density_gradient,
// then d analytic gradient entries, then d central-difference entries.
template <class Model>
hmc::test::HostMatrix gradient_check(const Model& model, const hmc::StateView& points, double h) {
  const int n = static_cast<int>(points.extent(0)), d = model.dim();
  hmc::StateView out("out", n, 2 + 2 * d), work("work", n, d), grad("grad", n, d);
  Kokkos::parallel_for(
      "test::gradient_check", Kokkos::RangePolicy<hmc::ExecSpace>(0, n), KOKKOS_LAMBDA(const int i) {
        const Row q = hmc::row(points, i), w = hmc::row(work, i), g = hmc::row(grad, i);
        out(i, 0) = model.log_density(q);
        out(i, 1) = model.log_density_gradient(q, g);
        for (int j = 0; j < d; ++j) {
          out(i, 2 + j) = g(j);
          for (int k = 0; k < d; ++k) w(k) = q(k);
          w(j) = q(j) + h;
          const double up = model.log_density(w);
          w(j) = q(j) - h;
          const double down = model.log_density(w);
          out(i, 2 + d + j) = (up - down) / (2.0 * h);
        }
      });
  return hmc::test::to_host(out);
}

std::vector<std::vector<double>> random_points(int n, int d, double radius, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-radius, radius);
  std::vector<std::vector<double>> pts(n, std::vector<double>(d));
  for (auto& p : pts)
    for (auto& x : p) x = u(rng);
  return pts;
}

template <class Model>
void expect_gradient_matches(const Model& model, int n_points, double radius, unsigned seed) {
  const int d = model.dim();
  const auto r = gradient_check(model, hmc::test::to_device(random_points(n_points, d, radius, seed)), 1e-5);
  for (int i = 0; i < n_points; ++i) {
    EXPECT_DOUBLE_EQ(r(i, 0), r(i, 1)) << "log_density and log_density_gradient disagree at point " << i;
    for (int j = 0; j < d; ++j) {
      const double a = r(i, 2 + j), fd = r(i, 2 + d + j);
      // Relative error, with absolute error used for entries smaller than 1.
      const double rel = std::abs(a - fd) / std::max({std::abs(a), std::abs(fd), 1.0});
      EXPECT_LE(rel, 1e-6) << "point " << i << " coordinate " << j << ": analytic " << a << " vs fd " << fd;
    }
  }
}

json coin_data(const std::vector<std::pair<int, int>>& heads_tails) {
  json tosses = json::array();
  for (auto [h, t] : heads_tails) {
    json s = json::array();
    for (int i = 0; i < h; ++i) s.push_back(1);
    for (int i = 0; i < t; ++i) s.push_back(0);
    tosses.push_back(s);
  }
  return {{"tosses", tosses}};
}

json coin_model(double a, double b) { return {{"name", "coin_toss"}, {"priors", {{"a", a}, {"b", b}}}}; }

TEST(CoinToss, GradientMatchesFiniteDifferences) {
  const auto m =
      hmc::models::CoinToss::from_config(coin_model(2.0, 3.0), coin_data({{20, 20}, {30, 10}, {0, 5}, {7, 0}}));
  ASSERT_EQ(m.dim(), 4);
  expect_gradient_matches(m, 200, 4.0, 11);
}

TEST(CoinToss, LogDensityIsBetaPosteriorOnLogitScale) {
  const int h = 30, t = 10;
  const double a = 2.0, b = 3.0;
  const auto m = hmc::models::CoinToss::from_config(coin_model(a, b), coin_data({{h, t}}));
  const auto pts = random_points(50, 1, 5.0, 5);
  const auto r = gradient_check(m, hmc::test::to_device(pts), 1e-5);
  // Beta(h + a, t + b) density of p, times the Jacobian p (1 - p), up to a constant.
  auto closed = [&](double theta) {
    const double p = 1.0 / (1.0 + std::exp(-theta));
    return (h + a - 1) * std::log(p) + (t + b - 1) * std::log1p(-p) + std::log(p * (1 - p));
  };
  for (std::size_t i = 1; i < pts.size(); ++i) {
    EXPECT_NEAR(r(i, 0) - r(0, 0), closed(pts[i][0]) - closed(pts[0][0]), 1e-9);
  }
}

TEST(CoinToss, ReadsStandardKeysInNumericOrder) {
  json data = {{"c2", {1, 1, 0}}, {"c10", {0}}, {"c1", {1}}, {"p1", 0.5}};
  const auto counts = hmc::models::CoinToss::count_tosses(data);
  ASSERT_EQ(counts.size(), 3u);
  EXPECT_EQ(counts[0], (std::pair<long, long>{1, 0}));
  EXPECT_EQ(counts[1], (std::pair<long, long>{2, 1}));
  EXPECT_EQ(counts[2], (std::pair<long, long>{0, 1}));
}

TEST(CoinToss, RejectsBadData) {
  EXPECT_THROW(hmc::models::CoinToss::count_tosses(json{{"tosses", {{1, 2}}}}), hmc::DataError);
  EXPECT_THROW(hmc::models::CoinToss::count_tosses(json{{"p1", 0.5}}), hmc::DataError);
  EXPECT_THROW(hmc::models::CoinToss::count_tosses(json(nullptr)), hmc::DataError);
  try {
    hmc::models::CoinToss::count_tosses(json{{"c1", {1, 0, 0.5}}});
    FAIL() << "no error";
  } catch (const hmc::DataError& e) {
    EXPECT_NE(std::string(e.what()).find("/c1/2"), std::string::npos) << e.what();
  }
}

json oscillator(json extra) {
  extra["name"] = "harmonic_oscillator";
  return extra;
}

TEST(HarmonicOscillator, DiagonalGradientMatchesFiniteDifferences) {
  const auto m = hmc::models::HarmonicOscillator::from_config(
      oscillator({{"spring_constants", {0.5, 1, 4, 100}}, {"centres", {1, -2, 0, 3}}}), nullptr);
  expect_gradient_matches(m, 150, 5.0, 3);
}

TEST(HarmonicOscillator, FullPrecisionGradientMatchesFiniteDifferences) {
  const auto m = hmc::models::HarmonicOscillator::from_config(
      oscillator({{"precision", {{4, 1, 0.5}, {1, 3, -0.2}, {0.5, -0.2, 2}}}, {"centres", {1, 2, 3}}}), nullptr);
  expect_gradient_matches(m, 150, 5.0, 4);
}

TEST(HarmonicOscillator, LogDensityIsMinusPotential) {
  const auto m = hmc::models::HarmonicOscillator::from_config(
      oscillator({{"precision", {{2, 0.5}, {0.5, 1}}}, {"centres", {1, -1}}}), nullptr);
  const auto r = gradient_check(m, hmc::test::to_device({{2.0, 0.0}}), 1e-5);
  // x = (1, 1): U = 1/2 (2 + 2*0.5 + 1) = 2
  EXPECT_NEAR(r(0, 0), -2.0, 1e-14);
}

TEST(HarmonicOscillator, RejectsBadConfig) {
  using HO = hmc::models::HarmonicOscillator;
  EXPECT_THROW(HO::from_config(oscillator(json::object()), nullptr), hmc::ConfigError);
  EXPECT_THROW(HO::from_config(oscillator({{"precision", {{1, 2}, {3, 1}}}}), nullptr), hmc::ConfigError);
  EXPECT_THROW(HO::from_config(oscillator({{"precision", {{1, 2}, {2, 1}}}}), nullptr), hmc::ConfigError);
  EXPECT_THROW(HO::from_config(oscillator({{"spring_constants", {1, 2}}, {"centres", {1}}}), nullptr),
               hmc::ConfigError);
}

}  // namespace
