// The gradient check behind `hmc diagnose`: it passes a correct gradient, catches a
// wrong one and a non-finite log density, draws its points where the sampler starts,
// and every registered model gets it.
#include "harmonic_oscillator.hpp"
#include "hmc/app/models.hpp"
#include "hmc/core/errors.hpp"
#include "hmc/model/gradient_check.hpp"
#include "hmc/sampler/run.hpp"
#include "hmc/services/diagnose.hpp"
#include "hmm.hpp"
#include "support/device_eval.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

// A named namespace, not an anonymous one: the toy models' members that only the concept
// checks look at would otherwise be "declared but never referenced" for nvcc (#177-D).
namespace test_diagnose {

using hmc::Row;

/// log p(q) = offset - Σ_j [q_j² / 2 + log cosh(q_j)] + q_0 q_1: smooth, non-quadratic,
/// with a coupling; a large offset makes log p large, and its rounding noise with it.
/// `bias` is added to gradient entry `coord` (every entry when coord < 0), `scale`
/// multiplies it: 0 and 1 for the correct gradient. Out of support (log p = -inf) where
/// q_0 > cut.
struct TinyModel {
  int d = 3;
  double bias = 0.0, scale = 1.0, cut = 1000.0, offset = 0.0;
  int coord = -1;
  int dim() const { return d; }
  int num_params() const { return d; }
  std::vector<std::string> parameter_names() const { return {"a", "b", "c"}; }
  KOKKOS_INLINE_FUNCTION double log_density(const Row& q) const {
    if (q(0) > cut) return -hmc::math::infinity();
    double lp = q(0) * q(1);
    for (int j = 0; j < d; ++j) {
      const double x = q(j);
      lp -= 0.5 * x * x + hmc::math::log(0.5 * (hmc::math::exp(x) + hmc::math::exp(-x)));
    }
    return offset + lp;
  }
  KOKKOS_INLINE_FUNCTION double log_density_gradient(const Row& q, const Row& g) const {
    for (int j = 0; j < d; ++j) {
      const double x = q(j), t = (hmc::math::exp(x) - hmc::math::exp(-x)) / (hmc::math::exp(x) + hmc::math::exp(-x));
      g(j) = -x - t + (j == 0 ? q(1) : (j == 1 ? q(0) : 0.0));
      if (coord < 0 || coord == j) g(j) = g(j) * scale + bias;
    }
    return log_density(q);
  }
  KOKKOS_INLINE_FUNCTION void constrain(const Row& q, const Row& out) const {
    for (int j = 0; j < d; ++j) out(j) = q(j);
  }
};

TinyModel tiny(double bias, double scale = 1.0, int coord = -1, double offset = 0.0) {
  TinyModel m;
  m.bias = bias, m.scale = scale, m.coord = coord, m.offset = offset;
  return m;
}

/// The HMM with a gradient entry scaled by 1 + rel (a deliberately broken gradient).
struct BrokenHmm {
  hmc::models::Hmm m;
  int coord = 0;
  double rel = 0.0;
  int dim() const { return m.dim(); }
  int num_params() const { return m.num_params(); }
  std::vector<std::string> parameter_names() const { return m.parameter_names(); }
  int scratch_size() const { return m.scratch_size(); }
  int log_density_scratch_size() const { return m.log_density_scratch_size(); }
  KOKKOS_INLINE_FUNCTION double log_density(const Row& q) const { return m.log_density(q); }
  KOKKOS_INLINE_FUNCTION double log_density(const Row& q, const Row& s) const { return m.log_density(q, s); }
  KOKKOS_INLINE_FUNCTION double log_density_gradient(const Row& q, const Row& g, const Row& s) const {
    const double lp = m.log_density_gradient(q, g, s);
    g(coord) *= 1.0 + rel;
    return lp;
  }
  KOKKOS_INLINE_FUNCTION void constrain(const Row& q, const Row& out) const { m.constrain(q, out); }
};

/// Categorical HMM data: K states, V symbols, one sequence of T symbols from a
/// fixed-seed linear congruential generator (sticky states, peaked emissions).
nlohmann::json hmm_words(int K, int V, int T) {
  std::uint64_t s = 12345;
  auto next = [&] {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int>((s >> 33) % 1000);
  };
  nlohmann::json words = nlohmann::json::array();
  int z = 0;
  for (int t = 0; t < T; ++t) {
    if (next() < 100) z = next() % K;
    words.push_back(next() < 700 ? (3 * z) % V : next() % V);
  }
  return {{"num_states", K}, {"num_words", V}, {"words", words}};
}

/// log p(q) = -|q|² / 2 + noise: the noise, of standard deviation `sigma`, is uniform
/// and a hash of q's bits, so it behaves like rounding error (deterministic, and
/// independent between nearby points). The gradient is -q, entry `coord` times `scale`.
struct NoisyModel {
  int d = 40;
  double sigma = 1e-8, scale = 1.0;
  int coord = -1;
  int dim() const { return d; }
  int num_params() const { return d; }
  std::vector<std::string> parameter_names() const { return std::vector<std::string>(d, "x"); }
  KOKKOS_INLINE_FUNCTION double log_density(const Row& q) const {
    std::uint64_t h = 0x9e3779b97f4a7c15ULL;
    double lp = 0.0;
    for (int j = 0; j < d; ++j) {
      const double x = q(j);
      std::uint64_t bits;
      std::memcpy(&bits, &x, sizeof bits);
      h = (h ^ bits) * 0xbf58476d1ce4e5b9ULL;
      h ^= h >> 31;
      lp -= 0.5 * x * x;
    }
    const double u = static_cast<double>(h >> 11) * 0x1.0p-53;  // uniform in [0, 1)
    return lp + sigma * 1.7320508075688772 * (2.0 * u - 1.0);
  }
  KOKKOS_INLINE_FUNCTION double log_density_gradient(const Row& q, const Row& g) const {
    for (int j = 0; j < d; ++j) g(j) = -q(j) * (j == coord ? scale : 1.0);
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
  const auto r = hmc::model::check_gradient(tiny(0.0), hmc::model::initial_points(100, 3, 3.0, 5));
  EXPECT_EQ(r.points(), 100);
  EXPECT_EQ(r.dim(), 3);
  EXPECT_LT(r.max_error(), 1e-8);
  EXPECT_TRUE(r.passed(1e-6));
  for (int i = 0; i < r.points(); ++i) EXPECT_EQ(r.lp(i), r.lp_gradient(i));
}

TEST(GradientCheck, CatchesAGradientOffBy1em3) {
  // An additive error of 1e-3 ...
  const auto biased = hmc::model::check_gradient(tiny(1e-3), hmc::model::initial_points(10, 3, 2.0, 5));
  EXPECT_FALSE(biased.passed(1e-6));
  EXPECT_NEAR(biased.max_error(), 1e-3, 2e-4);
  // ... and a relative one of 1e-3 (the gradient times 1.001).
  const auto scaled = hmc::model::check_gradient(tiny(0.0, 1.001), hmc::model::initial_points(10, 3, 2.0, 5));
  EXPECT_FALSE(scaled.passed(1e-6));
  EXPECT_GT(scaled.max_error(), 1e-4);
  EXPECT_TRUE(scaled.passed(1e-2));
}

TEST(GradientCheck, FailsWhereTheLogDensityIsNotFinite) {
  // -inf for q_0 > 0: about half of the points.
  TinyModel m;
  m.cut = 0.0;
  const auto r = hmc::model::check_gradient(m, hmc::model::initial_points(20, 3, 2.0, 5));
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
      s.init_strategy = hmc::InitStrategy::kValues;
      s.init_values = {0.5, -1.0, 2.0};
    }
    hmc::sampler::EnsembleSampler<TinyModel> sampler(TinyModel{}, s, 0, s.particles);
    ASSERT_EQ(sampler.initialise(), 0);
    const auto q = hmc::test::to_host(sampler.state().q);
    const auto p = hmc::test::to_host(hmc::model::initial_points(37, 3, s.init_radius, s.seed, s.init_values));
    for (int i = 0; i < 37; ++i)
      for (int j = 0; j < 3; ++j) EXPECT_EQ(p(i, j), q(i, j)) << "particle " << i << " coordinate " << j;
  }
}

