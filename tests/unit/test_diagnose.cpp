// The gradient check behind `hmc diagnose`: it passes a correct gradient, catches a
// wrong one (exactly against the forward-mode reference where the model has
// log_density_t, else by finite differences), does not call an exact gradient wrong where
// finite differences cannot resolve it (an astronomical or noisy log density: those
// points are inconclusive), draws its points where the sampler starts, and every
// registered model gets it.
#include "eight_schools.hpp"
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
#include <regex>
#include <string>

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

/// TinyModel with its log density also written as a template on its scalar: the exact
/// comparison checks its hand-written gradient (bias, scale, coord as TinyModel's)
/// against the forward-mode reference.
struct TemplatedTiny : TinyModel {
  template <class T, class Q>
  KOKKOS_INLINE_FUNCTION T log_density_t(const Q& q) const {
    if (q(0) > cut) return T(-hmc::math::infinity());
    T lp = q(0) * q(1);
    for (int j = 0; j < d; ++j) {
      const T x = q(j);
      lp -= 0.5 * x * x + hmc::math::log(0.5 * (hmc::math::exp(x) + hmc::math::exp(-x)));
    }
    return offset + lp;
  }
};

TemplatedTiny templated(double scale, int coord) {
  TemplatedTiny m;
  m.scale = scale, m.coord = coord;
  return m;
}

/// log p(q) = -exp(k e^(q_0)) - Σ_j q_j² / 2, with an exact hand-written gradient (entry
/// `coord` times `scale`: 1 for the correct one). At init radius 4 log p reaches
/// -exp(7 e⁴) = -1e166; past q_0 = 1.37 it is below -1e12. There the steepness in q_0
/// puts the finite differences at one step off by more than 1e-6 (truncation), and in
/// the other coordinates the differences of f are lost in its rounding.
struct SteepModel {
  int d = 4;
  double k = 7.0, scale = 1.0;
  int coord = -1;
  int dim() const { return d; }
  int num_params() const { return d; }
  std::vector<std::string> parameter_names() const { return {"a", "b", "c", "e"}; }
  template <class T, class Q>
  KOKKOS_INLINE_FUNCTION T log_density_of(const Q& q) const {
    T lp = -hmc::math::exp(k * hmc::math::exp(q(0)));
    for (int j = 0; j < d; ++j) lp -= 0.5 * q(j) * q(j);
    return lp;
  }
  KOKKOS_INLINE_FUNCTION double log_density(const Row& q) const { return log_density_of<double>(q); }
  KOKKOS_INLINE_FUNCTION double log_density_gradient(const Row& q, const Row& g) const {
    const double u = k * hmc::math::exp(q(0));
    for (int j = 0; j < d; ++j) g(j) = -q(j);
    g(0) -= hmc::math::exp(u) * u;
    if (coord >= 0) g(coord) *= scale;
    return log_density(q);
  }
  KOKKOS_INLINE_FUNCTION void constrain(const Row& q, const Row& out) const {
    for (int j = 0; j < d; ++j) out(j) = q(j);
  }
};

/// SteepModel with log_density_t: the exact comparison applies.
struct TemplatedSteep : SteepModel {
  template <class T, class Q>
  KOKKOS_INLINE_FUNCTION T log_density_t(const Q& q) const {
    return log_density_of<T>(q);
  }
};

