#pragma once
/// \file
/// \brief A model's gradient checked at given points, in kernels (so it runs where the
/// sampler runs), as `hmc diagnose` and the tests use it, by one of two methods.
///
/// **Exact** (check_gradient_exact), for a model with `template <class T, class Q> T
/// log_density_t(const Q& q) const`: its `log_density_gradient` (hand-written, or the
/// automatic one of its base) against the forward-mode reference of
/// hmc/model/forward_gradient.hpp, entry by entry, with no step size. Two correct
/// gradients still differ by their rounding, which an ill-conditioned model (a Gaussian
/// process with a long length-scale) makes far larger than an ulp; so the difference is
/// also measured at kExactPerturbations = 3 copies of each point moved by 2⁻²⁷ ·
/// max(1, |q_j|) in every coordinate. Rounding changes completely between them, while
/// the error of a wrong gradient, a smooth function of q, does not. With D_k = (a − r) /
/// max(1, |a|, |r|) at copy k (k = 0: the point itself), an entry's allowance (`noise`)
/// is kExactNoiseFactor · max_k |D_k − D_0| (100 times the spread seen). The entry is
///   - unresolved where the reference is not finite, or the allowance exceeds
///     kExactResolvable = 1e-5 (beyond that, finite differences at their default
///     tolerance bound the error as tightly: their passes allow up to 1.1e-5);
///   - wrong when |D_0| > tolerance (kExactTolerance = 1e-8 in `hmc diagnose`) + allowance;
///   - else right.
/// The value log_density_gradient returns, and the value of each forward pass, must
/// match log_density within the tolerance plus the allowance measured the same way (at
/// most kExactResolvable).
///
/// **Finite differences** (check_gradient), for any model. At each point q and
/// coordinate j, with t the half step 0.5 · rel_step · max(1, |q_j|) (default rel_step
/// 3e-4) rounded so that q_j + t − q_j = t exactly, h = 2 t, f = log p and
/// f(m) = f(q + m t e_j), two sixth-order central differences (as Stan Math's
/// finite_diff_gradient), at steps h and h/2, from ten evaluations:
///
///   fd_j  = [f(6) − 9 f(4) + 45 f(2) − 45 f(−2) + 9 f(−4) − f(−6)] / (60 h),
///   fdh_j = [f(3) − 9 f(2) + 45 f(1) − 45 f(−1) + 9 f(−2) − f(−3)] / (30 h).
///
/// Their truncation errors are about c h⁶ and c h⁶ / 64 (c = f⁽⁷⁾ / 140). If each value
/// of f carries independent rounding noise of standard deviation σ, fd carries
/// √(2 (45² + 9² + 1²)) / 60 · σ / h = 1.082 σ / h and fdh twice that. Each is compared
/// with the analytic entry a by relative_error(a, fd) = |a − fd| / max(|a|, |fd|, 1)
/// (relative above 1 in magnitude, absolute below); `error` is the smaller of the two.
///
/// σ is measured, not assumed. The sixth difference of the seven values behind fd,
///
///   Δ⁶_j = f(6) − 6 f(4) + 15 f(2) − 20 f(0) + 15 f(−2) − 6 f(−4) + f(−6),
///
/// is h⁶ f⁽⁶⁾ (negligible) plus noise of standard deviation √924 σ (the ECnoise estimate
/// of Moré and Wild). So σ_i at point i is the largest of
///   - median_j |Δ⁶_ij| / (0.6745 √924)    (0.6745: median of |N(0, 1)|; the median
///     ignores a few coordinates with real curvature),
///   - the same median over every checked point and coordinate of |Δ⁶_ij| / max(1, |f_i|),
///     times max(1, |f_i|)    (pools the points where a model has few coordinates),
///   - u · max(1, |f_i|) / √3, u = 2⁻⁵³    (one rounding of the result: never less).
/// The entry's noise, relative like the error, is
///
///   noise_ij = max(6 · 1.082 σ_i / h, 2 |fd − fdh|) / max(1, |fd|, |fdh|):
///
/// six standard deviations of the noise of fd, or twice the two differences'
/// disagreement (which measures the truncation error of fd, and noise that the sixth
/// differences miss), whichever is larger. It uses only values of f, never the analytic
/// gradient, so a wrong gradient cannot widen its own allowance.
///
/// The rule at a tolerance (`hmc diagnose --tolerance`, default 1e-6):
///   - a point is skipped (inconclusive) where log p is not finite, or where |log p| >
///     kAstronomicalLogDensity = 1e12: one rounding of f is then over 1e-4, and the
///     differences of f over a step resolve nothing;
///   - an entry is unresolved where its noise > kResolvableNoise · tolerance (10 ·
///     tolerance), or a difference is not finite: the finite differences cannot check it;
///   - a resolved entry is wrong when error > tolerance + noise: the analytic entry is
///     further than tolerance + noise from the differences at both steps;
///   - else it passed (its error is then at most 11 · tolerance).
/// The value returned by log_density_gradient, and the finite-difference density at q,
/// must match log_density within the tolerance at every point where log p is finite.
///
/// Both methods: a point where log p is not finite is skipped (the sampler draws another
/// start there, and nothing is compared); a point is wrong when an entry or a
/// log-density value is wrong there,
/// else inconclusive when it was skipped or an entry is unresolved, else passed. The check
/// (verdict()) is wrong when a point is wrong, else passed when a point passed, else
/// inconclusive. passed() is the strict form the model tests use: every point passed.
///
/// The finite differences are taken of log_density(q, scratch) where the model has one
/// (with `int log_density_scratch_size() const`; the HMM builds its parameters there
/// once instead of recomputing them per observation), else of log_density(q). They run
/// as one kernel over (point, coordinate) pairs, each pair with its own copy of q (and
/// scratch), in chunks of at most kGradientCheckBudget doubles of working memory. The
/// forward passes run as one kernel over the pairs, reading q in place.

