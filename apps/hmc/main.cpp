/// \file
/// \brief `hmc`: the command-line front end. It parses, validates and calls the library.

#include "hmc/core/kokkos_shim.hpp"
#include "hmc/core/version.hpp"
#include "hmc/diagnostics/summary.hpp"
#include "hmc/io/config.hpp"
#include "hmc/io/errors.hpp"
#include "hmc/io/results.hpp"
#include "hmc/parallel/mpi_context.hpp"
#include "registry.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

struct Options {
  std::string config;
  std::vector<std::string> sets;
  bool validate = false;
  bool list_models = false;
  bool version = false;
};

void setup_cli(CLI::App& app, Options& opt) {
  app.description(
      "hmc: ensemble Hamiltonian Monte Carlo on Kokkos + MPI.\n"
      "  mpirun -np 4 hmc --config run.json");
  app.add_option("-c,--config", opt.config, "run config (JSON); see docs/config.md");
  app.add_option("-s,--set", opt.sets,
                 "override a config key: key.path=value (repeatable; value read as JSON, "
                 "else as a string)");
  app.add_flag("--validate", opt.validate, "check config and data, print the resolved config, exit");
  app.add_flag("--list-models", opt.list_models, "list the models this build ships, exit");
  app.add_flag("-V,--version", opt.version, "print versions of hmc, Kokkos and MPI, exit");
}

std::string version_text() {
  std::ostringstream os;
  os << "hmc " << hmc::version() << " (git " << hmc::git_hash() << ")\n"
     << "Kokkos " << hmc::kokkos_version() << ", backends: " << hmc::kokkos_backends()
     << ", default execution space: " << hmc::ExecSpace::name() << "\n"
     << "MPI: " << hmc::parallel::mpi_library_version() << "\n";
  return os.str();
}

/// Rank 0 reads config and data and checks them; everyone else learns the outcome.
/// Returns the exit code (0: go on) and fills `resolved` on every rank.
int resolve_everywhere(const hmc::parallel::MpiContext& mpi, const Options& opt, hmc::io::ResolvedConfig& resolved) {
  int code = hmc::kExitOk;
  std::string payload;
  if (mpi.root()) {
    try {
      resolved = hmc::io::resolve_config(opt.config, opt.sets, hmc::models::model_names(), hmc::models::model_keys);
      const auto* entry = hmc::models::find_model(resolved.config["model"]["name"].get<std::string>());
      entry->check(resolved.config["model"], resolved.data);
      payload = json{{"config", resolved.config}, {"data", resolved.data}}.dump();
    } catch (const hmc::ConfigError& e) {
      std::cerr << "hmc: " << e.what() << "\n";
      code = hmc::kExitConfigError;
    } catch (const hmc::DataError& e) {
      std::cerr << "hmc: " << e.what() << "\n";
      code = hmc::kExitDataError;
    }
  }
  code = mpi.broadcast(code);
  if (code != hmc::kExitOk) return code;
  payload = mpi.broadcast(payload);
  if (!mpi.root()) {
    const json j = json::parse(payload);
    resolved.config = j["config"];
    resolved.data = j["data"];
  }
  return hmc::kExitOk;
}

hmc::sampler::Settings settings_from(const json& c) {
  hmc::sampler::Settings s;
  const auto& sm = c["sampler"];
  s.particles = sm["particles"].get<std::int64_t>();
  s.warmup = sm["warmup"].get<int>();
  s.draws = sm["draws"].get<int>();
  s.thin = sm["thin"].get<int>();
  s.step_size = sm["step_size"].get<double>();
  s.leapfrog_steps = sm["leapfrog_steps"].get<int>();
  s.temperature = sm["temperature"].get<double>();
  s.init_strategy = sm["init"]["strategy"].get<std::string>();
  s.init_radius = sm["init"]["radius"].get<double>();
  s.seed = c["seed"].get<std::uint64_t>();
  const int every = c["log"]["progress_every"].get<int>();
  const int total = s.warmup + s.draws;
  s.progress_every = every > 0 ? every : (total >= 10 ? total / 10 : 1);
  return s;
}

void setup_logging(const hmc::parallel::MpiContext& mpi, const std::string& level) {
  // Logs go to stderr; stdout carries results (the summary table, --validate output).
  auto logger = spdlog::stderr_logger_st("hmc");
  logger->set_pattern(mpi.root() ? "[%H:%M:%S] %v" : "[%H:%M:%S rank " + std::to_string(mpi.rank()) + "] %v");
  logger->set_level(mpi.root() ? spdlog::level::from_str(level) : spdlog::level::err);
  spdlog::set_default_logger(logger);
}