TEST(GradientCheck, EveryRegisteredModelHasADiagnose) {
  // Every model of the registry carries the diagnose service, instantiated for its type.
  for (const auto& m : hmc::app::registry().entries()) EXPECT_NE(m.diagnose, nullptr) << m.info.name;
  const nlohmann::json model = {{"name", "harmonic_oscillator"}, {"spring_constants", {1.0, 4.0}}};
  hmc::sampler::Settings s;
  s.seed = 3;
  const auto out =
      hmc::services::gradient_report(hmc::models::HarmonicOscillator::from_config(model, nullptr), s, 7, 3e-4);
  EXPECT_EQ(out.labels, (std::vector<std::string>{"theta[1] (q[1])", "theta[2] (q[2])"}));
  EXPECT_EQ(out.check.points(), 7);
  EXPECT_TRUE(out.check.passed(1e-6)) << out.check.max_error();
  EXPECT_THROW(hmc::app::registry().at("no_such_model"), hmc::ConfigError);
}

TEST(GradientCheck, CatchesARelativeError1em4InOneCoordinate) {
  // Entry 1 times 1 + 1e-4, the others right: at a small and at a large log density.
  for (const double offset : {0.0, 1e6}) {
    const auto r =
        hmc::model::check_gradient(tiny(0.0, 1.0 + 1e-4, 1, offset), hmc::model::initial_points(10, 3, 2.0, 5));
    EXPECT_FALSE(r.passed(1e-6)) << offset;
    for (int i = 0; i < r.points(); ++i) {
      EXPECT_TRUE(r.lp_passed(i, 1e-6));
      for (const int j : {0, 2}) EXPECT_TRUE(r.entry_passed(i, j, 1e-6)) << offset << " " << i << " " << j;
      EXPECT_TRUE(r.resolved(i, 1, 1e-6));
    }
    EXPECT_GT(r.max_error(), 1e-5);
  }
}

