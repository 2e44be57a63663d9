// The tile store and checkpoint files: what a resumed run reads back.
#include "hmc/core/errors.hpp"
#include "hmc/io/checkpoint.hpp"
#include "hmc/io/checksum.hpp"
#include "hmc/io/tile_store.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using hmc::Section;

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("hmc-store-test-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

hmc::StoreLayout layout(std::int64_t particles, std::int64_t draws, std::int64_t warmup = 0) {
  hmc::StoreLayout l;
  l.particles = particles;
  l.param_names = {"a", "b[1]", "b[2]"};
  l.draws = draws;
  l.warmup_draws = warmup;
  return l;
}

/// A distinct value for every (section, column, particle, draw).
double value(int section, int column, std::int64_t p, std::int64_t d) {
  return section * 1e6 + column * 1e4 + p * 100 + d + 0.25;
}

/// Tile values [column][particle][draw] for draws [first, first + count).
std::vector<double> tile(const hmc::StoreLayout& l, int section, std::int64_t first, std::int64_t count) {
  std::vector<double> v;
  for (int c = 0; c < l.num_columns(); ++c)
    for (std::int64_t p = 0; p < l.particles; ++p)
      for (std::int64_t d = 0; d < count; ++d) v.push_back(value(section, c, p, first + d));
  return v;
}

void expect_column(const hmc::DrawSource& s, Section sec, int column, std::int64_t p0, std::int64_t p1) {
  const std::int64_t n = s.available(sec);
  std::vector<double> out(static_cast<std::size_t>((p1 - p0) * n), -1.0);
  s.read(sec, column, p0, p1, out.data());
  for (std::int64_t p = p0; p < p1; ++p)
    for (std::int64_t d = 0; d < n; ++d)
      ASSERT_EQ(out[(p - p0) * n + d], value(static_cast<int>(sec), column, p, d)) << "p " << p << " d " << d;
}

}  // namespace

TEST(TileStore, TilesOfAnySizeReadBackAsOneArray) {
  TempDir dir;
  const auto l = layout(7, 20, 6);
  hmc::io::TileStore store(dir.path.string(), l);
  // Uneven cuts, as checkpoints between blocks make them; appended out of order.
  for (auto [first, count] : {std::pair{0, 5}, {12, 8}, {5, 3}, {8, 4}}) {
    store.append(Section::kPosterior, first, count, tile(l, 0, first, count).data());
  }
  store.append(Section::kWarmup, 0, 6, tile(l, 1, 0, 6).data());
  EXPECT_EQ(store.available(Section::kPosterior), 20);
  EXPECT_EQ(store.available(Section::kWarmup), 6);
  for (int c = 0; c < l.num_columns(); ++c) expect_column(store, Section::kPosterior, c, 0, 7);
  expect_column(store, Section::kPosterior, 2, 3, 5);
  expect_column(store, Section::kWarmup, 8, 1, 7);
  EXPECT_NO_THROW(store.verify());

  // Another process indexes the same directory.
  hmc::io::TileStore again(dir.path.string(), l);
  EXPECT_EQ(again.available(Section::kPosterior), 20);
  expect_column(again, Section::kPosterior, 4, 0, 7);
}

TEST(TileStore, GapsLimitWhatIsAvailable) {
  TempDir dir;
  const auto l = layout(3, 10);
  hmc::io::TileStore store(dir.path.string(), l);
  store.append(Section::kPosterior, 0, 4, tile(l, 0, 0, 4).data());
  store.append(Section::kPosterior, 6, 4, tile(l, 0, 6, 4).data());
  EXPECT_EQ(store.available(Section::kPosterior), 4);
  expect_column(store, Section::kPosterior, 1, 0, 3);
}

TEST(TileStore, TruncateDropsWhatCameAfterTheCheckpoint) {
  TempDir dir;
  const auto l = layout(3, 12);
  hmc::io::TileStore store(dir.path.string(), l);
  for (int first : {0, 4, 8}) store.append(Section::kPosterior, first, 4, tile(l, 0, first, 4).data());
  store.truncate(Section::kPosterior, 8);
  EXPECT_EQ(store.available(Section::kPosterior), 8);
  hmc::io::TileStore again(dir.path.string(), l);
  EXPECT_EQ(again.available(Section::kPosterior), 8);
  // A tile across the checkpoint or a missing one means the store and checkpoint disagree.
  EXPECT_THROW(again.truncate(Section::kPosterior, 6), hmc::RunError);
  EXPECT_THROW(again.truncate(Section::kPosterior, 12), hmc::RunError);
}

