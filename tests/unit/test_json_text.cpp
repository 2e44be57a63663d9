// Bounded JSON input and safe JSON output (io/json_text), and the size arithmetic and
// estimates that guard memory and disk (services/resources).

#include "hmc/io/draw_writer.hpp"
#include "hmc/io/json_text.hpp"
#include "hmc/io/run_config.hpp"
#include "hmc/services/resources.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

namespace {

using hmc::io::JsonInputError;
using nlohmann::json;

std::string nested(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST(JsonText, DepthLimitIsEnforcedBeforeParsing) {
  EXPECT_NO_THROW(hmc::io::parse_bounded(nested(hmc::io::kMaxJsonDepth)));
  // Far past any stack: refused by the scan, not by a crash in the parser.
  for (int depth : {hmc::io::kMaxJsonDepth + 1, 70000, 1000000}) {
    try {
      hmc::io::parse_bounded(nested(depth));
      FAIL() << "depth " << depth << " accepted";
    } catch (const JsonInputError& e) {
      EXPECT_NE(std::string(e.what()).find("nested deeper than 256"), std::string::npos) << e.what();
    }
  }
  // Brackets inside strings do not count; escaped quotes do not end a string.
  EXPECT_EQ(hmc::io::json_depth("{\"a\": \"[[[[\\\"[[[\"}", 256), 1);
  std::size_t where = 0;
  EXPECT_EQ(hmc::io::json_depth("[[[", 2, &where), 3);
  EXPECT_EQ(where, 2u);
}

TEST(JsonText, SyntaxErrorsSayWhereWithoutEchoingInput) {
  try {
    hmc::io::parse_bounded("{\"a\": \xff\xfe}");
    FAIL();
  } catch (const JsonInputError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("is not valid JSON (line 1, column", 0), 0u) << what;
    EXPECT_EQ(what.find('\xff'), std::string::npos);
  }
}

TEST(JsonText, DumpReplacesBytesThatAreNotUtf8) {
  const json j = {{"dir", std::string("/tmp/x\xff")}};
  EXPECT_THROW((void)j.dump(), json::type_error);  // nlohmann's default: the reason for dump_text
  EXPECT_EQ(hmc::dump_text(j), "{\"dir\":\"/tmp/x\xEF\xBF\xBD\"}");
  // Transport between ranks keeps the bytes.
  EXPECT_EQ(hmc::io::from_transport(hmc::io::to_transport(j))["dir"].get<std::string>(), "/tmp/x\xff");
}

TEST(JsonText, ShownIsShortAndCheap) {
  json big = json::array();
  for (int i = 0; i < 100000; ++i) big.push_back(i);
  const std::string s = hmc::shown(big);
  EXPECT_LE(s.size(), 40u);
  EXPECT_EQ(s.rfind("[0,1,2,3", 0), 0u) << s;
  EXPECT_EQ(hmc::shown(json(1.5)), "1.5");
  EXPECT_EQ(hmc::shown(json(std::string(100, 'x'))).size(), 40u);
}

TEST(JsonText, PrintableMakesOneValidLine) {
  EXPECT_EQ(hmc::printable("a\nb\tc"), "a b c");
  EXPECT_EQ(hmc::printable("x\xff"), "x\xEF\xBF\xBD");
  EXPECT_EQ(hmc::printable("\xC3\xA9t\xC3\xA9"), "\xC3\xA9t\xC3\xA9");  // "été" stays
  EXPECT_EQ(hmc::printable("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");    // overlong '/'
  // A cut never splits a character.
  const std::string cut = hmc::printable(std::string(20, '\xC3') + "", 10);
  EXPECT_LE(cut.size(), 10u);
}

TEST(JsonText, InputFilesAreCheckedBeforeReading) {
  const auto dir = std::filesystem::temp_directory_path() / "hmc-json-text-test";
  std::filesystem::create_directories(dir);
  auto message = [](const std::string& path, std::int64_t limit) {
    try {
      hmc::io::read_input_file(path, limit);
    } catch (const JsonInputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(message(dir.string(), 1 << 20), "is a directory");
  EXPECT_EQ(message((dir / "missing.json").string(), 1 << 20).rfind("cannot open: ", 0), 0u);
  const auto empty = (dir / "empty.json").string();
  std::ofstream(empty) << "  \n";
  EXPECT_EQ(message(empty, 1 << 20), "is empty");
  const auto big = (dir / "big.json").string();
  std::ofstream(big) << std::string(3 << 20, ' ') << "{}";
  EXPECT_EQ(message(big, 1 << 20).rfind("is larger than 1 MiB", 0), 0u);
  EXPECT_EQ(message(big, 4 << 20), "accepted");
  // Only regular files: a device or a FIFO could block the read for ever (a FIFO that no
  // one writes to is refused without waiting for a writer).
  EXPECT_EQ(message("/dev/zero", 1 << 20), "is not a regular file (a character device)");
  const auto fifo = (dir / "fifo.json").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(message(fifo, 1 << 20), "is not a regular file (a FIFO)");
  // the descriptor of a regular file reads in blocking mode
  const int fd = hmc::io::open_input_file(big);
  EXPECT_EQ(::fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
  ::close(fd);
  std::filesystem::remove_all(dir);
}

TEST(Resources, SaturatingSizes) {
  const auto max = std::numeric_limits<std::int64_t>::max();
  EXPECT_EQ(hmc::mul_sat(3, 4), 12);
  EXPECT_EQ(hmc::mul_sat(std::int64_t{1} << 40, std::int64_t{1} << 40), max);
  EXPECT_EQ(hmc::add_sat(max - 1, 5), max);
  EXPECT_EQ(hmc::services::format_bytes(512), "512 bytes");
  EXPECT_EQ(hmc::services::format_bytes(std::int64_t{3} << 29), "1.5 GiB");
}

hmc::io::RunConfig small_config(std::int64_t particles) {
  hmc::io::RunConfig c;
  c.sampler.particles = particles;
  c.sampler.warmup = 100;
  c.sampler.draws = 1000;
  c.sampler.thin = 1;
  c.sampler.adapt.metric = hmc::MetricKind::kDiag;
  return c;
}

hmc::StoreLayout layout_of(const hmc::io::RunConfig& c, int params) {
  hmc::StoreLayout l;
  l.particles = c.sampler.particles;
  for (int j = 0; j < params; ++j) l.param_names.push_back("x[" + std::to_string(j + 1) + "]");
  l.draws = c.kept_draws();
  l.warmup_draws = c.kept_warmup_draws();
  return l;
}

TEST(Resources, BlockDrawsFollowWhatIsRecorded) {
  auto c = small_config(64);  // 4 KiB a draw: far below the 32 MiB of a block
  c.sampler.warmup = 1000;
  c.sampler.draws = 100;
  // Warmup draws are not saved: a block holds at most the 100 recorded draws.
  EXPECT_EQ(c.block_draws(8), 100);
  c.sampler.save_warmup = true;
  EXPECT_EQ(c.block_draws(8), 1000);
  c.output.flush_every = 7;
  EXPECT_EQ(c.block_draws(8), 7);
  c.output.flush_every = 0;
  c.sampler.particles = 1 << 17;  // 8 columns of 2^17 particles, 8 MiB a draw: 32 MiB is 4 draws
  EXPECT_EQ(c.block_draws(8), 4);
}

TEST(Resources, MemoryEstimateScalesWithParticlesAndRanks) {
  const hmc::services::ModelShape shape{100, 100, 0, 0};
  const auto one = hmc::services::estimate_memory(small_config(1 << 16), shape, 1);
  const auto two = hmc::services::estimate_memory(small_config(1 << 16), shape, 2);
  EXPECT_GT(one.device, 0);
  EXPECT_LT(two.device, one.device);
  // A billion particles of a million coordinates: saturates, never wraps negative.
  const auto huge = hmc::services::estimate_memory(small_config(1000000000), {1000000, 1000000, 0, 0}, 1);
  EXPECT_GT(huge.device, std::int64_t{1} << 50);
  EXPECT_GT(huge.host, std::int64_t{1} << 50);
  EXPECT_THROW(hmc::services::check_memory(small_config(1000000000), shape, 1, 1), std::exception);
  EXPECT_NO_THROW(hmc::services::check_memory(small_config(64), shape, 1, 1));
}

TEST(Resources, OutputEstimateAndFreeSpaceHook) {
  const hmc::services::ModelShape shape{2, 2, 0, 0};
  auto c = small_config(4096);
  const auto& formats = hmc::io::draw_formats();
  const std::int64_t nc = hmc::services::estimate_output_bytes(c, layout_of(c, 2), shape, formats);
  EXPECT_GE(nc, 2 * 4096LL * 1000 * 8 * 8);  // store + draws.nc, 8 values a draw
  c.output.formats = {"netcdf", "csv"};
  EXPECT_GT(hmc::services::estimate_output_bytes(c, layout_of(c, 2), shape, formats), nc);
  // Model data counts towards memory: 8 bytes a number.
  EXPECT_EQ(hmc::io::data_bytes(json{{"x", {1, 2.5, 3}}, {"name", "y"}, {"n", 4}}), 32);
  setenv("HMC_TEST_FREE_BYTES", "1234", 1);
  EXPECT_EQ(hmc::services::free_disk_bytes("/nonexistent/dir"), 1234);
  unsetenv("HMC_TEST_FREE_BYTES");
  EXPECT_GT(hmc::services::free_disk_bytes("/nonexistent/dir/below"), 0);  // its nearest existing parent, /
}

}  // namespace
