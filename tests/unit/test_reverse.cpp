// Reverse-mode automatic differentiation (hmc/model/reverse.hpp, hmc/model/autodiff.hpp):
// every recorded operation, every hmc/distributions function on Vars, the GLMs and the
// multivariate densities against forward mode (Duals: 1e-10 relative) and central finite
// differences; the lanes (Var<Pack>) against the one-particle gradient lane by lane; a tape
// that runs out of room falls back to forward mode; a tape is sized once and then reused.

#include "hmc/core/pack.hpp"
#include "hmc/core/types.hpp"
#include "hmc/distributions/dist.hpp"
#include "hmc/model/autodiff.hpp"
#include "hmc/model/concept.hpp"
#include "hmc/model/transforms.hpp"
#include "unit/autodiff_density.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

// Host only: the test densities are host lambdas and their data are filled on the host. On a
// GPU build the reverse-mode gradient's device code is nvcc_device_rules' (RecordedModel in
// tests/compile/nvcc/device_kernels.cu).
#if defined(KOKKOS_ENABLE_CUDA) || defined(KOKKOS_ENABLE_HIP)
TEST(Reverse, HostOnly) { GTEST_SKIP() << "host build only; the device code is checked by nvcc_device_rules"; }
#else

namespace {

using namespace hmc;

using autodiff_test::density;

void expect_close(double got, double want, double rel, const std::string& what) {
  if (got == want) return;
  EXPECT_LE(std::fabs(got - want), rel * std::max(std::fabs(want), 1.0))
      << what << ": got " << got << ", want " << want;
}

/// The checks of one density at one point:
///   reverse mode (a tape in a scratch row) = forward mode (D passes on Duals) to 1e-10;
///   both = central finite differences (h = 1e-6) to 1e-6;
///   the lanes (Var<Pack>, the points q + 0.01 l) = the one-particle reverse gradient at
///   each lane's point, lane by lane, to 1e-13.
template <class F>
void check(const std::string& name, int d, F f, std::vector<double> q) {
  SCOPED_TRACE(name);
  auto m = density(d, f);
  m.prepare_gradient();
  m.reverse_scalar = true;
  ASSERT_TRUE(model::check_model<decltype(m)>());
  ASSERT_GT(m.scratch_size(), 0);
  std::vector<double> g_fwd(d), g_rev(d), scratch(m.scratch_size(), std::nan(""));
  const Row qr{q.data(), 1};
  const double lp = m.log_density(qr);
  ASSERT_TRUE(std::isfinite(lp));
  const double lp_fwd = m.log_density_gradient(qr, Row{g_fwd.data(), 1});
  const double lp_rev = m.log_density_gradient(qr, Row{g_rev.data(), 1}, Row{scratch.data(), 1});
  expect_close(lp_fwd, lp, 1e-15, "forward value");
  expect_close(lp_rev, lp, 1e-15, "reverse value");
  // The tape was used (a slot of the scratch row written), not the fallback.
  int written = 0;
  for (double s : scratch) written += std::isnan(s) ? 0 : 1;
  EXPECT_GT(written, 0) << "the reverse gradient did not record";
  for (int j = 0; j < d; ++j) {
    expect_close(g_rev[j], g_fwd[j], 1e-10, "reverse vs forward, coordinate " + std::to_string(j));
    std::vector<double> a = q, b = q;
    const double h = 1e-6 * std::max(1.0, std::fabs(q[j]));
    a[j] += h;
    b[j] -= h;
    const double fd = (m.log_density(Row{a.data(), 1}) - m.log_density(Row{b.data(), 1})) / (2 * h);
    expect_close(g_rev[j], fd, 1e-6, "reverse vs finite differences, coordinate " + std::to_string(j));
  }
  // Lanes.
  std::vector<Pack> qp(d), gp(d), lane_tape(m.lane_scratch_size());
  for (int j = 0; j < d; ++j) {
    for (int l = 0; l < kLanes; ++l) qp[j][l] = q[j] + 0.01 * l;
  }
  const Pack lpp = m.log_density_gradient_lanes(PackRow{qp.data()}, PackRow{gp.data()}, lane_tape.data());
  for (int l = 0; l < kLanes; ++l) {
    std::vector<double> ql(d), gl(d);
    for (int j = 0; j < d; ++j) ql[j] = qp[j][l];
    const double lpl = m.log_density_gradient(Row{ql.data(), 1}, Row{gl.data(), 1}, Row{scratch.data(), 1});
    expect_close(lpp[l], lpl, 1e-13, "lane value " + std::to_string(l));
    for (int j = 0; j < d; ++j) expect_close(gp[j][l], gl[j], 1e-13, "lane " + std::to_string(l));
  }
}

/// The value of x in its first lane (branching on a value, as a one-particle density may).
double first_lane(double x) { return x; }
double first_lane(const Dual& x) { return x.value; }
double first_lane(const Var<double>& x) { return x.v; }
double first_lane(const Var<Pack>& x) { return x.v[0]; }

TEST(Reverse, Arithmetic) {
  check("arithmetic", 3,
        [](auto tag, const auto& q) {
          using T = T_OF(tag);
          const T a = q(0), b = q(1), c = q(2);
          T r = a * b - c / a + 3.0 * b - c * 2.0 + 1.0 / b - (a - 0.5) + (2.0 - c) + (b + 1.0) / 4.0;
          r += a;
          r -= 0.25 * b;
          r *= c;
          r /= a;
          return T(-r + (+a) * (a * a));
        },
        {0.7, -1.3, 0.4});
}

TEST(Reverse, MathFunctions) {
  check("math", 3,
        [](auto tag, const auto& q) {
          using T = T_OF(tag);
          const T a = q(0), b = q(1), c = q(2);
          const T pos = math::exp(a);  // > 0
          return T(math::log(pos + 1.0) + math::log1p(pos) + math::expm1(b) + math::sqrt(pos) + math::sin(b) +
                   math::cos(c) + math::fabs(c) + math::pow(pos, 2.5) + math::pow(2.0, b) + math::pow(pos, b) +
                   math::log_sigmoid(c) + math::sigmoid(b) + dist::lgamma(pos + 0.5) + dist::digamma(pos + 1.0) +
                   dist::log1p_exp(b) + math::pow(c, 0.0) + dist::log_sum_exp(a, b) + dist::log_sum_exp(0.5, c));
        },
        {0.3, -0.8, 1.1});
}

TEST(Reverse, Transforms) {
  check("transforms", 2,
        [](auto tag, const auto& q) {
          using T = T_OF(tag);
          const T x = transform::interval_forward(T(q(0)), -1.0, 3.0);
          const T y = transform::positive_forward(T(q(1)));
          return T(x * y + math::log(y));
        },
        {0.4, -0.2});
}

// simplex_forward<T> and ordered_forward<T> (a templated density's simplexes and ordered
// vectors, with log|J|): on every number type, and their automatic gradient equals the hand
// chain rule of simplex_backward / ordered_backward (the shipped hmm model's).
TEST(Reverse, VectorTransforms) {
  const auto f = [](auto tag, const auto& q) {
    using T = T_OF(tag);
    transform::Local<T, 4> w;
    transform::Local<T, 3> o, p;
    T lp = transform::simplex_forward<T>(dist::slice(q, 0, 3), w, 4);
    lp += transform::ordered_forward<T>(dist::slice(q, 3, 3), o, 3);
    lp += transform::ordered_forward<T>(dist::slice(q, 6, 3), p, 3, true);
    for (int k = 0; k < 4; ++k) lp += (k + 1.5) * math::log(w(k));
    for (int k = 0; k < 3; ++k) lp += -0.5 * (o(k) - k) * (o(k) - k) - p(k) * (k + 1.0);
    return lp;
  };
  const std::vector<double> q = {0.3, -0.7, 1.2, -0.4, 0.5, -1.1, 0.2, -0.3, 0.6};
  check("vector transforms", 9, f, q);

  // The same density's gradient by the hand chain rule on doubles.
  double w[4], o[3], p[3], gw[4], go[3], gp[3];
  std::vector<double> g(9, 0.0);
  const Row qr{const_cast<double*>(q.data()), 1};
  const auto part = [&](int offset) { return Row{const_cast<double*>(q.data()) + offset, 1}; };
  double lp = transform::simplex_forward(part(0), Row{w, 1}, 4);
  lp += transform::ordered_forward(part(3), Row{o, 1}, 3);
  lp += transform::ordered_forward(part(6), Row{p, 1}, 3, true);
  for (int k = 0; k < 4; ++k) gw[k] = (k + 1.5) / w[k];
  for (int k = 0; k < 3; ++k) go[k] = -(o[k] - k), gp[k] = -(k + 1.0);
  transform::simplex_backward(part(0), Row{w, 1}, Row{gw, 1}, Row{g.data(), 1}, 4);
  transform::ordered_backward(part(3), Row{o, 1}, Row{go, 1}, Row{g.data() + 3, 1}, 3);
  transform::ordered_backward(part(6), Row{p, 1}, Row{gp, 1}, Row{g.data() + 6, 1}, 3, true);
  auto m = density(9, f);
  m.prepare_gradient();
  m.reverse_scalar = true;
  std::vector<double> g_rev(9), scratch(m.scratch_size());
  const double lp_rev = m.log_density_gradient(qr, Row{g_rev.data(), 1}, Row{scratch.data(), 1});
  EXPECT_DOUBLE_EQ(w[0] + w[1] + w[2] + w[3], 1.0);
  EXPECT_TRUE(o[0] < o[1] && o[1] < o[2] && 0.0 < p[0] && p[0] < p[1] && p[1] < p[2]);
  double want = lp;
  for (int k = 0; k < 4; ++k) want += (k + 1.5) * std::log(w[k]);
  for (int k = 0; k < 3; ++k) want += -0.5 * (o[k] - k) * (o[k] - k) - p[k] * (k + 1.0);
  expect_close(lp_rev, want, 1e-14, "value");
  for (int j = 0; j < 9; ++j) expect_close(g_rev[j], g[j], 1e-12, "hand chain rule, coordinate " + std::to_string(j));
}

TEST(Reverse, UnivariateDensities) {
  check("continuous", 4,
        [](auto tag, const auto& q) {
          using T = T_OF(tag);
          const T a = q(0), b = q(1), s = math::exp(q(2)), u = math::sigmoid(q(3));
          const T nu = 2.0 + s;
          return T(dist::normal_lpdf(a, b, s) + dist::normal_lpdf<true>(1.5, a, s) + dist::lognormal_lpdf(s, a, u) +
                   dist::student_t_lpdf(a, nu, b, s) + dist::cauchy_lpdf(b, a, s) + dist::half_cauchy_lpdf(s, u) +
                   dist::half_normal_lpdf(u, s) + dist::exponential_lpdf(s, u) + dist::gamma_lpdf(s, nu, u) +
                   dist::inv_gamma_lpdf(s, nu, u) + dist::beta_lpdf(u, nu, s) + dist::uniform_lpdf(a, -10.0, b + 20.0));
        },
        {0.3, -0.4, 0.2, 0.6});
  check("discrete", 2,
        [](auto tag, const auto& q) {
          using T = T_OF(tag);
          const T a = q(0), p = math::sigmoid(q(1)), rate = math::exp(q(0));
          return T(dist::bernoulli_lpmf(1, p) + dist::bernoulli_logit_lpmf(0, a) + dist::binomial_lpmf(3, 7, p) +
                   dist::binomial_logit_lpmf(2, 5, a) + dist::poisson_lpmf(4, rate) + dist::poisson_log_lpmf(2, a));
        },
        {0.3, -0.5});
}

TEST(Reverse, SumFormsAreOneNodeEach) {
  const VectorView ys = to_device_view<double>("ys", {0.3, -1.2, 2.5, 0.7, 1.1});
  const VectorView ks = to_device_view<double>("ks", {0, 3, 1, 5, 2});
  const VectorView ns = to_device_view<double>("ns", {4, 6, 2, 9, 3});
  const auto f = [=](auto tag, const auto& q) {
    using T = T_OF(tag);
    const T mu = q(0), s = math::exp(q(1)), p = math::sigmoid(q(2));
    return T(dist::normal_lpdf_sum(ys, mu, s) + dist::student_t_lpdf_sum(ys, s + 1.0, mu, s) +
             dist::poisson_log_lpmf_sum(ks, mu) + dist::binomial_lpmf_sum(ks, ns, p) +
             dist::normal_lpdf_sum(dist::slice(ys, 1, 3), mu, s));
  };
  check("sums", 3, f, {0.2, -0.3, 0.4});
  // Each _sum is one node: inputs 3, then exp, sigmoid, s + 1, five sums and four additions.
  auto m = density(3, f);
  m.prepare_gradient();
  EXPECT_LE(m.tape_layout.nodes, ad::TapeLayout::with_room(3 + 3 + 5 + 4, 100).nodes);
}

TEST(Reverse, GeneralisedLinearModels) {
  const int n = 40, p = 3;
  MatrixView x("x", n, p);
  VectorView y("y", n), yb("yb", n), yc("yc", n);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < p; ++j) x(i, j) = std::sin(1.0 + i * 0.7 + j * 1.3);
    y(i) = std::cos(0.3 * i);
    yb(i) = i % 3 == 0 ? 1.0 : 0.0;
    yc(i) = (i * 7) % 5;
  }
  const auto f = [=](auto tag, const auto& q) {
    using T = T_OF(tag);
    const auto beta = dist::slice(q, 1);
    const T alpha = q(0), sigma = math::exp(q(4));
    const auto row0 = [=](int j) { return x(0, j); };
    return T(dist::normal_id_glm_lpdf(y, x, alpha, beta, sigma) + dist::bernoulli_logit_glm_lpmf(yb, x, alpha, beta) +
             dist::poisson_log_glm_lpmf(yc, x, T(0.5 * alpha), beta) + dist::dot(row0, beta, p) +
             dist::normal_id_glm_lpdf<true>(y, x, 0.1, beta, 1.5));
  };
  check("glm", 5, f, {0.2, -0.3, 0.4, 0.1, -0.2});
  // The GLMs against the sums they stand for (T = double).
  std::vector<double> q = {0.2, -0.3, 0.4, 0.1, -0.2};
  double want = 0.0;
  for (int i = 0; i < n; ++i) {
    double eta = q[0];
    for (int j = 0; j < p; ++j) eta += x(i, j) * q[1 + j];
    want += dist::normal_lpdf(y(i), eta, std::exp(q[4]));
  }
  const Row qr{q.data(), 1};
  expect_close(dist::normal_id_glm_lpdf(y, x, q[0], dist::slice(qr, 1), std::exp(q[4])), want, 1e-13, "normal_id_glm");
}

