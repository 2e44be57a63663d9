#pragma once
/// \file
/// \brief The errors a user can cause, and the exit codes they map to.

#include <stdexcept>
#include <string>

namespace hmc {

/// Exit codes of the `hmc` executable (docs/cli.md).
enum ExitCode : int {
  kExitOk = 0,
  kExitFailure = 1,        ///< an internal or unexpected error
  kExitConfigError = 2,    ///< bad command line or config: unknown key, wrong type, out of range
  kExitDataError = 3,      ///< data file missing, unreadable or inconsistent with the model
  kExitRunError = 4,       ///< the run could not proceed (no finite start, output not writable)
  kExitGradientCheck = 5,  ///< `hmc diagnose`: the gradient disagrees with finite differences
};

/// \brief A problem with the config; the message is one line naming the key.
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// \brief A problem with the data; the message is one line naming the file or key.
class DataError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// \brief A problem while running (output directory, initialisation).
class RunError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace hmc
