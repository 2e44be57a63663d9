// The warmup's health (sampler/health.hpp): the quartiles of its checks, the restart of a
// minority of particles stuck far from the rest, the robust statistics that keep them from
// steering the shared step size, and a checkpoint taken in warmup across restarts that
// resumes bit for bit; the matrix metrics' snapshots of a window (sampler/adapters.hpp).
#include "hmc/sampler/adapters.hpp"
#include "hmc/sampler/health.hpp"
#include "hmc/sampler/run.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

// A named namespace: the toy model's members that only the concept checks look at would
// otherwise be "declared but never referenced" for nvcc.
namespace test_warmup {

using hmc::Row;

/// d independent coordinates: N(0, 1) near the origin and, where q_0 > `wall`, a plateau
/// of density e^-plateau at most (a flat, far region that a particle started there cannot
/// leave: the gradient vanishes and every move stays on the plateau). A particle started
/// beyond the wall is stuck far from the ensemble.
struct Plateau {
  int d = 2;
  double wall = 15.0, plateau = 8.0;
  int dim() const { return d; }
  int num_params() const { return d; }
  std::vector<std::string> parameter_names() const {
    std::vector<std::string> n;
    for (int j = 0; j < d; ++j) n.push_back("x[" + std::to_string(j + 1) + "]");
    return n;
  }
  KOKKOS_INLINE_FUNCTION double log_density(const Row& q) const {
    double lp = 0.0;
    for (int j = 1; j < d; ++j) lp -= 0.5 * q(j) * q(j);
    return lp + (q(0) > wall ? -plateau - 1e-3 * (q(0) - wall) : -0.5 * q(0) * q(0));
  }
  KOKKOS_INLINE_FUNCTION double log_density_gradient(const Row& q, const Row& g) const {
    for (int j = 1; j < d; ++j) g(j) = -q(j);
    g(0) = q(0) > wall ? -1e-3 : -q(0);
    return log_density(q);
  }
  KOKKOS_INLINE_FUNCTION void constrain(const Row& q, const Row& out) const {
    for (int j = 0; j < d; ++j) out(j) = q(j);
  }
};

hmc::sampler::Settings settings(std::int64_t particles, int warmup) {
  hmc::sampler::Settings s;
  s.particles = particles;
  s.warmup = warmup;
  s.draws = 20;
  s.seed = 11;
  // Uniform in (-20, 20) around 0: an eighth of the particles start beyond the wall.
  s.init_radius = 20.0;
  return s;
}

/// Quartiles of a check against sorted values: the bisection's result lies within the
/// order statistics that bracket each quartile.
TEST(Warmup, CheckQuartilesBracketTheOrderStatistics) {
  const int n = 1000;
  hmc::sampler::EnsembleState st(n, 1);
  auto q = Kokkos::create_mirror_view(st.q);
  auto lp = Kokkos::create_mirror_view(st.lp);
  std::vector<double> xs(n), lps(n);
  for (int i = 0; i < n; ++i) {
    xs[i] = std::sin(1.7 * i) * 3.0 + 0.01 * i;
    lps[i] = -0.5 * xs[i] * xs[i];
    q(i, 0) = xs[i];
    lp(i) = lps[i];
  }
  Kokkos::deep_copy(st.q, q);
  Kokkos::deep_copy(st.lp, lp);
  auto s = settings(n, 200);
  hmc::sampler::Health<Plateau> health(Plateau{1}, s, n, 1, 0, hmc::no_allreduce(), true);
  hmc::ReproducibleSums sums;
  const auto f = health.quartile_fences(st, sums);
  std::sort(xs.begin(), xs.end());
  std::sort(lps.begin(), lps.end());
  auto med = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), f.median);
  auto spread = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), f.spread);
  // The median is the 500th value (the smallest with 500 at or below it), found to within
  // 2^-24 of the range (kBisections halvings; the fence adds up to 9 such errors).
  const double tol_x = (xs.back() - xs.front()) * 0x1p-23, tol_lp = 9.0 * (lps.back() - lps.front()) * 0x1p-23;
  EXPECT_NEAR(med(0), xs[499], tol_x);
  EXPECT_NEAR(spread(0), xs[749] - xs[249], 2.0 * tol_x);
  const double iqr = lps[749] - lps[249];
  EXPECT_NEAR(f.lp_fence, lps[249] - std::max(4.0 * iqr, 12.0), tol_lp);
  EXPECT_GT(std::abs(med(0) - xs[498]), tol_x);  // and not its neighbour
}

template <class Sampler>
void run_to(Sampler& s, int it) {
  while (s.iteration() < it) s.iterate();
}

