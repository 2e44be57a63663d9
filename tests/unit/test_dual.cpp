// Forward-mode duals: every operation's tangent against the analytic derivative and
// against central finite differences, on the host and inside a kernel; and the
// AutodiffModel adapter against a hand-written gradient.

// transforms.hpp comes first on purpose: its templates must find the Dual overloads
// by argument-dependent lookup even when dual.hpp is included after them.
// clang-format off
#include "hmc/model/transforms.hpp"
#include "hmc/model/dual.hpp"
#include "hmc/model/autodiff.hpp"
#include "hmc/model/concept.hpp"
#include "support/device_eval.hpp"
// clang-format on

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace {

using hmc::Dual;

// Each case is a function of one variable t, built from one Dual operation (with a
// second operand y(t) = 0.7 t + 1.3 or a constant 2.5 where the operation is binary).
enum Op : int {
  kNeg,
  kPos,
  kAddDD,
  kAddDd,
  kAdddD,
  kSubDD,
  kSubDd,
  kSubdD,
  kMulDD,
  kMulDd,
  kMuldD,
  kDivDD,
  kDivDd,
  kDivdD,
  kAddAssignD,
  kAddAssignd,
  kSubAssignD,
  kSubAssignd,
  kMulAssignD,
  kMulAssignd,
  kDivAssignD,
  kDivAssignd,
  kExp,
  kLog,
  kLog1p,
  kExpm1,
  kSqrt,
  kSin,
  kCos,
  kFabs,
  kPowDd,
  kPowdD,
  kPowDD,
  kLogSigmoid,
  kSigmoid,
  kBranch,
  kChain,
  kIntervalForward,
  kPositiveForward,
  kNumOps
};

const char* op_name(int op) {
  static const char* names[] = {
      "-x",       "+x",       "x+y",      "x+c",         "c+x",     "x-y",    "x-c",   "c-x",      "x*y",     "x*c",
      "c*x",      "x/y",      "x/c",      "c/x",         "x+=y",    "x+=c",   "x-=y",  "x-=c",     "x*=y",    "x*=c",
      "x/=y",     "x/=c",     "exp",      "log",         "log1p",   "expm1",  "sqrt",  "sin",      "cos",     "fabs",
      "pow(x,c)", "pow(c,x)", "pow(x,y)", "log_sigmoid", "sigmoid", "branch", "chain", "interval", "positive"};
  static_assert(sizeof(names) / sizeof(names[0]) == kNumOps, "one name per op");
  return names[op];
}

/// The case `op` at t, for T = double (values) or Dual (value and tangent).
template <class T>
KOKKOS_INLINE_FUNCTION T eval(int op, const T& t) {
  namespace math = hmc::math;
  const T y = 0.7 * t + 1.3;
  const double c = 2.5;
  T r = t * t;
  switch (op) {
    case kNeg:
      return -t;
    case kPos:
      return +t;
    case kAddDD:
      return t + y;
    case kAddDd:
      return t + c;
    case kAdddD:
      return c + t;
    case kSubDD:
      return t - y;
    case kSubDd:
      return t - c;
    case kSubdD:
      return c - t;
    case kMulDD:
      return t * y;
    case kMulDd:
      return t * c;
    case kMuldD:
      return c * t;
    case kDivDD:
      return t / y;
    case kDivDd:
      return t / c;
    case kDivdD:
      return c / t;
    case kAddAssignD:
      return r += y;
    case kAddAssignd:
      return r += c;
    case kSubAssignD:
      return r -= y;
    case kSubAssignd:
      return r -= c;
    case kMulAssignD:
      return r *= y;
    case kMulAssignd:
      return r *= c;
    case kDivAssignD:
      return r /= y;
    case kDivAssignd:
      return r /= c;
    case kExp:
      return math::exp(t);
    case kLog:
      return math::log(t);
    case kLog1p:
      return math::log1p(t);
    case kExpm1:
      return math::expm1(t);
    case kSqrt:
      return math::sqrt(t);
    case kSin:
      return math::sin(t);
    case kCos:
      return math::cos(t);
    case kFabs:
      return math::fabs(t);
    case kPowDd:
      return math::pow(t, 2.7);
    case kPowdD:
      return math::pow(c, t);
    case kPowDD:
      return math::pow(t, y);
    case kLogSigmoid:
      return math::log_sigmoid(t);
    case kSigmoid:
      return math::sigmoid(t);
    case kBranch:  // comparisons on values choose the branch; the tangent follows it
      return t < 1.0 ? t * t : 2.0 * t - 1.0;
    case kChain:
      return math::log(1.0 + math::exp(math::sin(t)) * math::sqrt(y));
    case kIntervalForward:
      return hmc::transform::interval_forward(t, -1.0, 3.0);
    case kPositiveForward:
      return hmc::transform::positive_forward(t);
    default:
      return T(0.0);
  }
}

/// Hand-derived d eval(op, t) / dt, with std:: math on the host.
double analytic(int op, double t) {
  const double y = 0.7 * t + 1.3, c = 2.5;
  const double sig = 1.0 / (1.0 + std::exp(-t));
  switch (op) {
    case kNeg:
      return -1.0;
    case kPos:
      return 1.0;
    case kAddDD:
      return 1.7;
    case kAddDd:
    case kAdddD:
      return 1.0;
    case kSubDD:
      return 0.3;
    case kSubDd:
      return 1.0;
    case kSubdD:
      return -1.0;
    case kMulDD:
      return 1.4 * t + 1.3;
    case kMulDd:
    case kMuldD:
      return c;
    case kDivDD:
      return 1.3 / (y * y);
    case kDivDd:
      return 1.0 / c;
    case kDivdD:
      return -c / (t * t);
    case kAddAssignD:
      return 2.0 * t + 0.7;
    case kAddAssignd:
    case kSubAssignd:
      return 2.0 * t;
    case kSubAssignD:
      return 2.0 * t - 0.7;
    case kMulAssignD:
      return 2.0 * t * y + 0.7 * t * t;
    case kMulAssignd:
      return 2.0 * t * c;
    case kDivAssignD:
      return (2.0 * t * y - 0.7 * t * t) / (y * y);
    case kDivAssignd:
      return 2.0 * t / c;
    case kExp:
    case kExpm1:
    case kPositiveForward:
      return std::exp(t);
    case kLog:
      return 1.0 / t;
    case kLog1p:
      return 1.0 / (1.0 + t);
    case kSqrt:
      return 0.5 / std::sqrt(t);
    case kSin:
      return std::cos(t);
    case kCos:
      return -std::sin(t);
    case kFabs:
      return t < 0.0 ? -1.0 : 1.0;
    case kPowDd:
      return 2.7 * std::pow(t, 1.7);
    case kPowdD:
      return std::pow(c, t) * std::log(c);
    case kPowDD:
      return std::pow(t, y) * (y / t + 0.7 * std::log(t));
    case kLogSigmoid:
      return 1.0 - sig;
    case kSigmoid:
      return sig * (1.0 - sig);
    case kBranch:
      return t < 1.0 ? 2.0 * t : 2.0;
    case kChain: {
      const double e = std::exp(std::sin(t)), r = std::sqrt(y);
      return (e * std::cos(t) * r + e * 0.7 / (2.0 * r)) / (1.0 + e * r);
    }
    case kIntervalForward:
      return 4.0 * sig * (1.0 - sig);
    default:
      return 0.0;
  }
}

/// Where each case is smooth and defined.
std::pair<double, double> domain(int op) {
  switch (op) {
    case kDivdD:
    case kLog:
    case kSqrt:
    case kPowDd:
    case kPowDD:
      return {0.1, 5.0};
    case kLog1p:
      return {-0.9, 5.0};
    case kDivDD:
    case kDivAssignD:
    case kChain:
      return {-1.0, 5.0};  // y(t) = 0.7 t + 1.3 > 0.6
    case kLogSigmoid:
    case kSigmoid:
    case kIntervalForward:
      return {-20.0, 20.0};
    default:
      return {-4.0, 4.0};
  }
}

struct Cases {
  std::vector<int> ops;
  std::vector<double> ts;
};

Cases make_cases(int per_op, unsigned seed) {
  std::mt19937_64 rng(seed);
  Cases c;
  for (int op = 0; op < kNumOps; ++op) {
    const auto [lo, hi] = domain(op);
    std::uniform_real_distribution<double> u(lo, hi);
    for (int k = 0; k < per_op; ++k) {
      double t = u(rng);
      if (op == kFabs && std::abs(t) < 1e-3) t = 0.5;  // away from the kink
      if (op == kBranch && std::abs(t - 1.0) < 1e-3) t = 0.5;
      c.ops.push_back(op);
      c.ts.push_back(t);
    }
  }
  return c;
}

constexpr double kFdStep = 1e-6;

// Per case: [0] Dual value, [1] Dual tangent, [2] double value, [3] central difference.
template <class Exec>
hmc::test::HostMatrix evaluate(const Cases& c) {
  const int n = static_cast<int>(c.ops.size());
  Kokkos::View<int*, typename Exec::memory_space> ops("ops", n);
  Kokkos::View<double*, typename Exec::memory_space> ts("ts", n);
  Kokkos::View<double**, Kokkos::LayoutRight, typename Exec::memory_space> out("out", n, 4);
  auto hops = Kokkos::create_mirror_view(ops);
  auto hts = Kokkos::create_mirror_view(ts);
  for (int i = 0; i < n; ++i) {
    hops(i) = c.ops[i];
    hts(i) = c.ts[i];
  }
  Kokkos::deep_copy(ops, hops);
  Kokkos::deep_copy(ts, hts);
  const double step = kFdStep;
  Kokkos::parallel_for(
      "test::dual_ops", Kokkos::RangePolicy<Exec>(0, n), KOKKOS_LAMBDA(const int i) {
        const int op = ops(i);
        const double t = ts(i);
        const Dual r = eval<Dual>(op, Dual(t, 1.0));
        out(i, 0) = r.value;
        out(i, 1) = r.tangent;
        out(i, 2) = eval<double>(op, t);
        out(i, 3) = (eval<double>(op, t + step) - eval<double>(op, t - step)) / (2.0 * step);
      });
  hmc::test::HostMatrix h("test::dual_host", n, 4);
  Kokkos::deep_copy(h, Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out));
  return h;
}

