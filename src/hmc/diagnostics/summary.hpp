#pragma once
/// \file
/// \brief Posterior summaries and convergence diagnostics of a run's stored draws
/// (host, rank 0). Each particle is one chain.
///
/// mean, sd, quantiles (type 7) pool all draws. R-hat, ESS (the tail ESS at ArviZ 1.x's
/// 0.11/0.89 quantiles) and the MCSEs of the mean and of the 5%/95% quantiles follow
/// Vehtari et al. (2021) as ArviZ computes them;
/// nested R-hat follows Margossian et al. (2024) (diagnostics/convergence.hpp).
/// MCSE of the sd ("particle batch means"): the particles are independent chains, so
/// with v_i the mean squared deviation of particle i's draws about the ensemble mean,
/// se(var) = sd(v_1..v_N) / √N and se(sd) = se(var) / (2 sd); a lone particle is cut
/// into ⌊√n⌋ consecutive batches instead.
///
/// Memory is bounded whatever the run: the draws are read one parameter at a time,
/// mean, sd, mcse_sd, nested R-hat and the per-particle checks in ranges of particles
/// of at most 32 MB, and the statistics that need all draws at once (quantiles,
/// R-hat, ESS, MCSEs of mean and quantiles) use at most `max_draws` draws: all
/// particles when particles × draws ≤ max_draws, else the first
/// ⌊max_draws / draws⌋ (at least 2). The particles are independent chains, so a
/// prefix is a valid, smaller sample; ParameterSummary says how many were used.

#include "hmc/core/draw_source.hpp"
#include "hmc/core/draws.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace hmc::diagnostics {

struct ParameterSummary {
  std::string name;
  double mean, sd, q5, q50, q95;
  double mcse_mean, mcse_sd, mcse_q5, mcse_q95;
  double ess_bulk, ess_tail, rhat, rhat_nested;
  std::int64_t particles = 0;             ///< behind mean, sd, mcse_sd and rhat_nested: all particles
  std::int64_t diagnostic_particles = 0;  ///< the first particles behind q5..q95, rhat, ESS, mcse_mean/q5/q95
  std::int64_t max_draws = 0;             ///< the cap that chose them (0: none)
  /// Particles whose mean lies more than 5 within-particle sds from the median
  /// particle mean (warnings' separated modes); -1 when not counted (fewer than 4
  /// particles or 2 draws).
  std::int64_t far_particles = -1;
};

/// \brief How summarize() works through a DrawSource.
struct SummaryOptions {
  int superchains = 0;               ///< consecutive-particle groups for nested R-hat (< 2: not computed)
  std::int64_t max_draws = 8388608;  ///< cap on the draws of the rank-based statistics (≤ 0: none)
  std::function<void(int done, int total)> progress;  ///< after each parameter, on the calling thread
};

/// \brief Quantile with linear interpolation between order statistics (numpy's
/// default, Hyndman & Fan type 7). Reorders `values`.
double quantile(std::vector<double>& values, double prob);

/// \brief One summary per parameter of the posterior section of `source`, in model
/// order, reading one parameter at a time. Uncapped, bitwise equal to
/// summarize_parameter on the same draws, whatever the number of threads.
std::vector<ParameterSummary> summarize(const hmc::DrawSource& source, const SummaryOptions& options);

/// \brief The default superchain count for N particles: the largest divisor of N that
/// is at most min(64, N / 2) — 1 (no nested R-hat) when N is prime or below 4.
int default_superchains(std::int64_t particles);

/// \brief E-BFMI of each particle's recorded post-warmup energies (`arviz.bfmi`), in
/// particle order; NaN with fewer than 2 draws. Reads the energy column in ranges.
std::vector<double> e_bfmi_per_particle(const hmc::DrawSource& source);

/// \brief Whole-run checks, each a readable sentence: R-hat > 1.01, divergences
/// (`total_divergences`, post-warmup, all particles), E-BFMI < 0.3, and particles
/// stuck in separated modes. `params` are summarize()'s, in model order (their
/// far_particles counts are used; missing ones are counted from `source`).
std::vector<std::string> warnings(const hmc::DrawSource& source, const std::vector<ParameterSummary>& params,
                                  double total_divergences);

}  // namespace hmc::diagnostics
