// hmc_dist_points: the log densities of hmc/distributions and their gradients (T = double) at fixed
// points, one JSON object a line, for tests/python/check_dist.py to compare with SciPy:
//   {"dist": NAME, "args": [...], "value": v, "propto": v', "grad": [...]}
// args are the density's arguments in order (a vector or matrix argument as a nested list,
// a matrix row by row); grad has one partial per real-valued scalar, in the order of args
// (vectors element by element, the Cholesky factor's lower triangle row by row).

#include "hmc/distributions/dist.hpp"

#include <cstdio>
#include <string>
#include <vector>

namespace dist = hmc::dist;

namespace {

std::string num(double x) {
  if (x != x) return "NaN";
  if (x == HUGE_VAL) return "Infinity";
  if (x == -HUGE_VAL) return "-Infinity";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}
std::string list(const std::vector<double>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + num(v[i]);
  return s + "]";
}
void emit(const char* name, const std::string& args, double value, double propto, const std::vector<double>& grad) {
  std::printf("{\"dist\": \"%s\", \"args\": %s, \"value\": %s, \"propto\": %s, \"grad\": %s}\n", name, args.c_str(),
              num(value).c_str(), num(propto).c_str(), list(grad).c_str());
}

template <int N, class G, class GP>
void emit_scalar(const char* name, const std::vector<double>& args, const G& g, const GP& gp) {
  std::vector<double> d(g.d, g.d + N);
  emit(name, list(args), g.value, gp.value, d);
}

#define POINT2(NAME, A, B)                                                    \
  emit_scalar<2>(#NAME, {A, B}, dist::NAME##_lpdf_grad(double(A), double(B)), \
                 dist::NAME##_lpdf_grad<true>(double(A), double(B)))
#define POINT3(NAME, A, B, C)                                                               \
  emit_scalar<3>(#NAME, {A, B, C}, dist::NAME##_lpdf_grad(double(A), double(B), double(C)), \
                 dist::NAME##_lpdf_grad<true>(double(A), double(B), double(C)))
#define POINT4(NAME, A, B, C, D)                                                                          \
  emit_scalar<4>(#NAME, {A, B, C, D}, dist::NAME##_lpdf_grad(double(A), double(B), double(C), double(D)), \
                 dist::NAME##_lpdf_grad<true>(double(A), double(B), double(C), double(D)))
#define POINTK(NAME, K, A)                                                    \
  emit_scalar<1>(#NAME, {double(K), A}, dist::NAME##_lpmf_grad(K, double(A)), \
                 dist::NAME##_lpmf_grad<true>(K, double(A)))
#define POINTKN(NAME, K, N, A)                                                              \
  emit_scalar<1>(#NAME, {double(K), double(N), A}, dist::NAME##_lpmf_grad(K, N, double(A)), \
                 dist::NAME##_lpmf_grad<true>(K, N, double(A)))

// Accessors over host arrays, callable from the device-capable hmc::dist templates (a CUDA
// build's compiler would otherwise warn that they call host functions).
struct Vec {
  const double* v;
  KOKKOS_INLINE_FUNCTION double operator()(int i) const { return v[i]; }
};
struct Out {
  double* v;
  KOKKOS_INLINE_FUNCTION double& operator()(int i) const { return v[i]; }
};
struct Mat {
  const double* v;
  int k;
  KOKKOS_INLINE_FUNCTION double operator()(int i, int j) const { return v[i * k + j]; }
};
struct MatOut {
  double* v;
  int k;
  KOKKOS_INLINE_FUNCTION double& operator()(int i, int j) const { return v[i * k + j]; }
};

std::string matrix(const std::vector<double>& m, int k) {
  std::string s = "[";
  for (int i = 0; i < k; ++i) {
    s += (i ? ", " : "") + list(std::vector<double>(m.begin() + i * k, m.begin() + (i + 1) * k));
  }
  return s + "]";
}

void categorical(int k, const std::vector<double>& theta) {
  const int K = static_cast<int>(theta.size());
  std::vector<double> d(K, 0.0);
  const double v = dist::categorical_lpmf_grad(k, Vec{theta.data()}, K, Out{d.data()});
  const double vp = dist::categorical_lpmf<true>(k, Vec{theta.data()}, K);
  emit("categorical", "[" + num(k) + ", " + list(theta) + "]", v, vp, d);
}

void dirichlet(const std::vector<double>& theta, const std::vector<double>& alpha) {
  const int K = static_cast<int>(theta.size());
  std::vector<double> dt(K, 0.0), da(K, 0.0);
  const double v = dist::dirichlet_lpdf_grad(Vec{theta.data()}, Vec{alpha.data()}, K, Out{dt.data()}, Out{da.data()});
  const double vp = dist::dirichlet_lpdf<true>(Vec{theta.data()}, Vec{alpha.data()}, K);
  dt.insert(dt.end(), da.begin(), da.end());
  emit("dirichlet", "[" + list(theta) + ", " + list(alpha) + "]", v, vp, dt);
}

void multi_normal(const std::vector<double>& y, const std::vector<double>& mu, const std::vector<double>& L) {
  const int K = static_cast<int>(y.size());
  std::vector<double> dy(K, 0.0), dm(K, 0.0), dl(K * K, 0.0);
  const double v = dist::multi_normal_cholesky_lpdf_grad(Vec{y.data()}, Vec{mu.data()}, Mat{L.data(), K}, K,
                                                         Out{dy.data()}, Out{dm.data()}, MatOut{dl.data(), K});
  const double vp = dist::multi_normal_cholesky_lpdf<true>(Vec{y.data()}, Vec{mu.data()}, Mat{L.data(), K}, K);
  std::vector<double> g = dy;
  g.insert(g.end(), dm.begin(), dm.end());
  for (int i = 0; i < K; ++i)
    for (int j = 0; j <= i; ++j) g.push_back(dl[i * K + j]);
  emit("multi_normal_cholesky", "[" + list(y) + ", " + list(mu) + ", " + matrix(L, K) + "]", v, vp, g);
}

}  // namespace

int main() {
  // normal(x | mu, sigma)
  POINT3(normal, 0.0, 0.0, 1.0);
  POINT3(normal, 1.3, -0.4, 0.7);
  POINT3(normal, -2.5, 1.0, 3.0);
  POINT3(normal, 10.0, 0.0, 1.0);
  POINT3(normal, 1e-8, 2e-8, 1e-6);
  POINT3(normal, 1e5, -1e5, 1e4);
  POINT3(normal, 0.3, 0.3, 50.0);
  POINT3(normal, -37.0, 0.0, 1.0);
  POINT3(normal, 0.5, 0.25, 1e-3);
  POINT3(normal, 4.0, 2.0, 0.5);
  POINT3(normal, 0.0, 0.0, -1.0);
  // lognormal(x | mu, sigma)
  POINT3(lognormal, 1.0, 0.0, 1.0);
  POINT3(lognormal, 2.5, 0.3, 0.8);
  POINT3(lognormal, 0.01, -1.0, 2.0);
  POINT3(lognormal, 1e-6, 0.0, 1.0);
  POINT3(lognormal, 1e6, 10.0, 3.0);
  POINT3(lognormal, 3.7, 1.3, 0.05);
  POINT3(lognormal, 0.5, -2.0, 10.0);
  POINT3(lognormal, 12.0, 2.0, 0.4);
  POINT3(lognormal, 0.9, 0.1, 0.3);
  POINT3(lognormal, 150.0, 5.0, 0.2);
  POINT3(lognormal, -1.0, 0.0, 1.0);
  // student_t(x | nu, mu, sigma)
  POINT4(student_t, 0.0, 1.0, 0.0, 1.0);
  POINT4(student_t, 1.5, 3.0, 0.2, 1.3);
  POINT4(student_t, -4.0, 0.5, 1.0, 2.0);
  POINT4(student_t, 30.0, 2.0, 0.0, 1.0);
  POINT4(student_t, 0.7, 30.0, 0.5, 0.1);
  POINT4(student_t, 2.0, 100.0, -1.0, 4.0);
  POINT4(student_t, -0.3, 7.5, 0.0, 0.01);
  POINT4(student_t, 1e3, 1.0, 0.0, 1.0);
  POINT4(student_t, 5.0, 0.1, 0.0, 1.0);
  POINT4(student_t, 0.25, 4.0, 0.75, 0.6);
  POINT4(student_t, 1.0, 1.0, 0.0, 0.0);
  // cauchy(x | mu, sigma)
  POINT3(cauchy, 0.0, 0.0, 1.0);
  POINT3(cauchy, 2.0, -1.0, 0.5);
  POINT3(cauchy, -100.0, 0.0, 2.0);
  POINT3(cauchy, 1e6, 0.0, 1.0);
  POINT3(cauchy, 0.3, 0.2, 1e-3);
  POINT3(cauchy, 5.5, 5.0, 10.0);
  POINT3(cauchy, -2.0, 3.0, 0.7);
  POINT3(cauchy, 0.01, 0.0, 100.0);
  POINT3(cauchy, 1.0, 1.0, 3.0);
  POINT3(cauchy, -0.5, 0.5, 0.25);
  POINT3(cauchy, 0.0, 0.0, 0.0);
  // half_cauchy(x | sigma)
  POINT2(half_cauchy, 0.0, 1.0);
  POINT2(half_cauchy, 1.0, 1.0);
  POINT2(half_cauchy, 2.5, 0.5);
  POINT2(half_cauchy, 1e-5, 3.0);
  POINT2(half_cauchy, 1e5, 2.0);
  POINT2(half_cauchy, 0.3, 1e-3);
  POINT2(half_cauchy, 7.0, 25.0);
  POINT2(half_cauchy, 0.8, 0.9);
  POINT2(half_cauchy, 4.0, 1.5);
  POINT2(half_cauchy, 12.0, 0.1);
  POINT2(half_cauchy, -1.0, 1.0);
  // half_normal(x | sigma)
  POINT2(half_normal, 0.0, 1.0);
  POINT2(half_normal, 1.0, 1.0);
  POINT2(half_normal, 2.5, 0.5);
  POINT2(half_normal, 1e-5, 3.0);
  POINT2(half_normal, 20.0, 2.0);
  POINT2(half_normal, 0.3, 1e-2);
  POINT2(half_normal, 7.0, 25.0);
  POINT2(half_normal, 0.8, 0.9);
  POINT2(half_normal, 4.0, 1.5);
  POINT2(half_normal, 1e3, 100.0);
  POINT2(half_normal, -1.0, 1.0);
  // exponential(x | lambda)
  POINT2(exponential, 0.0, 1.0);
  POINT2(exponential, 1.0, 1.0);
  POINT2(exponential, 2.5, 0.5);
  POINT2(exponential, 1e-5, 3.0);
  POINT2(exponential, 20.0, 2.0);
  POINT2(exponential, 0.3, 1e-3);
  POINT2(exponential, 7.0, 25.0);
  POINT2(exponential, 0.8, 0.9);
  POINT2(exponential, 1e4, 1e-2);
  POINT2(exponential, 3.0, 1e2);
  POINT2(exponential, -1.0, 1.0);
  // gamma(x | alpha, beta)
  POINT3(gamma, 1.0, 1.0, 1.0);
  POINT3(gamma, 2.5, 2.0, 0.5);
  POINT3(gamma, 0.1, 0.5, 3.0);
  POINT3(gamma, 1e-4, 0.3, 1.0);
  POINT3(gamma, 50.0, 40.0, 0.9);
  POINT3(gamma, 3.0, 1.4616321449683622, 2.0);
  POINT3(gamma, 0.7, 8.0, 12.0);
  POINT3(gamma, 1e3, 2.0, 1e-3);
  POINT3(gamma, 4.2, 0.01, 0.1);
  POINT3(gamma, 6.0, 150.0, 25.0);
  POINT3(gamma, -1.0, 2.0, 1.0);
  // inv_gamma(x | alpha, beta)
  POINT3(inv_gamma, 1.0, 1.0, 1.0);
  POINT3(inv_gamma, 2.5, 2.0, 0.5);
  POINT3(inv_gamma, 0.1, 0.5, 3.0);
  POINT3(inv_gamma, 1e-2, 3.0, 0.05);
  POINT3(inv_gamma, 50.0, 4.0, 90.0);
  POINT3(inv_gamma, 3.0, 1.4616321449683622, 2.0);
  POINT3(inv_gamma, 0.7, 8.0, 12.0);
  POINT3(inv_gamma, 1e3, 2.0, 1e-3);
  POINT3(inv_gamma, 4.2, 0.01, 0.1);
  POINT3(inv_gamma, 0.2, 150.0, 25.0);
  POINT3(inv_gamma, 0.0, 2.0, 1.0);
  // beta(x | a, b)
  POINT3(beta, 0.5, 1.0, 1.0);
  POINT3(beta, 0.3, 2.0, 5.0);
  POINT3(beta, 0.9, 0.5, 0.5);
  POINT3(beta, 1e-4, 0.3, 2.0);
  POINT3(beta, 0.9999, 4.0, 0.7);
  POINT3(beta, 0.42, 60.0, 80.0);
  POINT3(beta, 0.05, 1.4616321449683622, 3.0);
  POINT3(beta, 0.7, 0.01, 0.02);
  POINT3(beta, 0.61, 12.5, 7.25);
  POINT3(beta, 0.2, 3.0, 1.0);
  POINT3(beta, 1.0, 2.0, 2.0);
  // uniform(x | lo, hi)
  POINT3(uniform, 0.5, 0.0, 1.0);
  POINT3(uniform, -1.0, -2.0, 3.0);
  POINT3(uniform, 2.0, 2.0, 2.5);
  POINT3(uniform, 1e-6, 0.0, 1e-5);
  POINT3(uniform, 1e4, -1e5, 1e5);
  POINT3(uniform, 3.3, 1.1, 7.7);
  POINT3(uniform, 0.1, 0.0, 0.2);
  POINT3(uniform, -0.5, -1.0, 0.0);
  POINT3(uniform, 42.0, 40.0, 50.0);
  POINT3(uniform, 0.0, -1e-3, 1e-3);
  POINT3(uniform, 1.5, 0.0, 1.0);
  // bernoulli(k | theta)
  POINTK(bernoulli, 1, 0.3);
  POINTK(bernoulli, 0, 0.3);
  POINTK(bernoulli, 1, 1e-6);
  POINTK(bernoulli, 0, 1e-6);
  POINTK(bernoulli, 1, 0.999999);
  POINTK(bernoulli, 0, 0.999999);
  POINTK(bernoulli, 1, 0.5);
  POINTK(bernoulli, 0, 0.77);
  POINTK(bernoulli, 1, 0.05);
  POINTK(bernoulli, 0, 0.123);
  POINTK(bernoulli, 2, 0.5);
  // bernoulli_logit(k | alpha)
  POINTK(bernoulli_logit, 1, 0.0);
  POINTK(bernoulli_logit, 0, 0.0);
  POINTK(bernoulli_logit, 1, 2.5);
  POINTK(bernoulli_logit, 0, 2.5);
  POINTK(bernoulli_logit, 1, -3.0);
  POINTK(bernoulli_logit, 0, -3.0);
  POINTK(bernoulli_logit, 1, 40.0);
  POINTK(bernoulli_logit, 0, 40.0);
  POINTK(bernoulli_logit, 1, -40.0);
  POINTK(bernoulli_logit, 0, 1e-3);
  POINTK(bernoulli_logit, -1, 0.0);
  // binomial(k | n, theta)
  POINTKN(binomial, 3, 10, 0.3);
  POINTKN(binomial, 0, 10, 0.3);
  POINTKN(binomial, 10, 10, 0.3);
  POINTKN(binomial, 0, 5, 0.0);
  POINTKN(binomial, 7, 7, 1.0);
  POINTKN(binomial, 50, 100, 0.5);
  POINTKN(binomial, 1, 1000, 1e-4);
  POINTKN(binomial, 999, 1000, 0.99);
  POINTKN(binomial, 4, 12, 0.9);
  POINTKN(binomial, 25, 60, 0.37);
  POINTKN(binomial, 11, 10, 0.5);
  // binomial_logit(k | n, alpha)
  POINTKN(binomial_logit, 3, 10, 0.0);
  POINTKN(binomial_logit, 0, 10, -1.0);
  POINTKN(binomial_logit, 10, 10, 2.0);
  POINTKN(binomial_logit, 50, 100, 0.1);
  POINTKN(binomial_logit, 1, 1000, -9.0);
  POINTKN(binomial_logit, 999, 1000, 4.6);
  POINTKN(binomial_logit, 4, 12, 30.0);
  POINTKN(binomial_logit, 8, 12, -30.0);
  POINTKN(binomial_logit, 25, 60, -0.5);
  POINTKN(binomial_logit, 2, 3, 1e-4);
  POINTKN(binomial_logit, -1, 3, 0.0);
  // poisson(k | lambda)
  POINTK(poisson, 0, 1.0);
  POINTK(poisson, 3, 2.5);
  POINTK(poisson, 0, 0.0);
  POINTK(poisson, 10, 1e-3);
  POINTK(poisson, 1000, 990.0);
  POINTK(poisson, 1, 1e5);
  POINTK(poisson, 17, 17.0);
  POINTK(poisson, 5, 0.2);
  POINTK(poisson, 3000, 2950.0);
  POINTK(poisson, 2, 7.3);
  POINTK(poisson, 3, 0.0);
  // poisson_log(k | alpha)
  POINTK(poisson_log, 0, 0.0);
  POINTK(poisson_log, 3, 0.9);
  POINTK(poisson_log, 0, -20.0);
  POINTK(poisson_log, 10, -3.0);
  POINTK(poisson_log, 1000, 6.9);
  POINTK(poisson_log, 1, 11.5);
  POINTK(poisson_log, 17, 2.833);
  POINTK(poisson_log, 5, -1.6);
  POINTK(poisson_log, 150, 5.0);
  POINTK(poisson_log, 2, 2.0);
  POINTK(poisson_log, -1, 0.0);
  // categorical(k | theta), k from 0
  categorical(0, {0.2, 0.3, 0.5});
  categorical(2, {0.2, 0.3, 0.5});
  categorical(1, {0.999, 1e-3});
  categorical(1, {1.0 - 1e-9, 1e-9});
  categorical(3, {0.1, 0.2, 0.3, 0.4});
  categorical(0, {1.0});
  categorical(4, {0.05, 0.05, 0.1, 0.2, 0.6});
  categorical(2, {0.25, 0.25, 0.25, 0.25});
  categorical(1, {0.7, 0.3});
  categorical(5, {0.1, 0.1, 0.1, 0.1, 0.1, 0.5});
  categorical(3, {0.2, 0.3, 0.5});
  // dirichlet(theta | alpha)
  dirichlet({0.2, 0.3, 0.5}, {1.0, 1.0, 1.0});
  dirichlet({0.2, 0.3, 0.5}, {2.0, 3.0, 4.0});
  dirichlet({0.7, 0.3}, {0.5, 0.5});
  dirichlet({0.01, 0.99}, {0.3, 5.0});
  dirichlet({0.1, 0.2, 0.3, 0.4}, {10.0, 20.0, 30.0, 40.0});
  dirichlet({0.25, 0.25, 0.25, 0.25}, {0.1, 0.2, 0.3, 0.4});
  dirichlet({0.05, 0.05, 0.1, 0.2, 0.6}, {1.5, 1.5, 2.0, 3.0, 8.0});
  dirichlet({0.5, 0.5}, {100.0, 120.0});
  dirichlet({0.333, 0.333, 0.334}, {1.4616321449683622, 2.0, 0.7});
  dirichlet({1e-4, 0.5, 0.4999}, {0.8, 1.2, 1.1});
  dirichlet({0.2, 0.3, 0.5}, {1.0, -1.0, 1.0});
  // multi_normal_cholesky(y | mu, L)
  multi_normal({0.0}, {0.0}, {1.0});
  multi_normal({1.3}, {-0.2}, {0.7});
  multi_normal({1.0, 2.0}, {0.0, 0.0}, {1.0, 0.0, 0.5, 2.0});
  multi_normal({0.3, -0.4}, {0.1, 0.2}, {0.4, 0.0, -0.3, 0.2});
  multi_normal({1.0, 2.0, 3.0}, {0.5, 1.5, 2.0}, {2.0, 0.0, 0.0, 0.6, 1.5, 0.0, -0.4, 0.3, 0.9});
  multi_normal({-1.0, 0.0, 4.0}, {0.0, 0.0, 0.0}, {1.0, 0.0, 0.0, 0.9, 0.4358898943540674, 0.0, 0.2, 0.1, 0.8});
  multi_normal({5.0, -5.0}, {0.0, 0.0}, {10.0, 0.0, 3.0, 1.0});
  multi_normal({0.01, 0.02}, {0.0, 0.0}, {0.01, 0.0, 0.005, 0.02});
  multi_normal({1.0, 1.0, 1.0, 1.0}, {0.9, 1.1, 1.0, 0.8},
               {1.0, 0.0, 0.0, 0.0, 0.5, 1.0, 0.0, 0.0, 0.25, 0.5, 1.0, 0.0, 0.125, 0.25, 0.5, 1.0});
  multi_normal({2.0, 0.0}, {0.0, 2.0}, {1.5, 0.0, -1.2, 0.3});
  multi_normal({1.0, 2.0}, {0.0, 0.0}, {1.0, 0.0, 0.5, 0.0});
  return 0;
}
