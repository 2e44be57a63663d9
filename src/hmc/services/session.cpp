#include "hmc/services/session.hpp"

#include "hmc/core/arch.hpp"
#include "hmc/core/errors.hpp"
#include "hmc/core/kokkos_shim.hpp"
#include "hmc/core/version.hpp"
#include "hmc/diagnostics/summary.hpp"
#include "hmc/io/checkpoint.hpp"
#include "hmc/io/json_text.hpp"
#include "hmc/io/results.hpp"
#include "hmc/parallel/gather.hpp"
#include "hmc/parallel/traffic.hpp"
#include "hmc/parallel/watchdog.hpp"
#include "hmc/services/collective.hpp"
#include "hmc/services/progress.hpp"
#include "hmc/services/resume.hpp"
#include "hmc/services/signals.hpp"
#include "hmc/services/threads.hpp"

#include <spdlog/spdlog.h>
#include <sys/resource.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <iostream>
#include <thread>
#include <utility>

namespace hmc::services {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

/// A function run on a thread of its own from construction; join() waits for it and
/// rethrows what it threw. The destructor waits too (an exception that unwinds past an
/// unjoined task, e.g. a stop signal in the diagnostics, lets it end first).
class BackgroundTask {
 public:
  template <class F>
  explicit BackgroundTask(F&& f)
      : thread_([this, f = std::forward<F>(f)]() mutable {
          try {
            f();
          } catch (...) {
            error_ = std::current_exception();
          }
        }) {}
  BackgroundTask(const BackgroundTask&) = delete;
  BackgroundTask& operator=(const BackgroundTask&) = delete;
  ~BackgroundTask() {
    if (thread_.joinable()) thread_.join();
  }
  void join() {
    if (thread_.joinable()) thread_.join();
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  }

