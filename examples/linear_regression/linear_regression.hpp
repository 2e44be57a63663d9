#pragma once
/// \file
/// \brief Linear regression written once with `normal_id_glm_lpdf` (route (a): reverse-mode
/// automatic differentiation, the whole likelihood one node of the tape), and the same model
/// with a hand-written gradient (`scripts/bench --sections ad`):
///
///   alpha ~ Normal(0, 10),  beta_j ~ Normal(0, 2.5),  sigma ~ HalfNormal(5),
///   y_i ~ Normal(alpha + x_i · beta, sigma),  i = 1..N, j = 1..P.
///
/// Unconstrained q = (alpha, beta_1..beta_P, log sigma): D = P + 2.
#include "hmc/app/register.hpp"
#include "hmc/core/draw_source.hpp"
#include "hmc/core/errors.hpp"
#include "hmc/core/philox.hpp"
#include "hmc/core/types.hpp"
#include "hmc/distributions/dist.hpp"
#include "hmc/keys/data.hpp"
#include "hmc/keys/key.hpp"
#include "hmc/keys/values.hpp"
#include "hmc/model/autodiff.hpp"
#include "hmc/model/transforms.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace regression_example {

namespace dist = hmc::dist;

/// What both forms share: data, names, constrain and the config.
struct RegressionData {
  int n = 0, p = 0;
  hmc::MatrixView x;  ///< N x P design matrix
  hmc::VectorView y;  ///< N outcomes

  int num_params() const { return p + 2; }
  std::vector<std::string> parameter_names() const {
    std::vector<std::string> names = {"alpha"};
    for (int j = 0; j < p; ++j) names.push_back("beta[" + std::to_string(j + 1) + "]");
    names.emplace_back("sigma");
    return names;
  }
  std::vector<std::pair<std::string, std::vector<std::string>>> dim_names() const { return {{"beta", {"predictor"}}}; }
  KOKKOS_INLINE_FUNCTION void constrain(const hmc::Row& q, const hmc::Row& out) const {
    for (int j = 0; j <= p; ++j) out(j) = q(j);
    out(p + 1) = hmc::transform::positive_forward(q(p + 1));
  }

  /// After sampling (docs/adding-a-model.md#after-sampling): log N(y_i | alpha + x_i · beta,
  /// sigma) of the recorded draw (alpha, beta[1..P], sigma) per observation, written
  /// pointwise; with the observed y and the covariates x.
  KOKKOS_INLINE_FUNCTION double log_likelihood(const hmc::Row& draw, int i) const {
    double eta = draw(0);
    for (int j = 0; j < p; ++j) eta += x(i, j) * draw(1 + j);
    const double sigma = draw(p + 1), z = (y(i) - eta) / sigma;
    return -0.5 * z * z - hmc::math::log(sigma) - 0.5 * hmc::math::log(2.0 * hmc::math::pi());
  }
  /// A posterior predictive draw of y_i: Normal(alpha + x_i · beta, sigma).
  KOKKOS_INLINE_FUNCTION double posterior_predictive(const hmc::Row& draw, int i, const hmc::rng::DrawStream& r) const {
    double eta = draw(0);
    for (int j = 0; j < p; ++j) eta += x(i, j) * draw(1 + j);
    return eta + draw(p + 1) * r.normal(0);
  }
  std::vector<hmc::DataArray> observations() const { return {hmc::data_array("y", {"observation"}, y)}; }
  std::vector<hmc::DataArray> constant_data() const { return {hmc::data_array("x", {"observation", "predictor"}, x)}; }

  static hmc::keys::Keys config_keys() { return {}; }
  template <class M>
  static M build(const nlohmann::json& model, const nlohmann::json& data, const std::string& name) {
    const hmc::keys::Data d(data, name);
    const auto rows = d.rows("x");
    const auto ys = d.numbers("y");
    d.same_length("x", rows.size(), "y", ys.size());
    const hmc::keys::Values v(model, config_keys());
    (void)v;
    M m;
    m.n = static_cast<int>(rows.size());
    m.p = static_cast<int>(rows.front().size());
    m.x = hmc::MatrixView(name + "::x", m.n, m.p);
    auto host = Kokkos::create_mirror_view(m.x);
    for (int i = 0; i < m.n; ++i) {
      for (int j = 0; j < m.p; ++j) host(i, j) = rows[i][j];
    }
    Kokkos::deep_copy(m.x, host);
    m.y = hmc::to_device_view(name + "::y", ys);
    return m;
  }
};

