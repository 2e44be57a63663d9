#include "hmc/services/resources.hpp"

#include "hmc/core/errors.hpp"
#include "hmc/core/kokkos_shim.hpp"
#include "hmc/io/variables.hpp"
#include "hmc/sampler/adaptation.hpp"
#include "hmc/sampler/kernels.hpp"

#include <mpi.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <tuple>

namespace hmc::services {

namespace fs = std::filesystem;
namespace {

/// Libraries, Kokkos and MPI buffers: measured ~60 MB RSS for a tiny run.
constexpr std::int64_t kBaseBytes = std::int64_t{64} << 20;
/// The diagnostics and writers read the store back in slices of about this size, a
/// few arrays of it at once (services/session.cpp, diagnostics/summary.cpp).
constexpr std::int64_t kSliceBytes = std::int64_t{32} << 20;

// Per-particle columns of the metric's window state, where warmup adapts one (checkpoint rows).
std::int64_t metric_columns(const io::RunConfig& run, std::int64_t dim) {
  const auto& s = run.sampler;
  if (!(s.adapt.enabled && s.warmup > 0)) return 0;
  const std::int64_t d = std::min<std::int64_t>(dim, std::numeric_limits<int>::max() / (4 * sampler::kMetricSnapshots));
  return sampler::metric_state_columns(s.adapt.metric, static_cast<int>(d));
}

}  // namespace

std::int64_t group_columns(const io::RunConfig& run, const ModelShape& shape) {
  const auto& s = run.sampler;
  std::int64_t n = 0;
  if (s.log_likelihood) n = add_sat(n, std::max<std::int64_t>(0, shape.observed));
  if (s.posterior_predictive) n = add_sat(n, std::max<std::int64_t>(0, shape.predicted));
  if (s.generated_quantities) n = add_sat(n, std::max<std::int64_t>(0, shape.generated));
  return n;
}

std::int64_t recorded_columns(const io::RunConfig& run, const ModelShape& shape) {
  const std::int64_t stats =
      static_cast<std::int64_t>(sampler::kernel_info(run.sampler, static_cast<int>(shape.dim)).stats.size());
  return add_sat(add_sat(shape.num_params, stats), group_columns(run, shape));
}

MemoryEstimate estimate_memory(const io::RunConfig& run, const ModelShape& shape, int ranks, bool root) {
  const std::int64_t particles = run.sampler.particles;
  const std::int64_t local = (particles + ranks - 1) / std::max(1, ranks);
  const sampler::KernelInfo kernel = sampler::kernel_info(run.sampler, static_cast<int>(shape.dim));
  const std::int64_t dim = shape.dim, columns = recorded_columns(run, shape);
  const std::int64_t capacity = run.block_draws(columns);
  const bool dense = matrix_metric(run.sampler.adapt.metric);

  // Doubles per local particle on the device: q, grad; the kernel's scratch (hmc: the
  // trajectory's start and momentum; nuts: edges, sums and U-turn checkpoints); the
  // model's scratch; the metric's window state (sums or snapshots) and, for a matrix
  // metric, the covariance terms at a window's end; scalars; the recorded block
  // (parameters and statistics).
  std::int64_t per = add_sat(add_sat(mul_sat(2, dim), kernel.scratch_size), shape.scratch);
  const std::int64_t window = metric_columns(run, dim);
  per = add_sat(per, add_sat(window, dense ? mul_sat(dim, dim + 3) / 2 : 0));
  per = add_sat(per, 12);
  per = add_sat(per, mul_sat(capacity, columns));
  MemoryEstimate e;
  e.device = add_sat(mul_sat(mul_sat(local, per), 8), shape.data_bytes);

  // Host: the host copy of a block, and on rank 0 the gathered block (all particles),
  // one column buffer, the gathered checkpoint rows (twice: gather and file image), and
  // the slices the diagnostics and writers read back.
  std::int64_t host = mul_sat(mul_sat(local, mul_sat(capacity, columns)), 8);
  host = add_sat(host, mul_sat(mul_sat(local, capacity), 8));
  if (root) {
    host = add_sat(host, mul_sat(mul_sat(particles, mul_sat(capacity, columns)), 8));
    host = add_sat(host, mul_sat(mul_sat(particles, add_sat(add_sat(mul_sat(2, dim), 8), window)), 16));
    host = add_sat(host, mul_sat(6, kSliceBytes));
  }
  host = add_sat(host, kBaseBytes);
  e.host = device_is_host_memory() ? add_sat(host, e.device) : host;
  return e;
}

std::int64_t host_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  std::int64_t total = pages > 0 && page > 0 ? static_cast<std::int64_t>(pages) * page : 0;
  // cgroup v2, then v1: a batch system's memory limit for this job.
  for (const char* path : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    std::ifstream in(path);
    std::string text;
    if (!(in >> text) || text == "max") continue;
    char* end = nullptr;
    const long long limit = std::strtoll(text.c_str(), &end, 10);
    if (end && *end == '\0' && limit > 0 && (total == 0 || limit < total)) total = limit;
  }
  return total;
}

