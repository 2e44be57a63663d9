#pragma once
/// \file
/// \brief Motion under constant acceleration, observed with Gaussian noise.
///
///   z_i = h + v0·t_i + c·g·t_i² + ε_i,   ε_i ~ N(0, σ²),   c = 1 (default) or ½ (`/model/half_g`),
///
/// with the times shifted so that the first one is 0. Priors: h ~ Uniform(h_lo, h_hi),
/// v0 ~ Uniform(v_lo, v_hi), g ~ Normal(μ_g, s_g), and, when σ is estimated,
/// σ ~ HalfNormal(σ_scale). h and v0 are sampled through the interval (logistic)
/// transform, g as is, σ through the log transform.
///
/// The likelihood depends on the data only through sufficient statistics: with
/// β = (h, v0, c·g), X the N x 3 design matrix (1, t_i, t_i²) and a reference β₀ (the
/// least-squares fit, so the terms below stay small and cancel little),
///
///   Σ_i r_i² = ‖z − Xβ‖² = RSS₀ − 2 δᵀb + δᵀAδ,   δ = β − β₀,  A = XᵀX,  b = Xᵀ(z − Xβ₀),
///
/// so a gradient costs O(1) whatever the number of observations.

#include "hmc/core/philox.hpp"
#include "hmc/core/types.hpp"
#include "hmc/io/errors.hpp"
#include "hmc/io/json_text.hpp"
#include "hmc/io/schema.hpp"
#include "hmc/model/transforms.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace hmc::models {

struct LinearAcceleration {
  // Priors.
  double h_lo = 70.0, h_hi = 150.0;  ///< h ~ Uniform(h_lo, h_hi)
  double v_lo = 20.0, v_hi = 100.0;  ///< v0 ~ Uniform(v_lo, v_hi)
  double g_mean = -6.0, g_sd = 2.0;  ///< g ~ Normal(g_mean, g_sd)
  double sigma_scale = 10.0;         ///< σ ~ HalfNormal(sigma_scale) when estimated
  // Noise.
  bool estimate_sigma = false;
  double sigma = 3.0;  ///< known σ (when not estimated)
  double c_g = 1.0;    ///< coefficient of g·t²: 1, or ½ with half_g
  // Sufficient statistics of the data (times shifted to start at 0).
  double n = 0.0;                                      ///< number of observations
  double a00 = 0, a01 = 0, a02 = 0, a12 = 0, a22 = 0;  ///< XᵀX: N, Σt, Σt², Σt³, Σt⁴ (a11 = a02)
  double b0 = 0, b1 = 0, b2 = 0;                       ///< Xᵀ(z − Xβ₀)
  double beta0_0 = 0, beta0_1 = 0, beta0_2 = 0;        ///< reference β₀ = (h, v0, c·g)
  double rss0 = 0;                                     ///< ‖z − Xβ₀‖²
  double t_shift = 0;                                  ///< the first time of the data, subtracted from all

  int dim() const { return estimate_sigma ? 4 : 3; }
  int num_params() const { return dim(); }
  std::vector<std::string> parameter_names() const {
    std::vector<std::string> names = {"h", "v0", "g"};
    if (estimate_sigma) names.push_back("sigma");
    return names;
  }

  KOKKOS_INLINE_FUNCTION double log_density(const Row& q) const { return evaluate<false, double>(q, q); }

  KOKKOS_INLINE_FUNCTION double log_density_gradient(const Row& q, const Row& grad) const {
    return evaluate<true, double>(q, grad);
  }

  /// The gradient for T = double (Row) and for T = Pack (PackRow: a block of particles).
  template <class T, class R>
  KOKKOS_INLINE_FUNCTION T log_density_gradient_t(const R& q, const R& grad) const {
    return evaluate<true, T>(q, grad);
  }

  KOKKOS_INLINE_FUNCTION void constrain(const Row& q, const Row& out) const {
    out(0) = transform::interval_forward(q(0), h_lo, h_hi);
    out(1) = transform::interval_forward(q(1), v_lo, v_hi);
    out(2) = q(2);
    if (estimate_sigma) out(3) = transform::positive_forward(q(3));
  }

