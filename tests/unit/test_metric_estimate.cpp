// Metric estimates from warmup statistics (sampler/metric_estimate.hpp): the Fisher
// diagonal and its fallbacks, the Jacobi eigen-decomposition, the SPD geometric mean and
// the low-rank + diagonal metric on Gaussian, diagonal and truncated cases.

#include "hmc/sampler/metric_estimate.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

namespace {

using hmc::sampler::fisher_diagonal;
using hmc::sampler::low_rank_metric;
using hmc::sampler::LowRankMetric;
using hmc::sampler::spd_geometric_mean;
using hmc::sampler::symmetric_eigen;

using Matrix = std::vector<double>;  // row-major d × d

Matrix multiply(const Matrix& a, const Matrix& b, int d) {
  Matrix c(d * d, 0.0);
  for (int i = 0; i < d; ++i)
    for (int k = 0; k < d; ++k)
      for (int j = 0; j < d; ++j) c[i * d + j] += a[i * d + k] * b[k * d + j];
  return c;
}

double max_abs_diff(const Matrix& a, const Matrix& b) {
  double m = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}

double max_abs(const Matrix& a) {
  double m = 0.0;
  for (double x : a) m = std::max(m, std::abs(x));
  return m;
}

// A random orthogonal matrix (Gram-Schmidt on uniform entries), columns q_k: q[j * d + k].
Matrix random_orthogonal(int d, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Matrix q(d * d);
  for (double& x : q) x = u(gen);
  for (int k = 0; k < d; ++k) {
    for (int prev = 0; prev < k; ++prev) {
      double dot = 0.0;
      for (int j = 0; j < d; ++j) dot += q[j * d + k] * q[j * d + prev];
      for (int j = 0; j < d; ++j) q[j * d + k] -= dot * q[j * d + prev];
    }
    double norm = 0.0;
    for (int j = 0; j < d; ++j) norm += q[j * d + k] * q[j * d + k];
    norm = std::sqrt(norm);
    for (int j = 0; j < d; ++j) q[j * d + k] /= norm;
  }
  return q;
}

// Q diag(f(λ)) Qᵀ.
Matrix with_eigen(const Matrix& q, const std::vector<double>& lambda, int d) {
  Matrix a(d * d, 0.0);
  for (int i = 0; i < d; ++i)
    for (int j = 0; j < d; ++j)
      for (int k = 0; k < d; ++k) a[i * d + j] += q[i * d + k] * lambda[k] * q[j * d + k];
  return a;
}

std::vector<double> inverted(std::vector<double> v) {
  for (double& x : v) x = 1.0 / x;
  return v;
}

// The space scaled by the metric's diagonal, regularised as low_rank_metric regularises.
Matrix scaled(const Matrix& c, const std::vector<double>& diag, int d, double n, bool gradient) {
  Matrix out(d * d);
  for (int i = 0; i < d; ++i)
    for (int j = 0; j < d; ++j) {
      const double s = std::sqrt(diag[i]) * std::sqrt(diag[j]);
      out[i * d + j] = (n / (n + 5.0)) * (gradient ? c[i * d + j] * s : c[i * d + j] / s);
    }
  for (int j = 0; j < d; ++j) out[j * d + j] += 1e-3 * (5.0 / (n + 5.0));
  return out;
}

TEST(MetricEstimate, FisherDiagonalKnownCase) {
  const std::vector<double> out = fisher_diagonal({4.0, 1.0, 9.0}, {1.0, 4.0, 0.25});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_DOUBLE_EQ(out[0], 2.0);
  EXPECT_DOUBLE_EQ(out[1], 0.5);
  EXPECT_DOUBLE_EQ(out[2], 6.0);
}

TEST(MetricEstimate, FisherDiagonalFallbacksAndClamp) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> out = fisher_diagonal({3.0, 3.0, 3.0, 3.0, 0.0, -2.0, nan, 1e30, 1e-30},
                                                  {0.0, -1.0, inf, nan, 2.0, 2.0, 1.0, 1e-30, 1e30});
  ASSERT_EQ(out.size(), 9u);
  EXPECT_EQ(out[0], 3.0);    // var_g zero: var_q
  EXPECT_EQ(out[1], 3.0);    // var_g negative: var_q
  EXPECT_EQ(out[2], 3.0);    // var_g infinite: var_q
  EXPECT_EQ(out[3], 3.0);    // var_g NaN: var_q
  EXPECT_EQ(out[4], 1.0);    // var_q zero: 1
  EXPECT_EQ(out[5], 1.0);    // var_q negative: 1
  EXPECT_EQ(out[6], 1.0);    // var_q NaN: 1
  EXPECT_EQ(out[7], 1e10);   // clamped above
  EXPECT_EQ(out[8], 1e-10);  // clamped below
  EXPECT_THROW(fisher_diagonal({1.0}, {1.0, 2.0}), std::invalid_argument);
}

