/// \file
/// \brief `hmc`: the command line. It parses the options and dispatches to the services:
/// a run (services/sample.hpp), `hmc diagnose`, `hmc resume` and `hmc summary`, for the
/// model of the registry (app/models.hpp) that the config names.

#include "hmc/app/main.hpp"

#include "hmc/app/kokkos_args.hpp"
#include "hmc/app/models.hpp"
#include "hmc/core/arch.hpp"
#include "hmc/core/errors.hpp"
#include "hmc/core/kokkos_shim.hpp"
#include "hmc/core/version.hpp"
#include "hmc/parallel/mpi_context.hpp"
#include "hmc/services/collective.hpp"
#include "hmc/services/generate.hpp"
#include "hmc/services/resolve.hpp"
#include "hmc/services/resume.hpp"
#include "hmc/services/signals.hpp"
#include "hmc/services/summary.hpp"
#include "hmc/services/threads.hpp"

#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <cmath>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using hmc::parallel::MpiContext;
namespace services = hmc::services;

/// The options of a run (and of `hmc diagnose`, which shares --config and --set).
struct Options {
  services::Request run;
  bool list_models = false, list_keys = false, version = false;
};

void setup_cli(CLI::App& app, Options& opt) {
  app.description("hmc: ensemble Hamiltonian Monte Carlo on Kokkos + MPI.\n  mpirun -np 4 hmc --config run.json");
  app.add_option("-c,--config", opt.run.config, "run config (JSON); see docs/config.md");
  app.add_option("-s,--set", opt.run.sets,
                 "override a config key: key.path=value (repeatable; value read as JSON, else as a string)");
  app.add_flag("--validate", opt.run.validate, "check config and data, print the resolved config, exit");
  app.add_flag("--list-models", opt.list_models, "list the models of this executable, exit");
  app.add_flag("--list-keys", opt.list_keys,
               "print every config key as the table rows of docs/config.md (generic keys) and docs/models.md (each "
               "model's keys), exit");
  app.add_flag("-V,--version", opt.version, "print versions of hmc, Kokkos and MPI, exit");
  app.add_flag("--overwrite", opt.run.overwrite,
               "replace existing results in /output/dir (and discard a stopped run waiting there)");
}

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

CLI::App* setup_diagnose(CLI::App& app, Options& opt, services::DiagnoseOptions& d) {
  CLI::App* sub = app.add_subcommand(
      "diagnose",
      "check the model's gradient at points drawn like the initial state, exactly against a forward-mode\n"
      "  reference where the model has log_density_t, else against finite differences; exit code 5 if it is\n"
      "  wrong, 6 if no point could be checked (docs/cli.md)");
  sub->add_option("-c,--config", opt.run.config, "run config (JSON); see docs/config.md");
  sub->add_option("-s,--set", opt.run.sets, "override a config key, as for a run");
  sub->add_option_function<std::string>(
         "--method",
         [&d](const std::string& m) {
           d.method = m == "exact" ? services::DiagnoseMethod::kExact
                                   : (m == "fd" ? services::DiagnoseMethod::kFiniteDifferences
                                                : services::DiagnoseMethod::kAuto);
         },
         "auto (exact where the model has log_density_t, else fd), exact, or fd (finite differences); "
         "default auto")
      ->check(CLI::IsMember({"auto", "exact", "fd"}));
  sub->add_option("--tolerance", d.tolerance,
                  "finite differences: largest accepted relative error |a - fd| / max(|a|, |fd|, 1), on top of "
                  "their measured noise (an entry noisier than 10 x tolerance is unresolved)")
      ->check(kFinitePositive)
      ->capture_default_str();
  sub->add_option("--exact-tolerance", d.exact_tolerance,
                  "exact: largest accepted relative error |a - r| / max(|a|, |r|, 1) against the forward-mode "
                  "reference r")
      ->check(kFinitePositive)
      ->capture_default_str();
  sub->add_option("--points", d.points, "points to check: the starts of particles 0 .. N-1")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  sub->add_option("--step", d.rel_step, "finite-difference step, relative: h_j = STEP * max(1, |theta_j|), and h_j / 2")
      ->check(kFinitePositive)
      ->capture_default_str();
  sub->add_flag("--all", d.all, "print every point, not only the worst point of each coordinate");
  return sub;
}

CLI::App* setup_resume(CLI::App& app, std::string& dir) {
  CLI::App* sub = app.add_subcommand(
      "resume",
      "continue a stopped run from its checkpoint (DIR: its /output/dir); the results are bitwise those of an "
      "uninterrupted run, on any number of ranks (docs/output.md#checkpoints)");
  sub->add_option("dir", dir, "the run's output directory (or its staging directory DIR.partial)")->required();
  return sub;
}

