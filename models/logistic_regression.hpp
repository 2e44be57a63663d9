#pragma once
/// \file
/// \brief Bayesian logistic regression: N binary outcomes y_i with
/// P(y_i = 1) = σ(η_i), η_i = α + x_i · β, and independent Normal priors
/// α ~ N(0, s_α²) (when /model/intercept is true) and β_j ~ N(0, s_β²).
///
/// Every coefficient is unconstrained, so there is no transform and no Jacobian:
///   log p = Σ_i [ y_i η_i - log(1 + e^η_i) ] - α² / (2 s_α²) - Σ_j β_j² / (2 s_β²) + const,
/// written stably as y_i η_i + log σ(-η_i) (dist::bernoulli_logit_glm_lpmf). Its gradient, by reverse
/// mode: ∂/∂α = Σ_i (y_i - σ(η_i)) - α / s_α², ∂/∂β_j = Σ_i (y_i - σ(η_i)) x_ij - β_j / s_β².

#include "hmc/core/draw_source.hpp"
#include "hmc/core/errors.hpp"
#include "hmc/core/philox.hpp"
#include "hmc/core/types.hpp"
#include "hmc/distributions/dist.hpp"
#include "hmc/keys/data.hpp"
#include "hmc/keys/key.hpp"
#include "hmc/keys/values.hpp"
#include "hmc/model/autodiff.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace hmc::models {

struct LogisticRegression : model::AutodiffModel<LogisticRegression> {
  int n = 0;                 ///< N, observations
  int p = 0;                 ///< P, predictors (columns of x)
  bool intercept = true;     ///< an intercept alpha is coordinate 0 (/model/intercept)
  double alpha_scale = 0.0;  ///< sd of the Normal prior on alpha (/model/priors/alpha_scale)
  double beta_scale = 0.0;   ///< sd of the Normal prior on each beta[j] (/model/priors/beta_scale)
  MatrixView x;              ///< the design matrix, N x P
  VectorView y;              ///< the outcomes, 0.0 or 1.0

  KOKKOS_INLINE_FUNCTION int offset() const { return intercept ? 1 : 0; }
  KOKKOS_INLINE_FUNCTION int dim() const { return offset() + p; }
  int num_params() const { return offset() + p; }
  std::vector<std::string> parameter_names() const {
    std::vector<std::string> names;
    if (intercept) names.emplace_back("alpha");
    for (int j = 0; j < p; ++j) names.push_back("beta[" + std::to_string(j + 1) + "]");
    return names;
  }
  std::vector<std::pair<std::string, std::vector<std::string>>> dim_names() const { return {{"beta", {"predictor"}}}; }

  /// log p(q), written once for every number type T (route (a): docs/adding-a-model.md); the
  /// likelihood is one bernoulli_logit_glm, whose gradient is one pass over the data. hmc
  /// differentiates it in reverse mode: in the lanes at 1.24x the rate of the hand-written lane
  /// gradient this model had before (scripts/bench's logistic throughput, docs/performance.md).
  template <class T, class Q>
  KOKKOS_INLINE_FUNCTION T log_density_t(const Q& q) const {
    const int o = offset();
    const auto beta = dist::slice(q, o);
    const T alpha = intercept ? T(q(0)) : T(0.0);
    T lp = 0.0;  // the Normal priors without their constants
    if (intercept) lp -= (0.5 / (alpha_scale * alpha_scale)) * (alpha * alpha);
    for (int j = 0; j < p; ++j) {
      const T b = beta(j);
      lp -= (0.5 / (beta_scale * beta_scale)) * (b * b);
    }
    return lp + dist::bernoulli_logit_glm_lpmf(y, x, alpha, beta);
  }

