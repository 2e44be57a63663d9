#include "hmc/io/config.hpp"

#include "hmc/core/errors.hpp"
#include "hmc/io/json_text.hpp"
#include "hmc/keys/key.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

namespace hmc::io {

namespace fs = std::filesystem;
using keys::check_value;
using nlohmann::json;

namespace {

/// /sampler/adapt/target_accept of /sampler/algorithm mams when the config gives none.
constexpr double kMamsTargetAccept = 0.9;

[[noreturn]] void config_error(const std::string& what) { throw ConfigError("config error: " + what); }

std::string parent_of(const std::string& pointer) {
  const auto slash = pointer.rfind('/');
  return slash == 0 || slash == std::string::npos ? std::string() : pointer.substr(0, slash);
}

std::string last_segment(const std::string& pointer) { return pointer.substr(pointer.rfind('/') + 1); }

/// JSON-pointer escaping of one key (RFC 6901): "~" -> "~0", "/" -> "~1".
std::string escape_segment(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

std::string suggestion(const std::string& pointer, const std::vector<KeySpec>& keys) {
  const std::string parent = parent_of(pointer), name = last_segment(pointer);
  const KeySpec* best = nullptr;
  std::size_t best_d = 0;
  for (bool siblings_only : {true, false}) {
    for (const auto& k : keys) {
      if (siblings_only && parent_of(k.pointer) != parent) continue;
      const std::size_t d =
          edit_distance(siblings_only ? name : pointer, siblings_only ? last_segment(k.pointer) : k.pointer);
      if (!best || d < best_d) {
        best = &k;
        best_d = d;
      }
    }
    if (best) break;
  }
  return best ? best->pointer : std::string();
}

void walk(const json& node, const std::string& pointer, const std::map<std::string, const KeySpec*>& by_pointer,
          const std::vector<KeySpec>& keys) {
  for (auto it = node.begin(); it != node.end(); ++it) {
    const std::string child = pointer + "/" + escape_segment(it.key());
    const auto found = by_pointer.find(child);
    if (found == by_pointer.end()) {
      const std::string near = suggestion(child, keys);
      config_error("unknown key " + printable(child) + (near.empty() ? "" : " (did you mean " + near + "?)"));
    }
    check_value(*found->second, it.value());
    if (found->second->type == KeyType::kSection) walk(it.value(), child, by_pointer, keys);
  }
}

}  // namespace

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

json read_config_file(const std::string& path) {
  json j;
  try {
    j = parse_bounded(read_input_file(path, kMaxConfigBytes));
  } catch (const JsonInputError& e) {
    const std::string why = e.what();
    if (why.rfind("cannot open", 0) == 0) config_error("cannot open config file " + path + why.substr(11));
    config_error("config file " + path + " " + (why.rfind("is ", 0) == 0 ? why : "is not valid JSON: " + why));
  }
  if (!j.is_object()) config_error("config file " + path + " must hold a JSON object");
  return j;
}

void apply_override(json& config, const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    config_error("--set expects key.path=value (got '" + printable(assignment) + "')");
  }
  const std::string path = assignment.substr(0, eq), text = assignment.substr(eq + 1);
  json value;
  std::size_t where = 0;
  const auto key_parts = static_cast<int>(std::count(path.begin(), path.end(), '.')) + 1;
  if (key_parts >= kMaxJsonDepth || json_depth(text, kMaxJsonDepth - key_parts, &where) > kMaxJsonDepth - key_parts) {
    if (key_parts >= kMaxJsonDepth) {
      config_error("--set key '" + printable(path, 60) + "' has " + std::to_string(key_parts) +
                   " parts; the nesting limit is " + std::to_string(kMaxJsonDepth));
    }
    config_error("--set " + printable(path) + ": the key's parts and the value nest deeper than " +
                 std::to_string(kMaxJsonDepth) + " levels (at byte " + std::to_string(where) + " of the value)");
  }
  try {
    value = parse_bounded(text);
  } catch (const JsonInputError&) {
    value = text;  // not JSON: a string, as documented
  }

