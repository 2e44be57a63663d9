// The device-only rules of the model kernels, checked by nvcc (tests/compile/nvcc/check.sh):
// __global__ kernels that call, for every shipped model, what the sampler calls on a GPU
// (log density, gradient, constrain, prior draw, the members after sampling, the leapfrog, the HMM's team gradient)
// and a representative set of hmc::dist functions on double and Dual. Compiled against
// kokkos_standin/ (not Kokkos) with `nvcc -c`, never linked or run: a host-only function
// reached from device code (std::vector, a member function without KOKKOS_INLINE_FUNCTION,
// ...) is an error. With HMC_NVCC_PROVOKE defined, host_call_model.hpp adds such a call
// (the test that shows the check can fail). The posteriordb example models (examples/posteriordb)
// are checked the same way: HMC_MODEL_HEADERS_ONLY makes their HMC_REGISTER_MODEL lines
// register nothing (hmc/app/register.hpp: no registry, no services, no MPI).
#define HMC_MODEL_HEADERS_ONLY
#include "coin_toss.hpp"
#include "eight_schools.hpp"
#include "examples/posteriordb/ark/ark.hpp"
#include "examples/posteriordb/gp_pois_regr/gp_pois_regr.hpp"
#include "examples/posteriordb/hmm_drive_0/hmm_drive_0.hpp"
#include "examples/posteriordb/kidscore_interaction/kidscore_interaction.hpp"
#include "examples/posteriordb/lotka_volterra/lotka_volterra.hpp"
#include "harmonic_oscillator.hpp"
#include "hmc/core/philox.hpp"
#include "hmc/core/types.hpp"
#include "hmc/distributions/dist.hpp"
#include "hmc/distributions/linalg.hpp"
#include "hmc/distributions/ode.hpp"
#include "hmc/model/concept.hpp"
#include "hmc/model/dual.hpp"
#include "hmc/sampler/isokinetic.hpp"
#include "hmc/sampler/leapfrog.hpp"
#include "hmc/sampler/metric.hpp"
#include "hmm.hpp"
#include "linear_acceleration.hpp"
#include "logistic_regression.hpp"
#if defined(HMC_NVCC_PROVOKE)
#include "host_call_model.hpp"
#endif

#include <cstdint>

