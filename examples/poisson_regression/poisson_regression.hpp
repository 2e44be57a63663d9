#pragma once
/// \file
/// \brief Poisson regression with a log link, a model kept outside hmc's source tree:
///
///   alpha ~ Normal(0, alpha_scale),  beta ~ Normal(0, beta_scale),
///   y_i ~ Poisson(exp(alpha + beta x_i)),  i = 1..N.
///
/// Both parameters are unconstrained, so q = (alpha, beta) and there is no Jacobian. The
/// log density and its gradient come from hmc/distributions (every normalising constant kept), as
/// a template on the number type: T = double on a GPU or the one-particle host kernel,
/// T = hmc::Pack (8 particles at once) in the host's lane kernel. The last line registers
/// the model; `hmc-build-model poisson_regression.hpp -o hmc-mine` builds an hmc with it.

#include "hmc/app/register.hpp"
#include "hmc/core/types.hpp"
#include "hmc/distributions/dist.hpp"
#include "hmc/keys/data.hpp"
#include "hmc/keys/key.hpp"
#include "hmc/keys/values.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace poisson_example {

namespace dist = hmc::dist;

struct PoissonRegression {
  int n = 0;                 ///< observations
  hmc::VectorView x;         ///< covariate
  hmc::VectorView y;         ///< counts (whole numbers, held as doubles)
  double alpha_scale = 0.0;  ///< /model/priors/alpha_scale
  double beta_scale = 0.0;   ///< /model/priors/beta_scale

  int dim() const { return 2; }
  int num_params() const { return 2; }
  std::vector<std::string> parameter_names() const { return {"alpha", "beta"}; }

  KOKKOS_INLINE_FUNCTION double log_density(const hmc::Row& q) const {
    double lp = dist::normal_lpdf(q(0), 0.0, alpha_scale) + dist::normal_lpdf(q(1), 0.0, beta_scale);
    for (int i = 0; i < n; ++i) lp += dist::poisson_log_lpmf(static_cast<int>(y(i)), q(0) + q(1) * x(i));
    return lp;
  }

  KOKKOS_INLINE_FUNCTION double log_density_gradient(const hmc::Row& q, const hmc::Row& grad) const {
    return log_density_gradient_t<double>(q, grad);
  }

  /// The value and gradient for T = double (Row) and T = hmc::Pack (a block of particles).
  template <class T, class R>
  KOKKOS_INLINE_FUNCTION T log_density_gradient_t(const R& q, const R& grad) const {
    const T alpha = q(0), beta = q(1);
    const auto prior_alpha = dist::normal_lpdf_grad(alpha, 0.0, alpha_scale);
    const auto prior_beta = dist::normal_lpdf_grad(beta, 0.0, beta_scale);
    T lp = prior_alpha.value + prior_beta.value;
    T d_alpha = prior_alpha.d[0], d_beta = prior_beta.d[0];
    for (int i = 0; i < n; ++i) {
      // d/d eta of log Poisson(y | exp(eta)); eta = alpha + beta x_i
      const auto term = dist::poisson_log_lpmf_grad(static_cast<int>(y(i)), alpha + beta * x(i));
      lp += term.value;
      d_alpha += term.d[0];
      d_beta += term.d[0] * x(i);
    }
    grad(0) = d_alpha;
    grad(1) = d_beta;
    return lp;
  }

  KOKKOS_INLINE_FUNCTION void constrain(const hmc::Row& q, const hmc::Row& out) const {
    out(0) = q(0);
    out(1) = q(1);
  }

  // ---- host: config and data ------------------------------------------------

  static hmc::keys::Keys config_keys() {
    return {hmc::keys::number("/model/priors/alpha_scale")
                .positive()
                .default_(2.5)
                .doc("standard deviation of the Normal(0, .) prior on the intercept alpha"),
            hmc::keys::number("/model/priors/beta_scale")
                .positive()
                .default_(1.0)
                .doc("standard deviation of the Normal(0, .) prior on the slope beta")};
  }

  static PoissonRegression from_config(const nlohmann::json& model, const nlohmann::json& data) {
    const hmc::keys::Data d(data, "poisson_regression");
    const auto xs = d.numbers("x");
    const auto ys = d.integers("y", 0, 1000000000);
    d.same_length("x", xs.size(), "y", ys.size());
    const hmc::keys::Values v(model, config_keys());
    PoissonRegression m;
    m.n = static_cast<int>(xs.size());
    m.alpha_scale = v.number("/model/priors/alpha_scale");
    m.beta_scale = v.number("/model/priors/beta_scale");
    m.x = hmc::to_device_view("poisson_regression::x", xs);
    m.y = hmc::to_device_view("poisson_regression::y", std::vector<double>(ys.begin(), ys.end()));
    return m;
  }
};

}  // namespace poisson_example

HMC_REGISTER_MODEL(poisson_example::PoissonRegression, "poisson_regression",
                   "counts y ~ Poisson(exp(alpha + beta x)), Normal priors (an out-of-tree example)");
