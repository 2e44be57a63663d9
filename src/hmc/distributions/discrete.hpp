#pragma once
/// \file
/// \brief Discrete log masses and their gradients: bernoulli, bernoulli_logit, binomial,
/// binomial_logit, poisson, poisson_log. Counts k (and trials n) are integers (data); the
/// partials are with respect to the real-valued parameter only.
///
/// Outside the support (k not in it, or a parameter outside its range) the value is -infinity
/// and the partial 0. docs/distributions.md lists what `Propto = true` drops.

#include "hmc/distributions/special.hpp"
#include "hmc/distributions/value_grad.hpp"

namespace hmc::dist {

namespace impl {

// ---- bernoulli(k | theta), k in {0, 1}, 0 <= theta <= 1 ------------------------------------
// k log θ + (1 - k) log1p(-θ). Propto drops nothing.

template <bool P, class R>
KOKKOS_INLINE_FUNCTION R bernoulli_lpmf(int k, const R& theta) {
  if ((k != 0 && k != 1) || !(theta >= 0.0) || !(theta <= 1.0)) return neg_inf();
  return k == 1 ? math::log(theta) : math::log1p(-theta);
}
template <bool P, class R>
KOKKOS_INLINE_FUNCTION ValueGrad<R, 1> bernoulli_lpmf_grad(int k, const R& theta) {
  ValueGrad<R, 1> r;
  r.value = bernoulli_lpmf<P, R>(k, theta);
  if ((k != 0 && k != 1) || !(theta >= 0.0) || !(theta <= 1.0)) {
    r.d[0] = 0.0;
  } else {
    r.d[0] = k == 1 ? 1.0 / theta : -1.0 / (1.0 - theta);
  }
  return r;
}

// ---- bernoulli_logit(k | alpha), k in {0, 1}: theta = sigmoid(alpha) ----------------------------
// log σ(α) for k = 1, log σ(-α) for k = 0. Propto drops nothing.

template <bool P, class R>
KOKKOS_INLINE_FUNCTION R bernoulli_logit_lpmf(int k, const R& alpha) {
  if (k != 0 && k != 1) return neg_inf();
  return k == 1 ? math::log_sigmoid(alpha) : math::log_sigmoid(-alpha);
}
template <bool P, class R>
KOKKOS_INLINE_FUNCTION ValueGrad<R, 1> bernoulli_logit_lpmf_grad(int k, const R& alpha) {
  ValueGrad<R, 1> r;
  r.value = bernoulli_logit_lpmf<P, R>(k, alpha);
  if (k != 0 && k != 1) {
    r.d[0] = 0.0;
  } else {
    r.d[0] = k == 1 ? math::sigmoid(-alpha) : -math::sigmoid(alpha);
  }
  return r;
}

// ---- binomial(k | n, theta), 0 <= k <= n, 0 <= theta <= 1 ------------------------------------
// log C(n, k) + k log θ + (n - k) log1p(-θ) (a term with a zero count is 0, also at θ = 0 or 1).
// Propto drops log C(n, k).

template <bool P, class R>
KOKKOS_INLINE_FUNCTION R binomial_lpmf(int k, int n, const R& theta) {
  if (k < 0 || k > n || !(theta >= 0.0) || !(theta <= 1.0)) return neg_inf();
  R lp = 0.0;
  if (k > 0) lp += k * math::log(theta);
  if (n - k > 0) lp += (n - k) * math::log1p(-theta);
  if constexpr (!P) lp += lchoose(n, k);
  return lp;
}
template <bool P, class R>
KOKKOS_INLINE_FUNCTION ValueGrad<R, 1> binomial_lpmf_grad(int k, int n, const R& theta) {
  ValueGrad<R, 1> r;
  r.value = binomial_lpmf<P, R>(k, n, theta);
  r.d[0] = 0.0;
  if (k < 0 || k > n || !(theta >= 0.0) || !(theta <= 1.0)) return r;
  if (k > 0) r.d[0] += k / theta;
  if (n - k > 0) r.d[0] -= (n - k) / (1.0 - theta);
  return r;
}

// ---- binomial_logit(k | n, alpha), 0 <= k <= n: theta = sigmoid(alpha) -----------------------
// log C(n, k) + k log σ(α) + (n - k) log σ(-α). Propto drops log C(n, k).

template <bool P, class R>
KOKKOS_INLINE_FUNCTION R binomial_logit_lpmf(int k, int n, const R& alpha) {
  if (k < 0 || k > n) return neg_inf();
  R lp = 0.0;
  if (k > 0) lp += k * math::log_sigmoid(alpha);
  if (n - k > 0) lp += (n - k) * math::log_sigmoid(-alpha);
  if constexpr (!P) lp += lchoose(n, k);
  return lp;
}
template <bool P, class R>
KOKKOS_INLINE_FUNCTION ValueGrad<R, 1> binomial_logit_lpmf_grad(int k, int n, const R& alpha) {
  ValueGrad<R, 1> r;
  r.value = binomial_logit_lpmf<P, R>(k, n, alpha);
  r.d[0] = 0.0;
  if (k < 0 || k > n) return r;
  // k σ(-α) - (n - k) σ(α)
  if (k > 0) r.d[0] += k * math::sigmoid(-alpha);
  if (n - k > 0) r.d[0] -= (n - k) * math::sigmoid(alpha);
  return r;
}

// ---- poisson(k | lambda), k >= 0, lambda >= 0 ------------------------------------------------
// k log λ - λ - lgamma(k + 1) (k log λ is 0 for k = 0, also at λ = 0). Propto drops -lgamma(k + 1).

template <bool P, class R>
KOKKOS_INLINE_FUNCTION R poisson_lpmf(int k, const R& lambda) {
  if (k < 0 || !(lambda >= 0.0) || lambda == math::infinity()) return neg_inf();
  R lp = -lambda;
  if (k > 0) lp += k * math::log(lambda);
  if constexpr (!P) lp -= math::lgamma(k + 1.0);
  return lp;
}
template <bool P, class R>
KOKKOS_INLINE_FUNCTION ValueGrad<R, 1> poisson_lpmf_grad(int k, const R& lambda) {
  ValueGrad<R, 1> r;
  r.value = poisson_lpmf<P, R>(k, lambda);
  r.d[0] = 0.0;
  if (k < 0 || !(lambda >= 0.0) || lambda == math::infinity()) return r;
  r.d[0] = k > 0 ? k / lambda - 1.0 : R(-1.0);
  return r;
}

// ---- poisson_log(k | alpha), k >= 0: lambda = exp(alpha) ----------------------------------------
// k α - exp(α) - lgamma(k + 1). Propto drops -lgamma(k + 1).

template <bool P, class R>
KOKKOS_INLINE_FUNCTION R poisson_log_lpmf(int k, const R& alpha) {
  if (k < 0 || alpha == math::infinity()) return neg_inf();
  if (alpha == -math::infinity()) return k == 0 ? R(0.0) : R(neg_inf());  // λ = 0; lgamma(1) = 0
  R lp = k * alpha - math::exp(alpha);
  if constexpr (!P) lp -= math::lgamma(k + 1.0);
  return lp;
}
template <bool P, class R>
KOKKOS_INLINE_FUNCTION ValueGrad<R, 1> poisson_log_lpmf_grad(int k, const R& alpha) {
  ValueGrad<R, 1> r;
  r.value = poisson_log_lpmf<P, R>(k, alpha);
  r.d[0] = 0.0;
  if (k < 0 || alpha == math::infinity() || alpha == -math::infinity()) return r;
  r.d[0] = k - math::exp(alpha);
  return r;
}

}  // namespace impl

HMC_DIST_DISCRETE1(bernoulli_lpmf)
HMC_DIST_DISCRETE1(bernoulli_logit_lpmf)
HMC_DIST_DISCRETE2(binomial_lpmf)
HMC_DIST_DISCRETE2(binomial_logit_lpmf)
HMC_DIST_DISCRETE1(poisson_lpmf)
HMC_DIST_DISCRETE1(poisson_log_lpmf)

}  // namespace hmc::dist
