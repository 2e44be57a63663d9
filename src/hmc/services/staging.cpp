#include "hmc/services/staging.hpp"

#include "hmc/core/errors.hpp"

#include <fcntl.h>  // AT_FDCWD
#include <stdio.h>  // renameat2, RENAME_EXCHANGE (glibc >= 2.28)
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace hmc::services {

namespace fs = std::filesystem;

namespace {

bool empty_dir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec) && fs::is_empty(p, ec);
}

/// A mount point's path in /proc/self/mountinfo (its fifth field) with the kernel's octal
/// escapes (\040 for a space, ...) undone.
std::string unescape_mountinfo(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const bool octal = s[i] == '\\' && i + 3 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1])) &&
                       std::isdigit(static_cast<unsigned char>(s[i + 2])) &&
                       std::isdigit(static_cast<unsigned char>(s[i + 3]));
    if (octal) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 3), nullptr, 8));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

/// Whether directory `dir` (absolute, normalised) is a mount point: its device differs
/// from its parent's (another file system), or /proc/self/mountinfo lists it (a bind mount
/// of a folder of the same file system). Renaming onto a mount point fails (EBUSY).
bool mount_point(const std::string& dir) {
  struct stat self {
  }, parent{};
  if (::stat(dir.c_str(), &self) != 0 || !S_ISDIR(self.st_mode)) return false;
  if (::stat((dir + "/..").c_str(), &parent) == 0 && (self.st_dev != parent.st_dev || self.st_ino == parent.st_ino)) {
    return true;
  }
  std::error_code ec;
  const std::string real = fs::canonical(dir, ec).string();  // mountinfo has no symbolic links
  std::ifstream info("/proc/self/mountinfo");
  for (std::string line; std::getline(info, line);) {
    std::istringstream fields(line);
    std::string id, parent_id, dev, root, point;
    if (!(fields >> id >> parent_id >> dev >> root >> point)) continue;
    point = unescape_mountinfo(point);
    if (point == dir || point == real) return true;
  }
  return false;
}

/// `dir` without a trailing "/", made absolute and normalised.
std::string absolute_dir(const std::string& dir) {
  std::string abs = fs::absolute(dir).lexically_normal().string();
  while (abs.size() > 1 && abs.back() == '/') abs.pop_back();
  return abs;
}

OutputPaths beside(const std::string& final_dir) { return OutputPaths{final_dir, final_dir + ".partial", false}; }
OutputPaths inside(const std::string& final_dir) {
  return OutputPaths{final_dir, final_dir + "/" + kInPlaceStaging, true};
}

/// The output directory that `dir` means when it may name a staging directory:
/// OUT.partial or OUT/.hmc.partial stand for OUT.
std::string output_dir_of(const std::string& dir) {
  std::string abs = absolute_dir(dir);
  const std::string suffix = ".partial";
  if (fs::path(abs).filename() == kInPlaceStaging) return fs::path(abs).parent_path().string();
  if (abs.size() > suffix.size() && abs.compare(abs.size() - suffix.size(), suffix.size(), suffix) == 0) {
    return abs.substr(0, abs.size() - suffix.size());
  }
  return abs;
}

/// The working files of the staging directory, which publishing leaves behind.
bool working_file(const std::string& name) {
  return name == "blocks" || name == "checkpoint.bin" || name == "run-config.json" || name == ".created-parents" ||
         name == ".hmc-write-test";
}

/// The result files in `staging`, in publishing order: summary.json, which marks a
/// complete set, last.
std::vector<std::string> result_files(const std::string& staging) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(staging, ec)) {
    const std::string name = e.path().filename().string();
    if (!working_file(name)) names.push_back(name);
  }
  if (ec) throw std::system_error(ec);
  std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
    return std::make_pair(a == "summary.json", a) < std::make_pair(b == "summary.json", b);
  });
  return names;
}

/// Puts `from` at `to` whole: one rename, or (another file system) a copy to a hidden
/// name beside `to` that is renamed onto it, then `from` removed.
void move_file(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::rename(from, to, ec);
  if (!ec) return;
  if (ec != std::errc::cross_device_link) throw std::system_error(ec, "cannot move " + from.string());
  const fs::path tmp = to.parent_path() / ("." + to.filename().string() + ".hmc-tmp");
  fs::copy(from, tmp, fs::copy_options::overwrite_existing | fs::copy_options::recursive, ec);
  if (!ec) fs::rename(tmp, to, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove_all(tmp, ignored);
    throw std::system_error(ec, "cannot copy " + from.string() + " to " + to.string());
  }
  fs::remove_all(from, ec);
}

