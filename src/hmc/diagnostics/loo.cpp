#include "hmc/diagnostics/loo.hpp"

#include "hmc/core/errors.hpp"
#include "hmc/diagnostics/convergence.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <utility>

namespace hmc::diagnostics {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

double logsumexp(const std::vector<double>& x) {
  if (x.empty()) return -kInf;
  const double m = *std::max_element(x.begin(), x.end());
  if (!std::isfinite(m)) return m;
  double s = 0.0;
  for (double v : x) s += std::exp(v - m);
  return std::log(s) + m;
}

double mean(const std::vector<double>& x) {
  double s = 0.0;
  for (double v : x) s += v;
  return s / static_cast<double>(x.size());
}

/// Tail draws M of S weights under `rule` (see loo.hpp).
std::int64_t tail_length(std::int64_t S, double r_eff, LooRule rule) {
  const double s = static_cast<double>(S);
  if (rule == LooRule::kArviz1) {
    return static_cast<std::int64_t>(s * r_eff > 225.0 ? std::floor(3.0 * std::sqrt(s / r_eff)) : std::floor(s / 5.0));
  }
  const double a = s / 5.0, b = 3.0 * std::sqrt(s / r_eff);
  return static_cast<std::int64_t>(std::ceil(b < a ? b : a));  // Python's min(a, b): a when b is NaN
}

/// Quantile p of the generalized Pareto distribution (k, sigma) above mu.
double gp_quantile(double p, double k, double sigma, double mu, LooRule rule) {
  if (!(sigma > 0.0) && !std::isnan(sigma)) return kNaN;
  if (rule == LooRule::kArviz1) {
    return k == 0.0 ? mu - sigma * std::log1p(-p) : mu + sigma * std::expm1(-k * std::log1p(-p)) / k;
  }
  const double x = std::fabs(k) < DBL_EPSILON ? -std::log1p(-p) : std::expm1(-k * std::log1p(-p)) / k;
  return x * sigma;
}

}  // namespace

std::pair<double, double> gpd_fit(const std::vector<double>& x, LooRule rule) {
  constexpr double prior_bs = 3.0, prior_k = 10.0;
  const std::size_t n = x.size();
  const double nd = static_cast<double>(n);
  const auto m_est = static_cast<std::size_t>(30 + static_cast<long long>(std::sqrt(nd)));
  const double xstar = x[static_cast<std::size_t>(nd / 4.0 + 0.5) - 1];  // the first quartile
  if (rule == LooRule::kArviz1 && xstar <= x[0]) return {kNaN, kNaN};
  std::vector<double> b(m_est), k(m_est), len(m_est);
  for (std::size_t j = 0; j < m_est; ++j) {
    b[j] = 1.0 - std::sqrt(static_cast<double>(m_est) / (static_cast<double>(j + 1) - 0.5));
    b[j] /= prior_bs * xstar;
    b[j] += 1.0 / x[n - 1];
    double s = 0.0;
    for (double v : x) s += std::log1p(-b[j] * v);
    k[j] = s / nd;
    len[j] = nd * (std::log(-(b[j] / k[j])) - k[j] - 1.0);
  }
  std::vector<double> w(m_est);
  if (rule == LooRule::kArviz1) {
    const double lse = logsumexp(len);
    for (std::size_t j = 0; j < m_est; ++j) w[j] = std::exp(len[j] - lse);
  } else {
    for (std::size_t j = 0; j < m_est; ++j) {
      double s = 0.0;
      for (std::size_t i = 0; i < m_est; ++i) s += std::exp(len[i] - len[j]);
      w[j] = 1.0 / s;
    }
  }
  std::vector<double> wk, bk;
  for (std::size_t j = 0; j < m_est; ++j) {
    if (w[j] >= 10.0 * DBL_EPSILON) {
      wk.push_back(w[j]);
      bk.push_back(b[j]);
    }
  }
  const double wsum = std::accumulate(wk.begin(), wk.end(), 0.0);
  double b_post = 0.0;
  for (std::size_t j = 0; j < wk.size(); ++j) b_post += bk[j] * (wk[j] / wsum);
  double s = 0.0;
  for (double v : x) s += std::log1p(-b_post * v);
  double kappa = s / nd;
  const double sigma = -kappa / b_post;
  kappa = (nd * kappa + prior_k * 0.5) / (nd + prior_k);
  if (rule == LooRule::kArviz1 && std::isnan(kappa)) return {kInf, kNaN};
  return {kappa, sigma};
}

