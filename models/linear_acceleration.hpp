#pragma once
/// \file
/// \brief Motion under constant acceleration, observed with Gaussian noise.
///
/// Keeps a hand-written gradient: its density, evaluate<false, T>, differentiated in reverse mode
/// (route (a)) ran at 0.13x this one's rate in the lanes (4.6e6 against 3.4e7 gradients/s,
/// configs/bench/linear_accel.json, 2 cores): the sufficient statistics leave a few dozen flops,
/// against a tape of some forty nodes.
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

#include "hmc/core/draw_source.hpp"
#include "hmc/core/errors.hpp"
#include "hmc/core/philox.hpp"
#include "hmc/core/text.hpp"
#include "hmc/core/types.hpp"
#include "hmc/keys/data.hpp"
#include "hmc/keys/key.hpp"
#include "hmc/keys/values.hpp"
#include "hmc/model/transforms.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace hmc::models {

struct LinearAcceleration {
  // Priors (from_config sets them from /model/priors; the defaults are config_keys()').
  double h_lo = 0, h_hi = 0;    ///< h ~ Uniform(h_lo, h_hi)
  double v_lo = 0, v_hi = 0;    ///< v0 ~ Uniform(v_lo, v_hi)
  double g_mean = 0, g_sd = 0;  ///< g ~ Normal(g_mean, g_sd)
  double sigma_scale = 0;       ///< σ ~ HalfNormal(sigma_scale) when estimated
  // Noise.
  bool estimate_sigma = false;
  double sigma = 0;  ///< known σ (when not estimated)
  double c_g = 1.0;  ///< coefficient of g·t²: 1, or ½ with half_g
  // Sufficient statistics of the data (times shifted to start at 0).
  double n = 0.0;                                      ///< number of observations
  double a00 = 0, a01 = 0, a02 = 0, a12 = 0, a22 = 0;  ///< XᵀX: N, Σt, Σt², Σt³, Σt⁴ (a11 = a02)
  double b0 = 0, b1 = 0, b2 = 0;                       ///< Xᵀ(z − Xβ₀)
  double beta0_0 = 0, beta0_1 = 0, beta0_2 = 0;        ///< reference β₀ = (h, v0, c·g)
  double rss0 = 0;                                     ///< ‖z − Xβ₀‖²
  double t_shift = 0;                                  ///< the first time of the data, subtracted from all
  VectorView t_obs, z_obs;  ///< the shifted times and the observations (the pointwise log-likelihood only)

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

  /// log N(z_i | h + v0 t_i + c g t_i², σ) of the recorded draw (h, v0, g[, sigma]), one per
  /// observation: the one place the model reads the data one by one (draws.nc's
  /// log_likelihood group).
  KOKKOS_INLINE_FUNCTION double log_likelihood(const Row& draw, int i) const {
    const double t = t_obs(i), s = estimate_sigma ? draw(3) : sigma;
    const double r = (z_obs(i) - (draw(0) + draw(1) * t + c_g * draw(2) * t * t)) / s;
    return -0.5 * r * r - math::log(s) - 0.5 * math::log(2.0 * math::pi());
  }

  /// A posterior predictive draw of z_i: Normal(h + v0 t_i + c g t_i², σ).
  KOKKOS_INLINE_FUNCTION double posterior_predictive(const Row& draw, int i, const rng::DrawStream& r) const {
    const double t = t_obs(i), s = estimate_sigma ? draw(3) : sigma;
    return draw(0) + draw(1) * t + c_g * draw(2) * t * t + s * r.normal(0);
  }

  /// The observations z (observed_data) and their times t (constant_data).
  std::vector<DataArray> observations() const { return {data_array("z", {"time"}, z_obs)}; }
  std::vector<DataArray> constant_data() const {
    DataArray t = data_array("t", {"time"}, t_obs);
    for (double& x : t.values) x += t_shift;  // the times as given
    return {t};
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

  static keys::Keys config_keys() {
    using nlohmann::json;
    return {
        keys::numbers("/model/priors/h")
            .length(2)
            .default_(json::array({70.0, 150.0}))
            .allowed("two numbers, lo < hi")
            .doc("[lo, hi] of the Uniform prior on the initial height h"),
        keys::numbers("/model/priors/v0")
            .length(2)
            .default_(json::array({20.0, 100.0}))
            .allowed("two numbers, lo < hi")
            .doc("[lo, hi] of the Uniform prior on the initial velocity v0"),
        keys::numbers("/model/priors/g")
            .length(2)
            .default_(json::array({-6.0, 2.0}))
            .allowed("two numbers, sd > 0")
            .doc("[mean, sd] of the Normal prior on the acceleration coefficient g"),
        keys::number("/model/priors/sigma_scale")
            .positive()
            .default_(10.0)
            .doc("scale of the half-normal prior on σ; used only with `/model/estimate_sigma`"),
        keys::number("/model/sigma")
            .positive()
            .default_(3.0)
            .doc("the known noise sd σ (the standard data was simulated with σ = 3); ignored with "
                 "`/model/estimate_sigma`"),
        keys::boolean("/model/estimate_sigma")
            .default_(false)
            .doc("`true`: σ is a fourth parameter, `sigma`, with the half-normal prior"),
        keys::boolean("/model/half_g")
            .default_(false)
            .doc("`false`: the mean is h + v0·t + g·t² (the benchmark's parametrisation); `true`: h + v0·t + ½·g·t², "
                 "so g "
                 "is the physical acceleration"),
    };
  }

  /// The two numbers of a prior pair; `interval`: [lo, hi] with lo < hi, else [mean, sd]
  /// with sd > 0 (the key checks that there are two).
  static std::pair<double, double> prior_pair(const keys::Values& v, const std::string& pointer, bool interval) {
    const auto x = v.numbers(pointer);
    if (interval && !(x[0] < x[1])) {
      throw ConfigError("config error: " + pointer + " must have lo < hi (got " + shown(nlohmann::json(x)) + ")");
    }
    if (!interval && !(x[1] > 0.0)) {
      throw ConfigError("config error: " + pointer + " must have sd > 0 (got " + shown(nlohmann::json(x)) + ")");
    }
    return {x[0], x[1]};
  }

  /// Times and observations from `{"t": [...], "z": [...]}` (an optional "N" must match;
  /// other keys, e.g. "sigmaObs", are ignored).
  static void read_data(const nlohmann::json& data, std::vector<double>& t, std::vector<double>& z) {
    const keys::Data d(data, "linear_acceleration");
    t = d.numbers("t");
    z = d.numbers("z");
    d.same_length("t", t.size(), "z", z.size());
    d.optional_count("N", z.size(), "z");
  }

  static LinearAcceleration from_config(const nlohmann::json& model, const nlohmann::json& data) {
    const keys::Values v(model, config_keys());
    LinearAcceleration m;
    std::tie(m.h_lo, m.h_hi) = prior_pair(v, "/model/priors/h", true);
    std::tie(m.v_lo, m.v_hi) = prior_pair(v, "/model/priors/v0", true);
    std::tie(m.g_mean, m.g_sd) = prior_pair(v, "/model/priors/g", false);
    m.sigma_scale = v.number("/model/priors/sigma_scale");
    m.sigma = v.number("/model/sigma");
    m.estimate_sigma = v.boolean("/model/estimate_sigma");
    m.c_g = v.boolean("/model/half_g") ? 0.5 : 1.0;

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
    t_obs = to_device_view("linear_acceleration::t", t);
    z_obs = to_device_view("linear_acceleration::z", z);
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
