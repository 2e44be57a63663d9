// The Dormand–Prince ODE solver (hmc/distributions/ode.hpp): exact solutions (exponential
// decay, harmonic oscillator) to 10 times the documented tolerance; the sensitivities w.r.t.
// parameters and initial state through hmc::Dual and hmc::Var<double> against the analytic
// ones and central finite differences of the double solve; the same steps for every number
// type; the failure flag (max_steps, a solution that blows up, times that do not increase).

#include "hmc/distributions/ode.hpp"
#include "hmc/model/dual.hpp"
#include "hmc/model/reverse.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace {

using namespace hmc;

/// dy/dt = -k y.
struct Decay {
  template <class T>
  KOKKOS_INLINE_FUNCTION void operator()(double, const T (&y)[1], const T (&th)[1], T (&dy)[1]) const {
    dy[0] = -th[0] * y[0];
  }
};

/// y1' = y2, y2' = -w^2 y1.
struct Oscillator {
  template <class T>
  KOKKOS_INLINE_FUNCTION void operator()(double, const T (&y)[2], const T (&th)[1], T (&dy)[2]) const {
    dy[0] = y[1];
    dy[1] = -th[0] * th[0] * y[0];
  }
};

/// Lotka–Volterra: u' = (a - b v) u, v' = (-c + d u) v.
struct LotkaVolterra {
  template <class T>
  KOKKOS_INLINE_FUNCTION void operator()(double, const T (&z)[2], const T (&th)[4], T (&dz)[2]) const {
    dz[0] = (th[0] - th[1] * z[1]) * z[0];
    dz[1] = (-th[2] + th[3] * z[0]) * z[1];
  }
};

/// dy/dt = -exp(a) y + sin(b) (math:: functions on every number type, Jet included).
struct WithMath {
  template <class T>
  KOKKOS_INLINE_FUNCTION void operator()(double, const T (&y)[1], const T (&th)[2], T (&dy)[1]) const {
    dy[0] = -math::exp(th[0]) * y[0] + math::sin(th[1]) + 0.1 * math::sqrt(math::pow(math::cos(th[1]), 2.0) + 1.0) +
            0.0 * math::log(th[0] * th[0] + 1.0);
  }
};

/// y' = y^2: y = 1 / (1 - t) from y(0) = 1 blows up at t = 1.
struct BlowUp {
  template <class T>
  KOKKOS_INLINE_FUNCTION void operator()(double, const T (&y)[1], const T (&)[1], T (&dy)[1]) const {
    dy[0] = y[0] * y[0];
  }
};

struct Times {
  const double* t;
  KOKKOS_INLINE_FUNCTION double operator()(int i) const { return t[i]; }
};

const std::vector<double> kTimes = {0.5, 1.0, 2.0, 3.5, 5.0, 7.5, 10.0};
constexpr int kOut = 7;

/// Within 10 times the tolerance at the size of the exact value.
double allowed(const ode::Tolerances& tol, double exact) {
  return 10.0 * (tol.abs_tol + tol.rel_tol * std::fabs(exact));
}

TEST(Ode, ExponentialDecay) {
  for (const ode::Tolerances tol :
       {ode::Tolerances{1e-6, 1e-6, 100000}, ode::Tolerances{1e-5, 1e-3, 500}, ode::Tolerances{1e-10, 1e-10, 100000}}) {
    const double y0[1] = {2.0}, k[1] = {0.7};
    double out[kOut][1];
    ASSERT_TRUE(ode::rk45(Decay{}, y0, 0.0, Times{kTimes.data()}, kOut, k, out, tol));
    for (int i = 0; i < kOut; ++i) {
      const double exact = 2.0 * std::exp(-0.7 * kTimes[i]);
      EXPECT_NEAR(out[i][0], exact, allowed(tol, exact)) << "t = " << kTimes[i] << ", rel_tol " << tol.rel_tol;
    }
  }
}

TEST(Ode, HarmonicOscillator) {
  for (const ode::Tolerances tol : {ode::Tolerances{1e-6, 1e-6, 100000}, ode::Tolerances{1e-9, 1e-9, 100000}}) {
    const double y0[2] = {1.0, 0.0}, w[1] = {2.0};
    double out[kOut][2];
    ASSERT_TRUE(ode::rk45(Oscillator{}, y0, 0.0, Times{kTimes.data()}, kOut, w, out, tol));
    for (int i = 0; i < kOut; ++i) {
      const double t = kTimes[i];
      // The global error accumulates over ~3 periods: allow it the scale of the amplitude.
      EXPECT_NEAR(out[i][0], std::cos(2.0 * t), allowed(tol, 1.0)) << "t = " << t;
      EXPECT_NEAR(out[i][1], -2.0 * std::sin(2.0 * t), allowed(tol, 2.0)) << "t = " << t;
    }
  }
}

