#pragma once
/// \file
/// \brief hmc's command line as a library: an `hmc` executable is `main` calling
/// `hmc::app::main`, linked with hmc::models (the shipped models) and the headers of its
/// own models, if any (apps/hmc/main.cpp; an executable of hmc_add_executable,
/// cmake/hmcAddExecutable.cmake).

namespace hmc::app {

/// \brief Parses the command line and runs the subcommand (a run, `diagnose`, `resume`,
/// `summary`, `--list-models`, ...) on the models of registry() (app/models.hpp). Sets
/// up and tears down MPI and Kokkos; returns the exit code (docs/cli.md#exit-codes).
int main(int argc, char** argv);

}  // namespace hmc::app
