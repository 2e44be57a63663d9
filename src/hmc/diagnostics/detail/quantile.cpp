#include "hmc/diagnostics/detail/quantile.hpp"

#include <limits>

namespace hmc::diagnostics::detail {

double type7_quantile(std::vector<double>& values, double prob, Type7 form) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  bool selected = false;
  return type7_quantile(values.size(), prob, form, [&](std::size_t k) {
    const auto at = values.begin() + static_cast<std::ptrdiff_t>(k);
    if (!selected) {  // the lower order statistic: select it
      selected = true;
      std::nth_element(values.begin(), at, values.end());
      return *at;
    }
    return *std::min_element(at, values.end());  // k − 1 selected: the next is the smallest above
  });
}

}  // namespace hmc::diagnostics::detail
