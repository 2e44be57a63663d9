#pragma once
/// \file
/// \brief The warmup as one part: the adapters every kernel shares (step size, metric),
/// the health of the particles (health.hpp: who the ensemble statistics trust, restarts),
/// and the kernel's own adaptation. The loop (run.hpp) calls before() and after() each
/// iteration and knows none of them by name.
///
/// A kernel K names an adaptation of its own with a nested type `K::Adaptation` (HMC:
/// ChEESAdaptation, chees.hpp), a class with
///
///   static constexpr int kColumns;                        // statistics per transition it reduces
///   Adaptation(const sampler::Settings&, bool metric_adapts);
///   void before(const AdaptationContext&, K& kernel);     // every iteration: K's settings
///   void update(const AdaptationContext&, const double* sums);  // after a warmup iteration
///   void metric_changed(bool first);                      // a metric window ended
///   void freeze();                                        // the end of warmup
///   std::string failed() const;                           // non-empty: diverged (the run stops)
///   void save(SavedState&) const;  void load(const SavedState&);   // checkpoints
///   void report(Adapted&) const;                          // summary.json: what it settled on
///
/// The kernel's transitions write their statistics with step.adapt_stat(i, k, value), k <
/// kColumns; update() gets Σ w_i · value_i over the ensemble (w_i: 1 for the healthy
/// particles, 0 for the others), reduced with the step size's sums in one collective.
/// Every sum is decomposition independent (core/ensemble_sum.hpp).

#include "hmc/core/draws.hpp"
#include "hmc/core/ensemble_sum.hpp"
#include "hmc/core/errors.hpp"
#include "hmc/core/types.hpp"
#include "hmc/model/concept.hpp"
#include "hmc/sampler/adapters.hpp"
#include "hmc/sampler/health.hpp"
#include "hmc/sampler/kernel.hpp"
#include "hmc/sampler/settings.hpp"

#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

namespace hmc::sampler {

/// \brief Warmup adaptation left the step size or a kernel's own setting non-finite or
/// not positive (an absurd /sampler/step_size, or a log density that overflows): the run
/// stops instead of sampling with them (and is not resumable: it would diverge again).
class AdaptationError : public RunError {
 public:
  explicit AdaptationError(const std::string& what) : RunError("run error: " + what) {}
};

/// \brief The adaptation of a kernel without one of its own.
template <class K>
struct NoAdaptation {
  static constexpr int kColumns = 0;
  NoAdaptation(const Settings&, bool) {}
  void before(const AdaptationContext&, K&) {}
  void update(const AdaptationContext&, const double*) {}
  void metric_changed(bool) {}
  void freeze() {}
  std::string failed() const { return {}; }
  void save(SavedState&) const {}
  void load(const SavedState&) {}
  void report(Adapted&) const {}
};

namespace detail {
template <class K, bool = has_own_adaptation<K>()>
struct OwnAdaptation {
  using type = NoAdaptation<K>;
};
template <class K>
struct OwnAdaptation<K, true> {
  using type = typename K::Adaptation;
};
}  // namespace detail

/// \brief The whole warmup of an ensemble of Model with kernel Kernel, on one rank.
template <class Model, class Kernel>
class Warmup {
  using Policy = Kokkos::RangePolicy<ExecSpace>;

 public:
  using Own = typename detail::OwnAdaptation<Kernel>::type;
  /// Columns of TransitionRecord::adapt: the acceptance statistic, then the kernel's own.
  static constexpr int columns() { return 1 + Own::kColumns; }

  Warmup(const Model& model, const Settings& s, int n, int dim, std::int64_t first, const Allreduce& allreduce)
      : s_(s),
        n_(n),
        dim_(dim),
        adapt_(s.adapt.enabled && s.warmup > 0),
        sums_(allreduce),
        step_size_(s.step_size, s.adapt),
        metric_(n, dim, s),
        health_(model, s, n, dim, first, allreduce, adapt_),
        own_(s, metric_.adapts()),
        terms_("hmc::warmup_terms", adapt_ ? n : 0, 2 + Own::kColumns),
        restarted_("hmc::restarted", adapt_ ? n : 0),
        centre_("hmc::healthy_mean", dim),
        centre_h_(Kokkos::create_mirror_view(centre_)),
        moments_("hmc::healthy_moments", adapt_ ? n : 0, dim + 1) {}

  double step_size() const { return step_size_.step_size(); }
  const Metric& metric() const { return metric_.metric(); }
  /// Fresh particles (after initialisation).
  void start() {
    if (adapt_) health_.start();
  }

  /// Before iteration `it` (1-based): the end of warmup freezes what was adapted; the
  /// particles are weighed; the kernel's own adaptation sets its settings.
  void before(int it, Kernel& kernel, const EnsembleState& state) {
    const bool warm = it <= s_.warmup;
    if (it == s_.warmup + 1 && adapt_) {
      step_size_.freeze();
      own_.freeze();
    }
    if (warm && adapt_) health_.weigh();
    last_step_size_ = step_size_.step_size();
    own_.before(context(it, state), kernel);
  }

