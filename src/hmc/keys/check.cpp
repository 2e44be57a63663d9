#include "hmc/core/errors.hpp"
#include "hmc/core/text.hpp"
#include "hmc/keys/key.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

namespace hmc::keys {

using nlohmann::json;

namespace {

[[noreturn]] void config_error(const std::string& what) { throw ConfigError("config error: " + what); }

std::string format_bound(double x) {
  std::ostringstream os;
  os << x;
  return os.str();
}

/// A bound as docs show it: 10^9, 2,147,483,647, 17, 0.5.
std::string doc_number(double x) {
  if (std::floor(x) == x && std::abs(x) < 9007199254740992.0) {
    const auto n = static_cast<long long>(x);
    for (long long p = 1000000, k = 6; k <= 15; p *= 10, ++k)
      if (n == p) return "10^" + std::to_string(k);
    std::string digits = std::to_string(n < 0 ? -n : n), out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
      if (i > 0 && (digits.size() - i) % 3 == 0 && digits.size() > 4) out += ',';
      out += digits[i];
    }
    return (n < 0 ? "-" : "") + out;
  }
  return json(x).dump();
}

/// "integer", "array of numbers": the type as the docs' tables name it.
std::string doc_type(KeyType t) {
  if (t == KeyType::kData) return "file path or object";
  if (t == KeyType::kStrings) return "array of strings, or string";
  const std::string s = type_name(t);
  return s.substr(s.find(' ') + 1);
}

bool is_integral(const json& v) {
  if (v.is_number_integer()) return true;
  if (!v.is_number_float()) return false;
  // Beyond 2^53 a double no longer holds every integer: demand an integer literal.
  const double d = v.get<double>();
  return std::isfinite(d) && std::floor(d) == d && std::abs(d) < 9007199254740992.0;
}

bool number_array(const json& v) {
  return v.is_array() && std::all_of(v.begin(), v.end(), [](const json& x) { return x.is_number(); });
}

bool type_matches(const KeySpec& spec, const json& v) {
  switch (spec.type) {
    case KeyType::kSection:
      return v.is_object();
    case KeyType::kInteger:
      return is_integral(v);
    case KeyType::kNumber:
      return v.is_number();
    case KeyType::kString:
      return v.is_string();
    case KeyType::kBoolean:
      return v.is_boolean();
    case KeyType::kNumberArray:
      return number_array(v);
    case KeyType::kNumberMatrix:
      return v.is_array() && std::all_of(v.begin(), v.end(), [&](const json& r) {
               return number_array(r) && r.size() == v.front().size();
             });
    case KeyType::kData:
      return v.is_string() || v.is_object();
    case KeyType::kStrings:
      return v.is_string() ||
             (v.is_array() && std::all_of(v.begin(), v.end(), [](const json& x) { return x.is_string(); }));
  }
  return false;
}

const std::vector<std::string>* alias_of(const KeySpec& spec, const std::string& name) {
  for (const auto& [alias, values] : spec.aliases)
    if (alias == name) return &values;
  return nullptr;
}

/// kStrings: not empty, no repeats, every element one of the choices (a string: a
/// choice or an alias).
void check_string_list(const KeySpec& spec, const json& v) {
  if (v.is_array() && v.empty()) config_error(spec.pointer + " must name at least one value (got [])");
  std::string choices, aliases;
  for (const auto& c : spec.choices) choices += (choices.empty() ? "" : ", ") + c;
  for (const auto& a : spec.aliases) aliases += ", " + a.first;
  const auto listed = [&](const std::string& s) {
    return spec.choices.empty() || std::find(spec.choices.begin(), spec.choices.end(), s) != spec.choices.end();
  };
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    if (!listed(s) && !alias_of(spec, s)) {
      config_error(spec.pointer + " must be one of " + choices + aliases + ", or a list of " + choices + " (got " +
                   shown(v) + ")");
    }
    return;
  }
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string& s = v[i].get_ref<const std::string&>();
    if (!listed(s))
      config_error(spec.pointer + " may list " + choices + " (got " + shown(v[i]) + " in " + shown(v) + ")");
    for (std::size_t j = 0; j < i; ++j)
      if (v[j] == v[i]) config_error(spec.pointer + " lists " + shown(v[i]) + " twice (got " + shown(v) + ")");
  }
}

void check_range(const KeySpec& spec, const json& v) {
  if (v.is_array()) {
    for (const auto& x : v) check_range(spec, x);
    return;
  }
  if (!v.is_number()) return;
  if (v.is_number_unsigned() && !spec.max && !spec.min) return;
  const double x = v.get<double>();
  if (spec.min) {
    if (spec.min_exclusive ? !(x > *spec.min) : !(x >= *spec.min)) {
      config_error(spec.pointer + " must be " + (spec.min_exclusive ? "> " : ">= ") + format_bound(*spec.min) +
                   " (got " + shown(v) + ")");
    }
  }
  if (spec.max && x > *spec.max) {
    config_error(spec.pointer + " must be <= " + format_bound(*spec.max) + " (got " + shown(v) + ")");
  }
}

