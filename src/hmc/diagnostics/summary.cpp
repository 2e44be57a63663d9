#include "hmc/diagnostics/summary.hpp"

#include "hmc/diagnostics/convergence.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
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

ChainDraws chains_of(const sampler::LocalDraws& all, int k) {
  return ChainDraws{all.draws.data() + k, static_cast<int>(all.draws.extent(0)), static_cast<int>(all.draws.extent(1)),
                    static_cast<std::ptrdiff_t>(all.draws.extent(1) * all.draws.extent(2)),
                    static_cast<std::ptrdiff_t>(all.draws.extent(2))};
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

ParameterSummary summarize_parameter(const sampler::LocalDraws& all, int k, const std::string& name, int superchains) {
  const std::size_t particles = all.draws.extent(0), draws = all.draws.extent(1);
  const std::size_t total = particles * draws;
  ParameterSummary s{name, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN};
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
  std::vector<double> batch_msd;
  for (std::size_t b = 0; b < batches && per_batch > 0; ++b) {
    double v = 0.0;
    for (std::size_t j = b * per_batch; j < (b + 1) * per_batch; ++j) v += (values[j] - mean) * (values[j] - mean);
    batch_msd.push_back(v / static_cast<double>(per_batch));
  }
  s.mcse_sd = s.sd > 0.0 ? standard_error(batch_msd) / (2.0 * s.sd) : kNaN;

  const ChainDraws chains = chains_of(all, k);
  s.mcse_mean = mcse_mean(chains);
  s.mcse_q5 = mcse_quantile(chains, 0.05);
  s.mcse_q95 = mcse_quantile(chains, 0.95);
  s.ess_bulk = ess_bulk(chains);
  s.ess_tail = ess_tail(chains);
  s.rhat = rhat(chains);
  s.rhat_nested = superchains >= 2 ? rhat_nested(chains, superchains) : kNaN;

  s.q5 = quantile(values, 0.05);
  s.q50 = quantile(values, 0.50);
  s.q95 = quantile(values, 0.95);
  return s;
}

std::vector<ParameterSummary> summarize(const sampler::LocalDraws& all, const std::vector<std::string>& names,
                                        int superchains) {
  std::vector<ParameterSummary> out;
  for (std::size_t k = 0; k < names.size(); ++k)
    out.push_back(summarize_parameter(all, static_cast<int>(k), names[k], superchains));
  return out;
}

int default_superchains(std::int64_t particles) {
  const std::int64_t cap = std::min<std::int64_t>(64, particles / 2);
  for (std::int64_t k = cap; k >= 2; --k)
    if (particles % k == 0) return static_cast<int>(k);
  return 1;
}

std::vector<std::string> warnings(const sampler::LocalDraws& all, const std::vector<ParameterSummary>& params) {
  std::vector<std::string> out;
  const std::size_t particles = all.draws.extent(0), draws = all.draws.extent(1);
  std::vector<std::string> high;
  double worst_rhat = 0.0;
  for (const auto& p : params) {
    if (std::isfinite(p.rhat) && p.rhat > 1.01) {
      high.push_back(p.name);
      worst_rhat = std::max(worst_rhat, p.rhat);
    }
  }
  if (!high.empty()) {
    std::string names;
    for (std::size_t i = 0; i < high.size() && i < 8; ++i) names += (i ? ", " : "") + high[i];
    if (high.size() > 8) names += ", ...";
    char worst[32];
    std::snprintf(worst, sizeof worst, "%.4g", worst_rhat);
    out.push_back("R-hat above 1.01 for " + std::to_string(high.size()) + " parameter(s) (" + names + "; up to " +
                  worst +
                  "): the particles do not agree yet (more warmup or longer chains, or check for multiple "
                  "modes)");
  }
  double div = 0.0;
  for (std::size_t i = 0; i < all.divergences.extent(0); ++i) div += all.divergences(i);
  if (div > 0) {
    out.push_back(std::to_string(static_cast<long long>(div)) +
                  " divergent transitions after warmup: the posterior may be biased (smaller step size, "
                  "higher target_accept, or reparametrise)");
  }
  if (all.energy.extent(0) == particles && draws >= 2) {
    std::size_t low = 0;
    for (std::size_t i = 0; i < particles; ++i) {
      const double b = e_bfmi(all.energy.data() + i * draws, static_cast<int>(draws), 1);
      if (std::isfinite(b) && b < 0.3) ++low;
    }
    if (low > 0) {
      out.push_back("E-BFMI below 0.3 for " + std::to_string(low) + " of " + std::to_string(particles) +
                    " particles: momentum resampling explores the energy poorly (heavy tails?)");
    }
  }
  // Separated modes: particle means far apart compared with the particles' own spread.
  if (particles >= 4 && draws >= 2) {
    std::vector<std::string> split;
    std::size_t worst = 0;
    for (std::size_t k = 0; k < params.size(); ++k) {
      std::vector<double> means(particles);
      double within = 0.0;
      for (std::size_t i = 0; i < particles; ++i) {
        double m = 0.0, v = 0.0;
        for (std::size_t d = 0; d < draws; ++d) m += all.draws(i, d, k);
        m /= static_cast<double>(draws);
        for (std::size_t d = 0; d < draws; ++d) v += (all.draws(i, d, k) - m) * (all.draws(i, d, k) - m);
        means[i] = m;
        within += v / static_cast<double>(draws - 1);
      }
      const double sw = std::sqrt(within / static_cast<double>(particles));
      std::vector<double> sorted = means;
      const double median = quantile(sorted, 0.5);
      std::size_t far = 0;
      for (double m : means)
        if (sw > 0.0 && std::abs(m - median) > 5.0 * sw) ++far;
      if (far >= std::max<std::size_t>(2, particles / 100)) {
        split.push_back(params[k].name);
        worst = std::max(worst, far);
      }
    }
    if (!split.empty()) {
      std::string names;
      for (std::size_t i = 0; i < split.size() && i < 8; ++i) names += (i ? ", " : "") + split[i];
      if (split.size() > 8) names += ", ...";
      out.push_back("separated modes in " + std::to_string(split.size()) + " parameter(s) (" + names + "): up to " +
                    std::to_string(worst) + " of " + std::to_string(particles) +
                    " particles sit more than 5 within-particle sds from the median particle (label switching, or "
                    "particles stuck far away); summaries mix the modes");
    }
  }
  return out;
}

}  // namespace hmc::diagnostics
