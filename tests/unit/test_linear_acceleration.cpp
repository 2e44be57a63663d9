// linear_acceleration: gradient against central finite differences (σ known and
// estimated, g·t² and ½g·t²), log density against a direct sum over the data, and the
// config and data checks.
#include "hmc/model/gradient_check.hpp"
#include "linear_acceleration.hpp"
#include "support/gradient_test.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <random>

namespace {

using hmc::models::LinearAcceleration;
using hmc::test::random_points;
using nlohmann::json;

json standard_data() {
  std::ifstream in(std::string(HMC_SOURCE_DIR) + "/configs/data/linear_motion.json");
  EXPECT_TRUE(in) << "configs/data/linear_motion.json missing";
  return json::parse(in);
}

json model_json(bool estimate_sigma, bool half_g) {
  return {{"name", "linear_acceleration"}, {"estimate_sigma", estimate_sigma}, {"half_g", half_g}};
}

/// Unconstrained coordinates of (h, v0, g[, sigma]).
std::vector<double> unconstrained(const LinearAcceleration& m, double h, double v0, double g, double sigma = 0) {
  std::vector<double> q = {hmc::transform::interval_inverse(h, m.h_lo, m.h_hi),
                           hmc::transform::interval_inverse(v0, m.v_lo, m.v_hi), g};
  if (m.estimate_sigma) q.push_back(std::log(sigma));
  return q;
}

/// The log density written out over the data, on the host: the same terms as the model
/// (likelihood, g prior, half-normal σ prior, the Jacobians of the interval and log maps),
/// dropping the same constants.
double direct_log_density(const LinearAcceleration& m, const json& data, const std::vector<double>& q) {
  const auto t = data.at("t").get<std::vector<double>>(), z = data.at("z").get<std::vector<double>>();
  auto sig = [](double y) { return 1.0 / (1.0 + std::exp(-y)); };
  const double h = m.h_lo + (m.h_hi - m.h_lo) * sig(q[0]), v0 = m.v_lo + (m.v_hi - m.v_lo) * sig(q[1]), g = q[2];
  const double sigma = m.estimate_sigma ? std::exp(q[3]) : m.sigma;
  double lp = 0.0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    const double s = t[i] - t[0];
    const double r = z[i] - (h + v0 * s + m.c_g * g * s * s);
    lp -= 0.5 * r * r / (sigma * sigma);
  }
  lp -= 0.5 * std::pow((g - m.g_mean) / m.g_sd, 2);
  lp += std::log(sig(q[0]) * sig(-q[0])) + std::log(sig(q[1]) * sig(-q[1]));
  if (m.estimate_sigma) {
    lp += -static_cast<double>(t.size()) * std::log(sigma) - 0.5 * std::pow(sigma / m.sigma_scale, 2) + q[3];
  }
  return lp;
}

void expect_gradient_matches(const LinearAcceleration& m, const std::vector<std::vector<double>>& pts) {
  const auto r = hmc::model::check_gradient(m, hmc::test::to_device(pts));
  ASSERT_EQ(r.points(), static_cast<int>(pts.size()));
  for (int i = 0; i < r.points(); ++i) {
    EXPECT_LE(r.lp_error(i), 1e-12) << "log_density and log_density_gradient disagree at point " << i;
    for (int j = 0; j < r.dim(); ++j) {
      EXPECT_LE(r.error(i, j), 1e-6) << "point " << i << " coordinate " << j << ": analytic " << r.analytic(i, j)
                                     << " vs fd " << r.finite_diff(i, j);
    }
  }
}

class LinearAccelerationVariants : public ::testing::TestWithParam<std::tuple<bool, bool>> {};

TEST_P(LinearAccelerationVariants, GradientMatchesFiniteDifferences) {
  const auto [estimate, half] = GetParam();
  const auto m = LinearAcceleration::from_config(model_json(estimate, half), standard_data());
  ASSERT_EQ(m.dim(), estimate ? 4 : 3);
  // Random points on the unconstrained scale, far from the posterior (large gradients)...
  auto pts = random_points(150, m.dim(), 3.0, estimate ? 21 : 22);
  // ... and near it, where the gradient is small and the absolute error counts.
  std::mt19937_64 rng(5);
  std::normal_distribution<double> jitter(0.0, 1.0);
  for (int k = 0; k < 50; ++k) {
    const double g_hat = half ? -6.0 : -3.0;  // roughly the posterior of either parametrisation
    pts.push_back(unconstrained(m, 100.0 + jitter(rng), 80.0 + 0.5 * jitter(rng), g_hat + 0.05 * jitter(rng),
                                3.0 * std::exp(0.1 * jitter(rng))));
  }
  expect_gradient_matches(m, pts);
}