/// A number so close to 0 that it has lost precision (a subnormal double): no setting
/// means that, and products with it underflow.
bool subnormal(const json& v) {
  if (!v.is_number_float()) return false;
  const double x = v.get<double>();
  return x != 0.0 && std::fabs(x) < std::numeric_limits<double>::min();
}

}  // namespace

const char* type_name(KeyType t) {
  switch (t) {
    case KeyType::kSection:
      return "an object";
    case KeyType::kInteger:
      return "an integer";
    case KeyType::kNumber:
      return "a number";
    case KeyType::kString:
      return "a string";
    case KeyType::kBoolean:
      return "a boolean";
    case KeyType::kNumberArray:
      return "an array of numbers";
    case KeyType::kNumberMatrix:
      return "an array of arrays of numbers";
    case KeyType::kData:
      return "a file path or an object";
    case KeyType::kStrings:
      return "an array of strings or a string";
  }
  return "?";
}

void check_value(const KeySpec& spec, const json& v) {
  if (!type_matches(spec, v)) {
    config_error(spec.pointer + " must be " + type_name(spec.type) + " (got " + shown(v) + ")");
  }
  if (v.is_string() && v.get_ref<const std::string&>().find('\0') != std::string::npos) {
    config_error(spec.pointer + " must not contain a NUL character (got " + shown(v) + ")");
  }
  if (subnormal(v) || (v.is_array() && std::any_of(v.begin(), v.end(), [](const json& x) {
                         return subnormal(x) || (x.is_array() && std::any_of(x.begin(), x.end(), subnormal));
                       }))) {
    config_error(spec.pointer + " holds a number below 2.2e-308 in magnitude (a subnormal double; got " + shown(v) +
                 ")");
  }
  if (spec.exact_length && v.is_array() && v.size() != *spec.exact_length) {
    config_error(spec.pointer + " must have " + std::to_string(*spec.exact_length) + " elements (got " + shown(v) +
                 ")");
  }
  if (spec.type == KeyType::kNumberArray || spec.type == KeyType::kNumberMatrix) {
    for (const auto& x : v) check_range(spec, x);
  } else {
    check_range(spec, v);
  }
  if (spec.type == KeyType::kStrings) {
    check_string_list(spec, v);
    return;
  }
  if (!spec.choices.empty() &&
      std::find(spec.choices.begin(), spec.choices.end(), v.get<std::string>()) == spec.choices.end()) {
    std::string list;
    for (const auto& c : spec.choices) list += (list.empty() ? "" : ", ") + c;
    config_error(spec.pointer + " must be one of " + list + " (got " + shown(v) + ")");
  }
}

std::vector<std::string> string_list(const KeySpec& spec, const json& v) {
  if (v.is_array()) return v.get<std::vector<std::string>>();
  const std::string& s = v.get_ref<const std::string&>();
  if (const auto* values = alias_of(spec, s)) return *values;
  return {s};
}

const KeySpec* find(const Keys& keys, const std::string& pointer) {
  const auto it = std::find_if(keys.begin(), keys.end(), [&](const KeySpec& k) { return k.pointer == pointer; });
  return it == keys.end() ? nullptr : &*it;
}

std::string shown_default(const KeySpec& spec) {
  if (spec.is_required) return "required";
  if (spec.default_value.is_null()) return spec.default_text.empty() ? "none" : spec.default_text;
  return "`" + dump_text(spec.default_value) + "`";
}

std::string shown_range(const KeySpec& spec) {
  if (!spec.allowed_text.empty()) return spec.allowed_text;
  std::string out;
  for (const auto& c : spec.choices) out += (out.empty() ? "`" : ", `") + c + "`";
  for (const auto& [alias, values] : spec.aliases) {
    std::string list;
    for (const auto& v : values) list += (list.empty() ? "`" : ", `") + v + "`";
    out += (out.empty() ? "`" : "; `") + alias + "` for [" + list + "]";
  }
  if (spec.exact_length) out += std::to_string(*spec.exact_length) + " elements";
  const std::string each = spec.type == KeyType::kNumberArray || spec.type == KeyType::kNumberMatrix ? "each " : "";
  if (spec.min && spec.max && !spec.min_exclusive) {
    out += (out.empty() ? "" : ", ") + each + doc_number(*spec.min) + " to " + doc_number(*spec.max);
  } else {
    if (spec.min) out += (out.empty() ? "" : ", ") + each + (spec.min_exclusive ? "> " : ">= ") + doc_number(*spec.min);
    if (spec.max) out += (out.empty() ? "" : ", ") + each + "<= " + doc_number(*spec.max);
  }
  return out;
}

std::string markdown_row(const KeySpec& spec) {
  return "| `" + spec.pointer + "` | " + doc_type(spec.type) + " | " + shown_default(spec) + " | " + shown_range(spec) +
         " | " + spec.description + " |";
}

std::string markdown_header() { return "| key | type | default | allowed | meaning |\n|---|---|---|---|---|"; }

}  // namespace hmc::keys