 private:
  std::exception_ptr error_;
  std::thread thread_;  ///< last: starts after error_ exists
};

/// run-config.json's record of the store layout (services/summary.cpp reads it back).
json store_layout_json(const hmc::StoreLayout& l) {
  json dims = json::object();
  for (const auto& [name, d] : l.dim_names) dims[name] = d;
  return {{"particles", l.particles},
          {"param_names", l.param_names},
          {"dim_names", dims},
          {"draws", l.draws},
          {"warmup_draws", l.warmup_draws},
          {"stats", io::stats_json(l.stats)},
          {"groups", io::groups_json(l.groups)}};
}

/// Doubles per rank in the gathered per-rank record: particles, grad_evals, sampling_s,
/// store_s, then calls, bytes and seconds of each parallel::Collective.
constexpr int kPerRankFixed = 4;
constexpr int kPerRankWidth = kPerRankFixed + 3 * parallel::kNumCollectives;

/// Every rank's record to rank 0 (one MPI_Gatherv; rank 0 gets ranks × kPerRankWidth).
std::vector<double> gather_per_rank(const parallel::MpiContext& mpi, std::int64_t particles, std::int64_t grad_evals,
                                    double sampling_s, double store_s, const parallel::Traffic& traffic) {
  std::vector<double> mine{static_cast<double>(particles), static_cast<double>(grad_evals), sampling_s, store_s};
  for (const auto& k : traffic.kinds) {
    mine.insert(mine.end(), {static_cast<double>(k.calls), static_cast<double>(k.bytes), k.seconds});
  }
  // One row per rank: a decomposition of `ranks` rows over `ranks` ranks.
  const parallel::Decomposition one_each{mpi.size(), mpi.size(), mpi.rank()};
  return parallel::gather_rows(mpi, one_each, mine, kPerRankWidth);
}

/// run.json's /per_rank from gather_per_rank's rows (docs/output.md).
json per_rank_json(const std::vector<double>& rows) {
  static const char* const kinds[parallel::kNumCollectives] = {"reduce", "gather", "control"};
  json out = json::array();
  const std::size_t ranks = rows.size() / kPerRankWidth;
  for (std::size_t r = 0; r < ranks; ++r) {
    const double* v = rows.data() + r * kPerRankWidth;
    json mpi = json::object();
    double mpi_s = 0.0;
    for (int k = 0; k < parallel::kNumCollectives; ++k) {
      const double* c = v + kPerRankFixed + 3 * k;
      mpi[kinds[k]] = {
          {"calls", static_cast<std::int64_t>(c[0])}, {"bytes", static_cast<std::int64_t>(c[1])}, {"s", c[2]}};
      mpi_s += c[2];
    }
    mpi["total_s"] = mpi_s;
    out.push_back({{"rank", r},
                   {"particles", static_cast<std::int64_t>(v[0])},
                   {"grad_evals", static_cast<std::int64_t>(v[1])},
                   {"sampling_s", v[2]},
                   {"store_s", v[3]},
                   {"mpi", mpi}});
  }
  return out;
}

/// run.json's /kokkos/host_threads: rank 0's threads and where the number came from.
json threads_json(const HostThreads& t) {
  return {{"threads", t.threads},
          {"source", t.source},
          {"node_ranks", t.node_ranks},
          {"affinity_cpus", t.cpu.affinity},
          {"node_cores", t.cpu.node_cores()}};
}

json run_info(const parallel::MpiContext& mpi, const RunSpec& spec, const hmc::Adapted& adapted,
              const std::vector<double>& per_rank) {
  return {{"hmc", {{"version", hmc::version()}, {"git", hmc::git_hash()}}},
          {"kokkos",
           {{"version", hmc::kokkos_version()},
            {"backends", hmc::kokkos_backends()},
            {"execution_space", hmc::ExecSpace::name()},
            {"concurrency", hmc::ExecSpace().concurrency()},
            {"host_threads", threads_json(host_threads())}}},
          {"mpi", {{"library", hmc::parallel::mpi_library_version()}, {"ranks", mpi.size()}}},
          {"arch", hmc::arch::record_json(hmc::arch::this_build())},
          {"per_rank", per_rank_json(per_rank)},
          {"seed", spec.run.sampler.seed},
          {"started_utc", spec.started_utc},
          {"adaptation", io::adaptation_json(adapted)},
          {"command_line", spec.command_line},
          {"config", spec.config}};
}

/// Peak resident set size of this process so far, MiB.
double peak_rss_mib() {
  struct rusage u {};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // Linux: KiB
}

}  // namespace

// ---- RunFrame ------------------------------------------------------------------

RunFrame::RunFrame(const parallel::MpiContext& mpi, const RunSpec& spec) : mpi_(mpi), spec_(spec) {
  install_signal_handlers();
  // An abort (a hung rank, an error on one rank) removes OUT.partial unless it holds a
  // checkpoint to resume from, as any failed run does.
  mpi.on_abort([paths = spec.paths] {
    std::error_code ec;
    if (!fs::exists(paths.checkpoint(), ec)) services::discard(paths);
  });
  if (!mpi.watch(spec.run.run.rank_timeout_s) && mpi.root()) {
    spdlog::warn("this MPI library does not provide MPI_THREAD_MULTIPLE: /run/rank_timeout_s is ignored");
  }
}

RunFrame::~RunFrame() {
  // A normal end stops the watchdog; an exception that leaves the run keeps it for
  // MpiContext::fail in main, which hands the error to rank 0.
  if (std::uncaught_exceptions() == 0) mpi_.unwatch();
}

void RunFrame::discard() const {
  if (!mpi_.root()) return;
  // Removing a large store can outlast the timeout while the other ranks wait: solo work.
  const parallel::SoloWork solo;
  services::discard(spec_.paths);
}

int RunFrame::failed(const std::exception& e, bool checkpointed) const {
  const int code = report(mpi_, e);
  const bool repeats = dynamic_cast<const sampler::AdaptationError*>(&e) != nullptr;
  if (code == kExitRunError && !spec_.resume && (!checkpointed || repeats)) discard();
  return code;
}

// ---- Session -------------------------------------------------------------------

