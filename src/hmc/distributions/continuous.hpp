#pragma once
/// \file
/// \brief Continuous univariate log densities and their gradients: normal, lognormal,
/// student_t, cauchy, half_cauchy, half_normal, exponential, gamma, inv_gamma, beta, uniform.
///
/// Parameterisations are Stan's; docs/distributions.md lists each with its support and what
/// `Propto = true` drops. Outside the support (or for a parameter outside its range, e.g.
/// sigma <= 0) the value is -infinity and the partials are 0.

#include "hmc/distributions/special.hpp"
#include "hmc/distributions/value_grad.hpp"

namespace hmc::dist {

namespace impl {

template <class R, int N>
KOKKOS_INLINE_FUNCTION ValueGrad<R, N> outside() {
  ValueGrad<R, N> r;
  r.value = neg_inf();
  for (int j = 0; j < N; ++j) r.d[j] = 0.0;
  return r;
}

// ---- normal(x | mu, sigma) ---------------------------------------------------------------
// -0.5 z² - log σ - 0.5 log(2π), z = (x - mu) / σ. Propto drops -0.5 log(2π).

template <bool P, class R>
KOKKOS_INLINE_FUNCTION R normal_lpdf(const R& x, const R& mu, const R& sigma) {
  if (!(sigma > 0.0)) return neg_inf();
  const R z = (x - mu) / sigma;
  R lp = -0.5 * z * z - math::log(sigma);
  if constexpr (!P) lp -= constants::log_sqrt_two_pi;
  return lp;
}
template <bool P, class R>
KOKKOS_INLINE_FUNCTION ValueGrad<R, 3> normal_lpdf_grad(const R& x, const R& mu, const R& sigma) {
  if (!(sigma > 0.0)) return outside<R, 3>();
  const R z = (x - mu) / sigma;
  ValueGrad<R, 3> r;
  r.value = normal_lpdf<P, R>(x, mu, sigma);
  r.d[0] = -z / sigma;
  r.d[1] = z / sigma;
  r.d[2] = (z * z - 1.0) / sigma;
  return r;
}

// ---- lognormal(x | mu, sigma), x > 0 ---------------------------------------------------------
// -0.5 z² - log σ - log x - 0.5 log(2π), z = (log x - mu) / σ. Propto drops -0.5 log(2π).

template <bool P, class R>
KOKKOS_INLINE_FUNCTION R lognormal_lpdf(const R& x, const R& mu, const R& sigma) {
  if (!(sigma > 0.0) || !(x > 0.0)) return neg_inf();
  const R lx = math::log(x);
  const R z = (lx - mu) / sigma;
  R lp = -0.5 * z * z - math::log(sigma) - lx;
  if constexpr (!P) lp -= constants::log_sqrt_two_pi;
  return lp;
}
template <bool P, class R>
KOKKOS_INLINE_FUNCTION ValueGrad<R, 3> lognormal_lpdf_grad(const R& x, const R& mu, const R& sigma) {
  if (!(sigma > 0.0) || !(x > 0.0)) return outside<R, 3>();
  const R z = (math::log(x) - mu) / sigma;
  ValueGrad<R, 3> r;
  r.value = lognormal_lpdf<P, R>(x, mu, sigma);
  r.d[0] = -(z / sigma + 1.0) / x;
  r.d[1] = z / sigma;
  r.d[2] = (z * z - 1.0) / sigma;
  return r;
}

// ---- student_t(x | nu, mu, sigma) ------------------------------------------------------------
// lgamma((ν+1)/2) - lgamma(ν/2) - 0.5 log ν - log σ - (ν+1)/2 log1p(z²/ν) - 0.5 log π.
// Propto drops -0.5 log π.

template <bool P, class R>
KOKKOS_INLINE_FUNCTION R student_t_lpdf(const R& x, const R& nu, const R& mu, const R& sigma) {
  if (!(sigma > 0.0) || !(nu > 0.0)) return neg_inf();
  const R z = (x - mu) / sigma;
  R lp = dist::lgamma(0.5 * (nu + 1.0)) - dist::lgamma(0.5 * nu) - 0.5 * math::log(nu) - math::log(sigma) -
         0.5 * (nu + 1.0) * math::log1p(z * z / nu);
  if constexpr (!P) lp -= 0.5 * constants::log_pi;
  return lp;
}
template <bool P, class R>
KOKKOS_INLINE_FUNCTION ValueGrad<R, 4> student_t_lpdf_grad(const R& x, const R& nu, const R& mu, const R& sigma) {
  if (!(sigma > 0.0) || !(nu > 0.0)) return outside<R, 4>();
  const R z = (x - mu) / sigma;
  const R z2 = z * z;
  const R den = nu + z2;  // ν (1 + z²/ν)
  ValueGrad<R, 4> r;
  r.value = student_t_lpdf<P, R>(x, nu, mu, sigma);
  r.d[0] = -(nu + 1.0) * z / (sigma * den);
  r.d[1] = 0.5 * (dist::digamma(0.5 * (nu + 1.0)) - dist::digamma(0.5 * nu)) - 0.5 / nu - 0.5 * math::log1p(z2 / nu) +
           0.5 * (nu + 1.0) * z2 / (nu * den);
  r.d[2] = -r.d[0];
  r.d[3] = ((nu + 1.0) * z2 / den - 1.0) / sigma;
  return r;
}

// ---- cauchy(x | mu, sigma) ----------------------------------------------------------------------
// -log π - log σ - log1p(z²). Propto drops -log π.

template <bool P, class R>
KOKKOS_INLINE_FUNCTION R cauchy_lpdf(const R& x, const R& mu, const R& sigma) {
  if (!(sigma > 0.0)) return neg_inf();
  const R z = (x - mu) / sigma;
  R lp = -math::log(sigma) - math::log1p(z * z);
  if constexpr (!P) lp -= constants::log_pi;
  return lp;
}
template <bool P, class R>
KOKKOS_INLINE_FUNCTION ValueGrad<R, 3> cauchy_lpdf_grad(const R& x, const R& mu, const R& sigma) {
  if (!(sigma > 0.0)) return outside<R, 3>();
  const R z = (x - mu) / sigma;
  const R q = 1.0 + z * z;
  ValueGrad<R, 3> r;
  r.value = cauchy_lpdf<P, R>(x, mu, sigma);
  r.d[0] = -2.0 * z / (sigma * q);
  r.d[1] = -r.d[0];
  r.d[2] = (2.0 * z * z / q - 1.0) / sigma;
  return r;
}

// ---- half_cauchy(x | sigma), x >= 0 ---------------------------------------------------------
// log 2 - log π - log σ - log1p((x/σ)²). Propto drops log 2 - log π.

template <bool P, class R>
KOKKOS_INLINE_FUNCTION R half_cauchy_lpdf(const R& x, const R& sigma) {
  if (!(sigma > 0.0) || !(x >= 0.0)) return neg_inf();
  const R z = x / sigma;
  R lp = -math::log(sigma) - math::log1p(z * z);
  if constexpr (!P) lp += constants::log_two - constants::log_pi;
  return lp;
}
template <bool P, class R>
KOKKOS_INLINE_FUNCTION ValueGrad<R, 2> half_cauchy_lpdf_grad(const R& x, const R& sigma) {
  if (!(sigma > 0.0) || !(x >= 0.0)) return outside<R, 2>();
  const R z = x / sigma;
  const R q = 1.0 + z * z;
  ValueGrad<R, 2> r;
  r.value = half_cauchy_lpdf<P, R>(x, sigma);
  r.d[0] = -2.0 * z / (sigma * q);
  r.d[1] = (2.0 * z * z / q - 1.0) / sigma;
  return r;
}

// ---- half_normal(x | sigma), x >= 0 ---------------------------------------------------------
// 0.5 log(2/π) - log σ - 0.5 (x/σ)². Propto drops 0.5 log(2/π).

template <bool P, class R>
KOKKOS_INLINE_FUNCTION R half_normal_lpdf(const R& x, const R& sigma) {
  if (!(sigma > 0.0) || !(x >= 0.0)) return neg_inf();
  const R z = x / sigma;
  R lp = -0.5 * z * z - math::log(sigma);
  if constexpr (!P) lp += constants::log_sqrt_two_over_pi;
  return lp;
}
template <bool P, class R>
KOKKOS_INLINE_FUNCTION ValueGrad<R, 2> half_normal_lpdf_grad(const R& x, const R& sigma) {
  if (!(sigma > 0.0) || !(x >= 0.0)) return outside<R, 2>();
  const R z = x / sigma;
  ValueGrad<R, 2> r;
  r.value = half_normal_lpdf<P, R>(x, sigma);
  r.d[0] = -z / sigma;
  r.d[1] = (z * z - 1.0) / sigma;
  return r;
}

// ---- exponential(x | lambda), x >= 0, lambda the rate ------------------------------------------
// log λ - λ x. Propto drops nothing.

template <bool P, class R>
KOKKOS_INLINE_FUNCTION R exponential_lpdf(const R& x, const R& lambda) {
  if (!(lambda > 0.0) || !(x >= 0.0)) return neg_inf();
  return math::log(lambda) - lambda * x;
}
template <bool P, class R>
KOKKOS_INLINE_FUNCTION ValueGrad<R, 2> exponential_lpdf_grad(const R& x, const R& lambda) {
  if (!(lambda > 0.0) || !(x >= 0.0)) return outside<R, 2>();
  ValueGrad<R, 2> r;
  r.value = exponential_lpdf<P, R>(x, lambda);
  r.d[0] = -lambda;
  r.d[1] = 1.0 / lambda - x;
  return r;
}

// ---- gamma(x | alpha, beta), x > 0, alpha the shape, beta the rate ------------------------------
// α log β - lgamma(α) + (α - 1) log x - β x. Propto drops nothing.

template <bool P, class R>
KOKKOS_INLINE_FUNCTION R gamma_lpdf(const R& x, const R& alpha, const R& beta) {
  if (!(alpha > 0.0) || !(beta > 0.0) || !(x > 0.0)) return neg_inf();
  return alpha * math::log(beta) - dist::lgamma(alpha) + (alpha - 1.0) * math::log(x) - beta * x;
}
template <bool P, class R>
KOKKOS_INLINE_FUNCTION ValueGrad<R, 3> gamma_lpdf_grad(const R& x, const R& alpha, const R& beta) {
  if (!(alpha > 0.0) || !(beta > 0.0) || !(x > 0.0)) return outside<R, 3>();
  ValueGrad<R, 3> r;
  r.value = gamma_lpdf<P, R>(x, alpha, beta);
  r.d[0] = (alpha - 1.0) / x - beta;
  r.d[1] = math::log(beta) - dist::digamma(alpha) + math::log(x);
  r.d[2] = alpha / beta - x;
  return r;
}

// ---- inv_gamma(x | alpha, beta), x > 0, alpha the shape, beta the scale ------------------------
// α log β - lgamma(α) - (α + 1) log x - β / x. Propto drops nothing.

template <bool P, class R>
KOKKOS_INLINE_FUNCTION R inv_gamma_lpdf(const R& x, const R& alpha, const R& beta) {
  if (!(alpha > 0.0) || !(beta > 0.0) || !(x > 0.0)) return neg_inf();
  return alpha * math::log(beta) - dist::lgamma(alpha) - (alpha + 1.0) * math::log(x) - beta / x;
}
template <bool P, class R>
KOKKOS_INLINE_FUNCTION ValueGrad<R, 3> inv_gamma_lpdf_grad(const R& x, const R& alpha, const R& beta) {
  if (!(alpha > 0.0) || !(beta > 0.0) || !(x > 0.0)) return outside<R, 3>();
  ValueGrad<R, 3> r;
  r.value = inv_gamma_lpdf<P, R>(x, alpha, beta);
  r.d[0] = (beta / x - (alpha + 1.0)) / x;
  r.d[1] = math::log(beta) - dist::digamma(alpha) - math::log(x);
  r.d[2] = alpha / beta - 1.0 / x;
  return r;
}

// ---- beta(x | a, b), 0 < x < 1 -------------------------------------------------------------
// lgamma(a + b) - lgamma(a) - lgamma(b) + (a - 1) log x + (b - 1) log1p(-x). Propto drops nothing.

template <bool P, class R>
KOKKOS_INLINE_FUNCTION R beta_lpdf(const R& x, const R& a, const R& b) {
  if (!(a > 0.0) || !(b > 0.0) || !(x > 0.0) || !(x < 1.0)) return neg_inf();
  return dist::lgamma(a + b) - dist::lgamma(a) - dist::lgamma(b) + (a - 1.0) * math::log(x) +
         (b - 1.0) * math::log1p(-x);
}
template <bool P, class R>
KOKKOS_INLINE_FUNCTION ValueGrad<R, 3> beta_lpdf_grad(const R& x, const R& a, const R& b) {
  if (!(a > 0.0) || !(b > 0.0) || !(x > 0.0) || !(x < 1.0)) return outside<R, 3>();
  const R psi_ab = dist::digamma(a + b);
  ValueGrad<R, 3> r;
  r.value = beta_lpdf<P, R>(x, a, b);
  r.d[0] = (a - 1.0) / x - (b - 1.0) / (1.0 - x);
  r.d[1] = psi_ab - dist::digamma(a) + math::log(x);
  r.d[2] = psi_ab - dist::digamma(b) + math::log1p(-x);
  return r;
}

// ---- uniform(x | lo, hi), lo <= x <= hi ------------------------------------------------------
// -log(hi - lo). Propto drops nothing. ∂x = 0.

template <bool P, class R>
KOKKOS_INLINE_FUNCTION R uniform_lpdf(const R& x, const R& lo, const R& hi) {
  if (!(hi > lo) || !(x >= lo) || !(x <= hi)) return neg_inf();
  return -math::log(hi - lo);
}
template <bool P, class R>
KOKKOS_INLINE_FUNCTION ValueGrad<R, 3> uniform_lpdf_grad(const R& x, const R& lo, const R& hi) {
  if (!(hi > lo) || !(x >= lo) || !(x <= hi)) return outside<R, 3>();
  ValueGrad<R, 3> r;
  r.value = uniform_lpdf<P, R>(x, lo, hi);
  r.d[0] = 0.0;
  r.d[1] = 1.0 / (hi - lo);
  r.d[2] = -r.d[1];
  return r;
}

}  // namespace impl

// normal: its _sum forms are written out, one pass of three operations per datum (no
// logarithm per datum), vectorised on Packs.
HMC_DIST_IMPL_FN(normal_lpdf)

template <bool Propto = false, class X, class M, class Sg>
KOKKOS_INLINE_FUNCTION promote_t<X, M, Sg> normal_lpdf(const X& x, const M& mu, const Sg& sigma) {
  return detail::call_value<impl::normal_lpdf_fn, Propto>(x, mu, sigma);
}
template <bool Propto = false, class X, class M, class Sg>
KOKKOS_INLINE_FUNCTION ValueGrad<promote_t<X, M, Sg>, 3> normal_lpdf_grad(const X& x, const M& mu, const Sg& sigma) {
  return detail::call_grad<impl::normal_lpdf_fn, Propto>(x, mu, sigma);
}
/// Σ_i normal(xs(i) | mu, sigma) and its partials in mu and sigma: with z_i = (x_i - mu) / σ,
/// -½ Σ z² - n log σ (- n ½ log 2π), ∂mu = Σ z / σ, ∂σ = (Σ z² - n) / σ.
template <bool Propto = false, class Xs, class M, class Sg>
KOKKOS_INLINE_FUNCTION ValueGrad<promote_t<M, Sg>, 2> normal_lpdf_sum_grad(const Xs& xs, const M& mu, const Sg& sigma) {
  using R = promote_t<M, Sg>;
  if constexpr (is_var_v<R>) {
    const auto g = normal_lpdf_sum_grad<Propto>(xs, detail::value_arg(mu), detail::value_arg(sigma));
    ValueGrad<R, 2> r;
    r.value = detail::record_density<typename R::scalar>(g, mu, sigma);
    for (int j = 0; j < 2; ++j) r.d[j] = R(g.d[j]);
    return r;
  } else {
    if constexpr (!is_pack_v<R>) {
      if (!(sigma > 0.0)) return impl::outside<R, 2>();
    }
    const int n = static_cast<int>(xs.extent(0));
    const R m = mu, s = sigma;
    const R inv = 1.0 / s;
    R sz = 0.0, szz = 0.0;
    for (int i = 0; i < n; ++i) {
      const R z = (static_cast<double>(xs(i)) - m) * inv;
      sz += z;
      szz += z * z;
    }
    ValueGrad<R, 2> r;
    r.value = -0.5 * szz - static_cast<double>(n) * math::log(s);
    if constexpr (!Propto) r.value -= static_cast<double>(n) * constants::log_sqrt_two_pi;
    r.d[0] = sz * inv;
    r.d[1] = (szz - static_cast<double>(n)) * inv;
    if constexpr (is_pack_v<R>) {  // lanes whose sigma is not > 0: outside, as for a double
      for (int l = 0; l < kLanes; ++l) {
        if (!(s[l] > 0.0)) {
          r.value[l] = neg_inf();
          r.d[0][l] = 0.0;
          r.d[1][l] = 0.0;
        }
      }
    }
    return r;
  }
}
template <bool Propto = false, class Xs, class M, class Sg>
KOKKOS_INLINE_FUNCTION promote_t<M, Sg> normal_lpdf_sum(const Xs& xs, const M& mu, const Sg& sigma) {
  return normal_lpdf_sum_grad<Propto>(xs, mu, sigma).value;
}

HMC_DIST_CONTINUOUS3(lognormal_lpdf)
HMC_DIST_CONTINUOUS3(cauchy_lpdf)
HMC_DIST_CONTINUOUS2(half_cauchy_lpdf)
HMC_DIST_CONTINUOUS2(half_normal_lpdf)
HMC_DIST_CONTINUOUS2(exponential_lpdf)
HMC_DIST_CONTINUOUS3(gamma_lpdf)
HMC_DIST_CONTINUOUS3(inv_gamma_lpdf)
HMC_DIST_CONTINUOUS3(beta_lpdf)
HMC_DIST_CONTINUOUS3(uniform_lpdf)

// student_t has three parameters: written out.
HMC_DIST_IMPL_FN(student_t_lpdf)

template <bool Propto = false, class X, class Nu, class M, class S>
KOKKOS_INLINE_FUNCTION promote_t<X, Nu, M, S> student_t_lpdf(const X& x, const Nu& nu, const M& mu, const S& sigma) {
  return detail::call_value<impl::student_t_lpdf_fn, Propto>(x, nu, mu, sigma);
}
template <bool Propto = false, class X, class Nu, class M, class S>
KOKKOS_INLINE_FUNCTION ValueGrad<promote_t<X, Nu, M, S>, 4> student_t_lpdf_grad(const X& x, const Nu& nu, const M& mu,
                                                                                const S& sigma) {
  return detail::call_grad<impl::student_t_lpdf_fn, Propto>(x, nu, mu, sigma);
}
template <bool Propto = false, class Xs, class Nu, class M, class S>
KOKKOS_INLINE_FUNCTION ValueGrad<promote_t<Nu, M, S>, 3> student_t_lpdf_sum_grad(const Xs& xs, const Nu& nu,
                                                                                 const M& mu, const S& sigma) {
  auto r = detail::zero_value_grad<promote_t<Nu, M, S>, 3>();
  const int n = static_cast<int>(xs.extent(0));
  for (int i = 0; i < n; ++i) {
    const auto g = student_t_lpdf_grad<Propto>(static_cast<double>(xs(i)), nu, mu, sigma);
    r.value += g.value;
    for (int j = 0; j < 3; ++j) r.d[j] += g.d[j + 1];
  }
  return r;
}

template <bool Propto = false, class Xs, class Nu, class M, class S>
KOKKOS_INLINE_FUNCTION promote_t<Nu, M, S> student_t_lpdf_sum(const Xs& xs, const Nu& nu, const M& mu, const S& sigma) {
  if constexpr (is_var_v<promote_t<Nu, M, S>>) {
    const auto g =
        student_t_lpdf_sum_grad<Propto>(xs, detail::value_arg(nu), detail::value_arg(mu), detail::value_arg(sigma));
    return detail::record_density<typename promote_t<Nu, M, S>::scalar>(g, nu, mu, sigma);
  } else {
    promote_t<Nu, M, S> lp = 0.0;
    const int n = static_cast<int>(xs.extent(0));
    for (int i = 0; i < n; ++i) lp += student_t_lpdf<Propto>(static_cast<double>(xs(i)), nu, mu, sigma);
    return lp;
  }
}
}  // namespace hmc::dist
