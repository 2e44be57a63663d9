#pragma once
/// \file
/// \brief What the sampler hands to the rest of the program, on the host: the result
/// of warmup and the recorded draws, one block at a time.
///
/// These are plain host types, so that parallel (gathers), io (stores, files) and
/// diagnostics can use them without including the sampler's kernels.

#include "hmc/core/modes.hpp"
#include "hmc/core/types.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace hmc {

/// \brief What the warmup's checks found and repaired (sampler/health.hpp), over all ranks.
struct WarmupRepairs {
  int checks = 0;              ///< checks made
  std::int64_t stuck = 0;      ///< particles found stuck (acceptance average below 0.05), summed over checks
  std::int64_t far = 0;        ///< particles found far from the ensemble, summed over checks
  std::int64_t restarted = 0;  ///< restarts
  std::int64_t failed = 0;     ///< restarts that found no finite log density
  int skipped_checks = 0;      ///< checks that found most particles flagged, and restarted none
};

/// \brief What warmup settled on (identical on every rank).
struct Adapted {
  std::string algorithm = "hmc";  ///< /sampler/algorithm
  double step_size = 0.0;
  MetricKind metric = MetricKind::kUnit;
  std::vector<double> inv_metric;                      ///< diag: d values; dense: d×d row-major
  TrajectoryKind trajectory = TrajectoryKind::kFixed;  ///< hmc
  double trajectory_length = 0.0;                      ///< hmc with ChEES: adapted length (steps are jittered up to it)
  int leapfrog_steps = 0;                              ///< hmc: fixed steps
  /// What a kernel's own adaptation settled on, by name (summary.json's "adaptation").
  std::vector<std::pair<std::string, double>> values;
  WarmupRepairs repairs;
};

/// \brief One block of recorded draws, handed over by the sampler on the host.
///
/// The Views are the sampler's reusable host buffers, [local particle][slot][param] and
/// [local particle][slot][statistic] (the kernel's columns, StoreLayout::stats), in the
/// layout of DrawView (core/types.hpp; on the host, the sampler's own buffers); only
/// slots [0, count) are valid, and only until the next iteration.
struct DrawBlock {
  using HostDraws = Kokkos::View<double***, Kokkos::LayoutLeft, Kokkos::HostSpace>;
  bool warmup = false;          ///< warmup draws (with save_warmup) or post-warmup draws
  std::int64_t first_draw = 0;  ///< index of slot 0 among the section's recorded draws
  int count = 0;                ///< filled slots
  HostDraws draws;
  HostDraws stats;
  HostDraws groups;  ///< [local particle][slot][value] of the layout's further groups (log_likelihood), if any
};

}  // namespace hmc
