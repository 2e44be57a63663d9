#pragma once
/// \file
/// \brief Write a log density once, templated on its scalar; get its gradient by
/// forward-mode automatic differentiation.
///
/// A model derives from `AutodiffModel<Model>` (CRTP, no virtual functions) and
/// provides, besides the host members of hmc/model/concept.hpp and `constrain`,
///
///   KOKKOS_INLINE_FUNCTION int dim() const;   // device-callable: the gradient loops over it
///   template <class T, class Q>
///   KOKKOS_INLINE_FUNCTION T log_density_t(const Q& q) const;
///
/// where `q(i)` yields the i-th unconstrained coordinate as a T (T = double or
/// hmc::Dual) and all math goes through `math::` (hmc/model/dual.hpp). The base
/// then supplies
///
///   double log_density(const Row& q) const;                        // log_density_t<double>
///   double log_density_gradient(const Row& q, const Row& grad) const;
///
/// Cost: the gradient takes dim() forward passes, each seeding one coordinate with
/// tangent 1 and costing one to two evaluations of the density (eight schools,
/// dim() = 10: one gradient is about 11 log_density calls on a CPU core).
/// That is fine for a handful to a few tens of parameters; for larger or hot
/// models write `log_density_gradient` by hand (it then hides the base's, and
/// check the two against each other in a test).

#include "hmc/core/types.hpp"
#include "hmc/model/dual.hpp"

#include <type_traits>
#include <utility>

namespace hmc::model {

/// \brief One particle's coordinates read as Duals, coordinate `seed` carrying tangent 1.
struct DualRow {
  Row q;
  int seed;
  KOKKOS_INLINE_FUNCTION Dual operator()(int i) const { return Dual(q(i), i == seed ? 1.0 : 0.0); }
};

namespace detail {

template <class M, class T, class Q, class = void>
struct has_log_density_t : std::false_type {};
template <class M, class T, class Q>
struct has_log_density_t<
    M, T, Q,
    std::enable_if_t<
        std::is_same_v<decltype(std::declval<const M&>().template log_density_t<T>(std::declval<const Q&>())), T>>>
    : std::true_type {};

}  // namespace detail

/// \brief CRTP base: `log_density` and `log_density_gradient` from `Derived::log_density_t`.
template <class Derived>
struct AutodiffModel {
  KOKKOS_INLINE_FUNCTION double log_density(const Row& q) const {
    static_assert(detail::has_log_density_t<Derived, double, Row>::value,
                  "hmc autodiff model: missing `template <class T, class Q> KOKKOS_INLINE_FUNCTION T "
                  "log_density_t(const Q& q) const` returning T");
    return self().template log_density_t<double>(q);
  }

  KOKKOS_INLINE_FUNCTION double log_density_gradient(const Row& q, const Row& grad) const {
    static_assert(detail::has_log_density_t<Derived, Dual, DualRow>::value,
                  "hmc autodiff model: `log_density_t<T>(q)` must also accept T = hmc::Dual, with q(i) a Dual");
    const int d = self().dim();
    if (d == 0) return log_density(q);
    double lp = 0.0;
    // One forward pass per coordinate: pass j carries d log p / d q_j in its tangent.
    for (int j = 0; j < d; ++j) {
      const Dual r = self().template log_density_t<Dual>(DualRow{q, j});
      grad(j) = r.tangent;
      lp = r.value;
    }
    return lp;
  }

 private:
  KOKKOS_INLINE_FUNCTION const Derived& self() const { return static_cast<const Derived&>(*this); }
};

}  // namespace hmc::model