TEST(Reverse, MultivariateDensities) {
  check("multivariate", 9,
        [](auto tag, const auto& q) {
          using T = T_OF(tag);
          // theta: a softmax of q(0..2); alpha: exp(q(3..5)); a 2-D normal with its own mean and factor.
          const T e0 = math::exp(q(0)), e1 = math::exp(q(1)), e2 = math::exp(q(2));
          const T total = e0 + e1 + e2;
          const T theta[3] = {e0 / total, e1 / total, e2 / total};
          const T alpha[3] = {math::exp(q(3)), math::exp(q(4)), math::exp(q(5))};
          const auto th = [&](int i) { return theta[i]; };
          const auto al = [&](int i) { return alpha[i]; };
          const T y[2] = {q(6), q(7)};
          const T mu[2] = {T(0.3) * q(0), q(1)};
          const T l00 = math::exp(q(8)), l10 = q(3), l11 = math::exp(q(2));
          const auto yy = [&](int i) { return y[i]; };
          const auto mm = [&](int i) { return mu[i]; };
          const auto chol = [&](int i, int j) { return i == 0 ? l00 : (j == 0 ? l10 : l11); };
          return T(dist::categorical_lpmf(1, th, 3) + dist::dirichlet_lpdf(th, al, 3) +
                   dist::multi_normal_cholesky_lpdf(yy, mm, chol, 2));
        },
        {0.2, -0.3, 0.4, 0.1, -0.2, 0.5, 1.1, -0.7, 0.3});
}