Session::Session(const parallel::MpiContext& mpi, const RunSpec& spec, hmc::StoreLayout layout,
                 const io::DrawFormats& formats, std::vector<hmc::DataArray> data)
    : mpi_(mpi),
      spec_(spec),
      formats_(formats),
      settings_(spec.run.sampler),
      dec_{spec.run.sampler.particles, mpi.size(), mpi.rank()},
      layout_(std::move(layout)),
      data_(std::move(data)),
      setup_s_(seconds_since(spec.t0)) {
  settings_.block_draws = spec.run.block_draws(layout_.num_columns());
  // Test hook: HMC_TEST_SIGNAL=ITERATION[:RANK[:KILL|STOP|HANG]] makes this process signal
  // itself (SIGTERM, SIGKILL or SIGSTOP) after that iteration, on every rank or on RANK
  // only; HANG: its main thread sleeps for ever there (a rank that stops progressing).
  if (const char* env = std::getenv("HMC_TEST_SIGNAL")) {
    int it = 0, rank = -1;
    char kind[8] = "";
    const int n = std::sscanf(env, "%d:%d:%7s", &it, &rank, kind);
    if (n >= 1 && it > 0) {
      debug_signal_at_ = it;
      debug_signal_rank_ = n >= 2 ? rank : -1;
      const std::string k = kind;
      debug_signal_ = k == "KILL" ? SIGKILL : k == "STOP" ? SIGSTOP : k == "HANG" ? -1 : SIGTERM;
    }
  }
}

Session::~Session() = default;

std::optional<Resumed> Session::open(int row_width) {
  std::vector<double> rows;
  CheckpointState state;
  on_root(mpi_, [&] {
    if (!spec_.resume) {
      prepare_staging(spec_.paths, spec_.overwrite);
      json rc = spec_json(spec_);
      rc["layout"] = store_layout_json(layout_);
      io::write_file_atomic(spec_.paths.run_config(), hmc::dump_text(rc, 2) + "\n");
      store_ = std::make_unique<io::TileStore>(spec_.paths.blocks(), layout_);
      return;
    }
    // A stop signal while the store and the checkpoint are read ends hmc at once: they stay
    // as they are, to be resumed again.
    const ReadingInput reading("the checkpoint");
    rows = read_checkpoint(spec_, layout_, row_width, store_, state);
  });
  // The first log line comes once the output directory (or the checkpoint) has been
  // accepted, so that a refused run prints only its one-line error.
  spdlog::info("hmc {}: model {}, {} particles on {} rank(s) x {} ({}), seed {}", hmc::version(), spec_.run.model,
               settings_.particles, mpi_.size(), hmc::ExecSpace::name(), hmc::ExecSpace().concurrency(),
               settings_.seed);
  if (mpi_.root()) {
    const HostThreads& threads = host_threads();
    spdlog::info("{}", threads.describe());
    if (threads.oversubscribed()) {
      spdlog::warn(
          "{} rank(s) x {} thread(s) exceed the {} core(s) of this node, so they wait on each other: {} "
          "(docs/cli.md#threads-per-rank)",
          threads.node_ranks, threads.threads, threads.cpu.node_cores(),
          threads.chosen() ? "place at most one rank per core"
                           : "lower " + threads.source + ", or unset it to let hmc choose");
    }
  }
  spdlog::info("{}", hmc::arch::describe(hmc::arch::this_build()));
  if (!spec_.resume) return std::nullopt;
  checkpointed_ = true;
  state = state_from_json(json::parse(mpi_.broadcast(mpi_.root() ? hmc::dump_text(state_json(state)) : std::string())));
  Resumed r;
  r.rows = parallel::scatter_rows(mpi_, dec_, rows, row_width);
  r.loop = state.loop;
  previous_sampling_s_ = state.sampling_s;
  previous_store_s_ = state.store_s;
  spdlog::info("resuming at iteration {} of {} from {}", r.loop.iteration, settings_.warmup + settings_.draws,
               spec_.paths.checkpoint());
  return r;
}

