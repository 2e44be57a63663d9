#pragma once
/// \file
/// \brief The models hmc ships, by the name a config gives them.
///
/// Each entry turns a validated config into a fully typed run of one model:
/// `run_model<Model>` instantiates the sampler's kernels for that model. Adding
/// a model is one header in models/ and one line in registry.cpp.

#include "hmc/io/schema.hpp"
#include "hmc/parallel/mpi_context.hpp"
#include "hmc/sampler/run.hpp"

#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <vector>

namespace hmc::models {

struct RunRequest {
  const nlohmann::json& model;  ///< the resolved config's /model section
  const nlohmann::json& data;   ///< its data (null when the model needs none)
  sampler::Settings settings;
  const parallel::MpiContext& mpi;
  sampler::ProgressCallback progress;
};

struct RunOutput {
  std::vector<std::string> names;  ///< parameter names, model order
  sampler::LocalDraws all;         ///< the whole ensemble on rank 0; empty elsewhere
  double sampling_s = 0.0;         ///< slowest rank's sampling time
  double gather_s = 0.0;
};

struct ModelEntry {
  std::string name;
  std::string summary;
  std::function<std::vector<io::KeySpec>()> keys;  ///< config keys the model adds
  /// Builds the model from config and data; throws ConfigError/DataError on bad input.
  std::function<void(const nlohmann::json& model, const nlohmann::json& data)> check;
  std::function<RunOutput(const RunRequest&)> run;
};

const std::vector<ModelEntry>& registry();
/// \brief The entry for `name`, or nullptr.
const ModelEntry* find_model(const std::string& name);
std::vector<std::string> model_names();
/// \brief Model-specific config keys, for io::validate_config.
std::vector<io::KeySpec> model_keys(const std::string& name);

}  // namespace hmc::models