/// A latent Gaussian process, non-centred, with N + 2 coordinates: log α and log ℓ
/// (normal priors), z ~ N(0, I); f = L z with L the Cholesky factor of K_ij = α² exp(-(x_i
/// - x_j)² / (2 ℓ²)) + 1e-6 α² δ_ij at x_i = i / (N - 1); y_i ~ N(f_i, 0.3²), y_i = sin(6
/// x_i). Where ℓ is long, K is nearly singular and log p carries rounding noise far above
/// one ulp. `Reversed` sums the Cholesky's inner products in the other order: the same
/// function, rounded differently. The log density as a template, and a gradient by
/// forward passes through the other order: two correct gradients that differ by rounding.
/// (This model's gradient takes N + 2 passes; it is a test, not an example.)
template <int N, bool Reversed = false>
struct LatentGp {
  static constexpr double kSigma = 0.3, kJitter = 1e-6;
  double scale = 1.0;  ///< multiplies the gradient's entry 1 (log ℓ): 1 for the correct gradient
  int dim() const { return N + 2; }
  int num_params() const { return N + 2; }
  std::vector<std::string> parameter_names() const { return std::vector<std::string>(N + 2, "x"); }
  template <class T, class Q>
  KOKKOS_INLINE_FUNCTION T log_density_t(const Q& q) const {
    const T log_a = q(0), log_l = q(1);
    const T a2 = hmc::math::exp(2.0 * log_a), inv_l2 = hmc::math::exp(-2.0 * log_l);
    T lp = -0.5 * log_a * log_a - 0.5 * (log_l + 1.0) * (log_l + 1.0);
    T chol[N * (N + 1) / 2];  // row i at i (i + 1) / 2
    for (int i = 0; i < N; ++i) {
      for (int j = 0; j <= i; ++j) {
        const double dx = static_cast<double>(i - j) / (N - 1);
        T sum = a2 * hmc::math::exp(-0.5 * dx * dx * inv_l2) + (i == j ? kJitter * a2 : T(0.0));
        for (int m = 0; m < j; ++m) {
          const int k = Reversed ? j - 1 - m : m;
          sum -= chol[i * (i + 1) / 2 + k] * chol[j * (j + 1) / 2 + k];
        }
        chol[i * (i + 1) / 2 + j] = i == j ? hmc::math::sqrt(sum) : sum / chol[j * (j + 1) / 2 + j];
      }
    }
    for (int i = 0; i < N; ++i) {
      T f = 0.0;
      for (int k = 0; k <= i; ++k) f += chol[i * (i + 1) / 2 + k] * q(2 + k);
      const double y = hmc::math::sin(6.0 * i / (N - 1));
      const T z = q(2 + i), r = (y - f) / kSigma;
      lp -= 0.5 * (z * z + r * r);
    }
    return lp;
  }
  KOKKOS_INLINE_FUNCTION double log_density(const Row& q) const { return log_density_t<double>(q); }
  KOKKOS_INLINE_FUNCTION double log_density_gradient(const Row& q, const Row& g) const {
    const LatentGp<N, !Reversed> other;
    double value = 0.0;
    for (int j = 0; j < N + 2; ++j) g(j) = hmc::model::forward_gradient_entry(other, q, j, value);
    g(1) *= scale;
    return log_density(q);
  }
  KOKKOS_INLINE_FUNCTION void constrain(const Row& q, const Row& out) const {
    for (int j = 0; j < N + 2; ++j) out(j) = q(j);
  }
};

/// The same model without log_density_t: finite differences check it.
template <int N>
struct PlainGp {
  LatentGp<N> m;
  int dim() const { return m.dim(); }
  int num_params() const { return m.num_params(); }
  std::vector<std::string> parameter_names() const { return m.parameter_names(); }
  KOKKOS_INLINE_FUNCTION double log_density(const Row& q) const { return m.log_density(q); }
  KOKKOS_INLINE_FUNCTION double log_density_gradient(const Row& q, const Row& g) const {
    return m.log_density_gradient(q, g);
  }
  KOKKOS_INLINE_FUNCTION void constrain(const Row& q, const Row& out) const { m.constrain(q, out); }
};

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

/// `text` matches `pattern` whole (std::regex, ECMAScript); prints the text when not.
testing::AssertionResult matches(const std::string& text, const std::string& pattern) {
  if (std::regex_match(text, std::regex(pattern))) return testing::AssertionSuccess();
  return testing::AssertionFailure() << "\"" << text << "\" does not match " << pattern;
}

