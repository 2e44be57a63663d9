#pragma once
/// \file
/// \brief A model's analytic gradient against central finite differences of its log
/// density, evaluated in one kernel (so it runs where the sampler runs), as
/// `hmc diagnose` and the tests use it.
///
/// At each point q and coordinate j, with the step h_j = rel_step · max(1, |q_j|)
/// (default rel_step 3e-4; the step is rounded so that q_j + h_j − q_j = h_j exactly),
/// the sixth-order central difference (as Stan Math's finite_diff_gradient)
///
///   fd_j = [f(q + 3h e_j) − 9 f(q + 2h e_j) + 45 f(q + h e_j)
///           − 45 f(q − h e_j) + 9 f(q − 2h e_j) − f(q − 3h e_j)] / (60 h),   f = log p.
///
/// Its truncation error is O(h⁶), so a step of a few 1e-4 keeps it negligible (about
/// 1e-10 relative for the shipped models) while the rounding error of f, about
/// 1e-16 |f| / h, stays near 1e-7 even where |f| is 1e6 and the gradient is of order 1
/// (far from the posterior mode). Smaller steps lose to rounding, larger ones (1e-3 and
/// up) to truncation where log p has large high derivatives (exp transforms). Each entry is compared by
/// relative_error(analytic, fd) = |a − fd| / max(|a|, |fd|, 1): relative for entries
/// larger than 1 in magnitude, absolute for smaller ones. The value returned by
/// log_density_gradient must also match log_density at the same point.

#include "hmc/core/philox.hpp"
#include "hmc/core/types.hpp"
#include "hmc/model/concept.hpp"

#include <cstdint>
#include <string>
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

/// \brief The outcome of check_gradient, on the host: [point][coordinate] matrices and
/// one value per point.
struct GradientCheck {
  using HostMatrix = Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace>;
  using HostVector = Kokkos::View<double*, Kokkos::HostSpace>;
  HostMatrix q;            ///< the points, unconstrained scale
  HostMatrix analytic;     ///< gradient written by log_density_gradient
  HostMatrix finite_diff;  ///< central differences of log_density
  HostMatrix error;        ///< relative_error(analytic, finite_diff)
  HostVector lp;           ///< log_density(q)
  HostVector lp_gradient;  ///< the value log_density_gradient returned
  HostVector lp_error;     ///< relative_error(lp, lp_gradient); +inf where log p is not finite

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

  /// \brief Every error <= tolerance (a NaN error fails).
  bool passed(double tolerance) const { return max_error() <= tolerance; }
};

/// \brief Compares the analytic gradient of `model` with central finite differences at
/// each row of `points` ([point][coordinate], model.dim() columns), one thread per point.
template <class Model>
GradientCheck check_gradient(const Model& model, const StateView& points, double rel_step = 3e-4) {
  static_assert(check_model<Model>());
  const int n = static_cast<int>(points.extent(0)), d = static_cast<int>(points.extent(1));
  const int scratch_n = scratch_size(model);
  StateView work("hmc::gradient_check::work", n, d), grad("hmc::gradient_check::grad", n, d);
  StateView fd("hmc::gradient_check::fd", n, d), err("hmc::gradient_check::error", n, d);
  StateView scratch("hmc::gradient_check::scratch", scratch_n > 0 ? n : 0, scratch_n);
  ParticleView lp("hmc::gradient_check::lp", n), lp_grad("hmc::gradient_check::lp_gradient", n);
  ParticleView lp_err("hmc::gradient_check::lp_error", n);
  Kokkos::parallel_for(
      "hmc::gradient_check", Kokkos::RangePolicy<ExecSpace>(0, n), KOKKOS_LAMBDA(const int i) {
        const Row q = row(points, i), w = row(work, i), g = row(grad, i);
        const Row s = scratch.extent(1) > 0 ? row(scratch, i) : Row{nullptr, 0};
        for (int j = 0; j < d; ++j) w(j) = q(j);
        lp(i) = model.log_density(q);
        lp_grad(i) = log_density_gradient(model, q, g, s);
        lp_err(i) = relative_error(lp(i), lp_grad(i));
        for (int j = 0; j < d; ++j) {
          const double x = q(j);
          // A step that is exactly representable next to x.
          const double step = (x + finite_difference_step(x, rel_step)) - x;
          double sum = 0.0;
          for (int k = 1; k <= 3; ++k) {
            const double weight = k == 1 ? 45.0 : (k == 2 ? -9.0 : 1.0);
            w(j) = x + k * step;
            const double up = model.log_density(w);
            w(j) = x - k * step;
            const double down = model.log_density(w);
            sum += weight * (up - down);
          }
          w(j) = x;
          fd(i, j) = sum / (60.0 * step);
          err(i, j) = relative_error(g(j), fd(i, j));
        }
      });
  Kokkos::fence();

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
  out.lp = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), lp);
  out.lp_gradient = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), lp_grad);
  out.lp_error = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), lp_err);
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
