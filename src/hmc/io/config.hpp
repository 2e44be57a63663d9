#pragma once
/// \file
/// \brief Reading, overriding, validating and resolving a run's JSON config.

#include "hmc/io/schema.hpp"

#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <vector>

namespace hmc::io {

/// Given a model name, the schema keys that model adds (e.g. "/model/priors/a").
using ModelKeys = std::function<std::vector<KeySpec>(const std::string& model_name)>;

/// \brief What a build offers that a config can name: its models (and the keys each
/// adds) and its draw formats (io/draw_writer.hpp).
struct Catalog {
  std::vector<std::string> models;
  ModelKeys model_keys;
  std::vector<std::string> formats;
};

/// \brief A config ready to run: every default filled in, data loaded.
struct ResolvedConfig {
  nlohmann::json config;  ///< resolved; /model/data is an absolute path or the inline object
  nlohmann::json data;    ///< the model's data (an object), or null when the model has none
};

/// \brief Parses a JSON file; throws ConfigError naming the file.
nlohmann::json read_config_file(const std::string& path);

/// \brief Applies one `--set key.path=value`; the value is JSON when it parses as JSON,
/// else a string. A relative /model/data path is taken relative to the working directory.
void apply_override(nlohmann::json& config, const std::string& assignment);

/// \brief Checks every key against the schema and fills in defaults. Relative
/// /model/data paths are resolved against `config_dir`. Throws ConfigError.
void validate_config(nlohmann::json& config, const Catalog& catalog, const std::string& config_dir);

/// \brief Loads /model/data (file or inline object). Throws DataError naming the file.
nlohmann::json load_data(const nlohmann::json& config);

/// \brief read + overrides + validate + load data, in that order.
ResolvedConfig resolve_config(const std::string& path, const std::vector<std::string>& overrides,
                              const Catalog& catalog);

/// \brief Levenshtein distance, for "did you mean" suggestions.
std::size_t edit_distance(const std::string& a, const std::string& b);

/// \brief The complete schema of a config for `model_name`.
std::vector<KeySpec> all_keys(const Catalog& catalog, const std::string& model_name);

}  // namespace hmc::io
