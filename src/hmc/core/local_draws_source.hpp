#pragma once
/// \file
/// \brief A DrawSource over draws gathered in memory (hmc::LocalDraws), so that
/// code and tests holding a LocalDraws can use the writers and diagnostics that read
/// a DrawSource.

#include "hmc/core/draw_source.hpp"
#include "hmc/core/errors.hpp"
#include "hmc/core/draws.hpp"

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace hmc {

/// \brief Reads a LocalDraws ([particle][draw][param] and [particle][draw] host
/// Views) as a posterior section; no warmup draws. The step_size column is
/// `all.adapted.step_size` in every row; a statistic whose View is unallocated reads
/// as NaN. Keeps a reference: `all` must outlive the source.
class LocalDrawsSource : public DrawSource {
 public:
  LocalDrawsSource(const hmc::LocalDraws& all, std::vector<std::string> param_names) : all_(all) {
    layout_.particles = static_cast<std::int64_t>(all.draws.extent(0));
    layout_.draws = static_cast<std::int64_t>(all.draws.extent(1));
    layout_.param_names = std::move(param_names);
    if (layout_.param_names.size() != all.draws.extent(2)) {
      throw RunError("LocalDrawsSource: " + std::to_string(layout_.param_names.size()) + " names for " +
                     std::to_string(all.draws.extent(2)) + " parameters");
    }
  }

  const StoreLayout& layout() const override { return layout_; }
  std::int64_t available(Section s) const override { return layout_.draws_of(s); }

  void read(Section s, int column, std::int64_t p0, std::int64_t p1, double* out) const override {
    const std::int64_t draws = layout_.draws_of(s);
    if (draws == 0 || p1 <= p0) return;
    if (column < 0 || column >= layout_.num_columns() || p0 < 0 || p1 > layout_.particles) {
      throw RunError("LocalDrawsSource: column " + std::to_string(column) + " or particles [" + std::to_string(p0) +
                     ", " + std::to_string(p1) + ") out of range");
    }
    const int params = layout_.num_params();
    if (column < params) {
      for (std::int64_t p = p0; p < p1; ++p)
        for (std::int64_t d = 0; d < draws; ++d) *out++ = all_.draws(p, d, column);
      return;
    }
    const hmc::LocalDraws::HostStats* v = nullptr;
    switch (column - params) {
      case kStatLp: v = &all_.lp; break;
      case kStatAccept: v = &all_.accept_prob; break;
      case kStatSteps: v = &all_.n_leapfrog; break;
      case kStatDiverging: v = &all_.divergent; break;
      case kStatEnergy: v = &all_.energy; break;
      default: break;  // kStatStepSize
    }
    const bool present = v != nullptr && static_cast<std::int64_t>(v->extent(0)) >= p1 &&
                         static_cast<std::int64_t>(v->extent(1)) == draws;
    const double fill = v == nullptr ? all_.adapted.step_size : std::numeric_limits<double>::quiet_NaN();
    for (std::int64_t p = p0; p < p1; ++p)
      for (std::int64_t d = 0; d < draws; ++d) *out++ = present ? (*v)(p, d) : fill;
  }

 private:
  const hmc::LocalDraws& all_;
  StoreLayout layout_;
};

}  // namespace hmc
