// logistic_regression: the hand-written gradient against finite differences, the log
// density against a direct formula, the lane (Pack) form against the scalar one, the
// errors of from_config, and the posterior on the standard data
// (configs/data/logistic_regression.json: N = 100, P = 2, with an intercept) against
// means and sds computed by quadrature on a 3-D grid, within 4 Monte Carlo standard
// errors of the run. Fixed seeds: every test is deterministic.
#include "hmc/core/errors.hpp"
#include "hmc/core/pack.hpp"
#include "hmc/diagnostics/summary.hpp"
#include "hmc/model/concept.hpp"
#include "hmc/model/gradient_check.hpp"
#include "hmc/sampler/run.hpp"
#include "logistic_regression.hpp"
#include "support/in_memory.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace {

using hmc::models::LogisticRegression;
using nlohmann::json;

json standard_data() {
  std::ifstream in(std::string(HMC_SOURCE_DIR) + "/configs/data/logistic_regression.json");
  EXPECT_TRUE(in);
  return json::parse(in);
}

/// A small data set with three predictors, for the model without an intercept.
json small_data() {
  return {{"x", {{0.5, -1.0, 2.0}, {1.5, 0.3, -0.7}, {-2.0, 0.1, 0.4}, {0.0, 1.2, -1.1}, {3.0, -0.4, 0.9}}},
          {"y", {1, 0, 0, 1, 1}}};
}

/// log p by the textbook formula, with std:: math on the host (constants dropped as in the model).
double direct_log_density(const json& data, bool intercept, double sa, double sb, const std::vector<double>& q) {
  const auto x = data.at("x").get<std::vector<std::vector<double>>>();
  const auto y = data.at("y").get<std::vector<int>>();
  const std::size_t o = intercept ? 1 : 0;
  double lp = 0.0;
  if (intercept) lp += -q[0] * q[0] / (2 * sa * sa);
  for (std::size_t j = o; j < q.size(); ++j) lp += -q[j] * q[j] / (2 * sb * sb);
  for (std::size_t i = 0; i < x.size(); ++i) {
    double eta = intercept ? q[0] : 0.0;
    for (std::size_t j = 0; j < x[i].size(); ++j) eta += x[i][j] * q[o + j];
    // log p_i = -log(1 + e^-eta), log(1 - p_i) = -log(1 + e^eta): finite for |eta| < 700
    lp += y[i] == 1 ? -std::log1p(std::exp(-eta)) : -std::log1p(std::exp(eta));
  }
  return lp;
}

void check_model(const json& model, const json& data, bool intercept, double sa, double sb, double radius) {
  auto m = LogisticRegression::from_config(model, data);
  hmc::model::plan(m, 256, 2);  // as a run does: the reverse-mode tape
  const auto r = hmc::model::check_gradient(m, hmc::model::initial_points(200, m.dim(), radius, 42));
  EXPECT_TRUE(r.passed(1e-6)) << "worst relative error " << r.max_error();
  for (int i = 0; i < r.points(); ++i) {
    std::vector<double> q(static_cast<std::size_t>(r.dim()));
    for (int j = 0; j < r.dim(); ++j) q[j] = r.q(i, j);
    const double want = direct_log_density(data, intercept, sa, sb, q);
    EXPECT_NEAR(r.lp(i), want, 1e-9 * std::max(1.0, std::abs(want))) << "point " << i;
  }
}

TEST(LogisticRegression, GradientMatchesFiniteDifferences) {
  static_assert(hmc::model::check_model<LogisticRegression>());
  check_model({{"name", "logistic_regression"}}, standard_data(), true, 5.0, 2.5, 3.0);
  // Far out, where |eta| is large and a naive log(1 + e^eta) would overflow.
  check_model({{"priors", {{"alpha_scale", 2.0}, {"beta_scale", 0.7}}}}, standard_data(), true, 2.0, 0.7, 30.0);
  check_model({{"intercept", false}}, small_data(), false, 5.0, 2.5, 4.0);
}

