#include "registry.hpp"

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

io::Catalog catalog() { return app::catalog_of(registry()); }

std::string keys_listing() { return app::keys_listing_of(registry()); }

}  // namespace hmc::models
