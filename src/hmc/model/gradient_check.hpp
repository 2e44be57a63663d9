#pragma once
/// \file
/// \brief A model's analytic gradient against central finite differences of its log
/// density, evaluated in kernels (so it runs where the sampler runs), as `hmc diagnose`
/// and the tests use it.
///
/// At each point q and coordinate j, with the step h_j = rel_step · max(1, |q_j|)
/// (default rel_step 3e-4; the step is rounded so that q_j + h_j − q_j = h_j exactly)
/// and f_k = f(q + k h_j e_j), f = log p, k = −3..3, the sixth-order central difference
/// (as Stan Math's finite_diff_gradient)
///
///   fd_j = [f_3 − 9 f_2 + 45 f_1 − 45 f_−1 + 9 f_−2 − f_−3] / (60 h_j).
///
/// Its truncation error, h⁶ f⁽⁷⁾ / 140, is negligible at such a step (about 1e-10
/// relative for the shipped models); what is left is the rounding error of f. Each entry
/// is compared by relative_error(analytic, fd) = |a − fd| / max(|a|, |fd|, 1) (relative
/// above 1 in magnitude, absolute below).
///
/// The rounding error of fd is measured, not assumed. If each f_k carries independent
/// rounding noise of standard deviation σ, fd carries √(2 (45² + 9² + 1²)) / 60 · σ / h
/// = 1.082 σ / h, and the sixth difference of the same seven values,
///
///   Δ⁶_j = f_3 − 6 f_2 + 15 f_1 − 20 f_0 + 15 f_−1 − 6 f_−2 + f_−3,
///
/// is h⁶ f⁽⁶⁾ (negligible) plus noise of standard deviation √924 σ (the ECnoise
/// estimate of Moré and Wild). So σ at point i is estimated, at no extra evaluations, as
/// the largest of
///   - median_j |Δ⁶_ij| / (0.6745 √924)    (0.6745: median of |N(0, 1)|; the median
///     ignores a few coordinates with real curvature),
///   - the same median over every point and coordinate of |Δ⁶_ij| / max(1, |f_i|), times
///     max(1, |f_i|)    (pools the points where a model has few coordinates),
///   - u · max(1, |f_i|) / √3, u = 2⁻⁵³    (the standard deviation of one rounding of
///     the result, uniform in ± half an ulp, at its largest: the noise is never less),
/// and each entry is allowed noise_ij = 6 · 1.082 σ_i / h_j / max(|a|, |fd|, 1) on top of
/// the tolerance. An entry passes when error ≤ tolerance + noise and noise ≤ 10 ·
/// tolerance: past that the finite differences cannot resolve the gradient to the
/// tolerance (the entry is "unresolved": a larger step or tolerance is needed), so a pass
/// always bounds every error by 11 · tolerance. The noise estimate uses only values of
/// f, never the analytic gradient, so a wrong gradient cannot widen its own allowance.
/// The value returned by log_density_gradient, and the finite-difference density at q,
/// must match log_density within the tolerance.
///
/// The finite differences are taken of log_density(q, scratch) where the model has one
/// (with `int log_density_scratch_size() const`; the HMM builds its parameters there
/// once instead of recomputing them per observation), else of log_density(q). They run
/// as one kernel over (point, coordinate) pairs, each pair with its own copy of q (and
/// scratch), in chunks of at most kGradientCheckBudget doubles of working memory.

#include "hmc/core/philox.hpp"
#include "hmc/core/types.hpp"
#include "hmc/model/concept.hpp"

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

/// Standard deviations of the finite difference's rounding noise allowed on top of the tolerance.
inline constexpr double kNoiseSigmas = 6.0;
/// Noise beyond this many tolerances leaves an entry unresolved (failed).
inline constexpr double kResolvableNoise = 10.0;
/// Doubles of working memory one chunk of the check's kernels may use (128 MiB).
inline constexpr std::int64_t kGradientCheckBudget = std::int64_t{1} << 24;

