#include "hmc/core/arch.hpp"

#include <nlohmann/json.hpp>

namespace hmc::arch {

nlohmann::json record_json(const Record& r) {
  return {{"level", r.level},
          {"built", r.built},
          {"cpu", r.cpu},
          {"cpu_level", r.cpu_level},
          {"requested", r.requested.empty() ? nlohmann::json() : nlohmann::json(r.requested)}};
}

}  // namespace hmc::arch
