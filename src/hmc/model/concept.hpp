#pragma once
/// \file
/// \brief What a model must provide, checked at compile time, and the one place
/// where its optional members are detected.
///
/// A model is a small struct, copyable by value into kernels, its data in Views.
///
/// Required, host:
///   static Model from_config(const nlohmann::json& model, const nlohmann::json& data);
///   static keys::Keys config_keys();                   // its /model/... keys (keys/key.hpp)
///   int dim() const;                                   // unconstrained dimension
///   int num_params() const;                            // constrained outputs per draw
///   std::vector<std::string> parameter_names() const;  // num_params() names, e.g. "p[1]"
///
/// Required, device (KOKKOS_FUNCTION ... const), `q` on the unconstrained scale:
///   double log_density(const Row& q) const;            // log p(q) incl. log|J|; -inf out of support
///   void constrain(const Row& q, const Row& out) const;                // num_params() values
/// and the gradient in ONE of two forms, the same value as log_density, writing d/dq:
///   (plain)        double log_density_gradient(const Row& q, const Row& grad) const;
///   (with scratch) int scratch_size() const;            // host: doubles per particle
///                  double log_density_gradient(const Row& q, const Row& grad, const Row& scratch) const;
/// The scratch form is for gradients that need per-particle working memory (the HMM's
/// forward variables, kept for the backward pass); the sampler owns scratch_size()
/// doubles per particle and passes them in. model::log_density_gradient() calls
/// whichever form the model has.
///
/// Optional (each detected here and nowhere else):
///   int log_density_scratch_size() const;  +  double log_density(const Row& q, const Row& scratch) const;
///       a cheaper log density for the finite differences of `hmc diagnose` (the HMM's forward pass);
///   void sample_prior(const rng::ParticleStream& s, std::uint32_t use_base, const Row& q) const;
///       initial positions from the prior (/sampler/init/strategy "prior");
///   template <class T, class R> T log_density_gradient_t(const R& q, const R& grad) const;
///       the gradient once for double and for hmc::Pack: the host's lane kernel (docs/adding-a-model.md);
///   int lane_scratch_size() const;  +  Pack log_density_gradient_lanes(const PackRow& q, const PackRow& grad,
///       Pack* scratch) const;  the lane kernel's form of the scratch gradient;
///   int gradient_team_size() const;  +  template <class Member> double log_density_gradient(const Member& team,
///       const Row& q, const Row& grad, const Row& scratch) const;  the scratch gradient of one particle
///       computed by a team of threads (TeamMember; every thread calls it and gets the value), used by the
///       kernels' team path where gradient_team_size() > 0 (the threads it can use; the HMM's forward pass
///       in parallel time);
///   void prepare_gradient();  sizes the tape of an automatic gradient (AutodiffModel supplies it);
///   void plan(long particles_per_rank, long concurrency);  settles choices that depend on the run's size
///       (the HMM's /model/forward auto) before its memory is counted;
///   template <class T, class Q> T log_density_t(const Q& q) const;  the log density as a template on its scalar,
///       T = hmc::Dual with q(i) a Dual (model/forward_gradient.hpp): `hmc diagnose` checks the gradient exactly
///       against its forward-mode derivative (model/gradient_check.hpp);
///   std::string note() const;              // a line for summary.json's warnings (e.g. label switching)
///   std::vector<std::pair<std::string, std::vector<std::string>>> dim_names() const;
///       names of the dimensions of vector and matrix parameters (draws.nc).
///
/// Optional, after sampling (docs/adding-a-model.md#after-sampling). The device members
/// read the recorded draw `draw` (the num_params() constrained values constrain() wrote),
/// so that `hmc generate` over a run's draws.nc computes what the run recorded, bit for bit:
///   std::vector<hmc::DataArray> observations() const;     // host: the observed data, each array with its
///       name, dims, shape and values (draws.nc's observed_data group);
///   std::vector<hmc::DataArray> constant_data() const;    // host: covariates (constant_data group);
///   the pointwise log-likelihood, log p(y_n | draw) for every element of observations() (the arrays
///   in order, each in C order), in ONE of two forms (`/output/log_likelihood`):
///     (array)     KOKKOS_FUNCTION void log_likelihood(const Row& draw, const Row& out) const;
///     (pointwise) KOKKOS_FUNCTION double log_likelihood(const Row& draw, int n) const;
///   posterior predictive draws of the observations, the same layout (`/output/posterior_predictive`):
///     (array)     KOKKOS_FUNCTION void posterior_predictive(const Row& draw, const rng::DrawStream& r,
///                                                           const Row& out) const;
///     (pointwise) KOKKOS_FUNCTION double posterior_predictive(const Row& draw, int n,
///                                                             const rng::DrawStream& r) const;
///       (the pointwise form's r has uses 0..255 of its own for element n);
///   generated quantities (`/output/generated_quantities`):
///     std::vector<hmc::ArrayShape> generated_quantities() const;  // host: names, dims, shapes
///     KOKKOS_FUNCTION void generate(const Row& draw, const rng::DrawStream& r, const Row& out) const;
///   the pointwise forms suit a model written once as a template (route (a)).
///
/// Device code cannot throw: a model returns -inf (or NaN) where the density is
/// undefined and the sampler rejects the move.

