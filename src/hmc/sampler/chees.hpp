#pragma once
/// \file
/// \brief The HMC kernel's own warmup part: its ChEES path length (Hoffman, Radul &
/// Sountsov 2021), an adaptation of sampler/warmup.hpp's form.
///
/// Adam on log T during warmup, the geometric mean of its second half after. Adam
/// follows the estimate of d log ChEES / d log T, 4 Σ w·a·t·δ·(q' - q̄)ᵀ W Σ p' / Σ w·a·δ²
/// (sums over the healthy particles, w their weights, a the acceptance probabilities,
/// q̄ their mean; hmc_kernel.hpp computes the terms): a ratio, so its scale does not
/// change with the posterior's or the metric's, and one early gradient of another
/// scale cannot hold Adam's steps small for the rest of warmup. ChEES climbs from one
/// step (/sampler/step_size) when the metric is adapted; when the first metric is
/// estimated the length starts over at 1 (the positions are then whitened, and the
/// scale of the unit metric's length means nothing to them). With the unit metric, or
/// without warmup, the length starts at (or is) step_size × leapfrog_steps.

#include "hmc/core/draws.hpp"
#include "hmc/core/types.hpp"
#include "hmc/sampler/adaptation.hpp"
#include "hmc/sampler/kernel.hpp"
#include "hmc/sampler/settings.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace hmc::sampler {

/// \brief The ChEES path length of kernel K (K::Settings::length, and the ensemble
/// centre K::Settings::centre that its statistics need).
template <class K>
class ChEESAdaptation {
 public:
  /// The statistics of a transition: a · gradient term, a · δ² (HmcKernel::record_chees).
  static constexpr int kColumns = 2;

  ChEESAdaptation(const Settings& s, bool metric_adapts)
      : s_(s),
        on_(s.adapt.enabled && s.adapt.trajectory == TrajectoryKind::kChees),
        adapting_(on_ && s.warmup > 0),
        chees_(initial_length(s, metric_adapts), s.adapt.chees_learning_rate),
        length_(initial_length(s, metric_adapts)) {}

  /// Before an iteration: the length (and, in warmup, the centre) the kernel uses.
  void before(const AdaptationContext& c, K& kernel) {
    if (adapting_ && c.warmup) {
      centre_ = c.healthy_mean();
      length_ = chees_.length();
    }
    kernel.opts.length = on_ ? length_ : s_.step_size * s_.leapfrog_steps;
    kernel.opts.centre = adapting_ && c.warmup ? centre_ : VectorView();
  }

  /// After a warmup iteration: `sums` are Σ w · column over the ensemble. The length
  /// stays within [step size, step size × max_leapfrog]: the shorter of this transition's
  /// step size and the next one (dual averaging's first step after a restart tries a
  /// step size ten times larger, which must not lift the length).
  void update(const AdaptationContext& c, const double* sums) {
    if (!adapting_) return;
    const double gradient = sums[1] > 0.0 ? 4.0 * sums[0] / sums[1] : 0.0;
    chees_.update(gradient, std::min(c.last_step_size, c.step_size), c.step_size * s_.adapt.max_leapfrog);
    if (c.iteration > s_.warmup - std::max(1, s_.warmup / 2)) {
      log_length_sum_ += std::log(chees_.length());
      ++log_length_count_;
    }
  }
  /// A metric was estimated: the first one whitens the positions, and the length starts over at 1.
  void metric_changed(bool first) {
    if (adapting_ && first) chees_.restore({0.0, 0.0, 0});
  }
  /// The end of warmup: the geometric mean of the second half's lengths.
  void freeze() {
    if (adapting_ && log_length_count_ > 0) length_ = std::exp(log_length_sum_ / log_length_count_);
  }
  /// What is wrong with the adaptation (empty: nothing): a path length that is not finite and positive.
  std::string failed() const {
    const double t = chees_.length();
    if (!adapting_ || (std::isfinite(t) && t > 0.0)) return {};
    return "path length " + std::to_string(t);
  }

  void save(SavedState& out) const {
    if (!on_) return;
    chees_.save(out, "chees");
    out.put("chees_length", {length_, log_length_sum_, static_cast<double>(log_length_count_)});
  }
  void load(const SavedState& in) {
    if (!on_) return;
    chees_.load(in, "chees");
    const auto& v = in.get("chees_length");
    length_ = v.at(0);
    log_length_sum_ = v.at(1);
    log_length_count_ = static_cast<int>(v.at(2));
  }
  /// Its part of what warmup settled on (after a.step_size).
  void report(Adapted& a) const {
    a.trajectory = on_ ? TrajectoryKind::kChees : TrajectoryKind::kFixed;
    a.trajectory_length = on_ ? length_ : a.step_size * s_.leapfrog_steps;
    a.leapfrog_steps = s_.leapfrog_steps;
  }

 private:
  static double initial_length(const Settings& s, bool metric_adapts) {
    return metric_adapts ? s.step_size : s.step_size * s.leapfrog_steps;
  }

  Settings s_;
  bool on_, adapting_;
  ChEES chees_;
  double length_;
  VectorView centre_;
  double log_length_sum_ = 0.0;
  int log_length_count_ = 0;
};

}  // namespace hmc::sampler
