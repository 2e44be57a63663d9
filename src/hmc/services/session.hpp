#pragma once
/// \file
/// \brief The model-independent parts of a run, which services/sample.hpp's loop calls
/// (as Stan's services call their writers and loggers):
///  - RunFrame: signal handlers, the rank watchdog, what an aborted job removes, and the
///    one way a failed run ends (its line, its exit code, its staging directory);
///  - Session: the staging directory and the draw store. `open()` prepares them, or
///    reloads the checkpoint of a run being resumed (services/resume.hpp); `write_block()`
///    gathers a block of draws to rank 0 and appends it to the store (io/tile_store.hpp),
///    so memory holds one block, not the run; `checkpoint()` saves everything needed to
///    continue bit for bit; `stop_requested()` tells every rank whether any rank received
///    SIGTERM, SIGINT or SIGUSR1; `finish()` computes the diagnostics from the store,
///    writes the draws through the draw writers of /output/formats (io/draw_writer.hpp),
///    particles.csv, summary.json and run.json, and publishes the staging directory.
/// Every member function is collective unless it says otherwise.

#include "hmc/core/draw_source.hpp"
#include "hmc/core/draws.hpp"
#include "hmc/io/draw_writer.hpp"
#include "hmc/io/tile_store.hpp"
#include "hmc/parallel/decomposition.hpp"
#include "hmc/parallel/mpi_context.hpp"
#include "hmc/sampler/run.hpp"
#include "hmc/services/run_spec.hpp"

#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace hmc::services {

/// \brief The job around one run, for its lifetime: installs the signal handlers, starts
/// the rank watchdog (/run/rank_timeout_s) and tells MPI aborts to remove a staging
/// directory that holds no checkpoint; stops the watchdog at a normal end (an exception
/// that leaves the run keeps it, for MpiContext::fail in main).
class RunFrame {
 public:
  RunFrame(const parallel::MpiContext& mpi, const RunSpec& spec);
  ~RunFrame();
  RunFrame(const RunFrame&) = delete;
  RunFrame& operator=(const RunFrame&) = delete;

  /// \brief How a run ends on the hmc error `e` (raised on every rank): its line on rank
  /// 0 and its exit code (services/collective.hpp's report). The staging directory is
  /// removed unless the run is being resumed or holds a checkpoint worth resuming: a
  /// config or data error leaves it as it was (it may be another run's), a run error
  /// removes it unless `checkpointed` — and a diverged adaptation even then, as resuming
  /// would diverge the same way.
  int failed(const std::exception& e, bool checkpointed) const;

  /// \brief Removes the staging directory (rank 0; solo work for the watchdog).
  void discard() const;

 private:
  const parallel::MpiContext& mpi_;
  const RunSpec& spec_;
};

/// \brief A checkpoint being resumed: this rank's particle rows and the loop state.
struct Resumed {
  std::vector<double> rows;
  sampler::LoopState loop;
};

class Session {
 public:
  /// `layout`: what the store holds (services::store_layout); `formats`: the draw formats
  /// /output/formats may name.
  Session(const parallel::MpiContext& mpi, const RunSpec& spec, hmc::StoreLayout layout, const io::DrawFormats& formats,
          std::vector<hmc::DataArray> data = {});
  ~Session();

  const parallel::MpiContext& mpi() const { return mpi_; }
  const RunSpec& spec() const { return spec_; }
  /// The sampler's settings: the config's, with the block size (RunConfig::block_draws).
  const sampler::Settings& settings() const { return settings_; }
  const parallel::Decomposition& decomposition() const { return dec_; }
  /// Does a checkpoint exist (so that a failure keeps the staging directory)?
  bool checkpointed() const { return checkpointed_; }

  /// \brief Staging and store for a fresh run, or the checkpoint of a resumed one
  /// (checked against this run: model, particles, config and data fingerprint).
  std::optional<Resumed> open(int row_width);

  /// \brief After initialise(): `failed` local particles found no finite start; throws
  /// sampler::InitError on every rank if any rank had one.
  void agree_init(long long failed);

  /// \brief Rank 0's progress lines (empty elsewhere); starts the loop's clock.
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
  int finish(const hmc::Adapted& adapted, const std::vector<double>& accept_sum, const std::vector<double>& divergences,
             std::int64_t grad_evals);

 private:
  /// The attributes draw formats with metadata record (draws.nc's).
  io::WriterOptions writer_options() const;

  const parallel::MpiContext& mpi_;
  const RunSpec& spec_;
  const io::DrawFormats& formats_;
  sampler::Settings settings_;
  parallel::Decomposition dec_;
  hmc::StoreLayout layout_;
  std::vector<hmc::DataArray> data_;      ///< observed_data and constant_data for draws.nc
  std::unique_ptr<io::TileStore> store_;  ///< rank 0
  bool checkpointed_ = false;             ///< a checkpoint exists: keep the staging directory on failure
  int signal_ = 0;
  int debug_signal_at_ = 0, debug_signal_rank_ = -1, debug_signal_ = 0;  ///< HMC_TEST_SIGNAL (-1: hang)
  std::string note_;
  double setup_s_ = 0.0;
  Clock::time_point loop_start_ = Clock::now();
  double store_s_ = 0.0;              ///< this process: handing blocks over and checkpoints
  double previous_sampling_s_ = 0.0;  ///< from the checkpoints of earlier processes
  double previous_store_s_ = 0.0;
  std::vector<double> column_buffer_, tile_buffer_;  ///< write_block's, reused across blocks
};

}  // namespace hmc::services