double rel_err(double a, double b) { return std::abs(a - b) / std::max({std::abs(a), std::abs(b), 1.0}); }

void expect_matches(const Cases& c, const hmc::test::HostMatrix& r, const std::string& where) {
  for (std::size_t i = 0; i < c.ops.size(); ++i) {
    const int op = c.ops[i];
    const double t = c.ts[i], want = analytic(op, t);
    EXPECT_LE(rel_err(r(i, 0), r(i, 2)), 1e-14)
        << where << " " << op_name(op) << " at t = " << t << ": value " << r(i, 0) << " vs double " << r(i, 2);
    EXPECT_LE(rel_err(r(i, 1), want), 1e-12)
        << where << " " << op_name(op) << " at t = " << t << ": tangent " << r(i, 1) << " vs analytic " << want;
    EXPECT_LE(rel_err(r(i, 3), want), 1e-6)
        << where << " " << op_name(op) << " at t = " << t << ": fd " << r(i, 3) << " vs analytic " << want;
  }
}

TEST(Dual, EveryOperationMatchesAnalyticAndFiniteDifferencesOnHost) {
  const auto c = make_cases(40, 17);
  expect_matches(c, evaluate<Kokkos::DefaultHostExecutionSpace>(c), "host");
}

TEST(Dual, EveryOperationMatchesAnalyticAndFiniteDifferencesInKernel) {
  const auto c = make_cases(40, 29);
  expect_matches(c, evaluate<hmc::ExecSpace>(c), "device");
}