#include "hmc/core/philox.hpp"
#include "hmc/core/types.hpp"
#include "hmc/model/concept.hpp"
#include "hmc/model/forward_gradient.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace hmc::model {

/// \brief |a − b| / max(|a|, |b|, 1); +inf when either is not finite (NaN, ±inf).
KOKKOS_INLINE_FUNCTION double relative_error(double a, double b) {
  if (!math::isfinite(a) || !math::isfinite(b)) return math::infinity();
  const double fa = math::fabs(a), fb = math::fabs(b);
  const double scale = fa > fb ? (fa > 1.0 ? fa : 1.0) : (fb > 1.0 ? fb : 1.0);
  return math::fabs(a - b) / scale;
}

/// \brief Finite-difference step of a coordinate at x: rel_step · max(1, |x|).
KOKKOS_INLINE_FUNCTION double finite_difference_step(double x, double rel_step) {
  const double ax = math::fabs(x);
  return rel_step * (ax > 1.0 ? ax : 1.0);
}

/// Standard deviations of the finite differences' rounding noise allowed on top of the tolerance.
inline constexpr double kNoiseSigmas = 6.0;
/// The allowance is at least this many times the disagreement of the differences at h and h/2.
inline constexpr double kSpreadFactor = 2.0;
/// Noise beyond this many tolerances leaves an entry unresolved.
inline constexpr double kResolvableNoise = 10.0;
/// Points with |log p| above this are skipped by the finite differences.
inline constexpr double kAstronomicalLogDensity = 1e12;
/// The tolerance of the exact comparison in `hmc diagnose` (--exact-tolerance).
inline constexpr double kExactTolerance = 1e-8;
/// Copies of each point, moved by kExactPerturbation (relative), at which the exact
/// comparison measures the rounding of the two gradients' difference.
inline constexpr int kExactPerturbations = 3;
inline constexpr double kExactPerturbation = 0x1p-27;
/// The exact comparison allows this many times the rounding spread it measured.
inline constexpr double kExactNoiseFactor = 100.0;
/// An exact allowance above this leaves the entry unresolved.
inline constexpr double kExactResolvable = 1e-5;
/// Doubles of working memory one chunk of the check's kernels may use (128 MiB).
inline constexpr std::int64_t kGradientCheckBudget = std::int64_t{1} << 24;

/// \brief How the gradient was checked.
enum class GradientMethod {
  kExact,              ///< against the forward-mode reference (check_gradient_exact)
  kFiniteDifferences,  ///< against finite differences (check_gradient)
};

/// \brief The outcome at a point, or of the whole check.
enum class Verdict { kPassed, kWrong, kInconclusive };

