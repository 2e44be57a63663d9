#pragma once
/// \file
/// \brief An explicit adaptive Runge–Kutta ODE solver (Dormand–Prince 5(4)) for log densities
/// written as templates on their number type: `hmc::ode::rk45`, in device code too.
///
///   struct Rhs {  // dy/dt = f(t, y, theta), any number type T
///     template <class T>
///     KOKKOS_INLINE_FUNCTION void operator()(double t, const T (&y)[2], const T (&th)[4], T (&dy)[2]) const;
///   };
///   T z[20][2];
///   const bool ok = ode::rk45(Rhs{}, y0, 0.0, ts, 20, theta, z, ode::Tolerances{1e-5, 1e-3, 500});
///   if (!ok) return -math::infinity();
///   // or, without storing the trajectory (any number of outputs on a GPU thread):
///   ode::rk45_each(Rhs{}, y0, 0.0, ts, n, theta, tol, [&](int i, const T (&z)[2]) { ... });
///
/// It mirrors Stan's `integrate_ode_rk45(f, y0, t0, ts, theta, x_r, x_i, rel_tol, abs_tol,
/// max_num_steps)`: the state at each output time ts[0] < ts[1] < ... (all > t0), data and
/// constants captured by the functor instead of x_r/x_i. Everything is fixed-size (N states,
/// P parameters, template arguments) and nothing is allocated, so it runs on a GPU thread.
///
/// **Tolerance** (Stan's meaning). A step of size h is accepted when, for every component i,
/// |y5_i - y4_i| <= abs_tol + rel_tol · max(|y_i(t)|, |y_i(t + h)|) (the embedded 4th-order
/// error estimate against a mixed absolute/relative scale, max norm as Boost.odeint in Stan);
/// the next step is h · clamp(0.9 err^(-1/5), 0.2, 5). This bounds the local error per step;
/// the global error is typically of the order of the tolerances (the tests check the exact
/// solutions to 10 · tolerance). Output times are hit exactly (the step is shortened to land
/// on them), no dense-output interpolation. `max_steps` bounds the attempted steps (accepted
/// and rejected) between two output times, as Stan's max_num_steps.
///
/// **Failure.** rk45 returns false (and leaves later outputs unwritten) when an interval needs
/// more than max_steps, when the state or the error estimate is not finite, or when the step
/// underflows: the model then returns -infinity, which the sampler rejects (never throw).
///
/// **Differentiation.** The solver is differentiated as it runs: the step sizes are numbers
/// of type T (they depend on the parameters through the error estimate) and only the discrete
/// decisions (accept or reject a step, shorten it to land on an output time, clamp the step
/// factor) look at values (`value_of`). So every number type takes the same steps, and the
/// gradient is the exact derivative of the log density as the double solve computes it,
/// which is what HMC's energy conservation needs; it agrees with finite differences of the
/// solve away from a change of those decisions. (Dropping the step sizes' derivative would
/// be off by the order of the error per step times the parameter sensitivity of the step:
/// far from the posterior, with abs_tol dominating a state near 0, that is not small.) The
/// RHS's time argument is a double: for a non-autonomous f the derivative through the stage
/// times is dropped (it is exact for autonomous systems, whose f ignores t).
/// - T = double and hmc::Dual: the solver runs on T directly (a Dual solve is one
///   directional derivative, forward mode).
/// - T = hmc::Var<double> (reverse mode): the solve is *not* recorded step by step, which
///   would put thousands of nodes per solve on the tape and make its size depend on the
///   number of steps, i.e. on q. The solver instead runs once on a forward-mode number with
///   N + P tangents (ode::Jet, forward sensitivities of y0 and theta) and records one node
///   per output component, whose N + P edges carry those sensitivities: 2 outputs x 20
///   times = 40 nodes for lotka_volterra, whatever the step count.
/// - T = hmc::Var<Pack> is refused at compile time: a Pack holds kLanes particles that share
///   one control flow, but each particle needs its own steps (sharing the most cautious step
///   would make a particle's draws depend on which particles share its lane, and the draws
///   must be the same bitwise whatever the lane grouping). A model that calls rk45 says
///   `static constexpr bool autodiff_lanes = false;` (hmc/model/autodiff.hpp): one particle
///   per thread.
///
/// The RHS functor is called with T = double, Dual or ode::Jet<N + P>: write it with
/// arithmetic and math::exp, log, sqrt, sin, cos, pow(x, double) (named in hmc::math for Jet
/// below, as for Dual and Var).

