#include "hmc/services/diagnose.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <sstream>
#include <utility>

namespace hmc::services {

namespace {

std::string format_number(const char* fmt, double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, x);
  return buf;
}

}  // namespace

std::string gradient_table(const std::string& model, const sampler::Settings& s, const DiagnoseOptions& d,
                           const GradientReport& out) {
  const auto& c = out.check;
  const double tol = d.tolerance;
  std::ostringstream os;
  os << "gradient check of " << model << ": " << c.dim() << " unconstrained coordinates at " << c.points()
     << " points, the starts of particles 0.." << c.points() - 1 << " (seed " << s.seed << ", init radius "
     << s.init_radius << (s.init_values.empty() ? "" : " around /sampler/init/values") << ")\n"
     << "sixth-order central differences, step " << d.rel_step << " * max(1, |theta_j|); relative error "
     << "|analytic - fd| / max(|analytic|, |fd|, 1); noise: the measured rounding noise of fd, relative;\n"
     << "an entry passes when rel_error <= tolerance + noise and noise <= " << model::kResolvableNoise
     << " * tolerance; tolerance " << tol << "\n\n";
  std::size_t width = std::string("coordinate").size();
  for (const auto& l : out.labels) width = std::max(width, l.size());
  auto line = [&](int i, int j) {
    const char* verdict = !c.within(i, j, tol) ? "  FAILED" : (!c.resolved(i, j, tol) ? "  UNRESOLVED" : "");
    os << std::left << std::setw(static_cast<int>(width)) << out.labels[j] << std::right << std::setw(10) << i
       << std::setw(20) << format_number("%.10g", c.analytic(i, j)) << std::setw(20)
       << format_number("%.10g", c.finite_diff(i, j)) << std::setw(12) << format_number("%.2g", c.error(i, j))
       << std::setw(10) << format_number("%.2g", c.noise(i, j)) << verdict << "\n";
  };
  os << std::left << std::setw(static_cast<int>(width)) << "coordinate" << std::right << std::setw(10) << "particle"
     << std::setw(20) << "analytic" << std::setw(20) << "finite_diff" << std::setw(12) << "rel_error" << std::setw(10)
     << "noise"
     << "\n";
  // Badness of an entry: failed first, then unresolved, then the nearest to failing.
  auto rank = [&](int i, int j) {
    return std::make_pair(!c.within(i, j, tol) ? 2 : (!c.resolved(i, j, tol) ? 1 : 0), c.ratio(i, j, tol));
  };
  for (int j = 0; j < c.dim(); ++j) {
    int worst = 0;
    for (int i = 0; i < c.points(); ++i) {
      if (d.all) line(i, j);
      if (rank(worst, j) < rank(i, j)) worst = i;
    }
    if (!d.all) line(worst, j);
  }
  int worst_lp = 0, worst_noise = 0;
  for (int i = 0; i < c.points(); ++i) {
    if (!(c.lp_error(i) <= c.lp_error(worst_lp))) worst_lp = i;
    if (!(c.lp_noise(i) <= c.lp_noise(worst_noise))) worst_noise = i;
  }
  os << "\nlog_density vs the value of log_density_gradient and the finite-difference density: largest relative "
     << "difference " << format_number("%.2g", c.lp_error(worst_lp)) << " (particle " << worst_lp << ", log density "
     << format_number("%.10g", c.lp(worst_lp)) << ")\n"
     << "rounding noise of the log density (estimated from sixth differences): largest "
     << format_number("%.2g", c.lp_noise(worst_noise)) << " (particle " << worst_noise << ", log density "
     << format_number("%.10g", c.lp(worst_noise)) << ")\n";
  os << "largest relative error " << format_number("%.2g", c.max_error()) << ": "
     << (c.passed(tol) ? "passed" : "FAILED") << "\n";
  return os.str();
}

std::string gradient_failure(const GradientReport& out, double tolerance) {
  const auto& c = out.check;
  for (int i = 0; i < c.points(); ++i) {
    if (!std::isfinite(c.lp(i)) || !std::isfinite(c.lp_gradient(i))) {
      return "log density is not finite at the start of particle " + std::to_string(i);
    }
  }
  // A wrong entry (the largest error over its bound), else a wrong log-density value,
  // else an unresolved entry (the largest noise).
  int wi = -1, wj = -1;
  double worst = 0.0;
  for (int i = 0; i < c.points(); ++i)
    for (int j = 0; j < c.dim(); ++j)
      if (!c.within(i, j, tolerance) && !(c.ratio(i, j, tolerance) <= worst))
        worst = c.ratio(i, j, tolerance), wi = i, wj = j;
  if (wi >= 0) {
    return out.labels[wj] + " at the start of particle " + std::to_string(wi) + ": relative error " +
           format_number("%.2g", c.error(wi, wj)) + " > tolerance " + format_number("%g", tolerance) + " + noise " +
           format_number("%.2g", c.noise(wi, wj));
  }
  for (int i = 0; i < c.points(); ++i)
    if (!c.lp_passed(i, tolerance) && (wi < 0 || !(c.lp_error(i) <= c.lp_error(wi)))) wi = i;
  if (wi >= 0) {
    return "log_density and log_density_gradient disagree at the start of particle " + std::to_string(wi) +
           ": relative error " + format_number("%.2g", c.lp_error(wi)) + " > tolerance " +
           format_number("%g", tolerance);
  }
  for (int i = 0; i < c.points(); ++i)
    for (int j = 0; j < c.dim(); ++j)
      if (!c.resolved(i, j, tolerance) && (wi < 0 || !(c.noise(i, j) <= c.noise(wi, wj)))) wi = i, wj = j;
  if (wi < 0) return "no entry failed";  // not reached: called only when the check failed
  return out.labels[wj] + " at the start of particle " + std::to_string(wi) +
         ": the finite differences cannot resolve it (noise " + format_number("%.2g", c.noise(wi, wj)) + " > " +
         format_number("%g", model::kResolvableNoise) + " * tolerance " + format_number("%g", tolerance) +
         "): the step is too small for the rounding noise of the log density, or too large for its curvature; "
         "try another --step or a larger --tolerance";
}

}  // namespace hmc::services
