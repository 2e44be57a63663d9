#pragma once
/// \file
/// \brief posteriordb's `kidiq-kidscore_interaction`: a linear regression with an interaction, on 434 real
/// rows (Gelman and Hill 2007, ch. 3), from its Stan program (kidscore_interaction.stan):
///
///   kid_score_i ~ Normal(beta_1 + beta_2 mom_hs_i + beta_3 mom_iq_i + beta_4 mom_hs_i mom_iq_i, sigma),
///   beta flat (the Stan program gives it no prior),  sigma ~ HalfCauchy(0, 2.5).
///
/// The likelihood is one `normal_id_glm_lpdf` over the design matrix (mom_hs, mom_iq, mom_hs mom_iq) built
/// once from the data (route (a)). The predictors are not centred, as in the Stan program, so the
/// intercept and the slopes are strongly correlated: a hard case for a diagonal metric.
/// Unconstrained q = (beta_1..beta_4, log sigma).

#include "hmc/app/register.hpp"
#include "hmc/core/types.hpp"
#include "hmc/distributions/dist.hpp"
#include "hmc/keys/data.hpp"
#include "hmc/keys/key.hpp"
#include "hmc/model/autodiff.hpp"
#include "hmc/model/transforms.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace posteriordb_kidiq {

namespace dist = hmc::dist;

struct KidscoreInteraction : hmc::model::AutodiffModel<KidscoreInteraction> {
  static constexpr int P = 3;  ///< predictors besides the intercept
  hmc::MatrixView x;           ///< N x 3: mom_hs, mom_iq, mom_hs * mom_iq
  hmc::VectorView y;           ///< kid_score

  KOKKOS_INLINE_FUNCTION int dim() const { return P + 2; }
  int num_params() const { return P + 2; }
  std::vector<std::string> parameter_names() const { return {"beta[1]", "beta[2]", "beta[3]", "beta[4]", "sigma"}; }

  template <class T, class Q>
  KOKKOS_INLINE_FUNCTION T log_density_t(const Q& q) const {
    const T log_sigma = q(P + 1);
    const T sigma = hmc::transform::positive_forward(log_sigma);
    const T lp = dist::half_cauchy_lpdf<true>(sigma, 2.5) + log_sigma;
    return lp + dist::normal_id_glm_lpdf<true>(y, x, T(q(0)), dist::slice(q, 1, P), sigma);
  }

  KOKKOS_INLINE_FUNCTION void constrain(const hmc::Row& q, const hmc::Row& out) const {
    for (int j = 0; j <= P; ++j) out(j) = q(j);
    out(P + 1) = hmc::transform::positive_forward(q(P + 1));
  }

  static hmc::keys::Keys config_keys() { return {}; }

  /// The data as posteriordb has it: N, kid_score, mom_iq, mom_hs (N numbers each).
  static KidscoreInteraction from_config(const nlohmann::json& /*model*/, const nlohmann::json& data) {
    const hmc::keys::Data d(data, "kidscore_interaction");
    const auto score = d.numbers("kid_score");
    const auto iq = d.numbers("mom_iq");
    const auto hs = d.numbers("mom_hs");
    d.same_length("kid_score", score.size(), "mom_iq", iq.size());
    d.same_length("kid_score", score.size(), "mom_hs", hs.size());
    d.optional_count("N", score.size(), "kid_score");
    KidscoreInteraction m;
    const int n = static_cast<int>(score.size());
    m.x = hmc::MatrixView("kidscore_interaction::x", n, P);
    auto host = Kokkos::create_mirror_view(m.x);
    for (int i = 0; i < n; ++i) {
      host(i, 0) = hs[i];
      host(i, 1) = iq[i];
      host(i, 2) = hs[i] * iq[i];
    }
    Kokkos::deep_copy(m.x, host);
    m.y = hmc::to_device_view("kidscore_interaction::y", score);
    return m;
  }
};

}  // namespace posteriordb_kidiq

HMC_REGISTER_MODEL(posteriordb_kidiq::KidscoreInteraction, "kidscore_interaction",
                   "posteriordb kidiq-kidscore_interaction: regression with an interaction, 434 rows");
