// The HMM's forward pass in parallel time (/model/forward parallel): the team gradient
// against the sequential one, on K = 2..6, T = 1..10^5, categorical and Gaussian
// emissions, several sequences and chunk lengths, on teams of one and more threads (OpenMP
// teams on the host); and the sampler's team path against its one-particle-per-thread path.
#include "hmc/model/concept.hpp"
#include "hmc/sampler/run.hpp"
#include "hmm.hpp"
#include "support/gradient_test.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace {

using hmc::Row;
using hmc::models::Hmm;
using hmc::test::random_points;
using nlohmann::json;

json words(const std::vector<int>& lengths, int V, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> sym(0, V - 1);
  json all = json::array();
  for (int n : lengths) {
    json s = json::array();
    // Runs of one symbol now and then, so that the states are told apart.
    int run = 0, v = 0;
    for (int t = 0; t < n; ++t) {
      if (run-- <= 0) {
        v = sym(rng);
        run = sym(rng);
      }
      s.push_back(v);
    }
    all.push_back(s);
  }
  return {{"num_words", V}, {"words", all}};
}

json ys(const std::vector<int>& lengths, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z(0.0, 1.0);
  std::bernoulli_distribution coin(0.1);
  json all = json::array();
  for (int n : lengths) {
    json s = json::array();
    double level = 0.0;
    for (int t = 0; t < n; ++t) {
      if (coin(rng)) level = level > 0.5 ? -1.0 : 2.0;
      s.push_back(level + 0.7 * z(rng));
    }
    all.push_back(s);
  }
  return {{"y", all}};
}

struct Case {
  json model, data;
  int chunk = 0;  ///< steps per chunk (0: the default, ⌈√T⌉)
};

Hmm parallel_model(const Case& c) {
  json model = c.model;
  model["name"] = "hmm";
  model["forward"] = "parallel";
  Hmm m = Hmm::from_config(model, c.data);
  if (c.chunk > 0) m.set_chunks(c.chunk, hmc::models::read_hmm(model, c.data));
  return m;
}

struct Gradients {
  std::vector<double> lp;
  hmc::test::HostMatrix grad;
};

/// The gradient at every point: on a team of `team_size` threads per point, or (0) the
/// sequential one, one point per thread.
Gradients gradients(const Hmm& m, const std::vector<std::vector<double>>& pts, int team_size) {
  const int n = static_cast<int>(pts.size()), d = m.dim();
  const auto q = hmc::test::to_device(pts);
  hmc::StateView g("grad", n, d), scratch("scratch", n, m.scratch_size());
  hmc::ParticleView lp("lp", n);
  if (team_size > 0) {
    Kokkos::parallel_for(
        "test::hmm_team_gradient", hmc::TeamPolicy(n, team_size), KOKKOS_LAMBDA(const hmc::TeamMember& team) {
          const int i = team.league_rank();
          const double v = m.log_density_gradient(team, hmc::row(q, i), hmc::row(g, i), hmc::row(scratch, i));
          Kokkos::single(Kokkos::PerTeam(team), [&]() { lp(i) = v; });
        });
  } else {
    Kokkos::parallel_for(
        "test::hmm_gradient", Kokkos::RangePolicy<hmc::ExecSpace>(0, n), KOKKOS_LAMBDA(const int i) {
          lp(i) = m.log_density_gradient(hmc::row(q, i), hmc::row(g, i), hmc::row(scratch, i));
        });
  }
  Kokkos::fence();
  auto lp_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), lp);
  return {std::vector<double>(lp_h.data(), lp_h.data() + n), hmc::test::to_host(g)};
}

/// Team sizes to try: one thread, and as many as a team may have here (at most 32).
std::vector<int> team_sizes(const Hmm& m) {
  const int most = hmc::TeamPolicy(1, 1).team_size_max(
      KOKKOS_LAMBDA(const hmc::TeamMember&) { (void)m; }, Kokkos::ParallelForTag());
  std::vector<int> sizes{1};
  if (most > 1) sizes.push_back(std::min(most, 32));
  return sizes;
}

