#pragma once
/// \file
/// \brief `hmc --config run.json [--set ...]`: from the command line to a RunSpec on every
/// rank. Rank 0 reads the config file, applies the overrides, validates every key
/// against the schema of this build (io::Catalog: its models and draw formats) and
/// loads the data; then the spec travels to the other ranks in one broadcast. The checks
/// that need the model follow once it is built (services/prepare.hpp).

#include "hmc/io/config.hpp"
#include "hmc/parallel/mpi_context.hpp"
#include "hmc/services/run_spec.hpp"

#include <string>
#include <vector>

namespace hmc::services {

/// \brief What the command line asks of a run.
struct Request {
  std::string config;             ///< --config FILE
  std::vector<std::string> sets;  ///< --set key.path=value, in order
  bool overwrite = false;         ///< --overwrite
  bool validate = false;          ///< --validate
  std::vector<std::string> command_line;
  Clock::time_point t0 = Clock::now();  ///< process start
};

/// \brief The spec of `request` on every rank (collective). Throws ConfigError or
/// DataError on every rank (rank 0's message).
RunSpec resolve(const parallel::MpiContext& mpi, const Request& request, const io::Catalog& catalog);

/// \brief The current time as ISO 8601 UTC ("2026-12-03T08:00:00Z"): a run's start.
std::string utc_now();

}  // namespace hmc::services
