#pragma once
/// \file
/// \brief The all-or-nothing result set: a run works in a staging directory and
/// publishes the result files only when every one of them is written.
///
/// Where OUT does not exist yet (or holds an old result set that --overwrite replaces),
/// the staging directory is OUT.partial beside it, published with one rename:
///
///   OUT.partial/            while the run goes on (and after a signal: resume from it)
///     run-config.json       resolved config, command line, store layout
///     checkpoint.bin        latest checkpoint (io/checkpoint.hpp)
///     blocks/*.tile         recorded draws (io/tile_store.hpp)
///   OUT/                    after publishing: the result files only
///
/// Where OUT is an existing empty directory or a mount point (a container's bind mount,
/// a scratch folder made by the batch system, whose parent the run may not write), the
/// staging directory is OUT/.hmc.partial, on OUT's own file system, and publishing
/// renames each result file into OUT, summary.json last: each file appears whole, and
/// summary.json marks a complete set. OUT itself is never renamed or removed.
///
/// A failed run removes its staging directory (unless it holds a checkpoint worth
/// resuming); OUT is never a mix of two runs.

#include <string>

namespace hmc::services {

/// Name of the staging directory inside OUT (in-place publishing).
inline constexpr const char* kInPlaceStaging = ".hmc.partial";

struct OutputPaths {
  std::string final_dir;  ///< absolute /output/dir
  std::string staging;    ///< final_dir + ".partial", or final_dir + "/.hmc.partial" (in place)
  bool in_place = false;  ///< staging inside final_dir: publish file by file
  std::string blocks() const { return staging + "/blocks"; }
  std::string checkpoint() const { return staging + "/checkpoint.bin"; }
  std::string run_config() const { return staging + "/run-config.json"; }
};

/// \brief Paths for output directory `dir` (made absolute). The staging directory is
/// inside it when it already holds one, or is an empty directory or a mount point; else
/// beside it.
OutputPaths output_paths(const std::string& dir);

/// \brief The run that `hmc resume DIR` means: DIR names the output directory or its
/// staging directory. Throws RunError when neither holds a checkpointed run.
OutputPaths find_checkpointed(const std::string& dir);

/// \brief Prepares a fresh run's staging directory. Throws ConfigError when results or
/// a checkpointed run are in the way and `overwrite` is false, RunError when the
/// directory cannot be created or written.
void prepare_staging(const OutputPaths& p, bool overwrite);

/// \brief Makes the result files in the staging directory the contents of the output
/// directory (replacing an old result set with `overwrite`), then removes the working
/// files. A failure throws RunError naming where the complete results are and the command
/// that finishes the job; the results are never removed.
void publish(const OutputPaths& p, bool overwrite);

/// \brief Removes the staging directory and everything in it.
void discard(const OutputPaths& p);

}  // namespace hmc::services
