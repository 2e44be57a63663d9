// The kernels' lane paths (sampler/lanes.hpp) against their one-particle-per-thread
// transitions (hmc_kernel.hpp, nuts_kernel.hpp): the same transition from the same state
// and random numbers.
// The vector exp/log may differ from the scalar ones by a few ulp, so values agree to a
// tolerance, decisions (accepted or not, divergent or not, steps) exactly.
#include "coin_toss.hpp"
#include "harmonic_oscillator.hpp"
#include "hmc/model/concept.hpp"
#include "hmc/sampler/hmc_kernel.hpp"
#include "hmc/sampler/lanes.hpp"
#include "hmc/sampler/mams_kernel.hpp"
#include "hmc/sampler/metric.hpp"
#include "hmc/sampler/nuts_kernel.hpp"
#include "hmm.hpp"
#include "linear_acceleration.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using hmc::sampler::EnsembleState;
using hmc::sampler::TransitionRecord;
using nlohmann::json;

struct Case {
  double step_size = 0.05;
  int steps = 20;
  bool jitter = false;
  double length = 1.0;
  bool dense = false;
  bool chees = false;
  double temperature = 1.0;
  int depth = 10;  ///< NUTS
};

TransitionRecord make_record(int n, int params, int stats) {
  TransitionRecord r;
  r.accept_sum = hmc::ParticleView("accept_sum", n);
  r.divergences = hmc::ParticleView("divergences", n);
  r.steps_sum = hmc::ParticleView("steps_sum", n);
  r.adapt = hmc::StateView("adapt", n, 4);  // the acceptance statistic and ChEES's two (MAMS's three)
  r.draws = hmc::DrawView("draws", n, 1, params);
  r.stats = hmc::DrawView("stats", n, 1, stats);
  return r;
}

struct Outcome {
  std::vector<double> q, grad, lp, accept, stats1, stats2, stats3, steps, divergent, stats, draws;
};

template <class V>
std::vector<double> flat(const V& v) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  std::vector<double> out;
  if constexpr (V::rank == 1) {
    for (std::size_t i = 0; i < h.extent(0); ++i) out.push_back(h(i));
  } else if constexpr (V::rank == 2) {
    for (std::size_t i = 0; i < h.extent(0); ++i)
      for (std::size_t j = 0; j < h.extent(1); ++j) out.push_back(h(i, j));
  } else {
    for (std::size_t i = 0; i < h.extent(0); ++i)
      for (std::size_t j = 0; j < h.extent(1); ++j)
        for (std::size_t k = 0; k < h.extent(2); ++k) out.push_back(h(i, j, k));
  }
  return out;
}

// Particles at deterministic spread-out positions, with their log density and gradient.
template <class Model>
EnsembleState start(const Model& m, int n, const std::vector<double>& centre, double spread) {
  const int d = m.dim();
  EnsembleState s(n, d, hmc::model::scratch_size(m));
  auto q = Kokkos::create_mirror_view(s.q);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < d; ++j) q(i, j) = centre[j] + spread * std::sin(1.7 * i + 0.9 * j + 0.3);
  Kokkos::deep_copy(s.q, q);
  const auto sq = s.q, sg = s.grad;
  const auto lp = s.lp;
  Kokkos::parallel_for(
      "test::lanes_start", Kokkos::RangePolicy<hmc::ExecSpace>(0, n), KOKKOS_LAMBDA(const int i) {
        lp(i) = hmc::model::log_density_gradient(m, hmc::row(sq, i), hmc::row(sg, i), s.scratch(i));
      });
  Kokkos::fence();
  return s;
}

