#pragma once
/// \file
/// \brief Hard posteriors for the sampler's statistical tests, each with a reference
/// computed another way (a closed form, or a 1-D quadrature on the host).
///
/// Each model is an hmc model (src/hmc/model/concept.hpp) with a hand-written gradient,
/// written once as a template over the number type so that it runs in the lane kernel
/// (T = Pack) as well as one particle per thread (T = double). They need no config or
/// data files: make_*() builds each from a few numbers, generating its data
/// deterministically (std::mt19937_64 and the Box-Muller transform below, fixed seeds).
///
/// - HeavyTails: G groups of K observations y_gk ~ N(θ_gk, σ_gk²), non-centred
///   θ_gk = τ_g z_gk, z_gk ~ N(0, 1), and a half-Student-t(ν, 0, s) prior on each scale
///   τ_g. Sampled as u_g = log τ_g (log-Jacobian u_g) and z_gk. With |y| ~ 40 and s ~ 1
///   the posterior of u_g sits near log 40 ≈ 3.7, outside the init box (-2, 2). Beyond
///   the posterior, along the ridge z = y / τ where the likelihood is at its maximum, the
///   log density falls only as -ν u (the prior's tail), while the ridge narrows as σ / τ
///   in z: a particle that gets out there feels almost no restoring force and needs a
///   step size ~ σ / τ to move at all. Reference: θ integrated out analytically,
///   p(y_g | τ) = Π_k N(y_gk | 0, σ_gk² + τ²), a 1-D quadrature over u_g per group,
///   and E[θ | τ, y], Var[θ | τ, y] in closed form inside it.
/// - HeavyTailsFlat: the same scales, each θ seen only through an outcome "θ exceeds c":
///   a likelihood that is flat (not a ridge) beyond the posterior, which then has the
///   prior's own heavy tail. Reference: a 1-D quadrature over u_g of closed-form and
///   Simpson z integrals.
/// - CorrelatedRegression: Gaussian linear regression, known noise σ, prior
///   β_j ~ N(0, s²), an n x d design whose columns have pairwise correlation ρ (0.99),
///   optionally raw (column means, spread scales, an intercept), kept as sufficient
///   statistics A = XᵀX / σ² + I / s², b = Xᵀy / σ² (a gradient is O(d²)). Exact
///   posterior N(A⁻¹b, A⁻¹), by Cholesky on the host.
/// - Funnel: Neal's funnel, v ~ N(0, σ_v²), x_k | v ~ N(0, e^v), k = 1..K (centred; σ_v = 1.25,
///   K = 6 by default: at σ_v = 1.5 both kernels, NUTS too, underestimate Var v by 7 %).
///   Exact: v ~ N(0, σ_v²), E x_k = 0, Var x_k = E e^v = exp(σ_v² / 2).
/// - Bimodal: ½ N(m, I) + ½ N(-m, I) in d dimensions, m = (a, ..., a): two
///   equal-weight modes that no particle crosses. Mean 0, variance 1 + a² per
///   coordinate; the test is that a run is flagged, not summarised.

#include "hmc/core/modes.hpp"
#include "hmc/core/pack.hpp"
#include "hmc/core/types.hpp"
#include "hmc/sampler/settings.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace hmc::test::hard {

/// \brief The settings of a run with the defaults of `algorithm` (hmc::sampler::Settings{}:
/// diag metric, dual averaging to 0.8, step size 0.1, uniform init radius 2; ChEES for
/// hmc, and the fixed trajectory setting that NUTS and MAMS ignore, MAMS's acceptance 0.9,
/// as a config gets them) and
/// the given size and seed.
inline hmc::sampler::Settings defaults(hmc::Algorithm algorithm, std::int64_t particles, int warmup, int draws,
                                       std::uint64_t seed) {
  hmc::sampler::Settings s;
  s.algorithm = algorithm;
  if (algorithm != hmc::Algorithm::kHmc) s.adapt.trajectory = hmc::TrajectoryKind::kFixed;
  if (algorithm == hmc::Algorithm::kMams) s.adapt.target_accept = 0.9;  // as a config gets it
  s.particles = particles;
  s.warmup = warmup;
  s.draws = draws;
  s.seed = seed;
  return s;
}

