#include "hmc/diagnostics/convergence.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <tuple>
#include <utility>
#include <vector>

// Every statistic transcribes ArviZ 0.23.4 (arviz/stats/diagnostics.py: _rhat,
// _rhat_rank, _ess, _ess_bulk, _ess_tail, _ess_mean, _ess_quantile, _mcse_mean,
// _mcse_quantile, _bfmi, _z_scale, _split_chains; arviz/stats/stats_utils.py:
// autocov, quantile), keeping its order of operations where rounding could show.
// The algorithms themselves are those of Vehtari et al. (2021) and, for nested
// R-hat, Margossian et al. (2024, arXiv:2110.13017), Eqs. (15)-(19) as numbered in
// the version the posterior R package's rhat_nested cites.

namespace hmc::diagnostics {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kPi = 3.14159265358979323846;

/// Draws as a dense row-major [chain][draw] matrix.
struct Matrix {
  std::vector<double> v;
  int rows = 0, cols = 0;
  const double* row(int r) const { return v.data() + static_cast<std::size_t>(r) * cols; }
};

bool has_nan(const ChainDraws& x) {
  for (int c = 0; c < x.chains; ++c)
    for (int t = 0; t < x.draws; ++t)
      if (std::isnan(x(c, t))) return true;
  return false;
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
  m.v.resize(static_cast<std::size_t>(m.rows) * half);
  for (int c = 0; c < x.chains; ++c) {
    double* first = m.v.data() + static_cast<std::size_t>(c) * half;
    double* second = m.v.data() + static_cast<std::size_t>(x.chains + c) * half;
    for (int t = 0; t < half; ++t) {
      first[t] = f(x(c, t));
      second[t] = f(x(c, x.draws - half + t));
    }
  }
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

double mean(const double* p, std::size_t n) {
  double s = 0.0;
  for (std::size_t i = 0; i < n; ++i) s += p[i];
  return s / static_cast<double>(n);
}

/// numpy's var(ddof=1): mean first, then the squared deviations.
double variance(const double* p, std::size_t n) {
  const double m = mean(p, n);
  double ss = 0.0;
  for (std::size_t i = 0; i < n; ++i) ss += (p[i] - m) * (p[i] - m);
  return ss / static_cast<double>(n - 1);
}

// ---------------------------------------------------------------------------
// Sorting: radix sort of order-preserving integer keys, carrying the indices.
// Rank normalisation needs the full permutation of up to ~10^7 split draws; a
// few counting passes beat a comparison sort there by several times.

std::uint64_t order_key(double v) {
  if (v == 0.0) v = 0.0;  // -0 and +0 are ties
  std::uint64_t u;
  std::memcpy(&u, &v, sizeof u);
  return (u >> 63) != 0 ? ~u : (u | (std::uint64_t{1} << 63));
}

double from_order_key(std::uint64_t k) {
  const std::uint64_t u = (k >> 63) != 0 ? (k & ~(std::uint64_t{1} << 63)) : ~k;
  double v;
  std::memcpy(&v, &u, sizeof v);
  return v;
}

/// Order keys in ascending order and, for each, its position in the input. Equal
/// keys are equal values (ties).
struct Sorted {
  std::vector<std::uint64_t> key;
  std::vector<std::uint32_t> index;
  double value(std::size_t i) const { return from_order_key(key[i]); }
};

/// Sorts NaN-free `v`: LSD radix passes over the top 31 key bits only (three
/// 11-bit digits, half the memory traffic of a full 64-bit sort), then each run of
/// keys sharing those bits, short for continuous data, is sorted by the full key.
Sorted sort_with_index(const std::vector<double>& v) {
  constexpr int kBits = 11, kBuckets = 1 << kBits, kFirstPass = 3, kPasses = 6, kLowBits = kFirstPass * kBits;
  const std::size_t n = v.size();
  std::vector<std::uint64_t> key(n), key_tmp(n);
  std::vector<std::uint32_t> idx(n), idx_tmp(n);
  std::vector<std::size_t> hist(static_cast<std::size_t>(kPasses) * kBuckets, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t k = order_key(v[i]);
    key[i] = k;
    idx[i] = static_cast<std::uint32_t>(i);
    for (int p = kFirstPass; p < kPasses; ++p) ++hist[p * kBuckets + ((k >> (p * kBits)) & (kBuckets - 1))];
  }
  for (int p = kFirstPass; p < kPasses; ++p) {
    std::size_t* h = hist.data() + p * kBuckets;
    // A digit shared by every key leaves the order unchanged.
    if (std::any_of(h, h + kBuckets, [n](std::size_t c) { return c == n; })) continue;
    std::size_t sum = 0;
    for (int b = 0; b < kBuckets; ++b) {
      const std::size_t c = h[b];
      h[b] = sum;
      sum += c;
    }
    const int shift = p * kBits;
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t pos = h[(key[i] >> shift) & (kBuckets - 1)]++;
      key_tmp[pos] = key[i];
      idx_tmp[pos] = idx[i];
    }
    key.swap(key_tmp);
    idx.swap(idx_tmp);
  }
  std::vector<std::uint64_t>().swap(key_tmp);  // release before the next allocation
  std::vector<std::uint32_t>().swap(idx_tmp);

  std::vector<std::pair<std::uint64_t, std::uint32_t>> run;
  for (std::size_t lo = 0; lo < n;) {
    std::size_t hi = lo + 1;
    while (hi < n && (key[hi] >> kLowBits) == (key[lo] >> kLowBits)) ++hi;
    if (hi - lo <= 32) {  // insertion sort; equal keys (ties) do not move
      for (std::size_t i = lo + 1; i < hi; ++i) {
        const std::uint64_t k = key[i];
        const std::uint32_t x = idx[i];
        std::size_t j = i;
        for (; j > lo && key[j - 1] > k; --j) {
          key[j] = key[j - 1];
          idx[j] = idx[j - 1];
        }
        key[j] = k;
        idx[j] = x;
      }
    } else if (!std::is_sorted(key.begin() + static_cast<std::ptrdiff_t>(lo),
                               key.begin() + static_cast<std::ptrdiff_t>(hi))) {
      run.clear();
      for (std::size_t i = lo; i < hi; ++i) run.emplace_back(key[i], idx[i]);
      std::sort(run.begin(), run.end());
      for (std::size_t i = lo; i < hi; ++i) std::tie(key[i], idx[i]) = run[i - lo];
    }
    lo = hi;
  }

  return Sorted{std::move(key), std::move(idx)};
}

/// Φ⁻¹((r − 3/8)/(S + 1/4)) for integer ranks r = 1..⌈S/2⌉; the upper half follows
/// by symmetry (scipy's ndtri also evaluates p > 1/2 as −ndtri(1 − p)).
class NormalScores {
 public:
  explicit NormalScores(std::size_t size) : size_(size), denom_(static_cast<double>(size) - 2.0 * 0.375 + 1.0) {
    table_.resize((size + 1) / 2);
    for (std::size_t r = 1; r <= table_.size(); ++r) table_[r - 1] = of_rank(static_cast<double>(r));
  }

