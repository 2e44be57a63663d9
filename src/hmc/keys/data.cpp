#include "hmc/keys/data.hpp"

#include "hmc/core/errors.hpp"
#include "hmc/core/text.hpp"

#include <cmath>

namespace hmc::keys {

using nlohmann::json;

namespace {

[[noreturn]] void data_error(const std::string& what) { throw DataError("data error: " + what); }

std::string at_index(const std::string& where, std::size_t i) { return where + "/" + std::to_string(i); }

bool finite_number(const json& v) { return v.is_number() && std::isfinite(v.get<double>()); }

}  // namespace

Data::Data(const json& data, std::string model) : data_(data), model_(std::move(model)) {
  if (data_.is_null()) data_error(model_ + " needs data (/model/data)");
  if (!data_.is_object()) data_error(model_ + " data must be a JSON object");
}

bool Data::has(const std::string& key) const { return data_.contains(key); }

const json& Data::at(const std::string& key) const {
  if (!data_.contains(key)) data_error(model_ + " data needs /" + key);
  return data_.at(key);
}

std::vector<double> Data::numbers(const std::string& key, const std::function<bool(double)>& ok,
                                  const std::string& what) const {
  const json& a = at(key);
  if (!a.is_array() || a.empty()) data_error("/" + key + " must be a non-empty array of numbers");
  std::vector<double> out;
  out.reserve(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!finite_number(a[i])) data_error(at_index("/" + key, i) + " must be a finite number (got " + shown(a[i]) + ")");
    const double x = a[i].get<double>();
    if (ok && !ok(x)) data_error(at_index("/" + key, i) + " must be " + what + " (got " + shown(a[i]) + ")");
    out.push_back(x);
  }
  return out;
}

std::vector<std::int64_t> Data::integers(const std::string& key, std::int64_t lo, std::int64_t hi) const {
  const json& a = at(key);
  if (!a.is_array() || a.empty()) data_error("/" + key + " must be a non-empty array of integers");
  std::vector<std::int64_t> out;
  out.reserve(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    const json& v = a[i];
    if (!v.is_number_integer() || v.get<std::int64_t>() < lo || v.get<std::int64_t>() > hi) {
      data_error(at_index("/" + key, i) + " must be an integer in " + std::to_string(lo) + ".." + std::to_string(hi) +
                 " (got " + shown(v) + ")");
    }
    out.push_back(v.get<std::int64_t>());
  }
  return out;
}

std::int64_t Data::integer(const std::string& key, std::int64_t lo, std::int64_t hi) const {
  const json& v = at(key);
  if (!v.is_number_integer() || v.get<std::int64_t>() < lo || v.get<std::int64_t>() > hi) {
    data_error("/" + key + " must be an integer in " + std::to_string(lo) + ".." + std::to_string(hi) + " (got " +
               shown(v) + ")");
  }
  return v.get<std::int64_t>();
}

std::vector<std::vector<double>> Data::rows(const std::string& key) const {
  const json& a = at(key);
  if (!a.is_array() || a.empty() || !a.front().is_array() || a.front().empty()) {
    data_error("/" + key + " must be a non-empty array of non-empty arrays of numbers (one row each)");
  }
  std::vector<std::vector<double>> out;
  out.reserve(a.size());
  for (std::size_t r = 0; r < a.size(); ++r) {
    const json& row = a[r];
    const std::string where = at_index("/" + key, r);
    if (!row.is_array() || row.size() != a.front().size()) {
      data_error(where + " must be an array of " + std::to_string(a.front().size()) + " numbers, as /" + key +
                 "/0 (got " + shown(row) + ")");
    }
    std::vector<double> values;
    values.reserve(row.size());
    for (std::size_t c = 0; c < row.size(); ++c) {
      if (!finite_number(row[c]))
        data_error(at_index(where, c) + " must be a finite number (got " + shown(row[c]) + ")");
      values.push_back(row[c].get<double>());
    }
    out.push_back(std::move(values));
  }
  return out;
}

std::vector<std::vector<json>> Data::sequences(const std::string& key, const ElementCheck& element) const {
  const json& top = at(key);
  if (!top.is_array() || top.empty()) {
    data_error("/" + key + " must be a non-empty array (or an array of non-empty arrays)");
  }
  std::vector<std::vector<json>> seqs;
  const bool nested = top.front().is_array();
  for (std::size_t s = 0; s < (nested ? top.size() : 1); ++s) {
    const json& seq = nested ? top[s] : top;
    const std::string where = nested ? at_index("/" + key, s) : "/" + key;
    if (!seq.is_array()) data_error(where + " must be an array (the first element is one)");
    if (seq.empty()) data_error(where + " is empty");
    for (std::size_t t = 0; t < seq.size(); ++t) element(seq[t], at_index(where, t));
    seqs.emplace_back(seq.begin(), seq.end());
  }
  return seqs;
}

std::vector<std::vector<double>> Data::number_sequences(const std::string& key) const {
  const auto seqs = sequences(key, [](const json& v, const std::string& where) {
    if (!finite_number(v)) data_error(where + " must be a finite number (got " + shown(v) + ")");
  });
  std::vector<std::vector<double>> out;
  out.reserve(seqs.size());
  for (const auto& s : seqs) {
    std::vector<double> values;
    values.reserve(s.size());
    for (const auto& v : s) values.push_back(v.get<double>());
    out.push_back(std::move(values));
  }
  return out;
}

void Data::same_length(const std::string& key_a, std::size_t size_a, const std::string& key_b,
                       std::size_t size_b) const {
  if (size_a != size_b) {
    data_error("/" + key_a + " has " + std::to_string(size_a) + " entries but /" + key_b + " has " +
               std::to_string(size_b));
  }
}

void Data::optional_count(const std::string& key, std::size_t size, const std::string& of_key) const {
  if (!data_.contains(key)) return;
  const json& n = data_.at(key);
  if (!n.is_number_integer() || n.get<std::int64_t>() != static_cast<std::int64_t>(size)) {
    data_error("/" + key + " is " + shown(n) + " but /" + of_key + " has " + std::to_string(size) + " entries");
  }
}

}  // namespace hmc::keys