#include "hmc/core/draw_source.hpp"
#include "hmc/core/pack.hpp"
#include "hmc/core/philox.hpp"
#include "hmc/core/types.hpp"
#include "hmc/model/forward_gradient.hpp"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace hmc::model {

/// Most unconstrained coordinates a model may have: sizes stay far from int overflow,
/// and one particle's state (a few vectors of this length) stays below a GiB.
inline constexpr long long kMaxDim = 10'000'000;

namespace detail {

template <class...>
using void_t = void;

template <class M, class = void>
struct has_dim : std::false_type {};
template <class M>
struct has_dim<M, void_t<decltype(int{std::declval<const M&>().dim()})>> : std::true_type {};

template <class M, class = void>
struct has_num_params : std::false_type {};
template <class M>
struct has_num_params<M, void_t<decltype(int{std::declval<const M&>().num_params()})>> : std::true_type {};

template <class M, class = void>
struct has_parameter_names : std::false_type {};
template <class M>
struct has_parameter_names<M, std::enable_if_t<std::is_convertible_v<
                                  decltype(std::declval<const M&>().parameter_names()), std::vector<std::string>>>>
    : std::true_type {};

template <class M, class = void>
struct has_log_density : std::false_type {};
template <class M>
struct has_log_density<M, std::enable_if_t<std::is_same_v<
                              decltype(std::declval<const M&>().log_density(std::declval<const Row&>())), double>>>
    : std::true_type {};

template <class M, class = void>
struct has_log_density_gradient : std::false_type {};
template <class M>
struct has_log_density_gradient<
    M, std::enable_if_t<std::is_same_v<decltype(std::declval<const M&>().log_density_gradient(
                                           std::declval<const Row&>(), std::declval<const Row&>())),
                                       double>>> : std::true_type {};

template <class M, class = void>
struct has_constrain : std::false_type {};
template <class M>
struct has_constrain<
    M, void_t<decltype(std::declval<const M&>().constrain(std::declval<const Row&>(), std::declval<const Row&>()))>>
    : std::true_type {};

template <class M, class = void>
struct has_scratch_size : std::false_type {};
template <class M>
struct has_scratch_size<M, void_t<decltype(int{std::declval<const M&>().scratch_size()})>> : std::true_type {};

template <class M, class = void>
struct has_scratch_gradient : std::false_type {};
template <class M>
struct has_scratch_gradient<
    M, std::enable_if_t<
           std::is_same_v<decltype(std::declval<const M&>().log_density_gradient(
                              std::declval<const Row&>(), std::declval<const Row&>(), std::declval<const Row&>())),
                          double>>> : std::true_type {};

template <class M, class = void>
struct has_scratch_log_density : std::false_type {};
template <class M>
struct has_scratch_log_density<
    M, std::enable_if_t<std::is_same_v<decltype(std::declval<const M&>().log_density(std::declval<const Row&>(),
                                                                                     std::declval<const Row&>())),
                                       double>>> : std::true_type {};

template <class M, class = void>
struct has_log_density_scratch_size : std::false_type {};
template <class M>
struct has_log_density_scratch_size<M, void_t<decltype(int{std::declval<const M&>().log_density_scratch_size()})>>
    : std::true_type {};

template <class M, class = void>
struct has_sample_prior : std::false_type {};
template <class M>
struct has_sample_prior<M,
                        void_t<decltype(std::declval<const M&>().sample_prior(
                            std::declval<const rng::ParticleStream&>(), std::uint32_t{}, std::declval<const Row&>()))>>
    : std::true_type {};

template <class M, class = void>
struct has_from_config : std::false_type {};
template <class M>
struct has_from_config<
    M, std::enable_if_t<std::is_same_v<
           decltype(M::from_config(std::declval<const nlohmann::json&>(), std::declval<const nlohmann::json&>())), M>>>
    : std::true_type {};

template <class M, class = void>
struct has_config_keys : std::false_type {};
template <class M>
struct has_config_keys<M, void_t<decltype(M::config_keys().size())>> : std::true_type {};

template <class M, class = void>
struct has_lane_gradient : std::false_type {};
template <class M>
struct has_lane_gradient<M, void_t<decltype(std::declval<const M&>().template log_density_gradient_t<Pack>(
                                std::declval<const PackRow&>(), std::declval<const PackRow&>()))>>
    : std::is_same<decltype(std::declval<const M&>().template log_density_gradient_t<Pack>(
                       std::declval<const PackRow&>(), std::declval<const PackRow&>())),
                   Pack> {};

template <class M, class = void>
struct has_lane_scratch_gradient : std::false_type {};
template <class M>
struct has_lane_scratch_gradient<
    M, void_t<decltype(int{std::declval<const M&>().lane_scratch_size()}),
              decltype(std::declval<const M&>().log_density_gradient_lanes(
                  std::declval<const PackRow&>(), std::declval<const PackRow&>(), std::declval<Pack*>()))>>
    : std::is_same<decltype(std::declval<const M&>().log_density_gradient_lanes(
                       std::declval<const PackRow&>(), std::declval<const PackRow&>(), std::declval<Pack*>())),
                   Pack> {};

template <class M, class = void>
struct has_team_gradient : std::false_type {};
template <class M>
struct has_team_gradient<
    M, std::enable_if_t<std::is_same_v<decltype(std::declval<const M&>().log_density_gradient(
                                           std::declval<const TeamMember&>(), std::declval<const Row&>(),
                                           std::declval<const Row&>(), std::declval<const Row&>())),
                                       double> &&
                        std::is_convertible_v<decltype(std::declval<const M&>().gradient_team_size()), int>>>
    : std::true_type {};

template <class M, class = void>
struct has_dual_log_density : std::false_type {};
template <class M>
struct has_dual_log_density<
    M, std::enable_if_t<std::is_same_v<
           decltype(std::declval<const M&>().template log_density_t<Dual>(std::declval<const SeededRow&>())), Dual>>>
    : std::true_type {};

template <class M, class = void>
struct has_plan : std::false_type {};
template <class M>
struct has_plan<M, void_t<decltype(std::declval<M&>().plan(1L, 1L))>> : std::true_type {};

template <class M, class = void>
struct has_prepare_gradient : std::false_type {};
template <class M>
struct has_prepare_gradient<M, void_t<decltype(std::declval<M&>().prepare_gradient())>> : std::true_type {};

template <class M, class = void>
struct has_note : std::false_type {};
template <class M>
struct has_note<M, void_t<decltype(std::string(std::declval<const M&>().note()))>> : std::true_type {};

template <class M, class = void>
struct has_dim_names : std::false_type {};
template <class M>
struct has_dim_names<M, void_t<decltype(std::declval<const M&>().dim_names())>> : std::true_type {};

template <class M, class = void>
struct has_observations : std::false_type {};
template <class M>
struct has_observations<
    M,
    std::enable_if_t<std::is_convertible_v<decltype(std::declval<const M&>().observations()), std::vector<DataArray>>>>
    : std::true_type {};

template <class M, class = void>
struct has_constant_data : std::false_type {};
template <class M>
struct has_constant_data<
    M,
    std::enable_if_t<std::is_convertible_v<decltype(std::declval<const M&>().constant_data()), std::vector<DataArray>>>>
    : std::true_type {};

template <class M, class = void>
struct has_array_log_likelihood : std::false_type {};
template <class M>
struct has_array_log_likelihood<M, void_t<decltype(std::declval<const M&>().log_likelihood(
                                       std::declval<const Row&>(), std::declval<const Row&>()))>> : std::true_type {};

template <class M, class = void>
struct has_pointwise_log_likelihood : std::false_type {};
template <class M>
struct has_pointwise_log_likelihood<
    M, std::enable_if_t<std::is_convertible_v<
           decltype(std::declval<const M&>().log_likelihood(std::declval<const Row&>(), 0)), double>>>
    : std::true_type {};

template <class M, class = void>
struct has_array_predictive : std::false_type {};
template <class M>
struct has_array_predictive<
    M, void_t<decltype(std::declval<const M&>().posterior_predictive(
           std::declval<const Row&>(), std::declval<const rng::DrawStream&>(), std::declval<const Row&>()))>>
    : std::true_type {};

template <class M, class = void>
struct has_pointwise_predictive : std::false_type {};
template <class M>
struct has_pointwise_predictive<
    M,
    std::enable_if_t<std::is_convertible_v<decltype(std::declval<const M&>().posterior_predictive(
                                               std::declval<const Row&>(), 0, std::declval<const rng::DrawStream&>())),
                                           double>>> : std::true_type {};

template <class M, class = void>
struct has_generated_shapes : std::false_type {};
template <class M>
struct has_generated_shapes<M, std::enable_if_t<std::is_convertible_v<
                                   decltype(std::declval<const M&>().generated_quantities()), std::vector<ArrayShape>>>>
    : std::true_type {};

template <class M, class = void>
struct has_generate : std::false_type {};
template <class M>
struct has_generate<
    M, void_t<decltype(std::declval<const M&>().generate(
           std::declval<const Row&>(), std::declval<const rng::DrawStream&>(), std::declval<const Row&>()))>>
    : std::true_type {};

}  // namespace detail