/// \brief Why a point was skipped as a whole.
enum class Skip {
  kNone,
  kNotFinite,     ///< log p is not finite there
  kAstronomical,  ///< |log p| > kAstronomicalLogDensity (finite differences only)
};

/// \brief How many points ended how, at a tolerance (GradientCheck::counts).
struct GradientCounts {
  int points = 0, passed = 0, wrong = 0, inconclusive = 0;
  /// The inconclusive points by reason: log p not finite, |log p| too large, an entry unresolved.
  int not_finite = 0, astronomical = 0, unresolved = 0;
};

/// \brief The outcome of check_gradient or check_gradient_exact, on the host:
/// [point][coordinate] matrices and one value per point, and the verdicts at a
/// tolerance (file comment).
struct GradientCheck {
  using HostMatrix = Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace>;
  using HostVector = Kokkos::View<double*, Kokkos::HostSpace>;
  GradientMethod method = GradientMethod::kFiniteDifferences;
  double rel_step = 0.0;        ///< the finite differences' relative step (0 for the exact method)
  HostMatrix q;                 ///< the points, unconstrained scale
  HostMatrix analytic;          ///< gradient written by log_density_gradient
  HostMatrix reference;         ///< what it is compared with: the forward-mode gradient, or finite_diff
  HostMatrix finite_diff;       ///< central differences of the log density at step h (empty: exact)
  HostMatrix finite_diff_half;  ///< the same at step h/2 (empty: exact)
  HostMatrix error;             ///< relative_error(analytic, reference); finite differences: the smaller at h, h/2
  HostMatrix sixth_diff;        ///< Δ⁶ of the seven values behind finite_diff (empty: exact)
  HostMatrix noise;             ///< allowed error on top of the tolerance, relative as `error`; +inf: unresolved
  HostVector lp;                ///< log_density(q)
  HostVector lp_gradient;       ///< the value log_density_gradient returned
  HostVector lp_error;  ///< relative difference of lp to lp_gradient and the reference's density; +inf if not finite
  HostVector lp_noise;  ///< finite differences: σ_i, the estimated rounding noise of log p; exact: 0
  HostVector lp_allowance;  ///< allowed lp_error on top of the tolerance (exact: measured; finite differences: 0)
  std::vector<Skip> skip;   ///< per point: why it was skipped as a whole

  int points() const { return static_cast<int>(q.extent(0)); }
  int dim() const { return static_cast<int>(q.extent(1)); }

  /// \brief The method can check the entry to the tolerance: noise <= kResolvableNoise ·
  /// tolerance (finite differences) or kExactResolvable (exact).
  bool resolved(int i, int j, double tolerance) const {
    return noise(i, j) <= (method == GradientMethod::kExact ? kExactResolvable : kResolvableNoise * tolerance);
  }
  /// \brief The entry's error is within tolerance + noise (a NaN is not).
  bool within(int i, int j, double tolerance) const {
    return std::isfinite(error(i, j)) && error(i, j) <= tolerance + noise(i, j);
  }
  /// \brief The entry is shown wrong: resolved, and its error beyond tolerance + noise.
  bool wrong(int i, int j, double tolerance) const { return resolved(i, j, tolerance) && !within(i, j, tolerance); }
  bool entry_passed(int i, int j, double tolerance) const {
    return resolved(i, j, tolerance) && within(i, j, tolerance);
  }
  /// \brief The log-density values agree (not checked where log p is not finite).
  bool lp_passed(int i, double tolerance) const {
    return skip[i] == Skip::kNotFinite || lp_error(i) <= tolerance + lp_allowance(i);
  }

  /// \brief How far an entry is from failing: error / (tolerance + noise); +inf for NaN.
  double ratio(int i, int j, double tolerance) const {
    const double r = error(i, j) / (tolerance + noise(i, j));
    return r == r ? r : math::infinity();
  }

  /// \brief The outcome at point i (file comment).
  Verdict point_verdict(int i, double tolerance) const {
    if (!lp_passed(i, tolerance)) return Verdict::kWrong;
    bool unresolved = false;
    for (int j = 0; j < dim(); ++j) {
      if (wrong(i, j, tolerance)) return Verdict::kWrong;
      if (!resolved(i, j, tolerance)) unresolved = true;
    }
    return skip[i] != Skip::kNone || unresolved ? Verdict::kInconclusive : Verdict::kPassed;
  }