TEST_P(LinearAccelerationVariants, LogDensityMatchesDirectSum) {
  const auto [estimate, half] = GetParam();
  const json data = standard_data();
  const auto m = LinearAcceleration::from_config(model_json(estimate, half), data);
  const auto pts = random_points(40, m.dim(), 2.5, 9);
  const auto r = hmc::model::check_gradient(m, hmc::test::to_device(pts));
  for (std::size_t i = 0; i < pts.size(); ++i) {
    const double direct = direct_log_density(m, data, pts[i]);
    // The sufficient statistics regroup the same sum: agreement to rounding of its terms.
    EXPECT_NEAR(r.lp(i), direct, 1e-10 * std::max(1.0, std::abs(direct))) << "point " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(SigmaAndHalfG, LinearAccelerationVariants,
                         ::testing::Combine(::testing::Bool(), ::testing::Bool()),
                         [](const ::testing::TestParamInfo<std::tuple<bool, bool>>& info) {
                           return std::string(std::get<0>(info.param) ? "SigmaEstimated" : "SigmaKnown") +
                                  (std::get<1>(info.param) ? "HalfG" : "FullG");
                         });

TEST(LinearAcceleration, FewPointsAndCustomPriorsMatchDirectSum) {
  // Two observations: the least-squares reference is not defined, the fallback is used.
  const json data = {{"t", {5.0, 6.5}}, {"z", {100.0, 140.0}}};
  const json model = {{"priors", {{"h", {50, 200}}, {"v0", {-10, 60}}, {"g", {1.5, 0.5}}, {"sigma_scale", 4}}},
                      {"sigma", 2.5},
                      {"estimate_sigma", true}};
  const auto m = LinearAcceleration::from_config(model, data);
  EXPECT_EQ(m.h_lo, 50.0);
  EXPECT_EQ(m.v_hi, 60.0);
  EXPECT_EQ(m.g_sd, 0.5);
  EXPECT_EQ(m.sigma_scale, 4.0);
  EXPECT_EQ(m.t_shift, 5.0);
  const auto pts = random_points(30, 4, 3.0, 17);
  const auto r = hmc::model::check_gradient(m, hmc::test::to_device(pts));
  EXPECT_TRUE(r.passed(1e-6)) << r.max_error();
  for (std::size_t i = 0; i < pts.size(); ++i) {
    const double direct = direct_log_density(m, data, pts[i]);
    EXPECT_NEAR(r.lp(i), direct, 1e-10 * std::max(1.0, std::abs(direct))) << "point " << i;
  }
}

TEST(LinearAcceleration, HalfGHalvesTheCoefficient) {
  // The same trajectory: g under half_g is twice g without it.
  const json data = standard_data();
  const auto full = LinearAcceleration::from_config(model_json(false, false), data);
  const auto half = LinearAcceleration::from_config(model_json(false, true), data);
  auto q_full = unconstrained(full, 101.0, 79.0, -3.0), q_half = unconstrained(half, 101.0, 79.0, -6.0);
  const auto r = hmc::model::check_gradient(full, hmc::test::to_device({q_full}));
  const auto s = hmc::model::check_gradient(half, hmc::test::to_device({q_half}));
  // Equal likelihoods; only the g prior differs: N(-6, 2) at -3 versus at -6.
  EXPECT_NEAR(r.lp(0) - s.lp(0), -0.5 * (3.0 / 2.0) * (3.0 / 2.0), 1e-8);
}

TEST(LinearAcceleration, ConstrainAndNames) {
  const auto m = LinearAcceleration::from_config(model_json(true, false), standard_data());
  EXPECT_EQ(m.parameter_names(), (std::vector<std::string>{"h", "v0", "g", "sigma"}));
  EXPECT_EQ(LinearAcceleration::from_config(model_json(false, false), standard_data()).parameter_names().size(), 3u);
  std::vector<double> q = unconstrained(m, 123.0, 45.0, -7.5, 2.25), out(4);
  m.constrain(hmc::Row{q.data(), 1}, hmc::Row{out.data(), 1});
  EXPECT_NEAR(out[0], 123.0, 1e-12);
  EXPECT_NEAR(out[1], 45.0, 1e-12);
  EXPECT_EQ(out[2], -7.5);
  EXPECT_NEAR(out[3], 2.25, 1e-12);
}

TEST(LinearAcceleration, RejectsBadConfig) {
  const json data = standard_data();
  auto with_prior = [](const char* key, json v) { return json{{"priors", {{key, v}}}}; };
  auto expect_config_error = [&](const json& model, const std::string& needle) {
    try {
      LinearAcceleration::from_config(model, data);
      ADD_FAILURE() << "no error for " << model.dump();
    } catch (const hmc::ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    }
  };
  expect_config_error(with_prior("h", {70}), "/model/priors/h must have 2 elements");
  expect_config_error(with_prior("h", {70, 100, 150}), "/model/priors/h must have 2 elements");
  expect_config_error(with_prior("v0", {100, 20}), "/model/priors/v0 must have lo < hi");
  expect_config_error(with_prior("v0", {20, 20}), "/model/priors/v0 must have lo < hi");
  expect_config_error(with_prior("g", {-6, 0}), "/model/priors/g must have sd > 0");
  expect_config_error(with_prior("g", {-6}), "/model/priors/g must have 2 elements");
  expect_config_error(with_prior("sigma_scale", 0), "/model/priors/sigma_scale must be > 0");
  expect_config_error({{"sigma", -1.0}}, "/model/sigma must be > 0");
}

TEST(LinearAcceleration, RejectsBadData) {
  auto expect_data_error = [](const json& data, const std::string& needle) {
    try {
      LinearAcceleration::from_config(json::object(), data);
      ADD_FAILURE() << "no error for " << data.dump();
    } catch (const hmc::DataError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_data_error(nullptr, "needs data");
  expect_data_error({{"t", {1, 2}}}, "needs /z");
  expect_data_error({{"t", json::array()}, {"z", json::array()}}, "/t must be a non-empty array");
  expect_data_error({{"t", {1, 2}}, {"z", {1, "x"}}}, "/z/1 must be a finite number");
  expect_data_error({{"t", {1, 2, 3}}, {"z", {1, 2}}}, "/t has 3 entries but /z has 2");
  expect_data_error({{"t", {1, 2}}, {"z", {1, 2}}, {"N", 3}}, "/N is 3 but /z has 2 entries");
  // Extra keys, like the sigmaObs of the standard data, are ignored.
  EXPECT_NO_THROW(LinearAcceleration::from_config(json::object(), {{"t", {1}}, {"z", {2}}, {"sigmaObs", 3}}));
}

}  // namespace
