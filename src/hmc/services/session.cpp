#include "hmc/services/session.hpp"

#include "hmc/core/kokkos_shim.hpp"
#include "hmc/core/version.hpp"
#include "hmc/diagnostics/summary.hpp"
#include "hmc/io/checkpoint.hpp"
#include "hmc/io/checksum.hpp"
#include "hmc/io/config.hpp"
#include "hmc/core/errors.hpp"
#include "hmc/io/json_text.hpp"
#include "hmc/io/netcdf.hpp"
#include "hmc/io/results.hpp"
#include "hmc/parallel/gather.hpp"
#include "hmc/parallel/traffic.hpp"
#include "hmc/parallel/watchdog.hpp"
#include "hmc/services/progress.hpp"
#include "hmc/services/signals.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <cinttypes>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>
#include <utility>

#include <sys/resource.h>

namespace hmc::services {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr int kCheckpointFormat = 1;

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

/// Runs `f` on rank 0; an hmc error there is raised on every rank (only rank 0 prints).
template <class F>
void on_root(const parallel::MpiContext& mpi, F&& f) {
  int code = kExitOk;
  std::string what;
  if (mpi.root()) {
    const parallel::SoloWork solo;  // the other ranks wait in the broadcast below
    try {
      f();
    } catch (const ConfigError& e) {
      code = kExitConfigError, what = e.what();
    } catch (const DataError& e) {
      code = kExitDataError, what = e.what();
    } catch (const RunError& e) {
      code = kExitRunError, what = e.what();
    }
  }
  code = mpi.broadcast(code);
  if (code == kExitOk) return;
  what = mpi.broadcast(what);
  if (code == kExitConfigError) throw ConfigError(what);
  if (code == kExitDataError) throw DataError(what);
  throw RunError(what);
}

/// What must not change between a checkpoint and its resumption: the config (output
/// and log settings aside) and the data.
std::string fingerprint(const json& config, const json& data) {
  json c = config;
  c.erase("output");
  c.erase("log");
  c.erase("run");
  const std::string text = hmc::dump_text(c) + "\n" + hmc::dump_text(data);
  io::Checksum sum;
  sum.update(text.data(), text.size());
  char buf[24];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, sum.value());
  return buf;
}

json layout_json(const hmc::StoreLayout& l) {
  json dims = json::object();
  for (const auto& [name, d] : l.dim_names) dims[name] = d;
  return {{"particles", l.particles},
          {"param_names", l.param_names},
          {"dim_names", dims},
          {"draws", l.draws},
          {"warmup_draws", l.warmup_draws}};
}

json loop_json(const sampler::LoopState& l) {
  using io::double_bits;
  json inv = json::array();
  for (double x : l.inv_metric) inv.push_back(double_bits(x));
  return {{"iteration", l.iteration},
          {"step_size", double_bits(l.step_size)},
          {"length", double_bits(l.length)},
          {"dual",
           {{"mu", double_bits(l.dual.mu)},
            {"h_bar", double_bits(l.dual.h_bar)},
            {"log_eps_bar", double_bits(l.dual.log_eps_bar)},
            {"counter", l.dual.counter}}},
          {"chees", {{"log_t", double_bits(l.chees.log_t)}, {"v", double_bits(l.chees.v)}, {"steps", l.chees.steps}}},
          {"log_length_sum", double_bits(l.log_length_sum)},
          {"log_length_count", l.log_length_count},
          {"metric_kind", mode_name(l.metric_kind)},
          {"inv_metric", inv},
          {"window_iterations", l.window_iterations}};
}

