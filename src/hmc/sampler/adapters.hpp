#pragma once
/// \file
/// \brief The warmup's adapters, each with its state and that state's checkpoint form:
/// the step size (dual averaging), the metric (Stan's windows, estimated from the whole
/// ensemble) and the ChEES path length. The loop (run.hpp) feeds them the ensemble's
/// reproducible sums; none of them knows the kernel.

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

/// \brief The ChEES path length: Adam on log T during warmup, the geometric mean of
/// its second half after.
///
/// Adam follows the estimate of d log ChEES / d log T, 4 Σ a·t·δ·(q' - q̄)ᵀ W Σ p' / Σ a·δ²
/// (sums over the ensemble, a the acceptance probabilities; hmc_kernel.hpp): a ratio, so
/// its scale does not change with the posterior's or the metric's, and one early gradient
/// of another scale cannot hold Adam's steps small for the rest of warmup. When the first
/// metric is estimated the length starts over at 1 (restart()): the positions are then
/// whitened, and the scale of the unit metric's length means nothing to them.
class ChEESAdapter {
 public:
  ChEESAdapter(double initial_length, const AdaptSettings& a, int warmup)
      : chees_(initial_length, a.chees_learning_rate), length_(initial_length), warmup_(warmup) {}
  /// The length in use.
  double length() const { return length_; }
  /// Before a warmup iteration: the current Adam iterate.
  void begin_iteration() { length_ = chees_.length(); }
  /// After warmup iteration `it`: the ensemble sums Σ a · gradient term and Σ a · δ²,
  /// the bounds [step size, step size × max_leapfrog].
  void update(int it, double weighted_gradient, double weighted_spread, double min_length, double max_length) {
    const double gradient = weighted_spread > 0.0 ? 4.0 * weighted_gradient / weighted_spread : 0.0;
    chees_.update(gradient, min_length, max_length);
    if (it > warmup_ - std::max(1, warmup_ / 2)) {
      log_length_sum_ += std::log(chees_.length());
      ++log_length_count_;
    }
  }
  /// The Adam iterate (finite and positive while the adaptation is sound).
  double current() const { return chees_.length(); }
  /// Starts Adam over at length `t` (its moment estimate too).
  void restart(double t) { chees_.restore({std::log(t), 0.0, 0}); }
  void freeze() {
    if (log_length_count_ > 0) length_ = std::exp(log_length_sum_ / log_length_count_);
  }

  void save(SavedState& out) const {
    chees_.save(out, "chees");
    out.put("chees_length", {length_, log_length_sum_, static_cast<double>(log_length_count_)});
  }
  void load(const SavedState& in) {
    chees_.load(in, "chees");
    const auto& v = in.get("chees_length");
    length_ = v.at(0);
    log_length_sum_ = v.at(1);
    log_length_count_ = static_cast<int>(v.at(2));
  }

 private:
  ChEES chees_;
  double length_;
  int warmup_;
  double log_length_sum_ = 0.0;
  int log_length_count_ = 0;
};

/// \brief The metric Σ: unit until the first of Stan's windows ends, then the
/// regularised variances (diag: of the window's draws of all particles) or the
/// covariance of the ensemble at the window's end (dense).
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
        window_sums_("hmc::window_sums", active_ && !dense_ ? n : 0, 2 * dim),
        metric_(unit_metric(dim)),
        inv_metric_(dim, 1.0) {}

  const Metric& metric() const { return metric_; }
  /// Whether warmup estimates a metric (diag or dense, with a window to estimate it in).
  bool adapts() const { return active_; }
  MetricKind kind() const { return current_; }
  const std::vector<double>& inv_metric() const { return inv_metric_; }

  /// After warmup iteration `it` (positions q): adds the draws to the window; at its
  /// end, estimates the metric. Returns true when a window ended (the step size's
  /// averaging then starts over).
  bool update(int it, const StateView& q, ReproducibleSums& sums) {
    if (!active_ || !windows_.in_window(it)) return false;
    if (!dense_) accumulate(q);
    ++window_iterations_;
    if (!windows_.window_end(it)) return false;
    const auto estimate = dense_ ? covariance(q, sums) : window_variances(sums);
    try {
      metric_ = dense_ ? dense_metric(estimate, dim_) : diagonal_metric(estimate);
      inv_metric_ = estimate;
      current_ = kind_;
    } catch (const std::runtime_error&) {
      // Too few particles for a positive definite covariance: keep the previous metric.
    }
    if (!dense_) Kokkos::deep_copy(window_sums_, 0.0);
    window_iterations_ = 0;
    return true;
  }

  /// Per-particle state (diag: the window sums of q_j and q_j²), part of the checkpoint rows.
  int row_columns() const { return active_ && !dense_ ? 2 * dim_ : 0; }
  const StateView& rows() const { return window_sums_; }

  void save(SavedState& out) const {
    out.put("metric_kind", static_cast<double>(current_));
    out.put("inv_metric", inv_metric_);
    out.put("window_iterations", static_cast<double>(window_iterations_));
  }
  void load(const SavedState& in) {
    current_ = static_cast<MetricKind>(static_cast<int>(in.scalar("metric_kind")));
    inv_metric_ = in.get("inv_metric");
    window_iterations_ = static_cast<int>(in.scalar("window_iterations"));
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
  void accumulate(const StateView& q) const {
    const auto sums = window_sums_;
    const int d = dim_;
    Kokkos::parallel_for(
        "hmc::window_accumulate", Policy(0, n_), KOKKOS_LAMBDA(const int i) {
          for (int j = 0; j < d; ++j) {
            sums(i, j) += q(i, j);
            sums(i, d + j) += q(i, j) * q(i, j);
          }
        });
  }

  /// Regularised variances of the window's draws of all particles.
  std::vector<double> window_variances(ReproducibleSums& sums) const {
    const auto total = sums(window_sums_, n_, particles_);
    const double n = static_cast<double>(particles_) * window_iterations_;
    std::vector<double> var(dim_);
    for (int j = 0; j < dim_; ++j) {
      const double mean = total[j] / n;
      const double v = n > 1 ? (total[dim_ + j] - n * mean * mean) / (n - 1) : 1.0;
      var[j] = regularise(v > 0 ? v : 0.0, n, true);
    }
    return var;
  }

  /// Regularised covariance of the ensemble's current positions (dense metric).
  std::vector<double> covariance(const StateView& q, ReproducibleSums& sums) const {
    const int d = dim_;
    const int cols = d + d * (d + 1) / 2;
    StateView products("hmc::covariance_terms", n_, cols);
    Kokkos::parallel_for(
        "hmc::covariance_terms", Policy(0, n_), KOKKOS_LAMBDA(const int i) {
          int c = d;
          for (int a = 0; a < d; ++a) {
            products(i, a) = q(i, a);
            for (int b = 0; b <= a; ++b) products(i, c++) = q(i, a) * q(i, b);
          }
        });
    const auto total = sums(products, n_, particles_);
    const double n = static_cast<double>(particles_);
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
  StateView window_sums_;  ///< per particle: sums of q_j and q_j² over the current window (diag)
  Metric metric_;
  std::vector<double> inv_metric_;
  int window_iterations_ = 0;
};

}  // namespace hmc::sampler
