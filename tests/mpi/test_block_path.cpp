// The road real runs take (services::sample: blocks of draws gathered to rank 0 and
// appended to the store, draws.nc written from it) gives, on any number of ranks,
// bitwise the draws of one process sampling every particle alone in memory
// (tests/support/in_memory.hpp).
#include "harmonic_oscillator.hpp"
#include "hmc/io/draw_writer.hpp"
#include "hmc/io/netcdf.hpp"
#include "hmc/parallel/mpi_context.hpp"
#include "hmc/services/sample.hpp"
#include "support.hpp"
#include "support/in_memory.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <cstring>
#include <fstream>
#include <vector>

namespace {

using nlohmann::json;

json small_run() {
  return {{"model", {{"name", "harmonic_oscillator"}, {"precision", {{2, 0.3}, {0.3, 1}}}, {"centres", {1, -1}}}},
          // 37 particles: not a multiple of 2 or 4, so the ranks' blocks differ in size.
          {"sampler",
           {{"particles", 37}, {"warmup", 20}, {"draws", 30}, {"thin", 3}, {"step_size", 0.2}, {"leapfrog_steps", 5}}},
          {"seed", 99},
          // Blocks of 4 draws: 10 recorded draws make three blocks, the last one short.
          {"output", {{"flush_every", 4}, {"formats", "netcdf"}}}};
}

std::vector<double> column(const hmc::DrawSource& s, int c) {
  const auto draws = s.available(hmc::Section::kPosterior);
  std::vector<double> out(static_cast<std::size_t>(s.layout().particles * draws));
  s.read(hmc::Section::kPosterior, c, 0, s.layout().particles, out.data());
  return out;
}

TEST(MpiBlockPath, DrawsNcHoldsTheDrawsOfOneProcessAlone) {
  spdlog::set_level(spdlog::level::off);
  hmc::parallel::MpiContext mpi(nullptr, nullptr);
  const hmc::test::SharedDir dir(mpi);
  const auto spec = hmc::test::spec_of(small_run(), dir.path() + "/out", hmc::app::registry().catalog());
  ASSERT_EQ(hmc::services::sample<hmc::models::HarmonicOscillator>(mpi, spec, hmc::io::draw_formats()), 0);
  if (!mpi.root()) return;

  const auto model = hmc::models::HarmonicOscillator::from_config(spec.run.model_section, spec.data);
  const auto alone = hmc::test::sample(model, spec.run.sampler, 0, spec.run.sampler.particles);
  const hmc::test::LocalDrawsSource reference(alone, model.parameter_names());
  const hmc::io::NetcdfSource written(dir.path() + "/out/draws.nc");
  ASSERT_EQ(written.layout().particles, 37);
  ASSERT_EQ(written.available(hmc::Section::kPosterior), 10);  // ceil(30 / 3)
  ASSERT_EQ(written.layout().num_columns(), reference.layout().num_columns());
  for (int c = 0; c < written.layout().num_columns(); ++c) {
    const auto a = column(written, c), b = column(reference, c);
    ASSERT_EQ(a.size(), b.size());
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(double)), 0) << "column " << c;
  }
  // What warmup settled on, and the gradient evaluations summed over ranks.
  std::ifstream in(dir.path() + "/out/summary.json");
  const json summary = json::parse(in);
  EXPECT_EQ(summary["adaptation"]["step_size"].get<double>(), alone.adapted.step_size);
  EXPECT_EQ(summary["throughput"]["grad_evals"].get<std::int64_t>(), alone.grad_evals);
}

TEST(MpiBlockPath, BroadcastReachesEveryRank) {
  hmc::parallel::MpiContext mpi(nullptr, nullptr);
  const std::string s = mpi.broadcast(mpi.root() ? std::string("config from rank 0") : std::string());
  EXPECT_EQ(s, "config from rank 0");
  EXPECT_EQ(mpi.broadcast(mpi.root() ? 42 : 0), 42);
}

}  // namespace
