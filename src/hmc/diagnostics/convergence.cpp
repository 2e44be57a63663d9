#include "hmc/diagnostics/convergence.hpp"

#include "hmc/diagnostics/detail/buffer.hpp"
#include "hmc/diagnostics/detail/fft.hpp"
#include "hmc/diagnostics/detail/parallel.hpp"
#include "hmc/diagnostics/detail/quantile.hpp"
#include "hmc/diagnostics/detail/sort.hpp"
#include "hmc/diagnostics/detail/special.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <vector>

// Every statistic transcribes ArviZ 0.23.4 (arviz/stats/diagnostics.py: _rhat,
// _rhat_rank, _ess, _ess_bulk, _ess_tail, _ess_mean, _ess_quantile, _mcse_mean,
// _mcse_quantile, _bfmi, _z_scale, _split_chains; arviz/stats/stats_utils.py:
// autocov, quantile), keeping its order of operations where rounding could show,
// except tail ESS, which follows ArviZ 1.x (arviz_stats 1.3, base/diagnostics.py:
// _DiagnosticsBase._ess_tail and _ess_quantile, called with prob =
// rcParams["stats.ci_prob"] = 0.89 by base/dataarray.py's ess through
// validate_ci_prob; base/core.py: _CoreBase.quantile, numpy's quantile). The other
// functions named are the same in 1.x.
// The algorithms themselves are those of Vehtari et al. (2021) and, for nested
// R-hat, Margossian et al. (2024, arXiv:2110.13017), Eqs. (15)-(19) as numbered in
// the version the posterior R package's rhat_nested cites.
//
// Parallel steps split their work into blocks whose results either land in
// disjoint places or are combined in a fixed order (sums in the order a serial loop
// would add them), so no statistic depends on the number of threads. The building
// blocks live in detail/: the blocks and scratch memory (parallel, buffer), the radix
// sort (sort), the FFT autocovariance (fft), the special functions (special) and the
// type-7 quantile (quantile).

