// draws.nc: ArviZ InferenceData written with the netCDF C API and read back (io/netcdf.hpp).
#include "hmc/core/errors.hpp"
#include "hmc/io/netcdf.hpp"

#include <gtest/gtest.h>
#include <netcdf.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

using hmc::MemorySource;
using hmc::RunError;
using hmc::Section;
using hmc::StoreLayout;
using hmc::io::NetcdfOptions;
using hmc::io::NetcdfSource;

std::string temp_path(const std::string& name) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return ::testing::TempDir() + "hmc_" + info->name() + "_" + name;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A 2x2 `transition` (dim names from_state/to_state), a vector p, a scalar sigma and a
// name that needs sanitizing.
StoreLayout test_layout(std::int64_t particles, std::int64_t draws, std::int64_t warmup) {
  StoreLayout l;
  l.particles = particles;
  l.draws = draws;
  l.warmup_draws = warmup;
  l.param_names = {"p[1]", "transition[1,1]", "transition[1,2]", "transition[2,1]",
                   "p[2]", "transition[2,2]", "sigma",           "a/b"};
  l.dim_names = {{"transition", {"from_state", "to_state"}}};
  return l;
}

// Realistic values: noise in the parameters, lp and energy (with a few non-finite ones
// and -0.0), many exact 1.0 acceptance rates, one step size, small integer step counts
// and 0/1 divergences.
std::vector<double> values(const StoreLayout& l, std::int64_t draws, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> unif;
  const auto cells = static_cast<std::size_t>(l.particles * draws);
  std::vector<double> v;
  for (int c = 0; c < l.num_columns(); ++c) {
    for (std::size_t i = 0; i < cells; ++i) {
      double x = normal(rng);
      if (c == l.stat_column("acceptance_rate")) x = unif(rng) < 0.6 ? 1.0 : unif(rng);
      if (c == l.stat_column("step_size")) x = 0.3125;
      if (c == l.stat_column("n_steps")) x = static_cast<double>(1 + rng() % 16);
      if (c == l.stat_column("diverging")) x = unif(rng) < 0.05 ? 1.0 : 0.0;
      v.push_back(x);
    }
  }
  if (cells >= 3) {
    v[0] = std::numeric_limits<double>::quiet_NaN();
    v[1] = -std::numeric_limits<double>::infinity();
    v[2] = -0.0;
  }
  return v;
}

MemorySource test_source(std::int64_t particles, std::int64_t draws, std::int64_t warmup, unsigned seed = 1) {
  const StoreLayout l = test_layout(particles, draws, warmup);
  return MemorySource(l, values(l, draws, seed), values(l, warmup, seed + 1));
}

// Every column of every section, for all particles and for sub-ranges, is bitwise equal.
void expect_same_draws(const hmc::DrawSource& a, const hmc::DrawSource& b) {
  const StoreLayout& l = a.layout();
  for (Section s : {Section::kPosterior, Section::kWarmup}) {
    ASSERT_EQ(a.available(s), b.available(s));
    const std::int64_t k = a.available(s);
    const std::int64_t n = l.particles;
    for (int c = 0; c < l.num_columns(); ++c) {
      for (auto [p0, p1] : {std::pair<std::int64_t, std::int64_t>{0, n}, {n / 3, n / 3 + 1}, {n / 2, n}}) {
        std::vector<double> x(static_cast<std::size_t>((p1 - p0) * k)), y(x.size());
        a.read(s, c, p0, p1, x.data());
        b.read(s, c, p0, p1, y.data());
        EXPECT_TRUE(x.empty() || std::memcmp(x.data(), y.data(), x.size() * sizeof(double)) == 0)
            << "section " << static_cast<int>(s) << " column " << c << " particles " << p0 << ".." << p1;
      }
    }
  }
}

// Thin RAII access to a written file for structural checks.
class File {
 public:
  explicit File(const std::string& path) { EXPECT_EQ(nc_open(path.c_str(), NC_NOWRITE, &id_), NC_NOERR); }
  ~File() { nc_close(id_); }
  int group(const char* name) const {
    int g = -1;
    return nc_inq_grp_ncid(id_, name, &g) == NC_NOERR ? g : -1;
  }

 private:
  int id_ = -1;
};

