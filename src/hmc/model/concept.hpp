#pragma once
/// \file
/// \brief What a model must provide, checked at compile time.
///
/// A model is a small struct, copyable by value into kernels, its data in Views.
///
/// Host members:
///   int dim() const;                                   // unconstrained dimension
///   int num_params() const;                            // constrained outputs per draw
///   std::vector<std::string> parameter_names() const;  // num_params() names, e.g. "p[1]"
///
/// Device members (KOKKOS_FUNCTION ... const), `q` on the unconstrained scale:
///   double log_density(const Row& q) const;            // log p(q) incl. log|J|; -inf out of support
///   double log_density_gradient(const Row& q, const Row& grad) const;  // same value, writes d/dq
///   void constrain(const Row& q, const Row& out) const;                // num_params() values
///
/// Optional, for models whose gradient needs per-particle working memory (e.g. the
/// forward variables of an HMM, kept for the backward pass):
///   int scratch_size() const;                                            // doubles per particle
///   double log_density_gradient(const Row& q, const Row& grad, const Row& scratch) const;
/// The sampler then owns scratch_size() doubles per particle and passes them in.
///
/// Optional, for a cheaper log density where the gradient check (`hmc diagnose`) takes
/// its finite differences (the HMM: the forward pass alone, from materialised parameters):
///   int log_density_scratch_size() const;                              // doubles per evaluation
///   double log_density(const Row& q, const Row& scratch) const;        // the same value as log_density(q)
///
/// Device code cannot throw: a model returns -inf (or NaN) where the density is
/// undefined and the sampler rejects the move.

#include "hmc/core/philox.hpp"
#include "hmc/core/types.hpp"

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

}  // namespace detail

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

/// \brief Fails compilation with one message per missing member.
template <class M>
constexpr bool check_model() {
  static_assert(std::is_copy_constructible_v<M>, "hmc model: must be copyable by value into kernels");
  static_assert(detail::has_dim<M>::value, "hmc model: missing `int dim() const`");
  static_assert(detail::has_num_params<M>::value, "hmc model: missing `int num_params() const`");
  static_assert(detail::has_parameter_names<M>::value,
                "hmc model: missing `std::vector<std::string> parameter_names() const`");
  static_assert(detail::has_log_density<M>::value,
                "hmc model: missing `KOKKOS_FUNCTION double log_density(const Row&) const`");
  static_assert(detail::has_log_density_gradient<M>::value,
                "hmc model: missing `KOKKOS_FUNCTION double log_density_gradient(const Row& q, "
                "const Row& grad) const`");
  static_assert(detail::has_scratch_size<M>::value == detail::has_scratch_gradient<M>::value,
                "hmc model: `scratch_size()` and `log_density_gradient(q, grad, scratch)` come together");
  static_assert(detail::has_scratch_log_density<M>::value == detail::has_log_density_scratch_size<M>::value,
                "hmc model: `log_density_scratch_size()` and `log_density(q, scratch)` come together");
  static_assert(detail::has_constrain<M>::value,
                "hmc model: missing `KOKKOS_FUNCTION void constrain(const Row& q, const Row& out) "
                "const`");
  return true;
}

}  // namespace hmc::model
