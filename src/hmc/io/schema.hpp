#pragma once
/// \file
/// \brief The config schema: the generic keys, which every config may have whatever its
/// model. Each model adds its own (`config_keys()`, which the registry of app/models.hpp
/// collects). Keys are built with keys/key.hpp; docs/config.md holds their table rows as
/// `hmc --list-keys` prints them, and a test checks that it does.

#include "hmc/keys/key.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace hmc::io {

using keys::KeySpec;
using keys::KeyType;
using keys::type_name;

/// \brief The keys every config may have, whatever its model. `model_names` are the
/// choices of /model/name and `format_names` those of /output/formats (the draw formats
/// of io/draw_writer.hpp); an empty list accepts any name (reading a config that was
/// validated already, io::run_config).
std::vector<KeySpec> generic_keys(const std::vector<std::string>& model_names,
                                  const std::vector<std::string>& format_names);

}  // namespace hmc::io