std::vector<std::string> dims_of(int grp, const char* var) {
  int varid = -1, ndims = 0;
  EXPECT_EQ(nc_inq_varid(grp, var, &varid), NC_NOERR) << var;
  nc_inq_varndims(grp, varid, &ndims);
  std::vector<int> ids(static_cast<std::size_t>(ndims));
  nc_inq_vardimid(grp, varid, ids.data());
  std::vector<std::string> names;
  for (int id : ids) {
    char name[NC_MAX_NAME + 1];
    nc_inq_dimname(grp, id, name);
    names.emplace_back(name);
  }
  return names;
}

nc_type type_of(int grp, const char* var) {
  int varid = -1;
  nc_type t = NC_NAT;
  EXPECT_EQ(nc_inq_varid(grp, var, &varid), NC_NOERR) << var;
  nc_inq_vartype(grp, varid, &t);
  return t;
}

std::string text_att(int grp, int varid, const char* name) {
  std::size_t len = 0;
  if (nc_inq_attlen(grp, varid, name, &len) != NC_NOERR) return "<missing>";
  std::string s(len, '\0');
  nc_get_att_text(grp, varid, name, s.data());
  return s;
}

std::vector<long long> ints_of(int grp, const char* var) {
  int varid = -1, dim = -1;
  std::size_t len = 0;
  EXPECT_EQ(nc_inq_varid(grp, var, &varid), NC_NOERR) << var;
  nc_inq_vardimid(grp, varid, &dim);
  nc_inq_dimlen(grp, dim, &len);
  std::vector<long long> v(len);
  if (len > 0) nc_get_var_longlong(grp, varid, v.data());
  return v;
}

TEST(Netcdf, RoundTripIsBitwise) {
  const MemorySource src = test_source(37, 23, 11);
  const std::string path = temp_path("draws.nc");
  write_inference_data(path, src, NetcdfOptions{}, nlohmann::json::object());
  const NetcdfSource back(path);
  EXPECT_EQ(back.layout().particles, 37);
  EXPECT_EQ(back.layout().draws, 23);
  EXPECT_EQ(back.layout().warmup_draws, 11);
  EXPECT_EQ(back.layout().param_names, src.layout().param_names);
  EXPECT_EQ(back.layout().dim_names, src.layout().dim_names);
  expect_same_draws(src, back);
  std::remove(path.c_str());
}

TEST(Netcdf, RoundTripWithEveryStorageChoice) {
  const MemorySource src = test_source(29, 17, 5);
  const std::string path = temp_path("draws.nc");
  NetcdfOptions none;
  none.compression = 0;
  NetcdfOptions all;
  all.compression = 6;
  all.shuffle = false;
  all.compress_floats = true;
  NetcdfOptions tiny;  // chunks of 3 draws of one particle, blocks of one chunk: many writes
  tiny.compress_floats = true;
  tiny.chunk_bytes = 3 * 4 * sizeof(double);
  tiny.block_bytes = 1;
  NetcdfOptions tiny_contiguous = tiny;
  tiny_contiguous.compression = 0;
  for (const NetcdfOptions& opt : {none, all, tiny, tiny_contiguous}) {
    write_inference_data(path, src, opt, nullptr);
    expect_same_draws(src, NetcdfSource(path));
  }
  std::remove(path.c_str());
}

