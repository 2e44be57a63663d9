#pragma once
/// \file
/// \brief The config schema: the generic keys, which every config may have whatever its
/// model. Each model adds its own (`config_keys()`, see models/registry.cpp). Keys are
/// built with keys/key.hpp; docs/config.md holds their table rows as `hmc --list-keys`
/// prints them, and a test checks that it does.

#include "hmc/keys/key.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace hmc::io {

using keys::KeySpec;
using keys::KeyType;
using keys::type_name;

/// \brief The keys every config may have, whatever its model.
std::vector<KeySpec> generic_keys(const std::vector<std::string>& model_names);

}  // namespace hmc::io
