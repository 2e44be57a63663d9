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
#include "hmc/sampler/metric_estimate.hpp"
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

/// \brief The metric Σ: unit until the first of Stan's windows ends, then, from the healthy
/// particles, the regularised variances of the window's draws (diag), sqrt(Var q / Var ∇ log p)
/// of the window's draws and gradients (fisher_diag, as nutpie), the covariance of the window's
/// snapshots (dense), or the Fisher diagonal with the leading directions of the snapshots'
/// positions' and gradients' covariances (low_rank, metric_estimate.hpp), applied as one d×d
/// matrix. A snapshot is every particle's position (and gradient) at one of kSnapshots
/// iterations spread over the window (WindowSchedule::snapshot), kept per particle until the
/// window's end: particles × kSnapshots draws instead of one position per particle.
class MetricAdapter {
  using Policy = Kokkos::RangePolicy<ExecSpace>;

 public:
  /// Iterations of a window whose positions the matrix metrics (dense, low_rank) keep.
  static constexpr int kSnapshots = kMetricSnapshots;

  MetricAdapter(int n, int dim, const Settings& s)
      : n_(n),
        dim_(dim),
        particles_(s.particles),
        kind_(s.adapt.metric),
        windows_(s.warmup, s.adapt),
        active_(s.adapt.enabled && s.warmup > 0 && kind_ != MetricKind::kUnit && windows_.first() > 0),
        rank_(s.adapt.rank),
        dense_(matrix_metric(kind_)),
        fisher_(kind_ == MetricKind::kFisherDiag),
        snapshot_cols_(kind_ == MetricKind::kLowRank ? 2 * dim : dim),
        window_cols_(metric_state_columns(kind_, dim)),
        window_sums_("hmc::window_sums", active_ ? n : 0, window_cols_),
        metric_(unit_metric(dim)),
        inv_metric_(dim, 1.0) {}

  const Metric& metric() const { return metric_; }
  /// Whether warmup estimates a metric (any but unit, with a window to estimate it in).
  bool adapts() const { return active_; }
  MetricKind kind() const { return current_; }
  const std::vector<double>& inv_metric() const { return inv_metric_; }

  /// After warmup iteration `it` (positions q, gradients grad): adds the draws to the window
  /// (diag, fisher_diag), or keeps them at a snapshot iteration (dense, low_rank).
  void accumulate(int it, const StateView& q, const StateView& grad) {
    if (!active_ || !windows_.in_window(it)) return;
    if (!dense_) {
      add(q, grad);
    } else if (windows_.snapshot(it, kSnapshots)) {
      keep(q, grad);
    }
  }
  /// Whether a metric window ends at warmup iteration `it`.
  bool window_end(int it) const { return active_ && windows_.window_end(it); }
  /// At a window's end (after accumulate() of that iteration): the estimate from the window's
  /// draws of the particles of weight 1 (`weights`), and a new window. The previous metric
  /// stays where too few particles give no positive definite estimate.
  void estimate(const ParticleView& weights, ReproducibleSums& sums) {
    std::vector<double> estimate;
    if (kind_ == MetricKind::kLowRank) {
      double n = 0.0;
      const auto cov_q = covariance(0, weights, sums, false, n);
      const auto cov_g = covariance(dim_, weights, sums, false, n);
      estimate = low_rank_metric(cov_q, cov_g, dim_, n, rank_).dense();
    } else if (dense_) {
      double n = 0.0;
      estimate = covariance(0, weights, sums, true, n);
    } else {
      estimate = window_variances(weights, sums);
    }
    try {
      metric_ = dense_ ? dense_metric(estimate, dim_) : diagonal_metric(estimate);
      inv_metric_ = estimate;
      current_ = kind_;
    } catch (const std::runtime_error&) {
      // Too few particles for a positive definite covariance: keep the previous metric.
    }
    if (active_) Kokkos::deep_copy(window_sums_, 0.0);
  }

  /// Per-particle state (diag: the window sums of q_j and q_j², fisher_diag also of ∇_j and
  /// ∇_j², and the iterations summed; dense, low_rank: the snapshots kept, and their number),
  /// part of the checkpoint rows.
  int row_columns() const { return active_ ? window_cols_ : 0; }
  const StateView& rows() const { return window_sums_; }

  void save(SavedState& out) const {
    out.put("metric_kind", static_cast<double>(current_));
    out.put("inv_metric", inv_metric_);
  }
  void load(const SavedState& in) {
    current_ = static_cast<MetricKind>(static_cast<int>(in.scalar("metric_kind")));
    inv_metric_ = in.get("inv_metric");
    if (matrix_metric(current_)) {
      metric_ = dense_metric(inv_metric_, dim_);
    } else if (current_ != MetricKind::kUnit) {
      metric_ = diagonal_metric(inv_metric_);
    } else {
      metric_ = unit_metric(dim_);
    }
  }

  // The member functions below launch kernels with KOKKOS_LAMBDA, which CUDA allows only
  // in public member functions; they are not part of the interface.
  /// Adds q_j and q_j² (fisher_diag: then ∇_j and ∇_j²) of every particle to its window sums.
  void add(const StateView& q, const StateView& grad) const {
    const auto sums = window_sums_;
    const int d = dim_, last = window_cols_ - 1;
    const bool fisher = fisher_;
    Kokkos::parallel_for(
        "hmc::window_accumulate", Policy(0, n_), KOKKOS_LAMBDA(const int i) {
          for (int j = 0; j < d; ++j) {
            sums(i, j) += q(i, j);
            sums(i, d + j) += q(i, j) * q(i, j);
            if (fisher) {
              sums(i, 2 * d + j) += grad(i, j);
              sums(i, 3 * d + j) += grad(i, j) * grad(i, j);
            }
          }
          sums(i, last) += 1.0;
        });
  }