/// The team gradient equals the sequential one to 1e-12 relative (the gradient: of its
/// largest entry, so that an entry that nearly cancels is not judged alone), bitwise the
/// same for every team size, at random points and (with `far`) one far out (q x 30, where
/// the probabilities underflow; its gradient entries reach 10^5 at T = 10^5, where the
/// sequential pass's own sums over T steps are no longer good to 1e-12).
void expect_parallel_matches(const Case& c, unsigned seed, bool far = true) {
  const Hmm m = parallel_model(c);
  SCOPED_TRACE("K " + std::to_string(m.num_states) + ", N " + std::to_string(m.num_observations) + ", S " +
               std::to_string(m.num_sequences) + ", chunks " + std::to_string(m.num_chunks) + " of " +
               std::to_string(m.chunk_steps) + (m.gaussian ? ", gaussian" : ", categorical"));
  auto pts = random_points(3, m.dim(), 1.5, seed);
  if (far) {
    pts.push_back(pts[0]);
    for (double& v : pts.back()) v *= 30.0;
  }
  const Gradients ref = gradients(m, pts, 0);
  const int d = m.dim();
  Gradients first;
  for (int size : team_sizes(m)) {
    const Gradients par = gradients(m, pts, size);
    for (std::size_t i = 0; i < pts.size(); ++i) {
      if (!std::isfinite(ref.lp[i])) {
        EXPECT_EQ(par.lp[i], ref.lp[i]) << "point " << i;
        continue;
      }
      EXPECT_LE(std::abs(par.lp[i] - ref.lp[i]), 1e-12 * std::abs(ref.lp[i]))
          << "point " << i << ", team of " << size << ": " << par.lp[i] << " vs " << ref.lp[i];
      double largest = 0.0;
      for (int j = 0; j < d; ++j) largest = std::max(largest, std::abs(ref.grad(i, j)));
      for (int j = 0; j < d; ++j)
        EXPECT_LE(std::abs(par.grad(i, j) - ref.grad(i, j)), 1e-12 * largest)
            << "point " << i << " coordinate " << j << ", team of " << size << ": " << par.grad(i, j) << " vs "
            << ref.grad(i, j);
    }
    if (first.lp.empty()) {
      first = par;
      continue;
    }
    for (std::size_t i = 0; i < pts.size(); ++i) {
      EXPECT_EQ(par.lp[i], first.lp[i]) << "point " << i << ": team of " << size << " vs 1";
      for (int j = 0; j < d; ++j) EXPECT_EQ(par.grad(i, j), first.grad(i, j)) << "point " << i << " coordinate " << j;
    }
  }
}

TEST(HmmParallel, CategoricalMatchesSequential) {
  unsigned seed = 100;
  for (int K = 2; K <= 6; ++K) {
    for (int T : {1, 2, 10, 333, 2000}) {
      expect_parallel_matches({{{"emission", "categorical"}, {"num_states", K}}, words({T}, 4, seed)}, seed + 1);
      seed += 2;
    }
  }
}

TEST(HmmParallel, GaussianMatchesSequential) {
  unsigned seed = 200;
  for (int K = 2; K <= 6; ++K) {
    for (int T : {1, 2, 10, 333, 2000}) {
      expect_parallel_matches({{{"emission", "gaussian"}, {"num_states", K}}, ys({T}, seed)}, seed + 1);
      seed += 2;
    }
  }
}

TEST(HmmParallel, LongSequencesMatchSequential) {
  // T = 10^5: 317 chunks of 316 steps.
  expect_parallel_matches({{{"emission", "categorical"}, {"num_states", 3}}, words({100000}, 10, 300)}, 301, false);
  expect_parallel_matches({{{"emission", "gaussian"}, {"num_states", 6}}, ys({100000}, 302)}, 303, false);
  expect_parallel_matches({{{"emission", "categorical"}, {"num_states", 2}}, words({100000}, 3, 304)}, 305, false);
}

TEST(HmmParallel, SequencesParametersAndChunksMatchSequential) {
  // Several sequences (one of a single step), the initial distribution and σ as parameters,
  // chunks of 1 step, of 3, and longer than a sequence; K = 8 (not unrolled).
  const json words4 = words({1, 57, 200, 130}, 5, 400), y3 = ys({60, 1, 333}, 401);
  for (int chunk : {0, 1, 3, 100, 1000}) {
    expect_parallel_matches({{{"emission", "categorical"}, {"num_states", 3}, {"initial", "dirichlet"}}, words4, chunk},
                            402);
    expect_parallel_matches({{{"emission", "gaussian"}, {"num_states", 4}, {"initial", "dirichlet"}}, y3, chunk}, 403);
    expect_parallel_matches({{{"emission", "gaussian"}, {"num_states", 2}, {"sigma", 0.7}}, y3, chunk}, 404);
  }
  expect_parallel_matches({{{"emission", "categorical"}, {"num_states", 8}}, words({90, 45}, 6, 405)}, 406);
  // Symbols that never occur (num_words 12, words 0..4): their gradient is that of the prior alone.
  json sparse = words({300}, 5, 407);
  sparse["num_words"] = 12;
  expect_parallel_matches({{{"emission", "categorical"}, {"num_states", 3}}, sparse}, 408);
}

