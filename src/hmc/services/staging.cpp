#include "hmc/services/staging.hpp"

#include "hmc/core/errors.hpp"

#include <fcntl.h>  // AT_FDCWD
#include <stdio.h>  // renameat2, RENAME_EXCHANGE (glibc >= 2.28)
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace hmc::services {

namespace fs = std::filesystem;

namespace {

bool empty_dir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec) && fs::is_empty(p, ec);
}

}  // namespace

OutputPaths output_paths(const std::string& dir) {
  std::string abs = fs::absolute(dir).lexically_normal().string();
  while (abs.size() > 1 && abs.back() == '/') abs.pop_back();
  return OutputPaths{abs, abs + ".partial"};
}

OutputPaths find_checkpointed(const std::string& dir) {
  OutputPaths p = output_paths(dir);
  const std::string suffix = ".partial";
  if (p.final_dir.size() > suffix.size() &&
      p.final_dir.compare(p.final_dir.size() - suffix.size(), suffix.size(), suffix) == 0) {
    p = output_paths(p.final_dir.substr(0, p.final_dir.size() - suffix.size()));
  }
  std::error_code ec;
  if (fs::exists(p.checkpoint(), ec)) return p;
  if (fs::exists(fs::path(p.final_dir) / "summary.json", ec)) {
    throw RunError("the run in " + p.final_dir + " has finished; there is nothing to resume");
  }
  if (fs::exists(p.staging, ec)) {
    throw RunError("no checkpoint in " + p.staging + " (the run stopped before its first checkpoint); start it again");
  }
  throw RunError("no checkpointed run at " + dir + " (looked for " + p.checkpoint() + ")");
}

void prepare_staging(const OutputPaths& p, bool overwrite) {
  std::error_code ec;
  if (fs::exists(p.final_dir, ec)) {
    if (!fs::is_directory(p.final_dir, ec)) {
      throw ConfigError("config error: /output/dir " + p.final_dir + " exists and is not a directory");
    }
    if (!overwrite && !empty_dir(p.final_dir)) {
      throw ConfigError("config error: /output/dir " + p.final_dir +
                        " already holds files; pass --overwrite to replace them, or choose another /output/dir");
    }
  }
  if (fs::exists(p.staging, ec)) {
    if (!overwrite) {
      throw ConfigError("config error: a stopped run waits in " + p.staging + ": resume it with `hmc resume " +
                        p.final_dir + "`, or pass --overwrite to discard it");
    }
    fs::remove_all(p.staging, ec);
    if (ec) throw RunError("cannot remove " + p.staging + ": " + ec.message());
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
  std::error_code ec;
  // Everything that can refuse comes first, while the working files still make the run
  // resumable; then one rename publishes; only then do the working files go.
  const bool replace = fs::exists(p.final_dir, ec) && !empty_dir(p.final_dir);
  if (replace && !overwrite) throw RunError(p.final_dir + " was created during the run; results are in " + p.staging);
  if (replace) {
    // Swap the new results and the old ones in one step (Linux renameat2), so a kill
    // leaves either result set in OUT, never none; the old set, now in OUT.partial, goes.
    if (::renameat2(AT_FDCWD, p.staging.c_str(), AT_FDCWD, p.final_dir.c_str(), RENAME_EXCHANGE) == 0) {
      fs::remove_all(p.staging, ec);
    } else {  // a file system without the exchange: move the old set aside first
      const std::string old = p.final_dir + ".old-" + std::to_string(::getpid());
      fs::rename(p.final_dir, old, ec);
      if (ec) throw RunError("cannot replace " + p.final_dir + ": " + ec.message() + "; results are in " + p.staging);
      fs::rename(p.staging, p.final_dir, ec);
      if (ec) {
        std::error_code back;
        fs::rename(old, p.final_dir, back);
        throw RunError("cannot rename " + p.staging + " to " + p.final_dir + ": " + ec.message() +
                       (back ? "; the old results are in " + old : std::string()));
      }
      fs::remove_all(old, ec);
    }
  } else {
    if (fs::exists(p.final_dir, ec)) fs::remove(p.final_dir, ec);  // empty
    fs::rename(p.staging, p.final_dir, ec);
    if (ec) throw RunError("cannot rename " + p.staging + " to " + p.final_dir + ": " + ec.message());
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
