#pragma once
/// \file
/// \brief SIGTERM, SIGINT and SIGUSR1 ask a run to stop cleanly: the handler only
/// records the signal; the sampling loop looks at it between iterations (all ranks
/// agree on it), writes a checkpoint and ends with exit code 75. While the input is read
/// (ReadingInput), the handler ends the process at once, also with 75.

#include "hmc/parallel/watchdog.hpp"

namespace hmc::services {

/// \brief Exit code of a run stopped by a signal after writing its checkpoint
/// (EX_TEMPFAIL: try again, i.e. resume).
inline constexpr int kExitInterrupted = 75;

/// \brief Installs the handlers (idempotent). A second SIGINT ends the process at once.
void install_signal_handlers();

/// \brief Back to the default actions, for commands that are not runs (`hmc summary`,
/// `hmc diagnose`): a signal ends them at once. One that already arrived is raised again.
void restore_default_signal_handlers();

/// \brief The signal received (0: none).
int pending_signal();

/// \brief "SIGTERM", "SIGINT", "SIGUSR1" or "signal N".
const char* signal_name(int sig);

/// \brief Thrown where a signal interrupts work that can be redone on resume (writing
/// the results); the caller ends with kExitInterrupted.
struct Interrupted {
  int signal;
};

/// \brief Throws Interrupted if a signal has arrived.
void throw_if_interrupted();

/// \brief While one lives, a stop signal (SIGTERM, SIGINT, SIGUSR1) ends the process at
/// once with kExitInterrupted and one line on stderr, `hmc: SIGTERM while reading WHAT;
/// stopped before writing anything`: for reading the input (config, data, a checkpoint),
/// where a read may block (a hung network file system, a slow device) and there is
/// nothing to save. A signal that arrived before ends it at construction. `what` must
/// outlive it (a string literal). Scopes may nest; rank 0 reads, on the main thread.
/// While the rank watchdog runs (parallel/watchdog.hpp), such a read is at fault once it
/// lasts /run/rank_timeout_s.
class ReadingInput {
 public:
  explicit ReadingInput(const char* what);
  ~ReadingInput();
  ReadingInput(const ReadingInput&) = delete;
  ReadingInput& operator=(const ReadingInput&) = delete;

 private:
  const char* previous_;
  parallel::ScopedActivity activity_{parallel::Activity::kReading};
};

}  // namespace hmc::services
