#pragma once
/// \file
/// \brief posteriordb's hudson_lynx_hare-lotka_volterra: the Lotka–Volterra predator–prey
/// ODE fitted to the Hudson's Bay Company hare (u) and lynx (v) pelts, 1900–1920
/// (lotka_volterra.stan, Carpenter's Stan case study):
///
///   du/dt = (alpha - beta v) u,  dv/dt = (-gamma + delta u) v,  z(0) = z_init,
///   theta = (alpha, beta, gamma, delta),  theta_{1,3} ~ Normal(1, 0.5),  theta_{2,4} ~ Normal(0.05, 0.05),
///   z_init_k ~ LogNormal(log 10, 1),  sigma_k ~ LogNormal(-1, 1),
///   y_init_k ~ LogNormal(log z_init_k, sigma_k),  y_{n,k} ~ LogNormal(log z_k(t_n), sigma_k).
///
/// All eight parameters are positive: q = log(theta, z_init, sigma), with the log-Jacobian
/// Σ q; every normalising constant is kept (the half-line truncation of the Normal priors is
/// a constant, dropped as in Stan). z(t_n) comes from hmc::ode::rk45_each with Stan's
/// controls for this program: rel_tol 1e-5, abs_tol 1e-3, at most 500 steps per output
/// interval; a failed solve gives log density -infinity (the sampler rejects the move).
///
/// Autodiff route (a): the gradient's reverse mode records one node per ODE output (forward
/// sensitivities inside the solver, hmc/distributions/ode.hpp). The model opts out of lanes
/// (`autodiff_lanes = false`): the solver's step-size control differs between particles, and
/// sharing it across a block of particles would make a particle's draws depend on which
/// particles share its block; one particle per thread keeps the draws the same bitwise for
/// any thread count and any number of ranks.

#include "hmc/app/register.hpp"
#include "hmc/core/errors.hpp"
#include "hmc/core/types.hpp"
#include "hmc/distributions/ode.hpp"
#include "hmc/keys/data.hpp"
#include "hmc/keys/key.hpp"
#include "hmc/model/autodiff.hpp"
#include "hmc/model/transforms.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <string>
#include <vector>

namespace lotka_volterra_example {

namespace ode = hmc::ode;
namespace math = hmc::math;
namespace transform = hmc::transform;

/// dz/dt for z = (u, v), theta = (alpha, beta, gamma, delta), any number type T.
struct PredatorPrey {
  template <class T>
  KOKKOS_INLINE_FUNCTION void operator()(double, const T (&z)[2], const T (&theta)[4], T (&dz)[2]) const {
    dz[0] = (theta[0] - theta[1] * z[1]) * z[0];
    dz[1] = (-theta[2] + theta[3] * z[0]) * z[1];
  }
};

struct LotkaVolterra : hmc::model::AutodiffModel<LotkaVolterra> {
  /// The solver's block of particles would share one step-size control (see the file comment).
  static constexpr bool autodiff_lanes = false;

  int n = 0;                   ///< measurement times N
  hmc::VectorView ts;          ///< the times t_1..t_N (years after 1900)
  hmc::MatrixView log_y;       ///< log y_{n,k}, N x 2
  double log_y_init[2] = {};   ///< log y_init_k
  double log_const = 0.0;      ///< every normalising constant and the data's -Σ log y, summed on the host
  ode::Tolerances tolerances;  ///< Stan's rel_tol 1e-5, abs_tol 1e-3, max_num_steps 500

  KOKKOS_INLINE_FUNCTION int dim() const { return 8; }
  int num_params() const { return 8; }
  std::vector<std::string> parameter_names() const {
    return {"theta[1]", "theta[2]", "theta[3]", "theta[4]", "z_init[1]", "z_init[2]", "sigma[1]", "sigma[2]"};
  }