/// \brief Means and variances of a model's outputs, in the order of parameter_names().
struct Reference {
  std::vector<double> mean, var;
  /// Which means and variances exist and have a usable MCSE (empty: all).
  std::vector<bool> mean_ok, var_ok;
  bool check_mean(std::size_t j) const { return mean_ok.empty() || mean_ok[j]; }
  bool check_var(std::size_t j) const { return var_ok.empty() || var_ok[j]; }
};

/// \brief Standard normal draws from a std::mt19937_64 by the Box-Muller transform (our
/// own, so that the data do not depend on the standard library's normal_distribution).
class Normals {
 public:
  explicit Normals(std::uint64_t seed) : rng_(seed) {}
  double operator()() {
    if (have_) {
      have_ = false;
      return next_;
    }
    const double u1 = uniform(), u2 = uniform();
    const double r = std::sqrt(-2.0 * std::log(u1)), a = 2.0 * 3.14159265358979323846 * u2;
    next_ = r * std::sin(a);
    have_ = true;
    return r * std::cos(a);
  }

 private:
  double uniform() { return (static_cast<double>(rng_() >> 11) + 0.5) * 0x1p-53; }  // in (0, 1)
  std::mt19937_64 rng_;
  bool have_ = false;
  double next_ = 0.0;
};

/// \brief A gradient row that discards what is written to it: log_density() runs the
/// same template as log_density_gradient(), so both return the same bits.
struct DiscardRow {
  struct Sink {
    template <class U>
    KOKKOS_INLINE_FUNCTION const Sink& operator=(const U&) const {
      return *this;
    }
  };
  KOKKOS_INLINE_FUNCTION Sink operator()(int) const { return {}; }
};

/// \brief A model's entry points over its one template M::eval<T>(q, grad): log_density
/// (the gradient discarded, so both return the same bits), log_density_gradient, and the
/// lane path's log_density_gradient_t.
template <class M>
struct EntryPoints {
  KOKKOS_INLINE_FUNCTION double log_density(const Row& q) const {
    return self().template eval<double>(q, DiscardRow{});
  }
  KOKKOS_INLINE_FUNCTION double log_density_gradient(const Row& q, const Row& grad) const {
    return self().template eval<double>(q, grad);
  }
  template <class T, class R>
  KOKKOS_INLINE_FUNCTION T log_density_gradient_t(const R& q, const R& grad) const {
    return self().template eval<T>(q, grad);
  }

 protected:
  KOKKOS_INLINE_FUNCTION const M& self() const { return static_cast<const M&>(*this); }
};

/// \brief EntryPoints of a model whose parameters are its coordinates.
template <class M>
struct Unconstrained : EntryPoints<M> {
  KOKKOS_INLINE_FUNCTION void constrain(const Row& q, const Row& out) const {
    for (int j = 0; j < this->self().dim(); ++j) out(j) = q(j);
  }
};

// ---- heavy_tails ------------------------------------------------------------------

/// \brief What HeavyTails and HeavyTailsFlat share: G groups of K non-centred coefficients
/// θ_gk = τ_g z_gk under a half-Student-t(ν, 0, s) prior on each scale τ_g, sampled as
/// u_g = log τ_g and z_gk (group g's block of q starts at g (1 + K)); the outputs tau[g],
/// log_tau[g], theta[g,k]; the model's entry points, over M::eval<T>(q, grad).
template <class M>
struct ScaleGroups : EntryPoints<M> {
  int groups = 0, per_group = 0;  ///< G, K
  double nu = 1.0, scale = 1.0;   ///< half-Student-t(ν, 0, s) on every τ_g
  double log_nu_s2 = 0.0;         ///< log(ν s²)