  GradientCounts counts(double tolerance) const {
    GradientCounts c;
    c.points = points();
    for (int i = 0; i < points(); ++i) {
      const Verdict v = point_verdict(i, tolerance);
      if (v == Verdict::kPassed) ++c.passed;
      if (v == Verdict::kWrong) ++c.wrong;
      if (v != Verdict::kInconclusive) continue;
      ++c.inconclusive;
      if (skip[i] == Skip::kNotFinite) ++c.not_finite;
      if (skip[i] == Skip::kAstronomical) ++c.astronomical;
      if (skip[i] == Skip::kNone) ++c.unresolved;
    }
    return c;
  }

  /// \brief Wrong where a point is wrong, else passed where a point passed, else inconclusive.
  Verdict verdict(double tolerance) const {
    const GradientCounts c = counts(tolerance);
    if (c.wrong > 0) return Verdict::kWrong;
    return c.passed > 0 ? Verdict::kPassed : Verdict::kInconclusive;
  }

  /// \brief Every point passed: every entry resolved and right, every log-density pair right.
  bool passed(double tolerance) const {
    for (int i = 0; i < points(); ++i)
      if (point_verdict(i, tolerance) != Verdict::kPassed) return false;
    return true;
  }

  /// \brief The largest error over every gradient entry and every log-density pair at the
  /// points not skipped (NaN counts as the largest).
  double max_error() const {
    double worst = 0.0;
    for (int i = 0; i < points(); ++i) {
      if (skip[i] != Skip::kNone) continue;
      if (!(lp_error(i) <= worst)) worst = lp_error(i);
      for (int j = 0; j < dim(); ++j)
        if (!(error(i, j) <= worst)) worst = error(i, j);
    }
    return worst;
  }

  /// \brief The same over the entries resolved at the tolerance (0 where there are none).
  double max_resolved_error(double tolerance) const {
    double worst = 0.0;
    for (int i = 0; i < points(); ++i) {
      if (skip[i] != Skip::kNone) continue;
      if (!(lp_error(i) <= worst)) worst = lp_error(i);
      for (int j = 0; j < dim(); ++j)
        if (resolved(i, j, tolerance) && !(error(i, j) <= worst)) worst = error(i, j);
    }
    return worst;
  }
};

namespace detail {

/// Median of |x| over the values, NaN counted as +inf; 0 for none.
inline double median_abs(std::vector<double>& v) {
  if (v.empty()) return 0.0;
  for (double& x : v) x = x == x ? std::fabs(x) : math::infinity();
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  double m = *mid;
  if (v.size() % 2 == 0) m = 0.5 * (m + *std::max_element(v.begin(), mid));
  return m;
}

/// Rows per chunk for `per_row` doubles each within the budget (at least 1, at most `rows`).
inline std::int64_t chunk_rows(std::int64_t rows, std::int64_t per_row, std::int64_t budget) {
  const std::int64_t fit = budget / (per_row > 0 ? per_row : 1);
  return std::max<std::int64_t>(1, std::min(rows, fit));
}

/// A device matrix copied into a host LayoutRight one.
inline GradientCheck::HostMatrix host_matrix(const StateView& v, const std::string& label) {
  const int n = static_cast<int>(v.extent(0)), d = static_cast<int>(v.extent(1));
  GradientCheck::HostMatrix h(label, n, d);
  auto m = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < d; ++j) h(i, j) = m(i, j);
  return h;
}

/// Per point, one kernel: log p, the gradient and the value it returns, and (where
/// `lp_fd` has the points' length) the finite-difference density at q.
template <class Model>
void point_values(const Model& model, const StateView& points, const StateView& grad, const ParticleView& lp,
                  const ParticleView& lp_grad, const ParticleView& lp_fd, std::int64_t budget) {
  const int n = static_cast<int>(points.extent(0));
  const bool with_fd = static_cast<int>(lp_fd.extent(0)) == n;
  const int width = std::max(scratch_size(model), with_fd ? log_density_scratch_size(model) : 0);
  const std::int64_t chunk = chunk_rows(n, width, budget);
  StateView scratch("hmc::gradient_check::scratch", width > 0 ? chunk : 0, width);
  for (std::int64_t begin = 0; begin < n; begin += chunk) {
    const int b = static_cast<int>(begin), e = static_cast<int>(std::min<std::int64_t>(n, begin + chunk));
    Kokkos::parallel_for(
        "hmc::gradient_check::gradient", Kokkos::RangePolicy<ExecSpace>(b, e), KOKKOS_LAMBDA(const int i) {
          const Row q = row(points, i), g = row(grad, i);
          const Row s = scratch.extent(1) > 0 ? row(scratch, i - b) : Row{nullptr, 0};
          lp(i) = model.log_density(q);
          lp_grad(i) = log_density_gradient(model, q, g, s);
          if (with_fd) lp_fd(i) = finite_difference_density(model, q, s);
        });
  }
  Kokkos::fence();
}

