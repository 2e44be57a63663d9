#include "hmc/io/tile_store.hpp"

#include "hmc/core/errors.hpp"
#include "hmc/io/checksum.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

namespace hmc::io {

namespace fs = std::filesystem;

namespace {

constexpr char kMagic[8] = {'H', 'M', 'C', 'T', 'I', 'L', 'E', '1'};
constexpr std::int64_t kHeaderBytes = 64;

struct Header {
  char magic[8];
  std::uint32_t version;
  std::uint32_t section;
  std::int64_t first, count, particles, columns;
  std::uint64_t checksum;
  char pad[kHeaderBytes - 8 - 4 - 4 - 4 * 8 - 8];
};
static_assert(sizeof(Header) == kHeaderBytes, "tile header is 64 bytes");

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

File open_or_throw(const std::string& path, const char* mode) {
  File f(std::fopen(path.c_str(), mode));
  if (!f)
    throw RunError(std::string(mode[0] == 'r' ? "cannot read " : "cannot write ") + path + ": " + std::strerror(errno));
  return f;
}

const char* section_name(Section s) { return s == Section::kPosterior ? "posterior" : "warmup"; }

Header read_header(const std::string& path, std::FILE* f) {
  Header h{};
  if (std::fread(&h, sizeof h, 1, f) != 1 || std::memcmp(h.magic, kMagic, 8) != 0 || h.version != 1) {
    throw RunError("store tile " + path + " is not an hmc tile (truncated or foreign file)");
  }
  return h;
}

}  // namespace

TileStore::TileStore(std::string dir, StoreLayout layout) : dir_(std::move(dir)), layout_(std::move(layout)) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) throw RunError("cannot create " + dir_ + ": " + ec.message());
  index();
}

std::string TileStore::tile_path(Section s, std::int64_t first) const {
  char name[64];
  std::snprintf(name, sizeof name, "%s-%012lld.tile", section_name(s), static_cast<long long>(first));
  return (fs::path(dir_) / name).string();
}

void TileStore::index() {
  tiles_.clear();
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir_, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() < 5 || name.compare(name.size() - 5, 5, ".tile") != 0 || name[0] == '.') continue;
    const std::string path = entry.path().string();
    if (!entry.is_regular_file(ec)) throw RunError("store tile " + path + " is not a regular file");
    auto f = open_or_throw(path, "rb");
    const Header h = read_header(path, f.get());
    if (h.particles != layout_.particles || h.columns != layout_.num_columns() || h.section > 1 || h.count <= 0) {
      throw RunError("store tile " + path + " does not belong to this run (particles or columns differ)");
    }
    tiles_.push_back(Tile{static_cast<Section>(h.section), h.first, h.count, path});
  }
  if (ec) throw RunError("cannot read " + dir_ + ": " + ec.message());
  std::sort(tiles_.begin(), tiles_.end(), [](const Tile& a, const Tile& b) {
    return a.section != b.section ? a.section < b.section : a.first < b.first;
  });
}

std::int64_t TileStore::available(Section s) const {
  std::int64_t next = 0;
  for (const auto& t : tiles_) {
    if (t.section != s) continue;
    if (t.first != next) break;
    next += t.count;
  }
  return std::min(next, layout_.draws_of(s));
}

std::int64_t TileStore::tile_bytes(std::int64_t count) const {
  return kHeaderBytes + static_cast<std::int64_t>(sizeof(double)) * layout_.num_columns() * layout_.particles * count;
}

