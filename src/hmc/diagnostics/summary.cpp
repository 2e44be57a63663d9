#include "hmc/diagnostics/summary.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace hmc::diagnostics {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// Standard error of the mean of `means`, treated as independent: sd / √n.
double standard_error(const std::vector<double>& means) {
  const std::size_t n = means.size();
  if (n < 2) return kNaN;
  double m = 0.0;
  for (double x : means) m += x;
  m /= static_cast<double>(n);
  double ss = 0.0;
  for (double x : means) ss += (x - m) * (x - m);
  return std::sqrt(ss / static_cast<double>(n - 1) / static_cast<double>(n));
}

}  // namespace

double quantile(std::vector<double>& values, double prob) {
  if (values.empty()) return kNaN;
  const double h = (static_cast<double>(values.size()) - 1.0) * prob;
  const auto lo = static_cast<std::size_t>(std::floor(h));
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(lo), values.end());
  const double x_lo = values[lo];
  if (lo + 1 >= values.size()) return x_lo;
  const double x_hi = *std::min_element(values.begin() + static_cast<std::ptrdiff_t>(lo) + 1, values.end());
  return x_lo + (h - static_cast<double>(lo)) * (x_hi - x_lo);
}

ParameterSummary summarize_parameter(const sampler::LocalDraws& all, int k, const std::string& name) {
  const std::size_t particles = all.draws.extent(0), draws = all.draws.extent(1);
  const std::size_t total = particles * draws;
  ParameterSummary s{name, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN};
  if (total == 0) return s;

  std::vector<double> values(total);
  double sum = 0.0;
  for (std::size_t i = 0; i < particles; ++i)
    for (std::size_t d = 0; d < draws; ++d) sum += values[i * draws + d] = all.draws(i, d, k);
  const double mean = sum / static_cast<double>(total);
  double ss = 0.0;
  for (double x : values) ss += (x - mean) * (x - mean);
  s.mean = mean;
  s.sd = total > 1 ? std::sqrt(ss / static_cast<double>(total - 1)) : kNaN;

  // Batches: one per particle, or ⌊√n⌋ consecutive blocks of a lone particle's draws.
  const std::size_t batches = particles > 1 ? particles : static_cast<std::size_t>(std::sqrt(double(draws)));
  const std::size_t per_batch = batches > 0 ? total / batches : 0;
  std::vector<double> batch_mean, batch_msd;
  for (std::size_t b = 0; b < batches && per_batch > 0; ++b) {
    double m = 0.0, v = 0.0;
    for (std::size_t j = b * per_batch; j < (b + 1) * per_batch; ++j) {
      m += values[j];
      v += (values[j] - mean) * (values[j] - mean);
    }
    batch_mean.push_back(m / static_cast<double>(per_batch));
    batch_msd.push_back(v / static_cast<double>(per_batch));
  }
  s.mcse_mean = standard_error(batch_mean);
  s.mcse_sd = s.sd > 0.0 ? standard_error(batch_msd) / (2.0 * s.sd) : kNaN;

  s.q5 = quantile(values, 0.05);
  s.q50 = quantile(values, 0.50);
  s.q95 = quantile(values, 0.95);
  return s;
}

std::vector<ParameterSummary> summarize(const sampler::LocalDraws& all, const std::vector<std::string>& names) {
  std::vector<ParameterSummary> out;
  for (std::size_t k = 0; k < names.size(); ++k) out.push_back(summarize_parameter(all, static_cast<int>(k), names[k]));
  return out;
}

}  // namespace hmc::diagnostics
