#pragma once
/// \file
/// \brief Write a log density once, templated on its scalar; get its gradient by automatic
/// differentiation: reverse mode (hmc/model/reverse.hpp) on one particle, on a block of
/// lanes and on a GPU thread, forward mode where that is faster or the tape has no room.
///
/// A model derives from `AutodiffModel<Model>` (CRTP, no virtual functions) and provides,
/// besides the host members of hmc/model/concept.hpp and `constrain`,
///
///   KOKKOS_INLINE_FUNCTION int dim() const;   // device-callable
///   template <class T, class Q>
///   KOKKOS_INLINE_FUNCTION T log_density_t(const Q& q) const;
///
/// where `q(i)` yields the i-th unconstrained coordinate as a T and all math goes through
/// `math::` and hmc/distributions. T is double (the value), hmc::Var<double> and
/// hmc::Var<Pack> (reverse mode, one particle and a block of kLanes particles) and
/// hmc::Dual (forward mode). The base then supplies
///
///   double log_density(const Row& q) const;                    // log_density_t<double>
///   int scratch_size() const;                                  // the tape, doubles per particle
///   double log_density_gradient(const Row& q, const Row& grad, const Row& scratch) const;
///   int lane_scratch_size() const;                             // the tape of a block, Packs
///   Pack log_density_gradient_lanes(const PackRow& q, const PackRow& grad, Pack* scratch) const;
///   double log_density_gradient(const Row& q, const Row& grad) const;  // forward mode, no tape
///   void prepare_gradient();                                   // host: measures the tape
///
/// **The tape.** prepare_gradient() (called by model::plan() when a run prepares the model)
/// records the density once at a few fixed points with a tape that only counts, and sizes
/// the tape from the largest count with room to spare (TapeLayout::with_room). The sampler
/// then owns scratch_size() doubles per particle (and lane_scratch_size() Packs per host
/// thread), allocated before sampling. A model whose control flow records more than that
/// at some q, or one never prepared, gets the same gradient by forward mode.
///
/// **Which mode.** Reverse mode costs a small multiple of one log density whatever D is;
/// forward mode costs D evaluations on Duals. For D <= kForwardMaxDim the one-particle
/// gradient uses forward mode, which measured faster there (docs/performance.md,
/// "Automatic differentiation"); the lanes always record. HMC_AUTODIFF=forward or
/// reverse in the environment forces one (A/B measurements).
///
/// **Lanes.** A density whose control flow depends on parameter values (`if (x < 0)`) cannot
/// run on Var<Pack> (a Pack has no single truth value): such a model says
/// `static constexpr bool autodiff_lanes = false;` and its host kernel runs one particle
/// per thread. A model that writes its own `log_density_gradient` hides the base's, and
/// then the base supplies neither tape nor lanes (check the two gradients against each
/// other: `hmc diagnose` does).

#include "hmc/core/pack.hpp"
#include "hmc/core/types.hpp"
#include "hmc/model/dual.hpp"
#include "hmc/model/forward_gradient.hpp"
#include "hmc/model/reverse.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <utility>

