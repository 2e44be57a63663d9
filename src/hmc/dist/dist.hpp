#pragma once
/// \file
/// \brief hmc/dist: log densities and their gradients for the distributions models use,
/// on double, hmc::Dual and hmc::Pack, in device code too (docs/distributions.md).
///
///   lp += dist::normal_lpdf(y(i), mu, sigma);                  // value (any mix of types)
///   const auto g = dist::normal_lpdf_grad(y(i), mu, sigma);    // g.value, g.d[0..2]
///   lp += dist::poisson_log_lpmf_sum<true>(counts, alpha);     // Σ_i, constants dropped

#include "hmc/dist/continuous.hpp"
#include "hmc/dist/discrete.hpp"
#include "hmc/dist/multivariate.hpp"
#include "hmc/dist/special.hpp"
#include "hmc/dist/value_grad.hpp"
