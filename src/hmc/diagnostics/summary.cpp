#include "hmc/diagnostics/summary.hpp"

#include "hmc/diagnostics/convergence.hpp"
#include "hmc/diagnostics/detail/parallel.hpp"
#include "hmc/diagnostics/detail/quantile.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace hmc::diagnostics {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// Largest read of one column: particles are read in ranges of at most this much.
constexpr std::int64_t kRangeBytes = std::int64_t{32} << 20;

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

std::int64_t range_particles(std::int64_t draws) {
  return std::max<std::int64_t>(
      1, kRangeBytes / static_cast<std::int64_t>(sizeof(double)) / std::max<std::int64_t>(1, draws));
}

/// The particles the capped statistics use: all when particles × draws ≤ max_draws
/// (or no cap), else the first ⌊max_draws / draws⌋, at least 2 (or all there are).
std::int64_t capped_particles(std::int64_t particles, std::int64_t draws, std::int64_t max_draws) {
  if (particles <= 0 || draws <= 0 || max_draws <= 0 || particles <= max_draws / draws) return particles;
  return std::min(particles, std::max<std::int64_t>(2, max_draws / draws));
}

/// f(p0, p1) over [0, n) particles in parallel blocks of about 64k draws or more.
template <class F>
void parallel_particles(std::int64_t n, std::int64_t draws, F&& f) {
  const std::int64_t work = n * std::max<std::int64_t>(1, draws);
  const auto blocks =
      static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>({detail::parallel_blocks(), work / 65536, n})));
  detail::run_blocks(blocks, [&](int b) { f(n * b / blocks, n * (b + 1) / blocks); });
}

/// Buffers reused from one parameter to the next.
struct Scratch {
  Workspace workspace;
  std::vector<double> prefix, chunk;
  std::vector<double> particle_mean, particle_var;
  std::vector<unsigned char> flags;  // per particle: 1 NaN draw, 2 a −0.0 draw
};

/// Column `column` of particles [0, particles): f(p0, p1, values) over ranges, the
/// first `have` particles from `prefix` (already read), the others read in ranges.
template <class F>
void for_each_range(const hmc::DrawSource& src, int column, std::int64_t particles, std::int64_t draws,
                    const std::vector<double>& prefix, std::int64_t have, std::vector<double>& chunk, F&& f) {
  if (have > 0) f(std::int64_t{0}, have, prefix.data());
  const std::int64_t step = range_particles(draws);
  for (std::int64_t p0 = have; p0 < particles; p0 += step) {
    const std::int64_t p1 = std::min(particles, p0 + step);
    chunk.resize(static_cast<std::size_t>((p1 - p0) * draws));
    src.read(hmc::Section::kPosterior, column, p0, p1, chunk.data());
    f(p0, p1, chunk.data());
  }
}