  /// log p(q) up to a constant, on the unconstrained scale (Jacobians included); with
  /// kGrad also writes d/dq into grad.
  template <bool kGrad, class T, class R>
  KOKKOS_INLINE_FUNCTION T evaluate(const R& q, const R& grad) const {
    const T yh = q(0), yv = q(1), g = q(2);
    const T h = transform::interval_forward(yh, h_lo, h_hi);
    const T v0 = transform::interval_forward(yv, v_lo, v_hi);
    const T d0 = h - beta0_0, d1 = v0 - beta0_1, d2 = c_g * g - beta0_2;
    const T ad0 = a00 * d0 + a01 * d1 + a02 * d2;
    const T ad1 = a01 * d0 + a02 * d1 + a12 * d2;
    const T ad2 = a02 * d0 + a12 * d1 + a22 * d2;
    const T ssr = rss0 - 2.0 * (d0 * b0 + d1 * b1 + d2 * b2) + (d0 * ad0 + d1 * ad1 + d2 * ad2);

    T ys = 0.0, inv_var = 1.0 / (sigma * sigma), lp = 0.0;
    if (estimate_sigma) {
      ys = q(3);
      inv_var = math::exp(-2.0 * ys);
      const T s = math::exp(ys);
      // -N log σ from the likelihood, the half-normal prior, and log|J| = ys of σ = exp(ys).
      lp += -n * ys - 0.5 * (s / sigma_scale) * (s / sigma_scale) + ys;
    }
    const T zg = (g - g_mean) / g_sd;
    lp += -0.5 * ssr * inv_var - 0.5 * zg * zg;
    // log|J| of the interval maps (the uniform priors are constant inside their intervals).
    lp += math::log_sigmoid(yh) + math::log_sigmoid(-yh) + math::log_sigmoid(yv) + math::log_sigmoid(-yv);

    if constexpr (kGrad) {
      // d log p / d β = -(Aδ - b) / σ²
      const T gb0 = -(ad0 - b0) * inv_var, gb1 = -(ad1 - b1) * inv_var, gb2 = -(ad2 - b2) * inv_var;
      grad(0) = gb0 * transform::interval_dx_dy(yh, h_lo, h_hi) + transform::interval_log_jacobian_grad(yh);
      grad(1) = gb1 * transform::interval_dx_dy(yv, v_lo, v_hi) + transform::interval_log_jacobian_grad(yv);
      grad(2) = c_g * gb2 - zg / g_sd;
      if (estimate_sigma) {
        const T s = math::exp(ys);
        grad(3) = ssr * inv_var - n - (s / sigma_scale) * (s / sigma_scale) + 1.0;
      }
    }
    return lp;
  }

  /// A prior draw on the sampled scale: h and v0 uniform (their logit-scale images),
  /// g normal, and σ half-normal when estimated.
  KOKKOS_INLINE_FUNCTION void sample_prior(const rng::ParticleStream& s, std::uint32_t use, const Row& q) const {
    double u0, u1, z0, z1;
    s.uniform2(0, use, u0, u1);
    s.normal2(0, use + 1u, z0, z1);
    // u + 2^-54 lies strictly inside (0, 1): the logit stays finite.
    const double a = u0 + 0x1p-54, b = u1 + 0x1p-54;
    q(0) = math::log(a) - math::log1p(-a);
    q(1) = math::log(b) - math::log1p(-b);
    q(2) = g_mean + g_sd * z0;
    if (estimate_sigma) q(3) = math::log(sigma_scale * math::fabs(z1) + 1e-300);
  }

  // ---- host: config and data ------------------------------------------------

