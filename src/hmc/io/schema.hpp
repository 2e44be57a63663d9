#pragma once
/// \file
/// \brief The config schema: every key's type, default, range and meaning.
///
/// Keys are JSON pointers ("/sampler/particles"). The generic keys live here; each
/// model adds its own (see models/registry.cpp). docs/config.md documents the same
/// keys, and a test checks that none is missing there.

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace hmc::io {

enum class KeyType {
  kSection,  ///< object whose children are keys of the schema
  kInteger,
  kNumber,
  kString,
  kBoolean,
  kNumberArray,   ///< array of numbers
  kNumberMatrix,  ///< array of equally long arrays of numbers
  kData,          ///< a path (string) or an inline object
};

const char* type_name(KeyType t);

struct KeySpec {
  std::string pointer;  ///< e.g. "/sampler/particles"
  KeyType type;
  nlohmann::json default_value = nullptr;  ///< null: no default
  std::optional<double> min{};             ///< inclusive unless min_exclusive
  std::optional<double> max{};
  bool min_exclusive = false;
  std::vector<std::string> choices{};  ///< allowed strings, if any
  bool required = false;
  std::string doc{};
};

/// \brief The keys every config may have, whatever its model.
std::vector<KeySpec> generic_keys(const std::vector<std::string>& model_names);

}  // namespace hmc::io