  void set_scales(int g, int k, double nu_, double s) {
    groups = g;
    per_group = k;
    nu = nu_;
    scale = s;
    log_nu_s2 = std::log(nu_ * s * s);
  }
  KOKKOS_INLINE_FUNCTION int dim() const { return groups * (1 + per_group); }
  int num_params() const { return groups * (2 + per_group); }
  std::vector<std::string> parameter_names() const {
    std::vector<std::string> names;
    for (int g = 0; g < groups; ++g) names.push_back("tau[" + std::to_string(g + 1) + "]");
    for (int g = 0; g < groups; ++g) names.push_back("log_tau[" + std::to_string(g + 1) + "]");
    for (int g = 0; g < groups; ++g)
      for (int k = 0; k < per_group; ++k)
        names.push_back("theta[" + std::to_string(g + 1) + "," + std::to_string(k + 1) + "]");
    return names;
  }
  /// log half-t(τ) + log-Jacobian u at u = log τ: (ν+1)/2 log σ(-w) + u with w = 2u - log(ν s²)
  /// (= -(ν+1)/2 log(1 + τ²/(ν s²)) + u); its derivative in u goes to `du`.
  template <class T>
  KOKKOS_INLINE_FUNCTION T scale_prior(const T& u, T& du) const {
    const T w = 2.0 * u - log_nu_s2;
    du = 1.0 - (nu + 1.0) * math::sigmoid(w);
    return 0.5 * (nu + 1.0) * math::log_sigmoid(-w) + u;
  }

  KOKKOS_INLINE_FUNCTION void constrain(const Row& q, const Row& out) const {
    for (int g = 0; g < groups; ++g) {
      const int o = g * (1 + per_group);
      const double tau = math::exp(q(o));
      out(g) = tau;
      out(groups + g) = q(o);
      for (int k = 0; k < per_group; ++k) out(2 * groups + g * per_group + k) = tau * q(o + 1 + k);
    }
  }
};

struct HeavyTails : ScaleGroups<HeavyTails> {
  VectorView y, sigma;  ///< G x K, group-major

  /// q = (u_1, z_1,1..z_1,K, u_2, z_2,1.., ...): group g's block starts at g (1 + K).
  template <class T, class Q, class G>
  KOKKOS_INLINE_FUNCTION T eval(const Q& q, const G& grad) const {
    T lp = 0.0;
    for (int g = 0; g < groups; ++g) {
      const int o = g * (1 + per_group);
      const T u = q(o);
      const T tau = math::exp(u);
      T du;
      lp += scale_prior(u, du);
      for (int k = 0; k < per_group; ++k) {
        const T z = q(o + 1 + k);
        const double inv_s2 = 1.0 / (sigma(g * per_group + k) * sigma(g * per_group + k));
        const T e = y(g * per_group + k) - tau * z;
        lp -= 0.5 * (z * z + inv_s2 * (e * e));
        const T te = inv_s2 * (tau * e);
        du += z * te;
        grad(o + 1 + k) = te - z;
      }
      grad(o) = du;
    }
    return lp;
  }

  /// Host copies of the data (the reference and the tests' direct formula).
  std::vector<double> host_y() const { return host(y); }
  std::vector<double> host_sigma() const { return host(sigma); }
  static std::vector<double> host(const VectorView& v) {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
    return std::vector<double>(h.data(), h.data() + h.extent(0));
  }

  /// Log marginal density of u = log τ for one group, θ integrated out (constants dropped).
  double log_marginal_u(int g, double u, const std::vector<double>& ys, const std::vector<double>& ss) const {
    const double tau2 = std::exp(2.0 * u);
    double lp = -0.5 * (nu + 1.0) * std::log1p(tau2 / (nu * scale * scale)) + u;
    for (int k = 0; k < per_group; ++k) {
      const double yk = ys[g * per_group + k], v = ss[g * per_group + k] * ss[g * per_group + k] + tau2;
      lp -= 0.5 * (std::log(v) + yk * yk / v);
    }
    return lp;
  }

