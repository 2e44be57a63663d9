#pragma once
/// \file
/// \brief hmc's command line as a library: an `hmc` executable is `main` calling
/// `hmc::app::main` with its models (apps/hmc/main.cpp: the shipped ones; an executable
/// of hmc_add_executable: the shipped ones and the user's, cmake/hmcAddExecutable.cmake).

#include "hmc/app/models.hpp"

#include <vector>

namespace hmc::app {

/// \brief Parses the command line and runs the subcommand (a run, `diagnose`, `resume`,
/// `summary`, `--list-models`, ...) on `models` followed by registered_models(). Sets up
/// and tears down MPI and Kokkos; returns the exit code (docs/cli.md#exit-codes).
int main(int argc, char** argv, std::vector<ModelEntry> models);

}  // namespace hmc::app