TEST(MetricEstimate, SymmetricEigenReconstructsRandomSpd) {
  const int d = 7;
  std::mt19937 gen(11);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Matrix b(d * d);
  for (double& x : b) x = u(gen);
  Matrix a(d * d, 0.0);  // B Bᵀ + 0.1 I
  for (int i = 0; i < d; ++i)
    for (int j = 0; j < d; ++j) {
      for (int k = 0; k < d; ++k) a[i * d + j] += b[i * d + k] * b[j * d + k];
      if (i == j) a[i * d + j] += 0.1;
    }
  Matrix v;
  const std::vector<double> lambda = symmetric_eigen(a, d, v);
  ASSERT_EQ(lambda.size(), static_cast<std::size_t>(d));
  ASSERT_EQ(v.size(), static_cast<std::size_t>(d * d));
  for (int k = 1; k < d; ++k) EXPECT_LE(lambda[k - 1], lambda[k]);
  EXPECT_GT(lambda[0], 0.0);
  Matrix rebuilt(d * d, 0.0);
  for (int i = 0; i < d; ++i)
    for (int j = 0; j < d; ++j)
      for (int k = 0; k < d; ++k) rebuilt[i * d + j] += v[k * d + i] * lambda[k] * v[k * d + j];
  EXPECT_LT(max_abs_diff(rebuilt, a), 1e-10);
  for (int k = 0; k < d; ++k)
    for (int l = 0; l < d; ++l) {
      double dot = 0.0;
      for (int j = 0; j < d; ++j) dot += v[k * d + j] * v[l * d + j];
      EXPECT_NEAR(dot, k == l ? 1.0 : 0.0, 1e-12) << k << ", " << l;
    }
  // Same input, same bits.
  Matrix v2;
  const std::vector<double> lambda2 = symmetric_eigen(a, d, v2);
  EXPECT_EQ(lambda, lambda2);
  EXPECT_EQ(v, v2);
}

TEST(MetricEstimate, SymmetricEigenSmallCases) {
  Matrix v;
  std::vector<double> lambda = symmetric_eigen({5.0}, 1, v);
  ASSERT_EQ(lambda.size(), 1u);
  EXPECT_EQ(lambda[0], 5.0);
  EXPECT_EQ(v, Matrix{1.0});
  lambda = symmetric_eigen({2.0, 1.0, 1.0, 2.0}, 2, v);
  EXPECT_NEAR(lambda[0], 1.0, 1e-15);
  EXPECT_NEAR(lambda[1], 3.0, 1e-15);
  EXPECT_NEAR(std::abs(v[2] + v[3]), std::sqrt(2.0), 1e-15);  // (1, 1) / sqrt(2) for 3
  lambda = symmetric_eigen({}, 0, v);
  EXPECT_TRUE(lambda.empty());
  EXPECT_TRUE(v.empty());
}

TEST(MetricEstimate, GeometricMeanSolvesRiccati) {
  const int d = 5;
  const Matrix a = with_eigen(random_orthogonal(d, 3), {0.01, 0.3, 1.0, 4.0, 50.0}, d);
  const Matrix b = with_eigen(random_orthogonal(d, 4), {0.2, 0.5, 2.0, 7.0, 30.0}, d);
  const Matrix x = spd_geometric_mean(a, b, d);
  for (int i = 0; i < d; ++i)
    for (int j = 0; j < d; ++j) EXPECT_EQ(x[i * d + j], x[j * d + i]);
  Matrix v;
  EXPECT_GT(symmetric_eigen(x, d, v)[0], 0.0);
  EXPECT_LT(max_abs_diff(multiply(multiply(x, b, d), x, d), a), 1e-9 * max_abs(a));
}

