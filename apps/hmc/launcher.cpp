/// \file
/// \brief `hmc` of a portable build: runs hmc-LEVEL (libexec/hmc), the executable of the
/// highest x86-64 level of the build that this CPU runs, or of the level HMC_ARCH names,
/// with the same arguments and environment.
///
/// It is compiled for the lowest level and uses neither Kokkos nor MPI: it replaces itself
/// (execv) before anything starts, so under mpirun each rank is the same process, and
/// the level's executable then reports its level (the log, run.json's "arch"). Exit codes:
/// 2 when HMC_ARCH names a level that is not built or that this CPU lacks, or when no
/// level of the build runs on this CPU; 1 when the level's executable cannot be run.

#include "hmc/core/arch.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

namespace {

/// The folder of this executable, symbolic links resolved ("" if unknown).
std::string own_folder() {
  std::vector<char> path(4096);
  const ssize_t n = readlink("/proc/self/exe", path.data(), path.size() - 1);
  if (n <= 0) return "";
  const std::string exe(path.data(), static_cast<std::size_t>(n));
  return exe.substr(0, exe.rfind('/'));
}

}  // namespace

int main(int argc, char** argv) {
  (void)argc;
  const auto built = hmc::arch::split_list(HMC_ARCH_BUILT);
  const int cpu_level = hmc::arch::level_of(hmc::arch::detect());
  const hmc::arch::Choice choice = hmc::arch::choose(cpu_level, built, std::getenv("HMC_ARCH"));
  if (!choice.error.empty()) {
    std::cerr << "hmc: config error: " << choice.error << "\n";
    return 2;
  }
  const std::string folder = own_folder();
  if (folder.empty()) {
    std::cerr << "hmc: cannot find this executable's folder (/proc/self/exe): " << std::strerror(errno) << "\n";
    return 1;
  }
  const std::string exe = folder + "/" + HMC_LEVELS_FROM_BIN + "/hmc-" + choice.level;
  execv(exe.c_str(), argv);
  std::cerr << "hmc: cannot run " << exe << ": " << std::strerror(errno) << "\n";
  return 1;
}
