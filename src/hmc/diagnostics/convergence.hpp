#pragma once
/// \file
/// \brief Convergence diagnostics of one parameter across many chains (host).
///
/// Each particle of the ensemble is a chain. The statistics follow ArviZ
/// operation by operation, so they agree with `arviz.rhat(method="rank")`,
/// `arviz.ess(method="bulk"|"tail"|"mean")`, `arviz.mcse(method="mean"|"quantile")`
/// and `arviz.bfmi` to rounding (tests/unit/test_convergence.cpp checks 1e-6
/// relative against tests/data/diagnostics_reference.json, written by
/// scripts/make_diagnostics_reference.py). R-hat, bulk ESS, the ESS of the mean, the
/// MCSEs and E-BFMI are the same in ArviZ 0.23 (`arviz.stats.diagnostics`) and 1.x
/// (arviz_stats `base/diagnostics.py`). Tail ESS follows ArviZ 1.x, whose default
/// quantiles differ from 0.23's (ess_tail below). The methods are those of Vehtari,
/// Gelman, Simpson, Carpenter & Bürkner (2021), "Rank-normalization, folding, and
/// localization: an improved R-hat for assessing convergence of MCMC", Bayesian
/// Analysis 16(2):667–718:
///  - split: each chain is cut into a first and a second half of ⌊n/2⌋ draws (the
///    middle draw of an odd-length chain is dropped), giving 2·chains chains;
///  - rank normalisation: average ranks r over all split draws (ties share the
///    mean rank), z = Φ⁻¹((r − 3/8) / (S + 1/4)) with S the number of split draws;
///  - ESS: autocovariances by FFT, Geyer's initial positive and initial monotone
///    sequences on the multi-chain autocorrelation estimate, τ̂ bounded below by
///    1/log10(S).
///
/// Degenerate inputs, as ArviZ:
///  - any NaN draw: every statistic is NaN;
///  - fewer than 4 draws: NaN (R-hat, ESS, MCSE); R-hat also needs ≥ 2 chains;
///  - constant draws (max − min < 1e-15 after the transform): ESS = S, the number
///    of split draws; R-hat is NaN (0/0); MCSE = 0.
///
/// Cost: one radix sort of the split draws for the rank-based statistics (R-hat
/// orders the folded draws by a merge, not a second sort), O(S) work besides, and
/// per pair of split chains one complex FFT of the smallest power-of-two length
/// ≥ 2n, n the split-chain length. `statistics()` computes all of them at once and
/// shares the split, the sort, the rank normalisation and the quantile indicators
/// (one sort and six FFT passes per parameter, for the mean, the bulk and four
/// quantile indicators: 0.11 and 0.89 for tail ESS, 0.05 and 0.95 for the quantile
/// MCSEs; the functions one by one sort twice and take seven passes). The heavy
/// steps run on the host's OpenMP threads (omp_get_max_threads(), serial without
/// OpenMP) in blocks whose results are combined in a fixed order, so
/// every statistic is bitwise the same whatever the number of threads. Scratch
/// memory is about 50 bytes per draw, allocated per call; calls share no state
/// (thread-safe) and are deterministic.
/// The rank statistics (rhat, ess_bulk) index split draws with 32 bits and return
/// NaN beyond 2^32 − 1.

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

namespace hmc::diagnostics {

/// \brief Read-only strided view of one parameter's draws: value(c, t) =
/// data[c·chain_stride + t·draw_stride]. For the gathered LayoutRight View
/// [particle][draw][param] and parameter k: data = &v(0, 0, k),
/// chain_stride = draws·params, draw_stride = params.
struct ChainDraws {
  const double* data;
  int chains;
  int draws;
  std::ptrdiff_t chain_stride;
  std::ptrdiff_t draw_stride;