/// \brief The outcome of check_gradient, on the host: [point][coordinate] matrices and
/// one value per point, and the verdict at a tolerance (file comment).
struct GradientCheck {
  using HostMatrix = Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace>;
  using HostVector = Kokkos::View<double*, Kokkos::HostSpace>;
  HostMatrix q;            ///< the points, unconstrained scale
  HostMatrix analytic;     ///< gradient written by log_density_gradient
  HostMatrix finite_diff;  ///< central differences of the log density
  HostMatrix error;        ///< relative_error(analytic, finite_diff)
  HostMatrix sixth_diff;   ///< Δ⁶ of the seven values behind finite_diff
  HostMatrix noise;        ///< allowed rounding noise of finite_diff, relative as `error`
  HostVector lp;           ///< log_density(q)
  HostVector lp_gradient;  ///< the value log_density_gradient returned
  HostVector lp_error;     ///< relative difference of lp to lp_gradient and to the fd density at q; +inf if not finite
  HostVector lp_noise;     ///< σ_i, the estimated rounding noise (standard deviation) of log p at the point

  int points() const { return static_cast<int>(q.extent(0)); }
  int dim() const { return static_cast<int>(q.extent(1)); }

  /// \brief The largest error over every gradient entry and every log-density pair.
  double max_error() const {
    double worst = 0.0;
    for (int i = 0; i < points(); ++i) {
      if (!(lp_error(i) <= worst)) worst = lp_error(i);
      for (int j = 0; j < dim(); ++j)
        if (!(error(i, j) <= worst)) worst = error(i, j);
    }
    return worst;
  }

  /// \brief The entry's error is within tolerance + noise (a NaN fails).
  bool within(int i, int j, double tolerance) const {
    return std::isfinite(error(i, j)) && error(i, j) <= tolerance + noise(i, j);
  }
  /// \brief The finite differences resolve the entry: noise <= kResolvableNoise · tolerance.
  bool resolved(int i, int j, double tolerance) const { return noise(i, j) <= kResolvableNoise * tolerance; }
  bool entry_passed(int i, int j, double tolerance) const {
    return within(i, j, tolerance) && resolved(i, j, tolerance);
  }
  bool lp_passed(int i, double tolerance) const { return lp_error(i) <= tolerance; }

  /// \brief How far an entry is from failing: error / (tolerance + noise); +inf for NaN.
  double ratio(int i, int j, double tolerance) const {
    const double r = error(i, j) / (tolerance + noise(i, j));
    return r == r ? r : math::infinity();
  }

