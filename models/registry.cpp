#include "registry.hpp"

#include "hmc/io/draw_writer.hpp"
#include "hmc/io/schema.hpp"

#include <sstream>

namespace hmc::models {

const std::vector<ModelInfo>& registry() {
  static const std::vector<ModelInfo> infos = shipped().infos();
  return infos;
}

const ModelInfo* find_model(const std::string& name) {
  for (const auto& m : registry())
    if (m.name == name) return &m;
  return nullptr;
}

std::vector<std::string> model_names() {
  std::vector<std::string> names;
  for (const auto& m : registry()) names.push_back(m.name);
  return names;
}

keys::Keys model_keys(const std::string& name) {
  const ModelInfo* m = find_model(name);
  return m ? m->keys() : keys::Keys{};
}

io::Catalog catalog() { return io::Catalog{model_names(), &model_keys, io::format_names(io::draw_formats())}; }

std::string keys_listing() {
  std::ostringstream os;
  os << "generic keys (docs/config.md)\n" << keys::markdown_header() << "\n";
  const io::Catalog c = catalog();
  for (const auto& k : io::generic_keys(c.models, c.formats)) os << keys::markdown_row(k) << "\n";
  for (const auto& m : registry()) {
    os << "\nkeys of " << m.name << " (docs/models.md#" << m.name << ")\n";
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

}  // namespace hmc::models