template <template <class> class K, class Model>
Outcome run(const Model& m, const EnsembleState& from, const Case& c, bool lanes) {
  using Kernel = K<Model>;
  const int n = static_cast<int>(from.q.extent(0)), d = m.dim();
  EnsembleState s(n, d, hmc::model::scratch_size(m));
  Kokkos::deep_copy(s.q, from.q);
  Kokkos::deep_copy(s.grad, from.grad);
  Kokkos::deep_copy(s.lp, from.lp);
  std::vector<double> sigma(static_cast<std::size_t>(d) * (c.dense ? d : 1));
  for (int i = 0; i < d; ++i) {
    if (!c.dense) {
      sigma[i] = 0.5 + 0.1 * i;
    } else {
      for (int j = 0; j < d; ++j)
        sigma[i * d + j] = i == j ? 1.0 + 0.1 * i : 0.1 / ((1.0 + std::abs(i - j)) * (1.0 + std::abs(i - j)));
    }
  }
  hmc::sampler::Settings settings;
  settings.step_size = c.step_size;
  settings.leapfrog_steps = c.steps;
  settings.max_tree_depth = c.depth;
  auto ks = Kernel::settings(settings);
  if constexpr (std::is_same_v<Kernel, hmc::sampler::MamsKernel<Model>>) {
    ks.length = c.length;  // always jittered
    ks.max_steps = 1000;
    if (c.chees) {  // the warmup's spread statistic
      ks.centre = hmc::VectorView("centre", d);
      Kokkos::deep_copy(ks.centre, 0.1);
    }
  } else if constexpr (hmc::sampler::has_own_adaptation<Kernel>()) {
    ks.jitter = c.jitter;
    ks.length = c.length;
    ks.max_steps = 1000;
    if (c.chees) {
      ks.centre = hmc::VectorView("centre", d);
      Kokkos::deep_copy(ks.centre, 0.1);
    }
  }
  const int stats = static_cast<int>(Kernel::stat_columns().size());
  Kernel k(m, ks, hmc::StateView("scratch", n, Kernel::scratch_size(d, ks)));
  k.step.state = s;
  k.step.record = make_record(n, m.num_params(), stats);
  k.step.metric = c.dense ? hmc::sampler::dense_metric(sigma, d) : hmc::sampler::diagonal_metric(sigma);
  k.step.dim = d;
  k.step.step_size = c.step_size;
  k.step.temperature = c.temperature;
  k.step.seed = 20261202u;
  k.step.first_particle = 5;
  k.step.iteration = 3;
  k.step.count = true;
  k.step.slot = 0;
  if (lanes) {
    // The lanes are host code: launched on the host's execution space (a CUDA build skips
    // these tests, lanes_available() being false there, but compiles them).
    if constexpr (hmc::sampler::kHostExecution) {
      const Kernel& kk = k;
      Kokkos::parallel_for("test::lanes",
                           Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, Kernel::lane_tasks(n)),
                           [&kk](const int task) { kk.lanes(task); });
    } else {
      ADD_FAILURE() << "the lane path runs on the host only";
    }
  } else {
    Kokkos::parallel_for("test::scalar", Kokkos::RangePolicy<hmc::ExecSpace>(0, n), k);
  }
  Kokkos::fence();
  const auto& r = k.step.record;
  return {flat(s.q),
          flat(s.grad),
          flat(s.lp),
          flat(Kokkos::subview(r.adapt, Kokkos::ALL, 0)),
          flat(Kokkos::subview(r.adapt, Kokkos::ALL, 1)),
          flat(Kokkos::subview(r.adapt, Kokkos::ALL, 2)),
          flat(Kokkos::subview(r.adapt, Kokkos::ALL, 3)),
          flat(r.steps_sum),
          flat(r.divergences),
          flat(r.stats),
          flat(r.draws)};
}

void expect_close(const std::vector<double>& a, const std::vector<double>& b, double tol, const char* what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::isfinite(a[i]) || std::isfinite(b[i])) {
      EXPECT_NEAR(a[i], b[i], tol * (1.0 + std::abs(a[i]))) << what << "[" << i << "]";
    }
  }
}

// Returns the number of accepted particles, so a case can check it tests both outcomes.
template <template <class> class K = hmc::sampler::HmcKernel, class Model>
int expect_same(const Model& m, int n, const std::vector<double>& centre, double spread, const Case& c) {
  const auto s = start(m, n, centre, spread);
  const Outcome a = run<K>(m, s, c, false), b = run<K>(m, s, c, true);
  EXPECT_EQ(a.steps, b.steps);
  EXPECT_EQ(a.divergent, b.divergent);
  expect_close(a.q, b.q, 1e-9, "q");
  expect_close(a.grad, b.grad, 1e-9, "grad");
  expect_close(a.lp, b.lp, 1e-9, "lp");
  expect_close(a.accept, b.accept, 1e-9, "accept_prob");
  expect_close(a.stats1, b.stats1, 1e-8, "chees term");
  expect_close(a.stats2, b.stats2, 1e-8, "chees spread");
  expect_close(a.stats3, b.stats3, 1e-8, "adaptation column 3");
  expect_close(a.stats, b.stats, 1e-9, "statistics");
  expect_close(a.draws, b.draws, 1e-9, "draws");
  const auto q0 = flat(s.q);
  int moved = 0;
  for (int i = 0; i < n; ++i)
    moved += a.q[static_cast<std::size_t>(i) * m.dim()] != q0[static_cast<std::size_t>(i) * m.dim()];
  return moved;
}

hmc::models::CoinToss coins() {
  json tosses = {{1, 1, 1, 0, 1, 0, 1, 1}, {0, 0, 0, 1, 0}, {1, 0}};
  return hmc::models::CoinToss::from_config({{"name", "coin_toss"}, {"priors", {{"a", 1}, {"b", 1}}}},
                                            {{"tosses", tosses}});
}

