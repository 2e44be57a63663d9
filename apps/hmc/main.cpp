/// \file
/// \brief `hmc`: the command-line front end. It parses, validates and calls the library.

#include "hmc/core/kokkos_shim.hpp"
#include "hmc/core/version.hpp"
#include "hmc/io/config.hpp"
#include "hmc/core/errors.hpp"
#include "hmc/io/json_text.hpp"
#include "hmc/io/results.hpp"
#include "hmc/services/preflight.hpp"
#include "hmc/services/resources.hpp"
#include "hmc/services/session.hpp"
#include "hmc/services/signals.hpp"
#include "hmc/services/summary.hpp"
#include "hmc/parallel/mpi_context.hpp"
#include "registry.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <iomanip>
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
  bool list_keys = false;
  bool version = false;
  bool overwrite = false;
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
  app.add_flag("--list-keys", opt.list_keys,
               "print every config key as the table rows of docs/config.md (generic keys) and docs/models.md (each "
               "model's keys), exit");
  app.add_flag("-V,--version", opt.version, "print versions of hmc, Kokkos and MPI, exit");
  app.add_flag("--overwrite", opt.overwrite,
               "replace existing results in /output/dir (and discard a stopped run waiting there)");
}

/// `hmc resume DIR`: continue a run stopped by a signal (or killed) from its checkpoint.
struct ResumeOptions {
  std::string dir;
};

CLI::App* setup_resume(CLI::App& app, ResumeOptions& r) {
  CLI::App* sub = app.add_subcommand(
      "resume",
      "continue a stopped run from its checkpoint (DIR: its /output/dir); the results are bitwise those of an "
      "uninterrupted run, on any number of ranks (docs/output.md#checkpoints)");
  sub->add_option("dir", r.dir, "the run's output directory (or its staging directory DIR.partial)")->required();
  return sub;
}

/// `hmc summary DIR`: the summary table of a finished or checkpointed run, from its draws.
struct SummaryOptions {
  std::string dir;
  std::string format = "table";
};

CLI::App* setup_summary(CLI::App& app, SummaryOptions& o) {
  CLI::App* sub = app.add_subcommand(
      "summary", "print the summary of a finished or checkpointed run, computed from its stored draws");
  sub->add_option("dir", o.dir, "the run's output directory (or its staging directory DIR.partial)")->required();
  sub->add_option("--format", o.format, "table or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  return sub;
}

/// `hmc diagnose`: its own options; --config and --set fill the shared Options.
struct DiagnoseOptions {
  double tolerance = 1e-6;
  int points = 10;
  double rel_step = 3e-4;
  bool all = false;
};

/// A number > 0 and finite ("nan", "inf", "1e999" and words are refused).
const CLI::Validator kFinitePositive(
    [](std::string& text) {
      char* end = nullptr;
      const double x = std::strtod(text.c_str(), &end);
      if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(x) || !(x > 0.0))
        return "must be a finite number > 0 (got \"" + text + "\")";
      return std::string();
    },
    "NUMBER > 0");

CLI::App* setup_diagnose(CLI::App& app, Options& opt, DiagnoseOptions& d) {
  CLI::App* sub = app.add_subcommand(
      "diagnose",
      "check the model's gradient against finite differences at points drawn like the initial state;\n"
      "  exit code 5 if it fails (docs/cli.md)");
  sub->add_option("-c,--config", opt.config, "run config (JSON); see docs/config.md");
  sub->add_option("-s,--set", opt.sets, "override a config key, as for a run");
  sub->add_option("--tolerance", d.tolerance,
                  "largest accepted relative error |a - fd| / max(|a|, |fd|, 1), on top of the measured "
                  "rounding noise of fd (which must stay below 10 x tolerance)")
      ->check(kFinitePositive)
      ->capture_default_str();
  sub->add_option("--points", d.points, "points to check: the starts of particles 0 .. N-1")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  sub->add_option("--step", d.rel_step, "finite-difference step, relative: step_j = STEP * max(1, |theta_j|)")
      ->check(kFinitePositive)
      ->capture_default_str();
  sub->add_flag("--all", d.all, "print every point, not only the worst point of each coordinate");
  return sub;
}

/// The `--kokkos-*` options hmc passes on to Kokkos (3.4 and 4.x spellings), with the
/// kind of value each takes.
enum class KokkosValue { kNone, kPositive, kNonNegative, kDevices, kText, kMapBy };