  /// Means and variances of τ_g and θ_gk by quadrature over u_g: the trapezoid rule with
  /// step 5e-4 on (-150, 100), where the weights vanish (below e^-60 of the largest)
  /// before either end (the marginal falls as e^u below and as e^-(K+ν)u above).
  ///
  /// τ's density falls as τ^-(K+ν+1), so τ has moments below K + ν only; its variance is
  /// checked where the eighth moment exists (K + ν > 8), as the variance's MCSE needs
  /// well-behaved fourth moments. log τ and θ (whose tails are Gaussian) are always checked.
  Reference reference() const {
    const auto ys = host_y(), ss = host_sigma();
    Reference r;
    r.mean.assign(num_params(), 0.0);
    r.var.assign(num_params(), 0.0);
    r.mean_ok.assign(num_params(), true);
    r.var_ok.assign(num_params(), true);
    for (int g = 0; g < groups; ++g) {
      const double lo = -150.0, hi = 100.0, h = 5e-4;
      const int n = static_cast<int>((hi - lo) / h) + 1;
      double top = -HUGE_VAL;
      for (int i = 0; i < n; ++i) top = std::max(top, log_marginal_u(g, lo + i * h, ys, ss));
      double w0 = 0.0, t1 = 0.0, t2 = 0.0, l1 = 0.0, l2 = 0.0;
      std::vector<double> m1(per_group, 0.0), m2(per_group, 0.0);
      for (int i = 0; i < n; ++i) {
        const double u = lo + i * h, lw = log_marginal_u(g, u, ys, ss) - top;
        if (lw < -60.0) continue;
        if (i == 0 || i == n - 1) throw std::runtime_error("HeavyTails::reference: grid too narrow");
        const double w = std::exp(lw);
        const double tau = std::exp(u), tau2 = tau * tau;
        w0 += w;
        t1 += w * tau;
        t2 += w * tau2;
        l1 += w * u;
        l2 += w * u * u;
        for (int k = 0; k < per_group; ++k) {
          const double s2 = ss[g * per_group + k] * ss[g * per_group + k];
          const double m = tau2 * ys[g * per_group + k] / (tau2 + s2), v = tau2 * s2 / (tau2 + s2);
          m1[k] += w * m;
          m2[k] += w * (v + m * m);
        }
      }
      r.mean[g] = t1 / w0;
      r.var[g] = t2 / w0 - r.mean[g] * r.mean[g];
      r.mean_ok[g] = per_group + nu > 2.0;
      r.var_ok[g] = per_group + nu > 8.0;
      r.mean[groups + g] = l1 / w0;
      r.var[groups + g] = l2 / w0 - r.mean[groups + g] * r.mean[groups + g];
      for (int k = 0; k < per_group; ++k) {
        const int j = 2 * groups + g * per_group + k;
        r.mean[j] = m1[k] / w0;
        r.var[j] = m2[k] / w0 - r.mean[j] * r.mean[j];
      }
    }
    return r;
  }
};

/// \brief A HeavyTails variant: G groups of K observations y_gk = magnitude · n_gk
/// (n_gk standard normal, from `seed`), all with standard error `sigma`.
struct HeavyTailsSpec {
  int groups = 1, per_group = 4;
  double magnitude = 40.0, sigma = 4.0, nu = 1.0, scale = 1.0;
  std::uint64_t seed = 20270101;
};

inline HeavyTails make_heavy_tails(const HeavyTailsSpec& spec) {
  Normals normal(spec.seed);
  std::vector<double> ys, ss;
  for (int g = 0; g < spec.groups; ++g)
    for (int k = 0; k < spec.per_group; ++k) {
      ys.push_back(spec.magnitude * normal());
      ss.push_back(spec.sigma);
    }
  HeavyTails m;
  m.set_scales(spec.groups, spec.per_group, spec.nu, spec.scale);
  m.y = to_device_view("hard::heavy_tails::y", ys);
  m.sigma = to_device_view("hard::heavy_tails::sigma", ss);
  return m;
}

// ---- heavy_tails, flat likelihood ---------------------------------------------------

/// \brief The flat-tail variant of HeavyTails: the same non-centred scales
/// (θ_gk = τ_g z_gk, z ~ N(0, 1), τ_g ~ half-Student-t(ν, 0, s), sampled as u_g = log τ_g
/// and z_gk), but each θ_gk is seen only through a binary outcome that says it exceeds a
/// threshold: P(y_gk = 1 | θ) = logistic((θ - c) / σ), and every y_gk = 1. The likelihood
/// pushes each θ above c (so τ above ~c, away from the init box) and is flat beyond it:
/// for τ ≫ c, any z_gk > 0 fits, the log density falls only as -ν u_g (the prior's
/// tail), and, unlike HeavyTails, the region is wide, not a ridge: the posterior has the
/// prior's heavy tail (E τ is infinite for ν = 1, Var τ for ν ≤ 2; log τ has every moment).
/// Outputs tau[g], log_tau[g], theta[g,k]. Reference: for each u_g, the z integrals
/// ∫ N(z) (τz)^m logistic((τz - c)/σ) dz, m = 0, 1, 2, split into the step 1[τz > c]
/// (closed form) and the logistic's smooth correction around the step (Simpson), then a
/// 1-D quadrature over u_g.
struct HeavyTailsFlat : ScaleGroups<HeavyTailsFlat> {
  double threshold = 40.0, sigma = 1.0;  ///< c, σ

