#pragma once
/// \file
/// \brief Poisson regression with a log link, a model kept outside hmc's source tree:
///
///   alpha ~ Normal(0, alpha_scale),  beta ~ Normal(0, beta_scale),
///   y_i ~ Poisson(exp(alpha + beta x_i)),  i = 1..N.
///
/// Both parameters are unconstrained, so q = (alpha, beta) and there is no Jacobian. The
/// log density is written once, as a template on its number type T, with hmc/distributions
/// (every normalising constant kept); hmc differentiates it (route (a),
/// docs/adding-a-model.md): the likelihood is one GLM, `poisson_log_glm_lpmf`, whose gradient
/// is one pass over the data. The last line registers the model;
/// `hmc-build-model poisson_regression.hpp -o hmc-mine` builds an hmc with it.

#include "hmc/app/register.hpp"
#include "hmc/core/types.hpp"
#include "hmc/distributions/dist.hpp"
#include "hmc/keys/data.hpp"
#include "hmc/keys/key.hpp"
#include "hmc/keys/values.hpp"
#include "hmc/model/autodiff.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace poisson_example {

namespace dist = hmc::dist;

struct PoissonRegression : hmc::model::AutodiffModel<PoissonRegression> {
  int n = 0;                 ///< observations
  hmc::VectorView x;         ///< covariate
  hmc::VectorView y;         ///< counts (whole numbers, held as doubles)
  double alpha_scale = 0.0;  ///< /model/priors/alpha_scale
  double beta_scale = 0.0;   ///< /model/priors/beta_scale

  KOKKOS_INLINE_FUNCTION int dim() const { return 2; }
  int num_params() const { return 2; }
  std::vector<std::string> parameter_names() const { return {"alpha", "beta"}; }

  /// log p(q) for every number type T that hmc uses: double, and those of its gradients.
  template <class T, class Q>
  KOKKOS_INLINE_FUNCTION T log_density_t(const Q& q) const {
    const T alpha = q(0), beta = q(1);
    T lp = dist::normal_lpdf(alpha, 0.0, alpha_scale) + dist::normal_lpdf(beta, 0.0, beta_scale);
    // Σ_i log Poisson(y_i | exp(alpha + x_i beta)): x as the one column of a design matrix.
    return lp + dist::poisson_log_glm_lpmf(y, dist::as_column(x), alpha, dist::slice(q, 1));
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