struct KokkosOption {
  const char* name;
  KokkosValue value;
};

constexpr KokkosOption kKokkosOptions[] = {
    {"--kokkos-threads", KokkosValue::kPositive},       {"--kokkos-num-threads", KokkosValue::kPositive},
    {"--kokkos-numa", KokkosValue::kPositive},          {"--kokkos-device", KokkosValue::kNonNegative},
    {"--kokkos-device-id", KokkosValue::kNonNegative},  {"--kokkos-ndevices", KokkosValue::kDevices},
    {"--kokkos-num-devices", KokkosValue::kDevices},    {"--kokkos-skip-device", KokkosValue::kNonNegative},
    {"--kokkos-map-device-id-by", KokkosValue::kMapBy}, {"--kokkos-disable-warnings", KokkosValue::kNone},
    {"--kokkos-tune-internals", KokkosValue::kNone},    {"--kokkos-print-configuration", KokkosValue::kNone},
    {"--kokkos-help", KokkosValue::kNone},              {"--kokkos-tools-help", KokkosValue::kNone},
    {"--kokkos-tools-library", KokkosValue::kText},     {"--kokkos-tools-libs", KokkosValue::kText},
    {"--kokkos-tools-args", KokkosValue::kText},
};

/// A decimal integer in [lo, 2^31): the whole of `s`.
bool parse_int(const std::string& s, long lo) {
  if (s.empty() || s.size() > 10 || s.find_first_not_of("0123456789") != std::string::npos) return false;
  const long v = std::stol(s);
  return v >= lo && v <= 2147483647L;
}

/// Checks one `--kokkos-*` argument before Kokkos sees it (Kokkos aborts with a backtrace
/// on a malformed value); returns the error, or "" when it is fine.
std::string check_kokkos_option(const std::string& arg) {
  const auto eq = arg.find('=');
  const std::string name = arg.substr(0, eq), value = eq == std::string::npos ? std::string() : arg.substr(eq + 1);
  for (const auto& o : kKokkosOptions) {
    if (name != o.name) continue;
    if (o.value == KokkosValue::kNone) {
      return eq == std::string::npos ? "" : name + " takes no value (got '" + hmc::printable(arg) + "')";
    }
    if (eq == std::string::npos) return name + " needs a value: " + name + "=VALUE";
    bool ok = true;
    const char* want = "";
    switch (o.value) {
      case KokkosValue::kPositive:
        // More threads than that only ends in the OpenMP runtime failing inside Kokkos.
        ok = parse_int(value, 1) && std::stol(value) <= 4096, want = "an integer in 1..4096";
        break;
      case KokkosValue::kNonNegative:
        ok = parse_int(value, 0), want = "an integer >= 0";
        break;
      case KokkosValue::kDevices: {
        const auto comma = value.find(',');
        ok = parse_int(value.substr(0, comma), 1) && (comma == std::string::npos || parse_int(value.substr(comma + 1), 0));
        want = "N or N,SKIP (integers)";
        break;
      }
      case KokkosValue::kMapBy:
        ok = value == "random" || value == "mpi_rank", want = "random or mpi_rank";
        break;
      default:
        ok = !value.empty(), want = "a value";
    }
    if (ok && (name == "--kokkos-tools-library" || name == "--kokkos-tools-libs")) {
      // Kokkos only prints an error for a library it cannot load, and runs on unprofiled.
      std::stringstream libs(value);
      std::string lib;
      while (std::getline(libs, lib, ';')) {
        if (lib.empty()) continue;
        void* handle = dlopen(lib.c_str(), RTLD_LAZY | RTLD_LOCAL);
        if (!handle) {
          const char* why = dlerror();
          return name + ": cannot load " + hmc::printable(lib, 80) + ": " + hmc::printable(why ? why : "", 120);
        }
        dlclose(handle);
      }
    }
    return ok ? "" : name + " must be " + want + " (got '" + hmc::printable(value, 40) + "')";
  }
  return "unknown Kokkos option " + hmc::printable(name, 60) + " (see hmc --kokkos-help)";
}

std::string version_text() {
  std::ostringstream os;
  os << "hmc " << hmc::version() << " (git " << hmc::git_hash() << ")\n"
     << "Kokkos " << hmc::kokkos_version() << ", backends: " << hmc::kokkos_backends()
     << ", default execution space: " << hmc::ExecSpace::name() << "\n"
     << "MPI: " << hmc::parallel::mpi_library_version() << "\n";
  return os.str();
}