  template <class T, class Q, class G>
  KOKKOS_INLINE_FUNCTION T eval(const Q& q, const G& grad) const {
    T lp = 0.0;
    const double inv_sigma = 1.0 / sigma;
    for (int g = 0; g < groups; ++g) {
      const int o = g * (1 + per_group);
      const T u = q(o);
      const T tau = math::exp(u);
      T du;
      lp += scale_prior(u, du);
      for (int k = 0; k < per_group; ++k) {
        const T z = q(o + 1 + k);
        const T x = inv_sigma * (tau * z - threshold);
        lp += math::log_sigmoid(x) - 0.5 * (z * z);
        const T r = inv_sigma * math::sigmoid(-x);  // d log σ(x) / d(τz)
        du += (tau * z) * r;
        grad(o + 1 + k) = tau * r - z;
      }
      grad(o) = du;
    }
    return lp;
  }

  /// ∫ N(z) (τz)^m logistic((τz - c)/σ) dz for m = 0, 1, 2, on the host.
  void z_moments(double tau, double out[3]) const {
    const double c = threshold, inv_sqrt_2pi = 0.3989422804014327;
    const auto logistic = [](double x) {
      return x >= 0 ? 1.0 / (1.0 + std::exp(-x)) : std::exp(x) / (1.0 + std::exp(x));
    };
    out[0] = out[1] = out[2] = 0.0;
    if (sigma / tau >= 0.05) {  // a smooth integrand on the z scale: Simpson on (-12, 12)
      const int n = 4000;
      const double lo = -12.0, h = 24.0 / n;
      for (int i = 0; i <= n; ++i) {
        const double z = lo + i * h, wt = (i == 0 || i == n) ? 1.0 : (i % 2 ? 4.0 : 2.0);
        const double f = wt * inv_sqrt_2pi * std::exp(-0.5 * z * z) * logistic((tau * z - c) / sigma);
        out[0] += f;
        out[1] += f * tau * z;
        out[2] += f * tau * z * tau * z;
      }
      for (int m = 0; m < 3; ++m) out[m] *= h / 3.0;
      return;
    }
    // The step 1[τz > c], a = c/τ: Φ(-a), τ φ(a), τ² (a φ(a) + Φ(-a)).
    const double a = c / tau, phi = inv_sqrt_2pi * std::exp(-0.5 * a * a), tail = 0.5 * std::erfc(a / std::sqrt(2.0));
    out[0] = tail;
    out[1] = tau * phi;
    out[2] = tau * tau * (a * phi + tail);
    // The logistic minus the step, in θ - c = w: ∫ (w + c)^m φ((w + c)/τ)/τ (logistic(w/σ) - 1[w > 0]) dw,
    // Simpson on each side of the jump, |w| < 40σ (beyond, e^-40).
    const int n = 800;
    const double half = 40.0 * sigma, h = half / n;
    for (int side = 0; side < 2; ++side)
      for (int i = 0; i <= n; ++i) {
        const double w = side == 0 ? -half + i * h : i * h, wt = (i == 0 || i == n) ? 1.0 : (i % 2 ? 4.0 : 2.0);
        const double corr = side == 0 ? logistic(w / sigma) : -logistic(-w / sigma);
        const double t = w + c, zz = t / tau;
        const double f = wt * h / 3.0 * inv_sqrt_2pi * std::exp(-0.5 * zz * zz) / tau * corr;
        out[0] += f;
        out[1] += f * t;
        out[2] += f * t * t;
      }
  }

