#pragma once
/// \file
/// \brief hmc/distributions: log densities and their gradients for the distributions models use,
/// on double, hmc::Dual and hmc::Pack, in device code too (docs/distributions.md).
///
///   lp += dist::normal_lpdf(y(i), mu, sigma);                  // value (any mix of types)
///   const auto g = dist::normal_lpdf_grad(y(i), mu, sigma);    // g.value, g.d[0..2]
///   lp += dist::poisson_log_lpmf_sum<true>(counts, alpha);     // Σ_i, constants dropped

#include "hmc/distributions/continuous.hpp"
#include "hmc/distributions/discrete.hpp"
#include "hmc/distributions/glm.hpp"
#include "hmc/distributions/linalg.hpp"
#include "hmc/distributions/multivariate.hpp"
#include "hmc/distributions/special.hpp"
#include "hmc/distributions/value_grad.hpp"
