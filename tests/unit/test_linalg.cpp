// Small dense linear algebra on the autodiff number types (hmc/distributions/linalg.hpp): the
// Cholesky factor of a hand-computed 3x3 and L L^T = A for a covariance, non-positive-definite
// detection, the triangular product and solve, and gradients through all of them: forward mode
// (Dual) and reverse mode (Var<double>, one node per entry) against the closed form
// d(0.5 log det A)/dA and central finite differences; the lanes (Var<Pack>) lane by lane.

#include "hmc/core/pack.hpp"
#include "hmc/core/types.hpp"
#include "hmc/distributions/dist.hpp"
#include "hmc/model/autodiff.hpp"
#include "unit/autodiff_density.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

// Host only, as test_reverse.cpp: the densities are host lambdas.
#if defined(KOKKOS_ENABLE_CUDA) || defined(KOKKOS_ENABLE_HIP)
TEST(Linalg, HostOnly) { GTEST_SKIP() << "host build only"; }
#else

namespace {

using namespace hmc;

constexpr int kMax = 8;

using autodiff_test::Density;

/// Gradients of f at q: reverse mode (tape) = forward mode to 1e-10, both = central finite
/// differences to 1e-6; the lanes at q + 0.01 l = reverse mode at each lane's point to 1e-12.
template <class F>
void check_gradient(const std::string& name, int d, F f, const std::vector<double>& q) {
  SCOPED_TRACE(name);
  Density<F> m(d, f);
  m.prepare_gradient();
  m.reverse_scalar = true;
  ASSERT_GT(m.scratch_size(), 0);
  std::vector<double> g_fwd(d), g_rev(d), scratch(m.scratch_size()), qq(q);
  const Row qr{qq.data(), 1};
  const double lp = m.log_density(qr);
  ASSERT_TRUE(std::isfinite(lp));
  EXPECT_NEAR(m.log_density_gradient(qr, Row{g_fwd.data(), 1}), lp, 1e-12 * std::fabs(lp) + 1e-12);
  EXPECT_NEAR(m.log_density_gradient(qr, Row{g_rev.data(), 1}, Row{scratch.data(), 1}), lp,
              1e-12 * std::fabs(lp) + 1e-12);
  for (int j = 0; j < d; ++j) {
    const double h = 1e-6;
    qq[j] = q[j] + h;
    const double up = m.log_density(qr);
    qq[j] = q[j] - h;
    const double down = m.log_density(qr);
    qq[j] = q[j];
    const double fd = (up - down) / (2 * h);
    EXPECT_NEAR(g_rev[j], g_fwd[j], 1e-10 * std::max(1.0, std::fabs(g_fwd[j]))) << "coordinate " << j;
    EXPECT_NEAR(g_rev[j], fd, 1e-6 * std::max(1.0, std::fabs(fd))) << "coordinate " << j;
  }

  // The lanes: lane l at q + 0.01 l.
  std::vector<Pack> qp(d), gp(d), lane_scratch(m.lane_scratch_size());
  for (int j = 0; j < d; ++j) {
    for (int l = 0; l < kLanes; ++l) qp[j][l] = q[j] + 0.01 * l;
  }
  const Pack lpl = m.log_density_gradient_lanes(PackRow{qp.data()}, PackRow{gp.data()}, lane_scratch.data());
  for (int l = 0; l < kLanes; ++l) {
    std::vector<double> ql(d), gl(d);
    for (int j = 0; j < d; ++j) ql[j] = qp[j][l];
    const double lpr = m.log_density_gradient(Row{ql.data(), 1}, Row{gl.data(), 1}, Row{scratch.data(), 1});
    EXPECT_NEAR(lpl[l], lpr, 1e-12 * std::max(1.0, std::fabs(lpr))) << "lane " << l;
    for (int j = 0; j < d; ++j) {
      EXPECT_NEAR(gp[j][l], gl[j], 1e-12 * std::max(1.0, std::fabs(gl[j]))) << "lane " << l << " coordinate " << j;
    }
  }
}

TEST(Linalg, CholeskyOfAHandComputed3x3) {
  // A = L L^T with L = [[2, 0, 0], [6, 1, 0], [-8, 5, 3]].
  const double A[3][3] = {{4, 12, -16}, {12, 37, -43}, {-16, -43, 98}};
  const double L[3][3] = {{2, 0, 0}, {6, 1, 0}, {-8, 5, 3}};
  double dense[9];
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) dense[3 * i + j] = A[i][j];
  }
  ASSERT_TRUE(dist::cholesky_decompose(dist::matrix_ref(dense, 3), 3));
  double packed[6];
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j <= i; ++j) packed[i * (i + 1) / 2 + j] = A[i][j];
  }
  ASSERT_TRUE(dist::cholesky_decompose(dist::lower_ref(packed), 3));
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j <= i; ++j) {
      EXPECT_NEAR(dense[3 * i + j], L[i][j], 1e-14) << i << "," << j;
      EXPECT_NEAR(dist::lower_ref(packed)(i, j), L[i][j], 1e-14) << i << "," << j;
    }
  }
  // The upper triangle is not touched.
  EXPECT_EQ(dense[1], 12.0);
  EXPECT_EQ(dense[5], -43.0);

  // L z and its inverse.
  const double z[3] = {1.0, -2.0, 0.5};
  double y[3], back[3];
  const auto zv = [&](int i) { return z[i]; };
  dist::multiply_lower_tri(dist::lower_ref(packed), zv, dist::vector_ref(y), 3);
  EXPECT_NEAR(y[0], 2.0, 1e-14);
  EXPECT_NEAR(y[1], 4.0, 1e-14);
  EXPECT_NEAR(y[2], -8.0 - 10.0 + 1.5, 1e-14);
  dist::mdivide_left_tri_low(dist::lower_ref(packed), dist::vector_ref(y), dist::vector_ref(back), 3);
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(back[i], z[i], 1e-14);
}

