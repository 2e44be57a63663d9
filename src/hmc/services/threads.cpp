#include "hmc/services/threads.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

namespace hmc::services {

namespace {

HostThreads g_threads;

/// Whole CPUs of the cgroup's quota: cgroup v2 cpu.max ("QUOTA PERIOD" or "max PERIOD"),
/// else v1's cfs_quota_us / cfs_period_us; 0 when there is none.
int cgroup_quota() {
  double quota = -1.0, period = 0.0;
  if (std::ifstream v2("/sys/fs/cgroup/cpu.max"); v2) {
    std::string q;
    if (v2 >> q >> period && q != "max") quota = std::atof(q.c_str());
  } else {
    std::ifstream q("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"), p("/sys/fs/cgroup/cpu/cpu.cfs_period_us");
    if (!(q >> quota && p >> period)) quota = -1.0;
  }
  if (quota <= 0.0 || period <= 0.0) return 0;
  return std::max(1, static_cast<int>(std::ceil(quota / period)));
}

/// A whole decimal number in 1..4096 at the start of `s` (OMP_NUM_THREADS may list a
/// number per nesting level: "4,2"), else 0.
int leading_count(const char* s) {
  if (s == nullptr) return 0;
  char* end = nullptr;
  const long n = std::strtol(s, &end, 10);
  if (end == s || (*end != '\0' && *end != ',') || n < 1 || n > 4096) return 0;
  return static_cast<int>(n);
}

}  // namespace

CpuInfo this_cpu() {
  CpuInfo c;
  cpu_set_t set;
  CPU_ZERO(&set);
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  c.online = online > 0 ? static_cast<int>(online) : 1;
  c.affinity = sched_getaffinity(0, sizeof set, &set) == 0 ? std::max(1, CPU_COUNT(&set)) : c.online;
  c.quota = cgroup_quota();
  return c;
}

std::string HostThreads::describe() const {
  std::string s = std::to_string(threads) + " thread(s) per rank";
  if (chosen()) {
    s += " (chosen: " + std::to_string(cpu.affinity) + " CPU(s) in this rank's affinity mask, " +
         std::to_string(cpu.node_cores()) + " core(s) on the node for " + std::to_string(node_ranks) +
         " rank(s); set OMP_NUM_THREADS to choose)";
  } else {
    s += " (set by " + source + ")";
  }
  return s;
}

HostThreads choose_host_threads(const CpuInfo& cpu, int node_ranks, int user, const std::string& source) {
  HostThreads t;
  t.cpu = cpu;
  t.node_ranks = std::max(1, node_ranks);
  if (user > 0) {
    t.threads = user;
    t.source = source;
    return t;
  }
  t.threads = std::max(1, std::min(cpu.affinity, cpu.node_cores() / t.node_ranks));
  t.source = "cores";
  return t;
}

int user_host_threads(const std::vector<char*>& kokkos_args, std::string& source) {
  for (const char* arg : kokkos_args) {
    if (arg == nullptr) continue;
    for (const char* name : {"--kokkos-threads=", "--kokkos-num-threads="}) {
      const std::size_t n = std::strlen(name);
      if (std::strncmp(arg, name, n) == 0) {
        if (const int v = leading_count(arg + n); v > 0) {
          source = std::string(name, n - 1);
          return v;
        }
      }
    }
  }
  for (const char* env : {"OMP_NUM_THREADS", "KOKKOS_NUM_THREADS"}) {
    if (const int v = leading_count(std::getenv(env)); v > 0) {
      source = env;
      return v;
    }
  }
  return 0;
}

void set_host_threads(const HostThreads& t) { g_threads = t; }

const HostThreads& host_threads() { return g_threads; }

}  // namespace hmc::services
