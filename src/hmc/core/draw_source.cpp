#include "hmc/core/draw_source.hpp"

#include "hmc/core/errors.hpp"

#include <algorithm>
#include <utility>

namespace hmc {

std::vector<StatColumn> hmc_stat_columns() {
  return {{"lp", StatType::kReal, false},       {"acceptance_rate", StatType::kReal, false},
          {"step_size", StatType::kReal, true}, {"n_steps", StatType::kInteger, true},
          {"diverging", StatType::kBool, true}, {"energy", StatType::kReal, false}};
}

MemorySource::MemorySource(StoreLayout layout, std::vector<double> posterior, std::vector<double> warmup)
    : layout_(std::move(layout)), posterior_(std::move(posterior)), warmup_(std::move(warmup)) {
  const auto cells = [&](Section s) {
    return static_cast<std::size_t>(layout_.num_columns()) * static_cast<std::size_t>(layout_.particles) *
           static_cast<std::size_t>(layout_.draws_of(s));
  };
  if (posterior_.size() != cells(Section::kPosterior) || warmup_.size() != cells(Section::kWarmup)) {
    throw RunError("MemorySource: value count does not match the layout");
  }
}

void MemorySource::read(Section s, int column, std::int64_t p0, std::int64_t p1, double* out) const {
  const auto& v = s == Section::kPosterior ? posterior_ : warmup_;
  const std::int64_t draws = layout_.draws_of(s);
  const double* first = v.data() + (static_cast<std::int64_t>(column) * layout_.particles + p0) * draws;
  std::copy(first, first + (p1 - p0) * draws, out);
}

}  // namespace hmc