TEST(MetricEstimate, LowRankGeometricMeanSolvesRiccatiInScaledSpace) {
  // Unrelated covariances of the draws and the gradients, every direction kept.
  const int d = 4;
  const double n = 200.0;
  const Matrix cq = with_eigen(random_orthogonal(d, 5), {0.5, 2.0, 9.0, 40.0}, d);
  const Matrix cg = with_eigen(random_orthogonal(d, 6), {0.05, 0.3, 1.5, 3.0}, d);
  const LowRankMetric m = low_rank_metric(cq, cg, d, n, 0, 1.0);
  ASSERT_EQ(m.rank(), d);
  const Matrix sigma = m.dense();
  Matrix st(d * d);  // Σ̃ = S⁻¹ Σ S⁻¹
  for (int i = 0; i < d; ++i)
    for (int j = 0; j < d; ++j) st[i * d + j] = sigma[i * d + j] / (std::sqrt(m.diag[i]) * std::sqrt(m.diag[j]));
  const Matrix cq_s = scaled(cq, m.diag, d, n, false), cg_s = scaled(cg, m.diag, d, n, true);
  EXPECT_LT(max_abs_diff(multiply(multiply(st, cg_s, d), st, d), cq_s), 1e-9 * max_abs(cq_s));
}

TEST(MetricEstimate, LowRankRecoversGaussianCovariance) {
  const int d = 6;
  const Matrix q = random_orthogonal(d, 7);
  const std::vector<double> lambda = {1e-3, 1e-2, 0.05, 20.0, 100.0, 1e3};
  const Matrix a = with_eigen(q, lambda, d), a_inv = with_eigen(q, inverted(lambda), d);
  const double n = 1e12;
  std::vector<double> var_q(d), var_g(d);
  for (int j = 0; j < d; ++j) {
    var_q[j] = a[j * d + j];
    var_g[j] = a_inv[j * d + j];
  }
  const std::vector<double> fisher = fisher_diagonal(var_q, var_g);
  // The default cutoff keeps every direction only if none of S⁻¹ A S⁻¹'s eigenvalues lies in [1/2, 2].
  Matrix v;
  for (double l : symmetric_eigen(scaled(a, fisher, d, n, false), d, v)) ASSERT_GT(std::max(l, 1.0 / l), 2.5) << l;

  const LowRankMetric m = low_rank_metric(a, a_inv, d, n, 0);
  EXPECT_EQ(m.dim, d);
  EXPECT_EQ(m.diag, fisher);
  ASSERT_EQ(m.rank(), d);
  ASSERT_EQ(m.vectors.size(), static_cast<std::size_t>(d * d));
  for (int k = 1; k < d; ++k) EXPECT_GE(std::abs(std::log(m.values[k - 1])), std::abs(std::log(m.values[k])));
  const Matrix sigma = m.dense();
  for (int i = 0; i < d; ++i)
    for (int j = 0; j < d; ++j) {
      EXPECT_EQ(sigma[i * d + j], sigma[j * d + i]);
      EXPECT_NEAR(sigma[i * d + j], a[i * d + j], 1e-8 * max_abs(a)) << i << ", " << j;
    }
}