TEST(GradientCheck, PassesACorrectGradientAtALargeLogDensity) {
  // log p near 3e6: its last bit, 4.7e-10, makes the differences' rounding error
  // 1.08 σ / h ≈ 5e-7, so some entries are off by more than the tolerance alone ...
  const auto r = hmc::model::check_gradient(tiny(0.0, 1.0, -1, 3e6), hmc::model::initial_points(100, 3, 2.0, 5));
  EXPECT_GT(r.max_error(), 1e-6);
  // ... and the measured noise accounts for them.
  EXPECT_TRUE(r.passed(1e-6));
  for (int i = 0; i < r.points(); ++i) {
    EXPECT_GT(r.lp_noise(i), 1e-10);
    EXPECT_LT(r.lp_noise(i), 1e-9);
  }
}

TEST(GradientCheck, MeasuresTheNoiseOfTheLogDensity) {
  NoisyModel m;
  const auto points = hmc::model::initial_points(20, m.d, 2.0, 7);
  const auto r = hmc::model::check_gradient(m, points);
  // Each point's estimate from the sixth differences of its 40 coordinates (the median of
  // 40 varies by about 20 %), and their mean.
  double mean = 0.0;
  for (int i = 0; i < r.points(); ++i) {
    EXPECT_GT(r.lp_noise(i), 0.5 * m.sigma) << i;
    EXPECT_LT(r.lp_noise(i), 2.0 * m.sigma) << i;
    mean += r.lp_noise(i) / r.points();
  }
  EXPECT_GT(mean, 0.85 * m.sigma);
  EXPECT_LT(mean, 1.2 * m.sigma);
  // fd noise ≈ 1.08e-8 / 3e-4 = 3.6e-5: errors beyond a tolerance of 5e-5 alone, within
  // tolerance + noise; the noise itself (about 2.2e-4) is resolvable at that tolerance.
  EXPECT_GT(r.max_error(), 5e-5);
  EXPECT_TRUE(r.passed(5e-5));
  // At the default tolerance the noise is more than 10 tolerances: unresolved, failed,
  // while every error is within tolerance + noise.
  EXPECT_FALSE(r.passed(1e-6));
  for (int i = 0; i < r.points(); ++i)
    for (int j = 0; j < r.dim(); ++j) {
      EXPECT_TRUE(r.within(i, j, 1e-6));
      EXPECT_FALSE(r.resolved(i, j, 1e-6));
    }
  // A larger step resolves it (the log density is quadratic: no truncation error).
  EXPECT_TRUE(hmc::model::check_gradient(m, points, 1e-2).passed(1e-5));
  // A 1e-3 relative error in one entry is still caught through the noise.
  NoisyModel broken = m;
  broken.coord = 7;
  broken.scale = 1.0 + 1e-3;
  const auto b = hmc::model::check_gradient(broken, points);
  EXPECT_FALSE(b.passed(5e-5));
  for (int i = 0; i < b.points(); ++i)
    for (int j = 0; j < b.dim(); ++j)
      if (j != 7) {
        EXPECT_TRUE(b.entry_passed(i, j, 5e-5));
      }
}