  /// Score of the average rank (lo + 1 + hi) / 2 shared by sorted positions [lo, hi).
  double of_positions(std::size_t lo, std::size_t hi) const {
    if (hi == lo + 1) {  // no tie: an integer rank
      const std::size_t r = hi;
      return r <= table_.size() ? table_[r - 1] : -table_[size_ - r];
    }
    return of_rank(0.5 * static_cast<double>(lo + 1 + hi));
  }

 private:
  double of_rank(double r) const { return detail::normal_quantile((r - 0.375) / denom_); }

  std::size_t size_;
  double denom_;
  std::vector<double> table_;
};

/// z[s.index[k]] = normal score of the (average) rank of the k-th smallest value;
/// ties are equal neighbouring keys.
void rank_scores(const Sorted& s, const NormalScores& scores, std::vector<double>& z) {
  const std::size_t n = s.key.size();
  z.resize(n);
  std::size_t i = 0;
  while (i < n) {
    std::size_t j = i + 1;
    while (j < n && s.key[j] == s.key[i]) ++j;
    const double score = scores.of_positions(i, j);
    for (std::size_t k = i; k < j; ++k) z[s.index[k]] = score;
    i = j;
  }
}

// ---------------------------------------------------------------------------
// FFT autocovariance.

/// In-place iterative radix-2 FFT, X_k = Σ_j x_j e^{−2πi jk/n}.
class Fft {
 public:
  explicit Fft(int n) : n_(n), rev_(n), cos_(n / 2), sin_(n / 2) {
    int bits = 0;
    while ((1 << bits) < n) ++bits;
    for (int i = 0; i < n; ++i) {
      int r = 0;
      for (int b = 0; b < bits; ++b) r |= ((i >> b) & 1) << (bits - 1 - b);
      rev_[i] = r;
    }
    for (int k = 0; k < n / 2; ++k) {
      const double a = -2.0 * kPi * k / n;
      cos_[k] = std::cos(a);
      sin_[k] = std::sin(a);
    }
  }

