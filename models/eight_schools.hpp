#pragma once
/// \file
/// \brief The eight schools hierarchical model (Rubin 1981), non-centred, with an
/// automatic gradient: only the log density is written, as a template on its scalar.
///
///   mu ~ Normal(mu_loc, mu_scale),  tau ~ HalfCauchy(0, tau_scale),
///   theta_tilde_j ~ Normal(0, 1),   theta_j = mu + tau theta_tilde_j,
///   y_j ~ Normal(theta_j, sigma_j),  j = 1..J.
///
/// Unconstrained q = (mu, log tau, theta_tilde_1..J); the log density includes the
/// log-Jacobian log tau of tau = exp(q_1) and every normalising constant, so it is
/// the exact log joint density of (q, y). Output: mu, tau, theta[1..J].
///
/// After sampling: the pointwise log-likelihood log N(y_j | theta_j, sigma_j), one per
/// school, and posterior predictive draws of y_j (the pointwise forms of the members), with
/// the observed y and the covariate sigma (draws.nc's observed_data and constant_data); the
/// generated quantity theta_new, the effect of a new school.

#include "hmc/core/draw_source.hpp"
#include "hmc/core/errors.hpp"
#include "hmc/core/philox.hpp"
#include "hmc/core/types.hpp"
#include "hmc/keys/data.hpp"
#include "hmc/keys/key.hpp"
#include "hmc/keys/values.hpp"
#include "hmc/model/autodiff.hpp"
#include "hmc/model/transforms.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <string>
#include <vector>

namespace hmc::models {

struct EightSchools : model::AutodiffModel<EightSchools> {
  int schools = 0;         ///< J
  VectorView y;            ///< observed effect per school
  VectorView sigma;        ///< its standard error
  double mu_loc = 0.0;     ///< prior location of mu (/model/priors/mu_loc)
  double mu_scale = 0.0;   ///< prior scale of mu (/model/priors/mu_scale)
  double tau_scale = 0.0;  ///< half-Cauchy scale of tau (/model/priors/tau_scale)
  double log_const = 0.0;  ///< every normalising constant, summed on the host

  KOKKOS_INLINE_FUNCTION int dim() const { return 2 + schools; }
  int num_params() const { return 2 + schools; }
  std::vector<std::string> parameter_names() const {
    std::vector<std::string> names = {"mu", "tau"};
    for (int j = 0; j < schools; ++j) names.push_back("theta[" + std::to_string(j + 1) + "]");
    return names;
  }

  /// log p(q) for T = double or hmc::Dual; q(i) yields a T.
  template <class T, class Q>
  KOKKOS_INLINE_FUNCTION T log_density_t(const Q& q) const {
    const T mu = q(0), log_tau = q(1);
    const T tau = transform::positive_forward(log_tau);
    const T zmu = (mu - mu_loc) / mu_scale, u = tau / tau_scale;
    // Normal prior on mu, half-Cauchy on tau, and log|J| = log tau.
    T lp = log_const - 0.5 * zmu * zmu - math::log1p(u * u) + log_tau;
    for (int j = 0; j < schools; ++j) {
      const T theta_tilde = q(2 + j);
      const T z = (y(j) - (mu + tau * theta_tilde)) / sigma(j);
      lp -= 0.5 * (theta_tilde * theta_tilde + z * z);
    }
    return lp;
  }

  /// log N(y_j | theta_j, sigma_j), normalising constant included, of the recorded draw
  /// (mu, tau, theta[1..J]).
  KOKKOS_INLINE_FUNCTION double log_likelihood(const Row& draw, int j) const {
    const double z = (y(j) - draw(2 + j)) / sigma(j);
    return -0.5 * z * z - math::log(sigma(j)) - 0.5 * math::log(2.0 * math::pi());
  }

  /// A posterior predictive draw of y_j: Normal(theta_j, sigma_j).
  KOKKOS_INLINE_FUNCTION double posterior_predictive(const Row& draw, int j, const rng::DrawStream& r) const {
    return draw(2 + j) + sigma(j) * r.normal(0);
  }