TEST(GradientCheck, HmmPassesAndABrokenHmmGradientFails) {
  // K = 5 states, V = 20 symbols (115 coordinates), T = 2000.
  const nlohmann::json model = {{"name", "hmm"}, {"emission", "categorical"}};
  const auto hmm = hmc::models::Hmm::from_config(model, hmm_words(5, 20, 2000));
  ASSERT_EQ(hmm.dim(), 115);
  const auto points = hmc::model::initial_points(3, hmm.dim(), 2.0, 11);
  const auto r = hmc::model::check_gradient(hmm, points);
  EXPECT_TRUE(r.passed(1e-6)) << r.max_error();
  for (int i = 0; i < r.points(); ++i) {
    EXPECT_LT(r.lp(i), -1000.0);
    EXPECT_LT(r.lp_error(i), 1e-12);  // log_density(q) = log_density(q, scratch) = the gradient's value
  }
  for (const int coord : {0, 30, 114}) {
    const auto b = hmc::model::check_gradient(BrokenHmm{hmm, coord, 1e-4}, points);
    EXPECT_FALSE(b.passed(1e-6)) << coord;
    for (int i = 0; i < b.points(); ++i)
      for (int j = 0; j < b.dim(); ++j)
        if (j != coord) {
          EXPECT_TRUE(b.entry_passed(i, j, 1e-6)) << coord << " " << i << " " << j;
        }
  }
}

TEST(GradientCheck, ChunksDoNotChangeTheResult) {
  const nlohmann::json model = {{"name", "hmm"}, {"emission", "categorical"}};
  const auto hmm = hmc::models::Hmm::from_config(model, hmm_words(3, 6, 300));
  const auto points = hmc::model::initial_points(4, hmm.dim(), 2.0, 3);
  const auto whole = hmc::model::check_gradient(hmm, points);
  // One point, and one (point, coordinate) pair, per chunk.
  const auto split = hmc::model::check_gradient(hmm, points, 3e-4, 1);
  for (int i = 0; i < whole.points(); ++i) {
    EXPECT_EQ(whole.lp_gradient(i), split.lp_gradient(i));
    EXPECT_EQ(whole.lp_noise(i), split.lp_noise(i));
    for (int j = 0; j < whole.dim(); ++j) {
      EXPECT_EQ(whole.analytic(i, j), split.analytic(i, j));
      EXPECT_EQ(whole.finite_diff(i, j), split.finite_diff(i, j));
      EXPECT_EQ(whole.sixth_diff(i, j), split.sixth_diff(i, j));
    }
  }
}

}  // namespace test_diagnose
