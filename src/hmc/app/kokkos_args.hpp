#pragma once
/// \file
/// \brief The `--kokkos-*` options of the command line, checked before Kokkos sees them
/// (Kokkos aborts with a backtrace on a malformed value).

#include <string>
#include <vector>

namespace hmc::app {

/// \brief Checks one `--kokkos-*` argument; returns the error, or "" when it is fine.
std::string check_kokkos_option(const std::string& arg);

/// \brief The command line cut in two: Kokkos sees only its own `--kokkos-*` options
/// (else it answers --help itself), hmc's parser the others; both start with argv[0].
struct SplitArguments {
  std::vector<char*> kokkos, hmc;  ///< argv-style, without the terminating null
  bool kokkos_help = false;        ///< --kokkos-help or --kokkos-tools-help: Kokkos prints and hmc ends
  std::string error;               ///< the first malformed --kokkos-* option's error, or ""
};
SplitArguments split_arguments(int argc, char** argv);

}  // namespace hmc::app
