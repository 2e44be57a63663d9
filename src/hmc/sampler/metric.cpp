#include "hmc/sampler/metric.hpp"

#include <cmath>
#include <stdexcept>

namespace hmc::sampler {

Metric unit_metric(int dim) { return diagonal_metric(std::vector<double>(dim, 1.0)); }

Metric diagonal_metric(const std::vector<double>& variances) {
  Metric m;
  m.dim = static_cast<int>(variances.size());
  m.diag = VectorView("hmc::metric_diag", m.dim);
  auto h = Kokkos::create_mirror_view(m.diag);
  for (int j = 0; j < m.dim; ++j) h(j) = variances[j];
  Kokkos::deep_copy(m.diag, h);
  return m;
}

Metric dense_metric(const std::vector<double>& sigma, int dim) {
  Metric m;
  m.dim = dim;
  m.dense = true;
  m.full = MatrixView("hmc::metric_full", dim, dim);
  m.chol = MatrixView("hmc::metric_chol", dim, dim);
  auto f = Kokkos::create_mirror_view(m.full);
  auto l = Kokkos::create_mirror_view(m.chol);
  for (int i = 0; i < dim; ++i)
    for (int j = 0; j < dim; ++j) {
      f(i, j) = sigma[i * dim + j];
      l(i, j) = 0.0;
    }
  for (int j = 0; j < dim; ++j) {
    double s = f(j, j);
    for (int k = 0; k < j; ++k) s -= l(j, k) * l(j, k);
    if (!(s > 0.0)) throw std::runtime_error("dense metric is not positive definite");
    l(j, j) = std::sqrt(s);
    for (int i = j + 1; i < dim; ++i) {
      double t = f(i, j);
      for (int k = 0; k < j; ++k) t -= l(i, k) * l(j, k);
      l(i, j) = t / l(j, j);
    }
  }
  Kokkos::deep_copy(m.full, f);
  Kokkos::deep_copy(m.chol, l);
  return m;
}

std::vector<double> metric_values(const Metric& m) {
  std::vector<double> out;
  if (!m.dense) {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m.diag);
    for (int j = 0; j < m.dim; ++j) out.push_back(h(j));
  } else {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m.full);
    for (int i = 0; i < m.dim; ++i)
      for (int j = 0; j < m.dim; ++j) out.push_back(h(i, j));
  }
  return out;
}

}  // namespace hmc::sampler
