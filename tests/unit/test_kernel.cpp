// A third transition kernel, written here against the concept (sampler/kernel.hpp):
// random-walk Metropolis. It runs end to end through the ensemble loop, its statistics
// reach draws.nc and draws.csv by their names, and its checkpoint round-trips bit for
// bit; nothing in the loop, the writers or the checkpoint code names it. Also the
// concept's checks of the shipped kernels, and the refusal of another kernel's state.
#include "harmonic_oscillator.hpp"
#include "hmc/core/errors.hpp"
#include "hmc/io/netcdf.hpp"
#include "hmc/io/results.hpp"
#include "hmc/sampler/kernels.hpp"
#include "hmc/sampler/rng_uses.hpp"
#include "hmc/sampler/run.hpp"
#include "support/in_memory.hpp"
#include "support/moments.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using hmc::Row;
using hmc::StatColumn;
using hmc::StatType;

/// Random-walk Metropolis: q' = q + scale · z, z standard normal, accepted with
/// probability min(1, p(q') / p(q)). Its scale is /sampler/step_size.
template <class Model>
struct RwmKernel {
  struct Settings {
    double scale = 1.0;
  };
  static constexpr const char* name = "rwm";
  static std::vector<StatColumn> stat_columns() {
    return {{"lp", StatType::kReal, false},
            {"acceptance_rate", StatType::kReal, false},
            {"accepted", StatType::kBool, true}};
  }
  /// The proposal and its gradient.
  static int scratch_size(int dim, const Settings&) { return 2 * dim; }
  static Settings settings(const hmc::sampler::Settings& s) { return Settings{s.step_size}; }

  RwmKernel(const Model& m, const Settings& s, const hmc::StateView& rows) : model(m), opts(s), scratch(rows) {}
  Model model;
  Settings opts;
  hmc::StateView scratch;
  hmc::sampler::Step step;

  KOKKOS_INLINE_FUNCTION void operator()(const int i) const {
    const auto stream = step.stream(i);
    const int d = step.dim;
    const Row q = hmc::row(step.state.q, i), g = hmc::row(step.state.grad, i);
    const Row prop{&scratch(i, 0), static_cast<std::ptrdiff_t>(scratch.stride(1))};
    const Row prop_grad{&scratch(i, d), static_cast<std::ptrdiff_t>(scratch.stride(1))};
    for (int j = 0; j < d; j += 2) {
      double z0, z1;
      stream.normal2(step.iteration, static_cast<std::uint32_t>(j / 2), z0, z1);
      prop(j) = q(j) + opts.scale * z0;
      if (j + 1 < d) prop(j + 1) = q(j + 1) + opts.scale * z1;
    }
    const double lp1 = hmc::model::log_density_gradient(model, prop, prop_grad, step.state.scratch(i));
    const double delta = lp1 - step.state.lp(i);
    const double a = !(delta == delta) ? 0.0 : (delta >= 0.0 ? 1.0 : hmc::math::exp(delta));
    double u, unused;
    stream.uniform2(step.iteration, hmc::sampler::kUseAccept, u, unused);
    const bool accepted = u < a;
    if (accepted) {
      for (int j = 0; j < d; ++j) {
        q(j) = prop(j);
        g(j) = prop_grad(j);
      }
      step.state.lp(i) = lp1;
    }
    step.tally(i, a, false, 1.0);
    step.record_params(model, i, q);
    step.record_stat(i, 0, step.state.lp(i));
    step.record_stat(i, 1, a);
    step.record_stat(i, 2, accepted ? 1.0 : 0.0);
  }
};

/// \brief The proposal scale of ArwmKernel as its own warmup parameter (sampler/warmup.hpp's
/// form): Robbins–Monro on log(scale) towards a mean acceptance of 0.3 over the healthy
/// particles, the last value kept after warmup. Its one statistic per transition is the
/// acceptance probability (step.adapt_stat).
template <class K>
class ScaleAdaptation {
 public:
  static constexpr int kColumns = 1;
  ScaleAdaptation(const hmc::sampler::Settings& s, bool) : log_scale_(std::log(s.step_size)) {}
  void before(const hmc::sampler::AdaptationContext&, K& kernel) { kernel.opts.scale = std::exp(log_scale_); }
  void update(const hmc::sampler::AdaptationContext& c, const double* sums) {
    const double accept = c.healthy > 0.0 ? sums[0] / c.healthy : 0.0;
    ++updates_;
    log_scale_ += (accept - 0.3) / std::sqrt(static_cast<double>(updates_));
  }
  void metric_changed(bool) {}
  void freeze() {}
  std::string failed() const { return std::isfinite(log_scale_) ? std::string() : "proposal scale not finite"; }
  void save(hmc::sampler::SavedState& out) const { out.put("proposal_scale", {log_scale_, double(updates_)}); }
  void load(const hmc::sampler::SavedState& in) {
    log_scale_ = in.get("proposal_scale").at(0);
    updates_ = static_cast<int>(in.get("proposal_scale").at(1));
  }
  void report(hmc::Adapted& a) const { a.values.emplace_back("proposal_scale", std::exp(log_scale_)); }

