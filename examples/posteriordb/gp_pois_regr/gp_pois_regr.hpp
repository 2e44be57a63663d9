#pragma once
/// \file
/// \brief posteriordb's `gp_pois_regr-gp_pois_regr`: a latent Gaussian process with a Poisson
/// likelihood, the Stan program gp_pois_regr.stan as an hmc model:
///
///   rho ~ Gamma(25, 4),  alpha ~ Normal+(0, 2),  f_tilde_i ~ Normal(0, 1),
///   K = gp_exp_quad_cov(x, alpha, rho) + 1e-10 I,  L = cholesky_decompose(K),  f = L f_tilde,
///   k_i ~ Poisson(exp(f_i)),  i = 1..N.
///
/// Unconstrained q = (log rho, log alpha, f_tilde_1..N); the log density adds the
/// log-Jacobian log rho + log alpha and keeps every normalising constant (the half-normal's
/// log 2 included). The covariance, its Cholesky factor and L f_tilde are
/// hmc/distributions/linalg.hpp's, in a local array of at most kMaxN = 32 points: on Vars
/// (reverse mode) each entry is one node of the tape, so the gradient costs a few evaluations
/// (N = 11: ~200 nodes, ~1,000 edges). Output: rho, alpha, f[1..N] (f computed from q in
/// doubles); f_tilde is not output.

#include "hmc/app/register.hpp"
#include "hmc/core/errors.hpp"
#include "hmc/core/types.hpp"
#include "hmc/distributions/dist.hpp"
#include "hmc/keys/data.hpp"
#include "hmc/keys/key.hpp"
#include "hmc/model/autodiff.hpp"
#include "hmc/model/transforms.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <string>
#include <vector>

namespace gp_pois_regr_example {

namespace dist = hmc::dist;

struct GpPoisRegr : hmc::model::AutodiffModel<GpPoisRegr> {
  /// Most points: the covariance lives in a local array of the log density (a GPU thread's
  /// registers or local memory), so its size is fixed at compile time.
  static constexpr int kMaxN = 32;
  static constexpr double kJitter = 1e-10;  ///< added to K's diagonal, as the Stan program

  int n = 0;          ///< N
  hmc::VectorView x;  ///< the points
  hmc::VectorView k;  ///< the counts (whole numbers, held as doubles)
  double log_const = 0.0;

  KOKKOS_INLINE_FUNCTION int dim() const { return 2 + n; }
  int num_params() const { return 2 + n; }
  std::vector<std::string> parameter_names() const {
    std::vector<std::string> names = {"rho", "alpha"};
    for (int i = 0; i < n; ++i) names.push_back("f[" + std::to_string(i + 1) + "]");
    return names;
  }

  template <class T, class Q>
  KOKKOS_INLINE_FUNCTION T log_density_t(const Q& q) const {
    const T log_rho = q(0), log_alpha = q(1);
    const T rho = hmc::transform::positive_forward(log_rho);
    const T alpha = hmc::transform::positive_forward(log_alpha);
    T lp = log_const + dist::gamma_lpdf(rho, 25.0, 4.0) + dist::normal_lpdf(alpha, 0.0, 2.0) + log_rho + log_alpha;
    for (int i = 0; i < n; ++i) lp += dist::normal_lpdf(T(q(2 + i)), 0.0, 1.0);

    // The lower triangle of K, packed; then L in place; then f = L f_tilde.
    T cov[kMaxN * (kMaxN + 1) / 2];
    T f[kMaxN];
    const auto chol = dist::lower_ref(cov);
    dist::gp_exp_quad_cov(x, n, alpha, rho, kJitter, chol);
    // Not positive definite (rho so long that K is singular in doubles): outside the support,
    // as Stan rejects it. On lanes a failing lane's log density is NaN, which rejects it alone.
    if (!dist::cholesky_decompose(chol, n)) {
      if constexpr (!dist::is_pack_like_v<T>) return T(dist::neg_inf());
    }
    dist::multiply_lower_tri(chol, dist::slice(q, 2), dist::vector_ref(f), n);
    for (int i = 0; i < n; ++i) lp += dist::poisson_log_lpmf(static_cast<int>(k(i)), f[i]);
    return lp;
  }

  KOKKOS_INLINE_FUNCTION void constrain(const hmc::Row& q, const hmc::Row& out) const {
    const double rho = hmc::transform::positive_forward(q(0));
    const double alpha = hmc::transform::positive_forward(q(1));
    out(0) = rho;
    out(1) = alpha;
    double cov[kMaxN * (kMaxN + 1) / 2];
    const auto chol = dist::lower_ref(cov);
    dist::gp_exp_quad_cov(x, n, alpha, rho, kJitter, chol);
    if (!dist::cholesky_decompose(chol, n)) {
      for (int i = 0; i < n; ++i) out(2 + i) = dist::quiet_nan();
      return;
    }
    dist::multiply_lower_tri(chol, dist::slice(q, 2), hmc::Row{&out(2), out.stride}, n);
  }

  // ---- host: data ----------------------------------------------------------

  static hmc::keys::Keys config_keys() { return {}; }

  static GpPoisRegr from_config(const nlohmann::json&, const nlohmann::json& data) {
    const hmc::keys::Data d(data, "gp_pois_regr");
    const auto xs = d.numbers("x");
    const auto ks = d.integers("k", 0, 1000000000);
    d.same_length("x", xs.size(), "k", ks.size());
    d.optional_count("N", xs.size(), "x");
    if (xs.size() > static_cast<std::size_t>(kMaxN)) {
      throw hmc::DataError("data error: gp_pois_regr data has N = " + std::to_string(xs.size()) +
                           " points; this build takes at most " + std::to_string(kMaxN) +
                           " (GpPoisRegr::kMaxN, the size of the covariance's local array)");
    }
    GpPoisRegr m;
    m.n = static_cast<int>(xs.size());
    // log Normal+(alpha | 0, 2) = log Normal(alpha | 0, 2) + log 2 on alpha > 0.
    m.log_const = std::log(2.0);
    m.x = hmc::to_device_view("gp_pois_regr::x", xs);
    m.k = hmc::to_device_view("gp_pois_regr::k", std::vector<double>(ks.begin(), ks.end()));
    return m;
  }
};

}  // namespace gp_pois_regr_example

HMC_REGISTER_MODEL(gp_pois_regr_example::GpPoisRegr, "gp_pois_regr",
                   "posteriordb gp_pois_regr: latent GP (exp-quad kernel, Cholesky) with Poisson counts");