/// \brief Does the model draw posterior predictive values of its observations, in either form?
template <class M>
constexpr bool has_posterior_predictive() {
  return detail::has_array_predictive<M>::value || detail::has_pointwise_predictive<M>::value;
}

/// \brief Does the model compute generated quantities?
template <class M>
constexpr bool has_generated_quantities() {
  return detail::has_generated_shapes<M>::value && detail::has_generate<M>::value;
}

/// \brief The names, dims and shapes of the model's generated quantities (none: empty).
template <class M>
std::vector<ArrayShape> generated_quantities(const M& m) {
  if constexpr (has_generated_quantities<M>()) {
    return m.generated_quantities();
  } else {
    (void)m;
    return {};
  }
}

/// \brief Writes posterior predictive draws of the `n` observed elements into out(0..n-1),
/// in the model's form (the pointwise form's element k gets r's uses from k · 256 on).
template <class M>
KOKKOS_INLINE_FUNCTION void posterior_predictive(const M& m, const Row& draw, const rng::DrawStream& r, const Row& out,
                                                 int n) {
  if constexpr (detail::has_array_predictive<M>::value) {
    (void)n;
    m.posterior_predictive(draw, r, out);
  } else if constexpr (detail::has_pointwise_predictive<M>::value) {
    for (int k = 0; k < n; ++k) out(k) = m.posterior_predictive(draw, k, r.from(static_cast<std::uint32_t>(k) << 8));
  } else {
    (void)m, (void)draw, (void)r, (void)out, (void)n;
  }
}

