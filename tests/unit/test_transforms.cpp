// Constraint transforms: round trips, log|J| against a finite-difference Jacobian
// determinant, and gradients (of log|J|, and the chain rule) against finite differences.
#include "hmc/core/types.hpp"
#include "hmc/model/transforms.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <vector>

namespace {

namespace tr = hmc::transform;
using Vec = std::vector<double>;

// A host vector as the accessor the transforms take.
struct V {
  double* p;
  KOKKOS_INLINE_FUNCTION double& operator()(int i) const { return p[i]; }
};
V acc(Vec& v) { return V{v.data()}; }

Vec random_vec(std::mt19937_64& rng, int n, double r) {
  std::uniform_real_distribution<double> u(-r, r);
  Vec v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

// log|det A| by Gaussian elimination with partial pivoting.
double log_abs_det(std::vector<Vec> a) {
  const int n = static_cast<int>(a.size());
  double s = 0.0;
  for (int c = 0; c < n; ++c) {
    int piv = c;
    for (int r = c + 1; r < n; ++r)
      if (std::abs(a[r][c]) > std::abs(a[piv][c])) piv = r;
    std::swap(a[c], a[piv]);
    s += std::log(std::abs(a[c][c]));
    for (int r = c + 1; r < n; ++r) {
      const double f = a[r][c] / a[c][c];
      for (int k = c; k < n; ++k) a[r][k] -= f * a[c][k];
    }
  }
  return s;
}

// Central-difference Jacobian of the first n outputs of `f` (R^n -> R^m, m >= n).
std::vector<Vec> fd_jacobian(const std::function<Vec(const Vec&)>& f, Vec y, int n, double h = 1e-6) {
  std::vector<Vec> j(n, Vec(n));
  for (int c = 0; c < n; ++c) {
    Vec up = y, down = y;
    up[c] += h;
    down[c] -= h;
    const Vec fu = f(up), fd = f(down);
    for (int r = 0; r < n; ++r) j[r][c] = (fu[r] - fd[r]) / (2 * h);
  }
  return j;
}

Vec fd_gradient(const std::function<double(const Vec&)>& f, const Vec& y, double h = 1e-6) {
  Vec g(y.size());
  for (std::size_t c = 0; c < y.size(); ++c) {
    Vec up = y, down = y;
    up[c] += h;
    down[c] -= h;
    g[c] = (f(up) - f(down)) / (2 * h);
  }
  return g;
}

void expect_close(const Vec& a, const Vec& b, double rel, const char* what) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i)
    EXPECT_LE(std::abs(a[i] - b[i]) / std::max({std::abs(a[i]), std::abs(b[i]), 1.0}), rel)
        << what << "[" << i << "]: " << a[i] << " vs " << b[i];
}

TEST(Transforms, IntervalRoundTripJacobianGradient) {
  std::mt19937_64 rng(1);
  const double a = -3.0, b = 7.5;
  for (int i = 0; i < 200; ++i) {
    const double y = random_vec(rng, 1, 8.0)[0];
    const double x = tr::interval_forward(y, a, b);
    ASSERT_GT(x, a);
    ASSERT_LT(x, b);
    EXPECT_NEAR(tr::interval_inverse(x, a, b), y, 1e-12 * std::max(1.0, std::abs(y)));
    const double h = 1e-5;
    const double dx = (tr::interval_forward(y + h, a, b) - tr::interval_forward(y - h, a, b)) / (2 * h);
    EXPECT_NEAR(tr::interval_log_jacobian(y, a, b), std::log(dx), 1e-6);
    EXPECT_NEAR(tr::interval_dx_dy(y, a, b), dx, 1e-7 * std::max(1.0, dx));
    const double dlj = (tr::interval_log_jacobian(y + h, a, b) - tr::interval_log_jacobian(y - h, a, b)) / (2 * h);
    EXPECT_NEAR(tr::interval_log_jacobian_grad(y), dlj, 1e-7);
  }
}

TEST(Transforms, PositiveRoundTripJacobianGradient) {
  std::mt19937_64 rng(2);
  for (int i = 0; i < 200; ++i) {
    const double y = random_vec(rng, 1, 10.0)[0];
    const double x = tr::positive_forward(y);
    EXPECT_NEAR(tr::positive_inverse(x), y, 1e-12 * std::max(1.0, std::abs(y)));
    const double h = 1e-6;
    const double dx = (tr::positive_forward(y + h) - tr::positive_forward(y - h)) / (2 * h);
    EXPECT_NEAR(tr::positive_log_jacobian(y), std::log(dx), 1e-7);
    EXPECT_EQ(tr::positive_log_jacobian_grad(y), 1.0);
  }
}

