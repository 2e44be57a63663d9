#pragma once
/// \file
/// \brief A hierarchical normal model written once (route (a): a templated log density,
/// its gradient by reverse-mode automatic differentiation), and the same model with a
/// hand-written gradient, to compare the two (`scripts/bench --sections ad`):
///
///   mu ~ Normal(0, 5),  tau ~ HalfNormal(5),  theta_j ~ Normal(mu, tau),  j = 1..J,
///   y_jk ~ Normal(theta_j, sigma_y),  k = 1..n per group (sigma_y known, data).
///
/// Unconstrained q = (mu, log tau, theta_1..theta_J): D = J + 2; the log-Jacobian of
/// tau = exp(q_1) is q_1. The data y are group by group: y(j n + k).
#include "hmc/app/register.hpp"
#include "hmc/core/errors.hpp"
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

namespace hierarchical_example {

namespace dist = hmc::dist;

/// What both forms share: data, names, constrain and the config.
struct HierarchicalData {
  int groups = 0;        ///< J
  int per_group = 0;     ///< n, observations per group
  double sigma_y = 1.0;  ///< the observations' known standard deviation (/model/sigma_y)
  hmc::VectorView y;     ///< y(j n + k)

  int num_params() const { return groups + 2; }
  std::vector<std::string> parameter_names() const {
    std::vector<std::string> names = {"mu", "tau"};
    for (int j = 0; j < groups; ++j) names.push_back("theta[" + std::to_string(j + 1) + "]");
    return names;
  }
  std::vector<std::pair<std::string, std::vector<std::string>>> dim_names() const { return {{"theta", {"group"}}}; }
  KOKKOS_INLINE_FUNCTION void constrain(const hmc::Row& q, const hmc::Row& out) const {
    out(0) = q(0);
    out(1) = hmc::transform::positive_forward(q(1));
    for (int j = 0; j < groups; ++j) out(2 + j) = q(2 + j);
  }

  static hmc::keys::Keys config_keys() {
    return {hmc::keys::number("/model/sigma_y")
                .positive()
                .default_(1.0)
                .doc("known standard deviation of each observation around its group's mean theta[j]")};
  }
  template <class M>
  static M build(const nlohmann::json& model, const nlohmann::json& data, const std::string& name) {
    const hmc::keys::Data d(data, name);
    const auto rows = d.rows("y");  // one row per group
    for (const auto& r : rows) {
      if (r.size() != rows.front().size())
        throw hmc::DataError("data error: /y: every group must have as many observations as the first");
    }
    const hmc::keys::Values v(model, config_keys());
    M m;
    m.groups = static_cast<int>(rows.size());
    m.per_group = static_cast<int>(rows.front().size());
    m.sigma_y = v.number("/model/sigma_y");
    std::vector<double> flat;
    for (const auto& r : rows) flat.insert(flat.end(), r.begin(), r.end());
    m.y = hmc::to_device_view(name + "::y", flat);
    return m;
  }
};

/// Route (a): the log density once, for any T; hmc differentiates it.
struct HierarchicalNormal : HierarchicalData, hmc::model::AutodiffModel<HierarchicalNormal> {
  KOKKOS_INLINE_FUNCTION int dim() const { return groups + 2; }

  template <class T, class Q>
  KOKKOS_INLINE_FUNCTION T log_density_t(const Q& q) const {
    const T mu = q(0);
    const T tau = hmc::transform::positive_forward(T(q(1)));
    T lp = dist::normal_lpdf<true>(mu, 0.0, 5.0) + dist::half_normal_lpdf<true>(tau, 5.0) + q(1);
    for (int j = 0; j < groups; ++j) {
      const T theta = q(2 + j);
      lp += dist::normal_lpdf<true>(theta, mu, tau);
      lp += dist::normal_lpdf_sum<true>(dist::slice(y, j * per_group, per_group), theta, sigma_y);
    }
    return lp;
  }

  static HierarchicalNormal from_config(const nlohmann::json& model, const nlohmann::json& data) {
    return build<HierarchicalNormal>(model, data, "hierarchical_normal");
  }
};

/// The same density with its gradient written by hand (one particle per thread).
struct HierarchicalNormalHand : HierarchicalData {
  int dim() const { return groups + 2; }

  KOKKOS_INLINE_FUNCTION double log_density(const hmc::Row& q) const { return value_and_gradient(q, nullptr); }
  KOKKOS_INLINE_FUNCTION double log_density_gradient(const hmc::Row& q, const hmc::Row& grad) const {
    return value_and_gradient(q, &grad);
  }

  /// log p (the terms of HierarchicalNormal but for constants) and, with grad, ∇ log p.
  KOKKOS_INLINE_FUNCTION double value_and_gradient(const hmc::Row& q, const hmc::Row* grad) const {
    const double mu = q(0), tau = hmc::math::exp(q(1)), inv_tau = 1.0 / tau, inv_sy = 1.0 / sigma_y;
    double lp = -0.5 * mu * mu / 25.0 - 0.5 * tau * tau / 25.0 + q(1) - groups * hmc::math::log(tau) -
                groups * per_group * hmc::math::log(sigma_y);
    double d_mu = -mu / 25.0, d_log_tau = -tau * tau / 25.0 + 1.0 - groups;
    for (int j = 0; j < groups; ++j) {
      const double theta = q(2 + j), z = (theta - mu) * inv_tau;
      lp -= 0.5 * z * z;
      d_mu += z * inv_tau;
      d_log_tau += z * z;
      double sz = 0.0, szz = 0.0;
      for (int k = 0; k < per_group; ++k) {
        const double r = (y(j * per_group + k) - theta) * inv_sy;
        sz += r;
        szz += r * r;
      }
      lp -= 0.5 * szz;
      if (grad != nullptr) (*grad)(2 + j) = -z * inv_tau + sz * inv_sy;
    }
    if (grad != nullptr) {
      (*grad)(0) = d_mu;
      (*grad)(1) = d_log_tau;
    }
    return lp;
  }

  static HierarchicalNormalHand from_config(const nlohmann::json& model, const nlohmann::json& data) {
    return build<HierarchicalNormalHand>(model, data, "hierarchical_normal_hand");
  }
};

}  // namespace hierarchical_example

HMC_REGISTER_MODEL(hierarchical_example::HierarchicalNormal, "hierarchical_normal",
                   "groups y[j] ~ Normal(theta[j], sigma_y), theta[j] ~ Normal(mu, tau): route (a), reverse mode");
HMC_REGISTER_MODEL(hierarchical_example::HierarchicalNormalHand, "hierarchical_normal_hand",
                   "hierarchical_normal with its gradient written by hand (the comparison of scripts/bench ad)");
