#pragma once
/// \file
/// \brief The warmup's adapters that every kernel shares, each with its state and that
/// state's checkpoint form: the step size (dual averaging) and the metric (Stan's
/// windows, estimated from the healthy particles of the ensemble). The warmup
/// (warmup.hpp) feeds them the ensemble's reproducible sums; neither knows the kernel.

#include "hmc/core/ensemble_sum.hpp"
#include "hmc/core/types.hpp"
#include "hmc/sampler/adaptation.hpp"
#include "hmc/sampler/metric.hpp"
#include "hmc/sampler/settings.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace hmc::sampler {

/// \brief The step size in use: dual averaging during warmup, its average after.
class StepSizeAdapter {
 public:
  StepSizeAdapter(double initial, const AdaptSettings& a)
      : dual_(a.target_accept, a.gamma, a.t0, a.kappa), step_size_(initial) {
    dual_.restart(initial);
  }
  double step_size() const { return step_size_; }
  /// Feeds the ensemble-mean acceptance statistic of a warmup iteration.
  void update(double mean_accept) { step_size_ = dual_.update(mean_accept); }
  /// Starts the averaging over around the current step size (after a metric window).
  void restart() { dual_.restart(step_size_); }
  /// The end of warmup: the averaged step size from here on.
  void freeze() { step_size_ = dual_.final_step_size(); }

  void save(SavedState& out) const {
    out.put("step_size", step_size_);
    dual_.save(out, "dual_averaging");
  }
  void load(const SavedState& in) {
    step_size_ = in.scalar("step_size");
    dual_.load(in, "dual_averaging");
  }

 private:
  DualAveraging dual_;
  double step_size_;
};

/// \brief The metric Σ: unit until the first of Stan's windows ends, then the
/// regularised variances (diag: of the window's draws of the healthy particles) or the
/// covariance of the healthy particles at the window's end (dense).
class MetricAdapter {
  using Policy = Kokkos::RangePolicy<ExecSpace>;

 public:
  MetricAdapter(int n, int dim, const Settings& s)
      : n_(n),
        dim_(dim),
        particles_(s.particles),
        kind_(s.adapt.metric),
        windows_(s.warmup, s.adapt),
        active_(s.adapt.enabled && s.warmup > 0 && kind_ != MetricKind::kUnit && windows_.first() > 0),
        dense_(kind_ == MetricKind::kDense),
        window_sums_("hmc::window_sums", active_ && !dense_ ? n : 0, 2 * dim + 1),
        metric_(unit_metric(dim)),
        inv_metric_(dim, 1.0) {}

  const Metric& metric() const { return metric_; }
  /// Whether warmup estimates a metric (diag or dense, with a window to estimate it in).
  bool adapts() const { return active_; }
  MetricKind kind() const { return current_; }
  const std::vector<double>& inv_metric() const { return inv_metric_; }

  /// After warmup iteration `it` (positions q): adds the draws to the window (diag).
  void accumulate(int it, const StateView& q) {
    if (active_ && !dense_ && windows_.in_window(it)) add(q);
  }
  /// Whether a metric window ends at warmup iteration `it`.
  bool window_end(int it) const { return active_ && windows_.window_end(it); }
  /// At a window's end: the estimate from the particles of weight 1 (`weights`), and a
  /// new window. The previous metric stays where too few particles give no positive
  /// definite estimate.
  void estimate(const StateView& q, const ParticleView& weights, ReproducibleSums& sums) {
    const auto estimate = dense_ ? covariance(q, weights, sums) : window_variances(weights, sums);
    try {
      metric_ = dense_ ? dense_metric(estimate, dim_) : diagonal_metric(estimate);
      inv_metric_ = estimate;
      current_ = kind_;
    } catch (const std::runtime_error&) {
      // Too few particles for a positive definite covariance: keep the previous metric.
    }
    if (!dense_) Kokkos::deep_copy(window_sums_, 0.0);
  }

  /// Per-particle state (diag: the window sums of q_j and q_j² and the iterations
  /// summed), part of the checkpoint rows.
  int row_columns() const { return active_ && !dense_ ? 2 * dim_ + 1 : 0; }
  const StateView& rows() const { return window_sums_; }