/// \brief The model's generated quantities of `draw` into out, or nothing.
template <class M>
KOKKOS_INLINE_FUNCTION void generate(const M& m, const Row& draw, const rng::DrawStream& r, const Row& out) {
  if constexpr (has_generated_quantities<M>()) {
    m.generate(draw, r, out);
  } else {
    (void)m, (void)draw, (void)r, (void)out;
  }
}

/// \brief Does the model describe its observed data (optional member observations())?
template <class M>
constexpr bool has_observations() {
  return detail::has_observations<M>::value;
}

/// \brief Does the model give its pointwise log-likelihood, in either form?
template <class M>
constexpr bool has_log_likelihood() {
  return detail::has_array_log_likelihood<M>::value || detail::has_pointwise_log_likelihood<M>::value;
}

/// \brief The model's observed data (none: empty).
template <class M>
std::vector<DataArray> observations(const M& m) {
  if constexpr (detail::has_observations<M>::value) {
    return m.observations();
  } else {
    (void)m;
    return {};
  }
}

/// \brief The model's covariates (none: empty).
template <class M>
std::vector<DataArray> constant_data(const M& m) {
  if constexpr (detail::has_constant_data<M>::value) {
    return m.constant_data();
  } else {
    (void)m;
    return {};
  }
}

/// \brief Writes log p(y_k | draw) for the `n` observed elements into out(0..n-1), in the
/// model's form; nothing for a model without the member (never called then).
template <class M>
KOKKOS_INLINE_FUNCTION void log_likelihood(const M& m, const Row& draw, const Row& out, int n) {
  if constexpr (detail::has_array_log_likelihood<M>::value) {
    (void)n;
    m.log_likelihood(draw, out);
  } else if constexpr (detail::has_pointwise_log_likelihood<M>::value) {
    for (int k = 0; k < n; ++k) out(k) = m.log_likelihood(draw, k);
  } else {
    (void)m, (void)draw, (void)out, (void)n;
  }
}