  /// Keeps every particle's position (low_rank: and gradient) as its next snapshot.
  void keep(const StateView& q, const StateView& grad) const {
    const auto rows = window_sums_;
    const int d = dim_, b = snapshot_cols_, last = window_cols_ - 1;
    const bool gradients = kind_ == MetricKind::kLowRank;
    const int most = kSnapshots;
    Kokkos::parallel_for(
        "hmc::window_snapshot", Policy(0, n_), KOKKOS_LAMBDA(const int i) {
          const int slot = static_cast<int>(rows(i, last));
          if (slot >= most) return;
          for (int j = 0; j < d; ++j) {
            rows(i, slot * b + j) = q(i, j);
            if (gradients) rows(i, slot * b + d + j) = grad(i, j);
          }
          rows(i, last) = slot + 1.0;
        });
  }

  /// Forgets the window sums (or snapshots) of the particles with restarted(i) != 0 (their
  /// earlier positions are not the ensemble's).
  void forget(const ParticleView& restarted) const {
    if (!active_) return;
    const auto sums = window_sums_;
    const int cols = window_cols_;
    Kokkos::parallel_for(
        "hmc::window_forget", Policy(0, n_), KOKKOS_LAMBDA(const int i) {
          if (restarted(i) != 0.0)
            for (int c = 0; c < cols; ++c) sums(i, c) = 0.0;
        });
  }

  /// Regularised variances of the window's draws of the particles of weight 1 (fisher_diag:
  /// sqrt(Var q / Var ∇), regularised alike).
  std::vector<double> window_variances(const ParticleView& weights, ReproducibleSums& sums) const {
    const int cols = window_cols_;
    StateView weighted("hmc::window_weighted", n_, cols);
    const auto ws = window_sums_;
    Kokkos::parallel_for(
        "hmc::window_weighted", Policy(0, n_), KOKKOS_LAMBDA(const int i) {
          for (int c = 0; c < cols; ++c) weighted(i, c) = weights(i) * ws(i, c);
        });
    const auto total = sums(weighted, n_, particles_);
    const double n = total[static_cast<std::size_t>(cols - 1)];
    // Variances of the sums' column pairs (sum, sum of squares) starting at `first`.
    const auto variances = [&](int first) {
      std::vector<double> var(dim_);
      for (int j = 0; j < dim_; ++j) {
        const double mean = n > 0 ? total[first + j] / n : 0.0;
        const double v = n > 1 ? (total[first + dim_ + j] - n * mean * mean) / (n - 1) : 1.0;
        var[j] = v > 0 ? v : 0.0;
      }
      return var;
    };
    std::vector<double> var = variances(0);
    if (fisher_) var = fisher_diagonal(var, variances(2 * dim_));
    for (double& v : var) v = regularise(v, n, true);
    return var;
  }

  /// Covariance of the snapshots kept (columns `offset` .. offset + d - 1 of each: positions 0,
  /// gradients d) of the particles of weight 1, regularised as Stan's (dense metric) or not
  /// (low_rank); `count` receives their number.
  std::vector<double> covariance(int offset, const ParticleView& weights, ReproducibleSums& sums, bool regularised,
                                 double& count) const {
    const int d = dim_, b = snapshot_cols_, last = window_cols_ - 1;
    const int cols = d + d * (d + 1) / 2 + 1;
    const auto rows = window_sums_;
    StateView products("hmc::covariance_terms", n_, cols);
    Kokkos::parallel_for(
        "hmc::covariance_terms", Policy(0, n_), KOKKOS_LAMBDA(const int i) {
          const double w = weights(i);
          const int kept = static_cast<int>(rows(i, last));
          for (int c = 0; c < cols; ++c) products(i, c) = 0.0;
          for (int k = 0; k < kept; ++k) {
            const int at = k * b + offset;
            int c = d;
            for (int x = 0; x < d; ++x) {
              products(i, x) += w * rows(i, at + x);
              for (int y = 0; y <= x; ++y) products(i, c++) += w * rows(i, at + x) * rows(i, at + y);
            }
          }
          products(i, cols - 1) = w * kept;
        });
    const auto total = sums(products, n_, particles_);
    const double n = total[static_cast<std::size_t>(cols - 1)];
    std::vector<double> cov(d * d);
    int c = d;
    for (int a = 0; a < d; ++a)
      for (int b = 0; b <= a; ++b) {
        const double v = n > 1 ? (total[c++] - n * (total[a] / n) * (total[b] / n)) / (n - 1) : (a == b ? 1.0 : 0.0);
        cov[a * d + b] = cov[b * d + a] = regularised ? regularise(v, n, a == b) : v;
      }
    count = n;
    return cov;
  }

 private:
  int n_, dim_;
  std::int64_t particles_;
  MetricKind kind_;                         ///< the one to adapt
  MetricKind current_ = MetricKind::kUnit;  ///< the one in use
  WindowSchedule windows_;
  bool active_;
  int rank_;               ///< low_rank: most directions (0: as many as pass the cutoff)
  bool dense_;             ///< estimated at a window's end as a d×d matrix (dense, low_rank)
  bool fisher_;            ///< fisher_diag: the window sums include the gradients'
  int snapshot_cols_;      ///< columns of one snapshot (dense: d, low_rank: 2d)
  int window_cols_;        ///< columns of window_sums_
  StateView window_sums_;  ///< per particle: the window's sums (add()) and its iterations (diag, fisher_diag),
                           ///< or its snapshots (keep()) and their number (dense, low_rank)
  Metric metric_;
  std::vector<double> inv_metric_;
};

}  // namespace hmc::sampler
