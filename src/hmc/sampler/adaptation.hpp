#pragma once
/// \file
/// \brief Warmup adaptation on the host: step size by dual averaging, the metric's
/// window schedule and estimate, and ChEES trajectory lengths.
///
/// Everything here consumes ensemble statistics that were already reduced over all
/// particles in a decomposition-independent way (core/ensemble_sum.hpp), so the
/// adapted values are the same on any number of ranks and threads.

#include "hmc/core/modes.hpp"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace hmc::sampler {

/// \brief Named values of the loop's host state, for checkpoints: each adapter saves
/// and loads its own (integers as doubles, exactly); services/resume.cpp stores them
/// bit for bit.
class SavedState {
 public:
  void put(const std::string& name, std::vector<double> values);
  void put(const std::string& name, double value) { put(name, std::vector<double>{value}); }
  /// The values saved under `name`; std::out_of_range naming it when there are none.
  const std::vector<double>& get(const std::string& name) const;
  double scalar(const std::string& name) const { return get(name).at(0); }
  const std::vector<std::pair<std::string, std::vector<double>>>& entries() const { return entries_; }

 private:
  std::vector<std::pair<std::string, std::vector<double>>> entries_;
};

struct AdaptSettings {
  bool enabled = true;
  double target_accept = 0.8;
  MetricKind metric = MetricKind::kDiag;
  int rank = 0;  ///< low_rank: most directions beside the diagonal (0: as many as the estimate finds)
  TrajectoryKind trajectory = TrajectoryKind::kChees;
  double gamma = 0.05, t0 = 10.0, kappa = 0.75;              ///< dual averaging (Stan's defaults)
  int init_buffer = 75, term_buffer = 50, base_window = 25;  ///< metric windows (Stan's defaults)
  int max_leapfrog = 1000;                                   ///< cap on ChEES steps per trajectory
  double chees_learning_rate = 0.025;                        ///< Adam step on log(trajectory length)
  bool restarts = true;  ///< restart stuck and far particles at warmup's checks (health.hpp)
};

/// Largest dimension for which a dense metric is estimated.
inline constexpr int kMaxDenseDim = 100;

/// \brief Nesterov dual averaging of log(step size) (Hoffman & Gelman 2014, as in Stan).
class DualAveraging {
 public:
  DualAveraging(double target, double gamma, double t0, double kappa)
      : target_(target), gamma_(gamma), t0_(t0), kappa_(kappa) {}
  /// Starts over around step size `eps` (mu = log(10 eps)).
  void restart(double eps);
  /// Feeds the ensemble-mean acceptance probability; returns the next step size.
  double update(double accept);
  /// The averaged step size, used after warmup.
  double final_step_size() const;

  /// Everything that changes as it runs (checkpoints).
  struct State {
    double mu = 0.0, h_bar = 0.0, log_eps_bar = 0.0;
    int counter = 0;
  };
  State state() const { return {mu_, h_bar_, log_eps_bar_, counter_}; }
  void restore(const State& s) {
    mu_ = s.mu;
    h_bar_ = s.h_bar;
    log_eps_bar_ = s.log_eps_bar;
    counter_ = s.counter;
  }
  void save(SavedState& out, const std::string& name) const {
    out.put(name, {mu_, h_bar_, log_eps_bar_, static_cast<double>(counter_)});
  }
  void load(const SavedState& in, const std::string& name) {
    const auto& v = in.get(name);
    restore({v.at(0), v.at(1), v.at(2), static_cast<int>(v.at(3))});
  }

 private:
  double target_, gamma_, t0_, kappa_;
  double mu_ = 0.0, h_bar_ = 0.0, log_eps_bar_ = 0.0;
  int counter_ = 0;
};

/// \brief Stan's warmup windows: an initial buffer, doubling windows for the metric,
/// and a terminal buffer for the step size only.
class WindowSchedule {
 public:
  WindowSchedule(int warmup, const AdaptSettings& s);
  /// Is warmup iteration `it` (1-based) inside a metric window?
  bool in_window(int it) const;
  /// Does a metric window end at iteration `it`?
  bool window_end(int it) const;
  /// Is iteration `it` one of `count` iterations spread evenly over its window, the last at
  /// the window's end (every `stride` = max(1, ⌊length / count⌋) iterations back from it)?
  bool snapshot(int it, int count) const;
  const std::vector<int>& ends() const { return ends_; }
  int first() const { return first_; }

 private:
  int first_ = 0;  ///< first window iteration (1-based), 0 if none
  std::vector<int> ends_;
};

/// Iterations of each metric window whose positions (low_rank: and gradients) the matrix
/// metrics keep per particle (WindowSchedule::snapshot, MetricAdapter).
inline constexpr int kMetricSnapshots = 16;

/// \brief Columns per particle of the metric's window state (the checkpoint rows): diag 2d + 1
/// (sums of q, q² and the count), fisher_diag 4d + 1, dense kMetricSnapshots·d + 1, low_rank
/// kMetricSnapshots·2d + 1, unit 0.
int metric_state_columns(MetricKind kind, int dim);

/// \brief Variance estimate regularised towards the identity as Stan does:
/// (n / (n + 5)) var + 1e-3 (5 / (n + 5)).
double regularise(double variance, double n, bool diagonal_entry);

/// \brief Adam on log(trajectory length), maximising the ChEES criterion
/// (Hoffman, Radul & Sountsov 2021).
class ChEES {
 public:
  ChEES(double initial_length, double learning_rate) : log_t_(std::log(initial_length)), rate_(learning_rate) {}
  /// One step with the acceptance-weighted ensemble estimate of d ChEES / d log T;
  /// the length is kept within [min_length, max_length].
  void update(double gradient, double min_length, double max_length);
  double length() const { return std::exp(log_t_); }

  /// Everything that changes as it runs (checkpoints).
  struct State {
    double log_t = 0.0, v = 0.0;
    int steps = 0;
  };
  State state() const { return {log_t_, v_, steps_}; }
  void restore(const State& s) {
    log_t_ = s.log_t;
    v_ = s.v;
    steps_ = s.steps;
  }
  void save(SavedState& out, const std::string& name) const {
    out.put(name, {log_t_, v_, static_cast<double>(steps_)});
  }
  void load(const SavedState& in, const std::string& name) {
    const auto& v = in.get(name);
    restore({v.at(0), v.at(1), static_cast<int>(v.at(2))});
  }

 private:
  double log_t_, rate_;
  double v_ = 0.0;
  int steps_ = 0;
};

}  // namespace hmc::sampler