 private:
  double log_scale_;
  int updates_ = 0;
};

/// \brief Adaptive random-walk Metropolis: RwmKernel with its scale adapted in warmup (its
/// header plus the one line `using Adaptation`); nothing in the loop, the writers or the
/// checkpoint code names it.
template <class Model>
struct ArwmKernel : RwmKernel<Model> {
  using RwmKernel<Model>::RwmKernel;
  static constexpr const char* name = "arwm";
  using Adaptation = ScaleAdaptation<ArwmKernel>;
  KOKKOS_INLINE_FUNCTION void operator()(const int i) const {
    RwmKernel<Model>::operator()(i);
    this->step.adapt_stat(i, 0, this->step.record.adapt(i, 0));
  }
};

static_assert(
    hmc::sampler::check_kernel<RwmKernel<hmc::models::HarmonicOscillator>, hmc::models::HarmonicOscillator>());
static_assert(
    hmc::sampler::check_kernel<ArwmKernel<hmc::models::HarmonicOscillator>, hmc::models::HarmonicOscillator>());
static_assert(hmc::sampler::check_kernel<hmc::sampler::HmcKernel<hmc::models::HarmonicOscillator>,
                                         hmc::models::HarmonicOscillator>());
static_assert(hmc::sampler::check_kernel<hmc::sampler::NutsKernel<hmc::models::HarmonicOscillator>,
                                         hmc::models::HarmonicOscillator>());
static_assert(hmc::sampler::check_kernel<hmc::sampler::MamsKernel<hmc::models::HarmonicOscillator>,
                                         hmc::models::HarmonicOscillator>());

using Springs = hmc::models::HarmonicOscillator;
using Rwm = RwmKernel<Springs>;
using Arwm = ArwmKernel<Springs>;

Springs springs() {
  return Springs::from_config({{"name", "harmonic_oscillator"}, {"spring_constants", {1.0, 4.0}}}, nullptr);
}

hmc::sampler::Settings rwm_settings(std::int64_t particles = 256, int warmup = 500, int draws = 1500) {
  hmc::sampler::Settings s;
  s.particles = particles;
  s.warmup = warmup;
  s.draws = draws;
  s.step_size = 0.9;
  s.seed = 20261203;
  s.adapt.enabled = false;  // a fixed scale: dual averaging would aim at 0.8
  return s;
}

TEST(Kernel, RandomWalkMetropolisSamplesTheSprings) {
  const auto m = springs();
  const auto s = rwm_settings();
  const auto draws = hmc::test::sample_with<Springs, Rwm>(m, s, 0, s.particles);
  ASSERT_EQ(draws.columns.size(), 3u);
  const auto summary = hmc::test::summarize(draws, m.parameter_names());
  // x_j ~ N(0, 1 / k_j)
  hmc::test::expect_moments(summary[0], 0.0, 1.0, true);
  hmc::test::expect_moments(summary[1], 0.0, 0.25, true);
  // One gradient per transition and particle.
  EXPECT_EQ(draws.grad_evals, s.particles * (s.warmup + s.draws));
  double accepted = 0.0;
  const auto a = draws.stat("accepted");
  for (std::size_t i = 0; i < a.extent(0); ++i)
    for (std::size_t t = 0; t < a.extent(1); ++t) accepted += a(i, t);
  const double rate = accepted / static_cast<double>(a.extent(0) * a.extent(1));
  EXPECT_GT(rate, 0.2);
  EXPECT_LT(rate, 0.9);
}

