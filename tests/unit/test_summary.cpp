#include "hmc/core/draw_source.hpp"
#include "hmc/diagnostics/convergence.hpp"
#include "hmc/diagnostics/detail/parallel.hpp"
#include "hmc/diagnostics/summary.hpp"
#include "support/in_memory.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

namespace {

using hmc::test::LocalDraws;
namespace dg = hmc::diagnostics;

LocalDraws make_draws(int particles, int draws, const std::function<double(int, int)>& f) {
  LocalDraws d;
  d.draws = LocalDraws::HostDraws("d", particles, draws, 1);
  for (int i = 0; i < particles; ++i)
    for (int t = 0; t < draws; ++t) d.draws(i, t, 0) = f(i, t);
  return d;
}

/// Draws with every column filled: `params` AR(1) parameters (parameter 1 of every
/// tenth particle shifted far away), and the statistics.
LocalDraws make_run(int particles, int draws, int params, unsigned seed) {
  LocalDraws a;
  a.allocate(particles, draws, params);
  const auto lp = a.stat("lp"), accept = a.stat("acceptance_rate"), steps = a.stat("n_steps");
  const auto energy = a.stat("energy"), divergent = a.stat("diverging"), step_size = a.stat("step_size");
  a.accept_sum = LocalDraws::HostVector("as", particles);
  a.divergences = LocalDraws::HostVector("dd", particles);
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z;
  std::uniform_real_distribution<double> u;
  for (int i = 0; i < particles; ++i) {
    std::vector<double> s(static_cast<std::size_t>(params));
    for (auto& x : s) x = z(rng);
    double e = 0.0;
    for (int t = 0; t < draws; ++t) {
      for (int k = 0; k < params; ++k) {
        s[k] = 0.6 * s[k] + 0.8 * z(rng);
        a.draws(i, t, k) = s[k] + k + (k == 1 && i % 10 == 0 ? 40.0 : 0.0);
      }
      lp(i, t) = -0.5 * s[0] * s[0];
      accept(i, t) = u(rng);
      steps(i, t) = 5 + t % 3;
      e = (i % 4 == 0 ? 0.97 : 0.2) * e + z(rng);
      energy(i, t) = e + 3.0;
      divergent(i, t) = t % 17 == 0 ? 1.0 : 0.0;
      step_size(i, t) = 0.25;
    }
    a.accept_sum(i) = 0.7 * draws;
    a.divergences(i) = i % 2;
  }
  a.adapted.step_size = 0.25;
  return a;
}

std::vector<std::string> names_of(int params) {
  std::vector<std::string> n;
  for (int k = 0; k < params; ++k) n.push_back("p[" + std::to_string(k + 1) + "]");
  return n;
}

/// The draws of particles [0, keep) of `source` in a MemorySource.
hmc::MemorySource copy_of(const hmc::DrawSource& source, std::int64_t keep) {
  hmc::StoreLayout layout = source.layout();
  const std::int64_t draws = source.available(hmc::Section::kPosterior);
  layout.particles = keep;
  layout.draws = draws;
  layout.warmup_draws = 0;
  std::vector<double> values(static_cast<std::size_t>(layout.num_columns() * keep * draws));
  for (int c = 0; c < layout.num_columns(); ++c)
    source.read(hmc::Section::kPosterior, c, 0, keep, values.data() + static_cast<std::size_t>(c * keep * draws));
  return hmc::MemorySource(layout, std::move(values));
}

bool same(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

#define EXPECT_SAME(a, b) EXPECT_TRUE(same((a), (b))) << #a " = " << (a) << " vs " << (b)

void expect_same_statistics(const dg::ParameterSummary& a, const dg::ParameterSummary& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_SAME(a.mean, b.mean);
  EXPECT_SAME(a.sd, b.sd);
  EXPECT_SAME(a.q5, b.q5);
  EXPECT_SAME(a.q50, b.q50);
  EXPECT_SAME(a.q95, b.q95);
  EXPECT_SAME(a.mcse_mean, b.mcse_mean);
  EXPECT_SAME(a.mcse_sd, b.mcse_sd);
  EXPECT_SAME(a.mcse_q5, b.mcse_q5);
  EXPECT_SAME(a.mcse_q95, b.mcse_q95);
  EXPECT_SAME(a.ess_bulk, b.ess_bulk);
  EXPECT_SAME(a.ess_tail, b.ess_tail);
  EXPECT_SAME(a.rhat, b.rhat);
  EXPECT_SAME(a.rhat_nested, b.rhat_nested);
}

TEST(Summary, QuantilesInterpolateLikeNumpy) {
  std::vector<double> v = {10, 1, 9, 2, 8, 3, 7, 4, 6, 5};
  EXPECT_DOUBLE_EQ(dg::quantile(v, 0.05), 1.45);
  EXPECT_DOUBLE_EQ(dg::quantile(v, 0.5), 5.5);
  EXPECT_DOUBLE_EQ(dg::quantile(v, 0.95), 9.55);
  EXPECT_DOUBLE_EQ(dg::quantile(v, 1.0), 10);
  EXPECT_DOUBLE_EQ(dg::quantile(v, 0.0), 1);
}

TEST(Summary, MeanSdAndParticleBatchMcse) {
  // Particle i's draws are i + {-1, +1}: per-particle means 0..3.
  const auto d = make_draws(4, 2, [](int i, int t) { return i + (t == 0 ? -1.0 : 1.0); });
  const auto s = hmc::test::summarize_parameter(d, 0, "x");
  EXPECT_DOUBLE_EQ(s.mean, 1.5);
  // values -1,1,0,2,1,3,2,4: sum of squares about 1.5 = 18 -> var 18/7
  EXPECT_NEAR(s.sd, std::sqrt(18.0 / 7.0), 1e-14);
  // per-particle mean squared deviations about 1.5: {3.25, 1.25, 1.25, 3.25}, sd sqrt(4/3)
  EXPECT_NEAR(s.mcse_sd, std::sqrt(4.0 / 3.0) / 2.0 / (2.0 * std::sqrt(18.0 / 7.0)), 1e-14);
}

TEST(Summary, McseMatchesTheSpreadOfIndependentRepeats) {
  // Autocorrelated AR(1) particles: the estimator must account for the correlation.
  auto run = [](unsigned seed) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> z;
    std::vector<double> state(200, 0.0);
    for (auto& x : state) x = z(rng);
    const double rho = 0.9;
    return make_draws(200, 100, [&](int i, int) {
      state[i] = rho * state[i] + std::sqrt(1 - rho * rho) * z(rng);
      return state[i];
    });
  };
  double sum_sq = 0.0, mcse = 0.0;
  const int repeats = 40;
  for (int r = 0; r < repeats; ++r) {
    const auto s = hmc::test::summarize_parameter(run(100 + r), 0, "x");
    sum_sq += s.mean * s.mean;  // true mean 0
    mcse += s.mcse_mean / repeats;
  }
  const double actual = std::sqrt(sum_sq / repeats);
  // The naive iid standard error would be 1/sqrt(20000) ~ 0.0071, 4.4x too small.
  EXPECT_NEAR(mcse / actual, 1.0, 0.3) << "mcse " << mcse << " vs actual spread " << actual;
  EXPECT_GT(mcse, 2.5 / std::sqrt(20000.0));
}

TEST(Summary, SingleParticleUsesBatchMeans) {
  const auto d = make_draws(1, 100, [](int, int t) { return t % 2 == 0 ? 1.0 : -1.0; });
  const auto s = hmc::test::summarize_parameter(d, 0, "x");
  EXPECT_DOUBLE_EQ(s.mean, 0.0);
  EXPECT_TRUE(std::isfinite(s.mcse_mean));
}

TEST(Summary, StatisticsTogetherEqualTheSeparateFunctionsWhateverTheBlocks) {
  // Even and odd draw counts, ties, one chain: statistics() shares the sort and the
  // ranks and runs in blocks; each value must be bitwise that of its own function.
  std::mt19937_64 rng(9);
  std::normal_distribution<double> z;
  struct Case {
    int chains, draws;
    bool ties;
  };
  for (const Case c : {Case{30, 40, false}, Case{9, 37, false}, Case{1, 64, false}, Case{25, 20, true}}) {
    std::vector<double> v(static_cast<std::size_t>(c.chains * c.draws));
    for (int i = 0; i < c.chains; ++i) {
      double a = z(rng);
      for (int t = 0; t < c.draws; ++t) {
        a = 0.5 * a + z(rng);
        v[static_cast<std::size_t>(i * c.draws + t)] = c.ties ? std::round(a) : a;
      }
    }
    const dg::ChainDraws x{v.data(), c.chains, c.draws, c.draws, 1};
    const double expected[7] = {dg::rhat(x),
                                dg::ess_bulk(x),
                                dg::ess_tail(x),
                                dg::ess_mean(x),
                                dg::mcse_mean(x),
                                dg::mcse_quantile(x, 0.05),
                                dg::mcse_quantile(x, 0.95)};
    std::vector<double> sorted = v;
    std::sort(sorted.begin(), sorted.end());
    for (int blocks : {1, 2, 3, 7}) {
      dg::detail::set_blocks_for_testing(blocks);
      dg::Workspace w;
      std::vector<double> kth;
      const std::vector<std::size_t> order = {0, v.size() / 3, v.size() - 1};
      for (int repeat = 0; repeat < 2; ++repeat) {  // the second reuses the workspace
        const dg::Statistics s = dg::statistics(x, &w, order, &kth);
        const double got[7] = {s.rhat, s.ess_bulk, s.ess_tail, s.ess_mean, s.mcse_mean, s.mcse_q5, s.mcse_q95};
        for (int i = 0; i < 7; ++i)
          EXPECT_TRUE(same(got[i], expected[i]) || (std::isnan(got[i]) && std::isnan(expected[i])))
              << "case " << c.chains << "x" << c.draws << " blocks " << blocks << " statistic " << i << ": " << got[i]
              << " vs " << expected[i];
        for (std::size_t i = 0; i < order.size(); ++i) EXPECT_EQ(kth[i], sorted[order[i]]);
      }
      // The separate functions run in blocks too.
      EXPECT_TRUE(same(dg::ess_bulk(x), expected[1]) || std::isnan(expected[1]));
    }
    dg::detail::set_blocks_for_testing(0);
  }
}

TEST(Summary, OverADrawSourceEqualsTheLocalDrawsPathBitwise) {
  const LocalDraws run = make_run(40, 30, 3, 1);
  const auto names = names_of(3);
  const hmc::test::LocalDrawsSource local(run, names);
  const hmc::MemorySource memory = copy_of(local, 40);
  dg::SummaryOptions options;
  options.superchains = 4;
  int calls = 0;
  options.progress = [&](int done, int total) {
    EXPECT_EQ(done, ++calls);
    EXPECT_EQ(total, 3);
  };
  const auto from_source = dg::summarize(memory, options);
  EXPECT_EQ(calls, 3);
  options.progress = nullptr;  // the repeats below check bits only
  const auto from_local = hmc::test::summarize(run, names, 4);
  ASSERT_EQ(from_source.size(), 3u);
  ASSERT_EQ(from_local.size(), 3u);
  for (int k = 0; k < 3; ++k) {
    expect_same_statistics(from_source[k], from_local[k]);
    expect_same_statistics(from_source[k], hmc::test::summarize_parameter(run, k, names[k], 4));
    EXPECT_EQ(from_source[k].particles, 40);
    EXPECT_EQ(from_source[k].diagnostic_particles, 40);
    EXPECT_TRUE(std::isfinite(from_source[k].rhat_nested));
  }
  // Any number of blocks gives the same bits.
  for (int blocks : {1, 3}) {
    dg::detail::set_blocks_for_testing(blocks);
    const auto again = dg::summarize(memory, options);
    for (int k = 0; k < 3; ++k) expect_same_statistics(again[k], from_source[k]);
  }
  dg::detail::set_blocks_for_testing(0);
}

TEST(Summary, MaxDrawsCapUsesTheFirstParticles) {
  const LocalDraws run = make_run(50, 20, 2, 2);
  const hmc::test::LocalDrawsSource all(run, names_of(2));
  dg::SummaryOptions capped;
  capped.superchains = 5;
  capped.max_draws = 200;  // 10 particles of 20 draws
  const auto got = dg::summarize(all, capped);
  dg::SummaryOptions full;
  full.superchains = 5;
  const auto whole = dg::summarize(all, full);
  const hmc::MemorySource prefix = copy_of(all, 10);
  dg::SummaryOptions prefix_options;
  prefix_options.superchains = 5;
  const auto first = dg::summarize(prefix, prefix_options);
  for (int k = 0; k < 2; ++k) {
    EXPECT_EQ(got[k].particles, 50);
    EXPECT_EQ(got[k].diagnostic_particles, 10);
    EXPECT_EQ(got[k].max_draws, 200);
    EXPECT_EQ(whole[k].diagnostic_particles, 50);
    // All particles: mean, sd, mcse_sd, nested R-hat.
    EXPECT_SAME(got[k].mean, whole[k].mean);
    EXPECT_SAME(got[k].sd, whole[k].sd);
    EXPECT_SAME(got[k].mcse_sd, whole[k].mcse_sd);
    EXPECT_SAME(got[k].rhat_nested, whole[k].rhat_nested);
    // The first 10: quantiles and the rank-based statistics.
    for (auto [a, b] : {std::pair{got[k].q5, first[k].q5},
                        {got[k].q50, first[k].q50},
                        {got[k].q95, first[k].q95},
                        {got[k].rhat, first[k].rhat},
                        {got[k].ess_bulk, first[k].ess_bulk},
                        {got[k].ess_tail, first[k].ess_tail},
                        {got[k].mcse_mean, first[k].mcse_mean},
                        {got[k].mcse_q5, first[k].mcse_q5},
                        {got[k].mcse_q95, first[k].mcse_q95}})
      EXPECT_SAME(a, b);
  }
  // A cap below one particle's draws still keeps two particles; one particle stays one.
  capped.max_draws = 7;
  EXPECT_EQ(dg::summarize(all, capped)[0].diagnostic_particles, 2);
  const LocalDraws one = make_run(1, 20, 1, 3);
  EXPECT_EQ(dg::summarize(hmc::test::LocalDrawsSource(one, names_of(1)), capped)[0].diagnostic_particles, 1);
}

TEST(Summary, WarningsOverADrawSourceEqualTheLocalDrawsOnes) {
  const LocalDraws run = make_run(40, 30, 2, 4);
  const auto names = names_of(2);
  const auto params = hmc::test::summarize(run, names, 4);
  const auto old_style = hmc::test::warnings(run, params);
  const hmc::MemorySource memory = copy_of(hmc::test::LocalDrawsSource(run, names), 40);
  EXPECT_EQ(dg::warnings(memory, params, 20.0), old_style);
  // Every check fires on these draws: R-hat (30 autocorrelated draws per particle, and
  // p[2] has far particles), divergences, E-BFMI (some of the slowly mixing fourth
  // particles), separated modes.
  ASSERT_EQ(old_style.size(), 4u);
  EXPECT_NE(old_style[0].find("R-hat above 1.01 for 2 parameter(s) (p[1], p[2]"), std::string::npos);
  EXPECT_EQ(old_style[1].rfind("20 divergent transitions", 0), 0u);
  EXPECT_NE(old_style[2].find("E-BFMI below 0.3 for 4 of 40 particles"), std::string::npos);
  EXPECT_NE(old_style[3].find("separated modes in 1 parameter(s) (p[2]): up to 4 of 40"), std::string::npos);
  // Without the counts summarize() left, warnings() counts from the draws.
  auto bare = params;
  for (auto& p : bare) p.far_particles = -1;
  EXPECT_EQ(dg::warnings(memory, bare, 20.0), old_style);
}

TEST(Summary, EBfmiPerParticle) {
  const LocalDraws run = make_run(6, 25, 1, 5);
  const hmc::test::LocalDrawsSource source(run, names_of(1));
  const auto b = dg::e_bfmi_per_particle(source);
  ASSERT_EQ(b.size(), 6u);
  const auto energy = run.stat("energy");
  for (int i = 0; i < 6; ++i) {
    std::vector<double> e(25);
    for (int t = 0; t < 25; ++t) e[static_cast<std::size_t>(t)] = energy(i, t);
    EXPECT_SAME(b[i], dg::e_bfmi(e.data(), 25, 1));
  }
  const LocalDraws short_run = make_run(3, 1, 1, 6);
  for (double x : dg::e_bfmi_per_particle(hmc::test::LocalDrawsSource(short_run, names_of(1))))
    EXPECT_TRUE(std::isnan(x));
}

}  // namespace