/// Runs `f` on rank 0 and turns an hmc error there into its exit code (printed as one
/// line); every rank gets the code.
template <class F>
int on_root(const hmc::parallel::MpiContext& mpi, F&& f) {
  int code = hmc::kExitOk;
  if (mpi.root()) {
    try {
      f();
    } catch (const hmc::ConfigError& e) {
      std::cerr << "hmc: " << e.what() << "\n";
      code = hmc::kExitConfigError;
    } catch (const hmc::DataError& e) {
      std::cerr << "hmc: " << e.what() << "\n";
      code = hmc::kExitDataError;
    } catch (const hmc::RunError& e) {
      std::cerr << "hmc: " << e.what() << "\n";
      code = hmc::kExitRunError;
    }
  }
  return mpi.broadcast(code);
}

/// Rank 0 reads config and data and checks them; everyone else learns the outcome.
/// Returns the exit code (0: go on) and fills `resolved` on every rank.
/// With `check_resources` (a run, not diagnose), rank 0 also refuses a run whose memory
/// estimate exceeds the machine's (services/resources.hpp).
int resolve_everywhere(const hmc::parallel::MpiContext& mpi, const Options& opt, hmc::io::ResolvedConfig& resolved,
                       bool check_resources) {
  const int node_ranks = check_resources ? hmc::services::ranks_on_node(mpi) : 1;
  std::string payload;
  const int code = on_root(mpi, [&] {
    resolved = hmc::io::resolve_config(opt.config, opt.sets, hmc::models::model_names(), hmc::models::model_keys);
    const auto* entry = hmc::models::find_model(resolved.config["model"]["name"].get<std::string>());
    const auto shape = entry->check(resolved.config["model"], resolved.data);
    hmc::services::check_against_model(resolved.config, shape, entry->name, entry->samples_prior);
    if (check_resources) hmc::services::check_memory(resolved.config, shape, mpi.size(), node_ranks);
    if (check_resources && !opt.validate) hmc::services::check_disk(resolved.config, shape);
    payload = hmc::io::to_transport(json{{"config", resolved.config}, {"data", resolved.data}});
  });
  if (code != hmc::kExitOk) return code;
  payload = mpi.broadcast(payload);
  if (!mpi.root()) {
    const json j = hmc::io::from_transport(payload);
    resolved.config = j["config"];
    resolved.data = j["data"];
  }
  return hmc::kExitOk;
}

void setup_logging(const hmc::parallel::MpiContext& mpi, const std::string& level) {
  // Logs go to stderr; stdout carries results (the summary table, --validate output).
  auto logger = spdlog::stderr_logger_st("hmc");
  logger->set_pattern(mpi.root() ? "[%H:%M:%S] %v" : "[%H:%M:%S rank " + std::to_string(mpi.rank()) + "] %v");
  logger->set_level(mpi.root() ? spdlog::level::from_str(level) : spdlog::level::err);
  spdlog::set_default_logger(logger);
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

int run_sample(const hmc::parallel::MpiContext& mpi, const Options& opt, const std::vector<std::string>& argv,
               Clock::time_point t0) {
  const std::string started = utc_now();
  hmc::io::ResolvedConfig resolved;
  if (const int code = resolve_everywhere(mpi, opt, resolved, true); code != hmc::kExitOk) return code;
  if (opt.validate) {
    if (mpi.root()) std::cout << hmc::dump_text(resolved.config, 2) << "\n";
    return hmc::kExitOk;
  }
  setup_logging(mpi, resolved.config["log"]["level"].get<std::string>());
  hmc::services::RunSpec spec;
  spec.config = std::move(resolved.config);
  spec.data = std::move(resolved.data);
  spec.command_line = argv;
  spec.started_utc = started;
  spec.overwrite = opt.overwrite;
  spec.paths = hmc::services::output_paths(spec.config["output"]["dir"].get<std::string>());
  spec.t0 = t0;
  const auto* entry = hmc::models::find_model(spec.config["model"]["name"].get<std::string>());
  return hmc::services::sample(mpi, spec, entry->run);
}

/// `hmc resume DIR`: rank 0 finds the run and reloads its config and data; every rank
/// learns them, then the run goes on as `hmc --config` would have.
int run_resume(const hmc::parallel::MpiContext& mpi, const ResumeOptions& r, Clock::time_point t0) {
  std::string payload;
  const int code = on_root(mpi, [&] {
    auto spec = hmc::services::load_resume_spec(hmc::services::find_checkpointed(r.dir));
    const auto* entry = hmc::models::find_model(spec.config["model"]["name"].get<std::string>());
    if (!entry) throw hmc::RunError("the checkpointed run uses a model this build lacks");
    entry->check(spec.config["model"], spec.data);
    payload = hmc::io::to_transport(json{{"config", spec.config},
                   {"data", spec.data},
                   {"command_line", spec.command_line},
                   {"started", spec.started_utc},
                   {"overwrite", spec.overwrite},
                   {"final", spec.paths.final_dir}});
  });
  if (code != hmc::kExitOk) return code;
  const json j = hmc::io::from_transport(mpi.broadcast(payload));
  hmc::services::RunSpec spec;
  spec.config = j["config"];
  spec.data = j["data"];
  spec.command_line = j["command_line"].get<std::vector<std::string>>();
  spec.started_utc = j["started"].get<std::string>();
  spec.overwrite = j["overwrite"].get<bool>();
  spec.resume = true;
  spec.paths = hmc::services::output_paths(j["final"].get<std::string>());
  spec.t0 = t0;
  setup_logging(mpi, spec.config["log"]["level"].get<std::string>());
  const auto* entry = hmc::models::find_model(spec.config["model"]["name"].get<std::string>());
  return hmc::services::sample(mpi, spec, entry->run);
}

std::string format_number(const char* fmt, double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, x);
  return buf;
}