hmc::models::HarmonicOscillator springs(int d) {
  std::vector<double> k(static_cast<std::size_t>(d));
  for (int i = 0; i < d; ++i) k[i] = 1.0 + i;
  return hmc::models::HarmonicOscillator::from_config({{"name", "harmonic_oscillator"}, {"spring_constants", k}},
                                                      nullptr);
}

hmc::models::LinearAcceleration motion() {
  std::ifstream f(std::string(HMC_SOURCE_DIR) + "/configs/data/linear_motion.json");
  const json data = json::parse(f);
  return hmc::models::LinearAcceleration::from_config({{"name", "linear_acceleration"}}, data);
}

/// The lane kernels are host code: on a device build these tests compile and skip.
#define HMC_LANES_ONLY() \
  if (!hmc::sampler::kHostExecution) GTEST_SKIP() << "the lane kernels run on the host only"

TEST(Lanes, TakenForTheModelsThatWriteATemplateGradient) {
  EXPECT_EQ(hmc::sampler::lanes_available<hmc::models::CoinToss>(), hmc::sampler::kHostExecution);
  EXPECT_EQ(hmc::sampler::lanes_available<hmc::models::Hmm>(), hmc::sampler::kHostExecution);
  EXPECT_EQ(hmc::sampler::lanes_available<hmc::models::HarmonicOscillator>(), hmc::sampler::kHostExecution);
  EXPECT_EQ(hmc::sampler::use_lanes<hmc::models::HarmonicOscillator>(hmc::sampler::kMaxLaneDim + 1), false);
}

TEST(Lanes, CoinTossMatchesTheScalarKernel) {
  HMC_LANES_ONLY();
  const auto m = coins();
  // 13 particles: a full block and a padded one.
  EXPECT_GT(expect_same(m, 13, {0.0, 0.0, 0.0}, 1.5, Case{}), 0);
  // Jittered path lengths: the lanes of a block take different numbers of steps.
  Case jitter;
  jitter.jitter = true;
  jitter.length = 2.0;
  jitter.chees = true;
  EXPECT_GT(expect_same(m, 29, {0.0, 0.0, 0.0}, 2.0, jitter), 0);
}

TEST(Lanes, HarmonicOscillatorMatchesTheScalarKernel) {
  HMC_LANES_ONLY();
  const auto m = springs(20);
  std::vector<double> c(20, 0.0);
  Case diag;
  diag.step_size = 0.1;
  EXPECT_GT(expect_same(m, 17, c, 1.0, diag), 0);
  Case dense;
  dense.dense = true;
  dense.jitter = true;
  dense.length = 1.5;
  dense.temperature = 2.0;
  EXPECT_GT(expect_same(m, 9, c, 1.0, dense), 0);
}

TEST(Lanes, DivergentTrajectoriesAreRejectedAsInTheScalarKernel) {
  HMC_LANES_ONLY();
  // Step size 3 on springs up to k = 20: the energy grows without bound and every
  // particle diverges, some after a non-finite log density part of the way.
  const auto m = springs(20);
  Case wild;
  wild.step_size = 3.0;
  wild.steps = 400;
  EXPECT_EQ(expect_same(m, 11, std::vector<double>(20, 0.0), 1.0, wild), 0);
}

TEST(Lanes, LinearAccelerationMatchesTheScalarKernel) {
  HMC_LANES_ONLY();
  const auto m = motion();
  Case c;
  c.step_size = 0.001;
  EXPECT_GT(expect_same(m, 24, {0.0, 0.0, -6.0}, 0.05, c), 0);
}

TEST(Lanes, HmmCategoricalMatchesTheScalarKernel) {
  HMC_LANES_ONLY();
  // The standard words (K 3, T 2000). The lane gradient is bitwise the scalar one
  // (test_hmm.cpp); the momenta of the lane kernel are not (vector sin, cos, log).
  // 13 particles: a full block and a padded one; jittered lengths.
  std::ifstream f(std::string(HMC_SOURCE_DIR) + "/configs/data/hmm_words_k3_v10_t2000.json");
  const auto m = hmc::models::Hmm::from_config({{"name", "hmm"}}, json::parse(f));
  Case c;
  c.step_size = 0.01;
  c.jitter = true;
  c.length = 0.15;
  EXPECT_GT(expect_same(m, 13, std::vector<double>(m.dim(), 0.0), 1.0, c), 0);
}

