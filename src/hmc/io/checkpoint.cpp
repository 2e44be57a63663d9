#include "hmc/io/checkpoint.hpp"

#include "hmc/core/errors.hpp"
#include "hmc/io/checksum.hpp"
#include "hmc/io/json_text.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>

namespace hmc::io {

namespace {

constexpr char kMagic[8] = {'H', 'M', 'C', 'C', 'K', 'P', 'T', '1'};

void append_bytes(std::string& out, const void* p, std::size_t n) { out.append(static_cast<const char*>(p), n); }

}  // namespace

std::string double_bits(double x) {
  std::uint64_t u;
  std::memcpy(&u, &x, 8);
  char buf[24];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, u);
  return buf;
}

double double_from_bits(const std::string& s) {
  if (s.size() != 16) throw RunError("checkpoint: bad number encoding '" + s + "'");
  std::uint64_t u = 0;
  for (char c : s) {
    int v = c >= '0' && c <= '9' ? c - '0' : (c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1);
    if (v < 0) throw RunError("checkpoint: bad number encoding '" + s + "'");
    u = (u << 4) | static_cast<std::uint64_t>(v);
  }
  double x;
  std::memcpy(&x, &u, 8);
  return x;
}

void write_checkpoint(const std::string& path, const CheckpointData& c) {
  const std::string header = dump_text(c.header);
  std::string bytes;
  bytes.reserve(40 + header.size() + c.rows.size() * 8);
  append_bytes(bytes, kMagic, 8);
  const std::uint64_t header_len = header.size(), rows = c.rows.size();
  append_bytes(bytes, &header_len, 8);
  bytes += header;
  append_bytes(bytes, &rows, 8);
  append_bytes(bytes, c.rows.data(), c.rows.size() * 8);
  Checksum sum;
  sum.update(bytes.data(), bytes.size());
  const std::uint64_t check = sum.value();
  append_bytes(bytes, &check, 8);

  const std::filesystem::path p(path);
  const std::string tmp = (p.parent_path() / ("." + p.filename().string() + ".tmp")).string();
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw RunError("cannot write checkpoint " + path + ": " + std::strerror(errno));
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t w = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {  // a full disk, a quota, an I/O error; the previous checkpoint stays
      const std::string why = std::strerror(w < 0 ? errno : EIO);
      ::close(fd);
      ::unlink(tmp.c_str());
      throw RunError("cannot write checkpoint " + path + ": " + why);
    }
    done += static_cast<std::size_t>(w);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    throw RunError("cannot write checkpoint " + path + ": " + why);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    throw RunError("cannot write checkpoint " + path + ": " + why);
  }
}

CheckpointData read_checkpoint(const std::string& path) {
  std::string bytes;
  try {
    // a regular file only: a FIFO would block the read
    bytes = read_regular_file(path, std::numeric_limits<std::int64_t>::max());
  } catch (const JsonInputError& e) {
    std::string why = e.what();
    for (const char* prefix : {"cannot open: ", "cannot read: "}) {
      if (why.rfind(prefix, 0) == 0) why = why.substr(std::strlen(prefix));
    }
    throw RunError("cannot read checkpoint " + path + ": " + why);
  }
  const std::string bad = "checkpoint " + path + " is corrupt or not an hmc checkpoint";
  if (bytes.size() < 32 || std::memcmp(bytes.data(), kMagic, 8) != 0) throw RunError(bad + " (no header)");
  std::uint64_t check = 0;
  std::memcpy(&check, bytes.data() + bytes.size() - 8, 8);
  Checksum sum;
  sum.update(bytes.data(), bytes.size() - 8);
  if (sum.value() != check) throw RunError(bad + " (checksum mismatch)");
  std::uint64_t header_len = 0, rows = 0;
  std::memcpy(&header_len, bytes.data() + 8, 8);
  if (header_len > bytes.size() - 32) throw RunError(bad + " (header length)");
  CheckpointData c;
  try {
    c.header = parse_bounded(bytes.substr(16, header_len));
  } catch (const JsonInputError&) {
    throw RunError(bad + " (header is not JSON)");
  }
  if (!c.header.is_object()) throw RunError(bad + " (header is not JSON)");
  std::memcpy(&rows, bytes.data() + 16 + header_len, 8);
  if (16 + header_len + 8 + rows * 8 + 8 != bytes.size()) throw RunError(bad + " (row count)");
  c.rows.resize(rows);
  std::memcpy(c.rows.data(), bytes.data() + 16 + header_len + 8, rows * 8);
  return c;
}

}  // namespace hmc::io