/// The host copies every method has, and each point's skip for log p not finite.
inline void common_results(GradientCheck& out, const StateView& points, const StateView& grad, const ParticleView& lp,
                           const ParticleView& lp_grad) {
  out.q = host_matrix(points, "hmc::gradient_check::q");
  out.analytic = host_matrix(grad, "hmc::gradient_check::analytic");
  out.lp = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), lp);
  out.lp_gradient = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), lp_grad);
  out.skip.assign(static_cast<std::size_t>(out.points()), Skip::kNone);
  for (int i = 0; i < out.points(); ++i)
    if (!std::isfinite(out.lp(i))) out.skip[i] = Skip::kNotFinite;
}

}  // namespace detail

/// \brief Compares the analytic gradient of `model` with central finite differences at
/// each row of `points` ([point][coordinate], model.dim() columns): one kernel over the
/// points for the gradient, one over (point, coordinate) pairs for the differences, in
/// chunks of at most `budget` doubles of working memory (the result does not depend on it).
template <class Model>
GradientCheck check_gradient(const Model& model, const StateView& points, double rel_step = 3e-4,
                             std::int64_t budget = kGradientCheckBudget) {
  static_assert(check_model<Model>());
  const int n = static_cast<int>(points.extent(0)), d = static_cast<int>(points.extent(1));
  const int fd_scratch = log_density_scratch_size(model);
  StateView grad("hmc::gradient_check::grad", n, d), fd("hmc::gradient_check::fd", n, d);
  StateView fdh("hmc::gradient_check::fd_half", n, d), err("hmc::gradient_check::error", n, d);
  StateView d6("hmc::gradient_check::sixth_diff", n, d);
  ParticleView lp("hmc::gradient_check::lp", n), lp_grad("hmc::gradient_check::lp_gradient", n);
  ParticleView lp_fd("hmc::gradient_check::lp_fd", n);
  detail::point_values(model, points, grad, lp, lp_grad, lp_fd, budget);

  // Per (point, coordinate): the ten shifted evaluations, each pair on its own copy of q.
  {
    const std::int64_t pairs = static_cast<std::int64_t>(n) * d;
    const std::int64_t chunk = detail::chunk_rows(pairs, static_cast<std::int64_t>(d) + fd_scratch, budget);
    StateView work("hmc::gradient_check::work", pairs > 0 ? chunk : 0, d);
    StateView scratch("hmc::gradient_check::fd_scratch", fd_scratch > 0 ? chunk : 0, fd_scratch);
    for (std::int64_t begin = 0; begin < pairs; begin += chunk) {
      const std::int64_t end = std::min(pairs, begin + chunk);
      Kokkos::parallel_for(
          "hmc::gradient_check::finite_differences",
          Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(begin, end),
          KOKKOS_LAMBDA(const std::int64_t pair) {
            const int i = static_cast<int>(pair / d), j = static_cast<int>(pair % d);
            const int slot = static_cast<int>(pair - begin);
            const Row q = row(points, i), w = row(work, slot);
            const Row s = scratch.extent(1) > 0 ? row(scratch, slot) : Row{nullptr, 0};
            for (int k = 0; k < d; ++k) w(k) = q(k);
            const double x = q(j);
            // The half step, exactly representable next to x (so are its multiples here).
            const double t = (x + 0.5 * finite_difference_step(x, rel_step)) - x;
            // Differences to f(0) (their weights add up to 0), which are exact where f
            // changes little: no rounding at the size of f itself. m = 5 is not used.
            const double f0 = lp_fd(i);
            double odd[7] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0}, even[7] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
            for (int m = 1; m <= 6; ++m) {
              if (m == 5) continue;
              w(j) = x + m * t;
              const double up = finite_difference_density(model, w, s) - f0;
              w(j) = x - m * t;
              const double down = finite_difference_density(model, w, s) - f0;
              odd[m] = up - down;
              even[m] = up + down;
            }
            const double h = 2.0 * t;
            fd(i, j) = (odd[6] - 9.0 * odd[4] + 45.0 * odd[2]) / (60.0 * h);
            fdh(i, j) = (odd[3] - 9.0 * odd[2] + 45.0 * odd[1]) / (30.0 * h);
            d6(i, j) = even[6] - 6.0 * even[4] + 15.0 * even[2];
            const double e1 = relative_error(grad(i, j), fd(i, j)), e2 = relative_error(grad(i, j), fdh(i, j));
            err(i, j) = e1 < e2 ? e1 : e2;
          });
    }
    Kokkos::fence();
  }

  GradientCheck out;
  out.method = GradientMethod::kFiniteDifferences;
  out.rel_step = rel_step;
  detail::common_results(out, points, grad, lp, lp_grad);
  out.finite_diff = detail::host_matrix(fd, "hmc::gradient_check::finite_diff");
  out.finite_diff_half = detail::host_matrix(fdh, "hmc::gradient_check::finite_diff_half");
  out.reference = out.finite_diff;
  out.error = detail::host_matrix(err, "hmc::gradient_check::error");
  out.sixth_diff = detail::host_matrix(d6, "hmc::gradient_check::sixth_diff");
  auto lp_fd_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), lp_fd);
  out.lp_error = GradientCheck::HostVector("hmc::gradient_check::lp_error", n);
  out.lp_allowance = GradientCheck::HostVector("hmc::gradient_check::lp_allowance", n);
  for (int i = 0; i < n; ++i) {
    out.lp_error(i) = std::max(relative_error(out.lp(i), out.lp_gradient(i)), relative_error(out.lp(i), lp_fd_host(i)));
    if (out.skip[i] == Skip::kNone && std::fabs(out.lp(i)) > kAstronomicalLogDensity) out.skip[i] = Skip::kAstronomical;
  }

  // The rounding noise of log p at each point, and each entry's allowance (file comment).
  constexpr double kSixthSigma = 0.6744897501960817 * 30.397368307141328;    // median |N(0,1)| · √924
  constexpr double kFdSigma = 1.0819123806898750;                            // √4214 / 60
  constexpr double kRounding = 1.1102230246251565e-16 / 1.7320508075688772;  // 2⁻⁵³ / √3
  auto magnitude = [&](int i) { return std::max(1.0, std::fabs(lp_fd_host(i))); };
  std::vector<double> all, one;
  all.reserve(static_cast<std::size_t>(n) * d);
  for (int i = 0; i < n; ++i)  // the points skipped are not pooled
    if (out.skip[i] == Skip::kNone)
      for (int j = 0; j < d; ++j) all.push_back(out.sixth_diff(i, j) / magnitude(i));
  const double pooled = detail::median_abs(all) / kSixthSigma;
  out.lp_noise = GradientCheck::HostVector("hmc::gradient_check::lp_noise", n);
  out.noise = GradientCheck::HostMatrix("hmc::gradient_check::noise", n, d);
  for (int i = 0; i < n; ++i) {
    one.assign(&out.sixth_diff(i, 0), &out.sixth_diff(i, 0) + d);
    const double sigma =
        std::max({detail::median_abs(one) / kSixthSigma, pooled * magnitude(i), kRounding * magnitude(i)});
    out.lp_noise(i) = sigma;
    for (int j = 0; j < d; ++j) {
      const double x = out.q(i, j), h = 2.0 * ((x + 0.5 * finite_difference_step(x, rel_step)) - x);
      const double a = out.finite_diff(i, j), b = out.finite_diff_half(i, j);
      const double allowance = std::max(kNoiseSigmas * kFdSigma * sigma / h, kSpreadFactor * std::fabs(a - b)) /
                               std::max({1.0, std::fabs(a), std::fabs(b)});
      const bool usable =
          out.skip[i] == Skip::kNone && std::isfinite(a) && std::isfinite(b) && std::isfinite(out.sixth_diff(i, j));
      out.noise(i, j) = usable && allowance == allowance ? allowance : math::infinity();
    }
  }
  return out;
}

