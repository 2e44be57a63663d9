#pragma once
/// \file
/// \brief How many OpenMP threads each rank runs: the user's number where one is set
/// (OMP_NUM_THREADS, --kokkos-threads), else this rank's share of the cores it may use,
/// so that ranks placed on fewer cores than ranks x threads do not starve each other's
/// spinning barriers (docs/cli.md#threads-per-rank).

#include <string>
#include <vector>

namespace hmc::services {

/// The cores a process may run on.
struct CpuInfo {
  int affinity = 1;  ///< CPUs in this process's affinity mask (sched_getaffinity)
  int online = 1;    ///< CPUs online on the node
  int quota = 0;     ///< whole CPUs of the cgroup's CPU quota (cpu.max; containers), 0 if none
  /// The cores of the node that processes like this one may use: online, capped by the quota.
  int node_cores() const { return quota > 0 && quota < online ? quota : online; }
};

/// This process's CpuInfo, from the kernel.
CpuInfo this_cpu();

/// The threads of one rank, and where the number came from.
struct HostThreads {
  int threads = 1;
  int node_ranks = 1;  ///< ranks on this node (MPI_COMM_TYPE_SHARED)
  CpuInfo cpu;
  std::string source;  ///< "OMP_NUM_THREADS", the Kokkos option, or "cores" (chosen by hmc)
  bool chosen() const { return source == "cores"; }
  /// More threads on this node than it has cores (ranks x threads > node cores).
  bool oversubscribed() const { return static_cast<long>(node_ranks) * threads > cpu.node_cores(); }
  /// One line for the log: the number and why.
  std::string describe() const;
};

/// \brief The threads of a rank: `user` (> 0, from `source`) where the user set them,
/// else min(affinity, max(1, node cores / node ranks)).
HostThreads choose_host_threads(const CpuInfo& cpu, int node_ranks, int user, const std::string& source);

/// \brief The user's thread count: the value of a `--kokkos-threads=N` or
/// `--kokkos-num-threads=N` among `kokkos_args`, else OMP_NUM_THREADS's first number, else
/// 0; `source` names where it came from.
int user_host_threads(const std::vector<char*>& kokkos_args, std::string& source);

/// \brief The choice of this process, kept for the log and run.json.
void set_host_threads(const HostThreads& t);
const HostThreads& host_threads();

}  // namespace hmc::services
