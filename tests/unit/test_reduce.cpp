// Ensemble sums that do not depend on the order of the particles (and so not on how
// they are split over ranks and threads).
#include "hmc/core/ensemble_sum.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace {

std::vector<double> column_sums(const std::vector<std::vector<double>>& rows) {
  const int n = static_cast<int>(rows.size()), c = static_cast<int>(rows[0].size());
  hmc::StateView v("v", n, c);
  auto h = Kokkos::create_mirror_view(v);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < c; ++j) h(i, j) = rows[i][j];
  Kokkos::deep_copy(v, h);
  return hmc::reproducible_column_sums(v, n, n, hmc::no_allreduce());
}

TEST(ReproducibleSum, OrderIndependentAndAccurate) {
  std::mt19937_64 rng(5);
  std::normal_distribution<double> z;
  std::vector<std::vector<double>> rows(5000, std::vector<double>(3));
  for (auto& r : rows) r = {z(rng), 1e6 + z(rng), 1e-9 * z(rng)};
  const auto a = column_sums(rows);
  std::shuffle(rows.begin(), rows.end(), rng);
  const auto b = column_sums(rows);
  for (int j = 0; j < 3; ++j) {
    EXPECT_EQ(a[j], b[j]) << "column " << j << " depends on the order";  // bitwise
    long double exact = 0;
    double largest = 0;
    for (const auto& r : rows) {
      exact += r[j];
      largest = std::max(largest, std::abs(r[j]));
    }
    EXPECT_NEAR(a[j], static_cast<double>(exact), 5000 * largest * std::ldexp(1.0, -40)) << "column " << j;
  }
}

TEST(ReproducibleSum, NonFiniteValuesCountAsZeroAndTinyValuesWork) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const double tiny = std::numeric_limits<double>::denorm_min() * 8;
  const auto s = column_sums({{1.0, nan, tiny, 0.0}, {2.0, 3.0, tiny, 0.0}, {inf, 4.0, 0.0, 0.0}});
  EXPECT_EQ(s[0], 3.0);
  EXPECT_EQ(s[1], 7.0);
  EXPECT_GE(s[2], 0.0);
  EXPECT_TRUE(std::isfinite(s[2]));
  EXPECT_EQ(s[3], 0.0);
}

}  // namespace