TEST(Lanes, HmmGaussianMatchesTheScalarKernel) {
  HMC_LANES_ONLY();
  // Two sequences, free sigma, Dirichlet initial distribution: agreement to the
  // tolerance of the vector exp.
  json ys = json::array();
  for (int s = 0; s < 2; ++s) {
    json seq = json::array();
    for (int t = 0; t < 150 + 40 * s; ++t)
      seq.push_back((t / 9 + s) % 2 == 0 ? -1.0 + 0.3 * std::sin(t) : 2.0 + 0.4 * std::cos(t));
    ys.push_back(seq);
  }
  const auto m = hmc::models::Hmm::from_config(
      {{"name", "hmm"}, {"emission", "gaussian"}, {"num_states", 2}, {"initial", "dirichlet"}}, {{"y", ys}});
  Case c;
  c.step_size = 0.01;
  c.steps = 15;
  EXPECT_GT(expect_same(m, 11, std::vector<double>(m.dim(), 0.0), 0.5, c), 0);
}

// NUTS: each lane its own tree; the trees of a block differ in depth, so lanes finish
// at different lock steps and take steps of size 0 until the last one is done. Decisions
// (tree depth, steps, divergence) agree exactly, values to the vector math's tolerance.
TEST(Lanes, NutsCoinTossMatchesTheScalarKernel) {
  HMC_LANES_ONLY();
  Case c;
  c.step_size = 0.3;
  EXPECT_GT(expect_same<hmc::sampler::NutsKernel>(coins(), 29, {0.0, 0.0, 0.0}, 2.0, c), 0);
}

TEST(Lanes, NutsHarmonicOscillatorMatchesTheScalarKernel) {
  HMC_LANES_ONLY();
  const auto m = springs(20);
  std::vector<double> centre(20, 0.0);
  Case diag;
  diag.step_size = 0.2;
  EXPECT_GT(expect_same<hmc::sampler::NutsKernel>(m, 17, centre, 1.0, diag), 0);
  Case dense;
  dense.dense = true;
  dense.step_size = 0.15;
  dense.temperature = 2.0;
  dense.depth = 4;  // some trees reach the largest depth
  EXPECT_GT(expect_same<hmc::sampler::NutsKernel>(m, 9, centre, 1.0, dense), 0);
}

TEST(Lanes, NutsDivergencesAsInTheScalarKernel) {
  HMC_LANES_ONLY();
  const auto m = springs(20);
  Case wild;
  wild.step_size = 3.0;
  EXPECT_EQ(expect_same<hmc::sampler::NutsKernel>(m, 11, std::vector<double>(20, 0.0), 1.0, wild), 0);
}

TEST(Lanes, NutsLinearAccelerationAndHmmMatchTheScalarKernel) {
  HMC_LANES_ONLY();
  Case c;
  c.step_size = 0.0005;
  EXPECT_GT(expect_same<hmc::sampler::NutsKernel>(motion(), 24, {0.0, 0.0, -6.0}, 0.05, c), 0);
  std::ifstream f(std::string(HMC_SOURCE_DIR) + "/configs/data/hmm_words_k3_v10_t2000.json");
  const auto hmm = hmc::models::Hmm::from_config({{"name", "hmm"}}, json::parse(f));
  Case h;
  h.step_size = 0.02;
  h.depth = 5;
  EXPECT_GT(expect_same<hmc::sampler::NutsKernel>(hmm, 10, std::vector<double>(hmm.dim(), 0.0), 1.0, h), 0);
}

}  // namespace

// MAMS: jittered numbers of McLachlan steps of the isokinetic dynamics, so the lanes of a
// block stop at different lock steps; decisions agree exactly, values to the vector math's
// tolerance (the spread statistic of its warmup included: Case::chees).
TEST(Lanes, MamsMatchesTheScalarKernel) {
  HMC_LANES_ONLY();
  Case coin;
  coin.step_size = 0.4;
  coin.length = 2.0;
  coin.chees = true;
  EXPECT_GT(expect_same<hmc::sampler::MamsKernel>(coins(), 29, {0.0, 0.0, 0.0}, 2.0, coin), 0);
  const auto m = springs(20);
  std::vector<double> centre(20, 0.0);
  Case diag;
  diag.step_size = 0.3;
  diag.length = 3.0;
  EXPECT_GT(expect_same<hmc::sampler::MamsKernel>(m, 17, centre, 1.0, diag), 0);
  Case dense;
  dense.dense = true;
  dense.step_size = 0.3;
  dense.length = 2.0;
  dense.temperature = 2.0;
  dense.chees = true;
  EXPECT_GT(expect_same<hmc::sampler::MamsKernel>(m, 9, centre, 1.0, dense), 0);
  Case wild;  // every trajectory diverges
  wild.step_size = 30.0;
  wild.length = 300.0;
  EXPECT_EQ(expect_same<hmc::sampler::MamsKernel>(m, 11, centre, 1.0, wild), 0);
  Case motion_case;
  motion_case.step_size = 0.002;
  motion_case.length = 0.02;
  EXPECT_GT(expect_same<hmc::sampler::MamsKernel>(motion(), 24, {0.0, 0.0, -6.0}, 0.05, motion_case), 0);
}