/// The gradient-check table: one row per coordinate at its worst point (the one nearest
/// to failing, or every point with --all), then the log-density consistency and the verdict.
std::string gradient_table(const std::string& model, const hmc::sampler::Settings& s, const DiagnoseOptions& d,
                           const hmc::models::DiagnoseOutput& out) {
  const auto& c = out.check;
  const double tol = d.tolerance;
  std::ostringstream os;
  os << "gradient check of " << model << ": " << c.dim() << " unconstrained coordinates at " << c.points()
     << " points, the starts of particles 0.." << c.points() - 1 << " (seed " << s.seed << ", init radius "
     << s.init_radius << (s.init_values.empty() ? "" : " around /sampler/init/values") << ")\n"
     << "sixth-order central differences, step " << d.rel_step << " * max(1, |theta_j|); relative error "
     << "|analytic - fd| / max(|analytic|, |fd|, 1); noise: the measured rounding noise of fd, relative;\n"
     << "an entry passes when rel_error <= tolerance + noise and noise <= " << hmc::model::kResolvableNoise
     << " * tolerance; tolerance " << tol << "\n\n";
  std::size_t width = std::string("coordinate").size();
  for (const auto& l : out.labels) width = std::max(width, l.size());
  auto line = [&](int i, int j) {
    const char* verdict = !c.within(i, j, tol) ? "  FAILED" : (!c.resolved(i, j, tol) ? "  UNRESOLVED" : "");
    os << std::left << std::setw(static_cast<int>(width)) << out.labels[j] << std::right << std::setw(10) << i
       << std::setw(20) << format_number("%.10g", c.analytic(i, j)) << std::setw(20)
       << format_number("%.10g", c.finite_diff(i, j)) << std::setw(12) << format_number("%.2g", c.error(i, j))
       << std::setw(10) << format_number("%.2g", c.noise(i, j)) << verdict << "\n";
  };
  os << std::left << std::setw(static_cast<int>(width)) << "coordinate" << std::right << std::setw(10) << "particle"
     << std::setw(20) << "analytic" << std::setw(20) << "finite_diff" << std::setw(12) << "rel_error" << std::setw(10)
     << "noise"
     << "\n";
  // Badness of an entry: failed first, then unresolved, then the nearest to failing.
  auto rank = [&](int i, int j) {
    return std::make_pair(!c.within(i, j, tol) ? 2 : (!c.resolved(i, j, tol) ? 1 : 0), c.ratio(i, j, tol));
  };
  for (int j = 0; j < c.dim(); ++j) {
    int worst = 0;
    for (int i = 0; i < c.points(); ++i) {
      if (d.all) line(i, j);
      if (rank(worst, j) < rank(i, j)) worst = i;
    }
    if (!d.all) line(worst, j);
  }
  int worst_lp = 0, worst_noise = 0;
  for (int i = 0; i < c.points(); ++i) {
    if (!(c.lp_error(i) <= c.lp_error(worst_lp))) worst_lp = i;
    if (!(c.lp_noise(i) <= c.lp_noise(worst_noise))) worst_noise = i;
  }
  os << "\nlog_density vs the value of log_density_gradient and the finite-difference density: largest relative "
     << "difference " << format_number("%.2g", c.lp_error(worst_lp)) << " (particle " << worst_lp << ", log density "
     << format_number("%.10g", c.lp(worst_lp)) << ")\n"
     << "rounding noise of the log density (estimated from sixth differences): largest "
     << format_number("%.2g", c.lp_noise(worst_noise)) << " (particle " << worst_noise << ", log density "
     << format_number("%.10g", c.lp(worst_noise)) << ")\n";
  os << "largest relative error " << format_number("%.2g", c.max_error()) << ": "
     << (c.passed(tol) ? "passed" : "FAILED") << "\n";
  return os.str();
}