  if (path.front() == '.' || path.back() == '.' || path.find("..") != std::string::npos) {
    config_error("--set key '" + printable(path) + "' has an empty part");
  }
  std::string pointer;
  json* node = &config;
  std::stringstream parts(path);
  std::string part;
  std::vector<std::string> segments;
  while (std::getline(parts, part, '.')) segments.push_back(part);
  for (std::size_t i = 0; i < segments.size(); ++i) {
    if (segments[i].empty()) config_error("--set key '" + printable(path) + "' has an empty part");
    if (!node->is_object() && !node->is_null())
      config_error("--set " + printable(path) + ": " + (pointer.empty() ? "/" : printable(pointer)) +
                   " is not an object");
    pointer += "/" + segments[i];
    node = &(*node)[segments[i]];
  }
  if (pointer == "/model/data" && value.is_string() && value.get_ref<const std::string&>().empty()) {
    config_error("--set model.data: /model/data must not be empty (a file name, or an inline object)");
  }
  if (pointer == "/model/data" && value.is_string()) {
    value = fs::absolute(value.get<std::string>()).lexically_normal().string();
  }
  *node = std::move(value);
}

std::vector<KeySpec> all_keys(const Catalog& catalog, const std::string& model_name) {
  std::vector<KeySpec> keys = generic_keys(catalog.models, catalog.formats);
  if (catalog.model_keys) {
    for (auto& k : catalog.model_keys(model_name)) keys.push_back(std::move(k));
  }
  return keys;
}

void validate_config(json& config, const Catalog& catalog, const std::string& config_dir) {
  // The model's name decides which keys exist, so it is checked first.
  const auto generic = generic_keys(catalog.models, catalog.formats);
  if (!config.contains("model")) config_error("missing required key /model");
  const auto find_generic = [&](const std::string& p) {
    return *std::find_if(generic.begin(), generic.end(), [&](const KeySpec& k) { return k.pointer == p; });
  };
  check_value(find_generic("/model"), config["model"]);
  if (!config["model"].contains("name")) config_error("missing required key /model/name");
  check_value(find_generic("/model/name"), config["model"]["name"]);

  const auto keys = all_keys(catalog, config["model"]["name"].get<std::string>());
  std::map<std::string, const KeySpec*> by_pointer;
  for (const auto& k : keys) by_pointer[k.pointer] = &k;
  walk(config, "", by_pointer, keys);

  // The default algorithm is nuts, but a config that sets hmc's own trajectory keys
  // (/sampler/adapt/trajectory, /sampler/leapfrog_steps) and no algorithm means hmc, as
  // it did when hmc was the default.
  if (!config.contains("sampler")) config["sampler"] = json::object();
  if (config["sampler"].is_object() && !config["sampler"].contains("algorithm")) {
    const auto& sampler = config["sampler"];
    const bool hmc_keys =
        sampler.contains("leapfrog_steps") ||
        (sampler.contains("adapt") && sampler["adapt"].is_object() && sampler["adapt"].contains("trajectory"));
    config["sampler"]["algorithm"] = hmc_keys ? "hmc" : "nuts";
  }
  // NUTS builds its own trajectory lengths, and MAMS adapts its own: ChEES (the default
  // trajectory of hmc) is refused when asked for, and fixed when not. MAMS aims for an
  // acceptance of 0.9 unless told otherwise (BlackJAX's adjusted MCLMC does the same).
  const std::string algorithm =
      config.contains("sampler") ? config["sampler"].value("algorithm", std::string()) : std::string();
  if (algorithm == "nuts" || algorithm == "mams") {
    auto& sampler = config["sampler"];
    if (sampler.contains("adapt") && sampler["adapt"].value("trajectory", std::string()) == "chees") {
      config_error("/sampler/adapt/trajectory: chees adapts the path length of /sampler/algorithm hmc; " + algorithm +
                   (algorithm == "nuts" ? " builds its own" : " adapts its own") + " (leave it out, or set fixed)");
    }
    if (!sampler.contains("adapt")) sampler["adapt"] = json::object();
    if (!sampler["adapt"].contains("trajectory")) sampler["adapt"]["trajectory"] = "fixed";
    if (algorithm == "mams" && sampler["adapt"].is_object() && !sampler["adapt"].contains("target_accept")) {
      sampler["adapt"]["target_accept"] = kMamsTargetAccept;
    }
  }

  // Defaults, parents first (the schema lists sections before their keys).
  for (const auto& k : keys) {
    const json::json_pointer ptr(k.pointer);
    const json::json_pointer parent = ptr.parent_pointer();
    if (config.contains(ptr)) continue;
    if (!config.contains(parent) && !parent.empty()) continue;
    if (k.is_required) config_error("missing required key " + k.pointer);
    if (!k.default_value.is_null()) config[ptr] = k.default_value;
  }

  if (config["output"]["dir"].get_ref<const std::string&>().empty()) config_error("/output/dir must not be empty");

  auto& data = config["model"];
  if (data.contains("data") && data["data"].is_string()) {
    if (data["data"].get_ref<const std::string&>().empty()) config_error("/model/data must not be empty");
    fs::path p = data["data"].get<std::string>();
    if (p.is_relative()) p = fs::path(config_dir) / p;
    data["data"] = fs::absolute(p).lexically_normal().string();
  }
}

json load_data(const json& config) {
  const auto& model = config.at("model");
  if (!model.contains("data")) return nullptr;
  const auto& d = model.at("data");
  if (d.is_object()) return d;
  const std::string path = d.get<std::string>();
  json j;
  try {
    j = parse_bounded(read_input_file(path, kMaxDataBytes));
  } catch (const JsonInputError& e) {
    const std::string why = e.what();
    if (why.rfind("cannot open", 0) == 0) {
      throw DataError("data error: cannot open data file " + path + " (/model/data)" + why.substr(11));
    }
    throw DataError("data error: data file " + path + " (/model/data) " +
                    (why.rfind("is ", 0) == 0 ? why : "is not valid JSON: " + why));
  }
  if (!j.is_object()) throw DataError("data error: data file " + path + " (/model/data) must hold a JSON object");
  return j;
}

ResolvedConfig resolve_config(const std::string& path, const std::vector<std::string>& overrides,
                              const Catalog& catalog) {
  json config = read_config_file(path);
  for (const auto& o : overrides) apply_override(config, o);
  const std::string dir = fs::absolute(path).parent_path().string();
  validate_config(config, catalog, dir);
  ResolvedConfig out;
  out.data = load_data(config);
  out.config = std::move(config);
  return out;
}

}  // namespace hmc::io
