#pragma once
/// \file
/// \brief posteriordb's `bball_drive_event_0-hmm_drive_0`: a two-state hidden Markov model of a basketball
/// player's drive to the hoop (SportVU tracking data), from its Stan program (hmm_drive_0.stan):
///
///   theta_k ~ Dirichlet(alpha_k)              (rows of the transition matrix, simplexes; k = 1, 2)
///   phi, lambda positive and ordered           phi_1 ~ N(0, 1), phi_2 ~ N(3, 1); lambda likewise
///   u_t ~ Exponential(phi_{z_t}),  v_t ~ Exponential(lambda_{z_t}),  z_t a Markov chain with transitions theta,
///
/// with the states z summed out by the forward algorithm in log space, as the Stan program does (no
/// initial-state distribution: the first step weighs both states by their emissions alone). The states
/// are not exchangeable because phi and lambda are ordered, so the posterior has one mode.
///
/// Written the recommended way (route (a)): the simplexes and the ordered vectors come from hmc's transforms
/// on the model's number type T (`simplex_forward<T>`, `ordered_forward<T>`, with their log-Jacobians), and
/// the forward algorithm is plain arithmetic on T. Unconstrained q (6 numbers): the stick of theta_1 and of
/// theta_2, then the ordered phi (log phi_1, log(phi_2 - phi_1)) and lambda likewise.
/// Output: theta1[1..2], theta2[1..2], phi[1..2], lambda[1..2] (posteriordb's names).

#include "hmc/app/register.hpp"
#include "hmc/core/errors.hpp"
#include "hmc/core/types.hpp"
#include "hmc/distributions/dist.hpp"
#include "hmc/keys/data.hpp"
#include "hmc/keys/key.hpp"
#include "hmc/model/autodiff.hpp"
#include "hmc/model/transforms.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <string>
#include <vector>

namespace posteriordb_hmm_drive {

namespace dist = hmc::dist;
namespace transform = hmc::transform;

struct HmmDrive : hmc::model::AutodiffModel<HmmDrive> {
  static constexpr int K = 2;  ///< states: 1 none, 2 drive (the Stan program's priors name two)
  int steps = 0;               ///< N
  hmc::VectorView u;           ///< 1 / speed at each step
  hmc::VectorView v;           ///< distance to the hoop at each step
  double alpha[K][K] = {};     ///< Dirichlet concentrations of the transition rows
  double dirichlet_const = 0;  ///< Σ_k log B(alpha_k)^-1, summed on the host

  KOKKOS_INLINE_FUNCTION int dim() const { return 2 * (K - 1) + 2 * K; }
  int num_params() const { return 4 * K; }
  std::vector<std::string> parameter_names() const {
    std::vector<std::string> names;
    for (const char* block : {"theta1", "theta2", "phi", "lambda"})
      for (int k = 1; k <= K; ++k) names.push_back(std::string(block) + "[" + std::to_string(k) + "]");
    return names;
  }

