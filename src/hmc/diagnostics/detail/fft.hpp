#pragma once
/// \file
/// \brief Autocovariances by FFT (host, internal to the convergence diagnostics): an
/// in-place iterative radix-2 FFT and the mean autocovariance of the rows of a matrix.

#include "hmc/diagnostics/detail/buffer.hpp"

#include <vector>

namespace hmc::diagnostics::detail {

/// Mean over chains of each chain's autocovariance at lags 0..n-1,
/// acov_c(t) = (1/n) Σ_i (x_i − x̄)(x_{i+t} − x̄), as ArviZ's `autocov` computes it:
/// FFT zero-padded to ≥ 2n (a power of two here; any length ≥ 2n − 1 gives the
/// same linear correlation). By linearity the mean needs a single inverse transform
/// of the summed power spectra, and two real chains share one complex transform:
/// with Z = FFT(x + iy), |X_k|² + |Y_k|² = (|Z_k|² + |Z_{N−k}|²) / 2.
/// The pairs' spectra are computed in parallel, a chunk of pairs at a time, and
/// added to the sum in pair order, as one serial loop would add them.
std::vector<double> mean_autocovariance(const Matrix& m, const std::vector<double>& chain_mean);

}  // namespace hmc::diagnostics::detail