ParameterSummary summarize_column(const hmc::DrawSource& src, int column, const std::string& name, int superchains,
                                  std::int64_t max_draws, Scratch& sc) {
  const std::int64_t particles = src.layout().particles;
  const std::int64_t draws = src.available(hmc::Section::kPosterior);
  const std::int64_t used = capped_particles(particles, draws, max_draws);
  const std::size_t total = static_cast<std::size_t>(particles) * static_cast<std::size_t>(draws);
  ParameterSummary s{name, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN};
  s.particles = particles;
  s.diagnostic_particles = used;
  s.max_draws = std::max<std::int64_t>(0, max_draws);
  if (total == 0) return s;
  const auto d = static_cast<std::size_t>(draws);

  // The particles the capped statistics use, kept for them and reused by the passes.
  sc.prefix.resize(static_cast<std::size_t>(used) * d);
  for (std::int64_t p0 = 0; p0 < used; p0 += range_particles(draws)) {
    const std::int64_t p1 = std::min(used, p0 + range_particles(draws));
    src.read(hmc::Section::kPosterior, column, p0, p1, sc.prefix.data() + static_cast<std::size_t>(p0) * d);
  }

  // Pass 1: the sum in draw order (as one loop over all draws would add them), each
  // particle's mean and variance (nested R-hat, separated modes), NaN and −0.0.
  sc.particle_mean.assign(static_cast<std::size_t>(particles), 0.0);
  sc.particle_var.assign(static_cast<std::size_t>(particles), 0.0);
  sc.flags.assign(static_cast<std::size_t>(particles), 0);
  double sum = 0.0;
  for_each_range(src, column, particles, draws, sc.prefix, used, sc.chunk,
                 [&](std::int64_t p0, std::int64_t p1, const double* v) {
                   parallel_particles(p1 - p0, draws, [&](std::int64_t a, std::int64_t b) {
                     for (std::int64_t i = a; i < b; ++i) {
                       const double* row = v + static_cast<std::size_t>(i) * d;
                       const auto p = static_cast<std::size_t>(p0 + i);
                       sc.particle_mean[p] = detail::mean(row, d);
                       if (d > 1) sc.particle_var[p] = detail::variance(row, d);
                       unsigned char f = 0;
                       for (std::size_t t = 0; t < d; ++t) {
                         if (std::isnan(row[t])) f |= 1;
                         if (row[t] == 0.0 && std::signbit(row[t])) f |= 2;
                       }
                       sc.flags[p] = f;
                     }
                   });
                   const std::size_t n = static_cast<std::size_t>(p1 - p0) * d;
                   for (std::size_t j = 0; j < n; ++j) sum += v[j];
                 });
  const double mean = sum / static_cast<double>(total);
  s.mean = mean;

  // Pass 2: squared deviations about the mean, in draw order and per batch.
  // Batches: one per particle, or ⌊√n⌋ consecutive blocks of a lone particle's draws.
  const std::size_t batches = particles > 1 ? static_cast<std::size_t>(particles)
                                            : static_cast<std::size_t>(std::sqrt(static_cast<double>(draws)));
  const std::size_t per_batch = batches > 0 ? total / batches : 0;
  std::vector<double> batch_msd(per_batch > 0 ? batches : 0);
  double ss = 0.0;
  for_each_range(src, column, particles, draws, sc.prefix, used, sc.chunk,
                 [&](std::int64_t p0, std::int64_t p1, const double* v) {
                   if (particles > 1) {
                     parallel_particles(p1 - p0, draws, [&](std::int64_t a, std::int64_t b) {
                       for (std::int64_t i = a; i < b; ++i) {
                         const double* row = v + static_cast<std::size_t>(i) * d;
                         double acc = 0.0;
                         for (std::size_t t = 0; t < d; ++t) acc += (row[t] - mean) * (row[t] - mean);
                         batch_msd[static_cast<std::size_t>(p0 + i)] = acc / static_cast<double>(per_batch);
                       }
                     });
                   } else {
                     for (std::size_t b = 0; b < batch_msd.size(); ++b) {
                       double acc = 0.0;
                       for (std::size_t j = b * per_batch; j < (b + 1) * per_batch; ++j)
                         acc += (v[j] - mean) * (v[j] - mean);
                       batch_msd[b] = acc / static_cast<double>(per_batch);
                     }
                   }
                   const std::size_t n = static_cast<std::size_t>(p1 - p0) * d;
                   for (std::size_t j = 0; j < n; ++j) ss += (v[j] - mean) * (v[j] - mean);
                 });
  s.sd = total > 1 ? std::sqrt(ss / static_cast<double>(total - 1)) : kNaN;
  s.mcse_sd = s.sd > 0.0 ? standard_error(batch_msd) / (2.0 * s.sd) : kNaN;

  const bool any_nan = std::any_of(sc.flags.begin(), sc.flags.end(), [](unsigned char f) { return (f & 1) != 0; });
  s.rhat_nested =
      superchains >= 2 && !any_nan ? rhat_nested_from_moments(sc.particle_mean, sc.particle_var, superchains) : kNaN;

  // Separated modes, counted here while the particle moments are at hand.
  if (particles >= 4 && draws >= 2) {
    double within = 0.0;
    for (double v : sc.particle_var) within += v;
    const double sw = std::sqrt(within / static_cast<double>(particles));
    std::vector<double> sorted = sc.particle_mean;
    const double median = quantile(sorted, 0.5);
    std::int64_t far = 0;
    for (double m : sc.particle_mean)
      if (sw > 0.0 && std::abs(m - median) > 5.0 * sw) ++far;
    s.far_particles = far;
  }

  // The statistics that need all the draws at once, on the first `used` particles.
  const ChainDraws chains{sc.prefix.data(), static_cast<int>(used), static_cast<int>(draws),
                          static_cast<std::ptrdiff_t>(draws), 1};
  const std::size_t n = static_cast<std::size_t>(used) * d;
  const bool plain = std::none_of(sc.flags.begin(), sc.flags.begin() + used, [](unsigned char f) { return f != 0; });
  const double probs[3] = {0.05, 0.50, 0.95};
  std::vector<std::size_t> order;
  if (plain) {
    for (double p : probs) {
      const auto [lo, hi] = detail::type7_order_statistics(n, p, detail::Type7::kNumpy);
      order.push_back(lo);
      order.push_back(hi);
    }
  }
  std::vector<double> order_values;
  const Statistics st = statistics(chains, &sc.workspace, order, &order_values);
  s.mcse_mean = st.mcse_mean;
  s.mcse_q5 = st.mcse_q5;
  s.mcse_q95 = st.mcse_q95;
  s.ess_bulk = st.ess_bulk;
  s.ess_tail = st.ess_tail;
  s.rhat = st.rhat;
  double q[3];
  if (plain) {
    // Order statistics are unique values here (no NaN, no −0.0 beside +0.0).
    for (int i = 0; i < 3; ++i) {
      q[i] = detail::type7_quantile(n, probs[i], detail::Type7::kNumpy, [&](std::size_t k) {
        return k == order[2 * static_cast<std::size_t>(i)] ? order_values[2 * static_cast<std::size_t>(i)]
                                                           : order_values[2 * static_cast<std::size_t>(i) + 1];
      });
    }
  } else {
    std::vector<double> values(sc.prefix.begin(), sc.prefix.begin() + static_cast<std::ptrdiff_t>(n));
    for (int i = 0; i < 3; ++i) q[i] = quantile(values, probs[i]);
  }
  s.q5 = q[0];
  s.q50 = q[1];
  s.q95 = q[2];
  return s;
}

