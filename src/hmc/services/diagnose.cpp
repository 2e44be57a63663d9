#include "hmc/services/diagnose.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <sstream>
#include <tuple>
#include <utility>

namespace hmc::services {

namespace {

using model::GradientMethod;
using model::Skip;

std::string format_number(const char* fmt, double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, x);
  return buf;
}

bool exact(const model::GradientCheck& c) { return c.method == GradientMethod::kExact; }

}  // namespace

std::string gradient_table(const std::string& model, const sampler::Settings& s, const DiagnoseOptions& d,
                           const GradientReport& out) {
  const auto& c = out.check;
  const double tol = out.tolerance;
  std::ostringstream os;
  os << "gradient check of " << model << ": " << c.dim() << " unconstrained coordinates at " << c.points()
     << " points, the starts of particles 0.." << c.points() - 1 << " (seed " << s.seed << ", init radius "
     << s.init_radius << (s.init_values.empty() ? "" : " around /sampler/init/values") << ")\n";
  if (exact(c)) {
    os << "method: exact: log_density_gradient against the forward-mode gradient of log_density_t (hmc::Dual, one "
       << "pass per coordinate), no step size;\nrelative error |analytic - reference| / max(|analytic|, |reference|, "
       << "1); noise: " << model::kExactNoiseFactor << " * the spread of that difference over "
       << model::kExactPerturbations << " copies of the point moved by "
       << format_number("%.2g", model::kExactPerturbation)
       << " (relative);\nan entry is WRONG when rel_error > tolerance + noise, UNRESOLVED when the reference is not "
       << "finite or noise > " << format_number("%g", model::kExactResolvable) << "; tolerance " << tol << "\n\n";
  } else {
    os << "method: finite differences"
       << (out.reference_available ? "" : " (the model has no log_density_t for an exact reference)")
       << ": sixth-order central differences at steps h = " << d.rel_step << " * max(1, |theta_j|) and h/2;\n"
       << "relative error |analytic - fd| / max(|analytic|, |fd|, 1), the smaller at h and h/2; noise: the measured "
       << "rounding and truncation error of fd, relative;\nan entry is WRONG when rel_error > tolerance + noise, "
       << "UNRESOLVED when noise > " << model::kResolvableNoise << " * tolerance; points with |log density| > "
       << format_number("%g", model::kAstronomicalLogDensity) << " are skipped; tolerance " << tol << "\n\n";
  }
  std::size_t width = std::string("coordinate").size();
  for (const auto& l : out.labels) width = std::max(width, l.size());
  // Count of the points at which each coordinate was resolved.
  std::vector<int> resolved(static_cast<std::size_t>(c.dim()), 0);
  for (int i = 0; i < c.points(); ++i)
    for (int j = 0; j < c.dim(); ++j)
      if (c.resolved(i, j, tol)) ++resolved[j];
  auto line = [&](int i, int j) {
    const char* verdict = c.skip[i] != Skip::kNone ? "  SKIPPED"
                          : c.wrong(i, j, tol)     ? "  WRONG"
                          : !c.resolved(i, j, tol) ? "  UNRESOLVED"
                                                   : "";
    os << std::left << std::setw(static_cast<int>(width)) << out.labels[j] << std::right << std::setw(10) << i
       << std::setw(20) << format_number("%.10g", c.analytic(i, j)) << std::setw(20)
       << format_number("%.10g", c.reference(i, j)) << std::setw(12) << format_number("%.2g", c.error(i, j))
       << std::setw(10) << format_number("%.2g", c.noise(i, j)) << std::setw(10)
       << (std::to_string(resolved[j]) + "/" + std::to_string(c.points())) << verdict << "\n";
  };
  os << std::left << std::setw(static_cast<int>(width)) << "coordinate" << std::right << std::setw(10) << "particle"
     << std::setw(20) << "analytic" << std::setw(20) << (exact(c) ? "reference" : "finite_diff") << std::setw(12)
     << "rel_error" << std::setw(10) << "noise" << std::setw(10) << "resolved"
     << "\n";
  // Each coordinate's row: wrong first, then resolved, then unresolved, then skipped;
  // within each the nearest to failing (error / (tolerance + noise)).
  auto rank = [&](int i, int j) {
    const int level = c.skip[i] != Skip::kNone ? 0 : (c.wrong(i, j, tol) ? 3 : (c.resolved(i, j, tol) ? 2 : 1));
    return std::make_pair(level, c.ratio(i, j, tol));
  };
  for (int j = 0; j < c.dim(); ++j) {
    int worst = 0;
    for (int i = 0; i < c.points(); ++i) {
      if (d.all) line(i, j);
      if (rank(worst, j) < rank(i, j)) worst = i;
    }
    if (!d.all && c.points() > 0) line(worst, j);
  }
  int worst_lp = -1, worst_noise = -1;
  for (int i = 0; i < c.points(); ++i) {
    if (c.skip[i] == Skip::kNotFinite) continue;
    if (worst_lp < 0 || !(c.lp_error(i) <= c.lp_error(worst_lp))) worst_lp = i;
    if (c.skip[i] == Skip::kNone && (worst_noise < 0 || !(c.lp_noise(i) <= c.lp_noise(worst_noise)))) worst_noise = i;
  }
  os << "\nlog_density vs the value of log_density_gradient and "
     << (exact(c) ? "of the forward passes" : "the finite-difference density") << ": ";
  if (worst_lp < 0) {
    os << "no point with a finite log density\n";
  } else {
    os << "largest relative difference " << format_number("%.2g", c.lp_error(worst_lp)) << " (particle " << worst_lp
       << ", log density " << format_number("%.10g", c.lp(worst_lp)) << ")\n";
  }
  if (!exact(c) && worst_noise >= 0) {
    os << "rounding noise of the log density (estimated from sixth differences): largest "
       << format_number("%.2g", c.lp_noise(worst_noise)) << " (particle " << worst_noise << ", log density "
       << format_number("%.10g", c.lp(worst_noise)) << ")\n";
  }
  const model::GradientCounts n = c.counts(tol);
  os << "points: " << n.points << " checked, " << n.passed << " passed, " << n.wrong << " wrong, " << n.inconclusive
     << " inconclusive (log density not finite " << n.not_finite << ", |log density| > "
     << format_number("%g", model::kAstronomicalLogDensity) << " " << n.astronomical << ", an entry unresolved "
     << n.unresolved << "); method " << (exact(c) ? "exact" : "finite differences") << "\n";
  const model::Verdict v = c.verdict(tol);
  os << "largest relative error " << format_number("%.2g", c.max_resolved_error(tol)) << ": "
     << (v == model::Verdict::kPassed ? "passed" : (v == model::Verdict::kWrong ? "FAILED" : "INCONCLUSIVE")) << "\n";
  return os.str();
}

