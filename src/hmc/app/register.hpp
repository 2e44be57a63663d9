#pragma once
/// \file
/// \brief How a model joins an `hmc` executable: `entry_of<Model>` instantiates the
/// services (a run, `--validate`, `hmc diagnose`) for its type, and
/// `HMC_REGISTER_MODEL(Type, "name", "summary")`, one line in the model's own header,
/// adds it to the executable that includes the header (docs/adding-a-model.md):
///
///     struct PoissonRegression { ... };            // the model concept (model/concept.hpp)
///     HMC_REGISTER_MODEL(PoissonRegression, "poisson_regression",
///                        "counts with a log link, Normal priors");
///
/// The line goes at global scope (outside any namespace). `hmc_add_executable(NAME
/// MODELS header.hpp ...)` (CMake, cmake/hmcAddExecutable.cmake) and `hmc-build-model`
/// build an executable that includes such headers and runs hmc's command line with the
/// shipped models and these. A type that lacks a member of the model concept stops the
/// build with the concept's one message naming it.

#include "hmc/app/models.hpp"
#include "hmc/io/draw_writer.hpp"
#include "hmc/model/concept.hpp"
#include "hmc/services/diagnose.hpp"
#include "hmc/services/prepare.hpp"
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

/// \brief Registers the model type `Type` under the config name `name` (a string
/// literal, /model/name) with a one-line `summary` (`hmc --list-models`). Write it once,
/// at global scope, in the model's header, after the type.
#define HMC_REGISTER_MODEL(Type, name, summary) \
  template <>                                   \
  inline const bool hmc::app::registered<Type> = ::hmc::app::register_model<Type>(name, summary, __FILE__)