void Session::agree_init(long long failed) {
  const long long total = mpi_.sum(failed);
  if (total > 0) {
    throw sampler::InitError("model " + spec_.run.model + ": " + std::to_string(total) + " of " +
                             std::to_string(settings_.particles) + " particles found no finite log density in " +
                             std::to_string(settings_.init_attempts) +
                             " draws (try /sampler/init/radius or /sampler/init/values)");
  }
}

sampler::ProgressCallback Session::progress(int first_iteration) {
  loop_start_ = Clock::now();
  // run.json's MPI counters cover the loop (with its block gathers and checkpoints), not
  // the start-up's broadcasts of config and data.
  parallel::reset_traffic();
  if (!mpi_.root()) return {};
  return [first_iteration](const sampler::Progress& p) {
    const int done = p.iteration - first_iteration;
    const double eta = done > 0 ? p.elapsed_s / done * (p.total - p.iteration) : 0.0;
    spdlog::info("{} {:>{}}/{} ({:3.0f}%) | accept {:.3f} | step size {:.3g} | {:.1f} s, ETA {:.1f} s",
                 p.warmup ? "warmup  " : "sampling", p.iteration, std::to_string(p.total).size(), p.total,
                 100.0 * p.iteration / p.total, p.accept_rate, p.step_size, p.elapsed_s, eta);
  };
}

double Session::elapsed() const { return seconds_since(loop_start_); }

void Session::write_block(const hmc::DrawBlock& b) {
  ScopedRegion region("hmc::write_block");
  const auto t = Clock::now();
  const int params = layout_.num_params(), stats = layout_.num_stats(), columns = layout_.num_columns(),
            count = b.count;
  const std::int64_t n = dec_.count(), N = layout_.particles;
  // Value of column c (parameters, the kernel's statistics, the further groups' values) for
  // local particle i, slot d.
  auto value = [&](int c, std::int64_t i, int d) -> double {
    if (c < params) return b.draws(i, d, c);
    if (c < params + stats) return b.stats(i, d, c - params);
    return b.groups(i, d, c - params - stats);
  };
  // The store's tile is [column][particle][draw]: one gather per column, straight into
  // its place in the tile (rank 0 only holds the tile).
  column_buffer_.resize(static_cast<std::size_t>(n) * count);
  if (mpi_.root()) tile_buffer_.resize(static_cast<std::size_t>(N) * columns * count);
  for (int c = 0; c < columns; ++c) {
    for (std::int64_t i = 0; i < n; ++i)
      for (int d = 0; d < count; ++d) column_buffer_[i * count + d] = value(c, i, d);
    double* dest = mpi_.root() ? tile_buffer_.data() + static_cast<std::int64_t>(c) * N * count : nullptr;
    parallel::gather_rows(mpi_, dec_, column_buffer_.data(), dest, count);
  }
  on_root(mpi_, [&] {
    store_->append(b.warmup ? hmc::Section::kWarmup : hmc::Section::kPosterior, b.first_draw, count,
                   tile_buffer_.data());
  });
  store_s_ += seconds_since(t);
}

bool Session::stop_requested(int iteration) {
  if (debug_signal_at_ == iteration && (debug_signal_rank_ < 0 || debug_signal_rank_ == mpi_.rank())) {
    while (debug_signal_ < 0) std::this_thread::sleep_for(std::chrono::seconds(1));
    std::raise(debug_signal_);
  }
  signal_ = mpi_.max(pending_signal());
  return signal_ != 0;
}

bool Session::checkpoint_due(int iteration) const {
  const int every = spec_.run.output.checkpoint_every;
  return every > 0 && iteration % every == 0;
}

