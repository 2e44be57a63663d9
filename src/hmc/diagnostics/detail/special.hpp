#pragma once
/// \file
/// \brief Special functions of the convergence diagnostics (host): the normal quantile
/// (rank normalisation) and the incomplete beta function and its inverse (the MCSE of
/// quantiles).

namespace hmc::diagnostics::detail {

/// \brief Standard normal quantile Φ⁻¹(p), relative error ≈ 1e-15 (Acklam's
/// rational approximation refined by one Halley step on erfc). ±inf at 0 and 1,
/// NaN outside [0, 1].
double normal_quantile(double p);

/// \brief Regularised incomplete beta function I_x(a, b), a, b > 0.
double incomplete_beta(double x, double a, double b);

/// \brief Inverse of x ↦ I_x(a, b) (the Beta(a, b) quantile), by bisection to
/// the last bit.
double beta_quantile(double p, double a, double b);

}  // namespace hmc::diagnostics::detail
