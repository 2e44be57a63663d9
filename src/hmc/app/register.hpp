#pragma once
/// \file
/// \brief How a model joins the registry (app/models.hpp), for hmc's own models and a
/// user's alike: `HMC_REGISTER_MODEL(Type, "name", "summary")`, one line at global scope
/// after the type, adds it to every executable that links the line (docs/adding-a-model.md):
///
///     struct PoissonRegression { ... };            // the model concept (model/concept.hpp)
///     HMC_REGISTER_MODEL(PoissonRegression, "poisson_regression",
///                        "counts with a log link, Normal priors");
///
/// The shipped models are the lines of models/shipped.cpp; a user's are in the user's
/// headers, which `hmc_add_executable(NAME MODELS header.hpp ...)` (CMake,
/// cmake/hmcAddExecutable.cmake) and `hmc-build-model` compile into an executable with
/// the shipped models. `entry_of<Model>` instantiates the services (a run, `--validate`,
/// `hmc diagnose`) for the type. A type that lacks a member of the model concept stops
/// the build with the concept's one message naming it.

#if defined(HMC_MODEL_HEADERS_ONLY)
// A compile-only check of the models' device code (tests/compile/nvcc/check.sh, against a
// stand-in Kokkos): a model header's HMC_REGISTER_MODEL line registers nothing, and the
// registry and the services (MPI, the sampler's host code) are not included.
#define HMC_REGISTER_MODEL(Type, name, summary) static_assert(true, "")
#else

#include "hmc/app/models.hpp"
#include "hmc/io/draw_writer.hpp"
#include "hmc/model/concept.hpp"
#include "hmc/services/diagnose.hpp"
#include "hmc/services/generate.hpp"
#include "hmc/services/preflight.hpp"
#include "hmc/services/prepare.hpp"
#include "hmc/services/resources.hpp"
#include "hmc/services/sample.hpp"

#include <string>

namespace hmc::app {

/// \brief The entry of Model: its info and its services (instantiated here).
template <class Model>
ModelEntry entry_of(const char* name, const char* summary, const char* origin) {
  ModelEntry e;
  e.info = ModelInfo{name, summary, &Model::config_keys, model::can_sample_prior<Model>(), origin};
  e.sample = [](const parallel::MpiContext& mpi, const services::RunSpec& spec) {
    return services::sample<Model>(mpi, spec, io::draw_formats());
  };
  e.validate = [](const parallel::MpiContext& mpi, const services::RunSpec& spec) {
    return services::validate<Model>(mpi, spec, io::draw_formats());
  };
  e.diagnose = [](const parallel::MpiContext& mpi, const services::RunSpec& spec, const services::DiagnoseOptions& d) {
    return services::diagnose<Model>(mpi, spec, d);
  };
  e.generate = [](const parallel::MpiContext& mpi, const services::RunSpec& spec,
                  const services::GenerateRequest& request) {
    return services::generate<Model>(mpi, spec, request, io::draw_formats());
  };
  e.check = [](const services::RunSpec& spec) {
    const Model model = Model::from_config(spec.run.model_section, spec.data);
    const auto shape = services::shape_of(model, spec.data);
    services::check_against_model(spec.run, shape, model::can_sample_prior<Model>());
    services::check_memory(spec.run, shape, 1, 1);
    (void)services::estimate_output_bytes(spec.run, services::store_layout(model, spec.run), shape, io::draw_formats());
  };
  return e;
}

/// \brief Appends Model's entry to registered_models(); what HMC_REGISTER_MODEL runs.
/// A Model that does not meet the concept fails to compile here with the concept's one
/// message, and nothing else.
template <class Model>
bool register_model(const char* name, const char* summary, const char* origin) {
  if constexpr (model::check_registrable_model<Model>()) {
    registered_models().push_back(entry_of<Model>(name, summary, origin));
    return true;
  } else {
    return false;  // not reached: it does not compile
  }
}

/// \brief One per registered type: a model is registered once however many files include
/// its header (an inline variable is one object in the whole program).
template <class Model>
extern const bool registered;

}  // namespace hmc::app

/// \brief The origin a registration records (ModelInfo::origin): the file of the
/// HMC_REGISTER_MODEL line, or "hmc" in models/shipped.cpp, which defines it first.
#ifndef HMC_MODEL_ORIGIN
#define HMC_MODEL_ORIGIN __FILE__
#endif

/// \brief Registers the model type `Type` under the config name `name` (a string
/// literal, /model/name) with a one-line `summary` (`hmc --list-models`). Write it once,
/// at global scope, after the type: in the model's header, or for a shipped model in
/// models/shipped.cpp.
#define HMC_REGISTER_MODEL(Type, name, summary) \
  template <>                                   \
  inline const bool hmc::app::registered<Type> = ::hmc::app::register_model<Type>(name, summary, HMC_MODEL_ORIGIN)

#endif  // HMC_MODEL_HEADERS_ONLY