void Session::checkpoint(int iteration, const std::vector<double>& rows, const sampler::LoopState& loop) {
  ScopedRegion region("hmc::checkpoint");
  const auto t = Clock::now();
  const std::int64_t width = dec_.count() > 0 ? static_cast<std::int64_t>(rows.size()) / dec_.count() : 0;
  const std::int64_t row_width = mpi_.max(static_cast<int>(width));
  auto all = parallel::gather_rows(mpi_, dec_, rows, row_width);
  const double sampling = previous_sampling_s_ + mpi_.max_on_root(elapsed() - store_s_);
  on_root(mpi_, [&] {
    CheckpointState state;
    state.iteration = iteration;
    state.loop = loop;
    state.flushed_posterior = store_->available(hmc::Section::kPosterior);
    state.flushed_warmup = store_->available(hmc::Section::kWarmup);
    state.sampling_s = sampling;
    state.store_s = previous_store_s_ + store_s_ + seconds_since(t);
    io::CheckpointData c;
    c.header = checkpoint_header(spec_, layout_, row_width, mpi_.size(), state);
    c.rows = std::move(all);
    io::write_checkpoint(spec_.paths.checkpoint(), c);
  });
  checkpointed_ = true;
  store_s_ += seconds_since(t);
}

int Session::interrupted(int iteration) {
  if (mpi_.root()) {
    spdlog::warn("{}: stopped after iteration {} of {}; checkpoint in {}; continue with: hmc resume {}",
                 signal_name(signal_), iteration, settings_.warmup + settings_.draws, spec_.paths.staging,
                 spec_.paths.final_dir);
  }
  return kExitInterrupted;
}

io::WriterOptions Session::writer_options() const {
  const auto& out = spec_.run.output;
  io::WriterOptions o;
  o.precision = out.precision;
  o.compression = out.compression;
  o.attributes = {{"hmc_version", hmc::version()},
                  {"hmc_git", hmc::git_hash()},
                  {"kokkos_version", hmc::kokkos_version()},
                  {"seed", std::to_string(settings_.seed)},
                  {"particles", settings_.particles},
                  {"thin", settings_.thin},
                  {"config", hmc::dump_text(io::recorded_config(spec_.config))}};
  o.data = data_;
  return o;
}