/// `text` contains `part`; prints the text when not.
testing::AssertionResult contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return testing::AssertionSuccess();
  return testing::AssertionFailure() << "no \"" << part << "\" in:\n" << text;
}

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
  EXPECT_EQ(r.method, hmc::model::GradientMethod::kFiniteDifferences);
  EXPECT_EQ(r.points(), 100);
  EXPECT_EQ(r.dim(), 3);
  EXPECT_LT(r.max_error(), 1e-8);
  EXPECT_TRUE(r.passed(1e-6));
  EXPECT_EQ(r.verdict(1e-6), hmc::model::Verdict::kPassed);
  const auto n = r.counts(1e-6);
  EXPECT_EQ(n.points, 100);
  EXPECT_EQ(n.passed, 100);
  EXPECT_EQ(n.wrong + n.inconclusive, 0);
  for (int i = 0; i < r.points(); ++i) EXPECT_EQ(r.lp(i), r.lp_gradient(i));
}

TEST(GradientCheck, CatchesAGradientOffBy1em3) {
  // An additive error of 1e-3 ...
  const auto biased = hmc::model::check_gradient(tiny(1e-3), hmc::model::initial_points(10, 3, 2.0, 5));
  EXPECT_FALSE(biased.passed(1e-6));
  EXPECT_EQ(biased.verdict(1e-6), hmc::model::Verdict::kWrong);
  EXPECT_NEAR(biased.max_error(), 1e-3, 2e-4);
  // ... and a relative one of 1e-3 (the gradient times 1.001).
  const auto scaled = hmc::model::check_gradient(tiny(0.0, 1.001), hmc::model::initial_points(10, 3, 2.0, 5));
  EXPECT_FALSE(scaled.passed(1e-6));
  EXPECT_GT(scaled.max_error(), 1e-4);
  EXPECT_TRUE(scaled.passed(1e-2));
}

TEST(GradientCheck, SkipsPointsWhereTheLogDensityIsNotFinite) {
  // -inf for q_0 > 0: about half of the points. The sampler draws another start there;
  // the check skips them and checks the others.
  TinyModel m;
  m.cut = 0.0;
  const auto r = hmc::model::check_gradient(m, hmc::model::initial_points(20, 3, 2.0, 5));
  const auto n = r.counts(1e-6);
  EXPECT_GT(n.not_finite, 3);
  EXPECT_GT(n.passed, 3);
  EXPECT_EQ(n.wrong, 0);
  EXPECT_EQ(n.passed + n.inconclusive, 20);
  for (int i = 0; i < r.points(); ++i) {
    EXPECT_EQ(r.skip[i] == hmc::model::Skip::kNotFinite, !std::isfinite(r.lp(i))) << i;
    EXPECT_EQ(r.skip[i] == hmc::model::Skip::kNotFinite, r.q(i, 0) > 0.0) << i;
  }
  EXPECT_FALSE(r.passed(1e-6));  // the strict form: every point
  EXPECT_EQ(r.verdict(1e-6), hmc::model::Verdict::kPassed);
  EXPECT_LT(r.max_error(), 1e-8);  // over the points checked
  // A wrong gradient is still found at the points with a finite log density.
  TinyModel w = m;
  w.bias = 1e-3;
  EXPECT_EQ(hmc::model::check_gradient(w, hmc::model::initial_points(20, 3, 2.0, 5)).verdict(1e-6),
            hmc::model::Verdict::kWrong);
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
  hmc::services::DiagnoseOptions d;
  d.points = 7;
  const auto out = hmc::services::gradient_report(hmc::models::HarmonicOscillator::from_config(model, nullptr), s, d);
  EXPECT_EQ(out.labels, (std::vector<std::string>{"theta[1] (q[1])", "theta[2] (q[2])"}));
  EXPECT_EQ(out.check.points(), 7);
  EXPECT_EQ(out.check.method, hmc::model::GradientMethod::kFiniteDifferences);  // no log_density_t
  EXPECT_EQ(out.tolerance, 1e-6);
  EXPECT_TRUE(out.check.passed(1e-6)) << out.check.max_error();
  EXPECT_THROW(hmc::app::registry().at("no_such_model"), hmc::ConfigError);
}