TEST(Netcdf, InferenceDataLayout) {
  const MemorySource src = test_source(5, 4, 3);
  const std::string path = temp_path("draws.nc");
  const nlohmann::json attrs = {{"hmc_version", "1.2.3"},
                                {"seed", 20261130},
                                {"temperature", 1.5},
                                {"config", {{"model", "hmm"}}},
                                {"flag", true}};
  std::vector<double> progress;
  write_inference_data(path, src, NetcdfOptions{}, attrs, [&](double f) { progress.push_back(f); });
  ASSERT_FALSE(progress.empty());
  EXPECT_EQ(progress.back(), 1.0);
  for (std::size_t i = 1; i < progress.size(); ++i) EXPECT_LE(progress[i - 1], progress[i]);

  const File f(path);
  for (const char* g : {"posterior", "sample_stats", "warmup_posterior", "warmup_sample_stats"}) {
    const int grp = f.group(g);
    ASSERT_GE(grp, 0) << g;
    EXPECT_EQ(ints_of(grp, "chain"), (std::vector<long long>{0, 1, 2, 3, 4})) << g;
    const std::size_t draws = std::string(g).rfind("warmup", 0) == 0 ? 3 : 4;
    EXPECT_EQ(ints_of(grp, "draw").size(), draws) << g;
    EXPECT_EQ(type_of(grp, "chain"), NC_INT64);
    // attributes: strings as text, numbers as numbers, the rest as JSON text
    EXPECT_EQ(text_att(grp, NC_GLOBAL, "inference_library"), "hmc");
    EXPECT_EQ(text_att(grp, NC_GLOBAL, "hmc_version"), "1.2.3");
    EXPECT_EQ(text_att(grp, NC_GLOBAL, "config"), R"({"model":"hmm"})");
    EXPECT_EQ(text_att(grp, NC_GLOBAL, "flag"), "true");
    nc_type t = NC_NAT;
    long long seed = 0;
    double temperature = 0;
    EXPECT_EQ(nc_inq_atttype(grp, NC_GLOBAL, "seed", &t), NC_NOERR);
    EXPECT_EQ(t, NC_INT64);
    nc_get_att_longlong(grp, NC_GLOBAL, "seed", &seed);
    EXPECT_EQ(seed, 20261130);
    EXPECT_EQ(nc_inq_atttype(grp, NC_GLOBAL, "temperature", &t), NC_NOERR);
    EXPECT_EQ(t, NC_DOUBLE);
    nc_get_att_double(grp, NC_GLOBAL, "temperature", &temperature);
    EXPECT_EQ(temperature, 1.5);
  }
  for (const char* g : {"posterior", "warmup_posterior"}) {
    const int grp = f.group(g);
    EXPECT_EQ(dims_of(grp, "transition"), (std::vector<std::string>{"chain", "draw", "from_state", "to_state"}));
    EXPECT_EQ(dims_of(grp, "p"), (std::vector<std::string>{"chain", "draw", "p_dim_0"}));
    EXPECT_EQ(dims_of(grp, "sigma"), (std::vector<std::string>{"chain", "draw"}));
    EXPECT_EQ(dims_of(grp, "a_b"), (std::vector<std::string>{"chain", "draw"}));
    EXPECT_EQ(type_of(grp, "transition"), NC_DOUBLE);
    EXPECT_EQ(ints_of(grp, "from_state"), (std::vector<long long>{0, 1}));
    EXPECT_EQ(ints_of(grp, "to_state"), (std::vector<long long>{0, 1}));
    EXPECT_EQ(ints_of(grp, "p_dim_0"), (std::vector<long long>{0, 1}));
    // transition[1,2] is column 2 of the store and element (0, 1) of the variable
    int varid = -1;
    nc_inq_varid(grp, "transition", &varid);
    const std::size_t start[4] = {2, 1, 0, 1}, count[4] = {1, 1, 1, 1};
    double x = 0, y = 0;
    nc_get_vara_double(grp, varid, start, count, &x);
    const Section s = g[0] == 'w' ? Section::kWarmup : Section::kPosterior;
    std::vector<double> col(static_cast<std::size_t>(5 * src.available(s)));
    src.read(s, 2, 0, 5, col.data());
    y = col[static_cast<std::size_t>(2 * src.available(s) + 1)];
    EXPECT_EQ(x, y);
  }
  for (const char* g : {"sample_stats", "warmup_sample_stats"}) {
    const int grp = f.group(g);
    for (const char* v : {"lp", "acceptance_rate", "step_size", "energy"}) EXPECT_EQ(type_of(grp, v), NC_DOUBLE) << v;
    EXPECT_EQ(type_of(grp, "n_steps"), NC_INT64);
    EXPECT_EQ(type_of(grp, "diverging"), NC_BYTE);
    EXPECT_EQ(dims_of(grp, "diverging"), (std::vector<std::string>{"chain", "draw"}));
    int varid = -1;
    nc_inq_varid(grp, "diverging", &varid);
    EXPECT_EQ(text_att(grp, varid, "dtype"), "bool");
  }
}

TEST(Netcdf, NoWarmupGroupsWithoutWarmupDraws) {
  const MemorySource src = test_source(4, 6, 0);
  const std::string path = temp_path("draws.nc");
  write_inference_data(path, src, NetcdfOptions{}, nlohmann::json::object());
  {
    const File f(path);
    EXPECT_GE(f.group("posterior"), 0);
    EXPECT_GE(f.group("sample_stats"), 0);
    EXPECT_EQ(f.group("warmup_posterior"), -1);
    EXPECT_EQ(f.group("warmup_sample_stats"), -1);
  }
  const NetcdfSource back(path);
  EXPECT_EQ(back.available(Section::kWarmup), 0);
  expect_same_draws(src, back);
  std::remove(path.c_str());
}