namespace detail {

/// The exact comparison's evaluations at one set of points, on the host.
struct ExactPass {
  GradientCheck::HostMatrix grad, ref, value;  ///< the model's gradient; the forward passes' tangents and values
  GradientCheck::HostVector lp, lp_grad;       ///< log_density; the value of log_density_gradient
};

/// The model's gradient at `points` (one kernel over the points) and the forward-mode
/// reference (one kernel over (point, coordinate) pairs, reading q in place).
template <class Model>
ExactPass exact_pass(const Model& model, const StateView& points, std::int64_t budget) {
  const int n = static_cast<int>(points.extent(0)), d = static_cast<int>(points.extent(1));
  StateView grad("hmc::gradient_check::grad", n, d), ref("hmc::gradient_check::reference", n, d);
  StateView value("hmc::gradient_check::reference_value", n, d);
  ParticleView lp("hmc::gradient_check::lp", n), lp_grad("hmc::gradient_check::lp_gradient", n);
  point_values(model, points, grad, lp, lp_grad, ParticleView(), budget);
  Kokkos::parallel_for(
      "hmc::gradient_check::forward_reference",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(0, static_cast<std::int64_t>(n) * d),
      KOKKOS_LAMBDA(const std::int64_t pair) {
        const int i = static_cast<int>(pair / d), j = static_cast<int>(pair % d);
        double v = 0.0;
        ref(i, j) = forward_gradient_entry(model, row(points, i), j, v);
        value(i, j) = v;
      });
  Kokkos::fence();
  ExactPass out;
  out.grad = host_matrix(grad, "hmc::gradient_check::analytic");
  out.ref = host_matrix(ref, "hmc::gradient_check::reference");
  out.value = host_matrix(value, "hmc::gradient_check::reference_value");
  out.lp = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), lp);
  out.lp_grad = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), lp_grad);
  return out;
}

