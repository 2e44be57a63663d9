#pragma once
/// \file
/// \brief posteriordb's `arK-arK`: an autoregressive model of order K, from its Stan program (ark.stan):
///
///   alpha ~ Normal(0, 10),  beta_k ~ Normal(0, 10),  sigma ~ HalfCauchy(0, 2.5),
///   y_t ~ Normal(alpha + Σ_k beta_k y_{t-k}, sigma),  t = K+1..T.
///
/// The likelihood is a linear regression of y_t on its K lags, so it is one `normal_id_glm_lpdf` over a
/// design matrix of lags built once from the data (route (a), docs/adding-a-model.md). Unconstrained
/// q = (alpha, beta_1..beta_K, log sigma); the log-Jacobian of sigma = exp(q_{K+1}) is q_{K+1}. Stan drops
/// constants (`~`); so does this density (`<true>`), which changes nothing in the posterior.

#include "hmc/app/register.hpp"
#include "hmc/core/errors.hpp"
#include "hmc/core/types.hpp"
#include "hmc/distributions/dist.hpp"
#include "hmc/keys/data.hpp"
#include "hmc/keys/key.hpp"
#include "hmc/model/autodiff.hpp"
#include "hmc/model/transforms.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace posteriordb_ark {

namespace dist = hmc::dist;

struct ArK : hmc::model::AutodiffModel<ArK> {
  int lags = 0;       ///< K
  hmc::MatrixView x;  ///< (T - K) x K: row t holds y_{t-1}, ..., y_{t-K}
  hmc::VectorView y;  ///< y_{K+1}, ..., y_T

  KOKKOS_INLINE_FUNCTION int dim() const { return lags + 2; }
  int num_params() const { return lags + 2; }
  std::vector<std::string> parameter_names() const {
    std::vector<std::string> names = {"alpha"};
    for (int k = 0; k < lags; ++k) names.push_back("beta[" + std::to_string(k + 1) + "]");
    names.emplace_back("sigma");
    return names;
  }

  template <class T, class Q>
  KOKKOS_INLINE_FUNCTION T log_density_t(const Q& q) const {
    const T alpha = q(0), log_sigma = q(lags + 1);
    const T sigma = hmc::transform::positive_forward(log_sigma);
    const auto beta = dist::slice(q, 1, lags);
    T lp = dist::normal_lpdf<true>(alpha, 0.0, 10.0) + dist::half_cauchy_lpdf<true>(sigma, 2.5) + log_sigma;
    for (int k = 0; k < lags; ++k) lp += dist::normal_lpdf<true>(T(beta(k)), 0.0, 10.0);
    return lp + dist::normal_id_glm_lpdf<true>(y, x, alpha, beta, sigma);
  }

  KOKKOS_INLINE_FUNCTION void constrain(const hmc::Row& q, const hmc::Row& out) const {
    for (int j = 0; j <= lags; ++j) out(j) = q(j);
    out(lags + 1) = hmc::transform::positive_forward(q(lags + 1));
  }

  static hmc::keys::Keys config_keys() { return {}; }

  /// The data as posteriordb has it: K, T and y (T numbers).
  static ArK from_config(const nlohmann::json& /*model*/, const nlohmann::json& data) {
    const hmc::keys::Data d(data, "ark");
    const auto ys = d.numbers("y");
    const auto k = d.integer("K", 1, 1000);
    d.optional_count("T", ys.size(), "y");
    if (static_cast<std::size_t>(k) >= ys.size())
      throw hmc::DataError("data error: ark data: \"K\" (" + std::to_string(k) +
                           ") must be less than the length of \"y\"");
    ArK m;
    m.lags = static_cast<int>(k);
    const int rows = static_cast<int>(ys.size()) - m.lags;
    m.x = hmc::MatrixView("ark::x", rows, m.lags);
    auto host = Kokkos::create_mirror_view(m.x);
    for (int i = 0; i < rows; ++i) {
      for (int j = 0; j < m.lags; ++j) host(i, j) = ys[m.lags + i - 1 - j];
    }
    Kokkos::deep_copy(m.x, host);
    m.y = hmc::to_device_view("ark::y", std::vector<double>(ys.begin() + m.lags, ys.end()));
    return m;
  }
};

}  // namespace posteriordb_ark

HMC_REGISTER_MODEL(posteriordb_ark::ArK, "ark", "posteriordb arK-arK: AR(K) regression of y_t on its K lags");