void check_memory(const io::RunConfig& run, const ModelShape& shape, int ranks, int ranks_on_node) {
  const MemoryEstimate e = estimate_memory(run, shape, ranks);
  const std::int64_t particles = run.sampler.particles;
  // The further groups by name, where the run records any: often the largest part of a block.
  std::string groups, keys;
  const auto& sm = run.sampler;
  for (const auto& [wanted, n, name] : {std::tuple{sm.log_likelihood, shape.observed, "log_likelihood"},
                                        std::tuple{sm.posterior_predictive, shape.predicted, "posterior_predictive"},
                                        std::tuple{sm.generated_quantities, shape.generated, "generated_quantities"}}) {
    if (!wanted || n <= 0) continue;
    groups += (groups.empty() ? "" : " + ") + std::to_string(n) + " " + name;
    keys += (keys.empty() ? "/output/" : ", /output/") + std::string(name);
  }
  const std::string what =
      "/sampler/particles " + std::to_string(particles) + " on " + std::to_string(ranks) + " rank(s), " +
      std::to_string(shape.dim) + " coordinates each, " +
      (groups.empty() ? std::string() : groups + " values per draw (" + keys + " false records none), ") +
      "blocks of " + std::to_string(run.block_draws(recorded_columns(run, shape))) + " draws (/output/flush_every),";
  const std::int64_t device = device_memory_bytes();
  if (device > 0 && e.device > device) {
    throw ConfigError("config error: " + what + " need about " + format_bytes(e.device) +
                      " of device memory per rank; the device has " + format_bytes(device) +
                      " (use more ranks or fewer particles; docs/clusters.md#memory)");
  }
  const std::int64_t host = host_memory_bytes();
  // Rank 0's node: rank 0 and its neighbours, which hold only their own particles.
  const std::int64_t node =
      add_sat(e.host, mul_sat(estimate_memory(run, shape, ranks, false).host, std::max(0, ranks_on_node - 1)));
  if (host > 0 && node > host) {
    throw ConfigError("config error: " + what + " need about " + format_bytes(e.host) + " of memory on rank 0" +
                      (ranks_on_node > 1 ? " (" + format_bytes(node) + " for the " + std::to_string(ranks_on_node) +
                                               " ranks on this node)"
                                         : std::string()) +
                      "; this host has " + format_bytes(host) + " (docs/clusters.md#memory)");
  }
}

int ranks_on_node(const parallel::MpiContext& mpi) {
  MPI_Comm node = MPI_COMM_NULL;
  if (MPI_Comm_split_type(mpi.comm(), MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS) return 1;
  int n = 1;
  MPI_Comm_size(node, &n);
  MPI_Comm_free(&node);
  return n;
}

std::int64_t estimate_output_bytes(const io::RunConfig& run, const hmc::StoreLayout& layout, const ModelShape& shape,
                                   const io::DrawFormats& formats) {
  std::int64_t bytes = io::stored_bytes(layout, 8);  // the block store
  for (const auto& w : io::make_writers(formats, run.output.formats, io::WriterOptions{})) {
    bytes = add_sat(bytes, w->size_estimate(layout));
  }
  const std::int64_t particles = layout.particles;
  const std::int64_t row = add_sat(add_sat(mul_sat(2, shape.dim), 8), metric_columns(run, shape.dim));
  bytes = add_sat(bytes, mul_sat(mul_sat(particles, row), 16));  // checkpoints
  bytes = add_sat(bytes, mul_sat(particles, 200));               // particles.csv, json files
  return bytes;
}

std::int64_t free_disk_bytes(const std::string& dir) {
  if (const char* env = std::getenv("HMC_TEST_FREE_BYTES")) {
    char* end = nullptr;
    const long long v = std::strtoll(env, &end, 10);
    if (end && *end == '\0' && v >= 0) return v;
  }
  std::error_code ec;
  fs::path p = fs::absolute(dir, ec);
  while (!p.empty() && !fs::exists(p, ec)) {
    if (p == p.parent_path()) break;
    p = p.parent_path();
  }
  struct statvfs st {};
  if (p.empty() || ::statvfs(p.c_str(), &st) != 0) return -1;
  return mul_sat(static_cast<std::int64_t>(st.f_bavail), static_cast<std::int64_t>(st.f_frsize));
}

std::string format_bytes(std::int64_t bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 6) v /= 1024.0, ++u;
  char buf[48];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%lld bytes", static_cast<long long>(bytes));
  else
    std::snprintf(buf, sizeof buf, v < 10 ? "%.1f %s" : "%.0f %s", v, units[u]);
  return buf;
}

}  // namespace hmc::services