TEST(GradientCheck, CatchesARelativeError1em4InOneCoordinate) {
  // Entry 1 times 1 + 1e-4, the others right: at a small and at a large log density.
  for (const double offset : {0.0, 1e6}) {
    const auto r =
        hmc::model::check_gradient(tiny(0.0, 1.0 + 1e-4, 1, offset), hmc::model::initial_points(10, 3, 2.0, 5));
    EXPECT_FALSE(r.passed(1e-6)) << offset;
    EXPECT_EQ(r.verdict(1e-6), hmc::model::Verdict::kWrong) << offset;
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
  // The differences at h carry noise 1.08e-8 / 3e-4 = 3.6e-5, at h/2 twice that: errors
  // beyond a tolerance of 5e-5 alone, within tolerance + noise; the noise (about 5e-4 and
  // more) is resolvable at a tolerance of 2e-4.
  EXPECT_GT(r.max_error(), 5e-5);
  EXPECT_TRUE(r.passed(2e-4));
  // At the default tolerance the noise is more than 10 tolerances: every entry is
  // unresolved, no point could be checked, and nothing is called wrong.
  for (int i = 0; i < r.points(); ++i)
    for (int j = 0; j < r.dim(); ++j) {
      EXPECT_TRUE(r.within(i, j, 1e-6));
      EXPECT_FALSE(r.resolved(i, j, 1e-6));
      EXPECT_FALSE(r.wrong(i, j, 1e-6));
    }
  EXPECT_FALSE(r.passed(1e-6));
  EXPECT_EQ(r.verdict(1e-6), hmc::model::Verdict::kInconclusive);
  EXPECT_EQ(r.counts(1e-6).unresolved, 20);
  // A larger step resolves it (the log density is quadratic: no truncation error).
  EXPECT_TRUE(hmc::model::check_gradient(m, points, 1e-2).passed(1e-5));
  // A 1e-2 relative error in one entry is still caught through the noise.
  NoisyModel broken = m;
  broken.coord = 7;
  broken.scale = 1.0 + 1e-2;
  const auto b = hmc::model::check_gradient(broken, points);
  EXPECT_EQ(b.verdict(2e-4), hmc::model::Verdict::kWrong);
  for (int i = 0; i < b.points(); ++i)
    for (int j = 0; j < b.dim(); ++j)
      if (j != 7) {
        EXPECT_TRUE(b.entry_passed(i, j, 2e-4));
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
      EXPECT_EQ(whole.finite_diff_half(i, j), split.finite_diff_half(i, j));
      EXPECT_EQ(whole.sixth_diff(i, j), split.sixth_diff(i, j));
      EXPECT_EQ(whole.noise(i, j), split.noise(i, j));
    }
  }
}

TEST(GradientCheck, AnExactGradientAtAnAstronomicalLogDensityIsNotWrong) {
  // (a) The starts of 40 particles at init radius 4: log p from about -1 to -1e166.
  using hmc::model::Verdict;
  const SteepModel m;
  const auto points = hmc::model::initial_points(40, m.dim(), 4.0, 17);
  const auto r = hmc::model::check_gradient(m, points);
  const auto n = r.counts(1e-6);
  double lowest = 0.0, one_step = 0.0;
  for (int i = 0; i < r.points(); ++i) {
    lowest = std::min(lowest, r.lp(i));
    EXPECT_EQ(r.skip[i] == hmc::model::Skip::kAstronomical, std::fabs(r.lp(i)) > 1e12) << i;
    for (int j = 0; j < r.dim(); ++j) {
      EXPECT_FALSE(r.wrong(i, j, 1e-6)) << i << " " << j << ": " << r.analytic(i, j) << " vs " << r.finite_diff(i, j);
      one_step = std::max(one_step, hmc::model::relative_error(r.analytic(i, j), r.finite_diff(i, j)));
    }
  }
  EXPECT_LT(lowest, -1e100);
  // The differences at one step alone are off by more than the tolerance somewhere (a
  // rule that compared them with the gradient alone would call it wrong) ...
  EXPECT_GT(one_step, 1e-6);
  // ... but those points are skipped, the others pass.
  EXPECT_GT(n.astronomical, 5);
  EXPECT_GT(n.passed, 5);
  EXPECT_EQ(n.wrong, 0);
  EXPECT_EQ(r.verdict(1e-6), Verdict::kPassed);
  // The exact comparison checks every point, the astronomical ones too.
  const auto e = hmc::model::check_gradient_exact(TemplatedSteep{}, points);
  EXPECT_EQ(e.method, hmc::model::GradientMethod::kExact);
  EXPECT_TRUE(e.passed(hmc::model::kExactTolerance)) << e.max_error();
  EXPECT_EQ(e.counts(hmc::model::kExactTolerance).passed, 40);
  // A wrong gradient of the same model is still found, at the points that are not skipped.
  SteepModel w;
  w.coord = 1;
  w.scale = 1.001;
  const auto b = hmc::model::check_gradient(w, points);
  EXPECT_EQ(b.verdict(1e-6), Verdict::kWrong);
  int wrong = 0;
  for (int i = 0; i < b.points(); ++i) {
    if (b.wrong(i, 1, 1e-6)) ++wrong;
    for (const int j : {0, 2, 3}) EXPECT_FALSE(b.wrong(i, j, 1e-6)) << i << " " << j;
  }
  EXPECT_GT(wrong, 5);
}