TEST(Netcdf, ZeroDraws) {
  const MemorySource src = test_source(3, 0, 2);
  const std::string path = temp_path("draws.nc");
  for (int level : {0, 1}) {
    NetcdfOptions opt;
    opt.compression = level;
    write_inference_data(path, src, opt, nlohmann::json::object());
    const NetcdfSource back(path);
    EXPECT_EQ(back.available(Section::kPosterior), 0);
    expect_same_draws(src, back);
  }
  std::remove(path.c_str());
}

TEST(Netcdf, SameDrawsGiveTheSameBytes) {
  const MemorySource src = test_source(16, 40, 8);
  const std::string a = temp_path("a.nc"), b = temp_path("b.nc");
  const nlohmann::json attrs = {{"seed", 7}, {"model", "hmm"}};
  const auto t0 = static_cast<std::uint32_t>(std::time(nullptr));
  write_inference_data(a, src, NetcdfOptions{}, attrs);
  write_inference_data(b, src, NetcdfOptions{}, attrs);
  const auto t1 = static_cast<std::uint32_t>(std::time(nullptr));
  const std::string x = slurp(a), y = slurp(b);
  ASSERT_FALSE(x.empty());
  EXPECT_TRUE(x == y) << "two writes of the same draws differ";
  // HDF5 would store object times as 32-bit seconds: none of the write's seconds appear
  for (std::size_t i = 0; i + 4 <= x.size(); ++i) {
    std::uint32_t v = 0;
    for (int k = 3; k >= 0; --k) v = (v << 8) | static_cast<unsigned char>(x[i + static_cast<std::size_t>(k)]);
    EXPECT_FALSE(v + 2 >= t0 && v <= t1 + 2) << "a time stamp at byte " << i;
  }
  std::remove(a.c_str());
  std::remove(b.c_str());
}

TEST(Netcdf, ErrorsNameTheFile) {
  const MemorySource src = test_source(2, 2, 0);
  const std::string bad = ::testing::TempDir() + "hmc_no_such_dir/draws.nc";
  try {
    write_inference_data(bad, src, NetcdfOptions{}, nlohmann::json::object());
    FAIL() << "no error";
  } catch (const RunError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("cannot write " + bad + ": ", 0), 0u) << e.what();
  }
  try {
    NetcdfSource s(bad);
    FAIL() << "no error";
  } catch (const RunError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("cannot read " + bad + ": ", 0), 0u) << e.what();
  }

  // a bad layout fails before the file is touched; an existing file stays
  const std::string path = temp_path("draws.nc");
  write_inference_data(path, src, NetcdfOptions{}, nlohmann::json::object());
  StoreLayout l = src.layout();
  l.param_names[1] = "p[1]";
  const MemorySource dup(l, std::vector<double>(static_cast<std::size_t>(l.num_columns() * 2 * 2)));
  try {
    write_inference_data(path, dup, NetcdfOptions{}, nlohmann::json::object());
    FAIL() << "no error";
  } catch (const RunError& e) {
    EXPECT_EQ(std::string(e.what()), "cannot write " + path + ": parameter name 'p[1]' appears twice");
  }
  NetcdfOptions opt;
  opt.compression = 10;
  EXPECT_THROW(write_inference_data(path, src, opt, nlohmann::json::object()), RunError);
  EXPECT_NO_THROW(NetcdfSource{path});

  // a netCDF file that hmc did not write
  int id = -1;
  ASSERT_EQ(nc_create(path.c_str(), NC_NETCDF4 | NC_CLOBBER, &id), NC_NOERR);
  nc_close(id);
  try {
    NetcdfSource s(path);
    FAIL() << "no error";
  } catch (const RunError& e) {
    EXPECT_NE(std::string(e.what()).find("not written by hmc"), std::string::npos) << e.what();
  }
  std::remove(path.c_str());
}