  /// Means and variances of tau, log_tau and theta by quadrature over u (trapezoid,
  /// step 0.01 on (-80, 150)); groups are identical, so one integral serves all.
  /// `finite` says which moments exist (τ and θ have the prior's tail τ^-(ν+1)).
  Reference reference() const {
    const double lo = -80.0, hi = 150.0, h = 0.01;
    const int n = static_cast<int>((hi - lo) / h) + 1;
    std::vector<double> lw(n), e1(n), e2(n);
    double top = -HUGE_VAL;
    for (int i = 0; i < n; ++i) {
      const double u = lo + i * h, tau = std::exp(u);
      double m[3];
      z_moments(tau, m);
      lw[i] = -0.5 * (nu + 1.0) * std::log1p(tau * tau / (nu * scale * scale)) + u + per_group * std::log(m[0]);
      e1[i] = m[1] / m[0];
      e2[i] = m[2] / m[0];
      if (std::isfinite(lw[i])) top = std::max(top, lw[i]);
    }
    if (!(lw[0] - top < -60.0) || !(lw[n - 1] - top < -60.0) || std::isnan(lw[0]) || std::isnan(lw[n - 1])) {
      throw std::runtime_error("HeavyTailsFlat::reference: grid too narrow");
    }
    double w0 = 0, t1 = 0, t2 = 0, l1 = 0, l2 = 0, th1 = 0, th2 = 0;
    for (int i = 0; i < n; ++i) {
      if (!(lw[i] - top > -60.0)) continue;
      const double u = lo + i * h, w = std::exp(lw[i] - top), tau = std::exp(u);
      w0 += w;
      t1 += w * tau;
      t2 += w * tau * tau;
      l1 += w * u;
      l2 += w * u * u;
      th1 += w * e1[i];
      th2 += w * e2[i];
    }
    Reference r;
    r.mean.assign(num_params(), 0.0);
    r.var.assign(num_params(), 0.0);
    r.mean_ok.assign(num_params(), nu > 2.0);  // the mean's MCSE needs a variance
    r.var_ok.assign(num_params(), nu > 4.0);   // the variance's MCSE needs a fourth moment
    for (int g = 0; g < groups; ++g) {
      r.mean[g] = t1 / w0;
      r.var[g] = t2 / w0 - r.mean[g] * r.mean[g];
      r.mean[groups + g] = l1 / w0;
      r.var[groups + g] = l2 / w0 - r.mean[groups + g] * r.mean[groups + g];
      r.mean_ok[groups + g] = r.var_ok[groups + g] = true;
      for (int k = 0; k < per_group; ++k) {
        const int j = 2 * groups + g * per_group + k;
        r.mean[j] = th1 / w0;
        r.var[j] = th2 / w0 - r.mean[j] * r.mean[j];
      }
    }
    return r;
  }
};

struct HeavyTailsFlatSpec {
  int groups = 2, per_group = 4;
  double threshold = 40.0, sigma = 1.0, nu = 3.0, scale = 1.0;
};

inline HeavyTailsFlat make_heavy_tails_flat(const HeavyTailsFlatSpec& spec) {
  HeavyTailsFlat m;
  m.set_scales(spec.groups, spec.per_group, spec.nu, spec.scale);
  m.threshold = spec.threshold;
  m.sigma = spec.sigma;
  return m;
}

// ---- correlated_regression --------------------------------------------------------

struct CorrelatedRegression : Unconstrained<CorrelatedRegression> {
  int d = 0;
  MatrixView a;  ///< XᵀX / σ² + I / s²: the posterior precision
  VectorView b;  ///< Xᵀy / σ²

  KOKKOS_INLINE_FUNCTION int dim() const { return d; }
  int num_params() const { return d; }
  std::vector<std::string> parameter_names() const {
    std::vector<std::string> names;
    for (int j = 0; j < d; ++j) names.push_back("beta[" + std::to_string(j + 1) + "]");
    return names;
  }

  /// log p = bᵀβ - ½ βᵀAβ (constants dropped); ∇ = b - Aβ.
  template <class T, class Q, class G>
  KOKKOS_INLINE_FUNCTION T eval(const Q& q, const G& grad) const {
    T lp = 0.0;
    for (int i = 0; i < d; ++i) {
      T ai = 0.0;
      for (int j = 0; j < d; ++j) ai += a(i, j) * q(j);
      const T gi = b(i) - ai;
      grad(i) = gi;
      lp += q(i) * (b(i) - 0.5 * ai);
    }
    return lp;
  }