TEST(GradientCheck, ExactComparisonCatchesAWrongHandGradient) {
  // (b) A hand-written gradient on a model with log_density_t, entry 1 off by a relative
  // 1e-6: too little for finite differences at their tolerance of 1e-6, caught by the
  // exact comparison with the forward-mode reference.
  using hmc::model::Verdict;
  const auto points = hmc::model::initial_points(20, 3, 2.0, 5);
  const auto good = hmc::model::check_gradient_exact(templated(1.0, -1), points);
  EXPECT_TRUE(good.passed(hmc::model::kExactTolerance));
  EXPECT_LT(good.max_error(), 1e-13);
  for (int i = 0; i < good.points(); ++i) EXPECT_EQ(good.lp_error(i), 0.0);
  const auto bad = hmc::model::check_gradient_exact(templated(1.0 + 1e-6, 1), points);
  EXPECT_EQ(bad.verdict(hmc::model::kExactTolerance), Verdict::kWrong);
  int wrong = 0;
  for (int i = 0; i < bad.points(); ++i)
    for (int j = 0; j < bad.dim(); ++j) {
      EXPECT_TRUE(bad.resolved(i, j, hmc::model::kExactTolerance));
      if (j != 1) {
        EXPECT_TRUE(bad.entry_passed(i, j, hmc::model::kExactTolerance)) << i << " " << j;
      }
      if (bad.wrong(i, j, hmc::model::kExactTolerance)) ++wrong;
    }
  EXPECT_GT(wrong, 10);
  EXPECT_NE(hmc::model::check_gradient(templated(1.0 + 1e-6, 1), points).verdict(1e-6), Verdict::kWrong);

  // Through the diagnose service: auto picks the exact method, exit code 5, and the
  // line names the entry and both gradients.
  hmc::sampler::Settings s;
  s.seed = 5;
  hmc::services::DiagnoseOptions d;
  const auto report = hmc::services::gradient_report(templated(1.0 + 1e-6, 1), s, d);
  EXPECT_EQ(report.check.method, hmc::model::GradientMethod::kExact);
  EXPECT_EQ(report.tolerance, hmc::model::kExactTolerance);
  EXPECT_EQ(hmc::services::exit_code_of(report.check.verdict(report.tolerance)), hmc::kExitGradientCheck);
  EXPECT_TRUE(matches(hmc::services::gradient_failure(report),
                      "theta\\[2\\] \\(b\\) at the start of particle [0-9]+: log_density_gradient gives "
                      ".*, the forward-mode reference .*: relative error .* > tolerance 1e-08 \\+ noise .*"));
  const std::string table = hmc::services::gradient_table("templated", s, d, report);
  EXPECT_TRUE(contains(table, "method: exact"));
  EXPECT_TRUE(contains(table, "  WRONG\n"));
  EXPECT_TRUE(contains(table, ": FAILED\n"));
  // --method fd checks the same model by finite differences; --method exact needs log_density_t.
  d.method = hmc::services::DiagnoseMethod::kFiniteDifferences;
  EXPECT_EQ(hmc::services::gradient_report(templated(1.0, -1), s, d).check.method,
            hmc::model::GradientMethod::kFiniteDifferences);
  d.method = hmc::services::DiagnoseMethod::kExact;
  EXPECT_THROW(hmc::services::gradient_report(tiny(0.0), s, d), hmc::ConfigError);
}