TEST(HmmParallel, ForwardKeyAndPlan) {
  const json data = ys({500}, 500);
  json model = {{"name", "hmm"}, {"emission", "gaussian"}, {"num_states", 3}};
  Hmm m = Hmm::from_config(model, data);
  EXPECT_EQ(m.forward_mode, hmc::models::HmmForward::kAuto);
  EXPECT_EQ(m.chunk_steps, 23);  // ⌈√500⌉
  EXPECT_EQ(m.num_chunks, 22);
  // auto: on a device, parallel with at least 2 threads per particle and 64 steps or more; on
  // the host, sequential (the same bits for any thread count).
  constexpr bool device = !std::is_same_v<hmc::MemSpace, Kokkos::HostSpace>;
  Hmm few = m, many = m;
  hmc::model::plan(few, 135168, 270336);
  hmc::model::plan(many, 135169, 270336);
  EXPECT_EQ(few.gradient_team_size(), device ? 22 : 0);
  EXPECT_EQ(many.gradient_team_size(), 0);
  EXPECT_EQ(many.scratch_size() < few.scratch_size(), device);
  Hmm one = m;
  hmc::model::plan(one, 1, 2);
  EXPECT_EQ(one.gradient_team_size(), device ? 22 : 0);
  Hmm short_one = Hmm::from_config(model, ys({63}, 501));
  hmc::model::plan(short_one, 1, 270336);
  EXPECT_EQ(short_one.gradient_team_size(), 0);
  model["forward"] = "sequential";
  EXPECT_EQ(Hmm::from_config(model, data).gradient_team_size(), 0);
  EXPECT_EQ(Hmm::from_config(model, data).num_chunks, 0);
  model["forward"] = "parallel";
  Hmm forced = Hmm::from_config(model, data);
  hmc::model::plan(forced, 100000, 2);
  EXPECT_EQ(forced.gradient_team_size(), 22);
  model["forward"] = "both";
  try {
    (void)Hmm::from_config(model, data);
    ADD_FAILURE() << "forward both was accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("/model/forward"), std::string::npos) << e.what();
  }
}

/// Five iterations of the sampler with the sequential and the parallel forward pass from
/// the same start: the same draws to rounding (the team path's transitions and its
/// initialisation against the one-particle-per-thread ones).
TEST(HmmParallel, SamplerTeamPathFollowsTheSequentialOne) {
  const json data = words({400, 80}, 4, 600);
  json model = {{"name", "hmm"}, {"emission", "categorical"}, {"num_states", 3}};
  hmc::sampler::Settings s;
  s.particles = 6;
  s.warmup = 3;
  s.draws = 2;
  s.seed = 7;
  s.step_size = 0.05;
  s.leapfrog_steps = 4;
  s.progress_every = 0;
  std::vector<std::vector<double>> q[2];
  for (int parallel = 0; parallel < 2; ++parallel) {
    model["forward"] = parallel ? "parallel" : "sequential";
    const Hmm m = Hmm::from_config(model, data);
    hmc::sampler::EnsembleSampler<Hmm> sampler(m, s, 0, s.particles);
    if (parallel) {
      EXPECT_GE(sampler.team_size(), 1);
    } else {
      EXPECT_EQ(sampler.team_size(), 0);
    }
    ASSERT_EQ(sampler.initialise(), 0);
    while (!sampler.done()) sampler.iterate();
    const auto h = hmc::test::to_host(sampler.state().q);
    for (int i = 0; i < s.particles; ++i) {
      q[parallel].emplace_back();
      for (int j = 0; j < m.dim(); ++j) q[parallel].back().push_back(h(i, j));
    }
  }
  for (int i = 0; i < s.particles; ++i)
    for (std::size_t j = 0; j < q[0][i].size(); ++j)
      EXPECT_NEAR(q[1][i][j], q[0][i][j], 1e-9 * std::max(1.0, std::abs(q[0][i][j])))
          << "particle " << i << " coordinate " << j;
}

}  // namespace