TEST(Ode, StartsAtAnyTime) {
  const ode::Tolerances tol{1e-8, 1e-8, 100000};
  const double y0[1] = {3.0}, k[1] = {0.4}, ts[2] = {1.5, 4.0};
  double out[2][1];
  ASSERT_TRUE(ode::rk45(Decay{}, y0, 1.0, Times{ts}, 2, k, out, tol));
  EXPECT_NEAR(out[0][0], 3.0 * std::exp(-0.4 * 0.5), allowed(tol, 3.0));
  EXPECT_NEAR(out[1][0], 3.0 * std::exp(-0.4 * 3.0), allowed(tol, 3.0));
}

TEST(Ode, DualSensitivitiesMatchAnalytic) {
  const ode::Tolerances tol{1e-8, 1e-8, 100000};
  // d/dk and d/dy0 of y = y0 exp(-k t).
  for (int dir = 0; dir < 2; ++dir) {
    const Dual y0[1] = {Dual(2.0, dir == 0 ? 1.0 : 0.0)}, k[1] = {Dual(0.7, dir == 1 ? 1.0 : 0.0)};
    Dual out[kOut][1];
    ASSERT_TRUE(ode::rk45(Decay{}, y0, 0.0, Times{kTimes.data()}, kOut, k, out, tol));
    for (int i = 0; i < kOut; ++i) {
      const double t = kTimes[i], e = std::exp(-0.7 * t);
      const double want = dir == 0 ? e : -t * 2.0 * e;
      EXPECT_NEAR(out[i][0].tangent, want, 1e-6 * std::max(1.0, std::fabs(want))) << "t = " << t << " dir " << dir;
    }
  }
  // d/dw of the oscillator: y1 = cos(w t), d/dw = -t sin(w t).
  const Dual y0[2] = {Dual(1.0), Dual(0.0)}, w[1] = {Dual(2.0, 1.0)};
  Dual out[kOut][2];
  ASSERT_TRUE(ode::rk45(Oscillator{}, y0, 0.0, Times{kTimes.data()}, kOut, w, out, tol));
  for (int i = 0; i < kOut; ++i) {
    const double t = kTimes[i];
    EXPECT_NEAR(out[i][0].tangent, -t * std::sin(2.0 * t), 1e-5) << "t = " << t;
  }
}

/// Every sensitivity of the Lotka–Volterra outputs through Var<double> (one reverse pass per
/// output), against Dual (the same steps: to rounding) and central finite differences.
TEST(Ode, VarSensitivitiesMatchDualAndFiniteDifferences) {
  const ode::Tolerances tol{1e-8, 1e-6, 100000};
  const double z0[2] = {30.0, 4.0}, th[4] = {0.55, 0.028, 0.8, 0.024};
  const double ts[4] = {1.0, 4.0, 9.0, 15.0};
  constexpr int kT = 4, kIn = 6;

  ad::TapeLayout layout{200, 2000};
  std::vector<double> storage(static_cast<std::size_t>(layout.doubles()));
  ad::Tape<double> tape(ad::TapeStorage<double>{storage.data(), 1}, layout, kIn);
  Var<double> vz0[2], vth[4];
  for (int k = 0; k < 2; ++k) vz0[k] = Var<double>(z0[k], k, &tape);
  for (int p = 0; p < 4; ++p) vth[p] = Var<double>(th[p], 2 + p, &tape);
  Var<double> vout[kT][2];
  ASSERT_TRUE(ode::rk45(LotkaVolterra{}, vz0, 0.0, Times{ts}, kT, vth, vout, tol));
  EXPECT_FALSE(tape.overflow);
  EXPECT_EQ(tape.nodes, kIn + 2 * kT);  // one node per output component, whatever the steps

  double values[kT][2];
  ASSERT_TRUE(ode::rk45(LotkaVolterra{}, z0, 0.0, Times{ts}, kT, th, values, tol));

  for (int in = 0; in < kIn; ++in) {
    Dual dz0[2] = {Dual(z0[0], in == 0 ? 1.0 : 0.0), Dual(z0[1], in == 1 ? 1.0 : 0.0)};
    Dual dth[4];
    for (int p = 0; p < 4; ++p) dth[p] = Dual(th[p], in == 2 + p ? 1.0 : 0.0);
    Dual dout[kT][2];
    ASSERT_TRUE(ode::rk45(LotkaVolterra{}, dz0, 0.0, Times{ts}, kT, dth, dout, tol));

    // Central finite differences of the double solve (the tolerance is tight: its noise is small).
    const double h = 1e-5 * (in < 2 ? z0[in] : th[in - 2]);
    double zp[2] = {z0[0], z0[1]}, zm[2] = {z0[0], z0[1]}, tp[4], tm[4];
    for (int p = 0; p < 4; ++p) tp[p] = tm[p] = th[p];
    if (in < 2) {
      zp[in] += h;
      zm[in] -= h;
    } else {
      tp[in - 2] += h;
      tm[in - 2] -= h;
    }
    double op[kT][2], om[kT][2];
    ASSERT_TRUE(ode::rk45(LotkaVolterra{}, zp, 0.0, Times{ts}, kT, tp, op, tol));
    ASSERT_TRUE(ode::rk45(LotkaVolterra{}, zm, 0.0, Times{ts}, kT, tm, om, tol));

    for (int i = 0; i < kT; ++i) {
      for (int k = 0; k < 2; ++k) {
        EXPECT_EQ(vout[i][k].v, values[i][k]);
        EXPECT_EQ(dout[i][k].value, values[i][k]);
        tape.backward(vout[i][k].id, kIn);
        const double rev = tape.adjoint(in), fwd = dout[i][k].tangent;
        EXPECT_NEAR(rev, fwd, 1e-9 * std::max(1.0, std::fabs(fwd))) << "output " << i << "," << k << " input " << in;
        const double fd = (op[i][k] - om[i][k]) / (2.0 * h);
        EXPECT_NEAR(rev, fd, 2e-3 * std::max(1.0, std::fabs(fd))) << "output " << i << "," << k << " input " << in;
      }
    }
  }
}