TEST(GradientCheck, FiniteDifferencesCatchAWrongPlainGradient) {
  // (c) A model without log_density_t, entry 2 off by a relative 1e-4: finite differences.
  hmc::sampler::Settings s;
  s.seed = 5;
  const hmc::services::DiagnoseOptions d;
  const auto report = hmc::services::gradient_report(tiny(0.0, 1.0 + 1e-4, 2), s, d);
  EXPECT_EQ(report.check.method, hmc::model::GradientMethod::kFiniteDifferences);
  EXPECT_EQ(report.check.verdict(1e-6), hmc::model::Verdict::kWrong);
  EXPECT_EQ(hmc::services::exit_code_of(report.check.verdict(report.tolerance)), hmc::kExitGradientCheck);
  EXPECT_TRUE(matches(hmc::services::gradient_failure(report),
                      "theta\\[3\\] \\(c\\) at the start of particle [0-9]+: relative error .* > tolerance "
                      "1e-06 \\+ noise .* at steps h and h/2\\)"));
  // Right: exit code 0.
  const auto right = hmc::services::gradient_report(tiny(0.0), s, d);
  EXPECT_EQ(hmc::services::exit_code_of(right.check.verdict(right.tolerance)), hmc::kExitOk);
  EXPECT_TRUE(contains(hmc::services::gradient_table("tiny", s, d, right),
                       "points: 10 checked, 10 passed, 0 wrong, 0 inconclusive"));
}

TEST(GradientCheck, NoPointCheckedIsInconclusive) {
  // (d) Every point skipped or unresolved: neither passed nor wrong.
  using hmc::model::Verdict;
  const auto points = hmc::model::initial_points(10, 3, 2.0, 5);
  // Log density not finite anywhere.
  TinyModel outside;
  outside.cut = -1e300;
  const auto a = hmc::model::check_gradient(outside, points);
  EXPECT_EQ(a.verdict(1e-6), Verdict::kInconclusive);
  EXPECT_EQ(a.counts(1e-6).not_finite, 10);
  // |log p| > 1e12 everywhere.
  const auto b = hmc::model::check_gradient(tiny(0.0, 1.0, -1, -1e13), points);
  EXPECT_EQ(b.verdict(1e-6), Verdict::kInconclusive);
  EXPECT_EQ(b.counts(1e-6).astronomical, 10);
  // ... where a wrong gradient cannot be told from a right one either.
  EXPECT_EQ(hmc::model::check_gradient(tiny(1e-3, 1.0, -1, -1e13), points).verdict(1e-6), Verdict::kInconclusive);
  // The noise of the differences beyond 10 tolerances at every entry (NoisyModel's test).
  // A step so small that it rounds to 0: the differences are 0 / 0.
  const auto c = hmc::model::check_gradient(tiny(0.0), points, 1e-300);
  EXPECT_EQ(c.verdict(1e-6), Verdict::kInconclusive);
  EXPECT_EQ(c.counts(1e-6).unresolved, 10);
  // Through the diagnose service: exit code 6 and one line saying why.
  hmc::sampler::Settings s;
  s.seed = 5;
  hmc::services::DiagnoseOptions d;
  d.tolerance = 1e-300;
  const auto report = hmc::services::gradient_report(tiny(0.0), s, d);
  EXPECT_EQ(hmc::services::exit_code_of(report.check.verdict(report.tolerance)), hmc::kExitGradientInconclusive);
  EXPECT_TRUE(matches(hmc::services::gradient_inconclusive(report),
                      "no point could be checked \\(10 points: log density not finite at 0, \\|log "
                      "density\\| > 1e\\+12 at 0, an entry unresolved at 10\\); e\\.g\\. theta.*: "
                      "the finite differences cannot resolve it \\(noise .* > 10 \\* tolerance "
                      "1e-300\\); try .*"));
  EXPECT_TRUE(contains(hmc::services::gradient_table("tiny", s, d, report), ": INCONCLUSIVE\n"));
}

