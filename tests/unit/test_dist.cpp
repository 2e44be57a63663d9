// hmc/distributions: each analytic gradient against forward-mode autodiff of its value, Pack against
// double lane by lane, propto against the documented constant, the _sum forms against sums of
// scalar forms, out-of-support values. (Values against SciPy: tests/python/check_dist.py.)

// This file calls hmc::dist from host code only, with host lambdas and std::vector-backed
// accessors, which nvcc (a CUDA build) would report as host functions called from the
// host-and-device templates they instantiate. The device rules of hmc::dist are checked by
// nvcc_device_rules (tests/compile/nvcc), so these diagnostics are silenced here alone.
#if defined(__CUDACC__)
#pragma nv_diag_suppress 20011
#pragma nv_diag_suppress 20013
#pragma nv_diag_suppress 20014
#pragma nv_diag_suppress 20015
#endif

#include "hmc/core/types.hpp"
#include "hmc/distributions/dist.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace {

using hmc::Dual;
using hmc::kLanes;
using hmc::Pack;
namespace dist = hmc::dist;

using HostVector = Kokkos::View<const double*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

const double kLog2Pi = std::log(2.0 * M_PI);
// Pack lanes against doubles: the same double code, lane by lane, but inlined elsewhere, where
// the compiler may contract a*b+c into an FMA differently: a few ulp.
constexpr double kLaneTol = 1e-15;

void expect_close(double got, double want, double rel, const std::string& what) {
  if (got == want) return;
  EXPECT_LE(std::fabs(got - want), rel * std::max(std::fabs(want), 1.0))
      << what << ": got " << got << ", want " << want;
}

template <std::size_t N, class F, std::size_t... I>
auto apply_array(const F& f, const std::array<double, N>& x, std::index_sequence<I...>) {
  return f(x[I]...);
}
template <class T, std::size_t N, class F, class Make, std::size_t... I>
auto apply_made(const F& f, const Make& make, std::index_sequence<I...>) {
  return f(make(I)...);
}

/// The checks of one univariate density at one point x (its real-valued arguments):
/// (a) the analytic gradient equals the Dual derivative of the value, per argument;
/// (b) a Pack of 8 different points equals the double results lane by lane, also with the
///     first argument a double (mixed types);
/// (c) value - propto is `dropped` (and the same at a second point x2).
template <std::size_t N, class V, class VP, class G, class GP>
void check_density(const std::string& name, const V& value, const VP& value_propto, const G& grad,
                   const GP& grad_propto, const std::array<double, N>& x, const std::array<double, N>& x2,
                   double dropped) {
  const auto seq = std::make_index_sequence<N>{};
  SCOPED_TRACE(name);
  const double v = apply_array(value, x, seq);
  ASSERT_TRUE(std::isfinite(v));
  const auto g = apply_array(grad, x, seq);
  expect_close(g.value, v, 1e-15, name + " value of _grad");
  // (a)
  for (std::size_t j = 0; j < N; ++j) {
    const Dual d = apply_made<Dual, N>(
        value, [&](std::size_t i) { return Dual(x[i], i == j ? 1.0 : 0.0); }, seq);
    expect_close(d.value, v, 1e-15, name + " Dual value");
    expect_close(g.d[j], d.tangent, 1e-12, name + " partial " + std::to_string(j));
    const auto gd = apply_made<Dual, N>(
        grad, [&](std::size_t i) { return Dual(x[i], i == j ? 1.0 : 0.0); }, seq);
    expect_close(gd.value.value, v, 1e-15, name + " _grad on Dual");
  }
  // (b): lane l at x * (1 + 0.01 l) for the parameters (the points stay inside the support)
  auto at_lane = [&](std::size_t i, int l) { return x[i] * (1.0 + 0.003 * l) + (x[i] == 0.0 ? 0.01 * l : 0.0); };
  const Pack vp = apply_made<Pack, N>(
      value,
      [&](std::size_t i) {
        Pack p;
        for (int l = 0; l < kLanes; ++l) p[l] = at_lane(i, l);
        return p;
      },
      seq);
  const auto gp = apply_made<Pack, N>(
      grad,
      [&](std::size_t i) {
        Pack p;
        for (int l = 0; l < kLanes; ++l) p[l] = at_lane(i, l);
        return p;
      },
      seq);
  for (int l = 0; l < kLanes; ++l) {
    std::array<double, N> xl;
    for (std::size_t i = 0; i < N; ++i) xl[i] = at_lane(i, l);
    const double vl = apply_array(value, xl, seq);
    const auto gl = apply_array(grad, xl, seq);
    expect_close(vp[l], vl, kLaneTol, name + " Pack lane " + std::to_string(l));
    expect_close(gp.value[l], gl.value, kLaneTol, name + " Pack _grad lane " + std::to_string(l));
    for (std::size_t j = 0; j < N; ++j) {
      expect_close(gp.d[j][l], gl.d[j], kLaneTol, name + " Pack partial " + std::to_string(j));
    }
    // mixed: the first argument a double (the same in every lane), the others Packs
    std::array<double, N> xm = xl;
    xm[0] = x[0];
    const Pack mixed = apply_made<Pack, N>(
        value,
        [&](std::size_t i) -> Pack {
          if (i == 0) return Pack(x[0]);
          Pack p;
          for (int k = 0; k < kLanes; ++k) p[k] = at_lane(i, k);
          return p;
        },
        seq);
    expect_close(mixed[l], apply_array(value, xm, seq), kLaneTol, name + " mixed lane " + std::to_string(l));
  }
  // (c)
  for (const auto& p : {x, x2}) {
    const double full = apply_array(value, p, seq), propto = apply_array(value_propto, p, seq);
    expect_close(full - propto, dropped, 1e-13 * std::max(1.0, std::fabs(full)), name + " propto");
    expect_close(apply_array(grad_propto, p, seq).value, propto, 1e-15, name + " propto _grad value");
    const auto gf = apply_array(grad, p, seq);
    const auto gpr = apply_array(grad_propto, p, seq);
    for (std::size_t j = 0; j < N; ++j) EXPECT_EQ(gf.d[j], gpr.d[j]) << name << " propto partial " << j;
  }
}