/// The particles started on the plateau are restarted at the checks, and the step size
/// matches that of an ensemble that never had them (within dual averaging's noise), where
/// without the health rule it collapses.
TEST(Warmup, AFarMinorityIsRestartedAndDoesNotSteerTheStepSize) {
  const Plateau m;
  auto s = settings(256, 200);
  hmc::sampler::EnsembleSampler<Plateau> robust(m, s, 0, s.particles);
  ASSERT_EQ(robust.initialise(), 0);
  int on_plateau = 0;
  {
    auto q = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), robust.state().q);
    for (int i = 0; i < s.particles; ++i) on_plateau += q(i, 0) > m.wall;
  }
  ASSERT_GT(on_plateau, 5);
  while (!robust.done()) robust.iterate();
  const auto a = robust.adapted();
  EXPECT_GE(a.repairs.restarted, on_plateau);
  EXPECT_GE(a.repairs.far + a.repairs.stuck, on_plateau);
  EXPECT_EQ(a.repairs.failed, 0);
  EXPECT_EQ(a.repairs.skipped_checks, 0);
  {
    auto q = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), robust.state().q);
    int left = 0;
    for (int i = 0; i < s.particles; ++i) left += q(i, 0) > m.wall;
    EXPECT_EQ(left, 0) << "particles still on the plateau after warmup";
  }

  // The same ensemble without the plateau particles (a small init radius): the step sizes agree.
  auto clean = s;
  clean.init_radius = 2.0;
  hmc::sampler::EnsembleSampler<Plateau> reference(m, clean, 0, clean.particles);
  ASSERT_EQ(reference.initialise(), 0);
  while (!reference.done()) reference.iterate();
  const double ratio = a.step_size / reference.adapted().step_size;
  EXPECT_GT(ratio, 0.8);
  EXPECT_LT(ratio, 1.25);
  EXPECT_EQ(reference.adapted().repairs.restarted, 0);
}

/// A 2-d normal with unit variances and correlation `rho`: at rho = 1 - 1e-10 its mass lies on
/// a ridge 1.4e-5 wide along x0 = x1 (a draw from the normal with its variances lands there
/// with probability 1e-5).
struct Ridge {
  double rho = 0.0;
  int dim() const { return 2; }
  int num_params() const { return 2; }
  std::vector<std::string> parameter_names() const { return {"x[1]", "x[2]"}; }
  KOKKOS_INLINE_FUNCTION double log_density(const Row& q) const {
    return -0.5 * (q(0) * q(0) - 2.0 * rho * q(0) * q(1) + q(1) * q(1)) / (1.0 - rho * rho);
  }
  KOKKOS_INLINE_FUNCTION double log_density_gradient(const Row& q, const Row& g) const {
    g(0) = -(q(0) - rho * q(1)) / (1.0 - rho * rho);
    g(1) = -(q(1) - rho * q(0)) / (1.0 - rho * rho);
    return log_density(q);
  }
  KOKKOS_INLINE_FUNCTION void constrain(const Row& q, const Row& out) const {
    out(0) = q(0);
    out(1) = q(1);
  }
};

/// One check of 56 particles drawn from `m` and 8 at (30, 30), far from them, at the last check
/// or an earlier one; returns how many of the 8 were restarted at a copy of one of the 56 (and,
/// at the last check, checks that all 8 moved inside its log-density fence).
int restarts_at_copies(const Ridge& m, bool at_last_check) {
  const int n = 64, healthy = 56;
  hmc::sampler::EnsembleState st(n, 2);
  auto q = Kokkos::create_mirror_view(st.q);
  auto lp = Kokkos::create_mirror_view(st.lp);
  const hmc::rng::ParticleStream stream(5, 0);
  for (int i = 0; i < n; ++i) {
    double z0 = 30.0, z1 = 30.0;
    if (i < healthy) {
      stream.normal2(static_cast<std::uint32_t>(i), 0, z0, z1);
      z1 = m.rho * z0 + std::sqrt(1.0 - m.rho * m.rho) * z1;
    }
    q(i, 0) = z0;
    q(i, 1) = z1;
    lp(i) = -0.5 * (z0 * z0 - 2.0 * m.rho * z0 * z1 + z1 * z1) / (1.0 - m.rho * m.rho);
  }
  Kokkos::deep_copy(st.q, q);
  Kokkos::deep_copy(st.lp, lp);
  auto s = settings(n, 200);
  hmc::sampler::Health<Ridge> health(m, s, n, 2, 0, hmc::no_allreduce(), true);
  hmc::ReproducibleSums sums;
  auto c = health.flag(st, sums);
  EXPECT_EQ(c.far, n - healthy);
  hmc::ParticleView restarted("restarted", n);
  EXPECT_GT(health.last_check(), 25);
  health.restart(at_last_check ? health.last_check() : 25, st, sums, restarted, c);
  EXPECT_EQ(c.restarted, n - healthy);
  const double fence = health.quartile_fences(st, sums).lp_fence;
  Kokkos::deep_copy(q, st.q);
  Kokkos::deep_copy(lp, st.lp);
  int copies = 0;
  for (int i = healthy; i < n; ++i) {
    if (at_last_check) {
      EXPECT_GE(lp(i), fence) << "particle " << i << " restarted outside the fence";
    }
    bool twin = false;
    for (int j = 0; j < healthy && !twin; ++j) twin = q(j, 0) == q(i, 0) && q(j, 1) == q(i, 1) && lp(j) == lp(i);
    copies += twin ? 1 : 0;
  }
  return copies;
}