namespace hmc::model {

/// Largest dimension at which one particle's gradient takes forward mode (D passes on
/// Duals) rather than reverse mode: measured (docs/performance.md).
inline constexpr int kForwardMaxDim = 4;

using DualRow = DualRowOf<Row>;

/// \brief Coordinates read as Vars: coordinate i is input node i of `tape`.
template <class S, class Q>
struct VarRow {
  Q q;
  ad::Tape<S>* tape;
  KOKKOS_INLINE_FUNCTION Var<S> operator()(int i) const { return Var<S>(q(i), i, tape); }
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

template <class M, class = void>
struct autodiff_lanes_flag : std::true_type {};
template <class M>
struct autodiff_lanes_flag<M, std::void_t<decltype(M::autodiff_lanes)>> : std::bool_constant<M::autodiff_lanes> {};

/// Does M's 3-argument gradient reach the base (no own log_density_gradient hiding it)?
template <class M, class = void>
struct reaches_base_gradient : std::false_type {};
template <class M>
struct reaches_base_gradient<M,
                             std::void_t<decltype(std::declval<const M&>().log_density_gradient(
                                 std::declval<const Row&>(), std::declval<const Row&>(), std::declval<const Row&>()))>>
    : std::true_type {};

/// The mode asked for in the environment: 0 none, 1 forward, 2 reverse.
inline int autodiff_mode_from_env() {
  const char* m = std::getenv("HMC_AUTODIFF");
  if (m == nullptr) return 0;
  if (std::strcmp(m, "forward") == 0) return 1;
  if (std::strcmp(m, "reverse") == 0) return 2;
  return 0;
}

}  // namespace detail

/// \brief The gradient of `m.log_density_t` at q by forward mode: one pass per coordinate
/// on Duals. Any indexables of doubles (Row, LaneRow).
template <class M, class Q, class G>
KOKKOS_INLINE_FUNCTION double forward_gradient(const M& m, int d, const Q& q, const G& grad) {
  if (d == 0) return m.template log_density_t<double>(q);
  double lp = 0.0;
  for (int j = 0; j < d; ++j) {
    const Dual r = m.template log_density_t<Dual>(DualRowOf<Q>{q, j});
    grad(j) = r.tangent;
    lp = r.value;
  }
  return lp;
}

/// \brief The gradient of `m.log_density_t` at q by reverse mode on `tape` (S = double: one
/// particle; Pack: a block). False where the tape ran out of room (grad is then not written).
template <class S, class M, class Q, class G>
KOKKOS_INLINE_FUNCTION bool reverse_gradient(const M& m, int d, const Q& q, const G& grad, ad::Tape<S>& tape, S& lp) {
  const Var<S> r = m.template log_density_t<Var<S>>(VarRow<S, Q>{q, &tape});
  if (tape.overflow) return false;
  lp = r.v;
  if (r.id < 0) {  // the density does not depend on q
    for (int j = 0; j < d; ++j) grad(j) = S(0.0);
    return true;
  }
  tape.backward(r.id, d);
  for (int j = 0; j < d; ++j) grad(j) = tape.adjoint(j);
  return true;
}

/// \brief CRTP base: the value and the gradients from `Derived::log_density_t`.
template <class Derived>
struct AutodiffModel {
  /// The tape's capacity, set by prepare_gradient(); 0: not prepared (forward mode).
  ad::TapeLayout tape_layout{};
  /// Whether one particle's gradient records a tape (else forward mode).
  bool reverse_scalar = false;

  KOKKOS_INLINE_FUNCTION double log_density(const Row& q) const {
    static_assert(detail::has_log_density_t<Derived, double, Row>::value,
                  "hmc autodiff model: missing `template <class T, class Q> KOKKOS_INLINE_FUNCTION T "
                  "log_density_t(const Q& q) const` returning T");
    return self().template log_density_t<double>(q);
  }

  /// Forward mode, without a tape (callers that hold no scratch).
  KOKKOS_INLINE_FUNCTION double log_density_gradient(const Row& q, const Row& grad) const {
    static_assert(detail::has_log_density_t<Derived, Dual, DualRow>::value,
                  "hmc autodiff model: `log_density_t<T>(q)` must also accept T = hmc::Dual, with q(i) a Dual");
    return forward_gradient(self(), self().dim(), q, grad);
  }

  /// Doubles of tape per particle (0: forward mode).
  template <class D = Derived, std::enable_if_t<detail::reaches_base_gradient<D>::value, int> = 0>
  int scratch_size() const {
    return reverse_scalar ? static_cast<int>(tape_layout.doubles()) : 0;
  }

  /// Reverse mode on the particle's scratch row; forward mode without one or where the
  /// tape has no room.
  KOKKOS_INLINE_FUNCTION double log_density_gradient(const Row& q, const Row& grad, const Row& scratch) const {
    static_assert(detail::has_log_density_t<Derived, Var<double>, VarRow<double, Row>>::value,
                  "hmc autodiff model: `log_density_t<T>(q)` must also accept T = hmc::Var<double>, with q(i) a "
                  "Var<double> (write the density with math:: and hmc/distributions, templated on T)");
    const int d = self().dim();
    if (scratch.data != nullptr && reverse_scalar) {
      ad::Tape<double> tape(ad::TapeStorage<double>{scratch.data, scratch.stride}, tape_layout, d);
      double lp = 0.0;
      if (reverse_gradient(self(), d, q, grad, tape, lp)) return lp;
    }
    return forward_gradient(self(), d, q, grad);
  }