#define FN(NAME) [](auto... a) { return dist::NAME(a...); }
#define FNP(NAME) [](auto... a) { return dist::NAME<true>(a...); }
#define CHECK(NAME, X, X2, DROPPED) \
  check_density(#NAME, FN(NAME##_lpdf), FNP(NAME##_lpdf), FN(NAME##_lpdf_grad), FNP(NAME##_lpdf_grad), X, X2, DROPPED)

TEST(Dist, ContinuousGradientsPacksPropto) {
  using A2 = std::array<double, 2>;
  using A3 = std::array<double, 3>;
  using A4 = std::array<double, 4>;
  CHECK(normal, (A3{1.3, -0.4, 0.7}), (A3{-3.0, 2.0, 5.0}), -0.5 * kLog2Pi);
  CHECK(lognormal, (A3{2.5, 0.3, 0.8}), (A3{0.1, -1.0, 3.0}), -0.5 * kLog2Pi);
  CHECK(student_t, (A4{1.5, 3.0, 0.2, 1.3}), (A4{-4.0, 0.7, 1.0, 2.0}), -0.5 * std::log(M_PI));
  CHECK(cauchy, (A3{2.0, -1.0, 0.5}), (A3{-10.0, 0.0, 3.0}), -std::log(M_PI));
  CHECK(half_cauchy, (A2{2.5, 0.5}), (A2{0.1, 4.0}), std::log(2.0) - std::log(M_PI));
  CHECK(half_normal, (A2{2.5, 0.5}), (A2{0.1, 4.0}), 0.5 * std::log(2.0 / M_PI));
  CHECK(exponential, (A2{2.5, 0.5}), (A2{0.1, 4.0}), 0.0);
  CHECK(gamma, (A3{2.5, 2.0, 0.5}), (A3{0.1, 0.4, 3.0}), 0.0);
  CHECK(inv_gamma, (A3{2.5, 2.0, 0.5}), (A3{0.1, 0.4, 3.0}), 0.0);
  CHECK(beta, (A3{0.3, 2.0, 5.0}), (A3{0.8, 0.4, 0.6}), 0.0);
  CHECK(uniform, (A3{0.5, 0.0, 1.0}), (A3{-1.0, -2.0, 3.0}), 0.0);
}

TEST(Dist, DiscreteGradientsPacksPropto) {
  using A1 = std::array<double, 1>;
  for (int k : {0, 1}) {
    const std::string s = " k=" + std::to_string(k);
    check_density(
        "bernoulli" + s, [k](auto t) { return dist::bernoulli_lpmf(k, t); },
        [k](auto t) { return dist::bernoulli_lpmf<true>(k, t); },
        [k](auto t) { return dist::bernoulli_lpmf_grad(k, t); },
        [k](auto t) { return dist::bernoulli_lpmf_grad<true>(k, t); }, A1{0.3}, A1{0.9}, 0.0);
    check_density(
        "bernoulli_logit" + s, [k](auto t) { return dist::bernoulli_logit_lpmf(k, t); },
        [k](auto t) { return dist::bernoulli_logit_lpmf<true>(k, t); },
        [k](auto t) { return dist::bernoulli_logit_lpmf_grad(k, t); },
        [k](auto t) { return dist::bernoulli_logit_lpmf_grad<true>(k, t); }, A1{-1.2}, A1{25.0}, 0.0);
  }
  for (auto [k, n] : {std::pair{0, 10}, std::pair{3, 10}, std::pair{10, 10}, std::pair{40, 100}}) {
    const std::string s = " k=" + std::to_string(k) + " n=" + std::to_string(n);
    const double lchoose = std::lgamma(n + 1.0) - std::lgamma(k + 1.0) - std::lgamma(n - k + 1.0);
    check_density(
        "binomial" + s, [k = k, n = n](auto t) { return dist::binomial_lpmf(k, n, t); },
        [k = k, n = n](auto t) { return dist::binomial_lpmf<true>(k, n, t); },
        [k = k, n = n](auto t) { return dist::binomial_lpmf_grad(k, n, t); },
        [k = k, n = n](auto t) { return dist::binomial_lpmf_grad<true>(k, n, t); }, A1{0.3}, A1{0.85}, lchoose);
    check_density(
        "binomial_logit" + s, [k = k, n = n](auto t) { return dist::binomial_logit_lpmf(k, n, t); },
        [k = k, n = n](auto t) { return dist::binomial_logit_lpmf<true>(k, n, t); },
        [k = k, n = n](auto t) { return dist::binomial_logit_lpmf_grad(k, n, t); },
        [k = k, n = n](auto t) { return dist::binomial_logit_lpmf_grad<true>(k, n, t); }, A1{0.4}, A1{-3.0}, lchoose);
  }
  for (int k : {0, 1, 7, 250}) {
    const std::string s = " k=" + std::to_string(k);
    const double dropped = -std::lgamma(k + 1.0);
    check_density(
        "poisson" + s, [k](auto t) { return dist::poisson_lpmf(k, t); },
        [k](auto t) { return dist::poisson_lpmf<true>(k, t); }, [k](auto t) { return dist::poisson_lpmf_grad(k, t); },
        [k](auto t) { return dist::poisson_lpmf_grad<true>(k, t); }, A1{2.5}, A1{300.0}, dropped);
    check_density(
        "poisson_log" + s, [k](auto t) { return dist::poisson_log_lpmf(k, t); },
        [k](auto t) { return dist::poisson_log_lpmf<true>(k, t); },
        [k](auto t) { return dist::poisson_log_lpmf_grad(k, t); },
        [k](auto t) { return dist::poisson_log_lpmf_grad<true>(k, t); }, A1{0.9}, A1{-4.0}, dropped);
  }
}

TEST(Dist, SumFormsEqualSumsOfScalarForms) {
  const std::vector<double> xs_real = {0.3, 1.2, 2.5, 0.05, 4.0};
  const std::vector<double> xs_unit = {0.3, 0.12, 0.5, 0.95, 0.7};
  const std::vector<double> ks = {0, 3, 1, 7, 2};
  const std::vector<double> bits = {0, 1, 1, 0, 1};
  const std::vector<double> ns = {5, 3, 4, 9, 2};
  const HostVector xr(xs_real.data(), xs_real.size()), xu(xs_unit.data(), xs_unit.size()), kv(ks.data(), ks.size()),
      bv(bits.data(), bits.size()), nv(ns.data(), ns.size());
  const Pack mu = [] {
    Pack p;
    for (int l = 0; l < kLanes; ++l) p[l] = 0.1 * l;
    return p;
  }();
  const double a = 1.7, b = 2.3;

  auto check_sum = [&](const std::string& name, const auto& sum, const auto& sum_grad, const auto& scalar,
                       const auto& scalar_grad, int n, int first_param_slot) {
    SCOPED_TRACE(name);
    double total = 0.0;
    std::array<double, 3> d{0.0, 0.0, 0.0};
    const auto g = sum_grad();
    constexpr int np = sizeof(g.d) / sizeof(g.d[0]);
    for (int i = 0; i < n; ++i) {
      total += scalar(i);
      const auto gi = scalar_grad(i);
      for (int j = 0; j < np; ++j) d[j] += gi.d[j + first_param_slot];
    }
    expect_close(sum(), total, 1e-15, "sum");
    expect_close(g.value, total, 1e-15, "sum_grad value");
    for (int j = 0; j < np; ++j) expect_close(g.d[j], d[j], 1e-15, "sum_grad partial " + std::to_string(j));
  };
#define SUM3(NAME, XS, XV)                                                                                          \
  check_sum(                                                                                                        \
      #NAME, [&] { return dist::NAME##_lpdf_sum(XV, a, b); }, [&] { return dist::NAME##_lpdf_sum_grad(XV, a, b); }, \
      [&](int i) { return dist::NAME##_lpdf(XS[i], a, b); },                                                        \
      [&](int i) { return dist::NAME##_lpdf_grad(XS[i], a, b); }, static_cast<int>(XS.size()), 1)
#define SUM2(NAME, XS, XV)                                                                                         \
  check_sum(                                                                                                       \
      #NAME, [&] { return dist::NAME##_lpdf_sum(XV, b); }, [&] { return dist::NAME##_lpdf_sum_grad(XV, b); },      \
      [&](int i) { return dist::NAME##_lpdf(XS[i], b); }, [&](int i) { return dist::NAME##_lpdf_grad(XS[i], b); }, \
      static_cast<int>(XS.size()), 1)
#define SUMK(NAME, KS, KV, P)                                                                                 \
  check_sum(                                                                                                  \
      #NAME, [&] { return dist::NAME##_lpmf_sum(KV, P); }, [&] { return dist::NAME##_lpmf_sum_grad(KV, P); }, \
      [&](int i) { return dist::NAME##_lpmf(static_cast<int>(KS[i]), P); },                                   \
      [&](int i) { return dist::NAME##_lpmf_grad(static_cast<int>(KS[i]), P); }, static_cast<int>(KS.size()), 0)
  SUM3(normal, xs_real, xr);
  SUM3(lognormal, xs_real, xr);
  SUM3(cauchy, xs_real, xr);
  SUM3(gamma, xs_real, xr);
  SUM3(inv_gamma, xs_real, xr);
  SUM3(beta, xs_unit, xu);
  SUM2(half_cauchy, xs_real, xr);
  SUM2(half_normal, xs_real, xr);
  SUM2(exponential, xs_real, xr);
  SUMK(bernoulli, bits, bv, 0.3);
  SUMK(bernoulli_logit, bits, bv, -0.4);
  SUMK(poisson, ks, kv, 2.5);
  SUMK(poisson_log, ks, kv, 0.7);
  // uniform with a wide support; student_t (three parameters)
  check_sum(
      "uniform", [&] { return dist::uniform_lpdf_sum(xr, -1.0, 5.0); },
      [&] { return dist::uniform_lpdf_sum_grad(xr, -1.0, 5.0); },
      [&](int i) { return dist::uniform_lpdf(xs_real[i], -1.0, 5.0); },
      [&](int i) { return dist::uniform_lpdf_grad(xs_real[i], -1.0, 5.0); }, 5, 1);
  check_sum(
      "student_t", [&] { return dist::student_t_lpdf_sum(xr, 4.0, a, b); },
      [&] { return dist::student_t_lpdf_sum_grad(xr, 4.0, a, b); },
      [&](int i) { return dist::student_t_lpdf(xs_real[i], 4.0, a, b); },
      [&](int i) { return dist::student_t_lpdf_grad(xs_real[i], 4.0, a, b); }, 5, 1);
  // binomial: trials per observation (a View) and one for all (an int)
  check_sum(
      "binomial", [&] { return dist::binomial_lpmf_sum(kv, nv, 0.4); },
      [&] { return dist::binomial_lpmf_sum_grad(kv, nv, 0.4); },
      [&](int i) { return dist::binomial_lpmf(static_cast<int>(ks[i]), static_cast<int>(ns[i]), 0.4); },
      [&](int i) { return dist::binomial_lpmf_grad(static_cast<int>(ks[i]), static_cast<int>(ns[i]), 0.4); }, 5, 0);
  check_sum(
      "binomial_logit", [&] { return dist::binomial_logit_lpmf_sum(kv, 9, -0.2); },
      [&] { return dist::binomial_logit_lpmf_sum_grad(kv, 9, -0.2); },
      [&](int i) { return dist::binomial_logit_lpmf(static_cast<int>(ks[i]), 9, -0.2); },
      [&](int i) { return dist::binomial_logit_lpmf_grad(static_cast<int>(ks[i]), 9, -0.2); }, 5, 0);
  // Pack parameters: lane l of the sum is the double sum with lane l's parameter
  const Pack s = dist::normal_lpdf_sum(xr, mu, b);
  const auto sg = dist::normal_lpdf_sum_grad(xr, mu, b);
  for (int l = 0; l < kLanes; ++l) {
    expect_close(s[l], dist::normal_lpdf_sum(xr, mu[l], b), kLaneTol, "normal_lpdf_sum Pack");
    expect_close(sg.d[1][l], dist::normal_lpdf_sum_grad(xr, mu[l], b).d[1], kLaneTol, "normal_lpdf_sum_grad Pack");
  }
}

TEST(Dist, OutOfSupportIsMinusInfinity) {
  const double inf = HUGE_VAL;
  EXPECT_EQ(dist::normal_lpdf(0.0, 0.0, 0.0), -inf);
  EXPECT_EQ(dist::normal_lpdf(0.0, 0.0, -1.0), -inf);
  EXPECT_EQ(dist::lognormal_lpdf(0.0, 0.0, 1.0), -inf);
  EXPECT_EQ(dist::lognormal_lpdf(-1.0, 0.0, 1.0), -inf);
  EXPECT_EQ(dist::student_t_lpdf(0.0, -1.0, 0.0, 1.0), -inf);
  EXPECT_EQ(dist::cauchy_lpdf(0.0, 0.0, 0.0), -inf);
  EXPECT_EQ(dist::half_cauchy_lpdf(-0.1, 1.0), -inf);
  EXPECT_EQ(dist::half_normal_lpdf(-0.1, 1.0), -inf);
  EXPECT_EQ(dist::exponential_lpdf(-0.1, 1.0), -inf);
  EXPECT_EQ(dist::exponential_lpdf(1.0, 0.0), -inf);
  EXPECT_EQ(dist::gamma_lpdf(0.0, 2.0, 1.0), -inf);
  EXPECT_EQ(dist::gamma_lpdf(1.0, -2.0, 1.0), -inf);
  EXPECT_EQ(dist::inv_gamma_lpdf(-1.0, 2.0, 1.0), -inf);
  EXPECT_EQ(dist::beta_lpdf(1.0, 2.0, 2.0), -inf);
  EXPECT_EQ(dist::beta_lpdf(0.0, 2.0, 2.0), -inf);
  EXPECT_EQ(dist::beta_lpdf(0.5, 0.0, 2.0), -inf);
  EXPECT_EQ(dist::uniform_lpdf(1.5, 0.0, 1.0), -inf);
  EXPECT_EQ(dist::uniform_lpdf(0.5, 1.0, 0.0), -inf);
  EXPECT_EQ(dist::bernoulli_lpmf(2, 0.5), -inf);
  EXPECT_EQ(dist::bernoulli_lpmf(1, 1.5), -inf);
  EXPECT_EQ(dist::bernoulli_lpmf(1, 0.0), -inf);
  EXPECT_EQ(dist::bernoulli_logit_lpmf(-1, 0.0), -inf);
  EXPECT_EQ(dist::binomial_lpmf(11, 10, 0.5), -inf);
  EXPECT_EQ(dist::binomial_lpmf(3, 10, 0.0), -inf);
  EXPECT_EQ(dist::binomial_logit_lpmf(-1, 10, 0.5), -inf);
  EXPECT_EQ(dist::poisson_lpmf(-1, 1.0), -inf);
  EXPECT_EQ(dist::poisson_lpmf(3, 0.0), -inf);
  EXPECT_EQ(dist::poisson_lpmf(3, -1.0), -inf);
  EXPECT_EQ(dist::poisson_log_lpmf(-1, 0.0), -inf);
  // edges inside the support
  EXPECT_EQ(dist::binomial_lpmf(0, 10, 0.0), 0.0);
  EXPECT_EQ(dist::binomial_lpmf(10, 10, 1.0), 0.0);
  EXPECT_EQ(dist::poisson_lpmf(0, 0.0), 0.0);
  EXPECT_DOUBLE_EQ(dist::half_normal_lpdf(0.0, 1.0), 0.5 * std::log(2.0 / M_PI));
  // _grad: -infinity and zero partials; a Pack with one lane outside
  const auto g = dist::gamma_lpdf_grad(-1.0, 2.0, 1.0);
  EXPECT_EQ(g.value, -inf);
  EXPECT_EQ(g.d[0], 0.0);
  EXPECT_EQ(g.d[1], 0.0);
  Pack sigma(1.0);
  sigma[3] = -1.0;
  const Pack p = dist::normal_lpdf(0.5, 0.0, sigma);
  EXPECT_EQ(p[3], -inf);
  EXPECT_TRUE(std::isfinite(p[2]));
  const Dual dl = dist::normal_lpdf(0.5, 0.0, Dual(-1.0, 1.0));
  EXPECT_EQ(dl.value, -inf);
  // multivariate
  const std::vector<double> theta = {0.2, 0.3, 0.5}, bad_alpha = {1.0, 0.0, 1.0};
  const HostVector tv(theta.data(), 3), av(bad_alpha.data(), 3);
  EXPECT_EQ(dist::categorical_lpmf(3, tv, 3), -inf);
  EXPECT_EQ(dist::categorical_lpmf(-1, tv, 3), -inf);
  EXPECT_EQ(dist::dirichlet_lpdf(tv, av, 3), -inf);
  const std::vector<double> L = {1.0, 0.0, 0.5, 0.0};
  auto Lm = [&](int i, int j) { return L[i * 2 + j]; };
  EXPECT_EQ(dist::multi_normal_cholesky_lpdf(tv, tv, Lm, 2), -inf);
  EXPECT_TRUE(std::isnan(dist::multi_normal_cholesky_lpdf<false, 1>(tv, tv, Lm, 2)));
}

TEST(Dist, SpecialFunctions) {
  // digamma and trigamma against known values (DLMF 5.4.12-13, 5.15.2-3; others SciPy's), to 2e-15
  // relative (a few ulp: the recurrence up to 10 rounds once a step)
  expect_close(dist::digamma(1.0), -0.57721566490153286061, 2e-15, "psi(1)");
  expect_close(dist::digamma(0.5), -1.9635100260214234794, 2e-15, "psi(1/2)");
  expect_close(dist::digamma(10.0), 2.2517525890667211076, 2e-15, "psi(10)");
  expect_close(dist::digamma(1e-3), -1000.5755719318103005, 2e-15, "psi(1e-3)");
  expect_close(dist::digamma(123.456), 4.811829323828985, 2e-15, "psi(123.456)");
  expect_close(dist::digamma(-0.5), 0.036489973978576520559, 1e-15, "psi(-1/2)");
  expect_close(dist::trigamma(1.0), 1.6449340668482264365, 2e-15, "psi1(1)");
  expect_close(dist::trigamma(0.5), 4.9348022005446793094, 2e-15, "psi1(1/2)");
  expect_close(dist::trigamma(7.25), 0.1478792331589322, 2e-15, "psi1(7.25)");
  expect_close(dist::trigamma(1e3), 0.0010005001666666333, 2e-15, "psi1(1000)");
  // digamma's derivative is trigamma (central differences)
  for (double x : {0.3, 1.0, 2.7, 9.9, 10.1, 55.0}) {
    const double h = 1e-5 * x;
    expect_close((dist::digamma(x + h) - dist::digamma(x - h)) / (2 * h), dist::trigamma(x), 1e-8, "psi' = psi1");
  }
  // lgamma on Dual: its tangent is digamma
  const Dual lg = dist::lgamma(Dual(3.5, 1.0));
  expect_close(lg.value, std::lgamma(3.5), 1e-15, "lgamma(Dual)");
  expect_close(lg.tangent, dist::digamma(3.5), 1e-15, "lgamma(Dual)'");
  expect_close(dist::log1p_exp(800.0), 800.0, 1e-16, "log1p_exp(800)");
  expect_close(dist::log1p_exp(-800.0), 0.0, 1e-16, "log1p_exp(-800)");
}

TEST(Dist, MultivariateGradientsAgainstDual) {
  // categorical, dirichlet, multi_normal_cholesky: each partial added by _grad equals the Dual
  // derivative of the value; Pack lanes equal doubles.
  const std::vector<double> theta = {0.2, 0.3, 0.5}, alpha = {1.5, 0.7, 3.0};
  std::vector<double> dt(3, 0.0), da(3, 0.0);
  auto T = [&](int i) { return theta[i]; };
  auto A = [&](int i) { return alpha[i]; };
  const double v = dist::dirichlet_lpdf_grad(
      T, A, 3, [&](int i) -> double& { return dt[i]; }, [&](int i) -> double& { return da[i]; });
  expect_close(v, dist::dirichlet_lpdf(T, A, 3), 1e-15, "dirichlet value");
  for (int j = 0; j < 3; ++j) {
    const Dual dth = dist::dirichlet_lpdf([&](int i) { return Dual(theta[i], i == j); }, A, 3);
    const Dual dal = dist::dirichlet_lpdf(
        T, [&](int i) { return Dual(alpha[i], i == j); }, 3);
    expect_close(dt[j], dth.tangent, 1e-12, "dirichlet d theta");
    expect_close(da[j], dal.tangent, 1e-12, "dirichlet d alpha");
  }
  std::vector<double> dc(3, 0.0);
  const double c = dist::categorical_lpmf_grad(1, T, 3, [&](int i) -> double& { return dc[i]; });
  expect_close(c, std::log(0.3), 1e-15, "categorical");
  expect_close(dc[1], 1.0 / 0.3, 1e-15, "categorical d");
  EXPECT_EQ(dc[0], 0.0);
  EXPECT_EQ(dist::categorical_lpmf_grad(1, T, 3, dist::ignore), c);

  const int K = 3;
  const std::vector<double> y = {1.0, 2.0, 3.0}, mu = {0.5, 1.5, 2.0};
  const std::vector<double> L = {2.0, 0.0, 0.0, 0.6, 1.5, 0.0, -0.4, 0.3, 0.9};
  auto Y = [&](int i) { return y[i]; };
  auto M = [&](int i) { return mu[i]; };
  auto Lm = [&](int i, int j) { return L[i * K + j]; };
  std::vector<double> dy(K, 0.0), dm(K, 0.0), dl(K * K, 0.0);
  const double mv = dist::multi_normal_cholesky_lpdf_grad(
      Y, M, Lm, K, [&](int i) -> double& { return dy[i]; }, [&](int i) -> double& { return dm[i]; },
      [&](int i, int j) -> double& { return dl[i * K + j]; });
  expect_close(mv, dist::multi_normal_cholesky_lpdf(Y, M, Lm, K), 1e-15, "multi_normal value");
  expect_close(mv - dist::multi_normal_cholesky_lpdf<true>(Y, M, Lm, K), -0.5 * K * kLog2Pi, 1e-14,
               "multi_normal propto");
  for (int j = 0; j < K; ++j) {
    const Dual a = dist::multi_normal_cholesky_lpdf([&](int i) { return Dual(y[i], i == j); }, M, Lm, K);
    const Dual b = dist::multi_normal_cholesky_lpdf(
        Y, [&](int i) { return Dual(mu[i], i == j); }, Lm, K);
    expect_close(dy[j], a.tangent, 1e-12, "multi_normal d y");
    expect_close(dm[j], b.tangent, 1e-12, "multi_normal d mu");
    for (int k = 0; k <= j; ++k) {
      const Dual d = dist::multi_normal_cholesky_lpdf(
          Y, M, [&](int r, int s) { return Dual(L[r * K + s], r == j && s == k); }, K);
      expect_close(dl[j * K + k], d.tangent, 1e-12, "multi_normal d L");
    }
  }
  // Packs: a lane per scaled y
  Pack yp[K];
  for (int i = 0; i < K; ++i)
    for (int l = 0; l < kLanes; ++l) yp[i][l] = y[i] * (1.0 + 0.1 * l);
  Pack dyp[K] = {0.0, 0.0, 0.0};
  const Pack mp =
      dist::multi_normal_cholesky_lpdf_grad(hmc::PackRow{yp}, M, Lm, K, hmc::PackRow{dyp}, dist::ignore, dist::ignore);
  for (int l = 0; l < kLanes; ++l) {
    std::vector<double> dyl(K, 0.0);
    const double vl =
        dist::multi_normal_cholesky_lpdf_grad([&](int i) { return yp[i][l]; }, M, Lm, K,
                                              [&](int i) -> double& { return dyl[i]; }, dist::ignore, dist::ignore);
    expect_close(mp[l], vl, kLaneTol, "multi_normal Pack");
    for (int i = 0; i < K; ++i) expect_close(dyp[i][l], dyl[i], kLaneTol, "multi_normal Pack d y");
  }
  const Pack dp = dist::dirichlet_lpdf(
      T, [&](int i) { return Pack(alpha[i]); }, 3);
  for (int l = 0; l < kLanes; ++l) expect_close(dp[l], dist::dirichlet_lpdf(T, A, 3), kLaneTol, "dirichlet Pack");
}

}  // namespace

namespace {

// The example of docs/distributions.md: the autodiff form and the hand gradient agree, on
// double and on Packs.
struct DocNormalModel {
  HostVector y;
  template <class T, class Q>
  T log_density_t(const Q& q) const {
    const T mu = q(0), log_sigma = q(1);
    const T sigma = hmc::math::exp(log_sigma);
    T lp = dist::normal_lpdf<true>(mu, 0.0, 10.0) + dist::half_normal_lpdf<true>(sigma, 1.0) + log_sigma;
    lp += dist::normal_lpdf_sum<true>(y, mu, sigma);
    return lp;
  }
  template <class T, class R>
  T log_density_gradient_t(const R& q, const R& grad) const {
    const T mu = q(0), log_sigma = q(1);
    const T sigma = hmc::math::exp(log_sigma);
    const auto prior_mu = dist::normal_lpdf_grad<true>(mu, 0.0, 10.0);
    const auto prior_sigma = dist::half_normal_lpdf_grad<true>(sigma, 1.0);
    const auto lik = dist::normal_lpdf_sum_grad<true>(y, mu, sigma);
    grad(0) = prior_mu.d[0] + lik.d[0];
    grad(1) = (prior_sigma.d[0] + lik.d[1]) * sigma + 1.0;
    return prior_mu.value + prior_sigma.value + lik.value + log_sigma;
  }
};

TEST(Dist, DocExampleHandGradientEqualsAutodiff) {
  const std::vector<double> data = {0.3, -1.2, 2.5, 0.7};
  const DocNormalModel m{HostVector(data.data(), data.size())};
  double q[2] = {0.4, -0.3}, g[2];
  const hmc::Row row{q, 1}, grow{g, 1};
  const double v = m.log_density_gradient_t<double>(row, grow);
  for (int j = 0; j < 2; ++j) {
    const Dual d = m.log_density_t<Dual>([&](int i) { return Dual(q[i], i == j ? 1.0 : 0.0); });
    expect_close(d.value, v, 1e-14, "doc example value");
    expect_close(g[j], d.tangent, 1e-12, "doc example partial " + std::to_string(j));
  }
  Pack qp[2], gp[2];
  for (int l = 0; l < kLanes; ++l) {
    qp[0][l] = 0.4 + 0.1 * l;
    qp[1][l] = -0.3 + 0.05 * l;
  }
  const Pack vp = m.log_density_gradient_t<Pack>(hmc::PackRow{qp}, hmc::PackRow{gp});
  for (int l = 0; l < kLanes; ++l) {
    double ql[2] = {qp[0][l], qp[1][l]}, gl[2];
    const double vl = m.log_density_gradient_t<double>(hmc::Row{ql, 1}, hmc::Row{gl, 1});
    expect_close(vp[l], vl, kLaneTol, "doc example Pack");
    for (int j = 0; j < 2; ++j) expect_close(gp[j][l], gl[j], kLaneTol, "doc example Pack partial");
  }
}

}  // namespace
