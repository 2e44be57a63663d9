#pragma once
/// \file
/// \brief One sampling run from resolved config to published results: the services
/// layer (as Stan's services/sample/*).
///
/// `sample()` is the run. Its model-typed middle, the sampling loop
/// (services/run_model.hpp), is instantiated per model by models/registry.cpp and
/// talks to the rest through a Session:
///  - `plan()` fixes the store layout and the block size;
///  - `open()` prepares the staging directory and the draw store, or loads the
///    checkpoint of a run being resumed;
///  - `write_block()` hands a block of draws over: gathered to rank 0 and appended to
///    the store (io/tile_store.hpp), so memory holds one block, not the run;
///  - `checkpoint()` saves everything needed to continue bit for bit;
///  - `stop_requested()` tells every rank whether any rank received SIGTERM, SIGINT
///    or SIGUSR1;
///  - `finish()` computes the diagnostics from the store, writes the result files
///    (writers: netCDF, CSV, particles.csv, summary.json, run.json) and publishes
///    the staging directory.
/// Every member function is collective unless it says otherwise.

#include "hmc/core/draw_source.hpp"
#include "hmc/io/tile_store.hpp"
#include "hmc/parallel/decomposition.hpp"
#include "hmc/parallel/mpi_context.hpp"
#include "hmc/sampler/run.hpp"
#include "hmc/services/staging.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace hmc::services {

using Clock = std::chrono::steady_clock;

/// \brief What the front end hands to a run.
struct RunSpec {
  nlohmann::json config;  ///< resolved (io::resolve_config)
  nlohmann::json data;    ///< the model's data, or null
  std::vector<std::string> command_line;
  std::string started_utc;
  bool overwrite = false;  ///< replace existing results (--overwrite)
  bool resume = false;     ///< continue the checkpointed run in `paths`
  OutputPaths paths;
  Clock::time_point t0 = Clock::now();  ///< process start
};

/// \brief Reads the spec of the checkpointed run in `paths` (its run-config.json) and
/// reloads its data. Rank 0 only. Throws RunError/DataError.
RunSpec load_resume_spec(const OutputPaths& paths);

/// \brief A checkpoint being resumed: this rank's particle rows and the loop state.
struct Resumed {
  std::vector<double> rows;
  sampler::LoopState loop;
};

class Session;

/// \brief The model-typed part of a run (registry): builds the model from the spec and
/// runs the loop; returns the exit code.
using ModelRunner = std::function<int(Session&)>;

/// \brief The whole run; returns the process exit code (0, 2, 3, 4 or 75) on every rank.
int sample(const parallel::MpiContext& mpi, const RunSpec& spec, const ModelRunner& runner);

class Session {
 public:
  Session(const parallel::MpiContext& mpi, const RunSpec& spec);
  ~Session();

  const parallel::MpiContext& mpi() const { return mpi_; }
  const RunSpec& spec() const { return spec_; }
  const sampler::Settings& settings() const { return settings_; }
  const parallel::Decomposition& decomposition() const { return dec_; }

  /// \brief The run's store layout; sets settings().block_draws (draws per particle in
  /// one block), so it comes before the sampler is built. Not collective.
  void plan(hmc::StoreLayout layout);

  /// \brief Staging and store for a fresh run, or the checkpoint of a resumed one
  /// (checked against this run: model, particles, config and data fingerprint).
  std::optional<Resumed> open(int row_width);

  /// \brief After initialise(): `failed` local particles found no finite start; throws
  /// sampler::InitError on every rank if any rank had one.
  void agree_init(long long failed, const std::string& model_name);

  /// \brief Rank 0's progress lines (empty elsewhere).
  sampler::ProgressCallback progress(int first_iteration);
  /// \brief Seconds since the sampling loop started.
  double elapsed() const;

  void write_block(const hmc::DrawBlock& block);
  /// \brief Has any rank received a stop signal? (Checked after every iteration.)
  bool stop_requested(int iteration);
  bool checkpoint_due(int iteration) const;
  void checkpoint(int iteration, const std::vector<double>& rows, const sampler::LoopState& loop);
  /// \brief Logs the stop and returns kExitInterrupted (the checkpoint is written).
  int interrupted(int iteration);

  /// \brief What the model wants a reader of the results to know (a warning line).
  void set_note(std::string note) { note_ = std::move(note); }

  /// \brief Diagnostics, result files, publishing; returns the exit code.
  int finish(const hmc::Adapted& adapted, const std::vector<double>& accept_sum,
             const std::vector<double>& divergences, std::int64_t grad_evals);

 private:
  const parallel::MpiContext& mpi_;
  RunSpec spec_;
  sampler::Settings settings_;
  parallel::Decomposition dec_;
  hmc::StoreLayout layout_;
  std::unique_ptr<io::TileStore> store_;  ///< rank 0
  int checkpoint_every_ = 0;
  bool checkpointed_ = false;  ///< a checkpoint exists: keep the staging directory on failure
  int signal_ = 0;
  int debug_signal_at_ = 0, debug_signal_rank_ = -1, debug_signal_ = 0;  ///< HMC_TEST_SIGNAL (-1: hang)
  std::string note_;
  double setup_s_ = 0.0;
  Clock::time_point loop_start_ = Clock::now();
  double store_s_ = 0.0;            ///< this process: handing blocks over and checkpoints
  double previous_sampling_s_ = 0.0;  ///< from the checkpoints of earlier processes
  double previous_store_s_ = 0.0;
  std::vector<double> column_buffer_, tile_buffer_;  ///< write_block's, reused across blocks
  friend int sample(const parallel::MpiContext&, const RunSpec&, const ModelRunner&);
};

/// \brief Draws per particle in one block: /output/flush_every, or (0) as many as
/// keep a gathered block near 32 MiB.
int block_draws(const nlohmann::json& config, std::int64_t particles, int params);

}  // namespace hmc::services