TEST(Dual, TangentScalesWithTheSeed) {
  // A seed of 3 along t gives 3 df/dt; a constant (tangent 0) gives none.
  for (int op = 0; op < kNumOps; ++op) {
    const double t = 0.5 * (domain(op).first + domain(op).second) + 0.01;
    EXPECT_LE(rel_err(eval<Dual>(op, Dual(t, 3.0)).tangent, 3.0 * analytic(op, t)), 1e-12) << op_name(op);
    EXPECT_EQ(eval<Dual>(op, Dual(t)).tangent, 0.0) << op_name(op);
  }
}

TEST(Dual, ComparisonsLookAtValuesOnly) {
  const Dual a(1.0, 5.0), b(2.0, -7.0), a2(1.0, -3.0);
  EXPECT_TRUE(a < b);
  EXPECT_TRUE(a <= b);
  EXPECT_FALSE(a > b);
  EXPECT_FALSE(a >= b);
  EXPECT_TRUE(a == a2);
  EXPECT_FALSE(a != a2);
  EXPECT_TRUE(a != b);
  EXPECT_TRUE(a < 2.0);
  EXPECT_TRUE(a <= 1.0);
  EXPECT_TRUE(a >= 1.0);
  EXPECT_FALSE(a > 1.0);
  EXPECT_TRUE(a == 1.0);
  EXPECT_TRUE(a != 1.5);
  EXPECT_TRUE(0.5 < a);
  EXPECT_TRUE(1.0 <= a);
  EXPECT_TRUE(3.0 > b);
  EXPECT_TRUE(2.0 >= b);
  EXPECT_TRUE(2.0 == b);
  EXPECT_TRUE(2.5 != b);
  EXPECT_TRUE(b > a);
  EXPECT_TRUE(b >= a);
}

