#include "hmc/sampler/metric_estimate.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>
#include <stdexcept>

namespace hmc::sampler {
namespace {

constexpr double kMinScale = 1e-10;
constexpr double kMaxScale = 1e10;
constexpr int kMaxSweeps = 100;
constexpr double kEigenFloor = 1e-12;  // relative to the largest eigenvalue, for matrix functions

std::size_t sq(int d) { return static_cast<std::size_t>(d) * static_cast<std::size_t>(d); }

// f(m) = V diag(f(λ)) Vᵀ for symmetric m, eigenvalues floored at kEigenFloor times the
// largest first; the result is mirrored from its upper triangle, so exactly symmetric.
template <class F>
std::vector<double> matrix_function(const std::vector<double>& m, int d, F f) {
  std::vector<double> v;
  std::vector<double> lambda = symmetric_eigen(m, d, v);
  const double top = lambda.empty() ? 0.0 : lambda.back();
  const double floor = top > 0.0 ? kEigenFloor * top : kEigenFloor;
  std::vector<double> fl(d);
  for (int k = 0; k < d; ++k) fl[k] = f(std::max(lambda[k], floor));
  std::vector<double> out(sq(d), 0.0);
  for (int i = 0; i < d; ++i)
    for (int j = i; j < d; ++j) {
      double s = 0.0;
      for (int k = 0; k < d; ++k) s += v[k * d + i] * fl[k] * v[k * d + j];
      out[i * d + j] = s;
      out[j * d + i] = s;
    }
  return out;
}

std::vector<double> multiply(const std::vector<double>& a, const std::vector<double>& b, int d) {
  std::vector<double> c(sq(d), 0.0);
  for (int i = 0; i < d; ++i)
    for (int k = 0; k < d; ++k) {
      const double aik = a[i * d + k];
      for (int j = 0; j < d; ++j) c[i * d + j] += aik * b[k * d + j];
    }
  return c;
}

// (a + aᵀ) / 2, so that rounding in products leaves no asymmetry.
std::vector<double> symmetrised(std::vector<double> a, int d) {
  for (int i = 0; i < d; ++i)
    for (int j = i + 1; j < d; ++j) {
      const double s = 0.5 * (a[i * d + j] + a[j * d + i]);
      a[i * d + j] = s;
      a[j * d + i] = s;
    }
  return a;
}

}  // namespace

std::vector<double> fisher_diagonal(const std::vector<double>& var_q, const std::vector<double>& var_g) {
  if (var_q.size() != var_g.size()) throw std::invalid_argument("fisher_diagonal: var_q and var_g differ in size");
  std::vector<double> out(var_q.size());
  for (std::size_t j = 0; j < var_q.size(); ++j) {
    const double vq = var_q[j], vg = var_g[j];
    double s;
    if (vq > 0.0 && std::isfinite(vg) && vg > 0.0)
      s = std::sqrt(vq / vg);
    else
      s = vq > 0.0 ? vq : 1.0;
    out[j] = std::min(std::max(s, kMinScale), kMaxScale);
  }
  return out;
}

int LowRankMetric::rank() const { return static_cast<int>(values.size()); }

std::vector<double> LowRankMetric::dense() const {
  const int r = rank();
  std::vector<double> s(dim);
  for (int j = 0; j < dim; ++j) s[j] = std::sqrt(diag[j]);
  std::vector<double> out(sq(dim), 0.0);
  for (int i = 0; i < dim; ++i)
    for (int j = i; j < dim; ++j) {
      double c = 0.0;
      for (int k = 0; k < r; ++k) c += vectors[k * dim + i] * (values[k] - 1.0) * vectors[k * dim + j];
      double x = s[i] * s[j] * c;
      if (i == j) x += diag[i];
      out[i * dim + j] = x;
      out[j * dim + i] = x;
    }
  return out;
}

std::vector<double> symmetric_eigen(const std::vector<double>& a, int d, std::vector<double>& vectors) {
  if (d < 0 || a.size() != sq(d)) throw std::invalid_argument("symmetric_eigen: a is not d x d");
  std::vector<double> m = symmetrised(a, d);
  std::vector<double> v(sq(d), 0.0);  // row-major; column k is eigenvector k
  for (int i = 0; i < d; ++i) v[i * d + i] = 1.0;

  double norm2 = 0.0;
  for (double x : m) norm2 += x * x;
  const double tol = 1e-14 * std::sqrt(norm2);

  for (int sweep = 0; sweep < kMaxSweeps; ++sweep) {
    double off2 = 0.0;
    for (int p = 0; p < d; ++p)
      for (int q = p + 1; q < d; ++q) off2 += 2.0 * m[p * d + q] * m[p * d + q];
    if (!(std::sqrt(off2) > tol)) break;
    bool rotated = false;
    for (int p = 0; p < d; ++p)
      for (int q = p + 1; q < d; ++q) {
        const double apq = m[p * d + q];
        if (apq == 0.0) continue;
        const double app = m[p * d + p], aqq = m[q * d + q];
        // Negligible against both diagonal entries: zero it without a rotation.
        if (std::abs(app) + 100.0 * std::abs(apq) == std::abs(app) &&
            std::abs(aqq) + 100.0 * std::abs(apq) == std::abs(aqq)) {
          m[p * d + q] = 0.0;
          m[q * d + p] = 0.0;
          continue;
        }
        const double theta = (aqq - app) / (2.0 * apq);
        double t;
        if (std::abs(theta) > 1e150)
          t = 0.5 / theta;
        else
          t = (theta >= 0.0 ? 1.0 : -1.0) / (std::abs(theta) + std::sqrt(theta * theta + 1.0));
        const double c = 1.0 / std::sqrt(t * t + 1.0), s = t * c;
        // m <- Pᵀ m P with P = rotation in the (p, q) plane: columns, then rows.
        for (int k = 0; k < d; ++k) {
          const double mkp = m[k * d + p], mkq = m[k * d + q];
          m[k * d + p] = c * mkp - s * mkq;
          m[k * d + q] = s * mkp + c * mkq;
        }
        for (int k = 0; k < d; ++k) {
          const double mpk = m[p * d + k], mqk = m[q * d + k];
          m[p * d + k] = c * mpk - s * mqk;
          m[q * d + k] = s * mpk + c * mqk;
        }
        m[p * d + q] = 0.0;
        m[q * d + p] = 0.0;
        for (int k = 0; k < d; ++k) {
          const double vkp = v[k * d + p], vkq = v[k * d + q];
          v[k * d + p] = c * vkp - s * vkq;
          v[k * d + q] = s * vkp + c * vkq;
        }
        rotated = true;
      }
    if (!rotated) break;
  }

  std::vector<int> order(d);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return m[x * d + x] < m[y * d + y]; });
  std::vector<double> values(d);
  vectors.assign(sq(d), 0.0);
  for (int k = 0; k < d; ++k) {
    const int src = order[k];
    values[k] = m[src * d + src];
    for (int j = 0; j < d; ++j) vectors[k * d + j] = v[j * d + src];
  }
  return values;
}