/// Copy k = 1, 2, 3 of the points, every coordinate moved by kExactPerturbation ·
/// max(1, |q_j|): all up, all down, alternately up and down.
inline StateView perturbed_points(const StateView& points, int k) {
  const int n = static_cast<int>(points.extent(0)), d = static_cast<int>(points.extent(1));
  StateView out("hmc::gradient_check::perturbed_points", n, d);
  const double shift = kExactPerturbation;
  Kokkos::parallel_for(
      "hmc::gradient_check::perturbed_points", Kokkos::RangePolicy<ExecSpace>(0, n), KOKKOS_LAMBDA(const int i) {
        for (int j = 0; j < d; ++j) {
          const double x = points(i, j), ax = math::fabs(x);
          const double sign = k % 3 == 1 ? 1.0 : (k % 3 == 2 ? -1.0 : (j % 2 == 0 ? 1.0 : -1.0));
          out(i, j) = x + sign * shift * (ax > 1.0 ? ax : 1.0);
        }
      });
  Kokkos::fence();
  return out;
}

}  // namespace detail

/// \brief Compares the analytic gradient of `model` with its forward-mode reference
/// (hmc/model/forward_gradient.hpp) at each row of `points`, and at kExactPerturbations
/// copies of them that measure the rounding of the difference (file comment): per set,
/// one kernel over the points for the gradient, one over (point, coordinate) pairs for
/// the forward passes.
template <class Model>
GradientCheck check_gradient_exact(const Model& model, const StateView& points,
                                   std::int64_t budget = kGradientCheckBudget) {
  static_assert(check_model<Model>());
  static_assert(has_forward_reference<Model>(),
                "check_gradient_exact: the model needs `template <class T, class Q> T log_density_t(const Q& q) "
                "const` that takes T = hmc::Dual");
  const int n = static_cast<int>(points.extent(0)), d = static_cast<int>(points.extent(1));
  const detail::ExactPass base = detail::exact_pass(model, points, budget);
  std::vector<detail::ExactPass> moved;
  for (int k = 1; k <= kExactPerturbations; ++k)
    moved.push_back(detail::exact_pass(model, detail::perturbed_points(points, k), budget));

  GradientCheck out;
  out.method = GradientMethod::kExact;
  out.q = detail::host_matrix(points, "hmc::gradient_check::q");
  out.analytic = base.grad;
  out.reference = base.ref;
  out.lp = base.lp;
  out.lp_gradient = base.lp_grad;
  out.skip.assign(static_cast<std::size_t>(n), Skip::kNone);
  out.error = GradientCheck::HostMatrix("hmc::gradient_check::error", n, d);
  out.noise = GradientCheck::HostMatrix("hmc::gradient_check::noise", n, d);
  out.lp_error = GradientCheck::HostVector("hmc::gradient_check::lp_error", n);
  out.lp_noise = GradientCheck::HostVector("hmc::gradient_check::lp_noise", n);
  out.lp_allowance = GradientCheck::HostVector("hmc::gradient_check::lp_allowance", n);
  const double inf = math::infinity();
  for (int i = 0; i < n; ++i) {
    if (!std::isfinite(out.lp(i))) out.skip[i] = Skip::kNotFinite;
    // The log-density values: lp against the gradient's value and each pass's value,
    // and the spread of those differences over the copies.
    const double lp_scale = std::max(1.0, std::fabs(base.lp(i)));
    double lp_err = relative_error(base.lp(i), base.lp_grad(i)), lp_spread = 0.0;
    auto lp_moved = [&](double lp0, double other0, double lpk, double otherk) {
      const double dk = (lpk - otherk) / lp_scale, d0 = (lp0 - other0) / lp_scale;
      if (std::isfinite(dk) && std::isfinite(d0)) lp_spread = std::max(lp_spread, std::fabs(dk - d0));
    };
    for (const auto& p : moved) lp_moved(base.lp(i), base.lp_grad(i), p.lp(i), p.lp_grad(i));
    for (int j = 0; j < d; ++j) {
      lp_err = std::max(lp_err, relative_error(base.lp(i), base.value(i, j)));
      for (const auto& p : moved) lp_moved(base.lp(i), base.value(i, j), p.lp(i), p.value(i, j));
      // The gradient entry: D_k = (a - r) / scale at the point and its copies.
      const double a0 = base.grad(i, j), r0 = base.ref(i, j);
      const double scale = std::max({1.0, std::fabs(a0), std::fabs(r0)}), d0 = (a0 - r0) / scale;
      out.error(i, j) = relative_error(a0, r0);
      double spread = 0.0;
      for (const auto& p : moved) {
        const double dk = (p.grad(i, j) - p.ref(i, j)) / scale;
        if (std::isfinite(dk)) spread = std::max(spread, std::fabs(dk - d0));
      }
      // A reference that is not finite checks nothing; a gradient that is not finite
      // beside a finite reference is wrong whatever the spread.
      const double allowance = kExactNoiseFactor * spread;
      out.noise(i, j) = out.skip[i] != Skip::kNone || !std::isfinite(r0) ? inf
                        : !std::isfinite(a0)                             ? 0.0
                                                                         : (allowance == allowance ? allowance : inf);
    }
    out.lp_error(i) = lp_err;
    out.lp_allowance(i) = std::min(kExactNoiseFactor * lp_spread, kExactResolvable);
  }
  return out;
}

