#include "hmc/app/models.hpp"

#include "hmc/core/errors.hpp"
#include "hmc/io/draw_writer.hpp"
#include "hmc/io/schema.hpp"

#include <algorithm>
#include <sstream>
#include <stdexcept>
#include <utility>

namespace hmc::app {

io::Catalog catalog_of(const std::vector<ModelInfo>& infos) {
  std::vector<std::string> names;
  for (const auto& m : infos) names.push_back(m.name);
  auto keys_of = [infos](const std::string& name) {
    for (const auto& m : infos)
      if (m.name == name) return m.keys();
    return keys::Keys{};
  };
  return io::Catalog{names, keys_of, io::format_names(io::draw_formats())};
}

std::string keys_listing_of(const std::vector<ModelInfo>& infos) {
  std::ostringstream os;
  os << "generic keys (docs/config.md)\n" << keys::markdown_header() << "\n";
  const io::Catalog c = catalog_of(infos);
  for (const auto& k : io::generic_keys(c.models, c.formats)) os << keys::markdown_row(k) << "\n";
  for (const auto& m : infos) {
    os << "\nkeys of " << m.name << " (" << (m.origin == "hmc" ? "docs/models.md#" + m.name : m.origin) << ")\n";
    const auto keys = m.keys();
    if (keys.empty()) {
      os << "(none)\n";
      continue;
    }
    os << keys::markdown_header() << "\n";
    for (const auto& k : keys) os << keys::markdown_row(k) << "\n";
  }
  return os.str();
}

ModelTable::ModelTable(std::vector<ModelEntry> entries) : entries_(std::move(entries)) {
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    const std::string& name = entries_[i].info.name;
    const bool word = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    });
    if (!word) {
      throw std::invalid_argument("model name \"" + name + "\" (" + entries_[i].info.origin +
                                  "): use letters, digits, _ and - only");
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (entries_[i].info.name == entries_[j].info.name) {
        throw std::invalid_argument("two models are named \"" + entries_[i].info.name + "\" (" +
                                    entries_[j].info.origin + " and " + entries_[i].info.origin +
                                    "); rename one in its HMC_REGISTER_MODEL line");
      }
    }
  }
}

std::vector<ModelInfo> ModelTable::infos() const {
  std::vector<ModelInfo> out;
  for (const auto& e : entries_) out.push_back(e.info);
  return out;
}

std::vector<std::string> ModelTable::names() const {
  std::vector<std::string> out;
  for (const auto& e : entries_) out.push_back(e.info.name);
  return out;
}

const ModelEntry& ModelTable::at(const std::string& name) const {
  for (const auto& e : entries_)
    if (e.info.name == name) return e;
  throw ConfigError("config error: /model/name: this build has no model \"" + name + "\"");
}

std::vector<ModelEntry>& registered_models() {
  static std::vector<ModelEntry> models;
  return models;
}

const ModelTable& registry() {
  static const ModelTable table = [] {
    std::vector<ModelEntry> entries = registered_models();
    // Registrations run file by file in the linker's order: the shipped models first.
    std::stable_partition(entries.begin(), entries.end(), [](const ModelEntry& e) { return e.info.origin == "hmc"; });
    return ModelTable(std::move(entries));
  }();
  return table;
}

}  // namespace hmc::app