double psis_log_weights(std::vector<double>& x, double r_eff, LooRule rule) {
  const auto n = static_cast<std::int64_t>(x.size());
  if (n == 0) return kInf;
  const double max_x = *std::max_element(x.begin(), x.end());
  for (double& v : x) v -= max_x;
  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
    return x[static_cast<std::size_t>(a)] < x[static_cast<std::size_t>(b)];
  });
  const auto at = [&](std::int64_t r) -> double& {
    return x[static_cast<std::size_t>(order[static_cast<std::size_t>(r)])];
  };
  const std::int64_t M = tail_length(n, r_eff, rule);
  double k = kInf;
  if (M >= 1 && n - M - 1 >= 0) {
    if (rule == LooRule::kArviz1) {
      const double cutoff = at(n - M - 1), max_tail = at(n - 1), min_tail = at(n - M);
      if (M < 5) {
        k = kInf;  // ArviZ refuses so short a tail; nothing is smoothed
      } else if (std::fabs(max_tail - min_tail) < DBL_MIN) {
        k = kNaN;  // ArviZ refuses a constant tail; nothing is smoothed
      } else {
        const double ecut = std::exp(cutoff);
        std::vector<double> tail(static_cast<std::size_t>(M));
        for (std::int64_t j = 0; j < M; ++j) tail[static_cast<std::size_t>(j)] = std::exp(at(n - M + j)) - ecut;
        double sigma;
        std::tie(k, sigma) = gpd_fit(tail, rule);
        if (std::isfinite(k)) {
          for (std::int64_t j = 0; j < M; ++j) {
            const double p = (static_cast<double>(j) + 0.5) / static_cast<double>(M);
            double v = std::log(gp_quantile(p, k, sigma, ecut, rule));
            if (v > max_tail) v = max_tail;
            at(n - M + j) = v;
          }
        }
      }
    } else {
      const double xcutoff = std::max(at(n - M - 1), std::log(DBL_MIN));
      // the weights above the cutoff, ascending
      std::int64_t first = n;
      while (first > 0 && at(first - 1) > xcutoff) --first;
      const std::int64_t len = n - first;
      if (len > 4) {
        const double ecut = std::exp(xcutoff);
        std::vector<double> tail(static_cast<std::size_t>(len));
        for (std::int64_t j = 0; j < len; ++j) tail[static_cast<std::size_t>(j)] = std::exp(at(first + j)) - ecut;
        double sigma;
        std::tie(k, sigma) = gpd_fit(tail, rule);
        if (std::isfinite(k)) {
          for (std::int64_t j = 0; j < len; ++j) {
            const double p = (static_cast<double>(j) + 0.5) / static_cast<double>(len);
            at(first + j) = std::log(gp_quantile(p, k, sigma, 0.0, rule) + ecut);
          }
          for (double& v : x)
            if (v > 0.0) v = 0.0;
        }
      }
    }
  }
  const double lse = logsumexp(x);
  for (double& v : x) v -= lse;
  return k;
}

