#pragma once
/// \file
/// \brief Posterior summaries of a gathered ensemble (host, rank 0).
///
/// MCSE of the mean ("particle batch means"): the particles are independent chains
/// with equal numbers of draws, so the ensemble mean is the mean of the N
/// per-particle means m_i and its standard error is sd(m_1..m_N) / √N — valid
/// whatever the autocorrelation within a particle. With a single particle the draws
/// are cut into ⌊√n⌋ consecutive batches and the same formula is applied to the
/// batch means. MCSE of the sd comes from the per-particle mean squared deviations
/// v_i about the ensemble mean: se(var) = sd(v_i) / √N and se(sd) = se(var) / (2 sd).

#include "hmc/sampler/run.hpp"

#include <string>
#include <vector>

namespace hmc::diagnostics {

struct ParameterSummary {
  std::string name;
  double mean, sd, q5, q50, q95, mcse_mean, mcse_sd;
};

/// \brief Quantile with linear interpolation between order statistics (numpy's
/// default, Hyndman & Fan type 7). Reorders `values`.
double quantile(std::vector<double>& values, double prob);

/// \brief Summary of parameter k of the gathered draws [particle][draw][param].
ParameterSummary summarize_parameter(const sampler::LocalDraws& all, int k, const std::string& name);

/// \brief One summary per parameter.
std::vector<ParameterSummary> summarize(const sampler::LocalDraws& all, const std::vector<std::string>& names);

}  // namespace hmc::diagnostics
