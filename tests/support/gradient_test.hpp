#pragma once
// Shared test helpers: a model's analytic gradient against finite differences at random
// points, through the one checker `hmc diagnose` uses (hmc::model::check_gradient in
// src/hmc/model/gradient_check.hpp), evaluated on the default execution space (GPU
// builds included).

#include "hmc/model/gradient_check.hpp"
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

/// Every gradient entry at every point passes check_gradient's test at `tolerance`
/// (relative error |a − fd| / max(|a|, |fd|, 1) within tolerance plus the measured
/// error of the finite differences at steps h and h/2, which must itself be resolved), the log
/// density is finite, and log_density and the value log_density_gradient returns agree
/// to relative 1e-12.
template <class Model>
void expect_gradient_matches(const Model& model, int n_points, double radius, unsigned seed, double tolerance = 1e-6) {
  const int d = model.dim();
  const auto r = model::check_gradient(model, to_device(random_points(n_points, d, radius, seed)));
  for (int i = 0; i < n_points; ++i) {
    ASSERT_TRUE(std::isfinite(r.lp(i))) << "point " << i;
    EXPECT_LE(std::abs(r.lp(i) - r.lp_gradient(i)), 1e-12 * std::max(1.0, std::abs(r.lp(i))))
        << "log_density and log_density_gradient disagree at point " << i << ": " << r.lp(i) << " vs "
        << r.lp_gradient(i);
    for (int j = 0; j < d; ++j)
      EXPECT_TRUE(r.entry_passed(i, j, tolerance))
          << "point " << i << " coordinate " << j << ": analytic " << r.analytic(i, j) << " vs fd "
          << r.finite_diff(i, j) << " and " << r.finite_diff_half(i, j) << " (error " << r.error(i, j)
          << ", allowed noise " << r.noise(i, j) << ")";
  }
}

}  // namespace hmc::test