LooResult loo(const hmc::DrawSource& source, LooRule rule) {
  const StoreLayout& layout = source.layout();
  const int g = layout.group_index("log_likelihood");
  if (g < 0) throw RunError("the run has no log_likelihood group (set /output/log_likelihood to true)");
  const std::int64_t chains = layout.particles, draws = source.available(Section::kPosterior);
  const std::int64_t S = chains * draws;
  LooResult r;
  r.rule = rule;
  r.n_samples = S;
  r.n_data_points = layout.groups[static_cast<std::size_t>(g)].size();
  if (S == 0) throw RunError("the run has no post-warmup draws for PSIS-LOO");
  std::vector<double> buf(static_cast<std::size_t>(S));

  // r_eff: the mean ESS of the mean over every posterior element, over S.
  if (chains > 1) {
    double sum = 0.0;
    for (int c = 0; c < layout.num_params(); ++c) {
      source.read(Section::kPosterior, c, 0, chains, buf.data());
      sum += ess_mean(ChainDraws{buf.data(), static_cast<int>(chains), static_cast<int>(draws), draws, 1});
    }
    r.r_eff = sum / layout.num_params() / static_cast<double>(S);
  }
  r.good_k = S > 1 ? std::min(1.0 - 1.0 / std::log10(static_cast<double>(S)), 0.7) : 0.7;

  const int first = layout.group_column(static_cast<std::size_t>(g));
  std::vector<double> lw(buf.size());
  double lppd = 0.0;
  for (std::int64_t i = 0; i < r.n_data_points; ++i) {
    source.read(Section::kPosterior, first + static_cast<int>(i), 0, chains, buf.data());
    for (std::size_t s = 0; s < buf.size(); ++s) lw[s] = -buf[s];
    const double k = psis_log_weights(lw, r.r_eff, rule);
    for (std::size_t s = 0; s < buf.size(); ++s) lw[s] += buf[s];
    const double e = logsumexp(lw);
    const double l = logsumexp(buf) - std::log(static_cast<double>(S));
    r.elpd_i.push_back(e);
    r.pareto_k.push_back(k);
    lppd += l;
    if (k <= r.good_k)
      ++r.k_good;
    else if (k <= 1.0)
      ++r.k_bad;
    else
      ++r.k_very_bad;
  }
  const double n = static_cast<double>(r.n_data_points);
  r.elpd_loo = std::accumulate(r.elpd_i.begin(), r.elpd_i.end(), 0.0);
  const double m = r.elpd_loo / n;
  double ss = 0.0;
  for (double e : r.elpd_i) ss += (e - m) * (e - m);
  const double ddof = rule == LooRule::kArviz1 ? 1.0 : 0.0;
  r.se = r.n_data_points > 1 ? std::sqrt(n * ss / (n - ddof)) : 0.0;
  r.p_loo = lppd - r.elpd_loo;
  return r;
}

std::string loo_text(const LooResult& r) {
  char buf[512];
  std::string s;
  std::snprintf(buf, sizeof buf, "PSIS-LOO (as ArviZ %s) from %lld posterior draws and %lld observations, r_eff %.3g\n",
                r.rule == LooRule::kArviz1 ? "1.x" : "0.23", static_cast<long long>(r.n_samples),
                static_cast<long long>(r.n_data_points), r.r_eff);
  s += buf;
  std::snprintf(buf, sizeof buf, "         Estimate       SE\nelpd_loo %8.2f %8.2f\np_loo    %8.2f        -\n",
                r.elpd_loo, r.se, r.p_loo);
  s += buf;
  const double n = static_cast<double>(std::max<std::int64_t>(1, r.n_data_points));
  std::snprintf(buf, sizeof buf,
                "Pareto k diagnostic values:\n"
                "                         Count   Pct.\n"
                "(-Inf, %.2f]   (good)     %5lld  %5.1f%%\n"
                "   (%.2f, 1]   (bad)      %5lld  %5.1f%%\n"
                "    (1, Inf)   (very bad) %5lld  %5.1f%%",
                r.good_k, static_cast<long long>(r.k_good), 100.0 * r.k_good / n, r.good_k,
                static_cast<long long>(r.k_bad), 100.0 * r.k_bad / n, static_cast<long long>(r.k_very_bad),
                100.0 * r.k_very_bad / n);
  s += buf;
  return s;
}

}  // namespace hmc::diagnostics