  void save(SavedState& out) const {
    out.put("metric_kind", static_cast<double>(current_));
    out.put("inv_metric", inv_metric_);
  }
  void load(const SavedState& in) {
    current_ = static_cast<MetricKind>(static_cast<int>(in.scalar("metric_kind")));
    inv_metric_ = in.get("inv_metric");
    if (current_ == MetricKind::kDense) {
      metric_ = dense_metric(inv_metric_, dim_);
    } else if (current_ == MetricKind::kDiag) {
      metric_ = diagonal_metric(inv_metric_);
    } else {
      metric_ = unit_metric(dim_);
    }
  }

  // The member functions below launch kernels with KOKKOS_LAMBDA, which CUDA allows only
  // in public member functions; they are not part of the interface.
  /// Adds q_j and q_j² of every particle to its window sums.
  void add(const StateView& q) const {
    const auto sums = window_sums_;
    const int d = dim_;
    Kokkos::parallel_for(
        "hmc::window_accumulate", Policy(0, n_), KOKKOS_LAMBDA(const int i) {
          for (int j = 0; j < d; ++j) {
            sums(i, j) += q(i, j);
            sums(i, d + j) += q(i, j) * q(i, j);
          }
          sums(i, 2 * d) += 1.0;
        });
  }

  /// Forgets the window sums of the particles with restarted(i) != 0 (their earlier
  /// positions are not the ensemble's).
  void forget(const ParticleView& restarted) const {
    if (!active_ || dense_) return;
    const auto sums = window_sums_;
    const int cols = 2 * dim_ + 1;
    Kokkos::parallel_for(
        "hmc::window_forget", Policy(0, n_), KOKKOS_LAMBDA(const int i) {
          if (restarted(i) != 0.0)
            for (int c = 0; c < cols; ++c) sums(i, c) = 0.0;
        });
  }

  /// Regularised variances of the window's draws of the particles of weight 1.
  std::vector<double> window_variances(const ParticleView& weights, ReproducibleSums& sums) const {
    const int cols = 2 * dim_ + 1;
    StateView weighted("hmc::window_weighted", n_, cols);
    const auto ws = window_sums_;
    Kokkos::parallel_for(
        "hmc::window_weighted", Policy(0, n_), KOKKOS_LAMBDA(const int i) {
          for (int c = 0; c < cols; ++c) weighted(i, c) = weights(i) * ws(i, c);
        });
    const auto total = sums(weighted, n_, particles_);
    const double n = total[2 * dim_];
    std::vector<double> var(dim_);
    for (int j = 0; j < dim_; ++j) {
      const double mean = n > 0 ? total[j] / n : 0.0;
      const double v = n > 1 ? (total[dim_ + j] - n * mean * mean) / (n - 1) : 1.0;
      var[j] = regularise(v > 0 ? v : 0.0, n, true);
    }
    return var;
  }

  /// Regularised covariance of the current positions of the particles of weight 1 (dense metric).
  std::vector<double> covariance(const StateView& q, const ParticleView& weights, ReproducibleSums& sums) const {
    const int d = dim_;
    const int cols = d + d * (d + 1) / 2 + 1;
    StateView products("hmc::covariance_terms", n_, cols);
    Kokkos::parallel_for(
        "hmc::covariance_terms", Policy(0, n_), KOKKOS_LAMBDA(const int i) {
          const double w = weights(i);
          int c = d;
          for (int a = 0; a < d; ++a) {
            products(i, a) = w * q(i, a);
            for (int b = 0; b <= a; ++b) products(i, c++) = w * q(i, a) * q(i, b);
          }
          products(i, c) = w;
        });
    const auto total = sums(products, n_, particles_);
    const double n = total[static_cast<std::size_t>(cols - 1)];
    std::vector<double> cov(d * d);
    int c = d;
    for (int a = 0; a < d; ++a)
      for (int b = 0; b <= a; ++b) {
        const double v = n > 1 ? (total[c++] - n * (total[a] / n) * (total[b] / n)) / (n - 1) : (a == b ? 1.0 : 0.0);
        cov[a * d + b] = cov[b * d + a] = regularise(v, n, a == b);
      }
    return cov;
  }

 private:
  int n_, dim_;
  std::int64_t particles_;
  MetricKind kind_;                         ///< the one to adapt
  MetricKind current_ = MetricKind::kUnit;  ///< the one in use
  WindowSchedule windows_;
  bool active_, dense_;
  StateView window_sums_;  ///< per particle: sums of q_j and q_j² over the current window, and its iterations (diag)
  Metric metric_;
  std::vector<double> inv_metric_;
};

}  // namespace hmc::sampler