  /// After warmup iteration `it` (when the run adapts; else nothing, and -1): the
  /// ensemble statistics of the healthy particles update the step size, the kernel's own
  /// adaptation and the metric; at a check, the stuck and far particles are restarted.
  /// Returns the mean acceptance statistic of the healthy particles.
  double after(int it, EnsembleState& state, const TransitionRecord& record) {
    if (!(adapt_ && it <= s_.warmup)) return -1.0;
    weigh_terms(record);
    const auto sums = sums_(terms_, n_, s_.particles);
    const double mean_accept = sums[1] > 0.0 ? sums[0] / sums[1] : 0.0;
    step_size_.update(mean_accept);
    AdaptationContext c = context(it, state);
    c.healthy = sums[1];
    own_.update(c, sums.data() + 2);
    const double eps = step_size_.step_size();
    const std::string own_failed = own_.failed();
    if (!(std::isfinite(eps) && eps > 0.0) || !own_failed.empty()) {
      throw AdaptationError("warmup adaptation diverged at iteration " + std::to_string(it) + ": step size " +
                            std::to_string(eps) + (own_failed.empty() ? std::string() : ", " + own_failed) +
                            " (is /sampler/step_size far too large, or the log density not finite?)");
    }
    metric_.accumulate(it, state.q, state.grad);
    const bool check = health_.check_due(it);
    CheckCounts counts;
    if (check) counts = health_.flag(state, sums_);
    if (metric_.window_end(it)) {
      const bool first = metric_.kind() == MetricKind::kUnit;
      metric_.estimate(health_.trusted(), sums_);
      step_size_.restart();
      own_.metric_changed(first && metric_.kind() != MetricKind::kUnit);
    }
    if (check) {
      if (s_.adapt.restarts) {
        health_.restart(it, state, sums_, restarted_, counts);
        metric_.forget(restarted_);
      }
      health_.add(counts);
    }
    return mean_accept;
  }

  /// Per-particle state in the checkpoint rows, in order: the metric's, the health's.
  int row_columns() const { return metric_.row_columns() + health_.row_columns(); }
  std::vector<StateView> rows() const {
    std::vector<StateView> out;
    if (metric_.row_columns() > 0) out.push_back(metric_.rows());
    if (health_.row_columns() > 0) out.push_back(health_.rows());
    return out;
  }

  void save(SavedState& out) const {
    step_size_.save(out);
    metric_.save(out);
    own_.save(out);
    health_.save(out);
  }
  void load(const SavedState& in) {
    step_size_.load(in);
    metric_.load(in);
    own_.load(in);
    health_.load(in);
  }
  /// What warmup settled on (so far).
  void report(Adapted& a) const {
    a.step_size = step_size_.step_size();
    a.metric = metric_.kind();
    a.inv_metric = metric_.inv_metric();
    own_.report(a);
    health_.report(a.repairs);
  }

  // The member functions below launch kernels with KOKKOS_LAMBDA, which CUDA allows only
  // in public member functions; they are not part of the interface.
  /// The iteration's terms to reduce: w·a, w, w·(the kernel's own statistics); the
  /// acceptance averages are updated on the way.
  void weigh_terms(const TransitionRecord& record) {
    const auto terms = terms_;
    const auto adapt = record.adapt;
    const auto w = health_.weights();
    const auto r = health_.rows();
    const int own = Own::kColumns;
    Kokkos::parallel_for(
        "hmc::warmup_terms", Policy(0, n_), KOKKOS_LAMBDA(const int i) {
          const double a = adapt(i, 0);
          if (r.extent(0) > 0) Health<Model>::average(r, i, a);
          terms(i, 0) = w(i) * a;
          terms(i, 1) = w(i);
          for (int k = 0; k < own; ++k) terms(i, 2 + k) = w(i) * adapt(i, 1 + k);
        });
  }

  /// The mean position of the particles of weight 1 (all ranks); while every particle has
  /// weight 1, the plain mean (the same bits, without the weighted copy).
  VectorView healthy_mean(const StateView& q) {
    if (health_.all_trusted()) {
      const auto total = sums_(q, n_, s_.particles);
      for (int j = 0; j < dim_; ++j)
        centre_h_(j) = total[static_cast<std::size_t>(j)] / static_cast<double>(s_.particles);
      Kokkos::deep_copy(centre_, centre_h_);
      return centre_;
    }
    const auto m = moments_;
    const auto w = health_.weights();
    const int d = dim_;
    Kokkos::parallel_for(
        "hmc::healthy_mean_terms", Policy(0, n_), KOKKOS_LAMBDA(const int i) {
          for (int j = 0; j < d; ++j) m(i, j) = w(i) * q(i, j);
          m(i, d) = w(i);
        });
    const auto total = sums_(moments_, n_, s_.particles);
    const double count = total[static_cast<std::size_t>(d)];
    for (int j = 0; j < d; ++j) centre_h_(j) = count > 0.0 ? total[static_cast<std::size_t>(j)] / count : 0.0;
    Kokkos::deep_copy(centre_, centre_h_);
    return centre_;
  }

 private:
  AdaptationContext context(int it, const EnsembleState& state) {
    AdaptationContext c;
    c.settings = &s_;
    c.iteration = it;
    c.warmup = it <= s_.warmup;
    c.adapting = c.warmup && adapt_;
    c.step_size = step_size_.step_size();
    c.last_step_size = last_step_size_;
    // Two pointers: held inside the std::function (no allocation per iteration); the
    // context lives only as long as the call that receives it.
    const EnsembleState* st = &state;
    c.healthy_mean = [this, st]() { return healthy_mean(st->q); };
    return c;
  }

  Settings s_;
  int n_, dim_;
  bool adapt_;
  ReproducibleSums sums_;
  StepSizeAdapter step_size_;
  MetricAdapter metric_;
  Health<Model> health_;
  Own own_;
  StateView terms_;         ///< [particle][2 + Own::kColumns]: what after() reduces
  ParticleView restarted_;  ///< 1 for the particles restarted at the latest check
  VectorView centre_;       ///< healthy_mean()
  VectorView::HostMirror centre_h_;
  StateView moments_;  ///< [particle][dim + 1]: healthy_mean()'s terms
  double last_step_size_ = 0.0;
};

}  // namespace hmc::sampler