TEST(Linalg, CovarianceFactorReproducesTheMatrix) {
  const double x[6] = {-3.0, -1.5, 0.0, 0.2, 2.0, 5.0};
  const auto xs = [&](int i) { return x[i]; };
  const int n = 6;
  const double alpha = 1.3, rho = 1.7, jitter = 1e-8;
  double a[kMax * kMax], l[kMax * kMax];
  dist::gp_exp_quad_cov(xs, n, alpha, rho, jitter, dist::matrix_ref(a, kMax));
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j <= i; ++j) {
      const double d = x[i] - x[j];
      const double want = alpha * alpha * std::exp(-d * d / (2 * rho * rho)) + (i == j ? jitter : 0.0);
      EXPECT_NEAR(a[i * kMax + j], want, 1e-15);
      l[i * kMax + j] = a[i * kMax + j];
    }
  }
  ASSERT_TRUE(dist::cholesky_decompose(dist::matrix_ref(l, kMax), n));
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j <= i; ++j) {
      double s = 0.0;
      for (int k = 0; k <= j; ++k) s += l[i * kMax + k] * l[j * kMax + k];
      EXPECT_NEAR(s, a[i * kMax + j], 1e-13) << i << "," << j;
    }
  }
}

TEST(Linalg, NotPositiveDefinite) {
  double a[4] = {1.0, 2.0, 2.0, 1.0};  // eigenvalues 3, -1
  EXPECT_FALSE(dist::cholesky_decompose(dist::matrix_ref(a, 2), 2));
  double z[4] = {0.0, 0.0, 0.0, 0.0};
  EXPECT_FALSE(dist::cholesky_decompose(dist::matrix_ref(z, 2), 2));
  double nan[1] = {std::nan("")};
  EXPECT_FALSE(dist::cholesky_decompose(dist::matrix_ref(nan, 1), 1));
  ad::Dual d[4] = {1.0, 2.0, 2.0, 1.0};
  EXPECT_FALSE(dist::cholesky_decompose(dist::matrix_ref(d, 2), 2));

  // On Vars: a tape that records.
  std::vector<double> storage(ad::TapeLayout{64, 64}.doubles());
  ad::Tape<double> tape(ad::TapeStorage<double>{storage.data(), 1}, ad::TapeLayout{64, 64}, 1);
  const Var<double> x(2.0, 0, &tape);
  Var<double> v[4] = {Var<double>(1.0), x, x, Var<double>(1.0)};
  EXPECT_FALSE(dist::cholesky_decompose(dist::matrix_ref(v, 2), 2));

  // Lanes: the failing lane is NaN, the others are right.
  Pack off(0.5);
  off[1] = 2.0;
  Var<Pack> p[3] = {Var<Pack>(1.0), Var<Pack>(off), Var<Pack>(1.0)};
  EXPECT_FALSE(dist::cholesky_decompose(dist::lower_ref(p), 2));
  EXPECT_TRUE(std::isnan(p[2].v[1]));
  EXPECT_NEAR(p[2].v[0], std::sqrt(0.75), 1e-15);
}