  std::vector<std::vector<double>> host_a() const {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a);
    std::vector<std::vector<double>> m(d, std::vector<double>(d));
    for (int i = 0; i < d; ++i)
      for (int j = 0; j < d; ++j) m[i][j] = h(i, j);
    return m;
  }
  std::vector<double> host_b() const {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b);
    return std::vector<double>(h.data(), h.data() + d);
  }

  /// The exact posterior N(A⁻¹b, A⁻¹): A = LLᵀ, mean by two triangular solves,
  /// diag(A⁻¹)_j = Σ_k (L⁻¹)_kj².
  Reference reference() const {
    const auto m = host_a();
    const auto rhs = host_b();
    std::vector<std::vector<double>> l(d, std::vector<double>(d, 0.0));
    for (int j = 0; j < d; ++j) {
      double s = m[j][j];
      for (int k = 0; k < j; ++k) s -= l[j][k] * l[j][k];
      if (!(s > 0.0)) throw std::runtime_error("CorrelatedRegression: precision not positive definite");
      l[j][j] = std::sqrt(s);
      for (int i = j + 1; i < d; ++i) {
        double t = m[i][j];
        for (int k = 0; k < j; ++k) t -= l[i][k] * l[j][k];
        l[i][j] = t / l[j][j];
      }
    }
    std::vector<double> w(d), mean(d);
    for (int i = 0; i < d; ++i) {  // L w = b
      double t = rhs[i];
      for (int k = 0; k < i; ++k) t -= l[i][k] * w[k];
      w[i] = t / l[i][i];
    }
    for (int i = d - 1; i >= 0; --i) {  // Lᵀ mean = w
      double t = w[i];
      for (int k = i + 1; k < d; ++k) t -= l[k][i] * mean[k];
      mean[i] = t / l[i][i];
    }
    Reference r;
    r.mean = mean;
    r.var.assign(d, 0.0);
    for (int c = 0; c < d; ++c) {  // column c of L⁻¹: L x = e_c
      std::vector<double> x(d, 0.0);
      for (int i = c; i < d; ++i) {
        double t = i == c ? 1.0 : 0.0;
        for (int k = c; k < i; ++k) t -= l[i][k] * x[k];
        x[i] = t / l[i][i];
      }
      for (int i = c; i < d; ++i) r.var[c] += x[i] * x[i];  // (L⁻¹)_ic² summed over i: diag(L⁻ᵀL⁻¹)
    }
    return r;
  }
};

/// \brief n rows of d predictors x_ij = m + s_j (√ρ c_i + √(1 - ρ) e_ij) (c_i, e_ij
/// standard normal: pairwise column correlation ρ; column mean m = `column_mean`, sds s_j
/// log-spaced from 10^-spread to 10^spread), with a column of ones first when
/// `intercept` (then d - 1 predictors); β_true = (1, 0, -1, 1, 0, -1, ...) · beta_scale / s_j,
/// the intercept's `intercept_value`; y_i = x_iᵀβ_true + σ ε_i.
struct CorrelatedRegressionSpec {
  int d = 25, n = 5000;
  double rho = 0.99, sigma = 1.0, prior_scale = 10.0;
  bool intercept = false;
  double column_mean = 0.0, spread = 0.0, beta_scale = 1.0, intercept_value = 0.0;
  std::uint64_t seed = 20270202;
};

/// Calls f(x_i, y_i) for each of the spec's n rows, in order (x_i: d values).
template <class F>
void correlated_rows(const CorrelatedRegressionSpec& spec, F&& f) {
  const int d = spec.d, o = spec.intercept ? 1 : 0, p = d - o;
  Normals normal(spec.seed);
  std::vector<double> x(d), sd(p), beta(d);
  if (spec.intercept) beta[0] = spec.intercept_value;
  for (int j = 0; j < p; ++j) {
    sd[j] = p > 1 ? std::pow(10.0, spec.spread * (2.0 * j / (p - 1) - 1.0)) : 1.0;
    beta[o + j] = (1.0 - (j % 3)) * spec.beta_scale / sd[j];
  }
  const double sr = std::sqrt(spec.rho), se = std::sqrt(1.0 - spec.rho);
  for (int i = 0; i < spec.n; ++i) {
    const double c = normal();
    if (spec.intercept) x[0] = 1.0;
    for (int j = 0; j < p; ++j) x[o + j] = spec.column_mean + sd[j] * (sr * c + se * normal());
    double eta = 0.0;
    for (int j = 0; j < d; ++j) eta += x[j] * beta[j];
    f(static_cast<const std::vector<double>&>(x), eta + spec.sigma * normal());
  }
}

