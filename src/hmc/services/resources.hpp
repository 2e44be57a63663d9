#pragma once
/// \file
/// \brief What a run will need, checked before anything is allocated or written:
/// memory per rank (device and host) and disk for the results
/// (docs/clusters.md#memory, docs/output.md#disk-space).

#include "hmc/core/draw_source.hpp"
#include "hmc/core/sizes.hpp"
#include "hmc/io/draw_writer.hpp"
#include "hmc/io/run_config.hpp"
#include "hmc/parallel/mpi_context.hpp"

#include <cstdint>
#include <string>

namespace hmc::services {

/// \brief The sizes of a model that drive memory: unconstrained coordinates, recorded
/// parameters, per-particle scratch doubles, and the bytes its data takes on the device
/// (io::data_bytes).
struct ModelShape {
  std::int64_t dim = 0;
  std::int64_t num_params = 0;
  std::int64_t scratch = 0;
  std::int64_t data_bytes = 0;
  /// Elements of the model's observed data where it has a log_likelihood member (the values
  /// /output/log_likelihood records per draw); -1: no such member.
  std::int64_t observed = -1;
  /// The same where it has a posterior_predictive member; -1: none.
  std::int64_t predicted = -1;
  /// Values of its generated quantities per draw; -1: no such member.
  std::int64_t generated = -1;
};

/// \brief Values per draw of the further groups the run records (/output/log_likelihood,
/// /output/posterior_predictive, /output/generated_quantities).
std::int64_t group_columns(const io::RunConfig& run, const ModelShape& shape);

/// \brief Values recorded per draw: parameters, the kernel's statistics and the further groups.
std::int64_t recorded_columns(const io::RunConfig& run, const ModelShape& shape);

/// \brief Estimated peak bytes of one rank: `device` (the sampler's views: state, model
/// scratch, the block of recorded draws), `host` (the host copy of a block and, on rank
/// 0, the gathered block, the checkpoint rows and the diagnostics' working arrays). On a
/// host backend device and host are the same memory; `host` then includes `device`.
struct MemoryEstimate {
  std::int64_t device = 0;
  std::int64_t host = 0;
};

/// \brief The estimate for a rank holding the most particles of a run of `ranks` ranks:
/// rank 0 (`root`, which also gathers, checkpoints and summarises) or any other.
MemoryEstimate estimate_memory(const io::RunConfig& run, const ModelShape& shape, int ranks, bool root = true);

/// \brief Physical memory this process may use: the smaller of the machine's and the
/// cgroup's limit (Slurm's --mem); 0 if unknown.
std::int64_t host_memory_bytes();

/// \brief Refuses (ConfigError naming /sampler/particles, the need and the memory) a
/// run whose estimate exceeds the host's memory shared by `ranks_on_node` ranks, or the
/// device's memory. Rank 0 only.
void check_memory(const io::RunConfig& run, const ModelShape& shape, int ranks, int ranks_on_node);

/// \brief Ranks of this job on the calling rank's node (collective).
int ranks_on_node(const parallel::MpiContext& mpi);

/// \brief Upper bound of the bytes a run writes at its peak: the block store of `layout`,
/// the draw files of /output/formats (each writer's size_estimate), a checkpoint and
/// the other result files.
std::int64_t estimate_output_bytes(const io::RunConfig& run, const hmc::StoreLayout& layout, const ModelShape& shape,
                                   const io::DrawFormats& formats);

/// \brief Free bytes on the file system holding `dir` (or its nearest existing parent);
/// the test hook HMC_TEST_FREE_BYTES=N overrides it. -1 if unknown.
std::int64_t free_disk_bytes(const std::string& dir);

/// \brief Human-readable size: "512 MiB", "1.5 GiB".
std::string format_bytes(std::int64_t bytes);

}  // namespace hmc::services