/// A restarted particle is drawn from the normal fitted to the particles the check trusts. At
/// the last check, which no later one follows, the draw is kept only where the check would not
/// call it far, and after /sampler/init/attempts such draws the particle starts at a copy of a
/// trusted one (a donor). On independent coordinates the normal fits and no restart copies; on
/// a ridge (as on hmm_k3_t2000, a skewed 33-parameter posterior, where the draws landed 100 to
/// 13,000 nats below the ensemble and one restarted at the last check settled in a minor mode
/// for the whole run) every draw is far: at the last check every restart copies, at an earlier
/// one none does (the next check catches it).
TEST(Warmup, ARestartAtTheLastCheckLandsInsideTheFencesOrCopiesATrustedParticle) {
  const Ridge ridge{1.0 - 1e-10};
  EXPECT_EQ(restarts_at_copies(Ridge{0.0}, true), 0);
  EXPECT_EQ(restarts_at_copies(ridge, true), 8);
  EXPECT_EQ(restarts_at_copies(ridge, false), 0);
}

/// Runs a sampler to each warmup iteration of `at`, resumes a second one from its rows and
/// loop state, runs both to the end and checks that they agree bit for bit; `check` compares
/// what each adapted.
template <class Check>
void expect_bitwise_resumes(const hmc::sampler::Settings& s, const std::vector<int>& at, Check check) {
  const Plateau m;
  for (const int it : at) {
    hmc::sampler::EnsembleSampler<Plateau> a(m, s, 0, s.particles), b(m, s, 0, s.particles);
    ASSERT_EQ(a.initialise(), 0);
    run_to(a, it);
    b.restore(a.particle_rows(), a.loop_state());
    while (!a.done()) {
      a.iterate();
      b.iterate();
    }
    EXPECT_EQ(a.particle_rows(), b.particle_rows()) << "checkpoint at " << it;
    EXPECT_EQ(a.adapted().step_size, b.adapted().step_size) << "checkpoint at " << it;
    check(a.adapted(), b.adapted());
  }
}

/// A checkpoint in warmup, before a check that restarts particles and after one, resumes bit
/// for bit, restarts and their counts included.
TEST(Warmup, ResumeAcrossRestartsIsBitwise) {
  expect_bitwise_resumes(settings(64, 120), {20, 26, 75, 101}, [](const auto& a, const auto& b) {
    EXPECT_GT(a.repairs.restarted, 0);
    EXPECT_EQ(a.repairs.restarted, b.repairs.restarted);
  });
}

/// The same with the low_rank metric, whose snapshots of the window are part of the rows: a
/// checkpoint before the window, between two of its snapshots and after its end.
TEST(Warmup, ResumeInALowRankWindowIsBitwise) {
  auto s = settings(64, 120);  // one window, iterations 19 to 108: a snapshot every 5
  s.adapt.metric = hmc::MetricKind::kLowRank;
  expect_bitwise_resumes(s, {10, 52, 111}, [](const auto& a, const auto& b) {
    EXPECT_EQ(a.metric, hmc::MetricKind::kLowRank);
    EXPECT_EQ(a.inv_metric, b.inv_metric);
  });
}