namespace nvcc_check {

using hmc::Dual;
using hmc::Row;

/// What the one-particle-per-thread kernels call on a model.
template <class Model>
__global__ void model_members(Model model, Row q, Row grad, Row scratch, Row out, double* lp) {
  lp[0] = model.log_density(q);
  lp[1] = hmc::model::log_density_gradient(model, q, grad, scratch);
  lp[2] = hmc::model::finite_difference_density(model, q, scratch);
  model.constrain(q, out);
  hmc::model::sample_prior(model, hmc::rng::ParticleStream(7, threadIdx.x), 0u, q);
  // after sampling (sampler/groups.hpp: record_groups), from the recorded draw `out`
  const hmc::rng::DrawStream r(7, threadIdx.x, hmc::rng::DrawStream::kPredictive, 3u);
  hmc::model::log_likelihood(model, out, grad, 2);
  hmc::model::posterior_predictive(model, out, r, grad, 2);
  hmc::model::generate(model, out, r, grad);
}

/// The leapfrog, with the sampler's metric and with the diagonal shortcut, and what the
/// transition kernels call on the metric.
template <class Model>
__global__ void leapfrog_members(Model model, Row q, Row p, Row grad, Row scratch, hmc::sampler::Metric metric,
                                 hmc::VectorView inv_mass, int dim, double eps, int steps, double* out) {
  metric.momentum_from_normals(p, 1.0);
  out[0] = hmc::sampler::leapfrog(model, q, p, grad, scratch, metric, dim, eps, steps);
  out[1] = hmc::sampler::leapfrog(model, q, p, grad, inv_mass, dim, eps, steps);
  out[2] = metric.kinetic(p) + metric.velocity(p, 0);
}

/// MAMS's isokinetic McLachlan step with the sampler's metric (sampler/isokinetic.hpp), and the
/// metric's whitening that its warmup statistic uses.
template <class Model>
__global__ void mams_members(Model model, Row q, Row u, Row grad, Row w, Row scratch, hmc::sampler::Metric metric,
                             int dim, double eps, double* out) {
  const hmc::sampler::RowGradient<Model> gradient{model, scratch};
  double dk = 0.0;
  out[0] = hmc::sampler::mclachlan_step(q, u, grad, w, metric, dim, eps, 1.0, dk, gradient);
  out[1] = dk + hmc::sampler::jitter_scale(eps * 10.0) + metric.whitened_norm2(w);
}

/// The gradient on a team: the HMM's team gradient, the single-thread fallback elsewhere.
template <class Model>
__global__ void team_members(Model model, Row q, Row grad, Row scratch, double* lp) {
  const hmc::TeamMember team{};
  lp[team.league_rank()] = hmc::model::log_density_gradient(model, team, q, grad, scratch);
}

#define HMC_NVCC_MODEL_KERNELS(MODEL)                                                                                \
  template __global__ void model_members<MODEL>(MODEL, Row, Row, Row, Row, double*);                                 \
  template __global__ void leapfrog_members<MODEL>(MODEL, Row, Row, Row, Row, hmc::sampler::Metric, hmc::VectorView, \
                                                   int, double, int, double*);                                       \
  template __global__ void team_members<MODEL>(MODEL, Row, Row, Row, double*);

HMC_NVCC_MODEL_KERNELS(hmc::models::CoinToss)
HMC_NVCC_MODEL_KERNELS(hmc::models::EightSchools)
HMC_NVCC_MODEL_KERNELS(hmc::models::HarmonicOscillator)
HMC_NVCC_MODEL_KERNELS(hmc::models::Hmm)
HMC_NVCC_MODEL_KERNELS(hmc::models::LinearAcceleration)
HMC_NVCC_MODEL_KERNELS(hmc::models::LogisticRegression)
// The posteriordb examples (route (a)): linalg.hpp (gp_pois_regr), ode.hpp (lotka_volterra,
// its Var<double> path on ode::Jet) and the simplex and ordered transforms on
// transform::Local (hmm_drive_0), on double, Dual and Var<double>.
HMC_NVCC_MODEL_KERNELS(posteriordb_ark::ArK)
HMC_NVCC_MODEL_KERNELS(gp_pois_regr_example::GpPoisRegr)
HMC_NVCC_MODEL_KERNELS(posteriordb_hmm_drive::HmmDrive)
HMC_NVCC_MODEL_KERNELS(posteriordb_kidiq::KidscoreInteraction)
HMC_NVCC_MODEL_KERNELS(lotka_volterra_example::LotkaVolterra)
#if defined(HMC_NVCC_PROVOKE)
HMC_NVCC_MODEL_KERNELS(nvcc_check::HostCallModel)
#endif
// MAMS's step (sampler/isokinetic.hpp) for a model with a hand gradient and one with reverse mode
// (the model's side is the gradient, which leapfrog_members checks for every model).
template __global__ void mams_members<hmc::models::CoinToss>(hmc::models::CoinToss, Row, Row, Row, Row, Row,
                                                             hmc::sampler::Metric, int, double, double*);
template __global__ void mams_members<hmc::models::EightSchools>(hmc::models::EightSchools, Row, Row, Row, Row, Row,
                                                                 hmc::sampler::Metric, int, double, double*);

/// A vector of Duals indexed as a Row is (the multivariate densities on Duals).
struct DualVector {
  Dual* data;
  KOKKOS_INLINE_FUNCTION Dual& operator()(int i) const { return data[i]; }
};
/// A row-major K x K matrix of doubles (a Cholesky factor).
struct Matrix {
  double* data;
  int K;
  KOKKOS_INLINE_FUNCTION double& operator()(int i, int j) const { return data[i * K + j]; }
};

/// hmc::dist on double, Dual and data Views: every family, each form.
__global__ void dist_functions(Row x, hmc::VectorView ys, hmc::VectorView ns, Matrix chol, Matrix d_chol, DualVector dx,
                               double* out) {
  namespace dist = hmc::dist;
  const double y = x(0), mu = x(1), sigma = x(2);
  const Dual m(mu, 1.0), s(sigma, 0.0);
  double lp = 0.0;
  // Continuous.
  lp += dist::normal_lpdf(y, mu, sigma) + dist::normal_lpdf<true>(y, m, s).value;
  lp += dist::normal_lpdf_grad(y, mu, sigma).d[2] + dist::normal_lpdf_sum(ys, m, sigma).tangent;
  lp += dist::normal_lpdf_sum_grad(ys, mu, sigma).d[1];
  lp += dist::lognormal_lpdf(y, mu, sigma) + dist::lognormal_lpdf_grad(y, m, s).d[0].value;
  lp += dist::student_t_lpdf(y, 3.0, mu, sigma) + dist::student_t_lpdf_grad(y, m, mu, s).d[1].tangent;
  lp += dist::student_t_lpdf_sum(ys, 3.0, m, sigma).value + dist::student_t_lpdf_sum_grad(ys, 3.0, mu, sigma).d[0];
  lp += dist::cauchy_lpdf(y, mu, sigma) + dist::cauchy_lpdf_grad(y, m, s).value.value;
  lp += dist::half_cauchy_lpdf(y, sigma) + dist::half_cauchy_lpdf_sum_grad(ys, s).d[0].value;
  lp += dist::half_normal_lpdf(y, s).value + dist::half_normal_lpdf_grad(y, sigma).d[1];
  lp += dist::exponential_lpdf(y, m).value + dist::exponential_lpdf_sum(ys, sigma);
  lp += dist::gamma_lpdf(y, mu, sigma) + dist::gamma_lpdf_grad(y, m, s).d[1].value;
  lp += dist::inv_gamma_lpdf(y, m, sigma).value + dist::inv_gamma_lpdf_sum_grad(ys, mu, sigma).d[1];
  lp += dist::beta_lpdf(y, mu, sigma) + dist::beta_lpdf_grad(y, m, s).d[2].value;
  lp += dist::uniform_lpdf(y, mu, sigma) + dist::uniform_lpdf_grad(y, m, s).d[0].value;
  // Discrete.
  const int k = static_cast<int>(ns(0));
  lp += dist::bernoulli_lpmf(k, mu) + dist::bernoulli_lpmf_grad(k, m).d[0].value;
  lp += dist::bernoulli_logit_lpmf(k, m).value + dist::bernoulli_logit_lpmf_sum(ns, mu);
  lp += dist::binomial_lpmf(k, 10, mu) + dist::binomial_lpmf_sum(ns, 10, m).value;
  lp += dist::binomial_lpmf_sum_grad(ns, ns, mu).d[0];
  lp += dist::binomial_logit_lpmf<true>(k, 10, m).value + dist::binomial_logit_lpmf_grad(k, 10, mu).d[0];
  lp += dist::poisson_lpmf(k, sigma) + dist::poisson_lpmf_sum_grad(ns, s).d[0].value;
  lp += dist::poisson_log_lpmf(k, m).value + dist::poisson_log_lpmf_sum<true>(ns, mu);
  // Multivariate.
  lp += dist::categorical_lpmf(1, x, 3) + dist::categorical_lpmf_grad(1, dx, 3, dx).value;
  lp += dist::categorical_lpmf_grad(1, x, 3, dist::Ignore{});
  lp += dist::dirichlet_lpdf(x, x, 3) + dist::dirichlet_lpdf_grad(dx, x, 3, dx, dist::Ignore{}).tangent;
  lp += dist::multi_normal_cholesky_lpdf(x, ys, chol, 3);
  lp += dist::multi_normal_cholesky_lpdf_grad(x, ys, chol, 3, x, dist::Ignore{}, d_chol);
  lp += dist::multi_normal_cholesky_lpdf<false, 4>(dx, x, chol, 3).value;
  // Special functions.
  lp += dist::lgamma(y) + dist::digamma(y) + dist::trigamma(y) + dist::log1p_exp(y) + dist::lchoose(10, k);
  lp += dist::lgamma(m).tangent + dist::digamma(m).value + dist::log1p_exp(m).value + dist::quiet_nan();
  out[0] = lp;
}

}  // namespace nvcc_check