namespace hmc::diagnostics {

namespace detail {

double mean(const double* p, std::size_t n) {
  double s = 0.0;
  for (std::size_t i = 0; i < n; ++i) s += p[i];
  return s / static_cast<double>(n);
}

double variance(const double* p, std::size_t n) {
  const double m = mean(p, n);
  double ss = 0.0;
  for (std::size_t i = 0; i < n; ++i) ss += (p[i] - m) * (p[i] - m);
  return ss / static_cast<double>(n - 1);
}

}  // namespace detail

namespace {

using detail::aligned_blocks;
using detail::block_start;
using detail::blocks_for;
using detail::Buffer;
using detail::Latch;
using detail::Matrix;
using detail::mean;
using detail::mean_autocovariance;
using detail::order_key;
using detail::parallel_ranges;
using detail::Pool;
using detail::PoolScope;
using detail::run_blocks;
using detail::run_pair;
using detail::sort_with_index;
using detail::Sorted;
using detail::Type7;
using detail::type7_quantile;
using detail::variance;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool has_nan(const ChainDraws& x) {
  std::vector<char> found(static_cast<std::size_t>(std::max(1, x.chains)), 0);
  parallel_ranges(static_cast<std::size_t>(x.chains), static_cast<std::size_t>(x.chains) * x.draws,
                  [&](std::size_t c0, std::size_t c1) {
                    for (std::size_t c = c0; c < c1; ++c)
                      for (int t = 0; t < x.draws; ++t)
                        if (std::isnan(x(static_cast<int>(c), t))) {
                          found[c] = 1;
                          break;
                        }
                  });
  return std::find(found.begin(), found.end(), 1) != found.end();
}

/// Any draw −0.0 (ordered as +0.0 by the sort, so the order statistics it gives
/// could differ from nth_element's in the sign of a zero).
bool has_negative_zero(const ChainDraws& x) {
  std::vector<char> found(static_cast<std::size_t>(std::max(1, x.chains)), 0);
  parallel_ranges(static_cast<std::size_t>(x.chains), static_cast<std::size_t>(x.chains) * x.draws,
                  [&](std::size_t c0, std::size_t c1) {
                    for (std::size_t c = c0; c < c1; ++c)
                      for (int t = 0; t < x.draws; ++t) {
                        const double v = x(static_cast<int>(c), t);
                        if (v == 0.0 && std::signbit(v)) {
                          found[c] = 1;
                          break;
                        }
                      }
                  });
  return std::find(found.begin(), found.end(), 1) != found.end();
}

/// ArviZ's `_not_valid(ary, shape_kwargs=dict(min_draws=4, min_chains=...))`.
bool not_valid(const ChainDraws& x, int min_chains) {
  return x.data == nullptr || x.chains < min_chains || x.chains < 1 || x.draws < 4 || has_nan(x);
}

/// Split chains, `f` applied to every kept draw. Rows 0..C-1 hold the first halves,
/// rows C..2C-1 the second halves (ArviZ's `_split_chains` stacks them that way);
/// the middle draw of an odd-length chain belongs to neither.
template <class F>
Matrix split(const ChainDraws& x, F f) {
  Matrix m;
  const int half = x.draws / 2;
  m.rows = 2 * x.chains;
  m.cols = half;
  m.v = Buffer<double>(static_cast<std::size_t>(m.rows) * half);
  parallel_ranges(static_cast<std::size_t>(x.chains), static_cast<std::size_t>(x.chains) * x.draws,
                  [&](std::size_t c0, std::size_t c1) {
                    for (auto c = static_cast<int>(c0); c < static_cast<int>(c1); ++c) {
                      double* first = m.v.data() + static_cast<std::size_t>(c) * half;
                      double* second = m.v.data() + static_cast<std::size_t>(x.chains + c) * half;
                      for (int t = 0; t < half; ++t) {
                        first[t] = f(x(c, t));
                        second[t] = f(x(c, x.draws - half + t));
                      }
                    }
                  });
  return m;
}

Matrix split(const ChainDraws& x) {
  return split(x, [](double v) { return v; });
}

/// All draws, chain after chain.
std::vector<double> flatten(const ChainDraws& x) {
  std::vector<double> all;
  all.reserve(static_cast<std::size_t>(x.chains) * x.draws);
  for (int c = 0; c < x.chains; ++c)
    for (int t = 0; t < x.draws; ++t) all.push_back(x(c, t));
  return all;
}

/// variance(flatten(x)) without the copy: the same sums in the same order.
double variance_of_all(const ChainDraws& x) {
  const std::size_t n = static_cast<std::size_t>(x.chains) * static_cast<std::size_t>(x.draws);
  double s = 0.0;
  for (int c = 0; c < x.chains; ++c)
    for (int t = 0; t < x.draws; ++t) s += x(c, t);
  const double m = s / static_cast<double>(n);
  double ss = 0.0;
  for (int c = 0; c < x.chains; ++c)
    for (int t = 0; t < x.draws; ++t) ss += (x(c, t) - m) * (x(c, t) - m);
  return ss / static_cast<double>(n - 1);
}
/// Φ⁻¹((r − 3/8)/(S + 1/4)) for integer ranks r = 1..⌈S/2⌉ (score_table()); the
/// upper half follows by symmetry (scipy's ndtri also evaluates p > 1/2 as −ndtri(1 − p)).
class NormalScores {
 public:
  NormalScores(std::size_t size, const std::vector<double>& table) : size_(size), denom_(denom(size)), table_(table) {}

  static double denom(std::size_t size) { return static_cast<double>(size) - 2.0 * 0.375 + 1.0; }
  static double of_rank(double r, double denom) { return detail::normal_quantile((r - 0.375) / denom); }

  /// Score of the average rank (lo + 1 + hi) / 2 shared by sorted positions [lo, hi).
  double of_positions(std::size_t lo, std::size_t hi) const {
    if (hi == lo + 1) {  // no tie: an integer rank
      const std::size_t r = hi;
      return r <= table_.size() ? table_[r - 1] : -table_[size_ - r];
    }
    return of_rank(0.5 * static_cast<double>(lo + 1 + hi), denom_);
  }