/// Errors reach the user whatever the log level; only rank 0 prints them.
void report_error(const hmc::parallel::MpiContext& mpi, const std::string& what) {
  if (mpi.root()) std::cerr << "hmc: " << what << "\n";
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

json run_info(const hmc::parallel::MpiContext& mpi, const json& config, const std::vector<std::string>& argv,
              const std::string& started) {
  return {{"hmc", {{"version", hmc::version()}, {"git", hmc::git_hash()}}},
          {"kokkos",
           {{"version", hmc::kokkos_version()},
            {"backends", hmc::kokkos_backends()},
            {"execution_space", hmc::ExecSpace::name()},
            {"concurrency", hmc::ExecSpace().concurrency()}}},
          {"mpi", {{"library", hmc::parallel::mpi_library_version()}, {"ranks", mpi.size()}}},
          {"seed", config["seed"]},
          {"started_utc", started},
          {"command_line", argv},
          {"config", config}};
}

int run_sample(const hmc::parallel::MpiContext& mpi, const Options& opt, const std::vector<std::string>& argv,
               Clock::time_point t0) {
  const std::string started = utc_now();
  hmc::io::ResolvedConfig resolved;
  if (const int code = resolve_everywhere(mpi, opt, resolved); code != hmc::kExitOk) return code;
  const json& config = resolved.config;
  if (opt.validate) {
    if (mpi.root()) std::cout << config.dump(2) << "\n";
    return hmc::kExitOk;
  }
  setup_logging(mpi, config["log"]["level"].get<std::string>());
  const std::string dir = config["output"]["dir"].get<std::string>();

  // The output directory is made (and checked writable) before any sampling.
  int code = hmc::kExitOk;
  bool created_dir = false;
  if (mpi.root()) {
    try {
      created_dir = hmc::io::prepare_output_dir(dir);
    } catch (const hmc::RunError& e) {
      report_error(mpi, e.what());
      code = hmc::kExitRunError;
    }
  }
  if ((code = mpi.broadcast(code)) != hmc::kExitOk) return code;

  const auto settings = settings_from(config);
  const auto* entry = hmc::models::find_model(config["model"]["name"].get<std::string>());
  spdlog::info("hmc {}: model {}, {} particles on {} rank(s) x {} ({}), seed {}", hmc::version(), entry->name,
               settings.particles, mpi.size(), hmc::ExecSpace::name(), hmc::ExecSpace().concurrency(), settings.seed);
  auto progress = [&](const hmc::sampler::Progress& p) {
    spdlog::info("{} {:>{}}/{} | accept {:.3f} (rank 0) | {:.2f} s", p.warmup ? "warmup  " : "sampling", p.iteration,
                 std::to_string(p.total).size(), p.total, p.accept_rate, p.elapsed_s);
  };

  hmc::io::Timings t;
  t.setup = std::chrono::duration<double>(Clock::now() - t0).count();
  hmc::models::RunOutput out;
  try {
    out = entry->run(hmc::models::RunRequest{
        config["model"], resolved.data, settings, mpi,
        mpi.root() ? hmc::sampler::ProgressCallback(progress) : hmc::sampler::ProgressCallback()});
  } catch (const hmc::sampler::InitError& e) {
    // Raised on every rank alike (the ranks agree on it before sampling).
    report_error(mpi, e.what());
    std::error_code ignored;  // a directory that is no longer empty stays
    if (mpi.root() && created_dir) std::filesystem::remove(dir, ignored);
    return hmc::kExitRunError;
  }
  t.sampling = out.sampling_s;
  t.gather = out.gather_s;
  if (!mpi.root()) return hmc::kExitOk;

  const auto w0 = Clock::now();
  const auto params = hmc::diagnostics::summarize(out.all, out.names);
  const auto stats = hmc::io::sampler_stats(out.all, settings, mpi.size());
  try {
    hmc::io::write_draws_csv(dir + "/draws.csv", out.all, out.names);
    hmc::io::write_file_atomic(dir + "/run.json", run_info(mpi, config, argv, started).dump(2) + "\n");
    t.write = std::chrono::duration<double>(Clock::now() - w0).count();
    t.total = std::chrono::duration<double>(Clock::now() - t0).count();
    hmc::io::write_file_atomic(dir + "/summary.json", hmc::io::summary_json(params, stats, t).dump(2) + "\n");
  } catch (const hmc::RunError& e) {
    report_error(mpi, e.what());
    return hmc::kExitRunError;
  }
  std::cout << hmc::io::summary_table(params, stats, t) << std::flush;
  spdlog::info("results in {}/ (draws.csv, summary.json, run.json)", dir);
  return hmc::kExitOk;
}

int run_app(const hmc::parallel::MpiContext& mpi, int argc, char** argv, Clock::time_point t0) {
  CLI::App app{"hmc"};
  Options opt;
  setup_cli(app, opt);
  std::ostringstream sink;
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e, mpi.root() ? std::cout : sink, mpi.root() ? std::cerr : sink);
  } catch (const CLI::ParseError& e) {
    if (mpi.root()) std::cerr << "hmc: " << e.what() << " (see hmc --help)\n";
    return hmc::kExitConfigError;
  }

  if (opt.version) {
    if (mpi.root()) std::cout << version_text();
    return hmc::kExitOk;
  }
  if (opt.list_models) {
    if (mpi.root()) {
      for (const auto& m : hmc::models::registry()) std::cout << m.name << "\t" << m.summary << "\n";
    }
    return hmc::kExitOk;
  }
  if (opt.config.empty()) {
    if (mpi.root()) std::cerr << "hmc: config error: --config FILE is required (see hmc --help)\n";
    return hmc::kExitConfigError;
  }
  return run_sample(mpi, opt, std::vector<std::string>(argv, argv + argc), t0);
}

}  // namespace

int main(int argc, char** argv) {
  const auto t0 = Clock::now();
  // MPI first, Kokkos second; they are torn down in reverse order.
  hmc::parallel::MpiContext mpi(&argc, &argv);
  // Kokkos' initialisation advice (OMP_PROC_BIND, ...) would print on every rank.
  setenv("KOKKOS_DISABLE_WARNINGS", "1", 0);
  // Kokkos sees only its own --kokkos-* options (else it answers --help itself).
  std::vector<char*> kokkos_argv = {argv[0]};
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]).rfind("--kokkos-", 0) == 0) kokkos_argv.push_back(argv[i]);
  int kokkos_argc = static_cast<int>(kokkos_argv.size());
  kokkos_argv.push_back(nullptr);
  Kokkos::ScopeGuard kokkos(kokkos_argc, kokkos_argv.data());
  try {
    return run_app(mpi, argc, argv, t0);
  } catch (const std::exception& e) {
    std::cerr << "hmc: rank " << mpi.rank() << ": internal error: " << e.what() << "\n";
    mpi.abort(hmc::kExitFailure);
  }
}