TEST(Reverse, TapeWithoutRoomFallsBackToForwardMode) {
  // The recording grows with |q(0)|: measured at |q(0)| <= 1, used at 30.
  const auto f = [](auto tag, const auto& q) {
    using T = T_OF(tag);
    T lp = 0.0;
    const int n = 1 + static_cast<int>(10.0 * std::fabs(first_lane(q(0))));
    for (int i = 0; i < n; ++i) lp += 0.01 * q(0) * q(1);
    return T(lp - 0.5 * q(1) * q(1));
  };
  auto m = density(2, f);
  m.prepare_gradient();
  m.reverse_scalar = true;
  std::vector<double> q = {30.0, 0.5}, g_fwd(2), g_rev(2), scratch(m.scratch_size());
  const double a = m.log_density_gradient(Row{q.data(), 1}, Row{g_fwd.data(), 1});
  const double b = m.log_density_gradient(Row{q.data(), 1}, Row{g_rev.data(), 1}, Row{scratch.data(), 1});
  EXPECT_EQ(a, b);
  EXPECT_EQ(g_fwd, g_rev);
  std::vector<Pack> qp(2, Pack(0.0)), gp(2), lanes(m.lane_scratch_size());
  qp[0] = Pack(30.0);
  qp[1] = Pack(0.5);
  const Pack lp = m.log_density_gradient_lanes(PackRow{qp.data()}, PackRow{gp.data()}, lanes.data());
  for (int l = 0; l < kLanes; ++l) {
    EXPECT_EQ(lp[l], a);
    EXPECT_EQ(gp[0][l], g_fwd[0]);
  }
}

TEST(Reverse, ModeFollowsDimensionAndEnvironment) {
  const auto f = [](auto tag, const auto& q) {
    using T = T_OF(tag);
    return T(-0.5 * q(0) * q(0));
  };
  auto small = density(1, f);
  small.prepare_gradient();
  EXPECT_FALSE(small.reverse_scalar);  // D <= kForwardMaxDim
  EXPECT_EQ(small.scratch_size(), 0);
  auto large = density(model::kForwardMaxDim + 1, f);
  large.prepare_gradient();
  EXPECT_TRUE(large.reverse_scalar);
  EXPECT_GT(large.scratch_size(), 0);
  setenv("HMC_AUTODIFF", "forward", 1);
  large.prepare_gradient();
  EXPECT_FALSE(large.reverse_scalar);
  setenv("HMC_AUTODIFF", "reverse", 1);
  small.prepare_gradient();
  EXPECT_TRUE(small.reverse_scalar);
  unsetenv("HMC_AUTODIFF");
}

}  // namespace

#endif  // host only
