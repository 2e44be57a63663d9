#include "hmc/services/run_spec.hpp"

#include "hmc/core/errors.hpp"
#include "hmc/io/json_text.hpp"

namespace hmc::services {

using nlohmann::json;

json spec_json(const RunSpec& spec) {
  json j = {{"config", spec.config},       {"command_line", spec.command_line},  {"started_utc", spec.started_utc},
            {"overwrite", spec.overwrite}, {"output_dir", spec.paths.final_dir}, {"staging_dir", spec.paths.staging}};
  // Strings that are not UTF-8 (paths are bytes) come out of JSON text replaced; the
  // exact config then travels along as hex of its CBOR.
  try {
    (void)spec.config.dump();
  } catch (const json::type_error&) {
    static const char* digits = "0123456789abcdef";
    std::string hex;
    for (unsigned char b : io::to_transport(spec.config)) hex += {digits[b >> 4], digits[b & 15]};
    j["config_bytes"] = hex;
  }
  return j;
}

RunSpec spec_from_json(const json& j, const std::string& where) {
  if (!j.is_object() || !j.contains("config") || !j["config"].is_object()) {
    throw RunError(where + " is not valid (corrupt staging directory)");
  }
  RunSpec spec;
  spec.config = j["config"];
  if (j.contains("config_bytes") && j["config_bytes"].is_string()) {
    const std::string& hex = j["config_bytes"].get_ref<const std::string&>();
    std::string bytes;
    auto nibble = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
    for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
      bytes += static_cast<char>(nibble(hex[i]) << 4 | nibble(hex[i + 1]));
    try {
      spec.config = io::from_transport(bytes);
    } catch (const json::exception&) {
      throw RunError(where + " is not valid (corrupt staging directory): config_bytes");
    }
  }
  try {
    spec.command_line = j.value("command_line", std::vector<std::string>{});
    spec.started_utc = j.value("started_utc", std::string());
    spec.overwrite = j.value("overwrite", false);
    const std::string dir = j.value("output_dir", std::string());
    const std::string staging = j.value("staging_dir", std::string());
    // The staging directory rank 0 chose (beside OUT or inside it), not one chosen anew here.
    if (!dir.empty())
      spec.paths = staging.empty() ? output_paths(dir) : OutputPaths{dir, staging, staging != dir + ".partial"};
    spec.run = io::run_config(spec.config);
  } catch (const json::exception& e) {
    throw RunError(where + " is not valid (corrupt staging directory): " + e.what());
  }
  return spec;
}

RunSpec broadcast_spec(const parallel::MpiContext& mpi, const RunSpec& spec) {
  const std::string payload = mpi.broadcast(mpi.root() ? io::to_transport(json{{"spec", spec_json(spec)},
                                                                               {"data", spec.data},
                                                                               {"resume", spec.resume},
                                                                               {"validate_only", spec.validate_only}})
                                                       : std::string());
  if (mpi.root()) return spec;
  const json j = io::from_transport(payload);
  RunSpec out = spec_from_json(j["spec"], "the broadcast run");
  out.data = j["data"];
  out.resume = j["resume"].get<bool>();
  out.validate_only = j["validate_only"].get<bool>();
  out.t0 = spec.t0;
  return out;
}

}  // namespace hmc::services