TEST(Ode, VarThroughMathFunctionsMatchesDual) {
  const ode::Tolerances tol{1e-6, 1e-6, 100000};
  ad::TapeLayout layout{64, 256};
  std::vector<double> storage(static_cast<std::size_t>(layout.doubles()));
  ad::Tape<double> tape(ad::TapeStorage<double>{storage.data(), 1}, layout, 3);
  const Var<double> y0[1] = {Var<double>(1.5, 0, &tape)},
                    th[2] = {Var<double>(-0.3, 1, &tape), Var<double>(0.8, 2, &tape)};
  Var<double> out[kOut][1];
  ASSERT_TRUE(ode::rk45(WithMath{}, y0, 0.0, Times{kTimes.data()}, kOut, th, out, tol));
  for (int in = 0; in < 3; ++in) {
    const Dual dy0[1] = {Dual(1.5, in == 0 ? 1.0 : 0.0)};
    const Dual dth[2] = {Dual(-0.3, in == 1 ? 1.0 : 0.0), Dual(0.8, in == 2 ? 1.0 : 0.0)};
    Dual dout[kOut][1];
    ASSERT_TRUE(ode::rk45(WithMath{}, dy0, 0.0, Times{kTimes.data()}, kOut, dth, dout, tol));
    for (int i = 0; i < kOut; ++i) {
      tape.backward(out[i][0].id, 3);
      EXPECT_NEAR(tape.adjoint(in), dout[i][0].tangent, 1e-9 * std::max(1.0, std::fabs(dout[i][0].tangent)));
    }
  }
}

TEST(Ode, VarConstantsRecordNothing) {
  const ode::Tolerances tol{1e-6, 1e-6, 100000};
  const Var<double> y0[1] = {Var<double>(2.0)}, k[1] = {Var<double>(0.7)};
  Var<double> out[kOut][1];
  ASSERT_TRUE(ode::rk45(Decay{}, y0, 0.0, Times{kTimes.data()}, kOut, k, out, tol));
  for (int i = 0; i < kOut; ++i) {
    EXPECT_LT(out[i][0].id, 0);
    EXPECT_NEAR(out[i][0].v, 2.0 * std::exp(-0.7 * kTimes[i]), allowed(tol, 2.0));
  }
}

TEST(Ode, FailureFlag) {
  const double y0[1] = {1.0}, unused[1] = {0.0};
  double out[kOut][1];
  // Past the singularity at t = 1: the step underflows or max_steps runs out.
  EXPECT_FALSE(
      ode::rk45(BlowUp{}, y0, 0.0, Times{kTimes.data()}, kOut, unused, out, ode::Tolerances{1e-6, 1e-6, 100000}));
  // Before it, fine.
  const double early[1] = {0.5};
  EXPECT_TRUE(ode::rk45(BlowUp{}, y0, 0.0, Times{early}, 1, unused, out, ode::Tolerances{1e-8, 1e-8, 100000}));
  EXPECT_NEAR(out[0][0], 2.0, 1e-6);
  // Too few steps for the interval.
  const double k[1] = {0.7}, y2[1] = {2.0};
  EXPECT_FALSE(ode::rk45(Decay{}, y2, 0.0, Times{kTimes.data()}, kOut, k, out, ode::Tolerances{1e-10, 1e-10, 3}));
  // Output times must increase and lie after t0.
  const double back[2] = {2.0, 1.0};
  EXPECT_FALSE(ode::rk45(Decay{}, y2, 0.0, Times{back}, 2, k, out, ode::Tolerances{}));
  const double before[1] = {-1.0};
  EXPECT_FALSE(ode::rk45(Decay{}, y2, 0.0, Times{before}, 1, k, out, ode::Tolerances{}));
  // Non-finite parameters.
  const double nan_k[1] = {std::nan("")};
  EXPECT_FALSE(ode::rk45(Decay{}, y2, 0.0, Times{kTimes.data()}, kOut, nan_k, out, ode::Tolerances{}));
}

}  // namespace
