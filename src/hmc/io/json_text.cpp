#include "hmc/io/json_text.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace hmc::io {

using nlohmann::json;

int json_depth(const std::string& text, int limit, std::size_t* where) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > deepest) deepest = depth;
      if (depth > limit) {
        if (where) *where = i;
        return limit + 1;
      }
    } else if (c == ']' || c == '}') {
      --depth;  // unbalanced text is the parser's to report
    }
  }
  return deepest;
}

json parse_bounded(const std::string& text, int max_depth) {
  std::size_t where = 0;
  if (json_depth(text, max_depth, &where) > max_depth) {
    throw JsonInputError("is nested deeper than " + std::to_string(max_depth) +
                         " levels of arrays and objects (at byte " + std::to_string(where) + ")");
  }
  const auto nul = text.find('\0');
  if (nul != std::string::npos) {
    throw JsonInputError("is not valid JSON (a NUL byte at byte " + std::to_string(nul) + ")");
  }
  try {
    return json::parse(text);
  } catch (const json::out_of_range& e) {
    // e.g. "number overflow parsing '1e400'": a number no double holds
    std::string what = e.what();
    const auto close = what.find("] ");
    if (close != std::string::npos) what = what.substr(close + 2);
    throw JsonInputError("is not valid JSON (" + printable(what, 80) + ")");
  } catch (const json::parse_error& e) {
    // "[json.exception.parse_error.101] parse error at line 1, column 2: syntax error while
    // parsing value - invalid literal; last read: '...'": keep where and why, not the bytes read.
    std::string what = e.what();
    const auto at = what.find(" at ");
    if (at != std::string::npos) what = what.substr(at + 4);
    const auto last = what.find("; last read");
    if (last != std::string::npos) what = what.substr(0, last);
    throw JsonInputError("is not valid JSON (" + printable(what) + ")");
  }
}

namespace {

/// Why a file of type `mode` is not read ("" for a regular file).
std::string type_problem(mode_t mode) {
  if (S_ISREG(mode)) return "";
  if (S_ISDIR(mode)) return "is a directory";
  const char* what = S_ISFIFO(mode)   ? "a FIFO"
                     : S_ISCHR(mode)  ? "a character device"
                     : S_ISBLK(mode)  ? "a block device"
                     : S_ISSOCK(mode) ? "a socket"
                                      : "of another type";
  return std::string("is not a regular file (") + what + ")";
}

}  // namespace

int open_input_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw JsonInputError(std::string("cannot open: ") + std::strerror(errno));
  if (const std::string why = type_problem(st.st_mode); !why.empty()) throw JsonInputError(why);
  // O_NONBLOCK: should the path have become a FIFO since, opening it does not wait for a writer
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw JsonInputError(std::string("cannot open: ") + std::strerror(errno));
  std::string why;
  if (::fstat(fd, &st) != 0) {
    why = std::string("cannot open: ") + std::strerror(errno);
  } else {
    why = type_problem(st.st_mode);
  }
  if (why.empty() && ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0) {
    why = std::string("cannot open: ") + std::strerror(errno);
  }
  if (!why.empty()) {
    ::close(fd);
    throw JsonInputError(why);
  }
  return fd;
}

std::string read_regular_file(const std::string& path, std::int64_t max_bytes) {
  const int fd = open_input_file(path);
  struct stat st {};
  if (::fstat(fd, &st) == 0 && st.st_size > max_bytes) {
    ::close(fd);
    throw JsonInputError("is larger than " + std::to_string(max_bytes >> 20) + " MiB (" + std::to_string(st.st_size) +
                         " bytes)");
  }
  std::string text;
  text.reserve(static_cast<std::size_t>(std::min<std::int64_t>(st.st_size, max_bytes)));
  char buf[1 << 16];
  for (;;) {
    const ssize_t got = ::read(fd, buf, sizeof buf);
    if (got < 0) {
      if (errno == EINTR) continue;
      const std::string why = std::strerror(errno);
      ::close(fd);
      throw JsonInputError("cannot read: " + why);
    }
    if (got == 0) break;
    text.append(buf, static_cast<std::size_t>(got));
    if (static_cast<std::int64_t>(text.size()) > max_bytes) {
      ::close(fd);
      throw JsonInputError("is larger than " + std::to_string(max_bytes >> 20) + " MiB");
    }
  }
  ::close(fd);
  return text;
}

std::string read_input_file(const std::string& path, std::int64_t max_bytes) {
  std::string text = read_regular_file(path, max_bytes);
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) throw JsonInputError("is empty");
  return text;
}

std::string to_transport(const json& v) {
  const auto bytes = json::to_cbor(v);
  return std::string(bytes.begin(), bytes.end());
}

json from_transport(const std::string& bytes) { return json::from_cbor(bytes); }

namespace {
const char* const kStatTypes[] = {"real", "integer", "bool"};
}  // namespace

nlohmann::json stats_json(const std::vector<StatColumn>& stats) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& s : stats) out.push_back({s.name, kStatTypes[static_cast<int>(s.type)], s.compress});
  return out;
}

std::vector<StatColumn> stats_from_json(const nlohmann::json& j) {
  std::vector<StatColumn> out;
  if (!j.is_array()) throw std::invalid_argument("statistics: not a list");
  for (const auto& e : j) {
    if (!e.is_array() || e.size() != 3 || !e[0].is_string() || !e[1].is_string() || !e[2].is_boolean()) {
      throw std::invalid_argument("statistics: an entry is not [name, type, compress]");
    }
    StatColumn c{e[0].get<std::string>(), StatType::kReal, e[2].get<bool>()};
    int t = 0;
    while (t < 3 && e[1].get<std::string>() != kStatTypes[t]) ++t;
    if (t == 3) throw std::invalid_argument("statistics: unknown type " + e[1].dump());
    c.type = static_cast<StatType>(t);
    out.push_back(std::move(c));
  }
  return out;
}

nlohmann::json groups_json(const std::vector<DrawGroup>& groups) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& g : groups) {
    nlohmann::json arrays = nlohmann::json::array();
    for (const auto& a : g.arrays) arrays.push_back({a.name, a.dims, a.shape});
    out.push_back({{"name", g.name}, {"arrays", arrays}});
  }
  return out;
}

std::vector<DrawGroup> groups_from_json(const nlohmann::json& j) {
  std::vector<DrawGroup> out;
  const auto bad = [] {
    return std::invalid_argument("groups: an entry is not {name, arrays: [[name, dims, shape]]}");
  };
  if (!j.is_array()) throw std::invalid_argument("groups: not a list");
  for (const auto& e : j) {
    if (!e.is_object() || !e.contains("name") || !e["name"].is_string() || !e.contains("arrays") ||
        !e["arrays"].is_array()) {
      throw bad();
    }
    DrawGroup g;
    g.name = e["name"].get<std::string>();
    for (const auto& a : e["arrays"]) {
      if (!a.is_array() || a.size() != 3 || !a[0].is_string() || !a[1].is_array() || !a[2].is_array() ||
          a[1].size() != a[2].size()) {
        throw bad();
      }
      ArrayShape s;
      s.name = a[0].get<std::string>();
      for (const auto& d : a[1]) {
        if (!d.is_string()) throw bad();
        s.dims.push_back(d.get<std::string>());
      }
      for (const auto& x : a[2]) {
        if (!x.is_number_integer() || x.get<std::int64_t>() < 0 || x.get<std::int64_t>() > (std::int64_t{1} << 40)) {
          throw bad();
        }
        s.shape.push_back(x.get<std::int64_t>());
      }
      g.arrays.push_back(std::move(s));
    }
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace hmc::io