TEST(TileStore, CorruptOrForeignTilesAreRefused) {
  TempDir dir;
  const auto l = layout(3, 8);
  {
    hmc::io::TileStore store(dir.path.string(), l);
    store.append(Section::kPosterior, 0, 8, tile(l, 0, 0, 8).data());
  }
  const auto file = dir.path / "posterior-000000000000.tile";
  ASSERT_TRUE(fs::exists(file));
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(200);
    f.put('\x7f');
  }
  hmc::io::TileStore store(dir.path.string(), l);
  EXPECT_THROW(store.verify(), hmc::RunError);
  EXPECT_THROW(hmc::io::TileStore(dir.path.string(), layout(4, 8)), hmc::RunError);
}

TEST(Checkpoint, RoundTripIsExact) {
  TempDir dir;
  hmc::io::CheckpointData c;
  c.header = {{"iteration", 17}, {"x", hmc::io::double_bits(0.1)}};
  c.rows = {1.0, -0.0, std::numeric_limits<double>::denorm_min(), std::nan(""), 1e308};
  const std::string path = (dir.path / "checkpoint.bin").string();
  hmc::io::write_checkpoint(path, c);
  const auto back = hmc::io::read_checkpoint(path);
  EXPECT_EQ(back.header, c.header);
  ASSERT_EQ(back.rows.size(), c.rows.size());
  EXPECT_EQ(0, std::memcmp(back.rows.data(), c.rows.data(), c.rows.size() * sizeof(double)));
  EXPECT_EQ(hmc::io::double_from_bits(back.header["x"].get<std::string>()), 0.1);
  EXPECT_FALSE(fs::exists(dir.path / ".checkpoint.bin.tmp"));
}

TEST(Checkpoint, AnyFlippedByteOrTruncationIsRefused) {
  TempDir dir;
  hmc::io::CheckpointData c;
  c.header = {{"iteration", 3}};
  c.rows.assign(50, 2.5);
  const std::string path = (dir.path / "checkpoint.bin").string();
  hmc::io::write_checkpoint(path, c);
  const auto size = fs::file_size(path);
  std::string bytes(size, '\0');
  {
    std::ifstream in(path, std::ios::binary);
    in.read(bytes.data(), static_cast<std::streamsize>(size));
  }
  for (std::size_t at : {std::size_t{0}, std::size_t{9}, std::size_t{20}, size / 2, size - 1}) {
    std::string bad = bytes;
    bad[at] = static_cast<char>(bad[at] ^ 0x10);
    std::ofstream(path, std::ios::binary | std::ios::trunc).write(bad.data(), static_cast<std::streamsize>(size));
    EXPECT_THROW(hmc::io::read_checkpoint(path), hmc::RunError) << "byte " << at;
  }
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(size / 2));
  EXPECT_THROW(hmc::io::read_checkpoint(path), hmc::RunError);
  EXPECT_THROW(hmc::io::read_checkpoint((dir.path / "missing.bin").string()), hmc::RunError);
}

TEST(Checksum, DependsOnBytesNotOnHowTheyArrive) {
  std::string text = "the quick brown fox jumps over the lazy dog, twice over";
  hmc::io::Checksum whole, pieces;
  whole.update(text.data(), text.size());
  for (std::size_t i = 0; i < text.size(); i += 3)
    pieces.update(text.data() + i, std::min<std::size_t>(3, text.size() - i));
  EXPECT_EQ(whole.value(), pieces.value());
  hmc::io::Checksum other;
  text[10] ^= 1;
  other.update(text.data(), text.size());
  EXPECT_NE(whole.value(), other.value());
  hmc::io::Checksum shorter;
  shorter.update(text.data(), text.size() - 1);
  EXPECT_NE(other.value(), shorter.value());
}
