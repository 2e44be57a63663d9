#pragma once
/// \file
/// \brief `hmc diagnose --config run.json`: the model's gradient checked at the points
/// where the run's particles would start, exactly against a forward-mode reference where
/// the model has log_density_t, else against finite differences (model/gradient_check.hpp),
/// as a table on stdout; exit code 5 when the gradient is shown wrong, 6 when no point
/// could be checked (docs/cli.md). Config and data are resolved as for a
/// run (services/resolve.hpp: the same errors and exit codes on every rank); the model is
/// built and checked on rank 0 only.

#include "hmc/core/errors.hpp"
#include "hmc/model/concept.hpp"
#include "hmc/model/gradient_check.hpp"
#include "hmc/parallel/mpi_context.hpp"
#include "hmc/sampler/settings.hpp"
#include "hmc/services/collective.hpp"
#include "hmc/services/prepare.hpp"
#include "hmc/services/run_spec.hpp"

#include <iostream>
#include <string>
#include <vector>

namespace hmc::services {

/// \brief How `hmc diagnose` checks the gradient (--method).
enum class DiagnoseMethod {
  kAuto,               ///< exact where the model has log_density_t, else finite differences
  kExact,              ///< against the forward-mode reference (a config error without log_density_t)
  kFiniteDifferences,  ///< against finite differences, for any model
};

/// \brief `hmc diagnose`'s own options (docs/cli.md).
struct DiagnoseOptions {
  double tolerance = 1e-6;  ///< finite differences: largest accepted relative error, on top of their noise
  double exact_tolerance = model::kExactTolerance;  ///< exact: largest accepted relative error
  int points = 10;                                  ///< the starts of particles 0 .. points - 1
  double rel_step = 3e-4;                           ///< finite-difference step, relative (model::check_gradient)
  DiagnoseMethod method = DiagnoseMethod::kAuto;
  bool all = false;  ///< every point in the table, not only each coordinate's worst
};

/// \brief The check, the tolerance its verdicts are taken at (the method's), and how its
/// coordinates are labelled: "theta[j]", plus " (name)" when the model's parameters are
/// its coordinates (dim() == num_params()).
struct GradientReport {
  std::vector<std::string> labels;
  model::GradientCheck check;
  double tolerance = 0.0;
  bool reference_available = false;  ///< the model has log_density_t (an exact reference)
};

/// \brief The gradient of `model` checked at the initial positions of particles
/// 0 .. d.points - 1 of a run with settings `s` (seed, init radius, init values), by the
/// method of `d` (auto: exact where the model has log_density_t).
template <class Model>
GradientReport gradient_report(const Model& model, const sampler::Settings& s, const DiagnoseOptions& d) {
  constexpr bool reference = model::has_forward_reference<Model>();
  if (d.method == DiagnoseMethod::kExact && !reference) {
    throw ConfigError(
        "config error: --method exact: the model has no `template <class T, class Q> T log_density_t(const Q& q) "
        "const` to give a reference gradient; use --method auto or fd");
  }
  const int n = model.dim();
  const auto& centre = s.init_values;
  const auto starts = model::initial_points(d.points, n, s.init_radius, s.seed,
                                            static_cast<int>(centre.size()) == n ? centre : std::vector<double>{});
  GradientReport out;
  out.reference_available = reference;
  bool done = false;
  if constexpr (reference) {
    if (d.method != DiagnoseMethod::kFiniteDifferences) {
      out.check = model::check_gradient_exact(model, starts);
      out.tolerance = d.exact_tolerance;
      done = true;
    }
  }
  if (!done) {
    out.check = model::check_gradient(model, starts, d.rel_step);
    out.tolerance = d.tolerance;
  }
  const auto names = model.parameter_names();
  for (int j = 0; j < n; ++j) {
    out.labels.push_back("theta[" + std::to_string(j + 1) + "]" +
                         (model.num_params() == n ? " (" + names[j] + ")" : std::string()));
  }
  return out;
}

/// \brief The table: one row per coordinate at its worst point (every point with
/// `d.all`), then the log-density consistency, the counts of points and the verdict.
std::string gradient_table(const std::string& model, const sampler::Settings& s, const DiagnoseOptions& d,
                           const GradientReport& report);

/// \brief One line for stderr when the gradient is shown wrong: where it is worst.
std::string gradient_failure(const GradientReport& report);

/// \brief One line for stderr when the check is inconclusive: why no point was checked.
std::string gradient_inconclusive(const GradientReport& report);

/// \brief The exit code of a verdict: 0 passed, 5 (kExitGradientCheck) wrong, 6
/// (kExitGradientInconclusive) inconclusive.
inline int exit_code_of(model::Verdict v) {
  if (v == model::Verdict::kWrong) return kExitGradientCheck;
  return v == model::Verdict::kInconclusive ? kExitGradientInconclusive : kExitOk;
}

/// \brief `hmc diagnose` of `Model` (collective); returns the exit code (0, 2, 3, 5 or
/// 6) on every rank.
template <class Model>
int diagnose(const parallel::MpiContext& mpi, const RunSpec& spec, const DiagnoseOptions& d) {
  return guarded(mpi, [&] {
    int code = kExitOk;
    on_root(mpi, [&] {
      // Prepared as for a run (model::plan: an automatic gradient's tape, the HMM's
      // /model/forward auto), so the gradient checked is the one the sampler uses.
      Model model = build_model<Model>(spec);
      const long per_rank = static_cast<long>((spec.run.sampler.particles + mpi.size() - 1) / mpi.size());
      model::plan(model, per_rank, static_cast<long>(ExecSpace().concurrency()));
      check_against_model(spec.run, shape_of(model, spec.data), model::can_sample_prior<Model>());
      const GradientReport report = gradient_report(model, spec.run.sampler, d);
      std::cout << gradient_table(spec.run.model, spec.run.sampler, d, report) << std::flush;
      code = exit_code_of(report.check.verdict(report.tolerance));
      if (code == kExitGradientCheck) std::cerr << "hmc: gradient check failed: " << gradient_failure(report) << "\n";
      if (code == kExitGradientInconclusive) {
        std::cerr << "hmc: gradient check inconclusive: " << gradient_inconclusive(report) << "\n";
      }
    });
    return mpi.broadcast(code);
  });
}

}  // namespace hmc::services