  void forward(double* re, double* im) const {
    for (int i = 0; i < n_; ++i)
      if (i < rev_[i]) {
        std::swap(re[i], re[rev_[i]]);
        std::swap(im[i], im[rev_[i]]);
      }
    for (int len = 2; len <= n_; len <<= 1) {
      const int half = len / 2, step = n_ / len;
      for (int start = 0; start < n_; start += len)
        for (int j = 0; j < half; ++j) {
          const double wr = cos_[j * step], wi = sin_[j * step];
          const int a = start + j, b = a + half;
          const double tr = re[b] * wr - im[b] * wi;
          const double ti = re[b] * wi + im[b] * wr;
          re[b] = re[a] - tr;
          im[b] = im[a] - ti;
          re[a] += tr;
          im[a] += ti;
        }
    }
  }

 private:
  int n_;
  std::vector<int> rev_;
  std::vector<double> cos_, sin_;
};

/// Mean over chains of each chain's autocovariance at lags 0..n-1,
/// acov_c(t) = (1/n) Σ_i (x_i − x̄)(x_{i+t} − x̄), as ArviZ's `autocov` computes it:
/// FFT zero-padded to ≥ 2n (a power of two here; any length ≥ 2n − 1 gives the
/// same linear correlation). By linearity the mean needs a single inverse transform
/// of the summed power spectra, and two real chains share one complex transform:
/// with Z = FFT(x + iy), |X_k|² + |Y_k|² = (|Z_k|² + |Z_{N−k}|²) / 2.
std::vector<double> mean_autocovariance(const Matrix& m, const std::vector<double>& chain_mean) {
  const int n = m.cols;
  int size = 1;
  while (size < 2 * n) size <<= 1;
  const Fft fft(size);
  std::vector<double> power(size, 0.0), re(size), im(size);
  for (int r = 0; r < m.rows; r += 2) {
    const bool pair = r + 1 < m.rows;
    std::fill(re.begin(), re.end(), 0.0);
    std::fill(im.begin(), im.end(), 0.0);
    const double* x = m.row(r);
    for (int i = 0; i < n; ++i) re[i] = x[i] - chain_mean[r];
    if (pair) {
      const double* y = m.row(r + 1);
      for (int i = 0; i < n; ++i) im[i] = y[i] - chain_mean[r + 1];
    }
    fft.forward(re.data(), im.data());
    for (int k = 0; k < size; ++k) {
      const double p = re[k] * re[k] + im[k] * im[k];
      if (pair) {
        const int q = (size - k) & (size - 1);
        power[k] += 0.5 * (p + re[q] * re[q] + im[q] * im[q]);
      } else {
        power[k] += p;
      }
    }
  }
  // The summed spectrum is real and even, so the forward transform is the inverse
  // up to the 1/size factor.
  std::fill(im.begin(), im.end(), 0.0);
  fft.forward(power.data(), im.data());
  std::vector<double> acov(n);
  const double scale = 1.0 / (static_cast<double>(size) * n * m.rows);
  for (int t = 0; t < n; ++t) acov[t] = power[t] * scale;
  return acov;
}

/// ArviZ's `_ess` on a [chain][draw] matrix (relative=False).
double ess_of(const Matrix& m) {
  for (double v : m.v)
    if (std::isnan(v)) return kNaN;
  const auto [lo, hi] = std::minmax_element(m.v.begin(), m.v.end());
  if (*hi - *lo < 1e-15) return static_cast<double>(m.v.size());  // np.finfo(float).resolution
  const int n_chain = m.rows, n_draw = m.cols;
  std::vector<double> chain_mean(n_chain);
  for (int c = 0; c < n_chain; ++c) chain_mean[c] = mean(m.row(c), n_draw);
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
  for (int c = 0; c < m.rows; ++c) {
    chain_mean[c] = mean(m.row(c), n);
    chain_var[c] = variance(m.row(c), n);
  }
  const double between = n * variance(chain_mean.data(), chain_mean.size());
  const double within = mean(chain_var.data(), chain_var.size());
  return std::sqrt((between / within + n - 1) / n);
}

/// R's type-7 quantile of all draws, computed as scipy's
/// `mquantiles(alphap=1, betap=1)` does (ArviZ's `stats_utils.quantile`).
/// Reorders `all`.
double quantile7(std::vector<double>& all, double prob) {
  const std::size_t n = all.size();
  if (n == 1) return all[0];
  const double m = 1.0 + prob * (1.0 - 1.0 - 1.0);
  const double aleph = static_cast<double>(n) * prob + m;
  const auto k = static_cast<std::size_t>(std::floor(std::clamp(aleph, 1.0, static_cast<double>(n - 1))));
  const double gamma = std::clamp(aleph - static_cast<double>(k), 0.0, 1.0);
  std::nth_element(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(k - 1), all.end());
  const double lo = all[k - 1];
  const double hi = *std::min_element(all.begin() + static_cast<std::ptrdiff_t>(k), all.end());
  return (1.0 - gamma) * lo + gamma * hi;
}

double ess_of_indicator(const ChainDraws& x, double q) {
  return ess_of(split(x, [q](double v) { return v <= q ? 1.0 : 0.0; }));
}

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

}  // namespace