void TileStore::read(Section s, int column, std::int64_t p0, std::int64_t p1, double* out) const {
  const std::int64_t avail = available(s), n = p1 - p0;
  if (n <= 0 || avail == 0) return;
  std::vector<double> buf;
  std::int64_t next = 0;  // the tiles of [0, avail), in order, as available() chained them
  for (const auto& t : tiles_) {
    if (t.section != s) continue;
    if (t.first != next || next >= avail) break;
    next += t.count;
    const std::int64_t take = std::min(t.count, avail - t.first);
    auto f = open_or_throw(t.path, "rb");
    const std::int64_t offset =
        kHeaderBytes + ((static_cast<std::int64_t>(column) * layout_.particles + p0) * t.count) * 8;
    buf.resize(static_cast<std::size_t>(n * t.count));
    if (std::fseek(f.get(), static_cast<long>(offset), SEEK_SET) != 0 ||
        std::fread(buf.data(), sizeof(double), buf.size(), f.get()) != buf.size()) {
      throw RunError("cannot read " + t.path + ": truncated tile");
    }
    for (std::int64_t i = 0; i < n; ++i)
      std::copy(buf.begin() + i * t.count, buf.begin() + i * t.count + take, out + i * avail + t.first);
  }
}

void TileStore::append(Section s, std::int64_t first, std::int64_t count, const double* values) {
  Header h{};
  std::memcpy(h.magic, kMagic, 8);
  h.version = 1;
  h.section = static_cast<std::uint32_t>(s);
  h.first = first;
  h.count = count;
  h.particles = layout_.particles;
  h.columns = layout_.num_columns();
  const std::size_t n = static_cast<std::size_t>(h.columns * h.particles * count);
  Checksum sum;
  sum.update(values, n * sizeof(double));
  h.checksum = sum.value();

  const std::string path = tile_path(s, first);
  const std::string tmp = (fs::path(dir_) / ("." + fs::path(path).filename().string() + ".tmp")).string();
  {
    auto f = open_or_throw(tmp, "wb");
    errno = 0;
    const bool ok = std::fwrite(&h, sizeof h, 1, f.get()) == 1 && std::fwrite(values, sizeof(double), n, f.get()) == n;
    int error = ok ? 0 : (errno != 0 ? errno : EIO);
    errno = 0;
    if (std::fclose(f.release()) != 0 && error == 0) error = errno != 0 ? errno : EIO;
    if (error != 0) {  // a full disk, a quota, an I/O error
      std::remove(tmp.c_str());
      throw RunError("cannot write " + path + ": " + std::strerror(error));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    throw RunError("cannot write " + path + ": " + why);
  }
  tiles_.erase(
      std::remove_if(tiles_.begin(), tiles_.end(), [&](const Tile& t) { return t.section == s && t.first == first; }),
      tiles_.end());
  tiles_.push_back(Tile{s, first, count, path});
  std::sort(tiles_.begin(), tiles_.end(), [](const Tile& a, const Tile& b) {
    return a.section != b.section ? a.section < b.section : a.first < b.first;
  });
}

void TileStore::truncate(Section s, std::int64_t draws) {
  std::vector<Tile> kept;
  for (const auto& t : tiles_) {
    if (t.section == s && t.first >= draws) {
      std::remove(t.path.c_str());
      continue;
    }
    if (t.section == s && t.first + t.count > draws) {
      throw RunError("store tile " + t.path + " extends past the checkpoint (draw " + std::to_string(draws) +
                     "): the store does not match the checkpoint");
    }
    kept.push_back(t);
  }
  tiles_ = kept;
  if (available(s) < std::min(draws, layout_.draws_of(s))) {
    throw RunError(std::string("store in ") + dir_ + " lacks " + section_name(s) + " draws before draw " +
                   std::to_string(draws) + " that the checkpoint says were written");
  }
}

void TileStore::verify() const {
  std::vector<double> buf;
  for (const auto& t : tiles_) {
    auto f = open_or_throw(t.path, "rb");
    const Header h = read_header(t.path, f.get());
    buf.resize(static_cast<std::size_t>(h.columns * h.particles * h.count));
    if (std::fread(buf.data(), sizeof(double), buf.size(), f.get()) != buf.size()) {
      throw RunError("store tile " + t.path + " is truncated");
    }
    Checksum sum;
    sum.update(buf.data(), buf.size() * sizeof(double));
    if (sum.value() != h.checksum) throw RunError("store tile " + t.path + " is corrupt (checksum mismatch)");
  }
}

}  // namespace hmc::io
