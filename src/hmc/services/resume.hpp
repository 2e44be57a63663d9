#pragma once
/// \file
/// \brief `hmc resume DIR`: a run stopped by a signal (or killed) goes on from its last
/// checkpoint, bit for bit as if uninterrupted, on any number of ranks.
///
/// resume_spec() finds the run and reloads its spec; services::sample then runs it as
/// `hmc --config` would, except that Session::open() reloads the checkpoint
/// (read_checkpoint() below) instead of starting afresh. The checkpoint's header is
/// written and read here, in one place (checkpoint_header(), read_checkpoint()).

#include "hmc/core/draw_source.hpp"
#include "hmc/io/tile_store.hpp"
#include "hmc/parallel/mpi_context.hpp"
#include "hmc/sampler/run.hpp"
#include "hmc/services/run_spec.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace hmc::services {

/// \brief Rank 0 finds the stopped run that DIR names (its output or staging directory),
/// reads its run-config.json and reloads its data; every rank gets the spec
/// (collective). Throws RunError or DataError on every rank; RunError when its model is
/// not among `model_names` (this build's).
RunSpec resume_spec(const parallel::MpiContext& mpi, const std::string& dir, Clock::time_point t0,
                    const std::vector<std::string>& model_names);

/// \brief What a checkpoint holds besides the particles' rows.
struct CheckpointState {
  int iteration = 0;
  sampler::LoopState loop;
  std::int64_t flushed_posterior = 0, flushed_warmup = 0;  ///< draws in the store
  double sampling_s = 0.0, store_s = 0.0;                  ///< of the processes so far
};

/// \brief The header of a checkpoint of `spec` (io/checkpoint.hpp stores it with the rows).
nlohmann::json checkpoint_header(const RunSpec& spec, const hmc::StoreLayout& layout, std::int64_t row_width, int ranks,
                                 const CheckpointState& state);

/// \brief The checkpoint of the run `spec` resumes (rank 0): read and checked against this
/// run (format, config and data fingerprint, particles, parameters, state size), and
/// the store opened into `store` once the header matches (so that a mismatch is named by
/// the header, not by a tile), cut back to the draws it had flushed and verified. Returns
/// the rows (all particles) and fills `state`. Throws RunError naming the file.
std::vector<double> read_checkpoint(const RunSpec& spec, const hmc::StoreLayout& layout, int row_width,
                                    std::unique_ptr<io::TileStore>& store, CheckpointState& state);

/// \brief CheckpointState as JSON and back, for the broadcast from rank 0.
nlohmann::json state_json(const CheckpointState& state);
CheckpointState state_from_json(const nlohmann::json& j);

}  // namespace hmc::services