inline CorrelatedRegression make_correlated_regression(const CorrelatedRegressionSpec& spec) {
  const int d = spec.d;
  std::vector<double> xtx(d * d, 0.0), xty(d, 0.0);
  correlated_rows(spec, [&](const std::vector<double>& x, double yi) {
    for (int j = 0; j < d; ++j) {
      xty[j] += x[j] * yi;
      for (int k = 0; k < d; ++k) xtx[j * d + k] += x[j] * x[k];
    }
  });
  CorrelatedRegression m;
  m.d = d;
  m.a = MatrixView("hard::correlated_regression::a", d, d);
  auto h = Kokkos::create_mirror_view(m.a);
  const double inv_s2 = 1.0 / (spec.sigma * spec.sigma), inv_p2 = 1.0 / (spec.prior_scale * spec.prior_scale);
  std::vector<double> bv(d);
  for (int j = 0; j < d; ++j) {
    for (int k = 0; k < d; ++k) h(j, k) = inv_s2 * xtx[j * d + k] + (j == k ? inv_p2 : 0.0);
    bv[j] = inv_s2 * xty[j];
  }
  Kokkos::deep_copy(m.a, h);
  m.b = to_device_view("hard::correlated_regression::b", bv);
  return m;
}

// ---- funnel -----------------------------------------------------------------------

struct Funnel : Unconstrained<Funnel> {
  int k = 6;              ///< K, the x's
  double sigma_v = 1.25;  ///< sd of v

  KOKKOS_INLINE_FUNCTION int dim() const { return 1 + k; }
  int num_params() const { return dim(); }
  std::vector<std::string> parameter_names() const {
    std::vector<std::string> names = {"v"};
    for (int j = 0; j < k; ++j) names.push_back("x[" + std::to_string(j + 1) + "]");
    return names;
  }
  /// log p = -v² / (2 σ_v²) - Σ_k (x_k² e^{-v} + v) / 2.
  template <class T, class Q, class G>
  KOKKOS_INLINE_FUNCTION T eval(const Q& q, const G& grad) const {
    const T v = q(0);
    const T ev = math::exp(-v);
    const double inv_s2 = 1.0 / (sigma_v * sigma_v);
    T ss = 0.0;
    for (int j = 0; j < k; ++j) {
      const T x = q(1 + j);
      ss += x * x;
      grad(1 + j) = -(ev * x);
    }
    grad(0) = 0.5 * (ev * ss) - inv_s2 * v - 0.5 * k;
    return -0.5 * (inv_s2 * (v * v) + ev * ss + static_cast<double>(k) * v);
  }
  Reference reference() const {
    Reference r;
    r.mean.assign(dim(), 0.0);
    r.var.assign(dim(), std::exp(0.5 * sigma_v * sigma_v));
    r.var[0] = sigma_v * sigma_v;
    return r;
  }
};

// ---- bimodal ----------------------------------------------------------------------

struct Bimodal : Unconstrained<Bimodal> {
  int d = 3;
  double offset = 4.0;  ///< a: the modes are ±(a, ..., a)

  KOKKOS_INLINE_FUNCTION int dim() const { return d; }
  int num_params() const { return d; }
  std::vector<std::string> parameter_names() const {
    std::vector<std::string> names;
    for (int j = 0; j < d; ++j) names.push_back("x[" + std::to_string(j + 1) + "]");
    return names;
  }
  /// log p = -|x|²/2 + log cosh(mᵀx) (constants dropped), log cosh s = |s| + log1p(e^{-2|s|}) - log 2;
  /// ∇ = -x + m tanh(mᵀx), tanh s = 1 - 2 / (1 + e^{2s}) (no branch, no overflow to NaN).
  template <class T, class Q, class G>
  KOKKOS_INLINE_FUNCTION T eval(const Q& q, const G& grad) const {
    T s = 0.0, xx = 0.0;
    for (int j = 0; j < d; ++j) {
      const T x = q(j);
      s += offset * x;
      xx += x * x;
    }
    const T as = math::fabs(s);
    const T th = 1.0 - 2.0 / (1.0 + math::exp(2.0 * s));
    for (int j = 0; j < d; ++j) {
      const T x = q(j);
      grad(j) = offset * th - x;
    }
    return as + math::log1p(math::exp(-2.0 * as)) - 0.5 * xx;
  }
  Reference reference() const {
    Reference r;
    r.mean.assign(d, 0.0);
    r.var.assign(d, 1.0 + offset * offset);
    return r;
  }
};

}  // namespace hmc::test::hard