  /// theta_new ~ Normal(mu, tau): the effect of a new school.
  std::vector<ArrayShape> generated_quantities() const { return {{"theta_new", {}, {}}}; }
  KOKKOS_INLINE_FUNCTION void generate(const Row& draw, const rng::DrawStream& r, const Row& out) const {
    out(0) = draw(0) + draw(1) * r.normal(0);
  }

  std::vector<DataArray> observations() const { return {data_array("y", {"school"}, y)}; }
  std::vector<DataArray> constant_data() const { return {data_array("sigma", {"school"}, sigma)}; }

  KOKKOS_INLINE_FUNCTION void constrain(const Row& q, const Row& out) const {
    const double tau = transform::positive_forward(q(1));
    out(0) = q(0);
    out(1) = tau;
    for (int j = 0; j < schools; ++j) out(2 + j) = q(0) + tau * q(2 + j);
  }

  /// A prior draw on the sampled scale: mu normal, log tau with tau half-Cauchy
  /// (tau = scale · tan(π u / 2)), theta_tilde standard normal.
  KOKKOS_INLINE_FUNCTION void sample_prior(const rng::ParticleStream& s, std::uint32_t use, const Row& q) const {
    double u, unused, z0, z1;
    s.uniform2(0, use, u, unused);
    s.normal2(0, use + 1u, z0, z1);
    q(0) = mu_loc + mu_scale * z0;
    const double v = u + 0x1p-54;  // strictly inside (0, 1)
    q(1) = math::log(tau_scale * math::sin(0.5 * math::pi() * v) / math::cos(0.5 * math::pi() * v));
    for (int j = 0; j < schools; j += 2) {
      s.normal2(0, use + 2u + static_cast<std::uint32_t>(j / 2), z0, z1);
      q(2 + j) = z0;
      if (j + 1 < schools) q(3 + j) = z1;
    }
  }

  // ---- host: config and data ------------------------------------------------

  static keys::Keys config_keys() {
    return {
        keys::number("/model/priors/mu_loc").default_(0.0).doc("mean of the Normal prior on the population mean mu"),
        keys::number("/model/priors/mu_scale")
            .positive()
            .default_(5.0)
            .doc("standard deviation of the Normal prior on mu"),
        keys::number("/model/priors/tau_scale")
            .positive()
            .default_(5.0)
            .doc("scale of the half-Cauchy prior on the population standard deviation tau")};
  }

  static EightSchools from_config(const nlohmann::json& model, const nlohmann::json& data) {
    const keys::Data d(data, "eight_schools");
    const auto ys = d.numbers("y");
    const auto sigmas = d.numbers(
        "sigma", [](double s) { return s > 0.0; }, "> 0");
    d.same_length("y", ys.size(), "sigma", sigmas.size());
    d.optional_count("J", ys.size(), "y");
    const keys::Values v(model, config_keys());
    EightSchools m;
    m.mu_loc = v.number("/model/priors/mu_loc");
    m.mu_scale = v.number("/model/priors/mu_scale");
    m.tau_scale = v.number("/model/priors/tau_scale");
    m.schools = static_cast<int>(ys.size());

    // log N(mu) + log HalfCauchy(tau) + J log N(theta_tilde) + Σ log N(y_j): the constants.
    const double half_log_2pi = 0.5 * std::log(2.0 * math::pi());
    m.log_const = -half_log_2pi - std::log(m.mu_scale) + std::log(2.0 / (math::pi() * m.tau_scale)) -
                  2.0 * m.schools * half_log_2pi;
    for (double s : sigmas) m.log_const -= std::log(s);

    m.y = to_device_view("eight_schools::y", ys);
    m.sigma = to_device_view("eight_schools::sigma", sigmas);
    return m;
  }
};

}  // namespace hmc::models