/// The lane gradient (reverse mode on Var<Pack>) against the scalar one (reverse mode on
/// Var<double>), lane by lane (host data).
void expect_lanes_match_scalar() {
  for (const bool intercept : {true, false}) {
    auto m = LogisticRegression::from_config({{"intercept", intercept}}, small_data());
    hmc::model::plan(m, 256, 2);
    m.reverse_scalar = true;
    const int d = m.dim();
    std::vector<hmc::Pack> q(d), g(d), tape(m.lane_scratch_size());
    std::vector<double> scratch(m.scratch_size());
    for (int l = 0; l < hmc::kLanes; ++l)
      for (int j = 0; j < d; ++j) q[j][l] = 0.3 * (l - 3) + 0.7 * j - 1.1 * (l % 3) * (j % 2);
    const hmc::Pack lp = m.log_density_gradient_lanes(hmc::PackRow{q.data()}, hmc::PackRow{g.data()}, tape.data());
    for (int l = 0; l < hmc::kLanes; ++l) {
      std::vector<double> ql(d), gl(d);
      for (int j = 0; j < d; ++j) ql[j] = q[j][l];
      const double want =
          m.log_density_gradient(hmc::Row{ql.data(), 1}, hmc::Row{gl.data(), 1}, hmc::Row{scratch.data(), 1});
      EXPECT_NEAR(lp[l], want, 1e-12 * std::max(1.0, std::abs(want)));
      for (int j = 0; j < d; ++j) EXPECT_NEAR(g[j][l], gl[j], 1e-12 * std::max(1.0, std::abs(gl[j])));
    }
  }
}

TEST(LogisticRegression, LanesMatchTheScalarGradient) {
  // A function, not the loop itself after the skip: on a GPU build the test ends at the skip,
  // and nvcc would warn that the loop is not reachable.
  if (!Kokkos::SpaceAccessibility<Kokkos::HostSpace, hmc::MemSpace>::accessible) GTEST_SKIP() << "device data";
  expect_lanes_match_scalar();
}

TEST(LogisticRegression, NamesAndDims) {
  const auto m = LogisticRegression::from_config(json::object(), standard_data());
  EXPECT_EQ(m.dim(), 3);
  EXPECT_EQ(m.parameter_names(), (std::vector<std::string>{"alpha", "beta[1]", "beta[2]"}));
  const auto m0 = LogisticRegression::from_config({{"intercept", false}}, small_data());
  EXPECT_EQ(m0.parameter_names(), (std::vector<std::string>{"beta[1]", "beta[2]", "beta[3]"}));
}

std::string message_of(const json& model, const json& data) {
  try {
    LogisticRegression::from_config(model, data);
  } catch (const hmc::DataError& e) {
    return std::string("DataError: ") + e.what();
  } catch (const hmc::ConfigError& e) {
    return std::string("ConfigError: ") + e.what();
  }
  return "no error";
}

TEST(LogisticRegression, ConfigErrorsNameTheKey) {
  const json data = small_data();
  EXPECT_THROW(LogisticRegression::from_config({{"priors", {{"alpha_scale", 0.0}}}}, data), hmc::ConfigError);
  EXPECT_NE(message_of({{"priors", {{"alpha_scale", 0.0}}}}, data).find("/model/priors/alpha_scale"),
            std::string::npos);
  EXPECT_NE(message_of({{"priors", {{"beta_scale", -1.0}}}}, data)
                .find("ConfigError: config error: /model/priors/beta_scale"),
            std::string::npos)
      << message_of({{"priors", {{"beta_scale", -1.0}}}}, data);
  EXPECT_NE(message_of({{"intercept", "yes"}}, data).find("ConfigError: config error: /model/intercept"),
            std::string::npos)
      << message_of({{"intercept", "yes"}}, data);
}

TEST(LogisticRegression, DataErrorsNameTheEntry) {
  const auto expect_data_error = [](const json& data, const std::string& part) {
    EXPECT_THROW(LogisticRegression::from_config(json::object(), data), hmc::DataError) << data.dump();
    const std::string msg = message_of(json::object(), data);
    EXPECT_EQ(msg.rfind("DataError: data error: ", 0), 0u) << msg;
    EXPECT_NE(msg.find(part), std::string::npos) << msg << " (want " << part << ")";
  };
  expect_data_error(nullptr, "logistic_regression needs data");
  expect_data_error({{"y", {0, 1}}}, "x");
  expect_data_error({{"x", {{1.0}, {2.0}}}}, "y");
  expect_data_error({{"x", {{1.0}, {2.0}}}, {"y", {0, 2}}}, "/y/1");
  expect_data_error({{"x", {{1.0}, {2.0}}}, {"y", {0, 0.5}}}, "/y/1");
  expect_data_error({{"x", {{1.0, 2.0}, {2.0}}}, {"y", {0, 1}}}, "/x/1");
  expect_data_error({{"x", {{1.0}, {"a"}}}, {"y", {0, 1}}}, "/x/1");
  expect_data_error({{"x", {{1.0}, {2.0}, {3.0}}}, {"y", {0, 1}}}, "/x has 3");
  expect_data_error({{"x", {{1.0}, {2.0}}}, {"y", {0, 1}}, {"N", 3}}, "/N");
}

