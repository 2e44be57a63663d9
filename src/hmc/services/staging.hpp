#pragma once
/// \file
/// \brief The all-or-nothing result set: a run works in a staging directory beside its
/// output directory and publishes it with one rename when everything is written.
///
///   OUT.partial/            while the run goes on (and after a signal: resume from it)
///     run-config.json       resolved config, command line, store layout
///     checkpoint.bin        latest checkpoint (io/checkpoint.hpp)
///     blocks/*.tile         recorded draws (io/tile_store.hpp)
///   OUT/                    after publishing: the result files only
///
/// A failed run removes its staging directory (unless it holds a checkpoint worth
/// resuming); OUT is never a mix of two runs.

#include <string>

namespace hmc::services {

struct OutputPaths {
  std::string final_dir;  ///< absolute /output/dir
  std::string staging;    ///< final_dir + ".partial"
  std::string blocks() const { return staging + "/blocks"; }
  std::string checkpoint() const { return staging + "/checkpoint.bin"; }
  std::string run_config() const { return staging + "/run-config.json"; }
};

/// \brief Paths for output directory `dir` (made absolute).
OutputPaths output_paths(const std::string& dir);

/// \brief The run that `hmc resume DIR` means: DIR names the output directory or its
/// staging directory. Throws RunError when neither holds a checkpointed run.
OutputPaths find_checkpointed(const std::string& dir);

/// \brief Prepares a fresh run's staging directory. Throws ConfigError when results or
/// a checkpointed run are in the way and `overwrite` is false, RunError when the
/// directory cannot be created or written.
void prepare_staging(const OutputPaths& p, bool overwrite);

/// \brief Removes the working files (blocks, checkpoint) and renames the staging
/// directory to the output directory (replacing an old one with `overwrite`).
void publish(const OutputPaths& p, bool overwrite);

/// \brief Removes the staging directory and everything in it.
void discard(const OutputPaths& p);

}  // namespace hmc::services