std::string list_names(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < 8; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > 8) out += ", ...";
  return out;
}

/// warnings()' separated-modes count for column k, from the draws.
std::int64_t count_far_particles(const hmc::DrawSource& src, int column) {
  const std::int64_t particles = src.layout().particles, draws = src.available(hmc::Section::kPosterior);
  const auto d = static_cast<std::size_t>(draws);
  std::vector<double> means(static_cast<std::size_t>(particles)), chunk;
  double within = 0.0;
  for_each_range(src, column, particles, draws, chunk, 0, chunk,
                 [&](std::int64_t p0, std::int64_t p1, const double* v) {
                   for (std::int64_t i = 0; i < p1 - p0; ++i) {
                     const double* row = v + static_cast<std::size_t>(i) * d;
                     means[static_cast<std::size_t>(p0 + i)] = detail::mean(row, d);
                     within += detail::variance(row, d);
                   }
                 });
  const double sw = std::sqrt(within / static_cast<double>(particles));
  std::vector<double> sorted = means;
  const double median = quantile(sorted, 0.5);
  std::int64_t far = 0;
  for (double m : means)
    if (sw > 0.0 && std::abs(m - median) > 5.0 * sw) ++far;
  return far;
}

}  // namespace

double quantile(std::vector<double>& values, double prob) {
  return detail::type7_quantile(values, prob, detail::Type7::kNumpy);
}

std::vector<ParameterSummary> summarize(const hmc::DrawSource& source, const SummaryOptions& options) {
  const auto& names = source.layout().param_names;
  const int total = static_cast<int>(names.size());
  Scratch scratch;
  std::vector<ParameterSummary> out;
  out.reserve(names.size());
  for (int k = 0; k < total; ++k) {
    out.push_back(summarize_column(source, k, names[static_cast<std::size_t>(k)], options.superchains,
                                   options.max_draws, scratch));
    if (options.progress) options.progress(k + 1, total);
  }
  return out;
}