  static std::vector<io::KeySpec> config_keys() {
    using io::KeyType;
    using nlohmann::json;
    return {
        {"/model/priors/h",
         KeyType::kNumberArray,
         json::array({70.0, 150.0}),
         {},
         {},
         false,
         {},
         false,
         "[lo, hi] of the uniform prior of the initial height h"},
        {"/model/priors/v0",
         KeyType::kNumberArray,
         json::array({20.0, 100.0}),
         {},
         {},
         false,
         {},
         false,
         "[lo, hi] of the uniform prior of the initial velocity v0"},
        {"/model/priors/g",
         KeyType::kNumberArray,
         json::array({-6.0, 2.0}),
         {},
         {},
         false,
         {},
         false,
         "[mean, sd] of the normal prior of the acceleration g"},
        {"/model/priors/sigma_scale",
         KeyType::kNumber,
         10.0,
         0.0,
         {},
         true,
         {},
         false,
         "scale of the half-normal prior of sigma (used with /model/estimate_sigma)"},
        {"/model/sigma",
         KeyType::kNumber,
         3.0,
         0.0,
         {},
         true,
         {},
         false,
         "known noise sd sigma (ignored with /model/estimate_sigma)"},
        {"/model/estimate_sigma",
         KeyType::kBoolean,
         false,
         {},
         {},
         false,
         {},
         false,
         "sample sigma as a parameter instead of fixing it to /model/sigma"},
        {"/model/half_g",
         KeyType::kBoolean,
         false,
         {},
         {},
         false,
         {},
         false,
         "use 1/2 g t^2 instead of g t^2 in the mean"},
    };
  }

  /// The two numbers of a prior key, checked; `what` names them ("lo, hi" / "mean, sd").
  static std::pair<double, double> prior_pair(const nlohmann::json& model, const char* key, double d0, double d1,
                                              bool interval) {
    const std::string where = std::string("/model/priors/") + key;
    if (!model.contains("priors") || !model.at("priors").contains(key)) return {d0, d1};
    const auto& v = model.at("priors").at(key);
    const char* shape = interval ? "[lo, hi]" : "[mean, sd]";
    if (!v.is_array() || v.size() != 2 || !v[0].is_number() || !v[1].is_number()) {
      throw ConfigError("config error: " + where + " must be " + shape + ", two numbers (got " + io::shown(v) + ")");
    }
    const double x0 = v[0].get<double>(), x1 = v[1].get<double>();
    if (interval && !(x0 < x1)) {
      throw ConfigError("config error: " + where + " must have lo < hi (got " + io::shown(v) + ")");
    }
    if (!interval && !(x1 > 0.0)) {
      throw ConfigError("config error: " + where + " must have sd > 0 (got " + io::shown(v) + ")");
    }
    return {x0, x1};
  }

  /// Times and observations from `{"t": [...], "z": [...]}` (an optional "N" must match;
  /// other keys, e.g. "sigmaObs", are ignored).
  static void read_data(const nlohmann::json& data, std::vector<double>& t, std::vector<double>& z) {
    if (data.is_null()) throw DataError("data error: linear_acceleration needs data (/model/data)");
    if (!data.is_object()) throw DataError("data error: linear_acceleration data must be an object with t and z");
    for (const char* key : {"t", "z"}) {
      if (!data.contains(key)) {
        throw DataError(std::string("data error: linear_acceleration data needs /") + key + " (an array of numbers)");
      }
      const auto& a = data.at(key);
      if (!a.is_array() || a.empty()) {
        throw DataError(std::string("data error: /") + key + " must be a non-empty array of numbers");
      }
      auto& out = key[0] == 't' ? t : z;
      out.clear();
      for (std::size_t i = 0; i < a.size(); ++i) {
        if (!a[i].is_number() || !std::isfinite(a[i].get<double>())) {
          throw DataError(std::string("data error: /") + key + "/" + std::to_string(i) + " must be a number (got " +
                          io::shown(a[i]) + ")");
        }
        out.push_back(a[i].get<double>());
      }
    }
    if (t.size() != z.size()) {
      throw DataError("data error: /t has " + std::to_string(t.size()) + " entries but /z has " +
                      std::to_string(z.size()));
    }
    if (data.contains("N")) {
      const auto& nn = data.at("N");
      if (!nn.is_number_integer() || nn.get<long long>() != static_cast<long long>(z.size())) {
        throw DataError("data error: /N is " + io::shown(nn) + " but /z has " + std::to_string(z.size()) + " entries");
      }
    }
  }