// ---------------------------------------------------------------------------

double rhat(const ChainDraws& x) {
  if (not_valid(x, 2) || too_many_for_ranks(x)) return kNaN;
  Matrix z = split(x);
  Sorted sorted = sort_with_index(z.v);
  const std::size_t size = z.v.size();  // even: 2·chains rows
  const NormalScores scores(size);
  rank_scores(sorted, scores, z.v);
  const double rhat_bulk = rhat_of(z);

  // Folded about the median: |x − med| is non-increasing over the sorted lower half
  // and non-decreasing over the upper half, so one merge sorts it.
  const std::size_t mid = size / 2;
  const double median = (sorted.value(mid - 1) + sorted.value(mid)) / 2.0;
  Sorted folded;
  folded.key.resize(size);
  folded.index.resize(size);
  {
    auto fold_key = [&](std::size_t i) { return order_key(std::fabs(sorted.value(i) - median)); };
    std::ptrdiff_t a = static_cast<std::ptrdiff_t>(mid) - 1;  // walks down the lower half
    std::size_t b = mid, out = 0;                             // walks up the upper half
    std::uint64_t key_a = a >= 0 ? fold_key(static_cast<std::size_t>(a)) : 0, key_b = fold_key(b);
    while (a >= 0 && b < size) {
      if (key_b < key_a) {
        folded.key[out] = key_b;
        folded.index[out++] = sorted.index[b++];
        if (b < size) key_b = fold_key(b);
      } else {
        folded.key[out] = key_a;
        folded.index[out++] = sorted.index[static_cast<std::size_t>(a--)];
        if (a >= 0) key_a = fold_key(static_cast<std::size_t>(a));
      }
    }
    for (; a >= 0; --a) {
      folded.key[out] = fold_key(static_cast<std::size_t>(a));
      folded.index[out++] = sorted.index[static_cast<std::size_t>(a)];
    }
    for (; b < size; ++b) {
      folded.key[out] = fold_key(b);
      folded.index[out++] = sorted.index[b];
    }
  }
  sorted = Sorted();  // free before ranking again
  rank_scores(folded, scores, z.v);
  const double rhat_tail = rhat_of(z);
  return rhat_tail > rhat_bulk ? rhat_tail : rhat_bulk;  // Python's max(bulk, tail)
}