  /// log p(q) for every number type T that hmc uses (double, Dual, Var<double>).
  template <class T, class Q>
  KOKKOS_INLINE_FUNCTION T log_density_t(const Q& q) const {
    T theta[4], z_init[2], sigma[2];
    for (int j = 0; j < 4; ++j) theta[j] = transform::positive_forward(T(q(j)));
    T lp = log_const;
    for (int j = 0; j < 8; ++j) lp += q(j);  // log|J| of the exp transforms
    // theta_{1,3} ~ Normal(1, 0.5), theta_{2,4} ~ Normal(0.05, 0.05) (constants in log_const).
    for (int j = 0; j < 4; ++j) {
      const double loc = j % 2 == 0 ? 1.0 : 0.05, scale = j % 2 == 0 ? 0.5 : 0.05;
      const T zj = (theta[j] - loc) / scale;
      lp -= 0.5 * zj * zj;
    }
    // z_init ~ LogNormal(log 10, 1), sigma ~ LogNormal(-1, 1): with x = exp(q), log x = q.
    const double log10 = 2.302585092994046;
    for (int k = 0; k < 2; ++k) {
      const T log_z0 = q(4 + k), log_sigma = q(6 + k);
      z_init[k] = transform::positive_forward(log_z0);
      sigma[k] = transform::positive_forward(log_sigma);
      lp -= log_z0 + 0.5 * (log_z0 - log10) * (log_z0 - log10);
      lp -= log_sigma + 0.5 * (log_sigma + 1.0) * (log_sigma + 1.0);
      // y_init_k ~ LogNormal(log z_init_k, sigma_k), and the N measurements' -log sigma_k.
      const T r = (log_y_init[k] - log_z0) / sigma[k];
      lp -= 0.5 * r * r + static_cast<double>(n + 1) * log_sigma;
    }
    // y_{i,k} ~ LogNormal(log z_k(t_i), sigma_k), each state as the solver reaches it.
    const bool ok = ode::rk45_each(PredatorPrey{}, z_init, 0.0, ts, n, theta, tolerances, [&](int i, const T(&z)[2]) {
      for (int k = 0; k < 2; ++k) {
        const T r = (log_y(i, k) - math::log(z[k])) / sigma[k];
        lp -= 0.5 * r * r;
      }
    });
    if (!ok) return T(-math::infinity());
    return lp;
  }

  KOKKOS_INLINE_FUNCTION void constrain(const hmc::Row& q, const hmc::Row& out) const {
    for (int j = 0; j < 8; ++j) out(j) = transform::positive_forward(q(j));
  }

  // ---- host: data ---------------------------------------------------------------------------

  static hmc::keys::Keys config_keys() { return {}; }

  /// posteriordb's data as it is: N, ts, y_init (2 numbers), y (N rows of 2 positive numbers).
  static LotkaVolterra from_config(const nlohmann::json& /*model*/, const nlohmann::json& data) {
    const hmc::keys::Data d(data, "lotka_volterra");
    const auto times = d.numbers("ts");
    const auto y_init = d.numbers(
        "y_init", [](double y) { return y > 0.0; }, "> 0");
    const auto y = d.rows("y");
    d.same_length("ts", times.size(), "y", y.size());
    d.optional_count("N", times.size(), "ts");
    if (y_init.size() != 2) throw hmc::DataError("data error: lotka_volterra data needs /y_init with 2 numbers");
    for (std::size_t i = 0; i < y.size(); ++i) {
      if (y[i].size() != 2) {
        throw hmc::DataError("data error: lotka_volterra data /y/" + std::to_string(i) +
                             " must have 2 numbers (prey, predator)");
      }
      for (std::size_t k = 0; k < 2; ++k) {
        if (!(y[i][k] > 0.0)) {
          throw hmc::DataError("data error: /y/" + std::to_string(i) + "/" + std::to_string(k) + " must be > 0");
        }
      }
    }
    for (std::size_t i = 0; i < times.size(); ++i) {
      if (!(times[i] > (i == 0 ? 0.0 : times[i - 1]))) {
        throw hmc::DataError("data error: /ts/" + std::to_string(i) + " must be > 0 and increasing");
      }
    }

    LotkaVolterra m;
    m.n = static_cast<int>(times.size());
    m.tolerances = ode::Tolerances{1e-5, 1e-3, 500};
    m.ts = hmc::to_device_view("lotka_volterra::ts", times);
    m.log_y = hmc::MatrixView("lotka_volterra::log_y", times.size(), 2);
    auto host = Kokkos::create_mirror_view(m.log_y);
    // Constants: 4 Normal and 4 LogNormal priors, 2 (N + 1) LogNormal measurements with -log y.
    const double half_log_2pi = 0.5 * std::log(2.0 * math::pi());
    m.log_const = -(8.0 + 2.0 * (m.n + 1)) * half_log_2pi - 2.0 * std::log(0.5) - 2.0 * std::log(0.05);
    for (int k = 0; k < 2; ++k) {
      m.log_y_init[k] = std::log(y_init[static_cast<std::size_t>(k)]);
      m.log_const -= m.log_y_init[k];
    }
    for (std::size_t i = 0; i < y.size(); ++i) {
      for (std::size_t k = 0; k < 2; ++k) {
        host(i, k) = std::log(y[i][k]);
        m.log_const -= host(i, k);
      }
    }
    Kokkos::deep_copy(m.log_y, host);
    return m;
  }
};

}  // namespace lotka_volterra_example

HMC_REGISTER_MODEL(lotka_volterra_example::LotkaVolterra, "lotka_volterra",
                   "Lotka-Volterra ODE fitted to the Hudson's Bay lynx and hare pelts (posteriordb)");