TEST(GradientCheck, ExactReferenceIsTheForwardModeGradient) {
  // The reference pass against the closed form of TinyModel's gradient ...
  const auto points = hmc::model::initial_points(5, 3, 2.0, 9);
  const auto r = hmc::model::check_gradient_exact(templated(1.0, -1), points);
  for (int i = 0; i < r.points(); ++i)
    for (int j = 0; j < r.dim(); ++j)
      EXPECT_NEAR(r.reference(i, j), r.analytic(i, j), 1e-13 * std::max(1.0, std::fabs(r.analytic(i, j))));
  static_assert(hmc::model::has_forward_reference<TemplatedTiny>());
  static_assert(!hmc::model::has_forward_reference<TinyModel>());
  static_assert(hmc::model::has_forward_reference<hmc::models::EightSchools>());
  static_assert(!hmc::model::has_forward_reference<hmc::models::Hmm>());
  // ... and against eight_schools' automatic gradient, prepared as for a run (reverse
  // mode on its tape), at the starts of 100 particles at init radius 4.
  auto m = hmc::models::EightSchools::from_config(
      {{"name", "eight_schools"}}, {{"y", {28, 8, -3, 7, -1, 1, 18, 12}}, {"sigma", {15, 10, 16, 11, 9, 11, 10, 18}}});
  hmc::model::plan(m, 100, 1);
  ASSERT_GT(hmc::model::scratch_size(m), 0);  // a tape: reverse mode
  const auto e = hmc::model::check_gradient_exact(m, hmc::model::initial_points(100, m.dim(), 4.0, 9));
  EXPECT_TRUE(e.passed(hmc::model::kExactTolerance)) << e.max_error();
  EXPECT_LT(e.max_error(), 1e-12);
}

TEST(GradientCheck, AGaussianProcessIsNotCalledWrong) {
  // 66 coordinates, 8 starts at init radius 0.5, 2 and 4. Where the length-scale is long
  // the two correct gradients differ by more than the exact tolerance alone (a comparison
  // at the tolerance alone would call them wrong); the measured rounding allows for it.
  // Finite differences do not call it wrong either.
  using hmc::model::Verdict;
  constexpr double kExact = hmc::model::kExactTolerance;
  double raw = 0.0;
  for (const double radius : {0.5, 2.0, 4.0}) {
    const auto points = hmc::model::initial_points(8, 66, radius, 7);
    const auto fd = hmc::model::check_gradient(PlainGp<64>{}, points);
    EXPECT_NE(fd.verdict(1e-6), Verdict::kWrong) << radius;
    EXPECT_GT(fd.counts(1e-6).passed, 0) << radius;
    const auto ex = hmc::model::check_gradient_exact(LatentGp<64>{}, points);
    EXPECT_EQ(ex.counts(kExact).wrong, 0) << radius;
    EXPECT_EQ(ex.verdict(kExact), Verdict::kPassed) << radius;
    raw = std::max(raw, ex.max_error());
  }
  EXPECT_GT(raw, kExact);
  // A relative error of 1e-4 in the length-scale's entry is found by both.
  LatentGp<64> broken;
  broken.scale = 1.0 + 1e-4;
  const auto points = hmc::model::initial_points(8, 66, 2.0, 7);
  EXPECT_EQ(hmc::model::check_gradient_exact(broken, points).verdict(kExact), Verdict::kWrong);
  EXPECT_EQ(hmc::model::check_gradient(PlainGp<64>{broken}, points).verdict(1e-6), Verdict::kWrong);
}

}  // namespace test_diagnose
