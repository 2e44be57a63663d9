#pragma once
/// \file
/// \brief PSIS-LOO: Pareto-smoothed importance-sampling leave-one-out cross-validation
/// (Vehtari, Gelman & Gabry 2017; Vehtari, Simpson, Gelman, Yao & Gabry 2024) of a run's
/// recorded pointwise log-likelihood, computed as ArviZ computes it.
///
/// For each observation i, with S = particles × draws posterior draws ll_s = log p(y_i | θ_s):
/// the raw log weights -ll_s; their largest M are replaced by the quantiles of a generalized
/// Pareto distribution fitted to them (Zhang & Stephens' empirical Bayes fit with a weak
/// prior on its shape k, as ArviZ's `_gpdfit`), capped at the largest raw weight, and
/// normalised; elpd_i = logsumexp(w_s + ll_s), lppd_i = logsumexp(ll_s) - log S,
/// p_loo_i = lppd_i - elpd_i. elpd_loo = Σ elpd_i, p_loo = Σ p_loo_i and
/// se = √(n · var(elpd_i)). r_eff, which sets M, is the mean over every posterior
/// element of its ESS of the mean (split chains) over S; 1 for a single particle.
///
/// The two ArviZ majors differ in three details, so the rule is a choice:
///   ArviZ 1.x (arviz_stats.loo, the default): M = ⌊3 √(S / r_eff)⌋ when S·r_eff > 225,
///     else ⌊S / 5⌋; the tail is the M largest weights; se with ddof 1; a fit whose first
///     quartile equals its minimum gives k = NaN (no smoothing);
///   ArviZ 0.23 (arviz.loo): M = ⌈min(S / 5, 3 √(S / r_eff))⌉, the tail is the weights
///     above the (M + 1)-th largest; se with ddof 0.
/// Either way the values agree with that ArviZ to rounding (tests/python).

#include "hmc/core/draw_source.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace hmc::diagnostics {

/// \brief Which ArviZ's PSIS-LOO rules to follow (see the file comment).
enum class LooRule { kArviz1 = 0, kArviz023 };

/// \brief Pareto-smoothed log weights of one observation: `log_weights` (the negated
/// log-likelihood, S values) replaced by the normalised smoothed log weights; returns
/// the Pareto shape k (inf when the tail is too short to fit, NaN when the fit fails).
double psis_log_weights(std::vector<double>& log_weights, double r_eff, LooRule rule);

/// \brief The generalized Pareto fit of ArviZ's `_gpdfit` to `x` (ascending, > 0):
/// returns {k, sigma}.
std::pair<double, double> gpd_fit(const std::vector<double>& x, LooRule rule);

/// \brief PSIS-LOO of a run.
struct LooResult {
  double elpd_loo = 0.0;
  double se = 0.0;
  double p_loo = 0.0;
  std::int64_t n_samples = 0;      ///< S
  std::int64_t n_data_points = 0;  ///< observations
  double r_eff = 1.0;
  double good_k = 0.7;  ///< min(1 - 1 / log10 S, 0.7)
  /// Observations by Pareto k: k <= good_k ("good"), good_k < k <= 1 ("bad"), k > 1 or not
  /// finite ("very bad").
  std::int64_t k_good = 0, k_bad = 0, k_very_bad = 0;
  std::vector<double> pareto_k;  ///< per observation, in the group's order
  std::vector<double> elpd_i;
  LooRule rule = LooRule::kArviz1;
};

/// \brief PSIS-LOO of the `log_likelihood` group of `source` (its posterior draws, all
/// observations of all its arrays). Throws RunError when the source has no such group.
/// Reads one observation's column (S values) at a time, and each parameter once for r_eff.
LooResult loo(const hmc::DrawSource& source, LooRule rule = LooRule::kArviz1);

/// \brief Lines of text in the layout of ArviZ's printout (elpd_loo, p_loo, the k table).
std::string loo_text(const LooResult& r);

}  // namespace hmc::diagnostics
