#pragma once
/// \file
/// \brief Host-side estimates of the metric (the inverse mass matrix Σ) from warmup
/// draws and their gradients: the Fisher-divergence diagonal and a low-rank correction
/// to it (the geometric mean of the draws' covariance and the inverse of the gradients').
///
/// Plain sequential loops in a fixed order throughout: the same inputs give the same
/// bits on any machine, number of ranks or threads.

#include <vector>

namespace hmc::sampler {

/// \brief Fisher-divergence diagonal: Σ_jj = sqrt(var_q[j] / var_g[j]) (var_g: variance
/// of the gradient of log p).
///
/// Where var_g[j] is not finite and > 0, or var_q[j] is not > 0, falls back to var_q[j]
/// (or 1 if that is not > 0 either); the result is clamped to [1e-10, 1e10].
/// std::invalid_argument when the sizes differ.
std::vector<double> fisher_diagonal(const std::vector<double>& var_q, const std::vector<double>& var_g);

/// \brief Σ = S (I + U (Λ - I) Uᵀ) S with S = diag(sqrt(diag)), U orthonormal columns
/// (dim × rank, column-major: vectors[k * dim + j] is component j of vector k), Λ = values.
struct LowRankMetric {
  int dim = 0;
  std::vector<double> diag;     ///< Σ's diagonal scaling (the Fisher diagonal), dim values
  std::vector<double> vectors;  ///< rank * dim
  std::vector<double> values;   ///< rank eigenvalues (in the scaled space)
  /// Number of directions in the low-rank correction.
  int rank() const;
  /// Σ, row-major dim × dim, exactly symmetric; with rank 0 its diagonal is `diag` bit for bit.
  std::vector<double> dense() const;
};

/// \brief The low-rank + diagonal metric from the covariance of the draws cov_q and of
/// their gradients cov_g (both row-major dim × dim, from n draws).
///
/// diag = fisher_diagonal of their diagonals; in the space scaled by S (x̃ = S⁻¹ q,
/// g̃ = S g), both covariances are regularised as Stan regularises,
/// (n / (n + 5)) C + 1e-3 (5 / (n + 5)) I, and Σ̃ is the SPD geometric mean of C̃q and
/// C̃g⁻¹ (the unique SPD Σ̃ with Σ̃ C̃g Σ̃ = C̃q; for a Gaussian posterior with covariance A,
/// C_q = A and C_g = A⁻¹, so Σ = A). Its eigenvectors whose eigenvalue λ has
/// max(λ, 1/λ) > cutoff, ordered by |log λ| descending, at most max_rank of them
/// (max_rank 0: all that pass the cutoff), become U, Λ. std::invalid_argument when the
/// sizes do not match dim.
LowRankMetric low_rank_metric(const std::vector<double>& cov_q, const std::vector<double>& cov_g, int dim, double n,
                              int max_rank, double cutoff = 2.0);

/// \brief The SPD geometric mean a # b⁻¹ of symmetric positive definite a and b (row-major
/// d × d): the unique SPD x with x b x = a, as b^{-1/2} (b^{1/2} a b^{1/2})^{1/2} b^{-1/2}.
///
/// Eigenvalues of b and of b^{1/2} a b^{1/2} below 1e-12 times their largest are raised
/// to that floor. Exactly symmetric.
std::vector<double> spd_geometric_mean(const std::vector<double>& a, const std::vector<double>& b, int d);

/// \brief Eigen-decomposition of a symmetric matrix a (row-major d × d) by cyclic Jacobi
/// rotations: returns the eigenvalues (ascending), vectors[k * d + j] = component j of
/// eigenvector k.
///
/// Only the upper triangle's mirror average (a_ij + a_ji) / 2 is used. At most 100
/// sweeps; stops once the off-diagonal norm is below 1e-14 of the matrix's norm.
/// Deterministic (same input, same bits).
std::vector<double> symmetric_eigen(const std::vector<double>& a, int d, std::vector<double>& vectors);

}  // namespace hmc::sampler