/// One line for stderr on failure: where the check fails worst.
std::string gradient_failure(const hmc::models::DiagnoseOutput& out, double tolerance) {
  const auto& c = out.check;
  for (int i = 0; i < c.points(); ++i) {
    if (!std::isfinite(c.lp(i)) || !std::isfinite(c.lp_gradient(i))) {
      return "log density is not finite at the start of particle " + std::to_string(i);
    }
  }
  // A wrong entry (the largest error over its bound), else a wrong log-density value,
  // else an unresolved entry (the largest noise).
  int wi = -1, wj = -1;
  double worst = 0.0;
  for (int i = 0; i < c.points(); ++i)
    for (int j = 0; j < c.dim(); ++j)
      if (!c.within(i, j, tolerance) && !(c.ratio(i, j, tolerance) <= worst))
        worst = c.ratio(i, j, tolerance), wi = i, wj = j;
  if (wi >= 0) {
    return out.labels[wj] + " at the start of particle " + std::to_string(wi) + ": relative error " +
           format_number("%.2g", c.error(wi, wj)) + " > tolerance " + format_number("%g", tolerance) + " + noise " +
           format_number("%.2g", c.noise(wi, wj));
  }
  for (int i = 0; i < c.points(); ++i)
    if (!c.lp_passed(i, tolerance) && (wi < 0 || !(c.lp_error(i) <= c.lp_error(wi)))) wi = i;
  if (wi >= 0) {
    return "log_density and log_density_gradient disagree at the start of particle " + std::to_string(wi) +
           ": relative error " + format_number("%.2g", c.lp_error(wi)) + " > tolerance " +
           format_number("%g", tolerance);
  }
  for (int i = 0; i < c.points(); ++i)
    for (int j = 0; j < c.dim(); ++j)
      if (!c.resolved(i, j, tolerance) && (wi < 0 || !(c.noise(i, j) <= c.noise(wi, wj)))) wi = i, wj = j;
  if (wi < 0) return "no entry failed";  // not reached: called only when the check failed
  return out.labels[wj] + " at the start of particle " + std::to_string(wi) +
         ": the finite differences cannot resolve it (noise " + format_number("%.2g", c.noise(wi, wj)) + " > " +
         format_number("%g", hmc::model::kResolvableNoise) + " * tolerance " + format_number("%g", tolerance) +
         "): the step is too small for the rounding noise of the log density, or too large for its curvature; "
         "try another --step or a larger --tolerance";
}

/// `hmc diagnose`: config and data are resolved as for a run (same errors, same exit
/// codes on every rank); the check itself runs on rank 0 only.
int run_diagnose(const hmc::parallel::MpiContext& mpi, const Options& opt, const DiagnoseOptions& d) {
  if (opt.config.empty()) {
    if (mpi.root()) std::cerr << "hmc: config error: --config FILE is required (see hmc diagnose --help)\n";
    return hmc::kExitConfigError;
  }
  hmc::io::ResolvedConfig resolved;
  if (const int code = resolve_everywhere(mpi, opt, resolved, false); code != hmc::kExitOk) return code;
  if (!mpi.root()) return hmc::kExitOk;
  const json& config = resolved.config;
  const auto settings = hmc::io::settings_from_config(config);
  const auto* entry = hmc::models::find_model(config["model"]["name"].get<std::string>());
  const auto out =
      entry->diagnose(hmc::models::DiagnoseRequest{config["model"], resolved.data, settings, d.points, d.rel_step});
  std::cout << gradient_table(entry->name, settings, d, out) << std::flush;
  if (!out.check.passed(d.tolerance)) {
    std::cerr << "hmc: gradient check failed: " << gradient_failure(out, d.tolerance) << "\n";
    return hmc::kExitGradientCheck;
  }
  return hmc::kExitOk;
}

