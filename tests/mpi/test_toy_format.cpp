// A third draw format takes one new file and one list line (io/draw_writer.hpp): this
// file is the new file, and the line that adds `toy_format()` to the list a run is given
// is the list line. A run then writes draws.toy beside draws.csv, on any number of ranks,
// the disk estimate counts it, and /output/formats accepts "toy" (only where the list has it).
#include "coin_toss.hpp"
#include "hmc/core/errors.hpp"
#include "hmc/io/draw_writer.hpp"
#include "hmc/io/results.hpp"
#include "hmc/parallel/mpi_context.hpp"
#include "hmc/services/resources.hpp"
#include "hmc/services/sample.hpp"
#include "support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using nlohmann::json;

/// draws.toy: one line per column, its name and the sum of its post-warmup draws.
class ToyWriter : public hmc::io::DrawWriter {
 public:
  std::string file_name() const override { return "draws.toy"; }
  std::int64_t size_estimate(const hmc::StoreLayout& layout) const override { return 64 * layout.num_columns(); }
  void write(const std::string& path, const hmc::DrawSource& source,
             const std::function<void(double)>& progress) const override {
    const auto& l = source.layout();
    const auto draws = source.available(hmc::Section::kPosterior);
    std::ostringstream os;
    std::vector<double> v(static_cast<std::size_t>(l.particles * draws));
    for (int c = 0; c < l.num_columns(); ++c) {
      source.read(hmc::Section::kPosterior, c, 0, l.particles, v.data());
      double sum = 0.0;
      for (double x : v) sum += x;
      os << (c < l.num_params() ? l.param_names[c] : l.stat_of(c).name) << " " << sum << "\n";
      if (progress) progress(static_cast<double>(c + 1) / l.num_columns());
    }
    hmc::io::write_file_atomic(path, os.str());
  }
};

hmc::io::DrawFormat toy_format() {
  return {"toy", [](const hmc::io::WriterOptions&) { return std::make_unique<ToyWriter>(); }};
}

json coin_run() {
  return {{"model", {{"name", "coin_toss"}, {"data", {{"tosses", {{1, 0, 1, 1}, {0, 0, 1}}}}}}},
          {"sampler", {{"particles", 12}, {"warmup", 20}, {"draws", 10}}},
          {"output", {{"formats", {"toy", "csv"}}}}};
}

TEST(MpiToyFormat, ARunWritesTheFormatsItIsGiven) {
  spdlog::set_level(spdlog::level::off);
  hmc::parallel::MpiContext mpi(nullptr, nullptr);
  auto formats = hmc::io::draw_formats();
  formats.push_back(toy_format());  // the list line
  auto catalog = hmc::app::registry().catalog();
  catalog.formats = hmc::io::format_names(formats);
  const hmc::test::SharedDir dir(mpi);
  const auto spec = hmc::test::spec_of(coin_run(), dir.path() + "/out", catalog);
  EXPECT_EQ(spec.run.output.formats, (std::vector<std::string>{"toy", "csv"}));
  ASSERT_EQ(hmc::services::sample<hmc::models::CoinToss>(mpi, spec, formats), 0);
  if (!mpi.root()) return;

  std::ifstream toy(dir.path() + "/out/draws.toy");
  std::vector<std::string> names;
  for (std::string name, sum; toy >> name >> sum;) names.push_back(name);
  // nuts, the default algorithm: its statistics
  EXPECT_EQ(names,
            (std::vector<std::string>{"p[1]", "p[2]", "lp", "acceptance_rate", "step_size", "tree_depth",
                                      "reached_max_treedepth", "n_steps", "diverging", "energy", "energy_error"}));
  EXPECT_TRUE(std::ifstream(dir.path() + "/out/draws.csv").good());
  EXPECT_FALSE(std::ifstream(dir.path() + "/out/draws.nc").good());  // not asked for

  // The disk estimate asks the toy writer too.
  hmc::StoreLayout layout;
  layout.particles = 12;
  layout.param_names = {"p[1]", "p[2]"};
  layout.draws = 10;
  auto run = spec.run;
  const auto with_toy = hmc::services::estimate_output_bytes(run, layout, {2, 2, 0, 0}, formats);
  run.output.formats = {"csv"};
  EXPECT_EQ(with_toy - hmc::services::estimate_output_bytes(run, layout, {2, 2, 0, 0}, formats), 64 * 8);
}

TEST(MpiToyFormat, OnlyAListWithTheFormatAcceptsIt) {
  hmc::parallel::MpiContext mpi(nullptr, nullptr);
  EXPECT_THROW(hmc::test::spec_of(coin_run(), "unused", hmc::app::registry().catalog()), hmc::ConfigError);
}

}  // namespace