#include "hmc/core/kokkos_shim.hpp"
#include "hmc/core/pack.hpp"
#include "hmc/model/dual.hpp"
#include "hmc/model/reverse.hpp"

#include <type_traits>

namespace hmc::ode {

/// \brief Stan's rk45 controls: relative and absolute tolerance, attempted steps per output
/// interval (Stan's defaults: 1e-6, 1e-6, 1e6).
struct Tolerances {
  double rel_tol = 1e-6;
  double abs_tol = 1e-6;
  int max_steps = 1000000;
};

// ---- Jet: a value and K tangents (forward sensitivities), for the reverse-mode path --------

/// \brief A value and its derivatives with respect to K inputs.
template <int K>
struct Jet {
  double v = 0.0;
  double d[K] = {};

  KOKKOS_INLINE_FUNCTION Jet() {}  // NOLINT(modernize-use-equals-default): annotated for device code
  /// A constant: implicit, so that `T x = 1.0;` works for T = Jet.
  KOKKOS_INLINE_FUNCTION Jet(double c) : v(c) {}  // NOLINT(google-explicit-constructor)

  KOKKOS_INLINE_FUNCTION Jet& operator+=(const Jet& o) {
    v += o.v;
    for (int k = 0; k < K; ++k) d[k] += o.d[k];
    return *this;
  }
  KOKKOS_INLINE_FUNCTION Jet& operator-=(const Jet& o) {
    v -= o.v;
    for (int k = 0; k < K; ++k) d[k] -= o.d[k];
    return *this;
  }
  KOKKOS_INLINE_FUNCTION Jet& operator*=(const Jet& o) {
    for (int k = 0; k < K; ++k) d[k] = d[k] * o.v + v * o.d[k];
    v *= o.v;
    return *this;
  }
  KOKKOS_INLINE_FUNCTION Jet& operator/=(const Jet& o) {
    const double r = v / o.v;
    for (int k = 0; k < K; ++k) d[k] = (d[k] - r * o.d[k]) / o.v;
    v = r;
    return *this;
  }
};

/// x with every tangent scaled by `dv` (the chain rule of a unary function with value `value`).
template <int K>
KOKKOS_INLINE_FUNCTION Jet<K> chain(double value, double dv, const Jet<K>& x) {
  Jet<K> r(value);
  for (int k = 0; k < K; ++k) r.d[k] = dv * x.d[k];
  return r;
}

template <int K>
KOKKOS_INLINE_FUNCTION Jet<K> operator+(const Jet<K>& a) {
  return a;
}
template <int K>
KOKKOS_INLINE_FUNCTION Jet<K> operator-(const Jet<K>& a) {
  return chain(-a.v, -1.0, a);
}
template <int K>
KOKKOS_INLINE_FUNCTION Jet<K> operator+(Jet<K> a, const Jet<K>& b) {
  return a += b;
}
template <int K>
KOKKOS_INLINE_FUNCTION Jet<K> operator-(Jet<K> a, const Jet<K>& b) {
  return a -= b;
}
template <int K>
KOKKOS_INLINE_FUNCTION Jet<K> operator*(Jet<K> a, const Jet<K>& b) {
  return a *= b;
}
template <int K>
KOKKOS_INLINE_FUNCTION Jet<K> operator/(Jet<K> a, const Jet<K>& b) {
  return a /= b;
}
template <int K>
KOKKOS_INLINE_FUNCTION Jet<K> operator+(Jet<K> a, double c) {
  a.v += c;
  return a;
}
template <int K>
KOKKOS_INLINE_FUNCTION Jet<K> operator+(double c, Jet<K> a) {
  a.v += c;
  return a;
}
template <int K>
KOKKOS_INLINE_FUNCTION Jet<K> operator-(Jet<K> a, double c) {
  a.v -= c;
  return a;
}
template <int K>
KOKKOS_INLINE_FUNCTION Jet<K> operator-(double c, const Jet<K>& a) {
  return chain(c - a.v, -1.0, a);
}
template <int K>
KOKKOS_INLINE_FUNCTION Jet<K> operator*(const Jet<K>& a, double c) {
  return chain(a.v * c, c, a);
}
template <int K>
KOKKOS_INLINE_FUNCTION Jet<K> operator*(double c, const Jet<K>& a) {
  return chain(c * a.v, c, a);
}
template <int K>
KOKKOS_INLINE_FUNCTION Jet<K> operator/(const Jet<K>& a, double c) {
  return chain(a.v / c, 1.0 / c, a);
}
template <int K>
KOKKOS_INLINE_FUNCTION Jet<K> operator/(double c, const Jet<K>& a) {
  const double r = c / a.v;
  return chain(r, -r / a.v, a);
}

// Comparisons look at values only, as for Dual.
template <int K>
KOKKOS_INLINE_FUNCTION bool operator<(const Jet<K>& a, double c) {
  return a.v < c;
}
template <int K>
KOKKOS_INLINE_FUNCTION bool operator>(const Jet<K>& a, double c) {
  return a.v > c;
}

template <int K>
KOKKOS_INLINE_FUNCTION Jet<K> exp(const Jet<K>& x) {
  const double e = math::exp(x.v);
  return chain(e, e, x);
}
template <int K>
KOKKOS_INLINE_FUNCTION Jet<K> log(const Jet<K>& x) {
  return chain(math::log(x.v), 1.0 / x.v, x);
}
template <int K>
KOKKOS_INLINE_FUNCTION Jet<K> sqrt(const Jet<K>& x) {
  const double s = math::sqrt(x.v);
  return chain(s, 0.5 / s, x);
}
template <int K>
KOKKOS_INLINE_FUNCTION Jet<K> sin(const Jet<K>& x) {
  return chain(math::sin(x.v), math::cos(x.v), x);
}
template <int K>
KOKKOS_INLINE_FUNCTION Jet<K> cos(const Jet<K>& x) {
  return chain(math::cos(x.v), -math::sin(x.v), x);
}
/// x^p for a constant exponent.
template <int K>
KOKKOS_INLINE_FUNCTION Jet<K> pow(const Jet<K>& x, double p) {
  if (p == 0.0) return Jet<K>(1.0);
  return chain(math::pow(x.v, p), p * math::pow(x.v, p - 1.0), x);
}

template <int K>
KOKKOS_INLINE_FUNCTION double value_of(const Jet<K>& x) {
  return x.v;
}
using hmc::value_of;

// ---- the solver on one number type ----------------------------------------------------------

namespace detail {

/// The Dormand–Prince 5(4) tableau (Dormand & Prince 1980; Hairer, Nørsett & Wanner, Table 5.2).
struct Dopri5 {
  static constexpr double c2 = 1.0 / 5, c3 = 3.0 / 10, c4 = 4.0 / 5, c5 = 8.0 / 9;
  static constexpr double a21 = 1.0 / 5;
  static constexpr double a31 = 3.0 / 40, a32 = 9.0 / 40;
  static constexpr double a41 = 44.0 / 45, a42 = -56.0 / 15, a43 = 32.0 / 9;
  static constexpr double a51 = 19372.0 / 6561, a52 = -25360.0 / 2187, a53 = 64448.0 / 6561, a54 = -212.0 / 729;
  static constexpr double a61 = 9017.0 / 3168, a62 = -355.0 / 33, a63 = 46732.0 / 5247, a64 = 49.0 / 176,
                          a65 = -5103.0 / 18656;
  // The 5th-order weights (also stage 7: first same as last).
  static constexpr double b1 = 35.0 / 384, b3 = 500.0 / 1113, b4 = 125.0 / 192, b5 = -2187.0 / 6784, b6 = 11.0 / 84;
  // y5 - y4, the error estimate.
  static constexpr double e1 = 71.0 / 57600, e3 = -71.0 / 16695, e4 = 71.0 / 1920, e5 = -17253.0 / 339200,
                          e6 = 22.0 / 525, e7 = -1.0 / 40;
};

KOKKOS_INLINE_FUNCTION double abs(double x) { return x < 0.0 ? -x : x; }
KOKKOS_INLINE_FUNCTION double min(double a, double b) { return a < b ? a : b; }
KOKKOS_INLINE_FUNCTION double max(double a, double b) { return a > b ? a : b; }

/// |x| for any number type (the derivative from the right at 0).
template <class T>
KOKKOS_INLINE_FUNCTION T abs_t(const T& x) {
  return value_of(x) < 0.0 ? T(-x) : x;
}

/// The solve on number type T (double, Dual, Jet): `put(i, y)` with the state y at ts(i).
/// The step sizes are numbers of type T too: the derivative is that of the whole computation.
template <int N, int P, class T, class F, class TS, class Put>
KOKKOS_INLINE_FUNCTION bool solve(const F& f, const T (&y0)[N], double t0, const TS& ts, int n_ts, const T (&theta)[P],
                                  const Tolerances& tol, const Put& put) {
  using C = Dopri5;
  using math::pow;  // and, by argument-dependent lookup, Dual's and Jet's
  T y[N], k1[N], k2[N], k3[N], k4[N], k5[N], k6[N], k7[N], tmp[N], y_new[N];
  for (int i = 0; i < N; ++i) y[i] = y0[i];
  T t = t0;
  f(t0, y, theta, k1);

  // Initial step (Hairer's starting-step heuristic): h0 = 0.01 |y| / |f| in the scaled max norm.
  T h;
  {
    T d0 = 0.0, d1 = 0.0;
    for (int i = 0; i < N; ++i) {
      const T sc = tol.abs_tol + tol.rel_tol * abs_t(y[i]);
      const T a = abs_t(y[i]) / sc, b = abs_t(k1[i]) / sc;
      if (value_of(a) > value_of(d0)) d0 = a;
      if (value_of(b) > value_of(d1)) d1 = b;
    }
    if (value_of(d0) < 1e-5 || value_of(d1) < 1e-5) {
      h = 1e-6;
    } else {
      h = 0.01 * d0 / d1;
    }
    if (!(value_of(h) > 0.0) || !math::isfinite(value_of(h))) return false;
  }

  for (int out = 0; out < n_ts; ++out) {
    const double t_end = ts(out);
    if (!(t_end > value_of(t))) return false;  // output times must increase
    int steps = 0;
    while (value_of(t) < t_end) {
      if (++steps > tol.max_steps) return false;
      // Land on the output time exactly (and do not leave a sliver of a step before it).
      const bool last = value_of(t) + 1.01 * value_of(h) >= t_end;
      const T hs = last ? T(t_end - t) : h;
      const double tv = value_of(t), hv = value_of(hs);
      if (!(hv > 1e-14 * max(1.0, abs(tv)))) return false;  // the step underflowed

      for (int i = 0; i < N; ++i) tmp[i] = y[i] + hs * (C::a21 * k1[i]);
      f(tv + C::c2 * hv, tmp, theta, k2);
      for (int i = 0; i < N; ++i) tmp[i] = y[i] + hs * (C::a31 * k1[i] + C::a32 * k2[i]);
      f(tv + C::c3 * hv, tmp, theta, k3);
      for (int i = 0; i < N; ++i) tmp[i] = y[i] + hs * (C::a41 * k1[i] + C::a42 * k2[i] + C::a43 * k3[i]);
      f(tv + C::c4 * hv, tmp, theta, k4);
      for (int i = 0; i < N; ++i) {
        tmp[i] = y[i] + hs * (C::a51 * k1[i] + C::a52 * k2[i] + C::a53 * k3[i] + C::a54 * k4[i]);
      }
      f(tv + C::c5 * hv, tmp, theta, k5);
      for (int i = 0; i < N; ++i) {
        tmp[i] = y[i] + hs * (C::a61 * k1[i] + C::a62 * k2[i] + C::a63 * k3[i] + C::a64 * k4[i] + C::a65 * k5[i]);
      }
      f(tv + hv, tmp, theta, k6);
      for (int i = 0; i < N; ++i) {
        y_new[i] = y[i] + hs * (C::b1 * k1[i] + C::b3 * k3[i] + C::b4 * k4[i] + C::b5 * k5[i] + C::b6 * k6[i]);
      }
      f(tv + hv, y_new, theta, k7);

      // The scaled error, max norm. Accept/reject looks at its value: the same steps for every T.
      T err = 0.0;
      bool finite = true;
      for (int i = 0; i < N; ++i) {
        const T e =
            hs * (C::e1 * k1[i] + C::e3 * k3[i] + C::e4 * k4[i] + C::e5 * k5[i] + C::e6 * k6[i] + C::e7 * k7[i]);
        const T ay = abs_t(y[i]), an = abs_t(y_new[i]);
        const T sc = tol.abs_tol + tol.rel_tol * (value_of(an) > value_of(ay) ? an : ay);
        const T r = abs_t(e) / sc;
        if (value_of(r) > value_of(err)) err = r;
        finite = finite && math::isfinite(value_of(y_new[i])) && math::isfinite(value_of(r));
      }
      if (!finite) {
        // Non-finite: retry smaller (a blow-up of the trial step), fail if it persists.
        h = 0.2 * hs;
        continue;
      }
      // fac = clamp(0.9 err^(-1/5), 0.2, 5).
      const double ev = value_of(err);
      T fac = 5.0;
      if (ev > 0.0) {
        const double fv = 0.9 * math::pow(ev, -0.2);
        if (fv < 0.2) {
          fac = 0.2;
        } else if (fv < 5.0) {
          fac = 0.9 * pow(err, -0.2);
        }
      }
      if (ev <= 1.0) {
        t = last ? T(t_end) : T(t + hs);
        for (int i = 0; i < N; ++i) {
          y[i] = y_new[i];
          k1[i] = k7[i];  // first same as last
        }
        // A step cut short to land on t_end keeps the longer proposal it cut.
        if (!(last && value_of(hs) < value_of(h))) h = hs * fac;
      } else {
        h = hs * fac;
      }
    }
    put(out, y);
  }
  return true;
}

}  // namespace detail

// ---- the interface ----------------------------------------------------------------------------

/// \brief Solves dy/dt = f(t, y, theta), y(t0) = y0, and calls `put(i, y)` with the state
/// `const T (&y)[N]` at each output time ts(i), i = 0 .. n_ts - 1 in order (ts: any `ts(i)`
/// indexable, e.g. a View, of increasing times > t0). A model can use each state as it comes
/// (no storage for the whole trajectory). True on success; false on failure (max_steps,
/// non-finite, step underflow, times not increasing; later outputs are then not put): see the
/// file comment. T: double, hmc::Dual or hmc::Var<double>.
template <int N, int P, class T, class F, class TS, class Put>
KOKKOS_INLINE_FUNCTION bool rk45_each(const F& f, const T (&y0)[N], double t0, const TS& ts, int n_ts,
                                      const T (&theta)[P], const Tolerances& tol, const Put& put) {
  if constexpr (!ad::is_var_v<T>) {
    return detail::solve<N, P>(f, y0, t0, ts, n_ts, theta, tol, put);
  } else {
    using S = typename T::scalar;
    static_assert(std::is_same_v<S, double>,
                  "hmc::ode on Var<Pack>: a block of lanes shares one control flow but each particle needs its own "
                  "steps; say `static constexpr bool autodiff_lanes = false;` in the model");
    constexpr int K = N + P;
    using J = Jet<K>;
    // Seed: tangent k is d/d(y0[k]) for k < N, d/d(theta[k - N]) after.
    J jy0[N], jth[P];
    int ids[K];
    ad::Tape<double>* tape = nullptr;
    for (int k = 0; k < N; ++k) {
      jy0[k] = J(y0[k].v);
      jy0[k].d[k] = 1.0;
      ids[k] = y0[k].id;
      if (y0[k].id >= 0) tape = y0[k].tape;
    }
    for (int p = 0; p < P; ++p) {
      jth[p] = J(theta[p].v);
      jth[p].d[N + p] = 1.0;
      ids[N + p] = theta[p].id;
      if (theta[p].id >= 0) tape = theta[p].tape;
    }
    // One node per output component: its value, and edges with its N + P sensitivities.
    return detail::solve<N, P>(f, jy0, t0, ts, n_ts, jth, tol, [&put, tape, &ids](int i, const J(&y)[N]) {
      T v[N];
      for (int k = 0; k < N; ++k) v[k] = ad::record_n(y[k].v, tape, K, ids, y[k].d);
      put(i, v);
    });
  }
}

/// \brief As Stan's integrate_ode_rk45: writes out[i][k] = y_k(ts(i)) for i < n_ts (the
/// caller's array of at least n_ts rows); true on success (see rk45_each).
template <int N, int P, class T, class F, class TS>
KOKKOS_INLINE_FUNCTION bool rk45(const F& f, const T (&y0)[N], double t0, const TS& ts, int n_ts, const T (&theta)[P],
                                 T (*out)[N], const Tolerances& tol) {
  return rk45_each(f, y0, t0, ts, n_ts, theta, tol, [out](int i, const T(&y)[N]) {
    for (int k = 0; k < N; ++k) out[i][k] = y[k];
  });
}

}  // namespace hmc::ode

namespace hmc::math {
// `math::exp(x)` for x an ode::Jet too (the RHS of an ODE is called with Jets in reverse mode).
using ode::cos;
using ode::exp;
using ode::log;
using ode::pow;
using ode::sin;
using ode::sqrt;
}  // namespace hmc::math