std::string gradient_failure(const GradientReport& out) {
  const auto& c = out.check;
  const double tol = out.tolerance;
  // The wrong entry furthest over its bound, else a wrong log-density value.
  int wi = -1, wj = -1;
  double worst = 0.0;
  for (int i = 0; i < c.points(); ++i)
    for (int j = 0; j < c.dim(); ++j)
      if (c.wrong(i, j, tol) && (wi < 0 || !(c.ratio(i, j, tol) <= worst))) worst = c.ratio(i, j, tol), wi = i, wj = j;
  if (wi >= 0) {
    const std::string where = out.labels[wj] + " at the start of particle " + std::to_string(wi) + ": ";
    if (exact(c)) {
      return where + "log_density_gradient gives " + format_number("%.10g", c.analytic(wi, wj)) +
             ", the forward-mode reference " + format_number("%.10g", c.reference(wi, wj)) + ": relative error " +
             format_number("%.2g", c.error(wi, wj)) + " > tolerance " + format_number("%g", tol) + " + noise " +
             format_number("%.2g", c.noise(wi, wj));
    }
    return where + "relative error " + format_number("%.2g", c.error(wi, wj)) + " > tolerance " +
           format_number("%g", tol) + " + noise " + format_number("%.2g", c.noise(wi, wj)) + " (analytic " +
           format_number("%.10g", c.analytic(wi, wj)) + ", finite differences " +
           format_number("%.10g", c.finite_diff(wi, wj)) + " and " +
           format_number("%.10g", c.finite_diff_half(wi, wj)) + " at steps h and h/2)";
  }
  for (int i = 0; i < c.points(); ++i)
    if (!c.lp_passed(i, tol) && (wi < 0 || !(c.lp_error(i) <= c.lp_error(wi)))) wi = i;
  if (wi < 0) return "no entry is wrong";  // not reached: called only when the check found one
  return "log_density (" + format_number("%.10g", c.lp(wi)) + "), the value of log_density_gradient (" +
         format_number("%.10g", c.lp_gradient(wi)) + ") and " +
         (exact(c) ? "the forward passes' value" : "the finite-difference density") +
         " disagree at the start of particle " + std::to_string(wi) + ": relative error " +
         format_number("%.2g", c.lp_error(wi)) + " > tolerance " + format_number("%g", tol) +
         (exact(c) ? " + noise " + format_number("%.2g", c.lp_allowance(wi)) : std::string());
}

std::string gradient_inconclusive(const GradientReport& out) {
  const auto& c = out.check;
  const double tol = out.tolerance;
  const model::GradientCounts n = c.counts(tol);
  std::string why = "no point could be checked (" + std::to_string(n.points) + " points: log density not finite at " +
                    std::to_string(n.not_finite) + ", |log density| > " +
                    format_number("%g", model::kAstronomicalLogDensity) + " at " + std::to_string(n.astronomical) +
                    ", an entry unresolved at " + std::to_string(n.unresolved) + ")";
  // The least noisy unresolved entry at a point not skipped: the nearest to being checked.
  int wi = -1, wj = -1;
  for (int i = 0; i < c.points(); ++i)
    for (int j = 0; j < c.dim(); ++j)
      if (c.skip[i] == Skip::kNone && !c.resolved(i, j, tol) && (wi < 0 || c.noise(i, j) < c.noise(wi, wj)))
        wi = i, wj = j;
  if (wi >= 0 && exact(c)) {
    why += "; e.g. " + out.labels[wj] + " at the start of particle " + std::to_string(wi) +
           (std::isfinite(c.reference(wi, wj))
                ? ": the two gradients' rounding differs too much (noise " + format_number("%.2g", c.noise(wi, wj)) +
                      " > " + format_number("%g", model::kExactResolvable) + ")"
                : std::string(": the forward-mode reference is not finite"));
  } else if (wi >= 0) {
    why += "; e.g. " + out.labels[wj] + " at the start of particle " + std::to_string(wi) +
           ": the finite differences cannot resolve it (noise " + format_number("%.2g", c.noise(wi, wj)) + " > " +
           format_number("%g", model::kResolvableNoise) + " * tolerance " + format_number("%g", tol) + ")";
  }
  if (exact(c)) return why + "; try --method fd or another sampler.init.radius";
  return why + "; try another --step, a larger --tolerance or a smaller sampler.init.radius";
}

}  // namespace hmc::services