// 0.5 log det A = Σ log L(i, i); ∂/∂alpha and ∂/∂rho in closed form: 0.5 tr(A^-1 ∂A).
TEST(Linalg, HalfLogDeterminantGradient) {
  const double x[5] = {-2.0, -0.7, 0.0, 1.1, 3.0};
  const int n = 5;
  const auto f = [=](auto type, const auto& q) {
    using T = typename decltype(type)::type;
    const auto xs = [&](int i) { return x[i]; };
    const T alpha = math::exp(T(q(0))), rho = math::exp(T(q(1)));
    T a[kMax * (kMax + 1) / 2];
    const auto m = dist::lower_ref(a);
    dist::gp_exp_quad_cov(xs, n, alpha, rho, 0.1, m);
    if (!dist::cholesky_decompose(m, n)) return T(-1e300);
    T s = 0.0;
    for (int i = 0; i < n; ++i) s += math::log(m(i, i));
    return s;
  };
  const std::vector<double> q = {0.2, -0.1};
  check_gradient("half log det", 2, f, q);

  // Closed form at q: A^-1 by solving with the factor (doubles), then 0.5 tr(A^-1 dA).
  const double alpha = std::exp(q[0]), rho = std::exp(q[1]);
  double A[kMax][kMax], dA_alpha[kMax][kMax], dA_rho[kMax][kMax], L[kMax * (kMax + 1) / 2];
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      const double d = x[i] - x[j];
      const double e = std::exp(-d * d / (2 * rho * rho));
      A[i][j] = alpha * alpha * e + (i == j ? 0.1 : 0.0);
      dA_alpha[i][j] = 2 * alpha * alpha * e;                  // ∂/∂log alpha
      dA_rho[i][j] = alpha * alpha * e * d * d / (rho * rho);  // ∂/∂log rho
      if (j <= i) L[i * (i + 1) / 2 + j] = A[i][j];
    }
  }
  ASSERT_TRUE(dist::cholesky_decompose(dist::lower_ref(L), n));
  double tr_alpha = 0.0, tr_rho = 0.0;
  for (int c = 0; c < n; ++c) {
    // Column c of A^-1: L L^T w = e_c.
    double e[kMax] = {}, y[kMax], w[kMax];
    e[c] = 1.0;
    dist::mdivide_left_tri_low(dist::lower_ref(L), dist::vector_ref(e), dist::vector_ref(y), n);
    for (int i = n - 1; i >= 0; --i) {  // L^T w = y
      double t = y[i];
      for (int k = i + 1; k < n; ++k) t -= dist::lower_ref(L)(k, i) * w[k];
      w[i] = t / dist::lower_ref(L)(i, i);
    }
    for (int i = 0; i < n; ++i) {
      tr_alpha += w[i] * dA_alpha[i][c];
      tr_rho += w[i] * dA_rho[i][c];
    }
  }
  Density<decltype(f)> m(2, f);
  m.prepare_gradient();
  m.reverse_scalar = true;
  std::vector<double> g(2), scratch(m.scratch_size()), qq(q);
  m.log_density_gradient(Row{qq.data(), 1}, Row{g.data(), 1}, Row{scratch.data(), 1});
  EXPECT_NEAR(g[0], 0.5 * tr_alpha, 1e-10);
  EXPECT_NEAR(g[1], 0.5 * tr_rho, 1e-10);
}

// A Gaussian-process density in every piece: f = L z, then a solve with the factor, with
// parameters in the matrix and in the vectors.
TEST(Linalg, ProductAndSolveGradients) {
  const double x[4] = {-1.0, 0.0, 0.5, 2.0};
  const int n = 4;
  const auto f = [=](auto type, const auto& q) {
    using T = typename decltype(type)::type;
    const auto xs = [&](int i) { return x[i]; };
    const T alpha = math::exp(T(q(0))), rho = math::exp(T(q(1)));
    T a[kMax * kMax], v[kMax], w[kMax];
    const auto m = dist::matrix_ref(a, kMax);
    dist::gp_exp_quad_cov(xs, n, alpha, rho, 0.05, m);
    if (!dist::cholesky_decompose(m, n)) return T(-1e300);
    dist::multiply_lower_tri(m, dist::slice(q, 2), dist::vector_ref(v), n);
    T s = 0.0;
    for (int i = 0; i < n; ++i) s += math::sin(v[i]) * (1.0 + i);
    // w = L^-1 (v + 1): recovers z + L^-1 1.
    for (int i = 0; i < n; ++i) v[i] = v[i] + 1.0;
    dist::mdivide_left_tri_low(m, dist::vector_ref(v), dist::vector_ref(w), n);
    for (int i = 0; i < n; ++i) s += w[i] * w[i] * 0.1;
    return s;
  };
  check_gradient("product and solve", 2 + n, f, {0.1, 0.3, 0.5, -1.0, 0.25, 2.0});
}

// The recorded sizes: the Cholesky factor is n(n+1)/2 nodes.
TEST(Linalg, TapeSize) {
  const int n = 6;
  ad::Tape<double> tape(ad::TapeStorage<double>{}, ad::TapeLayout{1 << 20, 1 << 20}, 1);
  const Var<double> x(1.0, 0, &tape);
  Var<double> a[kMax * (kMax + 1) / 2];
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j <= i; ++j) a[i * (i + 1) / 2 + j] = i == j ? Var<double>(n + 0.0) + x : Var<double>(0.1) * x;
  }
  const int before = tape.nodes;
  ASSERT_TRUE(dist::cholesky_decompose(dist::lower_ref(a), n));
  EXPECT_EQ(tape.nodes - before, n * (n + 1) / 2);
}

}  // namespace

#endif
