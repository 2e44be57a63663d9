/// \file
/// \brief hmc_fuzz_seed CONFIG OUT [SET...]: writes the fuzz input (tests/fuzz/framing.hpp)
/// that stands for `hmc --config CONFIG [--set SET]...`.
///
/// A /model/data that names a readable file (relative to CONFIG's directory, as hmc
/// reads it) becomes the data section, and the config's /model/data is pointed at it
/// ("data.json"). Anything else (no data, inline data, a missing data file, a config
/// that is not JSON or not an object) is kept as it is: such seeds are bad inputs, and
/// the fuzzer should start from them unchanged.

#include "framing.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

bool read_file(const fs::path& path, std::string& text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream os;
  os << in.rdbuf();
  text = os.str();
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: hmc_fuzz_seed CONFIG OUT [SET...]\n";
    return 2;
  }
  const fs::path config_path = argv[1];
  std::string config_text;
  if (!read_file(config_path, config_text)) {
    std::cerr << "hmc_fuzz_seed: cannot read " << config_path << "\n";
    return 1;
  }
  std::vector<std::string> sections = {config_text};
  nlohmann::json config = nlohmann::json::parse(config_text, nullptr, false);
  if (config.is_object() && config.contains("model") && config["model"].is_object() &&
      config["model"].contains("data") && config["model"]["data"].is_string()) {
    fs::path data_path = config["model"]["data"].get<std::string>();
    if (data_path.is_relative()) data_path = config_path.parent_path() / data_path;
    std::string data_text;
    std::error_code ec;
    if (fs::is_regular_file(data_path, ec) && read_file(data_path, data_text)) {
      config["model"]["data"] = hmc::fuzz::kDataFile;
      sections = {config.dump(2), data_text};
    }
  }
  if (argc > 3 && sections.size() == 1) sections.emplace_back();  // an empty data section before the sets
  for (int i = 3; i < argc; ++i) sections.emplace_back(argv[i]);
  std::ofstream out(argv[2], std::ios::binary | std::ios::trunc);
  out << hmc::fuzz::join_sections(sections);
  if (!out) {
    std::cerr << "hmc_fuzz_seed: cannot write " << argv[2] << "\n";
    return 1;
  }
  return 0;
}