/// \brief Does the model write its gradient for the lane kernel (log_density_gradient_t,
/// or the scratch form log_density_gradient_lanes)?
template <class M>
constexpr bool has_lane_gradient() {
  return detail::has_lane_gradient<M>::value;
}
template <class M>
constexpr bool has_lane_scratch_gradient() {
  return detail::has_lane_scratch_gradient<M>::value;
}

/// \brief Does the model compute its gradient on a team of threads (the team form of
/// log_density_gradient and gradient_team_size())?
template <class M>
constexpr bool has_team_gradient() {
  return detail::has_team_gradient<M>::value;
}

/// \brief Threads of a team the model's gradient uses for this run (0: one particle per
/// thread; always 0 for models without a team gradient).
template <class M>
int gradient_team_size(const M& m) {
  if constexpr (detail::has_team_gradient<M>::value) {
    return m.gradient_team_size();
  } else {
    (void)m;
    return 0;
  }
}

/// \brief Can the model give a forward-mode reference gradient (model/forward_gradient.hpp):
/// does it have `log_density_t<hmc::Dual>(q)`, q(i) a Dual, returning a Dual?
template <class M>
constexpr bool has_forward_reference() {
  return detail::has_dual_log_density<M>::value;
}

/// \brief Lets the model settle what depends on the run's size (optional member plan()),
/// after preparing its automatic gradient (prepare_gradient(): hmc/model/autodiff.hpp, which
/// sizes the tape that scratch_size() then counts).
template <class M>
void plan(M& m, long particles_per_rank, long concurrency) {
  if constexpr (detail::has_prepare_gradient<M>::value) m.prepare_gradient();
  if constexpr (detail::has_plan<M>::value) {
    m.plan(particles_per_rank, concurrency);
  } else {
    (void)m, (void)particles_per_rank, (void)concurrency;
  }
}

/// \brief The model's note for summary.json's warnings, or "" for models without one.
template <class M>
std::string note(const M& m) {
  if constexpr (detail::has_note<M>::value) {
    return m.note();
  } else {
    (void)m;
    return {};
  }
}

/// \brief Names of the dimensions of the model's vector and matrix parameters (none: empty).
template <class M>
std::vector<std::pair<std::string, std::vector<std::string>>> dim_names(const M& m) {
  if constexpr (detail::has_dim_names<M>::value) {
    return m.dim_names();
  } else {
    (void)m;
    return {};
  }
}

