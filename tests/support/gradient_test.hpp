#pragma once
// Shared test helpers: a model's analytic gradient against central finite differences
// at random points, evaluated on the default execution space (GPU builds included).

#include "hmc/model/concept.hpp"
#include "support/device_eval.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace hmc::test {

/// n points with coordinates uniform in (-radius, radius).
inline std::vector<std::vector<double>> random_points(int n, int d, double radius, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-radius, radius);
  std::vector<std::vector<double>> pts(n, std::vector<double>(d));
  for (auto& p : pts)
    for (auto& x : p) x = u(rng);
  return pts;
}

/// For each point: [0] log_density, [1] the value log_density_gradient returns (with the
/// model's scratch memory if it takes any), then d analytic gradient entries, then d
/// central differences (step h) of log_density.
template <class Model>
HostMatrix gradient_check(const Model& model, const StateView& points, double h) {
  const int n = static_cast<int>(points.extent(0)), d = model.dim();
  const int scratch_size = model::scratch_size(model);
  StateView out("test::out", n, 2 + 2 * d), work("test::work", n, d), grad("test::grad", n, d);
  StateView scratch("test::scratch", scratch_size > 0 ? n : 0, scratch_size);
  Kokkos::parallel_for(
      "test::gradient_check", Kokkos::RangePolicy<ExecSpace>(0, n), KOKKOS_LAMBDA(const int i) {
        const Row q = row(points, i), w = row(work, i), g = row(grad, i);
        const Row s = scratch.extent(1) > 0 ? row(scratch, i) : Row{nullptr, 0};
        out(i, 0) = model.log_density(q);
        out(i, 1) = model::log_density_gradient(model, q, g, s);
        for (int j = 0; j < d; ++j) {
          out(i, 2 + j) = g(j);
          for (int k = 0; k < d; ++k) w(k) = q(k);
          w(j) = q(j) + h;
          const double up = model.log_density(w);
          w(j) = q(j) - h;
          const double down = model.log_density(w);
          out(i, 2 + d + j) = (up - down) / (2.0 * h);
        }
      });
  return to_host(out);
}

/// Relative error |a - fd| / max(|a|, |fd|, 1) <= 1e-6 for every coordinate of every
/// point, and both log density paths agree (relative 1e-12).
template <class Model>
void expect_gradient_matches(const Model& model, int n_points, double radius, unsigned seed, double h = 1e-5) {
  const int d = model.dim();
  const auto r = gradient_check(model, to_device(random_points(n_points, d, radius, seed)), h);
  for (int i = 0; i < n_points; ++i) {
    ASSERT_TRUE(std::isfinite(r(i, 0))) << "point " << i;
    EXPECT_LE(std::abs(r(i, 0) - r(i, 1)), 1e-12 * std::max(1.0, std::abs(r(i, 0))))
        << "log_density and log_density_gradient disagree at point " << i << ": " << r(i, 0) << " vs " << r(i, 1);
    for (int j = 0; j < d; ++j) {
      const double a = r(i, 2 + j), fd = r(i, 2 + d + j);
      const double rel = std::abs(a - fd) / std::max({std::abs(a), std::abs(fd), 1.0});
      EXPECT_LE(rel, 1e-6) << "point " << i << " coordinate " << j << ": analytic " << a << " vs fd " << fd;
    }
  }
}

}  // namespace hmc::test