double ess_bulk(const ChainDraws& x) {
  if (not_valid(x, 1) || too_many_for_ranks(x)) return kNaN;
  Matrix z = split(x);
  const Sorted sorted = sort_with_index(z.v);
  rank_scores(sorted, NormalScores(z.v.size()), z.v);
  return ess_of(z);
}

double ess_quantile(const ChainDraws& x, double prob) {
  if (not_valid(x, 1)) return kNaN;
  std::vector<double> all = flatten(x);
  return ess_of_indicator(x, quantile7(all, prob));
}

double ess_tail(const ChainDraws& x) {
  if (not_valid(x, 1)) return kNaN;
  std::vector<double> all = flatten(x);
  const double q_low = quantile7(all, 0.05);
  const double q_high = quantile7(all, 0.95);
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
  const std::vector<double> all = flatten(x);
  const double sd = std::sqrt(variance(all.data(), all.size()));
  return sd / std::sqrt(ess_mean(x));
}

double mcse_quantile(const ChainDraws& x, double prob) {
  if (not_valid(x, 1)) return kNaN;
  const double ess = ess_quantile(x, prob);
  const double a = ess * prob + 1, b = ess * (1 - prob) + 1;
  const double ppf_low = detail::beta_quantile(0.1586553, a, b);
  const double ppf_high = detail::beta_quantile(0.8413447, a, b);
  std::vector<double> all = flatten(x);
  const auto size = static_cast<std::ptrdiff_t>(all.size());
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
  const double th1 = order_statistic(all, static_cast<std::size_t>(i1));
  const double th2 = order_statistic(all, static_cast<std::size_t>(i2));
  return (th2 - th1) / 2;
}

double rhat_nested(const ChainDraws& x, int superchains) {
  const int k_super = superchains;
  if (x.data == nullptr || k_super < 2 || x.chains < k_super || x.chains % k_super != 0 || x.draws < 1 || has_nan(x))
    return kNaN;
  const int m_chains = x.chains / k_super, n = x.draws;
  std::vector<double> chain_mean(x.chains), chain_var(x.chains, 0.0), row(n);
  for (int c = 0; c < x.chains; ++c) {
    for (int t = 0; t < n; ++t) row[t] = x(c, t);
    chain_mean[c] = mean(row.data(), n);
    if (n > 1) chain_var[c] = variance(row.data(), n);  // W̃_k's terms; 0 if N = 1
  }
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

double e_bfmi(const double* energy, int draws, std::ptrdiff_t stride) {
  if (energy == nullptr || draws < 2) return kNaN;
  std::vector<double> e(draws);
  for (int t = 0; t < draws; ++t) e[t] = energy[t * stride];
  double num = 0.0;
  for (int t = 1; t < draws; ++t) num += (e[t] - e[t - 1]) * (e[t] - e[t - 1]);
  num /= (draws - 1);
  return num / variance(e.data(), e.size());
}

// ---------------------------------------------------------------------------

namespace detail {

namespace {

/// Φ⁻¹(p) for 0 < p ≤ 1/2.
double lower_normal_quantile(double p) {
  // P. J. Acklam's rational approximations (relative error < 1.15e-9), central
  // region |p − 1/2| ≤ 1/2 − 0.02425 and lower tail.
  static constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,  -2.759285104469687e+02,
                                 1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                                 6.680131188771972e+01, -1.328068155288572e+01};
  static constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                                 -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                                 3.754408661907416e+00};
  double x;
  if (p < 0.02425) {
    const double q = std::sqrt(-2.0 * std::log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
  } else {
    const double q = p - 0.5, r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1.0);
  }
  // One Halley step on Φ(x) − p (third order: 1e-9 -> rounding level). Φ through
  // erfc keeps full relative accuracy in the lower tail.
  const double e = 0.5 * std::erfc(-x / std::sqrt(2.0)) - p;
  const double u = e * std::sqrt(2.0 * kPi) * std::exp(0.5 * x * x);
  return x - u / (1.0 + 0.5 * x * u);
}

/// Continued fraction of I_x(a, b) (modified Lentz), valid for x < (a+1)/(a+b+2).
double beta_continued_fraction(double x, double a, double b) {
  constexpr double tiny = 1e-300, eps = 4e-16;
  double c = 1.0, d = 1.0 - (a + b) * x / (a + 1.0);
  if (std::fabs(d) < tiny) d = tiny;
  d = 1.0 / d;
  double f = d;
  for (int m = 1; m < 1000000; ++m) {
    // even term d_{2m}
    double num = m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m));
    d = 1.0 + num * d;
    if (std::fabs(d) < tiny) d = tiny;
    c = 1.0 + num / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1.0 / d;
    f *= d * c;
    // odd term d_{2m+1}
    num = -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0));
    d = 1.0 + num * d;
    if (std::fabs(d) < tiny) d = tiny;
    c = 1.0 + num / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1.0 / d;
    const double delta = d * c;
    f *= delta;
    if (std::fabs(delta - 1.0) < eps) break;
  }
  return f;
}

