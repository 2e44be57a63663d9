#pragma once
/// \file
/// \brief A model's data (the object /model/data names), read in the common shapes with
/// checks whose errors name the entry: "data error: /y/3 must be a finite number (got
/// "a")". Models say what they need and check only what is theirs (cross-entry rules):
///
///     const keys::Data d(data, "eight_schools");   // needs data, an object
///     const auto y = d.numbers("y");               // non-empty, finite
///     d.same_length("y", y.size(), "sigma", sigma.size());
///     d.optional_count("J", y.size(), "y");
///
/// Every error is a DataError (exit code 3).

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace hmc::keys {

class Data {
 public:
  /// `data`: the loaded /model/data (null when the config gives none); `model`: the model's
  /// name, for messages. Throws DataError when there is no data or it is not an object.
  Data(const nlohmann::json& data, std::string model);

  bool has(const std::string& key) const;
  /// The entry `key`; DataError "data error: MODEL data needs /key" when it is missing.
  const nlohmann::json& at(const std::string& key) const;

  /// A non-empty array of finite numbers. `ok`, when given, is checked on each element
  /// (`what` says it: "> 0").
  std::vector<double> numbers(const std::string& key, const std::function<bool(double)>& ok = {},
                              const std::string& what = {}) const;
  /// A non-empty array of integers in lo .. hi.
  std::vector<std::int64_t> integers(const std::string& key, std::int64_t lo, std::int64_t hi) const;
  /// An integer in lo .. hi.
  std::int64_t integer(const std::string& key, std::int64_t lo, std::int64_t hi) const;
  /// A non-empty array of equally long, non-empty arrays of finite numbers (row-major).
  std::vector<std::vector<double>> rows(const std::string& key) const;

  /// Ragged sequences: a flat array (one sequence) or an array of non-empty arrays.
  /// `element(value, pointer)` checks each element and throws DataError naming `pointer`.
  using ElementCheck = std::function<void(const nlohmann::json& value, const std::string& pointer)>;
  std::vector<std::vector<nlohmann::json>> sequences(const std::string& key, const ElementCheck& element) const;
  /// Ragged sequences of finite numbers.
  std::vector<std::vector<double>> number_sequences(const std::string& key) const;

  /// DataError unless two entries have as many elements.
  void same_length(const std::string& key_a, std::size_t size_a, const std::string& key_b, std::size_t size_b) const;
  /// An optional count entry (e.g. "N"): when present it must be the integer `size`, the
  /// length of `of_key`.
  void optional_count(const std::string& key, std::size_t size, const std::string& of_key) const;

 private:
  const nlohmann::json& data_;
  std::string model_;
};

}  // namespace hmc::keys