/// \brief Can the model draw initial positions from its prior (`/sampler/init/strategy` "prior")?
/// Optional member: `KOKKOS_FUNCTION void sample_prior(const rng::ParticleStream& s, std::uint32_t use_base,
/// const Row& q) const`, writing an unconstrained draw using uses from `use_base` on at iteration 0.
template <class M>
constexpr bool can_sample_prior() {
  return detail::has_sample_prior<M>::value;
}

/// \brief The model's prior draw, or nothing for models without one (never called then).
template <class M>
KOKKOS_INLINE_FUNCTION void sample_prior(const M& m, const rng::ParticleStream& s, std::uint32_t use_base,
                                         const Row& q) {
  if constexpr (detail::has_sample_prior<M>::value) {
    m.sample_prior(s, use_base, q);
  } else {
    (void)m, (void)s, (void)use_base, (void)q;
  }
}

/// \brief Doubles of working memory the model's gradient needs per particle (0: none).
template <class M>
int scratch_size(const M& m) {
  if constexpr (detail::has_scratch_size<M>::value) {
    return m.scratch_size();
  } else {
    (void)m;
    return 0;
  }
}

/// \brief log p(q) and its gradient, handing the model its scratch if it takes one.
template <class M>
KOKKOS_INLINE_FUNCTION double log_density_gradient(const M& m, const Row& q, const Row& grad, const Row& scratch) {
  if constexpr (detail::has_scratch_gradient<M>::value) {
    return m.log_density_gradient(q, grad, scratch);
  } else {
    (void)scratch;
    return m.log_density_gradient(q, grad);
  }
}

/// \brief log p(q) and its gradient computed by a team of threads (every thread calls it
/// and gets the value): the model's team gradient, or else its gradient on one thread of
/// the team.
template <class M>
KOKKOS_INLINE_FUNCTION double log_density_gradient(const M& m, const TeamMember& team, const Row& q, const Row& grad,
                                                   const Row& scratch) {
  if constexpr (detail::has_team_gradient<M>::value) {
    return m.log_density_gradient(team, q, grad, scratch);
  } else {
    double lp = 0.0;
    Kokkos::single(
        Kokkos::PerTeam(team), [&](double& value) { value = log_density_gradient(m, q, grad, scratch); }, lp);
    return lp;
  }
}

/// \brief Doubles that the finite-difference density of the model needs (0: none).
template <class M>
int log_density_scratch_size(const M& m) {
  if constexpr (detail::has_log_density_scratch_size<M>::value) {
    return m.log_density_scratch_size();
  } else {
    (void)m;
    return 0;
  }
}

/// \brief log p(q) for the finite differences: log_density(q, scratch) where the model has it.
template <class M>
KOKKOS_INLINE_FUNCTION double finite_difference_density(const M& m, const Row& q, const Row& scratch) {
  if constexpr (detail::has_scratch_log_density<M>::value) {
    return m.log_density(q, scratch);
  } else {
    (void)scratch;
    return m.log_density(q);
  }
}

/// \brief Whether M has what the sampler and the gradient check use: every required
/// member but the two static ones (see the file comment).
template <class M>
constexpr bool is_model() {
  using namespace detail;
  return std::is_copy_constructible_v<M> && has_dim<M>::value && has_num_params<M>::value &&
         has_parameter_names<M>::value && has_log_density<M>::value && has_constrain<M>::value &&
         (has_log_density_gradient<M>::value || has_scratch_gradient<M>::value) &&
         has_scratch_size<M>::value == has_scratch_gradient<M>::value &&
         has_scratch_log_density<M>::value == has_log_density_scratch_size<M>::value &&
         !(has_array_log_likelihood<M>::value && has_pointwise_log_likelihood<M>::value) &&
         (!(has_array_log_likelihood<M>::value || has_pointwise_log_likelihood<M>::value) ||
          detail::has_observations<M>::value) &&
         !(has_array_predictive<M>::value && has_pointwise_predictive<M>::value) &&
         (!(has_array_predictive<M>::value || has_pointwise_predictive<M>::value) ||
          detail::has_observations<M>::value) &&
         has_generated_shapes<M>::value == has_generate<M>::value;
}

