#pragma once
/// \file
/// \brief Posterior summaries and convergence diagnostics of a gathered ensemble
/// (host, rank 0). Each particle is one chain.
///
/// mean, sd, quantiles (type 7) pool all draws. R-hat, ESS and the MCSEs of the mean
/// and of the 5%/95% quantiles follow Vehtari et al. (2021) as ArviZ computes them;
/// nested R-hat follows Margossian et al. (2024) (diagnostics/convergence.hpp).
/// MCSE of the sd ("particle batch means"): the particles are independent chains, so
/// with v_i the mean squared deviation of particle i's draws about the ensemble mean,
/// se(var) = sd(v_1..v_N) / √N and se(sd) = se(var) / (2 sd); a lone particle is cut
/// into ⌊√n⌋ consecutive batches instead.

#include "hmc/sampler/run.hpp"

#include <string>
#include <vector>

namespace hmc::diagnostics {

struct ParameterSummary {
  std::string name;
  double mean, sd, q5, q50, q95;
  double mcse_mean, mcse_sd, mcse_q5, mcse_q95;
  double ess_bulk, ess_tail, rhat, rhat_nested;
};

/// \brief Quantile with linear interpolation between order statistics (numpy's
/// default, Hyndman & Fan type 7). Reorders `values`.
double quantile(std::vector<double>& values, double prob);

/// \brief Summary of parameter k of the gathered draws [particle][draw][param];
/// `superchains` groups consecutive particles for nested R-hat (0: not computed).
ParameterSummary summarize_parameter(const sampler::LocalDraws& all, int k, const std::string& name,
                                     int superchains = 0);

/// \brief One summary per parameter.
std::vector<ParameterSummary> summarize(const sampler::LocalDraws& all, const std::vector<std::string>& names,
                                        int superchains = 0);

/// \brief The default superchain count for N particles: the largest divisor of N that
/// is at most min(64, N / 2) — 1 (no nested R-hat) when N is prime or below 4.
int default_superchains(std::int64_t particles);

/// \brief Whole-run checks, each a readable sentence: R-hat > 1.01, divergences,
/// E-BFMI < 0.3, and particles stuck in separated modes.
std::vector<std::string> warnings(const sampler::LocalDraws& all, const std::vector<ParameterSummary>& params);

}  // namespace hmc::diagnostics