  static LinearAcceleration from_config(const nlohmann::json& model, const nlohmann::json& data) {
    LinearAcceleration m;
    std::tie(m.h_lo, m.h_hi) = prior_pair(model, "h", 70.0, 150.0, true);
    std::tie(m.v_lo, m.v_hi) = prior_pair(model, "v0", 20.0, 100.0, true);
    std::tie(m.g_mean, m.g_sd) = prior_pair(model, "g", -6.0, 2.0, false);
    if (model.contains("priors") && model.at("priors").contains("sigma_scale")) {
      m.sigma_scale = model.at("priors").at("sigma_scale").get<double>();
      if (!(m.sigma_scale > 0.0)) throw ConfigError("config error: /model/priors/sigma_scale must be > 0");
    }
    m.sigma = model.value("sigma", 3.0);
    if (!(m.sigma > 0.0)) throw ConfigError("config error: /model/sigma must be > 0");
    m.estimate_sigma = model.value("estimate_sigma", false);
    m.c_g = model.value("half_g", false) ? 0.5 : 1.0;

    std::vector<double> t, z;
    read_data(data, t, z);
    m.set_data(t, z);
    return m;
  }

  /// Sufficient statistics of (t, z); the times are shifted so that t[0] becomes 0.
  void set_data(std::vector<double> t, const std::vector<double>& z) {
    t_shift = t.front();
    for (auto& x : t) x -= t_shift;
    n = static_cast<double>(t.size());
    double s[5] = {0, 0, 0, 0, 0}, sz[3] = {0, 0, 0};
    for (std::size_t i = 0; i < t.size(); ++i) {
      const double p[5] = {1.0, t[i], t[i] * t[i], t[i] * t[i] * t[i], t[i] * t[i] * t[i] * t[i]};
      for (int k = 0; k < 5; ++k) s[k] += p[k];
      for (int k = 0; k < 3; ++k) sz[k] += z[i] * p[k];
    }
    a00 = s[0];
    a01 = s[1];
    a02 = s[2];
    a12 = s[3];
    a22 = s[4];
    // β₀: least squares if the normal equations are well posed (3+ distinct times),
    // else (mean z, 0, 0). Any β₀ is exact; a good one only keeps rounding small.
    double beta[3] = {sz[0] / n, 0.0, 0.0};
    double m3[3][4] = {{a00, a01, a02, sz[0]}, {a01, a02, a12, sz[1]}, {a02, a12, a22, sz[2]}};
    bool ok = true;
    for (int c = 0; c < 3 && ok; ++c) {
      int piv = c;
      for (int r = c + 1; r < 3; ++r)
        if (std::abs(m3[r][c]) > std::abs(m3[piv][c])) piv = r;
      if (!(std::abs(m3[piv][c]) > 1e-12 * (std::abs(a00) + std::abs(a22)))) ok = false;
      for (int k = 0; k < 4 && ok; ++k) std::swap(m3[c][k], m3[piv][k]);
      for (int r = c + 1; r < 3 && ok; ++r) {
        const double f = m3[r][c] / m3[c][c];
        for (int k = c; k < 4; ++k) m3[r][k] -= f * m3[c][k];
      }
    }
    if (ok) {
      double x[3];
      for (int r = 2; r >= 0; --r) {
        double v = m3[r][3];
        for (int k = r + 1; k < 3; ++k) v -= m3[r][k] * x[k];
        x[r] = v / m3[r][r];
      }
      if (std::isfinite(x[0]) && std::isfinite(x[1]) && std::isfinite(x[2])) {
        for (int k = 0; k < 3; ++k) beta[k] = x[k];
      }
    }
    beta0_0 = beta[0];
    beta0_1 = beta[1];
    beta0_2 = beta[2];
    // Residuals at β₀ summed directly, not from the raw moments, to avoid cancellation.
    rss0 = b0 = b1 = b2 = 0.0;
    for (std::size_t i = 0; i < t.size(); ++i) {
      const double r = z[i] - (beta0_0 + beta0_1 * t[i] + beta0_2 * t[i] * t[i]);
      rss0 += r * r;
      b0 += r;
      b1 += r * t[i];
      b2 += r * t[i] * t[i];
    }
  }
};

}  // namespace hmc::models