 private:
  std::size_t size_;
  double denom_;
  const std::vector<double>& table_;
};

/// z[s.index[k]] = normal score of the (average) rank of the k-th smallest value;
/// ties are equal neighbouring keys.
void rank_scores(const Sorted& s, const NormalScores& scores, Buffer<double>& z) {
  const std::size_t n = s.key.size();
  if (z.size() != n) z = Buffer<double>(n);
  const int blocks = blocks_for(n);
  const auto start = aligned_blocks(n, blocks, [&](std::size_t i) { return s.key[i] != s.key[i - 1]; });
  run_blocks(blocks, [&](int b) {
    const std::size_t end = start[static_cast<std::size_t>(b) + 1];
    std::size_t i = start[static_cast<std::size_t>(b)];
    while (i < end) {
      std::size_t j = i + 1;
      while (j < end && s.key[j] == s.key[i]) ++j;
      const double score = scores.of_positions(i, j);
      for (std::size_t k = i; k < j; ++k) z[s.index[k]] = score;
      i = j;
    }
  });
}

/// rank_scores of the sorted split draws folded about their median, |x − med|,
/// without sorting again: |x − med| is non-increasing over the sorted lower half and
/// non-decreasing over the upper half, so one merge (walking down the lower half and
/// up the upper half) visits the folded keys in order; each run of equal keys (a tie)
/// gets the score of its average rank. One pass, no array besides z.
void tail_rank_scores(const Sorted& sorted, const NormalScores& scores, Buffer<double>& z) {
  const std::size_t size = sorted.key.size(), mid = size / 2;
  if (z.size() != size) z = Buffer<double>(size);
  const double median = (sorted.value(mid - 1) + sorted.value(mid)) / 2.0;
  const auto fold_key = [&](std::size_t i) { return order_key(std::fabs(sorted.value(i) - median)); };
  std::ptrdiff_t a = static_cast<std::ptrdiff_t>(mid) - 1;  // walks down the lower half
  std::size_t b = mid;                                      // walks up the upper half
  std::uint64_t key_a = a >= 0 ? fold_key(static_cast<std::size_t>(a)) : 0, key_b = b < size ? fold_key(b) : 0;
  std::vector<std::uint32_t> tie;  // indices of the current run of equal keys
  std::uint64_t tie_key = 0;
  std::size_t tie_start = 0;
  for (std::size_t out = 0; out < size; ++out) {
    std::uint64_t key;
    std::uint32_t index;
    if (a < 0 || (b < size && key_b < key_a)) {
      key = key_b;
      index = sorted.index[b++];
      if (b < size) key_b = fold_key(b);
    } else {
      key = key_a;
      index = sorted.index[static_cast<std::size_t>(a--)];
      if (a >= 0) key_a = fold_key(static_cast<std::size_t>(a));
    }
    if (out > 0 && key != tie_key) {
      const double score = scores.of_positions(tie_start, out);
      for (std::uint32_t i : tie) z[i] = score;
      tie.clear();
      tie_start = out;
    }
    tie_key = key;
    tie.push_back(index);
  }
  const double score = scores.of_positions(tie_start, size);
  for (std::uint32_t i : tie) z[i] = score;
}

/// ArviZ's `_ess` on a [chain][draw] matrix (relative=False).
double ess_of(const Matrix& m) {
  const std::size_t total = m.v.size();
  const int blocks = blocks_for(total);
  std::vector<double> lo(static_cast<std::size_t>(blocks)), hi(lo.size());
  std::vector<char> nan(lo.size(), 0);
  run_blocks(blocks, [&](int b) {
    const std::size_t i0 = block_start(total, blocks, b), i1 = block_start(total, blocks, b + 1);
    double mn = std::numeric_limits<double>::infinity(), mx = -mn;
    for (std::size_t i = i0; i < i1; ++i) {
      const double v = m.v[i];
      if (std::isnan(v)) nan[static_cast<std::size_t>(b)] = 1;
      mn = v < mn ? v : mn;
      mx = v > mx ? v : mx;
    }
    lo[static_cast<std::size_t>(b)] = mn;
    hi[static_cast<std::size_t>(b)] = mx;
  });
  if (std::find(nan.begin(), nan.end(), 1) != nan.end()) return kNaN;
  // Only the range matters here, so the per-block extremes may be combined in any order.
  if (*std::max_element(hi.begin(), hi.end()) - *std::min_element(lo.begin(), lo.end()) < 1e-15)
    return static_cast<double>(total);  // np.finfo(float).resolution
  const int n_chain = m.rows, n_draw = m.cols;
  std::vector<double> chain_mean(n_chain);
  parallel_ranges(static_cast<std::size_t>(n_chain), total, [&](std::size_t c0, std::size_t c1) {
    for (std::size_t c = c0; c < c1; ++c) chain_mean[c] = mean(m.row(static_cast<int>(c)), n_draw);
  });
  const std::vector<double> acov = mean_autocovariance(m, chain_mean);

  const double mean_var = acov[0] * n_draw / (n_draw - 1.0);
  double var_plus = mean_var * (n_draw - 1.0) / n_draw;
  if (n_chain > 1) var_plus += variance(chain_mean.data(), chain_mean.size());

  std::vector<double> rho(n_draw, 0.0);
  double rho_even = 1.0;
  rho[0] = rho_even;
  double rho_odd = 1.0 - (mean_var - acov[1]) / var_plus;
  rho[1] = rho_odd;

  // Geyer's initial positive sequence.
  int t = 1;
  while (t < n_draw - 3 && (rho_even + rho_odd) > 0.0) {
    rho_even = 1.0 - (mean_var - acov[t + 1]) / var_plus;
    rho_odd = 1.0 - (mean_var - acov[t + 2]) / var_plus;
    if ((rho_even + rho_odd) >= 0) {
      rho[t + 1] = rho_even;
      rho[t + 2] = rho_odd;
    }
    t += 2;
  }
  const int max_t = t - 2;
  if (rho_even > 0) rho[max_t + 1] = rho_even;  // max_t >= -1
  // Geyer's initial monotone sequence.
  t = 1;
  while (t <= max_t - 2) {
    if ((rho[t + 1] + rho[t + 2]) > (rho[t - 1] + rho[t])) {
      rho[t + 1] = (rho[t - 1] + rho[t]) / 2.0;
      rho[t + 2] = rho[t + 1];
    }
    t += 2;
  }

  const double ess = static_cast<double>(n_chain) * n_draw;
  double sum_head = 0.0;
  for (int i = 0; i <= max_t; ++i) sum_head += rho[i];
  double tau_hat = -1.0 + 2.0 * sum_head + (max_t + 1 < n_draw ? rho[max_t + 1] : 0.0);
  tau_hat = std::max(tau_hat, 1.0 / std::log10(ess));
  for (double r : rho)
    if (std::isnan(r)) return kNaN;
  return ess / tau_hat;
}

/// ArviZ's `_rhat` (classic R-hat of the given chains).
double rhat_of(const Matrix& m) {
  const int n = m.cols;
  std::vector<double> chain_mean(m.rows), chain_var(m.rows);
  parallel_ranges(static_cast<std::size_t>(m.rows), m.v.size(), [&](std::size_t c0, std::size_t c1) {
    for (auto c = static_cast<int>(c0); c < static_cast<int>(c1); ++c) {
      chain_mean[c] = mean(m.row(c), n);
      chain_var[c] = variance(m.row(c), n);
    }
  });
  const double between = n * variance(chain_mean.data(), chain_mean.size());
  const double within = mean(chain_var.data(), chain_var.size());
  return std::sqrt((between / within + n - 1) / n);
}

double ess_of_indicator(const ChainDraws& x, double q) {
  return ess_of(split(x, [q](double v) { return v <= q ? 1.0 : 0.0; }));
}

/// The probabilities of tail ESS, as arviz_stats' _ess_tail orders a scalar prob:
/// sorted((prob, 1 - prob)).
constexpr double kTailLow = 1.0 - kTailProb, kTailHigh = kTailProb;

/// The k-th smallest of `all` (reorders it).
double order_statistic(std::vector<double>& all, std::size_t k) {
  std::nth_element(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(k), all.end());
  return all[k];
}

/// The rank statistics index split draws with 32 bits.
bool too_many_for_ranks(const ChainDraws& x) {
  return static_cast<std::uint64_t>(x.chains) * static_cast<std::uint64_t>(x.draws / 2) * 2u >
         std::numeric_limits<std::uint32_t>::max();
}

/// mcse_quantile's interval for an ESS of `ess` and N = `size` draws: the positions
/// of the order statistics th1, th2 with mcse = (th2 − th1) / 2.
std::pair<std::size_t, std::size_t> mcse_quantile_positions(double ess, double prob, std::size_t n) {
  const double a = ess * prob + 1, b = ess * (1 - prob) + 1;
  const double ppf_low = detail::beta_quantile(0.1586553, a, b);
  const double ppf_high = detail::beta_quantile(0.8413447, a, b);
  const auto size = static_cast<std::ptrdiff_t>(n);
  const double lo_pos = ppf_low * static_cast<double>(size) - 1;
  const double hi_pos = ppf_high * static_cast<double>(size) - 1;
  // np.nanmax / np.nanmin ignore a NaN quantile; a negative index counts from the end.
  auto index = [size](double pos) {
    auto i = static_cast<std::ptrdiff_t>(pos);
    return i < 0 ? i + size : i;
  };
  const std::ptrdiff_t i1 = index(std::floor(std::isnan(lo_pos) ? 0.0 : std::max(lo_pos, 0.0)));
  const std::ptrdiff_t i2 = index(
      std::ceil(std::isnan(hi_pos) ? static_cast<double>(size - 1) : std::min(hi_pos, static_cast<double>(size - 1))));
  return {static_cast<std::size_t>(i1), static_cast<std::size_t>(i2)};
}

}  // namespace

// ---------------------------------------------------------------------------

struct Workspace::Impl {
  Pool pool;
  std::size_t size = 0;
  bool filled = false;
  std::vector<double> table;
};

Workspace::Workspace() : impl_(std::make_unique<Impl>()) {}
Workspace::~Workspace() = default;

namespace {

/// The normal scores of the integer ranks 1..⌈S/2⌉ for S split draws, computed in
/// parallel when S changes.
const std::vector<double>& score_table(Workspace::Impl& w, std::size_t split_draws) {
  if (w.filled && w.size == split_draws) return w.table;
  w.filled = false;
  w.table.assign((split_draws + 1) / 2, 0.0);
  const double denom = NormalScores::denom(split_draws);
  parallel_ranges(w.table.size(), w.table.size() * 8, [&](std::size_t r0, std::size_t r1) {
    for (std::size_t r = r0 + 1; r <= r1; ++r) w.table[r - 1] = NormalScores::of_rank(static_cast<double>(r), denom);
  });
  w.size = split_draws;
  w.filled = true;
  return w.table;
}

}  // namespace

double rhat(const ChainDraws& x) {
  if (not_valid(x, 2) || too_many_for_ranks(x)) return kNaN;
  Workspace w;
  const PoolScope scope(w.impl().pool);
  Matrix z = split(x);
  const Sorted sorted = sort_with_index(z.v);
  const NormalScores scores(z.v.size(), score_table(w.impl(), z.v.size()));
  rank_scores(sorted, scores, z.v);
  const double rhat_bulk = rhat_of(z);
  tail_rank_scores(sorted, scores, z.v);
  const double rhat_tail = rhat_of(z);
  return rhat_tail > rhat_bulk ? rhat_tail : rhat_bulk;  // Python's max(bulk, tail)
}

double ess_bulk(const ChainDraws& x) {
  if (not_valid(x, 1) || too_many_for_ranks(x)) return kNaN;
  Workspace w;
  const PoolScope scope(w.impl().pool);
  Matrix z = split(x);
  const Sorted sorted = sort_with_index(z.v);
  rank_scores(sorted, NormalScores(z.v.size(), score_table(w.impl(), z.v.size())), z.v);
  return ess_of(z);
}

double ess_quantile(const ChainDraws& x, double prob) {
  if (not_valid(x, 1)) return kNaN;
  std::vector<double> all = flatten(x);
  return ess_of_indicator(x, type7_quantile(all, prob, Type7::kScipy));
}

double ess_tail(const ChainDraws& x) {
  if (not_valid(x, 1)) return kNaN;
  std::vector<double> all = flatten(x);
  const double q_low = type7_quantile(all, kTailLow, Type7::kNumpyLerp);
  const double q_high = type7_quantile(all, kTailHigh, Type7::kNumpyLerp);
  const double ess_low = ess_of_indicator(x, q_low);
  const double ess_high = ess_of_indicator(x, q_high);
  return ess_high < ess_low ? ess_high : ess_low;  // Python's min(low, high)
}

double ess_mean(const ChainDraws& x) {
  if (not_valid(x, 1)) return kNaN;
  return ess_of(split(x));
}

double mcse_mean(const ChainDraws& x) {
  if (not_valid(x, 1)) return kNaN;
  const double sd = std::sqrt(variance_of_all(x));
  return sd / std::sqrt(ess_mean(x));
}

double mcse_quantile(const ChainDraws& x, double prob) {
  if (not_valid(x, 1)) return kNaN;
  const double ess = ess_quantile(x, prob);
  std::vector<double> all = flatten(x);
  const auto [i1, i2] = mcse_quantile_positions(ess, prob, all.size());
  const double th1 = order_statistic(all, i1);
  const double th2 = order_statistic(all, i2);
  return (th2 - th1) / 2;
}

Statistics statistics(const ChainDraws& x, Workspace* workspace, const std::vector<std::size_t>& order,
                      std::vector<double>* order_values) {
  Statistics st{kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN};
  const std::size_t n = x.data == nullptr ? 0 : static_cast<std::size_t>(x.chains) * static_cast<std::size_t>(x.draws);
  if (order_values != nullptr) order_values->assign(order.size(), kNaN);
  if (not_valid(x, 1) || too_many_for_ranks(x) || has_negative_zero(x)) {
    // The rare cases, one statistic at a time.
    st.rhat = rhat(x);
    st.ess_bulk = ess_bulk(x);
    st.ess_tail = ess_tail(x);
    st.ess_mean = ess_mean(x);
    st.mcse_mean = mcse_mean(x);
    st.mcse_q5 = mcse_quantile(x, 0.05);
    st.mcse_q95 = mcse_quantile(x, 0.95);
    if (order_values != nullptr && n > 0) {
      std::vector<double> all = flatten(x);
      for (std::size_t i = 0; i < order.size(); ++i)
        if (order[i] < n) (*order_values)[i] = order_statistic(all, order[i]);
    }
    return st;
  }

  // One split, one sort, one table of normal scores, shared by every statistic. The
  // work runs as two tasks: A sorts the split draws, then rank-normalises them (in
  // place, once B is done with them) for R-hat, then computes the two ESS of tail
  // ESS; B computes four ESS (mean, the two indicators of the quantile MCSEs, bulk),
  // waiting for A's sort (the quantiles, all four thresholds found by B: the
  // selection of the odd case reorders `all`) and bulk ranks. With an even number of
  // draws per chain the split draws are all the draws, so the sort gives the order
  // statistics too; with an odd number, they come from selection. Peak scratch:
  // about 40 bytes per draw.
  Workspace local;
  Workspace::Impl& w = (workspace != nullptr ? workspace : &local)->impl();
  const PoolScope scope(w.pool);
  const bool even = x.draws % 2 == 0;
  Matrix z = split(x);
  const std::size_t size = z.v.size();
  const NormalScores scores(size, score_table(w, size));
  Sorted sorted;
  std::vector<double> all;  // odd draws: all draws, for selection
  if (!even) all = flatten(x);
  const auto kth = [&](std::size_t k) { return even ? sorted.value(k) : order_statistic(all, k); };
  double rhat_bulk = kNaN, rhat_tail = kNaN, ess_low = kNaN, ess_high = kNaN;  // ess_*: the MCSE quantiles
  double tail_q_low = kNaN, tail_q_high = kNaN, tail_low = kNaN, tail_high = kNaN;

  const auto a_sort = [&] { sorted = sort_with_index(z.v); };
  const auto a_bulk = [&] {
    rank_scores(sorted, scores, z.v);
    if (x.chains >= 2) rhat_bulk = rhat_of(z);
  };
  const auto a_tail = [&] {
    if (x.chains < 2) return;
    Matrix tail{Buffer<double>(), z.rows, z.cols};
    tail_rank_scores(sorted, scores, tail.v);
    rhat_tail = rhat_of(tail);
  };
  const auto b_mean = [&] {
    st.ess_mean = ess_of(z);
    st.mcse_mean = std::sqrt(variance_of_all(x)) / std::sqrt(st.ess_mean);
  };
  const auto b_thresholds = [&] {
    tail_q_low = type7_quantile(n, kTailLow, Type7::kNumpyLerp, kth);
    tail_q_high = type7_quantile(n, kTailHigh, Type7::kNumpyLerp, kth);
  };
  const auto b_quantiles = [&] {
    ess_low = ess_of_indicator(x, type7_quantile(n, 0.05, Type7::kScipy, kth));
    ess_high = ess_of_indicator(x, type7_quantile(n, 0.95, Type7::kScipy, kth));
  };
  const auto a_tail_ess = [&] {
    tail_low = ess_of_indicator(x, tail_q_low);
    tail_high = ess_of_indicator(x, tail_q_high);
  };
  const auto b_bulk = [&] { st.ess_bulk = ess_of(z); };

  Latch sorted_ready, z_free, bulk_ready, thresholds_ready;
  run_pair(
      [&] {
        try {
          a_sort();
          sorted_ready.set();
          if (!z_free.wait()) throw std::runtime_error("statistics: the other task failed");
          a_bulk();
          bulk_ready.set();
        } catch (...) {
          sorted_ready.set(false);
          bulk_ready.set(false);
          throw;
        }
        a_tail();
        if (!thresholds_ready.wait()) throw std::runtime_error("statistics: the other task failed");
        a_tail_ess();
      },
      [&] {
        try {
          b_mean();
          z_free.set();
        } catch (...) {
          z_free.set(false);
          thresholds_ready.set(false);
          throw;
        }
        if (!sorted_ready.wait()) {
          thresholds_ready.set(false);
          return;
        }
        try {
          b_thresholds();
          thresholds_ready.set();
        } catch (...) {
          thresholds_ready.set(false);
          throw;
        }
        b_quantiles();
        if (!bulk_ready.wait()) return;
        b_bulk();
      },
      [&] {
        b_mean();
        a_sort();
        b_thresholds();
        b_quantiles();
        a_bulk();
        a_tail();
        a_tail_ess();
        b_bulk();
      });

  st.rhat = rhat_tail > rhat_bulk ? rhat_tail : rhat_bulk;    // Python's max(bulk, tail)
  st.ess_tail = tail_high < tail_low ? tail_high : tail_low;  // Python's min(low, high)
  const double probs[2] = {0.05, 0.95}, ess_q[2] = {ess_low, ess_high};
  std::size_t positions[2][2];
  // The bisections for the Beta quantiles are independent: two blocks.
  run_blocks(
      2, [&](int i) { std::tie(positions[i][0], positions[i][1]) = mcse_quantile_positions(ess_q[i], probs[i], n); });
  st.mcse_q5 = (kth(positions[0][1]) - kth(positions[0][0])) / 2;
  st.mcse_q95 = (kth(positions[1][1]) - kth(positions[1][0])) / 2;
  if (order_values != nullptr)
    for (std::size_t i = 0; i < order.size(); ++i)
      if (order[i] < n) (*order_values)[i] = kth(order[i]);
  return st;
}

double rhat_nested_from_moments(const std::vector<double>& chain_mean, const std::vector<double>& chain_var,
                                int superchains) {
  const int k_super = superchains;
  const auto chains = static_cast<int>(chain_mean.size());
  if (k_super < 2 || chains < k_super || chains % k_super != 0 || chain_var.size() != chain_mean.size()) return kNaN;
  const int m_chains = chains / k_super;
  std::vector<double> super_mean(k_super), within(k_super);
  for (int k = 0; k < k_super; ++k) {
    const double* cm = chain_mean.data() + static_cast<std::size_t>(k) * m_chains;
    const double* cv = chain_var.data() + static_cast<std::size_t>(k) * m_chains;
    // Eq. (15): equal-length chains, so the superchain mean is the mean of its chain means.
    super_mean[k] = mean(cm, m_chains);
    const double between_chain = m_chains > 1 ? variance(cm, m_chains) : 0.0;  // B̃_k
    within[k] = between_chain + mean(cv, m_chains);                            // B̃_k + W̃_k
  }
  const double between_super = variance(super_mean.data(), k_super);  // B̂ν, Eqs. (16)-(17)
  const double within_super = mean(within.data(), k_super);           // Ŵν, Eq. (18)
  return std::sqrt(1.0 + between_super / within_super);               // Eq. (19)
}

double rhat_nested(const ChainDraws& x, int superchains) {
  const int k_super = superchains;
  if (x.data == nullptr || k_super < 2 || x.chains < k_super || x.chains % k_super != 0 || x.draws < 1 || has_nan(x))
    return kNaN;
  const int n = x.draws;
  std::vector<double> chain_mean(x.chains), chain_var(x.chains, 0.0), row(n);
  for (int c = 0; c < x.chains; ++c) {
    for (int t = 0; t < n; ++t) row[t] = x(c, t);
    chain_mean[c] = mean(row.data(), n);
    if (n > 1) chain_var[c] = variance(row.data(), n);  // W̃_k's terms; 0 if N = 1
  }
  return rhat_nested_from_moments(chain_mean, chain_var, k_super);
}

double e_bfmi(const double* energy, int draws, std::ptrdiff_t stride) {
  if (energy == nullptr || draws < 2) return kNaN;
  std::vector<double> e(draws);
  for (int t = 0; t < draws; ++t) e[t] = energy[t * stride];
  double num = 0.0;
  for (int t = 1; t < draws; ++t) num += (e[t] - e[t - 1]) * (e[t] - e[t - 1]);
  num /= (draws - 1);
  return num / variance(e.data(), e.size());
}

}  // namespace hmc::diagnostics