/// \brief ... and what the registry uses to build it from a run's config.
template <class M>
constexpr bool is_registrable_model() {
  return is_model<M>() && detail::has_from_config<M>::value && detail::has_config_keys<M>::value;
}

/// \brief Fails compilation with one message per missing member of is_model(); returns
/// is_model<M>(), so that `if constexpr (check_model<M>())` keeps what uses the members
/// from adding errors of its own.
template <class M>
constexpr bool check_model() {
  using namespace detail;
  static_assert(std::is_copy_constructible_v<M>, "hmc model: must be copyable by value into kernels");
  static_assert(has_dim<M>::value, "hmc model: missing `int dim() const`");
  static_assert(has_num_params<M>::value, "hmc model: missing `int num_params() const`");
  static_assert(has_parameter_names<M>::value, "hmc model: missing `std::vector<std::string> parameter_names() const`");
  static_assert(has_log_density<M>::value, "hmc model: missing `KOKKOS_FUNCTION double log_density(const Row&) const`");
  static_assert(has_log_density_gradient<M>::value || has_scratch_gradient<M>::value,
                "hmc model: missing `KOKKOS_FUNCTION double log_density_gradient(const Row& q, const Row& grad) "
                "const` (or its scratch form, with `int scratch_size() const`)");
  static_assert(has_scratch_size<M>::value == has_scratch_gradient<M>::value,
                "hmc model: `int scratch_size() const` and `log_density_gradient(q, grad, scratch)` come together");
  static_assert(has_scratch_log_density<M>::value == has_log_density_scratch_size<M>::value,
                "hmc model: `log_density_scratch_size()` and `log_density(q, scratch)` come together");
  static_assert(has_constrain<M>::value,
                "hmc model: missing `KOKKOS_FUNCTION void constrain(const Row& q, const Row& out) const`");
  static_assert(!(has_array_log_likelihood<M>::value && has_pointwise_log_likelihood<M>::value),
                "hmc model: give log_likelihood in one form, `void log_likelihood(const Row& draw, const Row& out)` or "
                "`double log_likelihood(const Row& draw, int n)`, not both");
  static_assert(!(has_array_log_likelihood<M>::value || has_pointwise_log_likelihood<M>::value) ||
                    detail::has_observations<M>::value,
                "hmc model: `log_likelihood` needs `std::vector<hmc::DataArray> observations() const` (what it is "
                "the likelihood of: names, dims and shapes)");
  static_assert(!(has_array_predictive<M>::value && has_pointwise_predictive<M>::value),
                "hmc model: give posterior_predictive in one form, `void posterior_predictive(const Row& draw, const "
                "rng::DrawStream& r, const Row& out)` or `double posterior_predictive(const Row& draw, int n, const "
                "rng::DrawStream& r)`, not both");
  static_assert(
      !(has_array_predictive<M>::value || has_pointwise_predictive<M>::value) || detail::has_observations<M>::value,
      "hmc model: `posterior_predictive` needs `std::vector<hmc::DataArray> observations() const` (what it "
      "draws: names, dims and shapes)");
  static_assert(has_generated_shapes<M>::value == has_generate<M>::value,
                "hmc model: `std::vector<hmc::ArrayShape> generated_quantities() const` and `void generate(const Row& "
                "draw, const rng::DrawStream& r, const Row& out) const` come together");
  return is_model<M>();
}

/// \brief check_model() and the static members the registry needs (app/register.hpp: HMC_REGISTER_MODEL).
template <class M>
constexpr bool check_registrable_model() {
  static_assert(detail::has_from_config<M>::value,
                "hmc model: missing `static Model from_config(const nlohmann::json& model, const nlohmann::json& "
                "data)`");
  static_assert(detail::has_config_keys<M>::value, "hmc model: missing `static keys::Keys config_keys()`");
  return check_model<M>() && is_registrable_model<M>();
}

}  // namespace hmc::model