CLI::App* setup_generate(CLI::App& app, services::GenerateRequest& request) {
  CLI::App* sub = app.add_subcommand(
      "generate",
      "compute the log-likelihood, posterior predictive draws and generated quantities of a finished run's draws "
      "(DIR/draws.nc) into a new result set, on any number of ranks (docs/cli.md#hmc-generate)");
  sub->add_option("dir", request.dir, "the finished run's output directory")->required();
  sub->add_option("--output,-o", request.output, "the new result set's directory (default DIR.generated)");
  sub->add_option("--groups", request.groups,
                  "the groups to compute (default: every one the model has): log_likelihood, posterior_predictive, "
                  "generated_quantities")
      ->delimiter(',')
      ->check(CLI::IsMember({"log_likelihood", "posterior_predictive", "generated_quantities"}));
  sub->add_flag("--overwrite", request.overwrite, "replace an existing result set in the output directory");
  return sub;
}

CLI::App* setup_summary(CLI::App& app, std::string& dir, std::string& format, std::string& arviz) {
  CLI::App* sub = app.add_subcommand(
      "summary",
      "print the summary of a finished or checkpointed run, computed from its stored draws, and its PSIS-LOO where "
      "it recorded a log_likelihood group");
  sub->add_option("dir", dir, "the run's output directory (or its staging directory DIR.partial)")->required();
  sub->add_option("--format", format, "table or json")->check(CLI::IsMember({"table", "json"}))->capture_default_str();
  sub->add_option("--arviz", arviz,
                  "the ArviZ whose PSIS-LOO rules to follow: 1 (arviz_stats.loo) or 0.23 (arviz.loo); "
                  "docs/output.md#log-likelihood-and-loo")
      ->check(CLI::IsMember({"1", "0.23"}))
      ->capture_default_str();
  return sub;
}

std::string version_text() {
  std::ostringstream os;
  os << "hmc " << hmc::version() << " (git " << hmc::git_hash() << ")\n"
     << "Kokkos " << hmc::kokkos_version() << ", backends: " << hmc::kokkos_backends()
     << ", default execution space: " << hmc::ExecSpace::name() << "\n"
     << "MPI: " << hmc::parallel::mpi_library_version() << "\n"
     << hmc::arch::describe(hmc::arch::this_build()) << "\n";
  return os.str();
}

void setup_logging(const MpiContext& mpi, const std::string& level) {
  // Logs go to stderr; stdout carries results (the summary table, --validate output).
  auto logger = spdlog::stderr_logger_st("hmc");
  logger->set_pattern(mpi.root() ? "[%H:%M:%S] %v" : "[%H:%M:%S rank " + std::to_string(mpi.rank()) + "] %v");
  logger->set_level(mpi.root() ? spdlog::level::from_str(level) : spdlog::level::err);
  spdlog::set_default_logger(logger);
}

/// A run (fresh or resumed) or its validation, for the model the spec names.
int run(const MpiContext& mpi, const hmc::app::ModelTable& models, const services::RunSpec& spec) {
  if (!spec.validate_only) setup_logging(mpi, spec.run.log.level);
  const auto& model = models.at(spec.run.model);
  return spec.validate_only ? model.validate(mpi, spec) : model.sample(mpi, spec);
}

int run_app(const MpiContext& mpi, const hmc::app::ModelTable& models, int argc, char** argv,
            services::Request request) {
  CLI::App app{"hmc"};
  Options opt;
  opt.run = std::move(request);
  setup_cli(app, opt);
  services::DiagnoseOptions diagnose_opt;
  CLI::App* diagnose = setup_diagnose(app, opt, diagnose_opt);
  std::string resume_dir, summary_dir, summary_format = "table", summary_arviz = "1";
  CLI::App* resume = setup_resume(app, resume_dir);
  CLI::App* summary = setup_summary(app, summary_dir, summary_format, summary_arviz);
  services::GenerateRequest generate_request;
  CLI::App* generate = setup_generate(app, generate_request);
  std::ostringstream sink;
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e, mpi.root() ? std::cout : sink, mpi.root() ? std::cerr : sink);
  } catch (const CLI::ParseError& e) {
    if (mpi.root()) std::cerr << "hmc: " << e.what() << " (see hmc --help)\n";
    return hmc::kExitConfigError;
  }
  if (opt.version || opt.list_models || opt.list_keys) {
    if (mpi.root() && opt.version) std::cout << version_text();
    if (mpi.root() && opt.list_models) {
      for (const auto& m : models.entries()) std::cout << m.info.name << "\t" << m.info.summary << "\n";
    }
    if (mpi.root() && opt.list_keys) std::cout << hmc::app::keys_listing_of(models.infos());
    return hmc::kExitOk;
  }
  if (diagnose->parsed() || summary->parsed()) services::restore_default_signal_handlers();
  if (summary->parsed()) {
    return mpi.root() ? services::print_summary(summary_dir, summary_format, summary_arviz) : hmc::kExitOk;
  }
  if (generate->parsed()) {
    return services::guarded(mpi, [&] {
      const services::RunSpec spec = services::generate_spec(mpi, generate_request, models.names());
      setup_logging(mpi, spec.run.log.level);
      return models.at(spec.run.model).generate(mpi, spec, generate_request);
    });
  }
  if (resume->parsed()) {
    return services::guarded(
        mpi, [&] { return run(mpi, models, services::resume_spec(mpi, resume_dir, opt.run.t0, models.names())); });
  }
  if (opt.run.config.empty()) {
    if (mpi.root()) {
      std::cerr << "hmc: config error: --config FILE is required (see hmc " << (diagnose->parsed() ? "diagnose " : "")
                << "--help)\n";
    }
    return hmc::kExitConfigError;
  }
  return services::guarded(mpi, [&] {
    const services::RunSpec spec = services::resolve(mpi, opt.run, models.catalog());
    if (!diagnose->parsed()) return run(mpi, models, spec);
    return models.at(spec.run.model).diagnose(mpi, spec, diagnose_opt);
  });
}

}  // namespace