  /// Packs of tape per block of lanes.
  template <class D = Derived,
            std::enable_if_t<detail::reaches_base_gradient<D>::value && detail::autodiff_lanes_flag<D>::value, int> = 0>
  int lane_scratch_size() const {
    return static_cast<int>(std::max(1L, tape_layout.packs()));
  }

  /// Reverse mode on a block of lanes (sampler/lanes.hpp); forward mode lane by lane where
  /// the tape has no room.
  template <class D = Derived,
            std::enable_if_t<detail::reaches_base_gradient<D>::value && detail::autodiff_lanes_flag<D>::value, int> = 0>
  Pack log_density_gradient_lanes(const PackRow& q, const PackRow& grad, Pack* scratch) const {
    const int d = self().dim();
    Pack lp(0.0);
    if (tape_layout.nodes > 0) {
      ad::Tape<Pack> tape(ad::TapeStorage<Pack>{scratch}, tape_layout, d);
      if (reverse_gradient(self(), d, q, grad, tape, lp)) return lp;
    }
    for (int l = 0; l < kLanes; ++l) {
      lp[l] = forward_gradient(self(), d, LaneRow{q.data, l}, LaneRow{grad.data, l});
    }
    return lp;
  }

  /// Host: measures the tape at a few fixed points and chooses the mode (model::plan()
  /// calls it when a run prepares the model; tests call it themselves).
  void prepare_gradient() {
    const int d = self().dim();
    const TapeLayout_counts counts = measure(self(), d);
    tape_layout = ad::TapeLayout::with_room(counts.nodes, counts.edges);
    const int env = detail::autodiff_mode_from_env();
    reverse_scalar = env == 2 || (env == 0 && d > kForwardMaxDim);
  }

 private:
  struct TapeLayout_counts {
    int nodes = 0, edges = 0;
  };

  /// The most nodes and edges the density records at q = 0, 0.5 and alternating ±1.
  struct Measure {
    Derived model;
    Kokkos::View<double**, MemSpace> points;
    Kokkos::View<int*, MemSpace> counts;
    KOKKOS_INLINE_FUNCTION void operator()(int p) const {
      const int d = model.dim();
      ad::Tape<double> tape(ad::TapeStorage<double>{}, ad::TapeLayout{2147483000, 2147483000}, d);
      const Row q{d > 0 ? &points(p, 0) : nullptr, d > 0 ? static_cast<std::ptrdiff_t>(points.stride(1)) : 1};
      (void)model.template log_density_t<Var<double>>(VarRow<double, Row>{q, &tape});
      counts(2 * p) = tape.nodes;
      counts(2 * p + 1) = tape.edges;
    }
  };
  static TapeLayout_counts measure(const Derived& m, int d) {
    constexpr int kPoints = 3;
    Kokkos::View<double**, MemSpace> points("hmc::tape_points", kPoints, std::max(d, 1));
    auto host_points = Kokkos::create_mirror_view(points);
    for (int j = 0; j < d; ++j) {
      host_points(0, j) = 0.0;
      host_points(1, j) = 0.5;
      host_points(2, j) = j % 2 == 0 ? 1.0 : -1.0;
    }
    Kokkos::deep_copy(points, host_points);
    Kokkos::View<int*, MemSpace> counts("hmc::tape_counts", 2 * kPoints);
    Kokkos::parallel_for("hmc::measure_tape", Kokkos::RangePolicy<ExecSpace>(0, kPoints), Measure{m, points, counts});
    auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), counts);
    TapeLayout_counts c;
    for (int p = 0; p < kPoints; ++p) {
      c.nodes = std::max(c.nodes, host(2 * p));
      c.edges = std::max(c.edges, host(2 * p + 1));
    }
    return c;
  }

  KOKKOS_INLINE_FUNCTION const Derived& self() const { return static_cast<const Derived&>(*this); }
};

}  // namespace hmc::model