namespace nvcc_check {

/// A route-(a) model (hmc/model/autodiff.hpp) that records every kind of node on a GPU
/// thread: arithmetic, math, a transform, univariate, `_sum`, GLM, `dot` and multivariate
/// densities on Var<double>; its gradient is reverse mode on the particle's scratch row.
struct RecordedModel : hmc::model::AutodiffModel<RecordedModel> {
  hmc::VectorView ys, ks;
  hmc::MatrixView x;
  KOKKOS_INLINE_FUNCTION int dim() const { return 6; }
  template <class T, class Q>
  KOKKOS_INLINE_FUNCTION T log_density_t(const Q& q) const {
    namespace dist = hmc::dist;
    namespace math = hmc::math;
    const T mu = q(0), sigma = hmc::transform::positive_forward(T(q(1)));
    const auto beta = dist::slice(q, 2);
    T lp = dist::normal_lpdf(mu, 0.0, 5.0) + dist::student_t_lpdf(q(2), 3.0, mu, sigma) + q(1);
    lp += dist::normal_lpdf_sum(ys, mu, sigma) + dist::poisson_log_lpmf_sum(ks, mu) + dist::lgamma(sigma + 1.0);
    lp += dist::normal_id_glm_lpdf(ys, x, mu, beta, sigma) + dist::bernoulli_logit_glm_lpmf(ks, x, mu, beta);
    lp += dist::poisson_log_glm_lpmf(ks, x, mu, beta) + dist::dot(ys, beta, 3);
    const T theta[3] = {math::sigmoid(q(3)), math::sigmoid(q(4)), math::sigmoid(q(5))};
    const auto th = [&](int i) { return theta[i]; };
    const auto chol = [&](int i, int j) { return i == j ? sigma : T(0.1) * mu; };
    lp += dist::categorical_lpmf(1, th, 3) + dist::dirichlet_lpdf(th, ys, 3);
    lp += dist::multi_normal_cholesky_lpdf(th, ys, chol, 3);
    return lp + math::log1p(math::exp(q(5))) * math::pow(sigma, 1.5) / (1.0 + math::fabs(q(4)));
  }
  KOKKOS_INLINE_FUNCTION void constrain(const Row& q, const Row& out) const {
    for (int i = 0; i < dim(); ++i) out(i) = q(i);
  }
};

HMC_NVCC_MODEL_KERNELS(RecordedModel)

/// dy/dt for the ODE of LinalgOdeModel: every math function ode::Jet defines.
struct DecayRhs {
  template <class T>
  KOKKOS_INLINE_FUNCTION void operator()(double, const T (&y)[2], const T (&th)[2], T (&dy)[2]) const {
    namespace math = hmc::math;
    dy[0] = -th[0] * y[0] + 0.01 * math::sin(y[1]) * math::cos(y[0]);
    dy[1] = th[0] * y[0] - th[1] * math::sqrt(y[1] * y[1] + 1.0) + 0.01 * math::log(math::exp(y[0]) + 1.0);
    dy[1] -= 0.001 * math::pow(y[1] * y[1] + 1.0, 1.5) / (2.0 + y[0]);
  }
};

/// A route-(a) model with what the posteriordb examples leave out: every function of
/// hmc/distributions/linalg.hpp on row-major (MatrixRef) and packed (LowerRef) factors, data
/// and parameter right-hand sides, and ode::rk45 (the stored trajectory); no lanes (the ODE).
struct LinalgOdeModel : hmc::model::AutodiffModel<LinalgOdeModel> {
  static constexpr bool autodiff_lanes = false;
  hmc::VectorView xs, ts, ys;
  hmc::ode::Tolerances tolerances;
  KOKKOS_INLINE_FUNCTION int dim() const { return 5; }
  template <class T, class Q>
  KOKKOS_INLINE_FUNCTION T log_density_t(const Q& q) const {
    namespace dist = hmc::dist;
    const T alpha = hmc::transform::positive_forward(T(q(0))), rho = hmc::transform::positive_forward(T(q(1)));
    T lp = q(0) + q(1);
    T packed[6], full[9], z[3], f[3];
    const auto low = dist::lower_ref(packed);
    const auto mat = dist::matrix_ref(full, 3);
    dist::gp_exp_quad_cov(xs, 3, alpha, rho, 1e-9, low);
    dist::gp_exp_quad_cov(xs, 3, rho, alpha, 1e-9, mat);
    if (!dist::cholesky_decompose(low, 3) || !dist::cholesky_decompose(mat, 3)) return T(dist::neg_inf());
    dist::mdivide_left_tri_low(low, ys, dist::vector_ref(z), 3);
    dist::mdivide_left_tri_low(mat, dist::vector_ref(z), dist::vector_ref(f), 3);
    dist::multiply_lower_tri(low, dist::slice(q, 2), dist::vector_ref(z), 3);
    dist::multiply_lower_tri(mat, ys, dist::vector_ref(f), 3);
    for (int i = 0; i < 3; ++i) lp += dist::normal_lpdf(z[i], f[i], 1.0);
    const T y0[2] = {T(q(2)), T(q(3))}, theta[2] = {alpha, rho};
    T traj[4][2];
    if (!hmc::ode::rk45(DecayRhs{}, y0, 0.0, ts, 4, theta, traj, tolerances)) return T(dist::neg_inf());
    for (int i = 0; i < 4; ++i) lp += dist::normal_lpdf(traj[i][0], traj[i][1], 1.0);
    return lp;
  }
  KOKKOS_INLINE_FUNCTION void constrain(const Row& q, const Row& out) const {
    for (int i = 0; i < dim(); ++i) out(i) = q(i);
  }
};

HMC_NVCC_MODEL_KERNELS(LinalgOdeModel)

}  // namespace nvcc_check
