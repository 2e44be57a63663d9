// CSV and results writers over a DrawSource.
#include "hmc/core/draw_source.hpp"
#include "hmc/core/errors.hpp"
#include "hmc/diagnostics/convergence.hpp"
#include "hmc/diagnostics/summary.hpp"
#include "hmc/io/results.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using hmc::MemorySource;
using hmc::StoreLayout;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

/// A fresh directory under the system's temporary directory, removed afterwards.
struct TempDir {
  fs::path path;
  TempDir() {
    static int serial = 0;
    path =
        fs::temp_directory_path() / ("hmc_test_results_" + std::to_string(::getpid()) + "_" + std::to_string(serial++));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

/// A store of `particles` × `draws` with the given parameter names: random values of
/// all magnitudes, integer n_steps, 0/1 diverging; value(column, p, d) gives them back.
struct Store {
  StoreLayout layout;
  std::vector<double> values;  // [column][particle][draw]
  double value(int column, std::int64_t p, std::int64_t d) const {
    return values[static_cast<std::size_t>((column * layout.particles + p) * layout.draws + d)];
  }
  MemorySource source() const { return MemorySource(layout, values); }
};

Store make_store(std::int64_t particles, std::int64_t draws, std::vector<std::string> names, unsigned seed) {
  Store s;
  s.layout.particles = particles;
  s.layout.draws = draws;
  s.layout.param_names = std::move(names);
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z;
  std::uniform_int_distribution<int> exponent(-300, 300);
  const int columns = s.layout.num_columns();
  s.values.resize(static_cast<std::size_t>(columns * particles * draws));
  for (int c = 0; c < columns; ++c) {
    for (std::int64_t p = 0; p < particles; ++p) {
      for (std::int64_t d = 0; d < draws; ++d) {
        double v = z(rng);
        if (c == s.layout.stat_column("n_steps")) v = static_cast<double>(3 + (p + d) % 5);
        if (c == s.layout.stat_column("diverging")) v = (p * 7 + d) % 11 == 0 ? 1.0 : 0.0;
        if (c == s.layout.stat_column("step_size")) v = 0.3;
        if (c == 0 && d % 3 == 1) v = std::ldexp(v, exponent(rng));  // tiny and huge
        s.values[static_cast<std::size_t>((c * particles + p) * draws + d)] = v;
      }
    }
  }
  return s;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// RFC 4180 fields of one line (no line breaks inside fields here).
std::vector<std::string> parse_line(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        out.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        out.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    lines.push_back(text.substr(start, end - start));
    start = end == std::string::npos ? text.size() : end + 1;
  }
  return lines;
}

double parse_double(const std::string& s) {
  if (s == "NaN") return kNaN;
  if (s == "Inf") return kInf;
  if (s == "-Inf") return -kInf;
  double v = kNaN;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  EXPECT_TRUE(r.ec == std::errc() && r.ptr == s.data() + s.size()) << "not a number: '" << s << "'";
  return v;
}

long long parse_integer(const std::string& s) {
  long long v = -1;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  EXPECT_TRUE(r.ec == std::errc() && r.ptr == s.data() + s.size()) << "not an integer: '" << s << "'";
  return v;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

TEST(Results, DrawsCsvRoundTripsExactlyAndQuotesNames) {
  Store store = make_store(7, 9, {"mu", "transition[1,2]", "say \"hi\""}, 1);
  // Non-finite values are written as R and pandas read them.
  store.values[static_cast<std::size_t>(1 * 7 * 9 + 4)] = kNaN;
  store.values[static_cast<std::size_t>(1 * 7 * 9 + 5)] = kInf;
  store.values[static_cast<std::size_t>(1 * 7 * 9 + 6)] = -kInf;
  const MemorySource source = store.source();
  TempDir dir;
  std::vector<double> fractions;
  hmc::io::write_draws_csv(dir.file("draws.csv"), source, 0, [&](double f) { fractions.push_back(f); });
  ASSERT_FALSE(fractions.empty());
  EXPECT_EQ(fractions.back(), 1.0);
  EXPECT_FALSE(fs::exists(dir.file(".draws.csv.tmp")));

  const std::string text = read_file(dir.file("draws.csv"));
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "particle,draw,lp,acceptance_rate,step_size,n_steps,diverging,energy,mu,\"transition[1,2]\",\"say "
            "\"\"hi\"\"\"");
  const auto lines = lines_of(text);
  ASSERT_EQ(lines.size(), 1u + 7u * 9u);
  const auto header = parse_line(lines[0]);
  ASSERT_EQ(header.size(), 11u);
  EXPECT_EQ(header[9], "transition[1,2]");
  EXPECT_EQ(header[10], "say \"hi\"");
  // Columns of the file: the statistics (store columns 3..8), then the parameters (0..2).
  const int file_to_store[9] = {3, 4, 5, 6, 7, 8, 0, 1, 2};
  for (std::int64_t p = 0; p < 7; ++p) {
    for (std::int64_t d = 0; d < 9; ++d) {
      const auto f = parse_line(lines[static_cast<std::size_t>(1 + p * 9 + d)]);
      ASSERT_EQ(f.size(), 11u);
      EXPECT_EQ(parse_integer(f[0]), p);
      EXPECT_EQ(parse_integer(f[1]), d);
      for (int c = 0; c < 9; ++c) {
        const double expected = store.value(file_to_store[c], p, d);
        if (c < store.layout.num_stats() &&
            store.layout.stats[static_cast<std::size_t>(c)].type != hmc::StatType::kReal) {
          EXPECT_EQ(parse_integer(f[2 + c]), static_cast<long long>(expected));
        } else {
          const double got = parse_double(f[2 + c]);
          EXPECT_TRUE(same_bits(got, expected) || (std::isnan(got) && std::isnan(expected)))
              << "row " << p << "," << d << " column " << c << ": '" << f[2 + c] << "'";
        }
      }
    }
  }
  EXPECT_NE(text.find(",NaN,"), std::string::npos);
  EXPECT_NE(text.find(",Inf,"), std::string::npos);
  EXPECT_NE(text.find(",-Inf,"), std::string::npos);
}

TEST(Results, DrawsCsvWithAPrecision) {
  Store store = make_store(2, 3, {"x"}, 2);
  store.values[0] = 1.0 / 3.0;  // column 0 = x, particle 0, draw 0
  const MemorySource source = store.source();
  TempDir dir;
  hmc::io::write_draws_csv(dir.file("draws.csv"), source, 6);
  const auto lines = lines_of(read_file(dir.file("draws.csv")));
  ASSERT_EQ(lines.size(), 7u);
  const auto first = parse_line(lines[1]);
  EXPECT_EQ(first[8], "0.333333");
  for (std::size_t r = 1; r < lines.size(); ++r) {
    const auto f = parse_line(lines[r]);
    const double x = store.value(0, static_cast<std::int64_t>((r - 1) / 3), static_cast<std::int64_t>((r - 1) % 3));
    EXPECT_NEAR(parse_double(f[8]), x, 5e-6 * std::fabs(x));
  }
}

TEST(Results, DrawsCsvFailureNamesTheFile) {
  const Store store = make_store(2, 2, {"x"}, 3);
  const MemorySource source = store.source();
  const std::string path = "/nonexistent-dir-for-hmc-tests/draws.csv";
  try {
    hmc::io::write_draws_csv(path, source, 0);
    FAIL() << "no error";
  } catch (const hmc::RunError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

TEST(Results, ParticlesCsvAndSamplerStats) {
  const Store store = make_store(5, 8, {"a", "b"}, 4);
  const MemorySource source = store.source();
  hmc::io::RunTotals totals;
  totals.grad_evals = 1234;
  for (int p = 0; p < 5; ++p) {
    totals.accept_sum.push_back(0.5 * (p + 1));
    totals.divergences.push_back(p % 2);
  }
  TempDir dir;
  hmc::io::write_particles_csv(dir.file("particles.csv"), source, totals, 10);
  const auto lines = lines_of(read_file(dir.file("particles.csv")));
  ASSERT_EQ(lines.size(), 6u);
  EXPECT_EQ(lines[0], "particle,accept_rate,divergences,mean_n_leapfrog,e_bfmi");
  const int steps = store.layout.stat_column("n_steps");
  const int energy = store.layout.stat_column("energy");
  double all_steps = 0.0;
  for (int p = 0; p < 5; ++p) {
    const auto f = parse_line(lines[static_cast<std::size_t>(p + 1)]);
    ASSERT_EQ(f.size(), 5u);
    EXPECT_EQ(parse_integer(f[0]), p);
    EXPECT_TRUE(same_bits(parse_double(f[1]), 0.5 * (p + 1) / 10));
    EXPECT_EQ(parse_integer(f[2]), p % 2);
    double s = 0.0;
    std::vector<double> e;
    for (int d = 0; d < 8; ++d) {
      s += store.value(steps, p, d);
      e.push_back(store.value(energy, p, d));
    }
    all_steps += s;
    EXPECT_TRUE(same_bits(parse_double(f[3]), s / 8));
    EXPECT_TRUE(same_bits(parse_double(f[4]), hmc::diagnostics::e_bfmi(e.data(), 8, 1)));
  }
  hmc::sampler::Settings settings;
  settings.draws = 10;
  const auto st = hmc::io::sampler_stats(source, totals, settings, 3);
  EXPECT_EQ(st.particles, 5);
  EXPECT_EQ(st.ranks, 3);
  EXPECT_EQ(st.grad_evals, 1234);
  EXPECT_EQ(st.divergences, 2);
  EXPECT_DOUBLE_EQ(st.acceptance_rate, 0.5 * 15 / 50);
  EXPECT_DOUBLE_EQ(st.mean_leapfrog_steps, all_steps / 40);

  // One draw: no E-BFMI, an empty field.
  const Store one = make_store(2, 1, {"a"}, 5);
  hmc::io::write_particles_csv(dir.file("particles.csv"), one.source(), totals, 10);
  const auto short_lines = lines_of(read_file(dir.file("particles.csv")));
  ASSERT_EQ(short_lines.size(), 3u);
  EXPECT_EQ(short_lines[1].back(), ',');
}

TEST(Results, SummaryJsonSaysWhichParticlesTheDiagnosticsUsed) {
  const Store store = make_store(20, 10, {"x"}, 6);
  hmc::diagnostics::SummaryOptions options;
  options.max_draws = 50;
  const auto params = hmc::diagnostics::summarize(store.source(), options);
  const auto j = hmc::io::summary_json(params, hmc::io::SamplerStats{}, hmc::io::Timings{}, hmc::Adapted{}, {});
  EXPECT_EQ(j.at("diagnostics").at("particles").get<int>(), 20);
  EXPECT_EQ(j.at("diagnostics").at("particles_used").get<int>(), 5);
  EXPECT_EQ(j.at("diagnostics").at("max_draws").get<int>(), 50);
  EXPECT_EQ(j.at("parameter_order")[0], "x");
  EXPECT_TRUE(j.at("parameters").at("x").contains("ess_bulk"));
  const std::string table = hmc::io::parameter_table(params);
  EXPECT_NE(table.find("first 5 of 20 particles"), std::string::npos) << table;
}

}  // namespace

namespace {

// The "likely cause" sentences: restarts point to heavy tails or the start, most particles
// flagged to the start or modes, long trajectories to correlation, each with the keys that help.
TEST(Results, WarningCausesNameTheCauseAndTheKeys) {
  hmc::Adapted a;
  a.algorithm = "nuts";
  hmc::io::SamplerStats st;
  st.mean_leapfrog_steps = 10.0;
  hmc::sampler::Settings s;
  const std::vector<std::string> rhat = {"R-hat above 1.01 for 2 parameter(s) (a, b; up to 1.2): ..."};
  EXPECT_TRUE(hmc::io::warning_causes(a, st, s, rhat).empty());  // nothing points to a cause

  a.repairs.restarted = 3;
  a.repairs.far = 3;
  EXPECT_TRUE(hmc::io::warning_causes(a, st, s, {}).empty());  // repaired, and no warning
  auto c = hmc::io::warning_causes(a, st, s, rhat);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_NE(c[0].find("warmup restarted 3 particle(s)"), std::string::npos) << c[0];
  EXPECT_NE(c[0].find("heavy tails"), std::string::npos) << c[0];
  EXPECT_NE(c[0].find("/sampler/init/radius"), std::string::npos) << c[0];

  a.repairs.skipped_checks = 2;
  c = hmc::io::warning_causes(a, st, s, {});
  ASSERT_EQ(c.size(), 1u);
  EXPECT_NE(c[0].find("most particles were stuck or far"), std::string::npos) << c[0];
  EXPECT_NE(c[0].find("/sampler/init/strategy"), std::string::npos) << c[0];

  a.repairs = {};
  st.mean_leapfrog_steps = 600.0;  // of at most 1023 (max_tree_depth 10)
  c = hmc::io::warning_causes(a, st, s, {});
  ASSERT_EQ(c.size(), 1u);
  EXPECT_NE(c[0].find("correlation"), std::string::npos) << c[0];
  EXPECT_NE(c[0].find("/sampler/adapt/metric dense"), std::string::npos) << c[0];
  a.algorithm = "hmc";
  a.trajectory = hmc::TrajectoryKind::kFixed;  // a fixed length says nothing
  EXPECT_TRUE(hmc::io::warning_causes(a, st, s, {}).empty());
}

}  // namespace
