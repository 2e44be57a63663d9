#pragma once
/// \file
/// \brief The models hmc ships, by the name a config gives them.
///
/// Each entry turns a validated config into a fully typed run of one model:
/// `services::run_model<Model>` instantiates the sampler's kernels for that model. Adding
/// a model is one header in models/, one line in registry.cpp and its section of
/// docs/models.md, plus its config, data and test (docs/adding-a-model.md); every list of
/// the models (`hmc --list-models`, the docs' tables, the checks of the docs) comes from
/// this registry.

#include "hmc/keys/key.hpp"
#include "hmc/model/gradient_check.hpp"
#include "hmc/parallel/mpi_context.hpp"
#include "hmc/sampler/run.hpp"
#include "hmc/services/resources.hpp"
#include "hmc/services/session.hpp"

#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <vector>

namespace hmc::models {

/// \brief What `hmc diagnose` asks of a model: its gradient checked at points drawn
/// like the run's initial state.
struct DiagnoseRequest {
  const nlohmann::json& model;  ///< the resolved config's /model section
  const nlohmann::json& data;   ///< its data (null when the model needs none)
  sampler::Settings settings;   ///< seed, init radius and init values are used
  int points = 10;              ///< points = the starts of particles 0 .. points - 1
  double rel_step = 3e-4;       ///< finite-difference step, relative (model::check_gradient)
};

struct DiagnoseOutput {
  /// One label per unconstrained coordinate: "theta[j]", plus " (name)" when the
  /// model's parameters are its coordinates (dim() == num_params()).
  std::vector<std::string> labels;
  model::GradientCheck check;
};

struct ModelEntry {
  std::string name;
  std::string summary;
  std::function<keys::Keys()> keys;  ///< config keys the model adds
  /// Builds the model from config and data and returns its sizes (unconstrained
  /// dimension, recorded parameters, scratch); throws ConfigError/DataError on bad input.
  std::function<services::ModelShape(const nlohmann::json& model, const nlohmann::json& data)> check;
  /// The model-typed middle of a run (services/run_model.hpp): builds the model from the
  /// session's config and data and samples it; returns the exit code.
  services::ModelRunner run;
  /// Gradient against finite differences (`hmc diagnose`); same errors as `check`.
  std::function<DiagnoseOutput(const DiagnoseRequest&)> diagnose;
  /// Can it draw initial positions from its prior (/sampler/init/strategy "prior")?
  bool samples_prior = false;
};

const std::vector<ModelEntry>& registry();
/// \brief The entry for `name`, or nullptr.
const ModelEntry* find_model(const std::string& name);
std::vector<std::string> model_names();
/// \brief Model-specific config keys, for io::validate_config.
keys::Keys model_keys(const std::string& name);

}  // namespace hmc::models