  /// log p(y_i | alpha, beta) = log σ(η_i) or log σ(-η_i) of the recorded draw (alpha,
  /// beta[1..P]): one per observation (draws.nc's log_likelihood group, for PSIS-LOO).
  KOKKOS_INLINE_FUNCTION double log_likelihood(const Row& draw, int i) const {
    const int o = offset();
    double eta = intercept ? draw(0) : 0.0;
    for (int j = 0; j < p; ++j) eta += x(i, j) * draw(o + j);
    return y(i) > 0.5 ? math::log_sigmoid(eta) : math::log_sigmoid(-eta);
  }

  /// A posterior predictive draw of y_i: 1 with probability σ(η_i).
  KOKKOS_INLINE_FUNCTION double posterior_predictive(const Row& draw, int i, const rng::DrawStream& r) const {
    const int o = offset();
    double eta = intercept ? draw(0) : 0.0;
    for (int j = 0; j < p; ++j) eta += x(i, j) * draw(o + j);
    return r.uniform(0) < math::sigmoid(eta) ? 1.0 : 0.0;
  }

  /// The outcomes y (observed_data) and the design matrix x (constant_data).
  std::vector<DataArray> observations() const { return {data_array("y", {"observation"}, y, true)}; }
  std::vector<DataArray> constant_data() const { return {data_array("x", {"observation", "predictor"}, x)}; }

  KOKKOS_INLINE_FUNCTION void constrain(const Row& q, const Row& out) const {
    for (int k = 0; k < dim(); ++k) out(k) = q(k);
  }

  /// A prior draw: independent normals with the prior sds.
  KOKKOS_INLINE_FUNCTION void sample_prior(const rng::ParticleStream& s, std::uint32_t use, const Row& q) const {
    const int d = dim(), o = offset();
    for (int k = 0; k < d; k += 2) {
      double z0, z1;
      s.normal2(0, use + static_cast<std::uint32_t>(k / 2), z0, z1);
      q(k) = (k < o ? alpha_scale : beta_scale) * z0;
      if (k + 1 < d) q(k + 1) = beta_scale * z1;  // k + 1 >= 1 >= o: always a beta
    }
  }

  // ---- host: config and data ------------------------------------------------

  static keys::Keys config_keys() {
    return {
        keys::boolean("/model/intercept")
            .default_(true)
            .doc("add an intercept alpha to the linear predictor (not a column of ones in x)"),
        keys::number("/model/priors/alpha_scale")
            .positive()
            .default_(5.0)
            .doc("standard deviation of the Normal(0, s) prior on the intercept alpha (unused without an intercept)"),
        keys::number("/model/priors/beta_scale")
            .positive()
            .default_(2.5)
            .doc("standard deviation of the Normal(0, s) prior on each coefficient beta[j]")};
  }

  static LogisticRegression from_config(const nlohmann::json& model, const nlohmann::json& data) {
    const keys::Data d(data, "logistic_regression");
    const auto rows = d.rows("x");
    const auto ys = d.integers("y", 0, 1);
    d.same_length("x", rows.size(), "y", ys.size());
    d.optional_count("N", ys.size(), "y");
    const keys::Values v(model, config_keys());
    LogisticRegression m;
    m.intercept = v.boolean("/model/intercept");
    m.alpha_scale = v.number("/model/priors/alpha_scale");
    m.beta_scale = v.number("/model/priors/beta_scale");
    m.n = static_cast<int>(rows.size());
    m.p = static_cast<int>(rows.front().size());
    if (static_cast<long long>(m.n) * m.p > 100'000'000LL)
      throw DataError("data error: /x has " + std::to_string(rows.size()) + " x " + std::to_string(m.p) +
                      " entries, more than 10^8");
    std::vector<double> yd;
    for (const auto yi : ys) yd.push_back(static_cast<double>(yi));
    m.x = MatrixView("logistic_regression::x", m.n, m.p);
    auto host = Kokkos::create_mirror_view(m.x);
    for (int i = 0; i < m.n; ++i) {
      for (int j = 0; j < m.p; ++j) host(i, j) = rows[i][j];
    }
    Kokkos::deep_copy(m.x, host);
    m.y = to_device_view("logistic_regression::y", yd);
    return m;
  }
};

}  // namespace hmc::models