/// Snapshots: kSnapshots iterations per window, spread over it, the last at its end.
TEST(Warmup, SnapshotsSpreadOverEachWindow) {
  hmc::sampler::AdaptSettings a;
  const hmc::sampler::WindowSchedule w(1000, a);  // windows of 25, 50, 100, 200, 500 iterations
  const int k = hmc::sampler::MetricAdapter::kSnapshots;
  int start = w.first();
  for (const int end : w.ends()) {
    std::vector<int> at;
    for (int it = 1; it <= 1000; ++it)
      if (w.snapshot(it, k) && it >= start && it <= end) at.push_back(it);
    ASSERT_EQ(static_cast<int>(at.size()), k) << "window ending at " << end;
    EXPECT_EQ(at.back(), end);
    const int stride = std::max(1, (end - start + 1) / k);
    for (std::size_t i = 1; i < at.size(); ++i) EXPECT_EQ(at[i] - at[i - 1], stride);
    start = end + 1;
  }
  EXPECT_FALSE(w.snapshot(w.first() - 1, k));
  EXPECT_FALSE(w.snapshot(w.ends().back() + 1, k));
}

/// Draws of n particles from d independent log-gamma(α) coordinates (q = log x, x ~ Gamma(α):
/// density ∝ exp(α q - e^q), gradient α - e^q; with α = 0.2 as skewed as the log of a
/// probability piled against 0) fed to a low_rank MetricAdapter at every iteration of its
/// first window, or only at the window's end.
std::vector<double> low_rank_of_log_gamma_draws(int n, int d, bool whole_window) {
  hmc::sampler::Settings s;
  s.particles = n;
  s.warmup = 400;
  s.adapt.metric = hmc::MetricKind::kLowRank;
  s.adapt.base_window = 200;  // one window, iterations 76 to 350
  hmc::sampler::MetricAdapter adapter(n, d, s);
  const hmc::sampler::WindowSchedule w(s.warmup, s.adapt);
  hmc::StateView q("q", n, d), g("g", n, d);
  auto qh = Kokkos::create_mirror_view(q);
  auto gh = Kokkos::create_mirror_view(g);
  hmc::ParticleView weights("weights", n);
  Kokkos::deep_copy(weights, 1.0);
  std::mt19937_64 rng(5);
  const double alpha = 0.2;
  std::gamma_distribution<double> gamma(alpha, 1.0);
  const int end = w.ends().front();
  for (int it = w.first(); it <= end; ++it) {
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < d; ++j) {
        const double x = std::max(gamma(rng), 1e-300);
        qh(i, j) = std::log(x);
        gh(i, j) = alpha - x;
      }
    Kokkos::deep_copy(q, qh);
    Kokkos::deep_copy(g, gh);
    if (whole_window || it == end) adapter.accumulate(it, q, g);
  }
  EXPECT_TRUE(adapter.window_end(end));
  hmc::ReproducibleSums sums;
  adapter.estimate(weights, sums);
  EXPECT_EQ(adapter.kind(), hmc::MetricKind::kLowRank);
  return adapter.inv_metric();
}

/// Largest |Σ_ij| / sqrt(Σ_ii Σ_jj) off the diagonal (0 when the low-rank correction found
/// no direction).
double largest_correlation(const std::vector<double>& m, int d) {
  double most = 0.0;
  for (int i = 0; i < d; ++i)
    for (int j = 0; j < d; ++j)
      if (i != j) most = std::max(most, std::abs(m[i * d + j]) / std::sqrt(m[i * d + i] * m[j * d + j]));
  return most;
}

/// For independent coordinates the low-rank correction has no direction to find. From 64
/// particles in d = 33, one snapshot's covariances are noisy enough (eigenvalues spread over
/// about 0.09 to 2.9 for Gaussian draws, wider for skewed ones) that the cutoff (2, 1/2) keeps
/// directions that are not there; the window's 16 snapshots (1,024 draws) keep none, so the
/// metric is the Fisher diagonal.
TEST(Warmup, LowRankFromTheWindowsSnapshotsFindsNoDirectionInIndependentCoordinates) {
  const int n = 64, d = 33;
  const auto pooled = low_rank_of_log_gamma_draws(n, d, true);
  const auto one = low_rank_of_log_gamma_draws(n, d, false);
  EXPECT_EQ(largest_correlation(pooled, d), 0.0);
  EXPECT_GT(largest_correlation(one, d), 0.1);
}

/// /sampler/adapt/restarts false: the same particles are found, none moves.
TEST(Warmup, RestartsOffMovesNoParticle) {
  const Plateau m;
  auto s = settings(128, 120);
  s.adapt.restarts = false;
  hmc::sampler::EnsembleSampler<Plateau> e(m, s, 0, s.particles);
  ASSERT_EQ(e.initialise(), 0);
  while (!e.done()) e.iterate();
  EXPECT_EQ(e.adapted().repairs.restarted, 0);
  EXPECT_GT(e.adapted().repairs.far + e.adapted().repairs.stuck, 0);
}

}  // namespace test_warmup
