#pragma once
/// \file
/// \brief Bayesian logistic regression: N binary outcomes y_i with
/// P(y_i = 1) = σ(η_i), η_i = α + x_i · β, and independent Normal priors
/// α ~ N(0, s_α²) (when /model/intercept is true) and β_j ~ N(0, s_β²).
///
/// Every coefficient is unconstrained, so there is no transform and no Jacobian:
///   log p = Σ_i [ y_i η_i - log(1 + e^η_i) ] - α² / (2 s_α²) - Σ_j β_j² / (2 s_β²) + const,
/// written stably as y_i η_i + log σ(-η_i). Its gradient: ∂/∂α = Σ_i (y_i - σ(η_i)) - α / s_α²,
/// ∂/∂β_j = Σ_i (y_i - σ(η_i)) x_ij - β_j / s_β².

#include "hmc/core/errors.hpp"
#include "hmc/core/pack.hpp"
#include "hmc/core/philox.hpp"
#include "hmc/core/types.hpp"
#include "hmc/keys/data.hpp"
#include "hmc/keys/key.hpp"
#include "hmc/keys/values.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace hmc::models {

struct LogisticRegression {
  int n = 0;                 ///< N, observations
  int p = 0;                 ///< P, predictors (columns of x)
  bool intercept = true;     ///< an intercept alpha is coordinate 0 (/model/intercept)
  double alpha_scale = 0.0;  ///< sd of the Normal prior on alpha (/model/priors/alpha_scale)
  double beta_scale = 0.0;   ///< sd of the Normal prior on each beta[j] (/model/priors/beta_scale)
  VectorView x;              ///< the design matrix, row-major: x(i * p + j)
  VectorView y;              ///< the outcomes, 0.0 or 1.0

  KOKKOS_INLINE_FUNCTION int offset() const { return intercept ? 1 : 0; }
  KOKKOS_INLINE_FUNCTION int dim() const { return offset() + p; }
  int num_params() const { return dim(); }
  std::vector<std::string> parameter_names() const {
    std::vector<std::string> names;
    if (intercept) names.emplace_back("alpha");
    for (int j = 0; j < p; ++j) names.push_back("beta[" + std::to_string(j + 1) + "]");
    return names;
  }
  std::vector<std::pair<std::string, std::vector<std::string>>> dim_names() const { return {{"beta", {"predictor"}}}; }

  KOKKOS_INLINE_FUNCTION double log_density(const Row& q) const {
    const int o = offset();
    double lp = 0.0;
    if (intercept) lp -= 0.5 * q(0) * q(0) / (alpha_scale * alpha_scale);
    for (int j = 0; j < p; ++j) lp -= 0.5 * q(o + j) * q(o + j) / (beta_scale * beta_scale);
    for (int i = 0; i < n; ++i) {
      double eta = intercept ? q(0) : 0.0;
      for (int j = 0; j < p; ++j) eta += x(i * p + j) * q(o + j);
      lp += y(i) * eta + math::log_sigmoid(-eta);  // y η - log(1 + e^η)
    }
    return lp;
  }

  KOKKOS_INLINE_FUNCTION double log_density_gradient(const Row& q, const Row& grad) const {
    return log_density_gradient_t<double>(q, grad);
  }

  /// The gradient for T = double (Row) and for T = Pack (PackRow: a block of particles).
  template <class T, class R>
  KOKKOS_INLINE_FUNCTION T log_density_gradient_t(const R& q, const R& grad) const {
    const int o = offset();
    const double inv_a2 = 1.0 / (alpha_scale * alpha_scale), inv_b2 = 1.0 / (beta_scale * beta_scale);
    T lp = 0.0;
    if (intercept) {
      const T a = q(0);
      lp -= 0.5 * inv_a2 * (a * a);
      grad(0) = -inv_a2 * a;
    }
    for (int j = 0; j < p; ++j) {
      const T b = q(o + j);
      lp -= 0.5 * inv_b2 * (b * b);
      grad(o + j) = -inv_b2 * b;
    }
    for (int i = 0; i < n; ++i) {
      T eta = 0.0;
      if (intercept) eta = q(0);
      for (int j = 0; j < p; ++j) eta += x(i * p + j) * q(o + j);
      lp += y(i) * eta + math::log_sigmoid(-eta);
      const T r = y(i) - math::sigmoid(eta);  // d/dη of y η - log(1 + e^η)
      if (intercept) grad(0) += r;
      for (int j = 0; j < p; ++j) grad(o + j) += x(i * p + j) * r;
    }
    return lp;
  }

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
    std::vector<double> flat, yd;
    flat.reserve(static_cast<std::size_t>(m.n) * static_cast<std::size_t>(m.p));
    for (const auto& r : rows) flat.insert(flat.end(), r.begin(), r.end());
    for (const auto yi : ys) yd.push_back(static_cast<double>(yi));
    m.x = to_device_view("logistic_regression::x", flat);
    m.y = to_device_view("logistic_regression::y", yd);
    return m;
  }
};

}  // namespace hmc::models