int hmc::app::main(int argc, char** argv) {
  services::Request request;  // its t0: the process start
  // Before anything slow: a SIGTERM during start-up (MPI, Kokkos) is then kept, and ends
  // hmc when it starts reading its input (services::ReadingInput, exit code 75).
  services::install_signal_handlers();
  // MPI first, Kokkos second; they are torn down in reverse order.
  MpiContext mpi(&argc, &argv);
  request.command_line.assign(argv, argv + argc);
  // Kokkos' initialisation advice (OMP_PROC_BIND, ...) would print on every rank.
  setenv("KOKKOS_DISABLE_WARNINGS", "1", 0);
  // The models: a name taken twice, or not a word, is a mistake of the executable's build
  // (HMC_REGISTER_MODEL lines); every rank finds it, so no rank aborts the others.
  const ModelTable* models = nullptr;
  try {
    models = &registry();
  } catch (const std::invalid_argument& e) {
    if (mpi.root()) std::cerr << "hmc: error in this executable's models: " << e.what() << "\n";
    return hmc::kExitFailure;
  }
  // HMC_ARCH picks a level of a portable build (its launcher); this executable runs its own.
  if (const std::string refused = hmc::arch::refusal(hmc::arch::this_build()); !refused.empty()) {
    if (mpi.root()) std::cerr << "hmc: config error: " << refused << "\n";
    return hmc::kExitConfigError;
  }
  auto args = hmc::app::split_arguments(argc, argv);
  if (!args.error.empty()) {
    if (mpi.root()) std::cerr << "hmc: config error: " << args.error << "\n";
    return hmc::kExitConfigError;
  }
  // Threads per rank (docs/cli.md#threads-per-rank): the user's number, else this rank's
  // share of the cores it may use; logged, and recorded in run.json.
  std::string threads_source;
  const int user_threads = services::user_host_threads(args.kokkos, threads_source);
  services::HostThreads threads =
      services::choose_host_threads(services::this_cpu(), mpi.node_size(), user_threads, threads_source);
  if (!hmc::kHostOpenMP) threads.threads = 1, threads.source = "this build (no OpenMP backend)";
  services::set_host_threads(threads);
  std::string threads_option = std::string(hmc::kKokkosThreadsOption) + "=" + std::to_string(threads.threads);
  if (threads.chosen()) args.kokkos.push_back(threads_option.data());
  int kokkos_argc = static_cast<int>(args.kokkos.size());
  args.kokkos.push_back(nullptr);
  Kokkos::ScopeGuard kokkos(kokkos_argc, args.kokkos.data());
  if (args.kokkos_help) return hmc::kExitOk;  // Kokkos printed its options
  try {
    return run_app(mpi, *models, static_cast<int>(args.hmc.size()), args.hmc.data(), std::move(request));
  } catch (const std::exception& e) {
    // Often raised on one rank only: the line reaches rank 0's log (MpiContext::fail),
    // and every rank ends.
    mpi.fail("hmc: rank " + std::to_string(mpi.rank()) + ": internal error: " + e.what(), hmc::kExitFailure);
  } catch (...) {
    // Not a std::exception: thrown by a model's own code (models/, or one built outside the tree).
    mpi.fail("hmc: rank " + std::to_string(mpi.rank()) +
                 ": internal error: a value that is not a std::exception was thrown (by a model's code?)",
             hmc::kExitFailure);
  }
}