TEST(Dual, ValueTangentAndPredicates) {
  EXPECT_EQ(hmc::value_of(2.5), 2.5);
  EXPECT_EQ(hmc::tangent_of(2.5), 0.0);
  EXPECT_EQ(hmc::value_of(Dual(2.5, 4.0)), 2.5);
  EXPECT_EQ(hmc::tangent_of(Dual(2.5, 4.0)), 4.0);
  EXPECT_TRUE(hmc::math::isfinite(Dual(1.0, 1.0)));
  EXPECT_FALSE(hmc::math::isfinite(hmc::math::log(Dual(0.0, 1.0))));  // -inf: the sampler rejects
  EXPECT_TRUE(hmc::math::isnan(hmc::math::log(Dual(-1.0, 1.0))));
  EXPECT_FALSE(hmc::math::isnan(Dual(1.0, 0.0)));
  // pow with exponent 0 is the constant 1, also at 0.
  EXPECT_EQ(hmc::math::pow(Dual(0.0, 1.0), 0.0).tangent, 0.0);
  EXPECT_EQ(hmc::math::pow(Dual(0.0, 1.0), 0.0).value, 1.0);
}

// ---- AutodiffModel ----------------------------------------------------------------

/// log p = -q0^2 q1 + sin(q2) q0 - exp(q1 / 2), written once.
struct Toy : hmc::model::AutodiffModel<Toy> {
  KOKKOS_INLINE_FUNCTION int dim() const { return 3; }
  int num_params() const { return 3; }
  std::vector<std::string> parameter_names() const { return {"a", "b", "c"}; }
  template <class T, class Q>
  KOKKOS_INLINE_FUNCTION T log_density_t(const Q& q) const {
    const T q0 = q(0), q1 = q(1), q2 = q(2);
    return -(q0 * q0 * q1) + hmc::math::sin(q2) * q0 - hmc::math::exp(0.5 * q1);
  }
  KOKKOS_INLINE_FUNCTION void constrain(const hmc::Row& q, const hmc::Row& out) const {
    for (int j = 0; j < 3; ++j) out(j) = q(j);
  }
};
static_assert(hmc::model::check_model<Toy>());

TEST(AutodiffModel, ToyHostMembers) {
  const Toy toy;
  EXPECT_EQ(toy.num_params(), 3);
  EXPECT_EQ(toy.parameter_names(), (std::vector<std::string>{"a", "b", "c"}));
  double q[3] = {1.0, -2.0, 3.0}, out[3] = {};
  toy.constrain(hmc::Row{q, 1}, hmc::Row{out, 1});
  EXPECT_EQ(out[1], -2.0);
}

// Per point: log_density, log_density_gradient's value, then the 3 gradient entries.
hmc::test::HostMatrix toy_gradients(const hmc::StateView& points) {
  const int n = static_cast<int>(points.extent(0));
  hmc::StateView out("out", n, 5), grad("grad", n, 3);
  const Toy toy{};
  Kokkos::parallel_for(
      "test::toy_gradient", Kokkos::RangePolicy<hmc::ExecSpace>(0, n), KOKKOS_LAMBDA(const int i) {
        const hmc::Row q = hmc::row(points, i), g = hmc::row(grad, i);
        out(i, 0) = toy.log_density(q);
        out(i, 1) = toy.log_density_gradient(q, g);
        for (int j = 0; j < 3; ++j) out(i, 2 + j) = g(j);
      });
  return hmc::test::to_host(out);
}

TEST(AutodiffModel, GradientEqualsHandWrittenGradient) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-3.0, 3.0);
  std::vector<std::vector<double>> pts(100, std::vector<double>(3));
  for (auto& p : pts)
    for (auto& x : p) x = u(rng);
  const auto r = toy_gradients(hmc::test::to_device(pts));
  for (std::size_t i = 0; i < pts.size(); ++i) {
    const double a = pts[i][0], b = pts[i][1], c = pts[i][2];
    const double lp = -(a * a * b) + std::sin(c) * a - std::exp(0.5 * b);
    const double want[3] = {-2.0 * a * b + std::sin(c), -a * a - 0.5 * std::exp(0.5 * b), std::cos(c) * a};
    EXPECT_LE(rel_err(r(i, 0), lp), 1e-13) << "point " << i;
    EXPECT_LE(rel_err(r(i, 1), r(i, 0)), 1e-14) << "point " << i;
    for (int j = 0; j < 3; ++j) EXPECT_LE(rel_err(r(i, 2 + j), want[j]), 1e-12) << "point " << i << " coord " << j;
  }
}

}  // namespace