/// Posterior means and variances of (alpha, beta[1], beta[2]) by the midpoint rule on a
/// grid of (2 K + 1)^3 points spanning ±8 Laplace sds around the mode (found by Newton's
/// method): std:: math on the host, nothing shared with the model's code.
struct Moments3 {
  double mean[3], var[3];
};

Moments3 quadrature(const json& data, double sa, double sb, int K) {
  const auto x = data.at("x").get<std::vector<std::vector<double>>>();
  const auto y = data.at("y").get<std::vector<int>>();
  const std::size_t n = x.size();
  const double prior[3] = {1 / (sa * sa), 1 / (sb * sb), 1 / (sb * sb)};
  double th[3] = {0, 0, 0}, h[3][3] = {};
  for (int it = 0; it < 50; ++it) {
    double g[3] = {0, 0, 0};
    for (int a = 0; a < 3; ++a) {
      g[a] = -prior[a] * th[a];
      for (int b = 0; b < 3; ++b) h[a][b] = a == b ? prior[a] : 0.0;  // minus the Hessian
    }
    for (std::size_t i = 0; i < n; ++i) {
      const double v[3] = {1.0, x[i][0], x[i][1]};
      const double eta = th[0] + v[1] * th[1] + v[2] * th[2], p = 1 / (1 + std::exp(-eta));
      for (int a = 0; a < 3; ++a) {
        g[a] += (y[i] - p) * v[a];
        for (int b = 0; b < 3; ++b) h[a][b] += p * (1 - p) * v[a] * v[b];
      }
    }
    // Solve h step = g by Gaussian elimination (h is symmetric positive definite).
    double m[3][4];
    for (int a = 0; a < 3; ++a) {
      for (int b = 0; b < 3; ++b) m[a][b] = h[a][b];
      m[a][3] = g[a];
    }
    for (int c = 0; c < 3; ++c)
      for (int r = c + 1; r < 3; ++r) {
        const double f = m[r][c] / m[c][c];
        for (int k = c; k < 4; ++k) m[r][k] -= f * m[c][k];
      }
    double step[3];
    for (int r = 2; r >= 0; --r) {
      double s = m[r][3];
      for (int k = r + 1; k < 3; ++k) s -= m[r][k] * step[k];
      step[r] = s / m[r][r];
    }
    for (int a = 0; a < 3; ++a) th[a] += step[a];
  }
  // Laplace sds from the diagonal of h^-1 (cofactors).
  const double det = h[0][0] * (h[1][1] * h[2][2] - h[1][2] * h[2][1]) -
                     h[0][1] * (h[1][0] * h[2][2] - h[1][2] * h[2][0]) +
                     h[0][2] * (h[1][0] * h[2][1] - h[1][1] * h[2][0]);
  const double inv_diag[3] = {(h[1][1] * h[2][2] - h[1][2] * h[2][1]) / det,
                              (h[0][0] * h[2][2] - h[0][2] * h[2][0]) / det,
                              (h[0][0] * h[1][1] - h[0][1] * h[1][0]) / det};
  std::vector<double> grid[3];
  for (int a = 0; a < 3; ++a)
    for (int k = -K; k <= K; ++k) grid[a].push_back(th[a] + 8.0 * std::sqrt(inv_diag[a]) * k / K);
  const std::size_t G = grid[0].size();
  std::vector<double> lp(G * G * G);
  double lp_max = -HUGE_VAL;
  for (std::size_t a = 0; a < G; ++a)
    for (std::size_t b = 0; b < G; ++b)
      for (std::size_t c = 0; c < G; ++c) {
        const double al = grid[0][a], b1 = grid[1][b], b2 = grid[2][c];
        double l = -0.5 * (prior[0] * al * al + prior[1] * b1 * b1 + prior[2] * b2 * b2);
        for (std::size_t i = 0; i < n; ++i) {
          const double eta = al + x[i][0] * b1 + x[i][1] * b2;
          // y eta - log(1 + e^eta), stably
          l += y[i] * eta - (std::max(eta, 0.0) + std::log1p(std::exp(-std::abs(eta))));
        }
        lp[(a * G + b) * G + c] = l;
        lp_max = std::max(lp_max, l);
      }
  double w_sum = 0, s1[3] = {}, s2[3] = {};
  for (std::size_t a = 0; a < G; ++a)
    for (std::size_t b = 0; b < G; ++b)
      for (std::size_t c = 0; c < G; ++c) {
        const double w = std::exp(lp[(a * G + b) * G + c] - lp_max), v[3] = {grid[0][a], grid[1][b], grid[2][c]};
        w_sum += w;
        for (int k = 0; k < 3; ++k) {
          s1[k] += w * v[k];
          s2[k] += w * v[k] * v[k];
        }
      }
  Moments3 out{};
  for (int k = 0; k < 3; ++k) {
    out.mean[k] = s1[k] / w_sum;
    out.var[k] = s2[k] / w_sum - out.mean[k] * out.mean[k];
  }
  return out;
}