/// Stirling series remainder ω(x) = lnΓ(x) − [(x − ½)ln x − x + ½ln 2π], x ≥ 20
/// (the first omitted term is below 1e-17 there).
double stirling_remainder(double x) {
  const double r = 1.0 / x, r2 = r * r;
  return r * (1.0 / 12 - r2 * (1.0 / 360 - r2 * (1.0 / 1260 - r2 * (1.0 / 1680 - r2 / 1188))));
}

/// log of x^a (1 − x)^b / B(a, b). With lgamma the three ~s·ln s terms cancel and
/// leave an absolute error ~1e-16·s·ln s (1e-8 at s = a + b = 10^7); for large a, b
/// Stirling's form in δ = x(a + b) − a avoids the cancellation:
///   a·ln(1 + δ/a) + b·ln(1 − δ/b) + ½ln(ab/s) − ½ln 2π − ω(a) − ω(b) + ω(s).
double log_beta_density_front(double x, double a, double b) {
  if (a < 20.0 || b < 20.0)
    return a * std::log(x) + b * std::log1p(-x) - (std::lgamma(a) + std::lgamma(b) - std::lgamma(a + b));
  const double s = a + b;
  const double b_part = s - a;
  const double s_err = (a - (s - b_part)) + (b - b_part);  // a + b = s + s_err exactly (Knuth's TwoSum)
  const double delta = std::fma(x, s, -a) + x * s_err;
  return a * std::log1p(delta / a) + b * std::log1p(-delta / b) + 0.5 * std::log(a / s * b) -
         0.5 * std::log(2.0 * kPi) - stirling_remainder(a) - stirling_remainder(b) + stirling_remainder(s);
}

}  // namespace

double normal_quantile(double p) {
  if (std::isnan(p) || p < 0.0 || p > 1.0) return kNaN;
  if (p == 0.0) return -std::numeric_limits<double>::infinity();
  if (p == 1.0) return std::numeric_limits<double>::infinity();
  // 1 − p is exact for p in [1/2, 1] (Sterbenz).
  return p > 0.5 ? -lower_normal_quantile(1.0 - p) : lower_normal_quantile(p);
}

double incomplete_beta(double x, double a, double b) {
  if (std::isnan(x) || !(a > 0.0) || !(b > 0.0)) return kNaN;
  if (x <= 0.0) return 0.0;
  if (x >= 1.0) return 1.0;
  const double log_front = log_beta_density_front(x, a, b);
  if (x < (a + 1.0) / (a + b + 2.0)) return std::exp(log_front) * beta_continued_fraction(x, a, b) / a;
  return 1.0 - std::exp(log_front) * beta_continued_fraction(1.0 - x, b, a) / b;
}

double beta_quantile(double p, double a, double b) {
  if (std::isnan(p) || p < 0.0 || p > 1.0 || !(a > 0.0) || !(b > 0.0)) return kNaN;
  if (p == 0.0) return 0.0;
  if (p == 1.0) return 1.0;
  double lo = 0.0, hi = 1.0;
  for (int i = 0; i < 2000; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (mid <= lo || mid >= hi) break;
    (incomplete_beta(mid, a, b) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

}  // namespace detail

}  // namespace hmc::diagnostics
