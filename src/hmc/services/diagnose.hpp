#pragma once
/// \file
/// \brief `hmc diagnose --config run.json`: the model's gradient against finite
/// differences at the points where the run's particles would start, as a table on
/// stdout; exit code 5 when it fails (docs/cli.md). Config and data are resolved as for a
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

/// \brief `hmc diagnose`'s own options (docs/cli.md).
struct DiagnoseOptions {
  double tolerance = 1e-6;  ///< largest accepted relative error, on top of the rounding noise
  int points = 10;          ///< the starts of particles 0 .. points - 1
  double rel_step = 3e-4;   ///< finite-difference step, relative (model::check_gradient)
  bool all = false;         ///< every point in the table, not only each coordinate's worst
};

/// \brief The check and how its coordinates are labelled: "theta[j]", plus " (name)"
/// when the model's parameters are its coordinates (dim() == num_params()).
struct GradientReport {
  std::vector<std::string> labels;
  model::GradientCheck check;
};

/// \brief The gradient of `model` checked at the initial positions of particles
/// 0 .. points - 1 of a run with settings `s` (seed, init radius, init values).
template <class Model>
GradientReport gradient_report(const Model& model, const sampler::Settings& s, int points, double rel_step) {
  const int d = model.dim();
  const auto& centre = s.init_values;
  const auto starts = model::initial_points(points, d, s.init_radius, s.seed,
                                            static_cast<int>(centre.size()) == d ? centre : std::vector<double>{});
  GradientReport out;
  out.check = model::check_gradient(model, starts, rel_step);
  const auto names = model.parameter_names();
  for (int j = 0; j < d; ++j) {
    out.labels.push_back("theta[" + std::to_string(j + 1) + "]" +
                         (model.num_params() == d ? " (" + names[j] + ")" : std::string()));
  }
  return out;
}

/// \brief The table: one row per coordinate at its worst point (every point with
/// `d.all`), then the log-density consistency and the verdict.
std::string gradient_table(const std::string& model, const sampler::Settings& s, const DiagnoseOptions& d,
                           const GradientReport& report);

/// \brief One line for stderr when the check failed: where it fails worst.
std::string gradient_failure(const GradientReport& report, double tolerance);

/// \brief `hmc diagnose` of `Model` (collective); returns the exit code (0, 2, 3 or 5)
/// on every rank.
template <class Model>
int diagnose(const parallel::MpiContext& mpi, const RunSpec& spec, const DiagnoseOptions& d) {
  return guarded(mpi, [&] {
    int code = kExitOk;
    on_root(mpi, [&] {
      const Model model = build_model<Model>(spec);
      check_against_model(spec.run, shape_of(model, spec.data), model::can_sample_prior<Model>());
      const GradientReport report = gradient_report(model, spec.run.sampler, d.points, d.rel_step);
      std::cout << gradient_table(spec.run.model, spec.run.sampler, d, report) << std::flush;
      if (!report.check.passed(d.tolerance)) {
        std::cerr << "hmc: gradient check failed: " << gradient_failure(report, d.tolerance) << "\n";
        code = kExitGradientCheck;
      }
    });
    return mpi.broadcast(code);
  });
}

}  // namespace hmc::services