/// Route (a).
struct LinearRegression : RegressionData, hmc::model::AutodiffModel<LinearRegression> {
  KOKKOS_INLINE_FUNCTION int dim() const { return p + 2; }

  template <class T, class Q>
  KOKKOS_INLINE_FUNCTION T log_density_t(const Q& q) const {
    const T alpha = q(0), sigma = hmc::transform::positive_forward(T(q(p + 1)));
    const auto beta = dist::slice(q, 1);
    T lp = dist::normal_lpdf<true>(alpha, 0.0, 10.0) + dist::half_normal_lpdf<true>(sigma, 5.0) + q(p + 1);
    for (int j = 0; j < p; ++j) lp += dist::normal_lpdf<true>(T(beta(j)), 0.0, 2.5);
    return lp + dist::normal_id_glm_lpdf<true>(y, x, alpha, beta, sigma);
  }

  static LinearRegression from_config(const nlohmann::json& model, const nlohmann::json& data) {
    return build<LinearRegression>(model, data, "linear_regression");
  }
};

/// The same density with its gradient written by hand (one particle per thread).
struct LinearRegressionHand : RegressionData {
  int dim() const { return p + 2; }

  KOKKOS_INLINE_FUNCTION double log_density(const hmc::Row& q) const { return value_and_gradient(q, nullptr); }
  KOKKOS_INLINE_FUNCTION double log_density_gradient(const hmc::Row& q, const hmc::Row& grad) const {
    return value_and_gradient(q, &grad);
  }

  /// log p (the terms of LinearRegression but for constants) and, with grad, ∇ log p.
  KOKKOS_INLINE_FUNCTION double value_and_gradient(const hmc::Row& q, const hmc::Row* grad) const {
    const double alpha = q(0), sigma = hmc::math::exp(q(p + 1)), inv_s = 1.0 / sigma;
    double lp = -0.5 * alpha * alpha / 100.0 - 0.5 * sigma * sigma / 25.0 + q(p + 1) - n * hmc::math::log(sigma);
    if (grad != nullptr) {
      (*grad)(0) = -alpha / 100.0;
      for (int j = 0; j < p; ++j) (*grad)(1 + j) = -q(1 + j) / 6.25;
    }
    for (int j = 0; j < p; ++j) lp -= 0.5 * q(1 + j) * q(1 + j) / 6.25;
    double szz = 0.0;
    for (int i = 0; i < n; ++i) {
      double eta = alpha;
      for (int j = 0; j < p; ++j) eta += x(i, j) * q(1 + j);
      const double z = (y(i) - eta) * inv_s;
      szz += z * z;
      if (grad != nullptr) {
        const double r = z * inv_s;
        (*grad)(0) += r;
        for (int j = 0; j < p; ++j) (*grad)(1 + j) += r * x(i, j);
      }
    }
    lp -= 0.5 * szz;
    if (grad != nullptr) (*grad)(p + 1) = -sigma * sigma / 25.0 + 1.0 - n + szz;
    return lp;
  }

  static LinearRegressionHand from_config(const nlohmann::json& model, const nlohmann::json& data) {
    return build<LinearRegressionHand>(model, data, "linear_regression_hand");
  }
};

}  // namespace regression_example

HMC_REGISTER_MODEL(regression_example::LinearRegression, "linear_regression",
                   "y ~ Normal(alpha + x beta, sigma) with normal_id_glm: route (a), reverse mode");
HMC_REGISTER_MODEL(regression_example::LinearRegressionHand, "linear_regression_hand",
                   "linear_regression with its gradient written by hand (the comparison of scripts/bench ad)");