int run_app(const hmc::parallel::MpiContext& mpi, int argc, char** argv, const std::vector<std::string>& command_line,
            Clock::time_point t0) {
  CLI::App app{"hmc"};
  Options opt;
  setup_cli(app, opt);
  DiagnoseOptions diagnose_opt;
  CLI::App* diagnose = setup_diagnose(app, opt, diagnose_opt);
  ResumeOptions resume_opt;
  CLI::App* resume = setup_resume(app, resume_opt);
  SummaryOptions summary_opt;
  CLI::App* summary = setup_summary(app, summary_opt);
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
  if (opt.list_keys) {
    if (mpi.root()) {
      std::cout << "generic keys (docs/config.md)\n" << hmc::keys::markdown_header() << "\n";
      for (const auto& k : hmc::io::generic_keys(hmc::models::model_names())) {
        std::cout << hmc::keys::markdown_row(k) << "\n";
      }
      for (const auto& m : hmc::models::registry()) {
        std::cout << "\nkeys of " << m.name << " (docs/models.md#" << m.name << ")\n";
        const auto keys = m.keys();
        if (keys.empty()) {
          std::cout << "(none)\n";
          continue;
        }
        std::cout << hmc::keys::markdown_header() << "\n";
        for (const auto& k : keys) std::cout << hmc::keys::markdown_row(k) << "\n";
      }
    }
    return hmc::kExitOk;
  }
  if (diagnose->parsed() || summary->parsed()) hmc::services::restore_default_signal_handlers();
  if (diagnose->parsed()) return run_diagnose(mpi, opt, diagnose_opt);
  if (resume->parsed()) return run_resume(mpi, resume_opt, t0);
  if (summary->parsed()) return mpi.root() ? hmc::services::print_summary(summary_opt.dir, summary_opt.format) : 0;
  if (opt.config.empty()) {
    if (mpi.root()) std::cerr << "hmc: config error: --config FILE is required (see hmc --help)\n";
    return hmc::kExitConfigError;
  }
  return run_sample(mpi, opt, command_line, t0);
}

}  // namespace

int main(int argc, char** argv) {
  const auto t0 = Clock::now();
  // Before anything slow: a SIGTERM during start-up (MPI, Kokkos, reading the data) is
  // then kept, and the run stops cleanly after its first iteration (exit code 75).
  hmc::services::install_signal_handlers();
  // MPI first, Kokkos second; they are torn down in reverse order.
  hmc::parallel::MpiContext mpi(&argc, &argv);
  // Kokkos' initialisation advice (OMP_PROC_BIND, ...) would print on every rank.
  setenv("KOKKOS_DISABLE_WARNINGS", "1", 0);
  // Kokkos sees only its own --kokkos-* options (else it answers --help itself), checked
  // first; hmc's parser sees the others.
  std::vector<char*> kokkos_argv = {argv[0]}, hmc_argv = {argv[0]};
  bool kokkos_help = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--kokkos-", 0) != 0) {
      hmc_argv.push_back(argv[i]);
      continue;
    }
    if (const std::string error = check_kokkos_option(arg); !error.empty()) {
      if (mpi.root()) std::cerr << "hmc: config error: " << error << "\n";
      return hmc::kExitConfigError;
    }
    kokkos_help = kokkos_help || arg == "--kokkos-help" || arg == "--kokkos-tools-help";
    kokkos_argv.push_back(argv[i]);
  }
  int kokkos_argc = static_cast<int>(kokkos_argv.size());
  kokkos_argv.push_back(nullptr);
  Kokkos::ScopeGuard kokkos(kokkos_argc, kokkos_argv.data());
  if (kokkos_help) return hmc::kExitOk;  // Kokkos printed its options
  try {
    return run_app(mpi, static_cast<int>(hmc_argv.size()), hmc_argv.data(), std::vector<std::string>(argv, argv + argc),
                   t0);
  } catch (const std::exception& e) {
    // Often raised on one rank only: the line reaches rank 0's log (MpiContext::fail),
    // and every rank ends.
    mpi.fail("hmc: rank " + std::to_string(mpi.rank()) + ": internal error: " + e.what(), hmc::kExitFailure);
  }
}