/// Publishes file by file into the existing directory OUT: with `overwrite`, the old
/// entries go aside into OUT/.hmc.old first (removed at the end); then each result file
/// is renamed in, summary.json last. Entries of OUT that are neither this run's nor
/// replaced are refused (they appeared during the run).
void publish_into(const OutputPaths& p, bool overwrite) {
  const std::vector<std::string> files = result_files(p.staging);
  const fs::path out(p.final_dir), old = out / ".hmc.old";
  std::vector<std::string> foreign;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(out, ec)) {
    const std::string name = e.path().filename().string();
    if (name == kInPlaceStaging || name == ".hmc.old" || fs::path(p.staging) == e.path()) continue;
    // A result file of this run already there: an earlier publishing that was stopped.
    if (!overwrite && std::find(files.begin(), files.end(), name) != files.end()) continue;
    foreign.push_back(name);
  }
  if (ec) throw std::system_error(ec, "cannot list " + p.final_dir);
  if (!foreign.empty() && !overwrite) {
    throw std::runtime_error(p.final_dir + " gained files during the run (" + foreign.front() + ")");
  }
  if (!foreign.empty()) {
    fs::create_directories(old, ec);
    if (ec) throw std::system_error(ec, "cannot create " + old.string());
    for (const auto& name : foreign) move_file(out / name, old / name);
  }
  for (const auto& name : files) move_file(fs::path(p.staging) / name, out / name);
  fs::remove_all(old, ec);
}

/// Publishes by renaming the staging directory OUT.partial to OUT (replacing an old
/// result set with `overwrite`).
void publish_beside(const OutputPaths& p, bool overwrite) {
  std::error_code ec;
  if (fs::exists(p.final_dir, ec)) {
    // OUT appeared during the run, or is an old result set to replace.
    if (!empty_dir(p.final_dir) && !overwrite) throw std::runtime_error(p.final_dir + " was created during the run");
    // Swap the new results and the old ones in one step (Linux renameat2), so a kill
    // leaves either result set in OUT, never none; the old set, now in OUT.partial, goes.
    if (::renameat2(AT_FDCWD, p.staging.c_str(), AT_FDCWD, p.final_dir.c_str(), RENAME_EXCHANGE) == 0) {
      fs::remove_all(p.staging, ec);
      return;
    }
    // No exchange (the file system lacks it, or OUT is a mount point): into OUT file by file.
    publish_into(p, overwrite);
    fs::remove_all(p.staging, ec);
    return;
  }
  fs::rename(p.staging, p.final_dir, ec);
  if (ec == std::errc::cross_device_link || ec == std::errc::device_or_resource_busy) {
    fs::create_directory(p.final_dir, ec);
    if (ec) throw std::system_error(ec, "cannot create " + p.final_dir);
    publish_into(p, overwrite);
    fs::remove_all(p.staging, ec);
    return;
  }
  if (ec) throw std::system_error(ec, "cannot rename " + p.staging + " to " + p.final_dir);
}

}  // namespace

OutputPaths output_paths(const std::string& dir) {
  const std::string abs = absolute_dir(dir);
  std::error_code ec;
  if (fs::is_directory(fs::path(abs) / kInPlaceStaging, ec)) return inside(abs);
  if (fs::is_directory(abs, ec) && (empty_dir(abs) || mount_point(abs))) return inside(abs);
  return beside(abs);
}

OutputPaths find_checkpointed(const std::string& dir) {
  const std::string out = output_dir_of(dir);
  std::error_code ec;
  for (const OutputPaths& p : {inside(out), beside(out)}) {
    if (fs::exists(p.checkpoint(), ec)) return p;
  }
  if (fs::exists(fs::path(out) / "summary.json", ec)) {
    throw RunError("the run in " + out + " has finished; there is nothing to resume");
  }
  for (const OutputPaths& p : {inside(out), beside(out)}) {
    if (fs::exists(p.staging, ec)) {
      throw RunError("no checkpoint in " + p.staging +
                     " (the run stopped before its first checkpoint); start it again");
    }
  }
  throw RunError("no checkpointed run at " + dir + " (looked for " + beside(out).checkpoint() + " and " +
                 inside(out).checkpoint() + ")");
}