TEST(Kernel, ItsStatisticsReachTheWritersByName) {
  const auto m = springs();
  const auto s = rwm_settings(16, 10, 12);
  const auto draws = hmc::test::sample_with<Springs, Rwm>(m, s, 0, s.particles);
  const hmc::test::LocalDrawsSource source(draws, m.parameter_names());
  const fs::path dir = fs::temp_directory_path() / ("hmc_test_kernel_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string nc = (dir / "draws.nc").string(), csv = (dir / "draws.csv").string();
  hmc::io::write_inference_data(nc, source, hmc::io::NetcdfOptions{}, nlohmann::json::object());
  hmc::io::write_draws_csv(csv, source, 0);

  const hmc::io::NetcdfSource back(nc);
  ASSERT_EQ(back.layout().num_stats(), 3);
  EXPECT_EQ(back.layout().stats[2].name, "accepted");
  EXPECT_EQ(back.layout().stats[2].type, StatType::kBool);
  const int column = back.layout().stat_column("accepted");
  ASSERT_GE(column, 0);
  std::vector<double> got(16 * 12), want(16 * 12);
  back.read(hmc::Section::kPosterior, column, 0, 16, got.data());
  source.read(hmc::Section::kPosterior, column, 0, 16, want.data());
  EXPECT_EQ(got, want);
  EXPECT_EQ(back.layout().stat_column("energy"), -1);  // not a statistic of this kernel

  std::ifstream in(csv);
  std::string header;
  std::getline(in, header);
  EXPECT_EQ(header, "particle,draw,lp,acceptance_rate,accepted,q[1],q[2]");
  fs::remove_all(dir);
}

TEST(Kernel, ACheckpointOfItResumesBitForBitAndAnotherKernelRefusesIt) {
  const auto m = springs();
  auto s = rwm_settings(24, 20, 20);
  s.adapt.enabled = true;  // the step size adapter's state goes through the checkpoint too
  s.adapt.metric = hmc::MetricKind::kDiag;
  hmc::sampler::EnsembleSampler<Springs, Rwm> a(m, s, 0, s.particles), b(m, s, 0, s.particles);
  ASSERT_EQ(a.initialise(), 0);
  for (int it = 0; it < 13; ++it) a.iterate();
  const auto rows = a.particle_rows();
  const auto loop = a.loop_state();
  EXPECT_EQ(loop.algorithm, "rwm");
  b.restore(rows, loop);
  while (!a.done()) {
    a.iterate();
    b.iterate();
  }
  EXPECT_EQ(a.particle_rows(), b.particle_rows());
  EXPECT_EQ(a.adapted().step_size, b.adapted().step_size);

  hmc::sampler::EnsembleSampler<Springs> hmc_sampler(m, s, 0, s.particles);
  try {
    hmc_sampler.restore(rows, loop);
    FAIL() << "an hmc ensemble took a checkpoint of rwm";
  } catch (const hmc::RunError& e) {
    EXPECT_NE(std::string(e.what()).find("/sampler/algorithm rwm"), std::string::npos) << e.what();
  }
}

// A kernel with an adaptation of its own: the scale climbs from a poor start (0.2) to where
// a third of the proposals are accepted, the draws are right, the adapted value reaches
// summary.json's "adaptation" by its name, and a checkpoint in warmup resumes bit for bit.
TEST(Kernel, ItsOwnAdaptationAdaptsSamplesAndResumes) {
  const auto m = springs();
  auto s = rwm_settings(256, 300, 1000);
  s.step_size = 0.2;
  s.adapt.enabled = true;
  const auto draws = hmc::test::sample_with<Springs, Arwm>(m, s, 0, s.particles);
  ASSERT_EQ(draws.adapted.values.size(), 1u);
  EXPECT_EQ(draws.adapted.values[0].first, "proposal_scale");
  const double scale = draws.adapted.values[0].second;
  EXPECT_GT(scale, 0.8) << "the scale did not adapt from 0.2";
  EXPECT_LT(scale, 4.0);
  const auto summary = hmc::test::summarize(draws, m.parameter_names());
  hmc::test::expect_moments(summary[0], 0.0, 1.0, true);
  hmc::test::expect_moments(summary[1], 0.0, 0.25, true);
  double accept = 0.0;
  for (std::size_t i = 0; i < draws.accept_sum.extent(0); ++i) accept += draws.accept_sum(i);
  accept /= static_cast<double>(s.particles) * s.draws;
  EXPECT_NEAR(accept, 0.3, 0.05);
  EXPECT_EQ(hmc::io::adaptation_json(draws.adapted).value("proposal_scale", 0.0), scale);

  auto w = rwm_settings(24, 40, 20);
  w.step_size = 0.2;
  w.adapt.enabled = true;
  hmc::sampler::EnsembleSampler<Springs, Arwm> a(m, w, 0, w.particles), b(m, w, 0, w.particles);
  ASSERT_EQ(a.initialise(), 0);
  for (int it = 0; it < 17; ++it) a.iterate();
  b.restore(a.particle_rows(), a.loop_state());
  while (!a.done()) {
    a.iterate();
    b.iterate();
  }
  EXPECT_EQ(a.particle_rows(), b.particle_rows());
  EXPECT_EQ(a.adapted().values, b.adapted().values);
}

TEST(Kernel, TheShippedKernelsByAlgorithm) {
  hmc::sampler::Settings s;
  s.max_tree_depth = 7;
  s.algorithm = hmc::Algorithm::kHmc;
  const auto h = hmc::sampler::kernel_info(s, 3);
  EXPECT_EQ(h.name, "hmc");
  EXPECT_EQ(h.scratch_size, 9);
  ASSERT_EQ(h.stats.size(), hmc::hmc_stat_columns().size());
  s.algorithm = hmc::Algorithm::kNuts;
  const auto n = hmc::sampler::kernel_info(s, 3);
  EXPECT_EQ(n.name, "nuts");
  EXPECT_EQ(n.scratch_size, (10 + 2 * 7) * 3);
  std::vector<std::string> names;
  for (const auto& c : n.stats) names.push_back(c.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"lp", "acceptance_rate", "step_size", "tree_depth", "reached_max_treedepth",
                                      "n_steps", "diverging", "energy", "energy_error"}));
  s.algorithm = hmc::Algorithm::kMams;
  const auto m = hmc::sampler::kernel_info(s, 3);
  EXPECT_EQ(m.name, "mams");
  EXPECT_EQ(m.scratch_size, 12);
  names.clear();
  for (const auto& c : m.stats) names.push_back(c.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"lp", "acceptance_rate", "is_accepted", "step_size", "num_integration_steps",
                                      "n_steps", "diverging", "energy", "energy_error"}));
}

}  // namespace
