#pragma once
/// \file
/// \brief What a run is: its resolved config (as JSON for the files that record it, and
/// typed), its data, and how it was started. services::resolve makes one for
/// `hmc --config`, services::resume_spec for `hmc resume`; every rank holds the same.

#include "hmc/io/run_config.hpp"
#include "hmc/parallel/mpi_context.hpp"
#include "hmc/services/staging.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <string>
#include <vector>

namespace hmc::services {

using Clock = std::chrono::steady_clock;

struct RunSpec {
  nlohmann::json config;  ///< resolved (io::resolve_config): what run.json, draws.nc and checkpoints record
  nlohmann::json data;    ///< the model's data, or null
  io::RunConfig run;      ///< `config`, typed (io::run_config); what the run reads
  std::vector<std::string> command_line;
  std::string started_utc;
  bool overwrite = false;      ///< replace existing results (--overwrite)
  bool resume = false;         ///< continue the checkpointed run in `paths`
  bool validate_only = false;  ///< --validate: check everything, print the resolved config, run nothing
  OutputPaths paths;
  Clock::time_point t0 = Clock::now();  ///< process start
};

/// \brief The spec as run-config.json holds it, without the data: config, command line,
/// start time, --overwrite and the output directory (plus `config_bytes`, the exact
/// config as hex of its CBOR, when the config holds strings that are not UTF-8).
nlohmann::json spec_json(const RunSpec& spec);

/// \brief The inverse of spec_json (the data and t0 are not part of it; `run` is filled
/// from the config). Throws RunError naming `where` when `j` is not such a record.
RunSpec spec_from_json(const nlohmann::json& j, const std::string& where);

/// \brief Rank 0's spec on every rank (collective): the config, its data and how the
/// run was started travel as one CBOR message; `t0` stays each rank's own.
RunSpec broadcast_spec(const parallel::MpiContext& mpi, const RunSpec& spec);

}  // namespace hmc::services
