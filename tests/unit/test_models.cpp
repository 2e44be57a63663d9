// Every model's analytic gradient against central finite differences at many random
// points, its log density against the closed form, and its config/data checks.
#include "coin_toss.hpp"
#include "harmonic_oscillator.hpp"
#include "support/gradient_test.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <random>

namespace {

using hmc::Row;
using hmc::test::expect_gradient_matches;
using hmc::test::random_points;
using nlohmann::json;

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
  const auto r = hmc::model::check_gradient(m, hmc::test::to_device(pts)).lp;
  // Beta(h + a, t + b) density of p, times the Jacobian p (1 - p), up to a constant.
  auto closed = [&](double theta) {
    const double p = 1.0 / (1.0 + std::exp(-theta));
    return (h + a - 1) * std::log(p) + (t + b - 1) * std::log1p(-p) + std::log(p * (1 - p));
  };
  for (std::size_t i = 1; i < pts.size(); ++i) {
    EXPECT_NEAR(r(i) - r(0), closed(pts[i][0]) - closed(pts[0][0]), 1e-9);
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
  const auto r = hmc::model::check_gradient(m, hmc::test::to_device({{2.0, 0.0}})).lp;
  // x = (1, 1): U = 1/2 (2 + 2*0.5 + 1) = 2
  EXPECT_NEAR(r(0), -2.0, 1e-14);
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