  double operator()(int c, int t) const { return data[c * chain_stride + t * draw_stride]; }
};

/// \brief Rank-normalised split R-hat: max of the bulk R-hat (rank-normalised
/// split chains) and the tail R-hat (rank-normalised split chains folded about
/// their median) — `arviz.rhat(method="rank")`. NaN with < 2 chains or < 4 draws.
double rhat(const ChainDraws& x);

/// \brief Bulk ESS: ESS of the rank-normalised split chains —
/// `arviz.ess(method="bulk")`.
double ess_bulk(const ChainDraws& x);

/// \brief The probability of the central interval whose ends tail ESS looks at:
/// ArviZ 1.x's `rcParams["stats.ci_prob"]`, the default `prob` of
/// `arviz_stats.ess(method="tail")` and the one `arviz.summary` uses.
inline constexpr double kTailProb = 0.89;

/// \brief Tail ESS as ArviZ 1.x computes it (`arviz.ess(method="tail")`, the
/// `ess_tail` of `arviz.summary`): min of the ESS of the indicators x ≤ q_lo and
/// x ≤ q_hi (split chains), q the type-7 quantiles of all draws in numpy's rounding
/// (Type7::kNumpyLerp) at 1 − kTailProb (0.10999999999999999) and kTailProb.
/// ArviZ 0.23's default takes 0.05 and 0.95 (in scipy's rounding); its
/// `arviz.ess(method="tail", prob=0.89)` is this value but where a quantile falls
/// between two equal draws (ess_quantile).
double ess_tail(const ChainDraws& x);

/// \brief ESS of the mean: ESS of the split chains themselves —
/// `arviz.ess(method="mean")`.
double ess_mean(const ChainDraws& x);

/// \brief ESS of the quantile indicator x ≤ q_prob (split chains) —
/// `arviz.ess(method="quantile", prob=prob)` of ArviZ 0.23: q_prob in scipy's
/// rounding (Type7::kScipy), as mcse_quantile transcribes it. ArviZ 1.x takes numpy's
/// (Type7::kNumpyLerp): the same indicator, except where q_prob falls between two
/// equal draws (a rejected transition repeats its draw), for which numpy gives that
/// draw and scipy can give a value an ulp below, leaving both out.
double ess_quantile(const ChainDraws& x, double prob);

/// \brief MCSE of the mean: sd(all draws, ddof 1) / √ess_mean —
/// `arviz.mcse(method="mean")`.
double mcse_mean(const ChainDraws& x);

/// \brief MCSE of the prob-quantile — `arviz.mcse(method="quantile", prob=prob)`:
/// half the distance between the order statistics at the 15.87% and 84.13% points
/// of Beta(ess·p + 1, ess·(1 − p) + 1), ess = ess_quantile(x, prob).
double mcse_quantile(const ChainDraws& x, double prob);

/// \brief Nested R-hat for many short chains: Margossian, Hoffman, Sountsov,
/// Riou-Durand, Vehtari & Gelman (2024), "Nested R-hat: assessing the convergence
/// of Markov chain Monte Carlo when running many short chains", Bayesian Analysis
/// (arXiv:2110.13017), the definition of nR̂ (Eqs. (15)–(19) in the numbering the
/// posterior R package's `rhat_nested` cites). Superchain k holds the consecutive chains
/// [k·M, (k+1)·M), M = chains / superchains; raw draws (no split, no ranks).
/// nR̂ = √(1 + B̂ν / Ŵν), B̂ν the variance (ddof 1) of the superchain means about
/// their mean, Ŵν the mean over superchains of (variance of the chain means about
/// the superchain mean, ddof 1, 0 if M = 1) + (mean within-chain variance, ddof 1,
/// 0 if draws = 1).
/// NaN when superchains < 2, superchains does not divide chains (no remainder
/// handling: choose a divisor), any draw is NaN, or Ŵν = B̂ν = 0 (constant
/// draws); +inf when Ŵν = 0 < B̂ν.
double rhat_nested(const ChainDraws& x, int superchains);

/// \brief E-BFMI of one chain's energies — `arviz.bfmi`: mean of the squared
/// successive differences over the variance (ddof 1). NaN with < 2 draws.
double e_bfmi(const double* energy, int draws, std::ptrdiff_t stride);

/// \brief The statistics `statistics()` computes together.
struct Statistics {
  double rhat, ess_bulk, ess_tail, ess_mean, mcse_mean, mcse_q5, mcse_q95;
};

/// \brief What `statistics()` keeps between calls: the normal scores
/// Φ⁻¹((r − 3/8)/(S + 1/4)) of the integer ranks, which depend only on the number S
/// of split draws (the same for all parameters of one ensemble), and its scratch
/// memory, reused rather than mapped afresh for every parameter. Holds about 60
/// bytes per draw of the largest parameter seen until it is destroyed. One per
/// thread: not thread-safe.
class Workspace {
 public:
  Workspace();
  ~Workspace();
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;

  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

/// \brief rhat, ess_bulk, ess_tail, ess_mean, mcse_mean and mcse_quantile(0.05) and
/// (0.95) of one parameter at once, each bitwise equal to the function above.
/// `order` (optional): 0-based ranks k of order statistics of all draws; on return
/// `order_values` holds the k-th smallest draw for each (NaN draws or a k out of range
/// give NaN: ask only for NaN-free draws). `workspace` (optional) keeps the normal
/// scores and the scratch memory for the next call.
Statistics statistics(const ChainDraws& x, Workspace* workspace = nullptr, const std::vector<std::size_t>& order = {},
                      std::vector<double>* order_values = nullptr);

/// \brief Nested R-hat from per-chain means and variances (ddof 1; 0 with one draw)
/// computed as detail::mean and detail::variance do, chains in order: bitwise equal
/// to rhat_nested on the draws, when none is NaN (the caller checks that).
double rhat_nested_from_moments(const std::vector<double>& chain_mean, const std::vector<double>& chain_var,
                                int superchains);

namespace detail {

/// \brief Σ p[i] / n, summed in order (the chain means of every statistic here).
double mean(const double* p, std::size_t n);

/// \brief numpy's var(ddof=1): mean first, then the squared deviations, in order.
double variance(const double* p, std::size_t n);

// The parallel blocks (parallel_blocks, run_blocks, ...) are in detail/parallel.hpp,
// the special functions (normal_quantile, beta_quantile, ...) in detail/special.hpp.

}  // namespace detail

}  // namespace hmc::diagnostics