TEST(MetricEstimate, LowRankTruncationKeepsLargestLogEigenvalue) {
  const int d = 6;
  const Matrix q = random_orthogonal(d, 8);
  const std::vector<double> lambda = {1e-4, 0.1, 0.5, 1.0, 3.0, 300.0};
  const Matrix a = with_eigen(q, lambda, d), a_inv = with_eigen(q, inverted(lambda), d);
  const double n = 1e12;
  const LowRankMetric full = low_rank_metric(a, a_inv, d, n, 0);
  const LowRankMetric one = low_rank_metric(a, a_inv, d, n, 1);
  ASSERT_GE(full.rank(), 2);
  ASSERT_EQ(one.rank(), 1);
  ASSERT_EQ(one.vectors.size(), static_cast<std::size_t>(d));
  EXPECT_EQ(one.diag, full.diag);

  // The reference: the eigenpair of S⁻¹ A S⁻¹ with the largest |log λ|.
  Matrix v;
  const std::vector<double> ref = symmetric_eigen(scaled(a, full.diag, d, n, false), d, v);
  int best = 0;
  for (int k = 1; k < d; ++k)
    if (std::abs(std::log(ref[k])) > std::abs(std::log(ref[best]))) best = k;
  EXPECT_NEAR(one.values[0], ref[best], 1e-8 * std::max(ref[best], 1.0));
  double dot = 0.0;
  for (int j = 0; j < d; ++j) dot += one.vectors[j] * v[best * d + j];
  EXPECT_NEAR(std::abs(dot), 1.0, 1e-10);
  EXPECT_EQ(one.values[0], full.values[0]);
  for (int j = 0; j < d; ++j) EXPECT_EQ(one.vectors[j], full.vectors[j]);
  for (int k = 1; k < full.rank(); ++k)
    EXPECT_GE(std::abs(std::log(full.values[0])), std::abs(std::log(full.values[k])));
}

TEST(MetricEstimate, DiagonalCovariancesGiveRankZero) {
  const int d = 4;
  const std::vector<double> var_q = {4.0, 0.01, 100.0, 2.5}, var_g = {0.5, 300.0, 0.02, 0.4};
  Matrix cq(d * d, 0.0), cg(d * d, 0.0);
  for (int j = 0; j < d; ++j) {
    cq[j * d + j] = var_q[j];
    cg[j * d + j] = var_g[j];
  }
  const LowRankMetric m = low_rank_metric(cq, cg, d, 1000.0, 0);
  const std::vector<double> fisher = fisher_diagonal(var_q, var_g);
  EXPECT_EQ(m.rank(), 0);
  EXPECT_TRUE(m.vectors.empty());
  EXPECT_EQ(m.diag, fisher);
  const Matrix sigma = m.dense();
  for (int i = 0; i < d; ++i)
    for (int j = 0; j < d; ++j) EXPECT_EQ(sigma[i * d + j], i == j ? fisher[i] : 0.0);
}

TEST(MetricEstimate, OneDimension) {
  // Σ̃ is 1 in one dimension: the Fisher diagonal alone.
  const LowRankMetric m = low_rank_metric({9.0}, {0.25}, 1, 50.0, 0);
  EXPECT_EQ(m.dim, 1);
  EXPECT_EQ(m.rank(), 0);
  EXPECT_EQ(m.dense(), Matrix{6.0});
  const LowRankMetric all = low_rank_metric({9.0}, {0.25}, 1, 50.0, 0, 0.5);  // cutoff below 1 keeps it
  ASSERT_EQ(all.rank(), 1);
  EXPECT_NEAR(all.values[0], 1.0, 1e-15);
  EXPECT_NEAR(all.dense()[0], 6.0, 1e-14);
}

TEST(MetricEstimate, Deterministic) {
  const int d = 5;
  const Matrix cq = with_eigen(random_orthogonal(d, 9), {0.01, 0.2, 1.0, 6.0, 80.0}, d);
  const Matrix cg = with_eigen(random_orthogonal(d, 10), {0.02, 0.4, 2.0, 5.0, 90.0}, d);
  const LowRankMetric a = low_rank_metric(cq, cg, d, 300.0, 3), b = low_rank_metric(cq, cg, d, 300.0, 3);
  EXPECT_EQ(a.diag, b.diag);
  EXPECT_EQ(a.values, b.values);
  EXPECT_EQ(a.vectors, b.vectors);
  EXPECT_LE(a.rank(), 3);
}

TEST(MetricEstimate, RejectsMismatchedSizes) {
  EXPECT_THROW(low_rank_metric({1.0, 0.0, 0.0, 1.0}, {1.0}, 2, 10.0, 0), std::invalid_argument);
  Matrix v;
  EXPECT_THROW(symmetric_eigen({1.0, 2.0}, 2, v), std::invalid_argument);
}

}  // namespace
