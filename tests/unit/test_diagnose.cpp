// The gradient check behind `hmc diagnose`: it passes a correct gradient, catches a
// wrong one and a non-finite log density, draws its points where the sampler starts,
// and every registered model gets it.
#include "hmc/model/gradient_check.hpp"
#include "hmc/sampler/run.hpp"
#include "registry.hpp"
#include "support/device_eval.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>

namespace {

using hmc::Row;

/// log p(q) = -Σ_j [q_j² / 2 + log cosh(q_j)] + q_0 q_1: smooth, non-quadratic, with a
/// coupling. kBias is added to every gradient entry, kScale multiplies it: both 0/1 for
/// the correct gradient. Out of support (log p = -inf) where q_0 > kCut.
template <int kBiasMilli, int kScaleMilli = 1000, int kCut = 1000>
struct TinyModel {
  int d = 3;
  int dim() const { return d; }
  int num_params() const { return d; }
  std::vector<std::string> parameter_names() const { return {"a", "b", "c"}; }
  KOKKOS_INLINE_FUNCTION double log_density(const Row& q) const {
    if (q(0) > kCut) return -hmc::math::infinity();
    double lp = q(0) * q(1);
    for (int j = 0; j < d; ++j) {
      const double x = q(j);
      lp -= 0.5 * x * x + hmc::math::log(0.5 * (hmc::math::exp(x) + hmc::math::exp(-x)));
    }
    return lp;
  }
  KOKKOS_INLINE_FUNCTION double log_density_gradient(const Row& q, const Row& g) const {
    for (int j = 0; j < d; ++j) {
      const double x = q(j), t = (hmc::math::exp(x) - hmc::math::exp(-x)) / (hmc::math::exp(x) + hmc::math::exp(-x));
      g(j) = -x - t + (j == 0 ? q(1) : (j == 1 ? q(0) : 0.0));
      g(j) = g(j) * (kScaleMilli / 1000.0) + kBiasMilli / 1000.0;
    }
    return log_density(q);
  }
  KOKKOS_INLINE_FUNCTION void constrain(const Row& q, const Row& out) const {
    for (int j = 0; j < d; ++j) out(j) = q(j);
  }
};

TEST(GradientCheck, RelativeErrorDefinition) {
  using hmc::model::relative_error;
  EXPECT_DOUBLE_EQ(relative_error(2000.0, 2002.0), 2.0 / 2002.0);  // relative above 1
  EXPECT_DOUBLE_EQ(relative_error(1e-8, 0.0), 1e-8);               // absolute below 1
  EXPECT_DOUBLE_EQ(relative_error(-0.5, 0.5), 1.0);
  EXPECT_TRUE(std::isinf(relative_error(std::numeric_limits<double>::quiet_NaN(), 1.0)));
  EXPECT_TRUE(std::isinf(relative_error(1.0, -std::numeric_limits<double>::infinity())));
  EXPECT_DOUBLE_EQ(hmc::model::finite_difference_step(-50.0, 1e-3), 0.05);
  EXPECT_DOUBLE_EQ(hmc::model::finite_difference_step(0.25, 1e-3), 1e-3);
}

TEST(GradientCheck, PassesACorrectGradient) {
  const auto r = hmc::model::check_gradient(TinyModel<0>{}, hmc::model::initial_points(100, 3, 3.0, 5));
  EXPECT_EQ(r.points(), 100);
  EXPECT_EQ(r.dim(), 3);
  EXPECT_LT(r.max_error(), 1e-8);
  EXPECT_TRUE(r.passed(1e-6));
  for (int i = 0; i < r.points(); ++i) EXPECT_EQ(r.lp(i), r.lp_gradient(i));
}

TEST(GradientCheck, CatchesAGradientOffBy1em3) {
  // An additive error of 1e-3 ...
  const auto biased = hmc::model::check_gradient(TinyModel<1>{}, hmc::model::initial_points(10, 3, 2.0, 5));
  EXPECT_FALSE(biased.passed(1e-6));
  EXPECT_NEAR(biased.max_error(), 1e-3, 2e-4);
  // ... and a relative one of 1e-3 (the gradient times 1.001).
  const auto scaled = hmc::model::check_gradient(TinyModel<0, 1001>{}, hmc::model::initial_points(10, 3, 2.0, 5));
  EXPECT_FALSE(scaled.passed(1e-6));
  EXPECT_GT(scaled.max_error(), 1e-4);
  EXPECT_TRUE(scaled.passed(1e-2));
}

TEST(GradientCheck, FailsWhereTheLogDensityIsNotFinite) {
  // -inf for q_0 > 0: about half of the points.
  const auto r = hmc::model::check_gradient(TinyModel<0, 1000, 0>{}, hmc::model::initial_points(20, 3, 2.0, 5));
  EXPECT_FALSE(r.passed(1e-6));
  EXPECT_TRUE(std::isinf(r.max_error()));
}

TEST(GradientCheck, PointsAreTheSamplersInitialPositions) {
  hmc::sampler::Settings s;
  s.particles = 37;
  s.seed = 99;
  s.init_radius = 1.5;
  for (const bool centred : {false, true}) {
    if (centred) {
      s.init_strategy = "values";
      s.init_values = {0.5, -1.0, 2.0};
    }
    hmc::sampler::EnsembleSampler<TinyModel<0>> sampler(TinyModel<0>{}, s, 0, s.particles);
    ASSERT_EQ(sampler.initialise(), 0);
    const auto q = hmc::test::to_host(sampler.state().q);
    const auto p = hmc::test::to_host(hmc::model::initial_points(37, 3, s.init_radius, s.seed, s.init_values));
    for (int i = 0; i < 37; ++i)
      for (int j = 0; j < 3; ++j) EXPECT_EQ(p(i, j), q(i, j)) << "particle " << i << " coordinate " << j;
  }
}

TEST(GradientCheck, EveryRegisteredModelHasADiagnose) {
  for (const auto& m : hmc::models::registry()) EXPECT_TRUE(static_cast<bool>(m.diagnose)) << m.name;
  const nlohmann::json model = {{"name", "harmonic_oscillator"}, {"spring_constants", {1.0, 4.0}}};
  hmc::sampler::Settings s;
  s.seed = 3;
  const auto out = hmc::models::find_model("harmonic_oscillator")
                       ->diagnose(hmc::models::DiagnoseRequest{model, nullptr, s, 7, 3e-4});
  EXPECT_EQ(out.labels, (std::vector<std::string>{"theta[1] (q[1])", "theta[2] (q[2])"}));
  EXPECT_EQ(out.check.points(), 7);
  EXPECT_TRUE(out.check.passed(1e-6)) << out.check.max_error();
}

}  // namespace
