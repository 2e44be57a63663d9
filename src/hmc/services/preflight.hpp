#pragma once
/// \file
/// \brief The checks of a resolved config that need the model built: keys that depend on
/// its dimension, the step size and path length, and the disk the results will take.
/// Rank 0 runs them before anything is allocated or written (docs/config.md#validation).

#include "hmc/services/resources.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace hmc::services {

/// \brief Throws ConfigError for settings that cannot work with this model: init values
/// of the wrong length, "prior" init for a model that cannot draw from its prior, an
/// empty /output/dir, a path length (step size x steps) that is not finite or underflows,
/// superchains that do not divide the particles, a dense metric beyond its size limit.
void check_against_model(const nlohmann::json& config, const ModelShape& shape, const std::string& model,
                         bool samples_prior);

/// \brief Throws RunError (exit code 4) when the results cannot fit on the file system of
/// /output/dir (estimate_output_bytes against free_disk_bytes).
void check_disk(const nlohmann::json& config, const ModelShape& shape);

}  // namespace hmc::services