int Session::finish(const hmc::Adapted& adapted, const std::vector<double>& accept_sum,
                    const std::vector<double>& divergences, std::int64_t grad_evals) {
  // The loop's collectives, before the gathers of the end below.
  const parallel::Traffic traffic = parallel::traffic();
  // Per-particle totals to rank 0, in global order.
  std::vector<double> local(accept_sum.size() * 2);
  for (std::size_t i = 0; i < accept_sum.size(); ++i) {
    local[2 * i] = accept_sum[i];
    local[2 * i + 1] = divergences[i];
  }
  const auto all = parallel::gather_rows(mpi_, dec_, local, 2);
  const long long evals = mpi_.sum(grad_evals);
  const double my_sampling = elapsed() - store_s_;
  const double sampling = previous_sampling_s_ + mpi_.max_on_root(my_sampling);
  const double store_s = previous_store_s_ + mpi_.max_on_root(store_s_);
  // Peak RSS of the other ranks now (they are done); rank 0's after writing, below.
  const double others_rss = mpi_.max_on_root(mpi_.root() ? 0.0 : peak_rss_mib());
  // This process's part of the run on every rank, so that imbalance shows (run.json).
  const auto per_rank = gather_per_rank(mpi_, dec_.count(), grad_evals, my_sampling, store_s_, traffic);

  int code = kExitOk;
  if (mpi_.root()) {
    const parallel::SoloWork solo;  // diagnostics and writing; the other ranks wait for the code
    try {
      io::RunTotals totals;
      totals.grad_evals = evals;
      for (std::int64_t p = 0; p < layout_.particles; ++p) {
        totals.accept_sum.push_back(all[2 * p]);
        totals.divergences.push_back(all[2 * p + 1]);
      }
      for (auto s : {hmc::Section::kPosterior, hmc::Section::kWarmup}) {
        if (store_->available(s) < layout_.draws_of(s)) {
          throw RunError("the store in " + store_->dir() + " lacks draws (" + std::to_string(store_->available(s)) +
                         " of " + std::to_string(layout_.draws_of(s)) + ")");
        }
      }
      const std::string& dir = spec_.paths.staging;
      const auto w0 = Clock::now();

      // The draw files need nothing the diagnostics compute, and they only read the store:
      // they are written on a thread of their own while the diagnostics run (the writers
      // are mostly page-cache copies and deflate, the diagnostics use every OpenMP
      // thread). timings_s.write is what is left of the writing after the diagnostics;
      // output.md#measured explains the figures.
      const auto writers = io::make_writers(formats_, spec_.run.output.formats, writer_options());
      std::vector<std::string> files;
      for (const auto& w : writers) files.push_back(w->file_name());
      double draws_write_s = 0.0;
      BackgroundTask writing([&] {
        const auto t0 = Clock::now();
        for (const auto& w : writers) {
          PhaseProgress p("writing " + w->file_name());
          w->write(dir + "/" + w->file_name(), *store_, [&](double f) { p.update(f); });
          p.done();
        }
        draws_write_s = seconds_since(t0);
      });

      PhaseProgress diag_progress("diagnostics");
      diagnostics::SummaryOptions opt;
      opt.superchains = spec_.run.superchains();
      opt.max_draws = spec_.run.diagnostics.max_draws;
      opt.progress = [&](int done, int total) { diag_progress.update(static_cast<double>(done) / total); };
      const auto params = diagnostics::summarize(*store_, opt);
      double total_div = 0.0;
      for (double d : totals.divergences) total_div += d;
      auto warnings = diagnostics::warnings(*store_, params, total_div);
      const auto stats = io::sampler_stats(*store_, totals, settings_, mpi_.size());
      for (auto& cause : io::warning_causes(adapted, stats, settings_, warnings)) warnings.push_back(std::move(cause));
      if (!note_.empty()) warnings.insert(warnings.begin(), note_);
      diag_progress.done();
      const double diagnostics_s = seconds_since(w0);

      const auto w1 = Clock::now();
      writing.join();  // rethrows what a writer threw
      io::write_particles_csv(dir + "/particles.csv", *store_, totals, settings_.draws);
      io::write_file_atomic(dir + "/run.json", hmc::dump_text(run_info(mpi_, spec_, adapted, per_rank), 2) + "\n");
      throw_if_interrupted();
      io::Timings t;
      t.setup = setup_s_;
      t.sampling = sampling;
      t.gather = store_s;
      t.write = diagnostics_s + seconds_since(w1);
      t.total = seconds_since(spec_.t0) + previous_sampling_s_ + previous_store_s_;
      json summary = io::summary_json(params, stats, t, adapted, warnings);
      summary["timings_s"] = {{"total", t.total},
                              {"setup", t.setup},
                              {"sampling", t.sampling},
                              {"store", store_s},
                              {"diagnostics", diagnostics_s},
                              {"write", seconds_since(w1)},
                              {"write_draws", draws_write_s}};
      const double root_rss = peak_rss_mib();
      summary["memory"] = {{"peak_rss_mib", std::max(root_rss, others_rss)},
                           {"rank0_peak_rss_mib", root_rss},
                           {"block_draws", settings_.block_draws}};
      io::write_file_atomic(dir + "/summary.json", hmc::dump_text(summary, 2) + "\n");
      files.insert(files.end(), {"particles.csv", "summary.json", "run.json"});
      publish(spec_.paths, spec_.overwrite);
      std::cout << io::summary_table(params, stats, t, adapted, warnings) << std::flush;
      std::string list;
      for (const auto& f : files) list += (list.empty() ? "" : ", ") + f;
      spdlog::info("results in {}/ ({})", spec_.paths.final_dir, list);
    } catch (const Interrupted& e) {
      spdlog::warn("{}: stopped while writing the results; checkpoint in {}; finish with: hmc resume {}",
                   signal_name(e.signal), spec_.paths.staging, spec_.paths.final_dir);
      code = kExitInterrupted;
    } catch (const RunError& e) {
      std::cerr << "hmc: " << e.what() << "\n";  // rank 0 alone here: report()'s line, without a collective
      code = exit_code(e);
    }
  }
  return mpi_.broadcast(code);
}

}  // namespace hmc::services
