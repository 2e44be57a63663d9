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

#include "hmc/core/philox.hpp"
#include "hmc/core/types.hpp"
#include "hmc/io/errors.hpp"
#include "hmc/io/json_text.hpp"
#include "hmc/io/schema.hpp"
#include "hmc/model/autodiff.hpp"
#include "hmc/model/transforms.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <string>
#include <vector>

namespace hmc::models {

struct EightSchools : model::AutodiffModel<EightSchools> {
  static constexpr double kMuLoc = 0.0, kMuScale = 5.0, kTauScale = 5.0;  ///< prior defaults

  int schools = 0;               ///< J
  VectorView y;                  ///< observed effect per school
  VectorView sigma;              ///< its standard error
  double mu_loc = kMuLoc;        ///< prior location of mu
  double mu_scale = kMuScale;    ///< prior scale of mu
  double tau_scale = kTauScale;  ///< half-Cauchy scale of tau
  double log_const = 0.0;        ///< every normalising constant, summed on the host

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

  static std::vector<io::KeySpec> config_keys() {
    using io::KeyType;
    return {
        {"/model/priors/mu_loc", KeyType::kNumber, kMuLoc, {}, {}, false, {}, false, "mean of the Normal prior on mu"},
        {"/model/priors/mu_scale",
         KeyType::kNumber,
         kMuScale,
         0.0,
         {},
         true,
         {},
         false,
         "standard deviation of the Normal prior on mu"},
        {"/model/priors/tau_scale",
         KeyType::kNumber,
         kTauScale,
         0.0,
         {},
         true,
         {},
         false,
         "scale of the half-Cauchy prior on tau"}};
  }

  /// `data[key]`: a non-empty array of numbers.
  static std::vector<double> read_numbers(const nlohmann::json& data, const std::string& key) {
    if (!data.contains(key)) throw DataError("data error: eight_schools data needs \"" + key + "\"");
    const auto& a = data.at(key);
    if (!a.is_array() || a.empty()) throw DataError("data error: /" + key + " must be a non-empty array of numbers");
    std::vector<double> out;
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (!a[i].is_number()) {
        throw DataError("data error: /" + key + "/" + std::to_string(i) + " must be a number (got " + io::shown(a[i]) +
                        ")");
      }
      out.push_back(a[i].get<double>());
    }
    return out;
  }

  static EightSchools from_config(const nlohmann::json& model, const nlohmann::json& data) {
    if (!data.is_object())
      throw DataError("data error: eight_schools needs data (/model/data) with \"y\" and \"sigma\"");
    const auto ys = read_numbers(data, "y"), sigmas = read_numbers(data, "sigma");
    if (ys.size() != sigmas.size()) {
      throw DataError("data error: /y has " + std::to_string(ys.size()) + " entries but /sigma has " +
                      std::to_string(sigmas.size()));
    }
    if (data.contains("J") &&
        !(data.at("J").is_number_integer() && data.at("J").get<long>() == static_cast<long>(ys.size()))) {
      throw DataError("data error: /J must equal the length of /y (" + std::to_string(ys.size()) + "; got " +
                      io::shown(data.at("J")) + ")");
    }
    for (std::size_t j = 0; j < sigmas.size(); ++j) {
      if (!(sigmas[j] > 0.0)) {
        throw DataError("data error: /sigma/" + std::to_string(j) + " must be > 0 (got " +
                        io::shown(nlohmann::json(sigmas[j])) + ")");
      }
    }
    EightSchools m;
    const nlohmann::json priors = model.value("priors", nlohmann::json::object());
    m.mu_loc = priors.value("mu_loc", kMuLoc);
    m.mu_scale = priors.value("mu_scale", kMuScale);
    m.tau_scale = priors.value("tau_scale", kTauScale);
    if (!(m.mu_scale > 0.0)) throw ConfigError("config error: /model/priors/mu_scale must be > 0");
    if (!(m.tau_scale > 0.0)) throw ConfigError("config error: /model/priors/tau_scale must be > 0");
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