  template <class T, class Q>
  KOKKOS_INLINE_FUNCTION T log_density_t(const Q& q) const {
    transform::Local<T, K> theta[K], phi, lambda;
    T lp = dirichlet_const;
    for (int k = 0; k < K; ++k) {
      lp += transform::simplex_forward<T>(dist::slice(q, k * (K - 1), K - 1), theta[k], K);
      for (int j = 0; j < K; ++j) lp += (alpha[k][j] - 1.0) * hmc::math::log(theta[k](j));
    }
    lp += transform::ordered_forward<T>(dist::slice(q, K * (K - 1), K), phi, K, true);
    lp += transform::ordered_forward<T>(dist::slice(q, K * (K - 1) + K, K), lambda, K, true);
    lp += dist::normal_lpdf(phi(0), 0.0, 1.0) + dist::normal_lpdf(phi(1), 3.0, 1.0) +
          dist::normal_lpdf(lambda(0), 0.0, 1.0) + dist::normal_lpdf(lambda(1), 3.0, 1.0);

    // The forward algorithm, scaled (Rabiner 1989): a(k) = p(z_t = k | u_1..t, v_1..t), and
    // log p(u, v) = Σ_t log c_t with c_t = p(u_t, v_t | u_1..t-1, v_1..t-1). It is the Stan program's
    // log-space recursion with products in place of log_sum_exp, so that its transcendental
    // functions are one exp per state and step, vectorised in the lanes. x_k = log p(u_t, v_t | k);
    // each step's densities are scaled by exp(-s), s the mean of their values: a constant, added
    // back to the log likelihood, that only keeps exp in range (it does not change the gradient).
    T log_rate[K], a[K];
    for (int k = 0; k < K; ++k) log_rate[k] = hmc::math::log(phi(k)) + hmc::math::log(lambda(k));
    for (int t = 0; t < steps; ++t) {
      T x[K];
      for (int k = 0; k < K; ++k) x[k] = log_rate[k] - (phi(k) * u(t) + lambda(k) * v(t));
      const auto s = 0.5 * (hmc::value_of(x[0]) + hmc::value_of(x[1]));
      T b[K];
      for (int k = 0; k < K; ++k) {
        const T density = hmc::math::exp(x[k] - s);
        b[k] = t == 0 ? density : (a[0] * theta[0](k) + a[1] * theta[1](k)) * density;
      }
      const T c = b[0] + b[1];
      for (int k = 0; k < K; ++k) a[k] = b[k] / c;
      lp += hmc::math::log(c) + s;
    }
    return lp;
  }

  KOKKOS_INLINE_FUNCTION void constrain(const hmc::Row& q, const hmc::Row& out) const {
    const auto part = [](const hmc::Row& r, int offset) { return hmc::Row{r.data + offset * r.stride, r.stride}; };
    for (int k = 0; k < K; ++k) transform::simplex_forward(part(q, k * (K - 1)), part(out, k * K), K);
    transform::ordered_forward(part(q, K * (K - 1)), part(out, 2 * K), K, true);
    transform::ordered_forward(part(q, K * (K - 1) + K), part(out, 3 * K), K, true);
  }

  static hmc::keys::Keys config_keys() { return {}; }

  /// The data as posteriordb has it: K (2), N, u and v (N positive numbers each), alpha (K x K, positive).
  static HmmDrive from_config(const nlohmann::json& /*model*/, const nlohmann::json& data) {
    const hmc::keys::Data d(data, "hmm_drive_0");
    const auto positive = [](double x) { return x > 0.0; };
    const auto us = d.numbers("u", positive, "> 0");
    const auto vs = d.numbers("v", positive, "> 0");
    d.same_length("u", us.size(), "v", vs.size());
    d.optional_count("N", us.size(), "u");
    if (d.integer("K", 1, 1000) != K)
      throw hmc::DataError("data error: hmm_drive_0 data: \"K\" must be 2 (the model's priors name two states)");
    const auto rows = d.rows("alpha");
    HmmDrive m;
    if (rows.size() != K || rows[0].size() != K)
      throw hmc::DataError("data error: hmm_drive_0 data: \"alpha\" must be 2 x 2");
    for (int k = 0; k < K; ++k) {
      double sum = 0.0;
      for (int j = 0; j < K; ++j) {
        if (!(rows[k][j] > 0.0)) throw hmc::DataError("data error: hmm_drive_0 data: \"alpha\" must be positive");
        m.alpha[k][j] = rows[k][j];
        sum += rows[k][j];
        m.dirichlet_const -= std::lgamma(rows[k][j]);
      }
      m.dirichlet_const += std::lgamma(sum);
    }
    m.steps = static_cast<int>(us.size());
    m.u = hmc::to_device_view("hmm_drive_0::u", us);
    m.v = hmc::to_device_view("hmm_drive_0::v", vs);
    return m;
  }
};

}  // namespace posteriordb_hmm_drive

HMC_REGISTER_MODEL(posteriordb_hmm_drive::HmmDrive, "hmm_drive_0",
                   "posteriordb bball_drive_event_0-hmm_drive_0: two-state HMM, exponential emissions");
