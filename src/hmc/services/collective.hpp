#pragma once
/// \file
/// \brief Work that one rank does for all, and failures every rank agrees on: the one
/// way the services turn an error into a line on rank 0 and an exit code.

#include "hmc/core/errors.hpp"
#include "hmc/parallel/mpi_context.hpp"
#include "hmc/parallel/watchdog.hpp"

#include <exception>
#include <iostream>
#include <string>
#include <utility>

namespace hmc::services {

/// \brief Runs `f` on rank 0 while the other ranks wait (collective). An hmc error there
/// (ConfigError, DataError, RunError) is raised on every rank: rank 0 rethrows it as it
/// is, the others raise its class (core/errors.hpp's exit_code) with the same message.
template <class F>
void on_root(const parallel::MpiContext& mpi, F&& f) {
  int code = kExitOk;
  std::string what;
  std::exception_ptr error;
  if (mpi.root()) {
    const parallel::SoloWork solo;  // the other ranks wait in the broadcast below
    try {
      f();
    } catch (const ConfigError& e) {
      code = exit_code(e), what = e.what(), error = std::current_exception();
    } catch (const DataError& e) {
      code = exit_code(e), what = e.what(), error = std::current_exception();
    } catch (const RunError& e) {
      code = exit_code(e), what = e.what(), error = std::current_exception();
    }
  }
  code = mpi.broadcast(code);
  if (code == kExitOk) return;
  what = mpi.broadcast(what);
  if (error) std::rethrow_exception(error);
  throw_for_exit_code(code, what);
}

/// \brief How a command ends on an hmc error `e` raised on every rank: rank 0 prints its
/// one line ("hmc: " + what()) on stderr; every rank returns the exit code.
inline int report(const parallel::MpiContext& mpi, const std::exception& e) {
  if (mpi.root()) std::cerr << "hmc: " << e.what() << "\n";
  return exit_code(e);
}

/// \brief Runs the command `f` (returning its exit code); an hmc error ends it through
/// report(). Other exceptions go on to main, which ends the job (MpiContext::fail).
template <class F>
int guarded(const parallel::MpiContext& mpi, F&& f) {
  try {
    return f();
  } catch (const ConfigError& e) {
    return report(mpi, e);
  } catch (const DataError& e) {
    return report(mpi, e);
  } catch (const RunError& e) {
    return report(mpi, e);
  }
}

}  // namespace hmc::services