TEST(Transforms, SimplexRoundTripJacobianGradient) {
  std::mt19937_64 rng(3);
  for (int K : {2, 3, 5, 10}) {
    auto forward = [K](const Vec& y) {
      Vec yy = y, x(K);
      tr::simplex_forward(acc(yy), acc(x), K);
      return x;
    };
    auto log_j = [K](const Vec& y) {
      Vec yy = y, x(K);
      return tr::simplex_forward(acc(yy), acc(x), K);
    };
    for (int i = 0; i < 50; ++i) {
      Vec y = random_vec(rng, K - 1, 3.0), x(K), back(K - 1);
      const double lj = tr::simplex_forward(acc(y), acc(x), K);
      double sum = 0.0;
      for (double v : x) {
        EXPECT_GT(v, 0.0);
        sum += v;
      }
      EXPECT_NEAR(sum, 1.0, 1e-14);
      tr::simplex_inverse(acc(x), acc(back), K);
      expect_close(back, y, 1e-12, "simplex round trip");
      // The first K - 1 coordinates determine the simplex: their Jacobian's determinant.
      EXPECT_NEAR(lj, log_abs_det(fd_jacobian(forward, y, K - 1)), 1e-6) << "K=" << K;
      // d/dy [f(x(y)) + log|J|] with f(x) = sum_k w_k log x_k (a Dirichlet kernel).
      const Vec w = random_vec(rng, K, 2.0);
      auto target = [&](const Vec& yy) {
        const Vec xx = forward(yy);
        double f = log_j(yy);
        for (int k = 0; k < K; ++k) f += w[k] * std::log(xx[k]);
        return f;
      };
      Vec g_x(K), g_y(K - 1, 0.0);
      for (int k = 0; k < K; ++k) g_x[k] = w[k] / x[k];
      tr::simplex_backward(acc(y), acc(x), acc(g_x), acc(g_y), K);
      expect_close(g_y, fd_gradient(target, y), 1e-6, "simplex gradient");
    }
  }
}

TEST(Transforms, UniformSimplexAtZero) {
  Vec y(4, 0.0), x(5);
  tr::simplex_forward(acc(y), acc(x), 5);
  for (double v : x) EXPECT_NEAR(v, 0.2, 1e-15);
}

TEST(Transforms, OrderedRoundTripJacobianGradient) {
  std::mt19937_64 rng(4);
  for (bool positive : {false, true}) {
    for (int n : {1, 2, 4, 7}) {
      auto forward = [n, positive](const Vec& y) {
        Vec yy = y, x(n);
        tr::ordered_forward(acc(yy), acc(x), n, positive);
        return x;
      };
      auto log_j = [n, positive](const Vec& y) {
        Vec yy = y, x(n);
        return tr::ordered_forward(acc(yy), acc(x), n, positive);
      };
      for (int i = 0; i < 50; ++i) {
        Vec y = random_vec(rng, n, 2.0), x(n), back(n);
        const double lj = tr::ordered_forward(acc(y), acc(x), n, positive);
        for (int k = 1; k < n; ++k) EXPECT_GT(x[k], x[k - 1]);
        if (positive) {
          EXPECT_GT(x[0], 0.0);
        }
        tr::ordered_inverse(acc(x), acc(back), n, positive);
        expect_close(back, y, 1e-12, "ordered round trip");
        EXPECT_NEAR(lj, log_abs_det(fd_jacobian(forward, y, n)), 1e-6);
        // f(x) = sum_k w_k x_k^2 / 2
        const Vec w = random_vec(rng, n, 1.0);
        auto target = [&](const Vec& yy) {
          const Vec xx = forward(yy);
          double f = log_j(yy);
          for (int k = 0; k < n; ++k) f += 0.5 * w[k] * xx[k] * xx[k];
          return f;
        };
        Vec g_x(n), g_y(n, 0.0);
        for (int k = 0; k < n; ++k) g_x[k] = w[k] * x[k];
        tr::ordered_backward(acc(y), acc(x), acc(g_x), acc(g_y), n, positive);
        expect_close(g_y, fd_gradient(target, y), 1e-6, "ordered gradient");
      }
    }
  }
}

void transforms_on_device(const Kokkos::View<double**>& buf, const Kokkos::View<double*>& err) {
  Kokkos::parallel_for(
      "test::transforms", Kokkos::RangePolicy<hmc::ExecSpace>(0, 64), KOKKOS_LAMBDA(const int i) {
        const hmc::Row r = hmc::row(buf, i);
        // y in r(0..2), simplex x in r(3..6), y back in r(0..2) after the inverse.
        r(0) = 0.01 * i - 0.3;
        r(1) = 0.5;
        r(2) = -0.02 * i;
        const double y0 = r(0), y2 = r(2);
        const hmc::Row y{&r(0), r.stride}, x{&r(3), r.stride};
        hmc::transform::simplex_forward(y, x, 4);
        hmc::transform::simplex_inverse(x, y, 4);
        err(i) = hmc::math::fabs(r(0) - y0) + hmc::math::fabs(r(2) - y2) +
                 hmc::math::fabs(
                     hmc::transform::interval_inverse(hmc::transform::interval_forward(y0, 1.0, 2.0), 1.0, 2.0) - y0);
      });
}

TEST(Transforms, RunInsideKernels) {
  Kokkos::View<double**> buf("buf", 64, 8);
  Kokkos::View<double*> err("err", 64);
  transforms_on_device(buf, err);
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), err);
  for (int i = 0; i < 64; ++i) EXPECT_LT(h(i), 1e-12) << i;
}

}  // namespace
