#include "shipped.hpp"

#include "hmc/app/register.hpp"
#include "registry.hpp"

namespace hmc::models {

std::vector<app::ModelEntry> shipped_entries() {
  std::vector<app::ModelEntry> out;
  shipped().for_each_entry([&](auto type, const auto& e) {
    out.push_back(app::entry_of<typename decltype(type)::type>(e.name, e.summary, "hmc"));
  });
  return out;
}

}  // namespace hmc::models