TEST(Netcdf, ReadOutOfRangeThrows) {
  const MemorySource src = test_source(3, 2, 0);
  const std::string path = temp_path("draws.nc");
  write_inference_data(path, src, NetcdfOptions{}, nlohmann::json::object());
  const NetcdfSource back(path);
  std::vector<double> buf(100);
  EXPECT_THROW(back.read(Section::kPosterior, back.layout().num_columns(), 0, 1, buf.data()), RunError);
  EXPECT_THROW(back.read(Section::kPosterior, 0, 0, 4, buf.data()), RunError);
  EXPECT_THROW(back.read(Section::kPosterior, -1, 0, 1, buf.data()), RunError);
  EXPECT_THROW(back.read(Section::kPosterior, 0, 2, 1, buf.data()), RunError);
  back.read(Section::kWarmup, 0, 0, 3, buf.data());  // no warmup saved: nothing to read
  std::remove(path.c_str());
}

}  // namespace

namespace {

// The further groups: a log_likelihood group of a vector y (dim obs) and a 2x3 matrix z
// (dims r, c), after the parameters and statistics.
StoreLayout group_layout(std::int64_t particles, std::int64_t draws, std::int64_t warmup) {
  StoreLayout l = test_layout(particles, draws, warmup);
  hmc::DrawGroup g;
  g.name = "log_likelihood";
  g.arrays.push_back({"y", {"obs"}, {4}});
  g.arrays.push_back({"z", {"r", "c"}, {2, 3}});
  l.groups.push_back(g);
  return l;
}

}  // namespace

TEST(Netcdf, LogLikelihoodAndObservedDataGroups) {
  const StoreLayout l = group_layout(13, 7, 3);
  ASSERT_EQ(l.num_columns(), 8 + 6 + 10);
  ASSERT_EQ(l.group_column(0), 14);
  const MemorySource src(l, values(l, 7, 5), values(l, 3, 6));
  hmc::DataArray y;
  y.group = "observed_data";
  y.name = "y";
  y.dims = {"obs"};
  y.shape = {4};
  y.values = {1, 0, 1, 1};
  y.integer = true;
  hmc::DataArray x = y;
  x.group = "constant_data";
  x.name = "x";
  x.values = {0.5, -1.25, 2.0, 3.5};
  x.integer = false;
  const std::string path = temp_path("draws.nc");
  write_inference_data(path, src, NetcdfOptions{}, nlohmann::json::object(), {}, {y, x});
  {
    const File f(path);
    const int ll = f.group("log_likelihood"), wll = f.group("warmup_log_likelihood");
    ASSERT_GE(ll, 0);
    ASSERT_GE(wll, 0);
    EXPECT_EQ(dims_of(ll, "y"), (std::vector<std::string>{"chain", "draw", "obs"}));
    EXPECT_EQ(dims_of(ll, "z"), (std::vector<std::string>{"chain", "draw", "r", "c"}));
    const int obs = f.group("observed_data"), cd = f.group("constant_data");
    ASSERT_GE(obs, 0);
    ASSERT_GE(cd, 0);
    EXPECT_EQ(dims_of(obs, "y"), (std::vector<std::string>{"obs"}));
    EXPECT_EQ(type_of(obs, "y"), NC_INT64);
    EXPECT_EQ(ints_of(obs, "y"), (std::vector<long long>{1, 0, 1, 1}));
    EXPECT_EQ(type_of(cd, "x"), NC_DOUBLE);
    std::vector<double> xs(4);
    int varid = -1;
    ASSERT_EQ(nc_inq_varid(cd, "x", &varid), NC_NOERR);
    nc_get_var_double(cd, varid, xs.data());
    EXPECT_EQ(xs, x.values);
  }
  // Read back column by column: the groups' columns too, bit for bit.
  const NetcdfSource back(path);
  ASSERT_EQ(back.layout().groups.size(), 1u);
  EXPECT_EQ(back.layout().groups[0].arrays[1].shape, (std::vector<std::int64_t>{2, 3}));
  expect_same_draws(src, back);
  std::remove(path.c_str());
}

TEST(Netcdf, BadGroupsAreRefusedByName) {
  StoreLayout l = group_layout(2, 2, 0);
  l.groups[0].arrays[1].dims = {"obs", "c"};  // obs with sizes 4 and 2
  const MemorySource src(l, values(l, 2, 1), {});
  const std::string path = temp_path("draws.nc");
  try {
    write_inference_data(path, src, NetcdfOptions{}, nlohmann::json::object());
    FAIL() << "no error";
  } catch (const RunError& e) {
    EXPECT_NE(std::string(e.what()).find("group log_likelihood: dim obs is used with sizes 4 and 2"), std::string::npos)
        << e.what();
  }
  std::ifstream in(path);
  EXPECT_FALSE(in.good()) << "a partial file was left";
}