  /// \brief Every entry and every log-density pair passes.
  bool passed(double tolerance) const {
    for (int i = 0; i < points(); ++i) {
      if (!lp_passed(i, tolerance)) return false;
      for (int j = 0; j < dim(); ++j)
        if (!entry_passed(i, j, tolerance)) return false;
    }
    return true;
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
  const int grad_scratch = scratch_size(model), fd_scratch = log_density_scratch_size(model);
  StateView grad("hmc::gradient_check::grad", n, d), fd("hmc::gradient_check::fd", n, d);
  StateView err("hmc::gradient_check::error", n, d), d6("hmc::gradient_check::sixth_diff", n, d);
  ParticleView lp("hmc::gradient_check::lp", n), lp_grad("hmc::gradient_check::lp_gradient", n);
  ParticleView lp_fd("hmc::gradient_check::lp_fd", n), lp_err("hmc::gradient_check::lp_error", n);

  // Per point: log p, the gradient and its value, the finite-difference density at q.
  {
    const int width = std::max(grad_scratch, fd_scratch);
    const std::int64_t chunk = detail::chunk_rows(n, width, budget);
    StateView scratch("hmc::gradient_check::scratch", width > 0 ? chunk : 0, width);
    for (std::int64_t begin = 0; begin < n; begin += chunk) {
      const int b = static_cast<int>(begin), e = static_cast<int>(std::min<std::int64_t>(n, begin + chunk));
      Kokkos::parallel_for(
          "hmc::gradient_check::gradient", Kokkos::RangePolicy<ExecSpace>(b, e), KOKKOS_LAMBDA(const int i) {
            const Row q = row(points, i), g = row(grad, i);
            const Row s = scratch.extent(1) > 0 ? row(scratch, i - b) : Row{nullptr, 0};
            lp(i) = model.log_density(q);
            lp_grad(i) = log_density_gradient(model, q, g, s);
            lp_fd(i) = finite_difference_density(model, q, s);
            const double e1 = relative_error(lp(i), lp_grad(i)), e2 = relative_error(lp(i), lp_fd(i));
            lp_err(i) = e1 > e2 ? e1 : e2;
          });
    }
    Kokkos::fence();
  }

  // Per (point, coordinate): the six shifted evaluations, each pair on its own copy of q.
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
            // A step that is exactly representable next to x.
            const double step = (x + finite_difference_step(x, rel_step)) - x;
            // Both sums are taken of differences to f_0 (their weights add up to 0), which
            // are exact where f changes little: no rounding at the size of f itself.
            const double f0 = lp_fd(i);
            double sum = 0.0, sixth = 0.0;
            for (int k = 1; k <= 3; ++k) {
              const double weight = k == 1 ? 45.0 : (k == 2 ? -9.0 : 1.0);
              const double even = k == 1 ? 15.0 : (k == 2 ? -6.0 : 1.0);
              w(j) = x + k * step;
              const double up = finite_difference_density(model, w, s) - f0;
              w(j) = x - k * step;
              const double down = finite_difference_density(model, w, s) - f0;
              sum += weight * (up - down);
              sixth += even * (up + down);
            }
            fd(i, j) = sum / (60.0 * step);
            d6(i, j) = sixth;
            err(i, j) = relative_error(grad(i, j), fd(i, j));
          });
    }
    Kokkos::fence();
  }

  auto matrix = [&](const StateView& v, const std::string& label) {
    GradientCheck::HostMatrix h(label, n, d);
    auto m = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < d; ++j) h(i, j) = m(i, j);
    return h;
  };
  GradientCheck out;
  out.q = matrix(points, "hmc::gradient_check::q");
  out.analytic = matrix(grad, "hmc::gradient_check::analytic");
  out.finite_diff = matrix(fd, "hmc::gradient_check::finite_diff");
  out.error = matrix(err, "hmc::gradient_check::error");
  out.sixth_diff = matrix(d6, "hmc::gradient_check::sixth_diff");
  out.lp = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), lp);
  out.lp_gradient = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), lp_grad);
  out.lp_error = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), lp_err);
  auto lp_fd_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), lp_fd);

  // The rounding noise of log p at each point, and each entry's allowance (file comment).
  constexpr double kSixthSigma = 0.6744897501960817 * 30.397368307141328;    // median |N(0,1)| · √924
  constexpr double kFdSigma = 1.0819123806898750;                            // √4214 / 60
  constexpr double kRounding = 1.1102230246251565e-16 / 1.7320508075688772;  // 2⁻⁵³ / √3
  auto magnitude = [&](int i) { return std::max(1.0, std::fabs(lp_fd_host(i))); };
  std::vector<double> all, one;
  all.reserve(static_cast<std::size_t>(n) * d);
  for (int i = 0; i < n; ++i)  // points where log p is not finite fail anyway; they are not pooled
    if (std::isfinite(lp_fd_host(i)))
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
      const double x = out.q(i, j), step = (x + finite_difference_step(x, rel_step)) - x;
      const double scale = std::max({1.0, std::fabs(out.analytic(i, j)), std::fabs(out.finite_diff(i, j))});
      const double allowance = kNoiseSigmas * kFdSigma * sigma / step / scale;
      out.noise(i, j) = allowance == allowance ? allowance : math::infinity();
    }
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
