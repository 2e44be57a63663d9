#include "hmc/keys/values.hpp"

#include "hmc/core/errors.hpp"

#include <stdexcept>

namespace hmc::keys {

using nlohmann::json;

Values::Values(const json& section, Keys keys, std::string prefix)
    : section_(section), keys_(std::move(keys)), prefix_(std::move(prefix)) {}

const KeySpec& Values::spec(const std::string& pointer) const {
  const KeySpec* k = find(keys_, pointer);
  // A pointer that is not among the keys is a mistake in the model's code, not the user's.
  if (!k || pointer.rfind(prefix_ + "/", 0) != 0) throw std::logic_error("keys::Values: no key " + pointer);
  return *k;
}

bool Values::given(const std::string& pointer) const {
  spec(pointer);
  if (!section_.is_object()) return false;
  return section_.contains(json::json_pointer(pointer.substr(prefix_.size())));
}

const json& Values::value(const std::string& pointer) const {
  const KeySpec& k = spec(pointer);
  if (given(pointer)) {
    const json& v = section_.at(json::json_pointer(pointer.substr(prefix_.size())));
    check_value(k, v);
    return v;
  }
  if (k.default_value.is_null()) throw ConfigError("config error: missing required key " + pointer);
  return k.default_value;
}

void Values::unlisted(const std::string& pointer, const std::string& value) {
  throw std::logic_error("keys::Values: " + pointer + " has no value for \"" + value + "\"");
}

double Values::number(const std::string& pointer) const { return value(pointer).get<double>(); }

std::int64_t Values::integer(const std::string& pointer) const {
  const json& v = value(pointer);
  // check_value accepts integral floats ("1e3") as integers.
  return v.is_number_float() ? static_cast<std::int64_t>(v.get<double>()) : v.get<std::int64_t>();
}

std::uint64_t Values::unsigned_integer(const std::string& pointer) const {
  const json& v = value(pointer);
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  return static_cast<std::uint64_t>(v.is_number_float() ? v.get<double>() : static_cast<double>(v.get<std::int64_t>()));
}

bool Values::boolean(const std::string& pointer) const { return value(pointer).get<bool>(); }

std::string Values::string(const std::string& pointer) const { return value(pointer).get<std::string>(); }

std::vector<double> Values::numbers(const std::string& pointer) const {
  return value(pointer).get<std::vector<double>>();
}

std::vector<std::string> Values::strings(const std::string& pointer) const {
  return string_list(spec(pointer), value(pointer));
}

std::vector<std::vector<double>> Values::matrix(const std::string& pointer) const {
  return value(pointer).get<std::vector<std::vector<double>>>();
}

}  // namespace hmc::keys
