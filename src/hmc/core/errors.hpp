#pragma once
/// \file
/// \brief The errors a user can cause, and the exit codes they map to.

#include <exception>
#include <stdexcept>
#include <string>

namespace hmc {

/// Exit codes of the `hmc` executable (docs/cli.md).
enum ExitCode : int {
  kExitOk = 0,
  kExitFailure = 1,               ///< an internal or unexpected error
  kExitConfigError = 2,           ///< bad command line or config: unknown key, wrong type, out of range
  kExitDataError = 3,             ///< data file missing, unreadable or inconsistent with the model
  kExitRunError = 4,              ///< the run could not proceed (no finite start, output not writable)
  kExitGradientCheck = 5,         ///< `hmc diagnose`: the gradient is shown wrong
  kExitGradientInconclusive = 6,  ///< `hmc diagnose`: no point could be checked
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

/// \brief The exit code of a failure: ConfigError 2, DataError 3, RunError (and the
/// errors derived from it) 4, anything else 1. The one mapping from exceptions to exit
/// codes; what the message says is the exception's what().
inline int exit_code(const std::exception& e) {
  if (dynamic_cast<const ConfigError*>(&e)) return kExitConfigError;
  if (dynamic_cast<const DataError*>(&e)) return kExitDataError;
  if (dynamic_cast<const RunError*>(&e)) return kExitRunError;
  return kExitFailure;
}

/// \brief Throws the error class of exit code `code` (2, 3 or 4) with `what`: how an
/// error raised on one rank is raised again on the others.
[[noreturn]] inline void throw_for_exit_code(int code, const std::string& what) {
  if (code == kExitConfigError) throw ConfigError(what);
  if (code == kExitDataError) throw DataError(what);
  throw RunError(what);
}

}  // namespace hmc