void prepare_staging(const OutputPaths& p, bool overwrite) {
  std::error_code ec;
  if (fs::exists(p.final_dir, ec)) {
    if (!fs::is_directory(p.final_dir, ec)) {
      throw ConfigError("config error: /output/dir " + p.final_dir + " exists and is not a directory");
    }
    bool holds_files = false;
    for (const auto& e : fs::directory_iterator(p.final_dir, ec)) {
      if (e.path().filename() != kInPlaceStaging) holds_files = true;
    }
    if (!overwrite && holds_files) {
      throw ConfigError("config error: /output/dir " + p.final_dir +
                        " already holds files; pass --overwrite to replace them, or choose another /output/dir");
    }
  }
  // A stopped run, beside OUT or inside it.
  for (const OutputPaths& stopped : {inside(p.final_dir), beside(p.final_dir)}) {
    if (!fs::exists(stopped.staging, ec)) continue;
    if (!overwrite) {
      throw ConfigError("config error: a stopped run waits in " + stopped.staging + ": resume it with `hmc resume " +
                        p.final_dir + "`, or pass --overwrite to discard it");
    }
    fs::remove_all(stopped.staging, ec);
    if (ec) throw RunError("cannot remove " + stopped.staging + ": " + ec.message());
  }
  // Parents of OUT that do not exist yet: a failed run removes them again (discard).
  std::vector<std::string> created;
  for (fs::path a = fs::absolute(p.staging, ec).parent_path(); !a.empty() && !fs::exists(a, ec); a = a.parent_path()) {
    created.push_back(a.string());
    if (a == a.parent_path()) break;
  }
  fs::create_directories(p.blocks(), ec);
  if (ec) {
    for (const auto& d : created) fs::remove(d, ec);  // deepest first; only if empty
    throw RunError("cannot create " + p.staging + ": " + ec.message());
  }
  if (!created.empty()) {
    std::FILE* list = std::fopen((p.staging + "/.created-parents").c_str(), "wb");
    if (list) {
      for (const auto& d : created) std::fprintf(list, "%s%c", d.c_str(), '\0');
      std::fclose(list);
    }
  }
  // Fail now, not after sampling, if results could not be written.
  const std::string probe = p.staging + "/.hmc-write-test";
  std::FILE* f = std::fopen(probe.c_str(), "wb");
  if (!f) {
    const std::string why = std::strerror(errno);
    discard(p);
    throw RunError("cannot write into " + p.staging + ": " + why);
  }
  std::fclose(f);
  std::remove(probe.c_str());
}

void publish(const OutputPaths& p, bool overwrite) {
  // Until the result files are all in OUT, the working files stay, so the run can be
  // resumed; only then do they go.
  try {
    if (p.in_place) {
      publish_into(p, overwrite);
    } else {
      publish_beside(p, overwrite);
    }
  } catch (const std::exception& e) {
    std::error_code ec;
    const std::string where = fs::exists(p.checkpoint(), ec) ? p.staging : p.final_dir;
    throw RunError("cannot publish the results in " + p.final_dir + ": " + e.what() + "; the complete results are in " +
                   where + "; once that is fixed, finish with: hmc resume " + p.final_dir);
  }
  std::error_code ec;
  if (p.in_place) {
    fs::remove_all(p.staging, ec);
    return;
  }
  const std::string dir = p.final_dir + "/";
  for (const std::string& working : {p.blocks(), p.checkpoint(), p.run_config()}) {
    fs::remove_all(dir + fs::path(working).filename().string(), ec);
  }
}

void discard(const OutputPaths& p) {
  std::error_code ec;
  std::string list;
  if (std::FILE* f = std::fopen((p.staging + "/.created-parents").c_str(), "rb")) {
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) list.append(buf, n);
    std::fclose(f);
  }
  fs::remove_all(p.staging, ec);
  // The parents this run created, deepest first, each only if it is empty now.
  for (std::size_t at = 0, end; (end = list.find('\0', at)) != std::string::npos; at = end + 1) {
    fs::remove(list.substr(at, end - at), ec);
  }
}

}  // namespace hmc::services
