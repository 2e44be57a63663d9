#pragma once
/// \file
/// \brief Typed values of a config section, read through its keys: a value the config
/// gives is checked against its key (keys::check_value), one it leaves out is the key's
/// default. A model reads its settings this way and checks only its data and the rules
/// that join several keys:
///
///     const keys::Values v(model, config_keys());   // the /model section
///     m.sigma = v.number("/model/sigma");           // the config's, else the default
///     if (v.given("/model/num_states")) ...
///
/// So the defaults live only in the keys, whether the section comes validated (a run) or
/// as a test wrote it.

#include "hmc/keys/key.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace hmc::keys {

class Values {
 public:
  /// `section`: the object at `prefix` of a config ("/model": the model section);
  /// `keys`: the keys under `prefix` that will be read (pointers start with `prefix`).
  Values(const nlohmann::json& section, Keys keys, std::string prefix = "/model");

  /// Did the config give this key (rather than leave it to its default)?
  bool given(const std::string& pointer) const;

  double number(const std::string& pointer) const;
  std::int64_t integer(const std::string& pointer) const;
  /// An integer key whose range reaches past 2^63 (the seed).
  std::uint64_t unsigned_integer(const std::string& pointer) const;
  bool boolean(const std::string& pointer) const;
  std::string string(const std::string& pointer) const;
  std::vector<double> numbers(const std::string& pointer) const;
  /// A kStrings key as its list (an alias expanded).
  std::vector<std::string> strings(const std::string& pointer) const;
  std::vector<std::vector<double>> matrix(const std::string& pointer) const;

  /// A string key with choices, as the value of `E` listed for it:
  /// `v.choice<Emission>("/model/emission", {{"categorical", Emission::kCategorical}, ...})`.
  template <class E>
  E choice(const std::string& pointer, const std::vector<std::pair<std::string, E>>& values) const {
    const std::string s = string(pointer);
    for (const auto& [name, e] : values)
      if (name == s) return e;
    unlisted(pointer, s);
  }

 private:
  /// The checked value of the config, or the default; ConfigError when neither exists.
  const nlohmann::json& value(const std::string& pointer) const;
  const KeySpec& spec(const std::string& pointer) const;
  [[noreturn]] static void unlisted(const std::string& pointer, const std::string& value);

  const nlohmann::json& section_;
  Keys keys_;
  std::string prefix_;
};

}  // namespace hmc::keys