std::vector<double> spd_geometric_mean(const std::vector<double>& a, const std::vector<double>& b, int d) {
  if (d < 0 || a.size() != sq(d) || b.size() != sq(d))
    throw std::invalid_argument("spd_geometric_mean: a and b are not d x d");
  const std::vector<double> b_half = matrix_function(b, d, [](double x) { return std::sqrt(x); });
  const std::vector<double> b_inv_half = matrix_function(b, d, [](double x) { return 1.0 / std::sqrt(x); });
  const std::vector<double> inner = symmetrised(multiply(multiply(b_half, a, d), b_half, d), d);
  const std::vector<double> inner_half = matrix_function(inner, d, [](double x) { return std::sqrt(x); });
  return symmetrised(multiply(multiply(b_inv_half, inner_half, d), b_inv_half, d), d);
}

LowRankMetric low_rank_metric(const std::vector<double>& cov_q, const std::vector<double>& cov_g, int dim, double n,
                              int max_rank, double cutoff) {
  if (dim < 0 || cov_q.size() != sq(dim) || cov_g.size() != sq(dim))
    throw std::invalid_argument("low_rank_metric: cov_q and cov_g are not dim x dim");
  LowRankMetric out;
  out.dim = dim;
  std::vector<double> var_q(dim), var_g(dim);
  for (int j = 0; j < dim; ++j) {
    var_q[j] = cov_q[j * dim + j];
    var_g[j] = cov_g[j * dim + j];
  }
  out.diag = fisher_diagonal(var_q, var_g);
  if (dim == 0) return out;

  std::vector<double> s(dim);
  for (int j = 0; j < dim; ++j) s[j] = std::sqrt(out.diag[j]);
  const double w = n / (n + 5.0), shrink = 1e-3 * (5.0 / (n + 5.0));
  std::vector<double> cq(sq(dim)), cg(sq(dim));
  for (int i = 0; i < dim; ++i)
    for (int j = 0; j < dim; ++j) {
      cq[i * dim + j] = w * (cov_q[i * dim + j] / (s[i] * s[j]));
      cg[i * dim + j] = w * (cov_g[i * dim + j] * (s[i] * s[j]));
    }
  for (int j = 0; j < dim; ++j) {
    cq[j * dim + j] += shrink;
    cg[j * dim + j] += shrink;
  }

  const std::vector<double> sigma = spd_geometric_mean(cq, cg, dim);
  std::vector<double> vec;
  const std::vector<double> lambda = symmetric_eigen(sigma, dim, vec);

  std::vector<int> keep;
  for (int k = 0; k < dim; ++k) {
    const double l = lambda[k];
    if (std::isfinite(l) && l > 0.0 && std::max(l, 1.0 / l) > cutoff) keep.push_back(k);
  }
  std::stable_sort(keep.begin(), keep.end(),
                   [&](int x, int y) { return std::abs(std::log(lambda[x])) > std::abs(std::log(lambda[y])); });
  if (max_rank > 0 && static_cast<int>(keep.size()) > max_rank) keep.resize(max_rank);

  for (int k : keep) {
    out.values.push_back(lambda[k]);
    out.vectors.insert(out.vectors.end(), vec.begin() + static_cast<std::ptrdiff_t>(k) * dim,
                       vec.begin() + static_cast<std::ptrdiff_t>(k + 1) * dim);
  }
  return out;
}

}  // namespace hmc::sampler