int default_superchains(std::int64_t particles) {
  const std::int64_t cap = std::min<std::int64_t>(64, particles / 2);
  for (std::int64_t k = cap; k >= 2; --k)
    if (particles % k == 0) return static_cast<int>(k);
  return 1;
}

std::vector<double> e_bfmi_per_particle(const hmc::DrawSource& source) {
  const std::int64_t particles = source.layout().particles;
  const std::int64_t draws = source.available(hmc::Section::kPosterior);
  std::vector<double> out(static_cast<std::size_t>(particles), kNaN);
  const int energy = source.layout().stat_column("energy");
  if (draws < 2 || energy < 0) return out;  // a kernel without an energy has no E-BFMI
  std::vector<double> chunk;
  for_each_range(source, energy, particles, draws, chunk, 0, chunk,
                 [&](std::int64_t p0, std::int64_t p1, const double* v) {
                   parallel_particles(p1 - p0, draws, [&](std::int64_t a, std::int64_t b) {
                     for (std::int64_t i = a; i < b; ++i)
                       out[static_cast<std::size_t>(p0 + i)] =
                           e_bfmi(v + static_cast<std::size_t>(i * draws), static_cast<int>(draws), 1);
                   });
                 });
  return out;
}

std::vector<std::string> warnings(const hmc::DrawSource& source, const std::vector<ParameterSummary>& params,
                                  double total_divergences) {
  std::vector<std::string> out;
  const std::int64_t particles = source.layout().particles;
  const std::int64_t draws = source.available(hmc::Section::kPosterior);
  std::vector<std::string> high;
  double worst_rhat = 0.0;
  for (const auto& p : params) {
    if (std::isfinite(p.rhat) && p.rhat > 1.01) {
      high.push_back(p.name);
      worst_rhat = std::max(worst_rhat, p.rhat);
    }
  }
  if (!high.empty()) {
    char worst[32];
    std::snprintf(worst, sizeof worst, "%.4g", worst_rhat);
    out.push_back("R-hat above 1.01 for " + std::to_string(high.size()) + " parameter(s) (" + list_names(high) +
                  "; up to " + worst +
                  "): the particles do not agree yet (more warmup or longer chains, or check for multiple "
                  "modes)");
  }
  if (total_divergences > 0) {
    out.push_back(std::to_string(static_cast<long long>(total_divergences)) +
                  " divergent transitions after warmup: the posterior may be biased (smaller step size, "
                  "higher target_accept, or reparametrise)");
  }
  if (draws >= 2) {
    std::int64_t low = 0;
    for (double b : e_bfmi_per_particle(source))
      if (std::isfinite(b) && b < 0.3) ++low;
    if (low > 0) {
      out.push_back("E-BFMI below 0.3 for " + std::to_string(low) + " of " + std::to_string(particles) +
                    " particles: momentum resampling explores the energy poorly (heavy tails?)");
    }
  }
  // Separated modes: particle means far apart compared with the particles' own spread.
  if (particles >= 4 && draws >= 2) {
    std::vector<std::string> split;
    std::int64_t worst = 0;
    const auto columns = std::min<std::size_t>(params.size(), static_cast<std::size_t>(source.layout().num_params()));
    for (std::size_t k = 0; k < columns; ++k) {
      const std::int64_t far =
          params[k].far_particles >= 0 ? params[k].far_particles : count_far_particles(source, static_cast<int>(k));
      if (far >= std::max<std::int64_t>(2, particles / 100)) {
        split.push_back(params[k].name);
        worst = std::max(worst, far);
      }
    }
    if (!split.empty()) {
      out.push_back("separated modes in " + std::to_string(split.size()) + " parameter(s) (" + list_names(split) +
                    "): up to " + std::to_string(worst) + " of " + std::to_string(particles) +
                    " particles sit more than 5 within-particle sds from the median particle (label switching, or "
                    "particles stuck far away); summaries mix the modes");
    }
  }
  return out;
}

}  // namespace hmc::diagnostics