sampler::LoopState loop_from_json(const json& j) {
  using io::double_from_bits;
  sampler::LoopState l;
  l.iteration = j.at("iteration").get<int>();
  l.step_size = double_from_bits(j.at("step_size").get<std::string>());
  l.length = double_from_bits(j.at("length").get<std::string>());
  const auto& d = j.at("dual");
  l.dual = {double_from_bits(d.at("mu").get<std::string>()), double_from_bits(d.at("h_bar").get<std::string>()),
            double_from_bits(d.at("log_eps_bar").get<std::string>()), d.at("counter").get<int>()};
  const auto& c = j.at("chees");
  l.chees = {double_from_bits(c.at("log_t").get<std::string>()), double_from_bits(c.at("v").get<std::string>()),
             c.at("steps").get<int>()};
  l.log_length_sum = double_from_bits(j.at("log_length_sum").get<std::string>());
  l.log_length_count = j.at("log_length_count").get<int>();
  l.metric_kind = parse_mode<MetricKind>(j.at("metric_kind").get<std::string>());
  for (const auto& x : j.at("inv_metric")) l.inv_metric.push_back(double_from_bits(x.get<std::string>()));
  l.window_iterations = j.at("window_iterations").get<int>();
  return l;
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

json run_info(const parallel::MpiContext& mpi, const RunSpec& spec, const hmc::Adapted& adapted,
              const std::vector<double>& per_rank) {
  return {{"hmc", {{"version", hmc::version()}, {"git", hmc::git_hash()}}},
          {"kokkos",
           {{"version", hmc::kokkos_version()},
            {"backends", hmc::kokkos_backends()},
            {"execution_space", hmc::ExecSpace::name()},
            {"concurrency", hmc::ExecSpace().concurrency()}}},
          {"mpi", {{"library", hmc::parallel::mpi_library_version()}, {"ranks", mpi.size()}}},
          {"per_rank", per_rank_json(per_rank)},
          {"seed", spec.config["seed"]},
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

std::string formats_of(const json& config) { return config["output"]["formats"].get<std::string>(); }

}  // namespace

int block_draws(const json& config, std::int64_t particles, int params) {
  const auto& s = config["sampler"];
  const int thin = s["thin"].get<int>();
  const int kept = std::max((s["draws"].get<int>() + thin - 1) / thin, (s["warmup"].get<int>() + thin - 1) / thin);
  const int every = config["output"]["flush_every"].get<int>();
  if (every > 0) return std::max(1, std::min(every, kept));
  const double per_draw = static_cast<double>(particles) * (params + hmc::kNumStats) * sizeof(double);
  const double target = 32.0 * 1024 * 1024;
  return std::max(1, std::min(kept, static_cast<int>(std::min(1e9, target / per_draw))));
}

RunSpec load_resume_spec(const OutputPaths& paths) {
  json j;
  try {
    j = io::parse_bounded(io::read_input_file(paths.run_config(), io::kMaxConfigBytes + io::kMaxDataBytes),
                          io::kMaxJsonDepth + 2);  // {"config": ...} wraps an accepted config
  } catch (const io::JsonInputError& e) {
    const std::string why = e.what();
    if (why.rfind("cannot open", 0) == 0) {
      throw RunError("cannot read " + paths.run_config() + " (not a checkpointed hmc run)");
    }
    throw RunError(paths.run_config() + " is not valid (corrupt staging directory): " + why);
  }
  if (!j.is_object() || !j.contains("config") || !j["config"].is_object()) {
    throw RunError(paths.run_config() + " is not valid (corrupt staging directory)");
  }
  RunSpec spec;
  spec.config = j["config"];
  if (j.contains("config_bytes") && j["config_bytes"].is_string()) {
    const std::string& hex = j["config_bytes"].get_ref<const std::string&>();
    std::string bytes;
    auto nibble = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
    for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
      bytes += static_cast<char>(nibble(hex[i]) << 4 | nibble(hex[i + 1]));
    try {
      spec.config = io::from_transport(bytes);
    } catch (const json::exception&) {
      throw RunError(paths.run_config() + " is not valid (corrupt staging directory): config_bytes");
    }
  }
  spec.command_line = j.value("command_line", std::vector<std::string>{});
  spec.started_utc = j.value("started_utc", std::string());
  spec.overwrite = j.value("overwrite", false);
  spec.resume = true;
  spec.paths = paths;
  spec.data = io::load_data(spec.config);
  return spec;
}

Session::Session(const parallel::MpiContext& mpi, const RunSpec& spec)
    : mpi_(mpi), spec_(spec), settings_(io::settings_from_config(spec.config)) {
  settings_.save_warmup = spec_.config["output"]["save_warmup"].get<bool>();
  dec_ = parallel::Decomposition{settings_.particles, mpi_.size(), mpi_.rank()};
  checkpoint_every_ = spec_.config["output"]["checkpoint_every"].get<int>();
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

void Session::plan(hmc::StoreLayout layout) {
  layout_ = std::move(layout);
  settings_.block_draws = block_draws(spec_.config, settings_.particles, layout_.num_params());
}

std::optional<Resumed> Session::open(int row_width) {
  const std::string fp = fingerprint(spec_.config, spec_.data);
  io::CheckpointData ckpt;
  on_root(mpi_, [&] {
    if (!spec_.resume) {
      prepare_staging(spec_.paths, spec_.overwrite);
      json rc = {{"config", spec_.config},         {"command_line", spec_.command_line},
                 {"started_utc", spec_.started_utc}, {"overwrite", spec_.overwrite},
                 {"output_dir", spec_.paths.final_dir}, {"layout", layout_json(layout_)}};
      // Strings that are not UTF-8 (paths are bytes) come out of JSON text replaced; for
      // resume, the exact config travels along as hex of its CBOR.
      try {
        (void)spec_.config.dump();
      } catch (const json::type_error&) {
        static const char* digits = "0123456789abcdef";
        std::string hex;
        for (unsigned char b : io::to_transport(spec_.config)) hex += {digits[b >> 4], digits[b & 15]};
        rc["config_bytes"] = hex;
      }
      io::write_file_atomic(spec_.paths.run_config(), hmc::dump_text(rc, 2) + "\n");
      store_ = std::make_unique<io::TileStore>(spec_.paths.blocks(), layout_);
      return;
    }
    ckpt = io::read_checkpoint(spec_.paths.checkpoint());
    const json& h = ckpt.header;
    const std::string where = "checkpoint " + spec_.paths.checkpoint();
    if (h.value("format", 0) != kCheckpointFormat) throw RunError(where + " has an unknown format");
    if (h.value("fingerprint", std::string()) != fp) {
      throw RunError(where + " does not match this run: the config or the data changed since it was written");
    }
    if (h.value("particles", std::int64_t{-1}) != layout_.particles || h.value("row_width", -1) != row_width ||
        h.value("params", -1) != layout_.num_params()) {
      throw RunError(where + " does not match this run (particles, parameters or state size differ)");
    }
    if (ckpt.rows.size() != static_cast<std::size_t>(layout_.particles) * row_width) {
      throw RunError(where + " is truncated (particle rows)");
    }
    store_ = std::make_unique<io::TileStore>(spec_.paths.blocks(), layout_);
    store_->truncate(hmc::Section::kPosterior, h.at("flushed").at("posterior").get<std::int64_t>());
    store_->truncate(hmc::Section::kWarmup, h.at("flushed").at("warmup").get<std::int64_t>());
    store_->verify();
  });
  // The first log line comes once the output directory (or the checkpoint) has been
  // accepted, so that a refused run prints only its one-line error.
  const auto& c = spec_.config;
  spdlog::info("hmc {}: model {}, {} particles on {} rank(s) x {} ({}), seed {}", hmc::version(),
               c["model"]["name"].get<std::string>(), settings_.particles, mpi_.size(), hmc::ExecSpace::name(),
               hmc::ExecSpace().concurrency(), c["seed"].get<std::uint64_t>());
  if (!spec_.resume) return std::nullopt;
  checkpointed_ = true;
  const json header = json::parse(mpi_.broadcast(mpi_.root() ? hmc::dump_text(ckpt.header) : std::string()));
  Resumed r;
  r.rows = parallel::scatter_rows(mpi_, dec_, ckpt.rows, row_width);
  r.loop = loop_from_json(header.at("loop"));
  previous_sampling_s_ = header.at("elapsed").at("sampling").get<double>();
  previous_store_s_ = header.at("elapsed").at("store").get<double>();
  spdlog::info("resuming at iteration {} of {} from {}", r.loop.iteration, settings_.warmup + settings_.draws,
               spec_.paths.checkpoint());
  return r;
}

void Session::agree_init(long long failed, const std::string& model_name) {
  const long long total = mpi_.sum(failed);
  if (total > 0) {
    throw sampler::InitError("model " + model_name + ": " + std::to_string(total) + " of " +
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
  const int params = layout_.num_params(), columns = layout_.num_columns(), count = b.count;
  const std::int64_t n = dec_.count(), N = layout_.particles;
  // Value of column c (parameters, then the statistics) for local particle i, slot d.
  auto value = [&](int c, std::int64_t i, int d) -> double {
    if (c < params) return b.draws(i, d, c);
    switch (c - params) {
      case hmc::kStatLp: return b.lp(i, d);
      case hmc::kStatAccept: return b.accept_prob(i, d);
      case hmc::kStatStepSize: return b.step_size[d];
      case hmc::kStatSteps: return b.n_leapfrog(i, d);
      case hmc::kStatDiverging: return b.divergent(i, d);
      default: return b.energy(i, d);  // hmc::kStatEnergy
    }
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

bool Session::checkpoint_due(int iteration) const { return checkpoint_every_ > 0 && iteration % checkpoint_every_ == 0; }

void Session::checkpoint(int iteration, const std::vector<double>& rows, const sampler::LoopState& loop) {
  ScopedRegion region("hmc::checkpoint");
  const auto t = Clock::now();
  const std::int64_t width = dec_.count() > 0 ? static_cast<std::int64_t>(rows.size()) / dec_.count() : 0;
  const std::int64_t row_width = mpi_.max(static_cast<int>(width));
  auto all = parallel::gather_rows(mpi_, dec_, rows, row_width);
  const double sampling = previous_sampling_s_ + mpi_.max_on_root(elapsed() - store_s_);
  on_root(mpi_, [&] {
    io::CheckpointData c;
    c.header = {{"format", kCheckpointFormat},
                {"hmc", hmc::version()},
                {"fingerprint", fingerprint(spec_.config, spec_.data)},
                {"model", spec_.config["model"]["name"]},
                {"particles", layout_.particles},
                {"params", layout_.num_params()},
                {"row_width", row_width},
                {"iteration", iteration},
                {"ranks", mpi_.size()},
                {"loop", loop_json(loop)},
                {"flushed",
                 {{"posterior", store_->available(hmc::Section::kPosterior)},
                  {"warmup", store_->available(hmc::Section::kWarmup)}}},
                {"elapsed", {{"sampling", sampling}, {"store", previous_store_s_ + store_s_ + seconds_since(t)}}}};
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
      const auto& c = spec_.config;
      const std::string& dir = spec_.paths.staging;
      const auto w0 = Clock::now();

      // draws.nc and draws.csv need nothing the diagnostics compute, and both only read
      // the store: they are written on a thread of their own while the diagnostics run
      // (the writer is mostly page-cache copies and deflate, the diagnostics use every
      // OpenMP thread). timings_s.write is what is left of the writing after the
      // diagnostics; output.md#measured explains the figures.
      const std::string formats = formats_of(c);
      std::vector<std::string> files;
      if (formats == "netcdf" || formats == "both") files.push_back("draws.nc");
      if (formats == "csv" || formats == "both") files.push_back("draws.csv");
      double draws_write_s = 0.0;
      BackgroundTask writer([&] {
        const auto t0 = Clock::now();
        if (formats == "netcdf" || formats == "both") {
          PhaseProgress p("writing draws.nc");
          // The config without /output/dir: where a run was written is not part of it, and
          // leaving it out keeps the file identical wherever the same run is written.
          json run_config = c;
          run_config["output"].erase("dir");
          json attrs = {{"hmc_version", hmc::version()},
                        {"hmc_git", hmc::git_hash()},
                        {"kokkos_version", hmc::kokkos_version()},
                        {"seed", std::to_string(c["seed"].get<std::uint64_t>())},
                        {"particles", settings_.particles},
                        {"thin", settings_.thin},
                        {"config", hmc::dump_text(run_config)}};
          io::NetcdfOptions nopt;
          nopt.compression = c["output"]["compression"].get<int>();
          io::write_inference_data(dir + "/draws.nc", *store_, nopt, attrs, [&](double f) { p.update(f); });
          p.done();
        }
        if (formats == "csv" || formats == "both") {
          PhaseProgress p("writing draws.csv");
          io::write_draws_csv(dir + "/draws.csv", *store_, c["output"]["precision"].get<int>(),
                              [&](double f) { p.update(f); });
          p.done();
        }
        draws_write_s = seconds_since(t0);
      });

      PhaseProgress diag_progress("diagnostics");
      diagnostics::SummaryOptions opt;
      const int configured = c["diagnostics"]["superchains"].get<int>();
      opt.superchains = configured > 0 ? configured : diagnostics::default_superchains(settings_.particles);
      opt.max_draws = c["diagnostics"]["max_draws"].get<std::int64_t>();
      opt.progress = [&](int done, int total) { diag_progress.update(static_cast<double>(done) / total); };
      const auto params = diagnostics::summarize(*store_, opt);
      double total_div = 0.0;
      for (double d : totals.divergences) total_div += d;
      auto warnings = diagnostics::warnings(*store_, params, total_div);
      if (!note_.empty()) warnings.insert(warnings.begin(), note_);
      const auto stats = io::sampler_stats(*store_, totals, settings_, mpi_.size());
      diag_progress.done();
      const double diagnostics_s = seconds_since(w0);

      const auto w1 = Clock::now();
      writer.join();  // rethrows what the writer threw
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
      summary["timings_s"] = {{"total", t.total},         {"setup", t.setup},
                              {"sampling", t.sampling},   {"store", store_s},
                              {"diagnostics", diagnostics_s}, {"write", seconds_since(w1)},
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
      std::cerr << "hmc: " << e.what() << "\n";
      code = kExitRunError;
    }
  }
  return mpi_.broadcast(code);
}

int sample(const parallel::MpiContext& mpi, const RunSpec& spec, const ModelRunner& runner) {
  install_signal_handlers();
  // An abort (a hung rank, an error on one rank) removes OUT.partial unless it holds a
  // checkpoint to resume from, as any failed run does.
  mpi.on_abort([paths = spec.paths] {
    std::error_code ec;
    if (!fs::exists(paths.checkpoint(), ec)) discard(paths);
  });
  // A checkpoint of an older hmc has no /run: the schema's default then.
  const double timeout = spec.config.value(json::json_pointer("/run/rank_timeout_s"), 600.0);
  if (!mpi.watch(timeout) && mpi.root()) {
    spdlog::warn("this MPI library does not provide MPI_THREAD_MULTIPLE: /run/rank_timeout_s is ignored");
  }
  // Normal ends stop the watchdog here; an exception that leaves this function keeps it
  // for MpiContext::fail in main, which hands the error to rank 0.
  struct Unwatch {
    const parallel::MpiContext& mpi;
    ~Unwatch() {
      if (std::uncaught_exceptions() == 0) mpi.unwatch();
    }
  } unwatch{mpi};
  // Removing a large store can outlast the timeout while the other ranks wait: solo work.
  auto drop = [&] {
    const parallel::SoloWork solo;
    discard(spec.paths);
  };
  Session session(mpi, spec);
  session.setup_s_ = seconds_since(spec.t0);
  try {
    const int code = runner(session);
    if (code != kExitOk && code != kExitInterrupted && mpi.root() && !session.checkpointed_) drop();
    return code;
  } catch (const sampler::InitError& e) {
    if (mpi.root()) std::cerr << "hmc: " << e.what() << "\n";
    if (mpi.root() && !spec.resume) drop();
    return kExitRunError;
  } catch (const sampler::AdaptationError& e) {
    if (mpi.root()) {
      std::cerr << "hmc: run error: " << e.what() << "\n";
      if (!spec.resume) drop();  // resuming would diverge the same way
    }
    return kExitRunError;
  } catch (const ConfigError& e) {
    if (mpi.root()) std::cerr << "hmc: " << e.what() << "\n";
    return kExitConfigError;
  } catch (const DataError& e) {
    if (mpi.root()) std::cerr << "hmc: " << e.what() << "\n";
    return kExitDataError;
  } catch (const RunError& e) {
    if (mpi.root()) {
      std::cerr << "hmc: " << e.what() << "\n";
      if (!spec.resume && !session.checkpointed_) drop();
    }
    return kExitRunError;
  }
}

}  // namespace hmc::services
