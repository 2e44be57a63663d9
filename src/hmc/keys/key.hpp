#pragma once
/// \file
/// \brief A config key, named and built one property at a time:
///
///     keys::number("/model/sigma").positive().default_(1.0).doc("noise standard deviation")
///
/// The schema of a config is a list of these: the generic keys (io/schema.cpp) and each
/// model's `config_keys()`. Everything about a key comes from its one entry there:
/// - the validation of a config and the defaults filled in (io::validate_config, through
///   keys::check_value);
/// - the typed values a model reads (keys/values.hpp), defaults included;
/// - the "did you mean" suggestions for unknown keys;
/// - the key tables of docs/config.md and docs/models.md (`hmc --list-keys`; a test
///   checks that the docs hold them).
///
/// Keys are JSON pointers ("/sampler/particles"); a section (an object of keys) is listed
/// before its keys.

#include <nlohmann/json.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace hmc::keys {

enum class KeyType {
  kSection,  ///< object whose children are keys of the schema
  kInteger,
  kNumber,
  kString,
  kBoolean,
  kNumberArray,   ///< array of numbers
  kNumberMatrix,  ///< array of equally long arrays of numbers
  kData,          ///< a path (string) or an inline object
  kStrings,       ///< a non-empty array of distinct strings, or one string (a one-element array, or an alias)
};

/// \brief "an integer", "an array of numbers", ...: the type as an error message says it.
const char* type_name(KeyType t);

/// \brief One key of the schema. Build it with the functions below and the chained
/// setters; read its fields.
struct KeySpec {
  std::string pointer;  ///< e.g. "/sampler/particles"
  KeyType type = KeyType::kSection;
  nlohmann::json default_value = nullptr;  ///< null: no default
  std::optional<double> min{};             ///< inclusive unless min_exclusive (for arrays: every element)
  std::optional<double> max{};             ///< inclusive
  bool min_exclusive = false;
  std::vector<std::string> choices{};  ///< allowed strings, if any (kStrings: for every element)
  /// kStrings: a string that stands for a list (`"both"` for `["netcdf", "csv"]`).
  std::vector<std::pair<std::string, std::vector<std::string>>> aliases{};
  std::optional<std::size_t> exact_length{};  ///< arrays: exactly this many elements
  bool is_required = false;
  std::string description{};
  std::string default_text{};  ///< docs: the default in words, for a key without a default value
  std::string allowed_text{};  ///< docs: the allowed values in words, instead of those derived above

  /// The value the config gets when it leaves the key out (and its section is there).
  KeySpec& default_(nlohmann::json v) {
    default_value = std::move(v);
    return *this;
  }
  /// > 0.
  KeySpec& positive() { return above(0.0); }
  /// >= 0.
  KeySpec& non_negative() { return at_least(0.0); }
  /// > lo.
  KeySpec& above(double lo) {
    min = lo;
    min_exclusive = true;
    return *this;
  }
  /// >= lo.
  KeySpec& at_least(double lo) {
    min = lo;
    min_exclusive = false;
    return *this;
  }
  /// <= hi.
  KeySpec& at_most(double hi) {
    max = hi;
    return *this;
  }
  /// lo <= x <= hi.
  KeySpec& in_range(double lo, double hi) { return at_least(lo).at_most(hi); }
  /// One of these strings.
  KeySpec& one_of(std::vector<std::string> allowed) {
    choices = std::move(allowed);
    return *this;
  }
  /// kStrings: `name` given as a string means `values`.
  KeySpec& alias(std::string name, std::vector<std::string> values) {
    aliases.emplace_back(std::move(name), std::move(values));
    return *this;
  }
  /// An array of exactly n elements.
  KeySpec& length(std::size_t n) {
    exact_length = n;
    return *this;
  }
  /// The config must give it (no default).
  KeySpec& required() {
    is_required = true;
    return *this;
  }
  /// Docs: what happens when the key is left out, for a key without a default value
  /// ("all 0", "categorical: the data's `num_states`").
  KeySpec& default_doc(std::string text) {
    default_text = std::move(text);
    return *this;
  }
  /// Docs: the allowed values in words, where a rule joins keys or data ("D elements")
  /// and the range alone would say too little. The checks above still apply.
  KeySpec& allowed(std::string text) {
    allowed_text = std::move(text);
    return *this;
  }
  /// What it means, for docs/config.md and `hmc --list-keys`.
  KeySpec& doc(std::string text) {
    description = std::move(text);
    return *this;
  }
};

inline KeySpec key(std::string pointer, KeyType type) {
  KeySpec k;
  k.pointer = std::move(pointer);
  k.type = type;
  return k;
}
/// An object whose members are keys of their own.
inline KeySpec section(std::string pointer) { return key(std::move(pointer), KeyType::kSection); }
inline KeySpec integer(std::string pointer) { return key(std::move(pointer), KeyType::kInteger); }
inline KeySpec number(std::string pointer) { return key(std::move(pointer), KeyType::kNumber); }
inline KeySpec string(std::string pointer) { return key(std::move(pointer), KeyType::kString); }
inline KeySpec boolean(std::string pointer) { return key(std::move(pointer), KeyType::kBoolean); }
/// An array of numbers.
inline KeySpec numbers(std::string pointer) { return key(std::move(pointer), KeyType::kNumberArray); }
/// An array of equally long arrays of numbers.
inline KeySpec matrix(std::string pointer) { return key(std::move(pointer), KeyType::kNumberMatrix); }
/// A file path or an inline object.
inline KeySpec data(std::string pointer) { return key(std::move(pointer), KeyType::kData); }
/// A list of distinct strings (usually with one_of), or one of them, or an alias, as a string.
inline KeySpec strings(std::string pointer) { return key(std::move(pointer), KeyType::kStrings); }

using Keys = std::vector<KeySpec>;

/// \brief Checks one value against its key: type, range, length, choices; no NUL in
/// strings, no subnormal numbers. Throws ConfigError ("config error: /model/sigma must be
/// > 0 (got -1)").
void check_value(const KeySpec& spec, const nlohmann::json& v);

/// \brief A kStrings value as its list: a string is its alias's list, or itself.
std::vector<std::string> string_list(const KeySpec& spec, const nlohmann::json& v);

/// \brief The key of `keys` whose pointer is `pointer`, or nullptr.
const KeySpec* find(const Keys& keys, const std::string& pointer);

/// \brief The default as docs show it ("1.0", "[70, 150]", "" when none).
std::string shown_default(const KeySpec& spec);

/// \brief The allowed values as docs show them ("> 0", "1 to 16", "`uniform`, `dirichlet`", "").
std::string shown_range(const KeySpec& spec);

/// \brief The key's row of the tables of docs/config.md and docs/models.md:
/// "| `/model/sigma` | number | `3.0` | > 0 | the known noise sd |".
std::string markdown_row(const KeySpec& spec);

/// \brief The header of those tables (two lines).
std::string markdown_header();

}  // namespace hmc::keys