void posterior_matches_quadrature(hmc::Algorithm algorithm) {
  const json data = standard_data();
  ASSERT_EQ(data.at("x").size(), 100u);
  ASSERT_EQ(data.at("x").at(0).size(), 2u);
  const auto model = LogisticRegression::from_config(json::object(), data);  // intercept, scales 5 and 2.5
  // 49^3 points over +-8 Laplace sds (a grid of 81^3, K = 40, gives the same moments to
  // 1e-9, against MCSEs of about 1e-3). The reference is converged: a coarser grid agrees
  // to far below the MCSE.
  // Computed once for both algorithms (the quadrature is most of the test's time; each
  // ctest test is a process of its own, so both run in one test).
  static const Moments3 ref = quadrature(data, 5.0, 2.5, 24);
  static const Moments3 coarse = quadrature(data, 5.0, 2.5, 16);
  for (int k = 0; k < 3; ++k) {
    EXPECT_NEAR(coarse.mean[k], ref.mean[k], 1e-6);
    EXPECT_NEAR(coarse.var[k], ref.var[k], 1e-6);
  }

  hmc::sampler::Settings s;
  s.particles = 1024;
  s.warmup = 200;
  s.draws = 200;
  s.step_size = 0.15;
  s.leapfrog_steps = 8;
  s.seed = 20261202;
  s.adapt.enabled = false;  // a fixed step size and path length: the engine itself
  s.algorithm = algorithm;
  const auto draws = hmc::test::sample(model, s, 0, s.particles);
  const auto summary = hmc::test::summarize(draws, model.parameter_names());
  ASSERT_EQ(summary.size(), 3u);
  for (int k = 0; k < 3; ++k) {
    const auto& p = summary[k];
    ASSERT_TRUE(std::isfinite(p.mcse_mean) && p.mcse_mean > 0) << p.name;
    ASSERT_TRUE(std::isfinite(p.mcse_sd) && p.mcse_sd > 0) << p.name;
    const double sd_ref = std::sqrt(ref.var[k]);
    EXPECT_LE(std::abs(p.mean - ref.mean[k]), 4.0 * p.mcse_mean)
        << p.name << ": mean " << p.mean << " vs " << ref.mean[k] << " (mcse " << p.mcse_mean << ")";
    EXPECT_LE(std::abs(p.sd - sd_ref), 4.0 * p.mcse_sd)
        << p.name << ": sd " << p.sd << " vs " << sd_ref << " (mcse " << p.mcse_sd << ")";
    std::printf("%s: mean %.5f (ref %.5f, mcse %.5f), sd %.5f (ref %.5f, mcse %.5f)\n", p.name.c_str(), p.mean,
                ref.mean[k], p.mcse_mean, p.sd, sd_ref, p.mcse_sd);
  }
}

TEST(LogisticRegression, PosteriorMatchesQuadrature) {
  posterior_matches_quadrature(hmc::Algorithm::kHmc);
  posterior_matches_quadrature(hmc::Algorithm::kNuts);
}
// MAMS in a test of its own (a process of its own, the quadrature again): three samplers in one
// test ran past ctest's timeout in the sanitizer build.
TEST(LogisticRegression, MamsPosteriorMatchesQuadrature) { posterior_matches_quadrature(hmc::Algorithm::kMams); }

}  // namespace
