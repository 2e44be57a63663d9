#pragma once
/// \file
/// \brief The model of a run, built once per rank, and the checks that need it
/// (services/preflight.hpp): what every command that runs a model does first.

#include "hmc/core/draw_source.hpp"
#include "hmc/core/errors.hpp"
#include "hmc/io/draw_writer.hpp"
#include "hmc/io/json_text.hpp"
#include "hmc/model/concept.hpp"
#include "hmc/sampler/kernels.hpp"
#include "hmc/services/collective.hpp"
#include "hmc/services/preflight.hpp"
#include "hmc/services/resources.hpp"
#include "hmc/services/run_spec.hpp"

#include <iostream>
#include <optional>
#include <string>
#include <utility>

namespace hmc::services {

/// \brief What the store of a run of `model` holds.
template <class Model>
hmc::StoreLayout store_layout(const Model& model, const io::RunConfig& run) {
  hmc::StoreLayout layout;
  layout.particles = run.sampler.particles;
  layout.param_names = model.parameter_names();
  layout.dim_names = model::dim_names(model);
  layout.draws = run.kept_draws();
  layout.warmup_draws = run.kept_warmup_draws();
  layout.stats = sampler::kernel_info(run.sampler, model.dim()).stats;
  // In the order of the sampler's groups buffer (sampler/run.hpp: record_groups).
  for (const auto& [wanted, name] : {std::pair{run.sampler.log_likelihood, "log_likelihood"},
                                     std::pair{run.sampler.posterior_predictive, "posterior_predictive"}}) {
    if (!wanted) continue;
    hmc::DrawGroup g{name, {}};
    for (const auto& a : model::observations(model)) g.arrays.push_back(a);
    layout.groups.push_back(std::move(g));
  }
  if (run.sampler.generated_quantities) {
    layout.groups.push_back(hmc::DrawGroup{"generated_quantities", model::generated_quantities(model)});
  }
  return layout;
}

/// \brief The fixed arrays of a run of `model` for draws.nc: its observed data and
/// covariates, with /output/log_likelihood or /output/posterior_predictive (ArviZ's loo
/// and plot_ppc read them).
template <class Model>
std::vector<hmc::DataArray> data_arrays(const Model& model, const io::RunConfig& run) {
  std::vector<hmc::DataArray> out;
  if (!run.sampler.log_likelihood && !run.sampler.posterior_predictive) return out;
  for (auto& a : model::observations(model)) {
    a.group = "observed_data";
    out.push_back(std::move(a));
  }
  for (auto& a : model::constant_data(model)) {
    a.group = "constant_data";
    out.push_back(std::move(a));
  }
  return out;
}

/// \brief The sizes of `model` that drive memory.
template <class Model>
ModelShape shape_of(const Model& model, const nlohmann::json& data) {
  ModelShape shape{model.dim(), model.num_params(), model::scratch_size(model), io::data_bytes(data)};
  std::int64_t observed = 0, generated = 0;
  for (const auto& a : model::observations(model)) observed += a.size();
  for (const auto& a : model::generated_quantities(model)) generated += a.size();
  if constexpr (model::has_log_likelihood<Model>()) shape.observed = observed;
  if constexpr (model::has_posterior_predictive<Model>()) shape.predicted = observed;
  if constexpr (model::has_generated_quantities<Model>()) shape.generated = generated;
  return shape;
}

/// \brief Model::from_config of `spec`'s model section and data. What the model throws
/// that is not a std::exception (`throw 42;`) becomes a RunError naming the model, not
/// an abort.
template <class Model>
Model build_model(const RunSpec& spec) {
  try {
    return Model::from_config(spec.run.model_section, spec.data);
  } catch (const std::exception&) {
    throw;
  } catch (...) {
    throw RunError("model " + spec.run.model +
                   ": from_config threw a value that is not a std::exception (a model reports bad input by throwing "
                   "hmc::ConfigError or hmc::DataError: docs/adding-a-model.md)");
  }
}

/// \brief Which checks a command makes before it runs (services/preflight.hpp); the
/// checks against the model's dimension and abilities are always made.
struct Checks {
  bool memory = false;  ///< check_memory: the run fits the host and the device
  bool disk = false;    ///< check_disk: the results fit the file system of /output/dir
};

/// \brief The model of `spec`, built once on every rank (collective). Rank 0 builds it
/// first and checks the run against it while the others wait, so a refused run costs
/// them nothing; an error is raised on every rank (rank 0 prints it: report()).
template <class Model>
Model prepare_model(const parallel::MpiContext& mpi, const RunSpec& spec, const io::DrawFormats& formats,
                    Checks checks) {
  const int node_ranks = checks.memory ? ranks_on_node(mpi) : 1;
  std::optional<Model> model;
  // What depends on the run's size (the HMM's /model/forward auto) is settled from the
  // largest share of the particles, the same on every rank.
  const long per_rank = static_cast<long>((spec.run.sampler.particles + mpi.size() - 1) / mpi.size());
  const auto build = [&] {
    model.emplace(build_model<Model>(spec));
    model::plan(*model, per_rank, static_cast<long>(ExecSpace().concurrency()));
  };
  on_root(mpi, [&] {
    build();
    const ModelShape shape = shape_of(*model, spec.data);
    check_against_model(spec.run, shape, model::can_sample_prior<Model>());
    if (checks.memory) check_memory(spec.run, shape, mpi.size(), node_ranks);
    if (checks.disk) check_disk(spec.run, store_layout(*model, spec.run), shape, formats);
  });
  // The same config and data: what rank 0 accepted builds here too.
  if (!mpi.root()) build();
  return std::move(*model);
}

/// \brief `hmc --validate`: the checks of a run but the disk's, then the resolved config
/// on stdout (rank 0). Returns the exit code.
template <class Model>
int validate(const parallel::MpiContext& mpi, const RunSpec& spec, const io::DrawFormats& formats) {
  return guarded(mpi, [&] {
    (void)prepare_model<Model>(mpi, spec, formats, Checks{true, false});
    if (mpi.root()) std::cout << hmc::dump_text(spec.config, 2) << "\n";
    return kExitOk;
  });
}

}  // namespace hmc::services