/// \brief n points drawn like the sampler's initial state (sampler::InitParticles, first
/// attempt): point k is where global particle k of a run with this seed first tries to
/// start, each coordinate uniform in (centre_j − radius, centre_j + radius) on the
/// unconstrained scale. An empty `centre` means 0.
inline StateView initial_points(int n, int dim, double radius, std::uint64_t seed,
                                const std::vector<double>& centre = {}) {
  StateView points("hmc::gradient_check::points", n, dim);
  VectorView c("hmc::gradient_check::centre", dim);
  if (!centre.empty()) {
    auto h = Kokkos::create_mirror_view(c);
    for (int j = 0; j < dim; ++j) h(j) = centre[j];
    Kokkos::deep_copy(c, h);
  }
  Kokkos::parallel_for(
      "hmc::gradient_check::points", Kokkos::RangePolicy<ExecSpace>(0, n), KOKKOS_LAMBDA(const int i) {
        // The same draws as InitParticles's first attempt: iteration 0, use j / 2.
        const rng::ParticleStream stream(seed, static_cast<std::uint64_t>(i));
        const Row q = row(points, i);
        for (int j = 0; j < dim; j += 2) {
          double u0, u1;
          stream.uniform2(0, static_cast<std::uint32_t>(j / 2), u0, u1);
          q(j) = c(j) + radius * (2.0 * u0 - 1.0);
          if (j + 1 < dim) q(j + 1) = c(j + 1) + radius * (2.0 * u1 - 1.0);
        }
      });
  Kokkos::fence();
  return points;
}

}  // namespace hmc::model
