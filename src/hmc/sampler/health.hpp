#pragma once
/// \file
/// \brief Which particles the warmup trusts, and the restart of those it does not.
///
/// A few particles stuck in a flat tail or far from the rest must not steer statistics
/// that the whole ensemble shares (the step size, the metric, ChEES's path length). The
/// rule (docs/sampler.md, "Robust warmup"):
///
/// - every particle keeps an exponential moving average of its acceptance statistic
///   (weight 0.1 per iteration, 1 at the start). One whose average is below 0.05 at a
///   check is *stuck*;
/// - at a *check* (every 25 warmup iterations and at every metric window's end, up to
///   the last window's end) a particle is *far* when its log density lies below
///   Q1 − max(4 IQR, 12) of the ensemble's log densities, or a coordinate lies more than
///   8 IQR from that coordinate's median. Quartiles come from the particles whose global
///   id is a multiple of ceil(N / 1024) (all of them up to 1024 particles), by bisection
///   on exact integer counts;
/// - if the stuck and far particles together are a minority (at most half), each is
///   restarted: a new position drawn from the normal with the mean and variances of the
///   other particles' positions, keyed by (seed, global id, iteration) like every random
///   number here (sampler/rng_uses.hpp: kUseRestart), its gradient evaluated, its
///   acceptance average set to 1. A position whose log density is not finite is drawn
///   again, up to /sampler/init/attempts times. At the *last* check, which no later check
///   follows, a draw is kept only where that check would not call it far either; after
///   /sampler/init/attempts draws that all fail, the particle starts at a copy of a
///   *donor* (a particle of the quartile sample, below, that the check did not flag,
///   chosen uniformly), which follows its own random numbers from the next transition.
///   (Until 2026-12-07 the last check kept any finite draw: on hmm_k3_t2000, a skewed
///   33-parameter posterior, draws landed 100 to 13,000 nats below the ensemble, and at
///   some seeds one restarted at the last check settled in a minor mode for the whole run.
///   Keeping draws inside the fences at every check under-dispersed the funnel, and copies
///   at every check heavy_tails: the warmup's tail visits are worth keeping.) A particle
///   that finds no position stays where it was and out of the statistics until the next
///   check;
/// - the flagged particles have weight 0 in the metric estimate of a window that ends at
///   the check; the others (and, between checks, all but those whose restart failed) have
///   weight 1 in every ensemble statistic.
///
/// Every count is an exact integer sum and every quartile a bisection on such counts,
/// so the flags and the restarts are the same on any number of ranks and threads. Never
/// after warmup: post-warmup particles are independent chains.

#include "hmc/core/draws.hpp"
#include "hmc/core/ensemble_sum.hpp"
#include "hmc/core/philox.hpp"
#include "hmc/core/types.hpp"
#include "hmc/model/concept.hpp"
#include "hmc/sampler/adaptation.hpp"
#include "hmc/sampler/kernel.hpp"
#include "hmc/sampler/rng_uses.hpp"
#include "hmc/sampler/settings.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace hmc::sampler {

/// \brief The constants of the rule above.
struct HealthRule {
  static constexpr double kAverageWeight = 0.1;     ///< of the latest acceptance in the moving average
  static constexpr double kStuckAccept = 0.05;      ///< average acceptance below which a particle is stuck
  static constexpr int kCheckEvery = 25;            ///< warmup iterations between checks
  static constexpr double kLogDensityFence = 4.0;   ///< IQRs of log density below Q1
  static constexpr double kLogDensityFloor = 12.0;  ///< ... and at least this far below Q1
  static constexpr double kCoordinateFence = 8.0;   ///< IQRs from a coordinate's median
  static constexpr double kMostRestarted = 0.5;     ///< restarts only while flagged particles are at most this share
  static constexpr std::int64_t kQuartileSample = 1024;  ///< particles the quartiles are taken from
  static constexpr int kBisections = 24;  ///< halvings of each quartile's bracket (to 2^-24 of the range)
};

/// \brief What a check found and did, summed over all ranks.
struct CheckCounts {
  std::int64_t stuck = 0, far = 0, flagged = 0, restarted = 0, failed = 0;
  bool skipped = false;  ///< most particles were flagged: none restarted
};

/// \brief The warmup's health of the particles: the moving averages, the flags, the
/// weights (1: trusted) that the ensemble statistics use, and the restarts.
template <class Model>
class Health {
  using Policy = Kokkos::RangePolicy<ExecSpace>;

 public:
  Health(const Model& model, const Settings& s, int n, int dim, std::int64_t first, Allreduce allreduce, bool on)
      : model_(model),
        s_(s),
        n_(n),
        dim_(dim),
        first_(first),
        allreduce_(std::move(allreduce)),
        on_(on),
        windows_(s.warmup, s.adapt),
        last_check_(windows_.first() > 0 ? windows_.ends().back() : 0),
        rows_("hmc::health", on ? n : 0, 2),
        weights_("hmc::health_weights", n) {
    Kokkos::deep_copy(weights_, 1.0);
    if (on_) start();
  }

  bool on() const { return on_; }
  /// Per-particle state in the checkpoint rows: the acceptance average and the flag.
  int row_columns() const { return on_ ? 2 : 0; }
  const StateView& rows() const { return rows_; }
  /// 1 for the particles the ensemble statistics use, 0 for the others (weigh()).
  const ParticleView& weights() const { return weights_; }
  /// Whether warmup iteration `it` ends with a check.
  bool check_due(int it) const {
    return on_ && it <= last_check_ && (it % HealthRule::kCheckEvery == 0 || windows_.window_end(it));
  }

  /// The weights of the particles not flagged at the latest check (a metric window's end).
  const ParticleView& trusted() {
    if (!on_) return weights_;
    const auto r = rows_;
    const auto w = weights_;
    Kokkos::parallel_for(
        "hmc::health_trusted", Policy(0, n_), KOKKOS_LAMBDA(const int i) { w(i) = r(i, 1) != 0.0 ? 0.0 : 1.0; });
    weights_are_one_ = flagged_now_ == 0;
    return weights_;
  }

  /// Fresh particles: averages 1, no flags.
  void start() {
    const auto r = rows_;
    Kokkos::parallel_for(
        "hmc::health_start", Policy(0, n_), KOKKOS_LAMBDA(const int i) {
          r(i, 0) = 1.0;
          r(i, 1) = 0.0;
        });
  }

  /// The weights of the coming iteration: 0 for the particles still flagged (a restart
  /// that found no finite log density), 1 for the others; nothing to do while none is.
  void weigh() {
    if (flagged_now_ == 0 && weights_are_one_) return;
    trusted();
  }
  /// Whether every particle has weight 1 (then the weighted sums are the plain ones).
  bool all_trusted() const { return !on_ || (flagged_now_ == 0 && weights_are_one_); }

  /// After a warmup transition of particle i with acceptance statistic `accept`: its
  /// moving average (rows `r`).
  KOKKOS_INLINE_FUNCTION static void average(const StateView& r, int i, double accept) {
    const double a = math::isfinite(accept) ? accept : 0.0;
    r(i, 0) = (1.0 - HealthRule::kAverageWeight) * r(i, 0) + HealthRule::kAverageWeight * a;
  }
  /// The check of warmup iteration `it`: flags the stuck and far particles (rows column
  /// 1), or none where they would be the majority.
  CheckCounts flag(const EnsembleState& state, ReproducibleSums& sums) {
    CheckCounts c;
    fences_ = quartile_fences(state, sums);
    const auto fences = fences_;
    const auto r = rows_;
    const auto q = state.q;
    const auto lp = state.lp;
    const int d = dim_;
    const double lp_fence = fences.lp_fence;
    const auto median = fences.median, spread = fences.spread;
    StateView counts("hmc::health_counts", n_, 3);
    Kokkos::parallel_for(
        "hmc::health_flag", Policy(0, n_), KOKKOS_LAMBDA(const int i) {
          const bool far = is_far(row(q, i), lp(i), d, lp_fence, median, spread);
          const bool stuck = r(i, 0) < HealthRule::kStuckAccept;
          r(i, 1) = (far || stuck) ? 1.0 : 0.0;
          counts(i, 0) = stuck ? 1.0 : 0.0;
          counts(i, 1) = far ? 1.0 : 0.0;
          counts(i, 2) = r(i, 1);
        });
    const auto total = sums(counts, n_, s_.particles);
    c.stuck = std::llround(total[0]);
    c.far = std::llround(total[1]);
    c.flagged = std::llround(total[2]);
    flagged_now_ = c.flagged;
    if (static_cast<double>(c.flagged) > HealthRule::kMostRestarted * static_cast<double>(s_.particles)) {
      c.skipped = true;
      flagged_now_ = 0;
      Kokkos::parallel_for(
          "hmc::health_unflag", Policy(0, n_), KOKKOS_LAMBDA(const int i) { r(i, 1) = 0.0; });
    }
    return c;
  }

  /// Whether a particle at `x` with log density `lp` lies outside the fences of a check.
  KOKKOS_INLINE_FUNCTION static bool is_far(const Row& x, double lp, int d, double lp_fence, const VectorView& median,
                                            const VectorView& spread) {
    bool far = !(lp >= lp_fence);
    for (int j = 0; j < d && !far; ++j)
      far = spread(j) > 0.0 && math::fabs(x(j) - median(j)) > HealthRule::kCoordinateFence * spread(j);
    return far;
  }

  /// The iteration of the last check (the last metric window's end; 0: none).
  int last_check() const { return last_check_; }

  /// Restarts the flagged particles at warmup iteration `it` (after flag(), whose fences it
  /// keeps); `restarted` (n) is set to 1 for those that moved. Adds the counts to `c`.
  void restart(int it, EnsembleState& state, ReproducibleSums& sums, const ParticleView& restarted, CheckCounts& c) {
    Kokkos::deep_copy(restarted, 0.0);
    if (c.flagged == 0 || c.skipped) return;
    const int d = dim_;
    // Mean and variances of the positions of the particles not flagged.
    const auto r = rows_;
    const auto q = state.q;
    StateView terms("hmc::health_moments", n_, 2 * d + 1);
    Kokkos::parallel_for(
        "hmc::health_moments", Policy(0, n_), KOKKOS_LAMBDA(const int i) {
          const double h = r(i, 1) == 0.0 ? 1.0 : 0.0;
          for (int j = 0; j < d; ++j) {
            terms(i, j) = h * q(i, j);
            terms(i, d + j) = h * q(i, j) * q(i, j);
          }
          terms(i, 2 * d) = h;
        });
    const auto total = sums(terms, n_, s_.particles);
    const double m = total[2 * d];
    if (m < 2.0) return;
    VectorView mean("hmc::restart_mean", d), sd("hmc::restart_sd", d);
    auto mean_h = Kokkos::create_mirror_view(mean);
    auto sd_h = Kokkos::create_mirror_view(sd);
    for (int j = 0; j < d; ++j) {
      mean_h(j) = total[j] / m;
      const double var = (total[d + j] - m * mean_h(j) * mean_h(j)) / (m - 1.0);
      sd_h(j) = var > 0.0 ? std::sqrt(var) : 0.0;
    }
    Kokkos::deep_copy(mean, mean_h);
    Kokkos::deep_copy(sd, sd_h);
    // At the last check no later one would catch a restart that lands far: only there must a
    // draw land inside the fences, with donors after the draws (at earlier checks any finite draw).
    const bool last = it >= last_check_;
    const StateView donor = last ? donors(state) : StateView("hmc::restart_donors", 0, d);

    // The flagged local particles, listed on the device (a scan: only their count comes back).
    Kokkos::View<int*, MemSpace> list("hmc::restart_list", n_);
    int k = 0;
    Kokkos::parallel_scan(
        "hmc::restart_list", Policy(0, n_),
        KOKKOS_LAMBDA(const int i, int& next, const bool final) {
          const bool flagged = r(i, 1) != 0.0;
          if (final && flagged) list(next) = i;
          next += flagged ? 1 : 0;
        },
        k);
    StateView backup("hmc::restart_backup", k, 2 * d + 1);
    StateView moved("hmc::restart_moved", n_, 2);
    const Model model = model_;
    const EnsembleState st = state;
    const std::uint64_t seed = s_.seed;
    const std::int64_t first = first_;
    const int attempts = s_.init_attempts;
    const auto iteration = static_cast<std::uint32_t>(it);
    const auto pairs = static_cast<std::uint32_t>((d + 1) / 2);
    const double lp_fence = fences_.lp_fence;
    const auto median = fences_.median, spread = fences_.spread;
    const int donors_n = static_cast<int>(donor.extent(0));
    Kokkos::parallel_for(
        "hmc::health_restart", Policy(0, k), KOKKOS_LAMBDA(const int m2) {
          const int i = list(m2);
          const rng::ParticleStream stream(seed, static_cast<std::uint64_t>(first + i));
          const Row x = row(st.q, i), g = row(st.grad, i);
          for (int j = 0; j < d; ++j) {
            backup(m2, j) = x(j);
            backup(m2, d + j) = g(j);
          }
          backup(m2, 2 * d) = st.lp(i);
          // Draws from the normal (at the last check kept only where it would not call them far).
          bool kept = false;
          for (int attempt = 0; attempt < attempts && !kept; ++attempt) {
            for (int j = 0; j < d; j += 2) {
              double z0, z1;
              stream.normal2(
                  iteration,
                  kUseRestart + static_cast<std::uint32_t>(attempt) * pairs + static_cast<std::uint32_t>(j / 2), z0,
                  z1);
              x(j) = mean(j) + sd(j) * z0;
              if (j + 1 < d) x(j + 1) = mean(j + 1) + sd(j + 1) * z1;
            }
            const double lp = model::log_density_gradient(model, x, g, st.scratch(i));
            kept = math::isfinite(lp) && (!last || !is_far(x, lp, d, lp_fence, median, spread));
            if (kept) st.lp(i) = lp;
          }
          // Else, at the last check, a copy of a donor (its log density was finite at the check).
          if (!kept && donors_n > 0) {
            double u, unused;
            stream.uniform2(iteration, kUseRestart + static_cast<std::uint32_t>(attempts) * pairs, u, unused);
            const int from = u * donors_n < donors_n ? static_cast<int>(u * donors_n) : donors_n - 1;
            for (int j = 0; j < d; ++j) x(j) = donor(from, j);
            const double lp = model::log_density_gradient(model, x, g, st.scratch(i));
            kept = math::isfinite(lp);
            if (kept) st.lp(i) = lp;
          }
          if (kept) {
            r(i, 0) = 1.0;
            r(i, 1) = 0.0;
            restarted(i) = 1.0;
            moved(i, 0) = 1.0;
            return;
          }
          for (int j = 0; j < d; ++j) {
            x(j) = backup(m2, j);
            g(j) = backup(m2, d + j);
          }
          st.lp(i) = backup(m2, 2 * d);
          moved(i, 1) = 1.0;
        });
    const auto counts = sums(moved, n_, s_.particles);
    c.restarted += std::llround(counts[0]);
    c.failed += std::llround(counts[1]);
    flagged_now_ = std::llround(counts[1]);
  }

  /// The donors of a restart: the positions (rows) of the particles of the quartile sample
  /// that the check did not flag, on every rank (each sample row is written by the rank that
  /// holds it, the others leave it at -inf, so an element-wise max gathers it exactly).
  StateView donors(const EnsembleState& state) const {
    const int d = dim_, cols = d + 1;
    const SampleRows sr = sample_rows();
    StateView rows("hmc::restart_donor_rows", sr.local, cols);
    const auto r = rows_;
    const auto q = state.q;
    const auto lp = state.lp;
    const int offset = sr.offset, step = static_cast<int>(sr.stride);
    Kokkos::parallel_for(
        "hmc::restart_donor_rows", Policy(0, sr.local), KOKKOS_LAMBDA(const int k) {
          const int i = offset + k * step;
          rows(k, 0) = (r(i, 1) == 0.0 && math::isfinite(lp(i))) ? 1.0 : 0.0;
          for (int j = 0; j < d; ++j) rows(k, 1 + j) = q(i, j);
        });
    auto rows_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), rows);
    const std::int64_t global_first = (first_ + sr.offset) / sr.stride;  // this rank's first sample row
    std::vector<double> pool(static_cast<std::size_t>(sr.sample * cols), -std::numeric_limits<double>::infinity());
    for (int k = 0; k < sr.local; ++k)
      for (int j = 0; j < cols; ++j) pool[static_cast<std::size_t>((global_first + k) * cols + j)] = rows_h(k, j);
    allreduce_.max(pool.data(), static_cast<int>(pool.size()));
    std::vector<std::int64_t> healthy;
    for (std::int64_t k = 0; k < sr.sample; ++k)
      if (pool[static_cast<std::size_t>(k * cols)] == 1.0) healthy.push_back(k);
    StateView donor("hmc::restart_donors", static_cast<int>(healthy.size()), d);
    auto donor_h = Kokkos::create_mirror_view(donor);
    for (std::size_t k = 0; k < healthy.size(); ++k)
      for (int j = 0; j < d; ++j)
        donor_h(static_cast<int>(k), j) = pool[static_cast<std::size_t>(healthy[k] * cols + 1 + j)];
    Kokkos::deep_copy(donor, donor_h);
    return donor;
  }

  /// \brief The particles whose global id is a multiple of `stride` = ceil(N / kQuartileSample):
  /// `sample` of them in all, `local` on this rank, the first at local index `offset`.
  struct SampleRows {
    std::int64_t stride = 1, sample = 0;
    int offset = 0, local = 0;
  };
  SampleRows sample_rows() const {
    SampleRows sr;
    const std::int64_t total = s_.particles;
    sr.stride = std::max<std::int64_t>(1, (total + HealthRule::kQuartileSample - 1) / HealthRule::kQuartileSample);
    sr.sample = (total + sr.stride - 1) / sr.stride;
    sr.offset = static_cast<int>((sr.stride - first_ % sr.stride) % sr.stride);
    sr.local = sr.offset < n_ ? static_cast<int>((n_ - 1 - sr.offset) / sr.stride) + 1 : 0;
    return sr;
  }

  /// \brief The fences of a check: log densities below `lp_fence` are far, and so is a
  /// coordinate j more than kCoordinateFence × spread(j) from median(j) (spread: its IQR).
  struct Fences {
    double lp_fence = 0.0;
    VectorView median, spread;
  };
  /// Quartiles of the log density and of every coordinate over the sample of particles
  /// (global ids that are multiples of ceil(N / kQuartileSample)), by bisection on exact counts.
  Fences quartile_fences(const EnsembleState& state, ReproducibleSums& sums) const {
    const SampleRows sr = sample_rows();
    const std::int64_t sample = sr.sample;
    const int offset = sr.offset, m = sr.local;
    const int cols = 1 + dim_, d = dim_;
    const auto q = state.q;
    const auto lp = state.lp;
    const int step = static_cast<int>(sr.stride);
    StateView x("hmc::health_sample", m, cols);
    Kokkos::parallel_for(
        "hmc::health_sample", Policy(0, m), KOKKOS_LAMBDA(const int k) {
          const int i = offset + k * step;
          x(k, 0) = lp(i);
          for (int j = 0; j < d; ++j) x(k, 1 + j) = q(i, j);
        });
    // Largest and (negated) smallest value of each column: a max is exact in any order.
    VectorView range("hmc::health_range", 2 * cols);
    Kokkos::parallel_for(
        "hmc::health_range", Policy(0, cols), KOKKOS_LAMBDA(const int c) {
          double hi = -math::infinity(), neg_lo = -math::infinity();
          for (int k = 0; k < m; ++k) {
            hi = x(k, c) > hi ? x(k, c) : hi;
            neg_lo = -x(k, c) > neg_lo ? -x(k, c) : neg_lo;
          }
          range(2 * c) = hi;
          range(2 * c + 1) = neg_lo;
        });
    auto range_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), range);
    std::vector<double> extremes(range_h.data(), range_h.data() + 2 * cols);
    allreduce_.max(extremes.data(), 2 * cols);

    // Quartile k (1, 2, 3) of column c: the smallest t with #{x <= t} >= ceil(k · sample / 4).
    const int nq = 3 * cols;
    std::vector<double> lo(static_cast<std::size_t>(nq)), hi(static_cast<std::size_t>(nq));
    std::vector<double> target(3);
    for (int k = 0; k < 3; ++k)
      target[static_cast<std::size_t>(k)] = std::ceil((k + 1) * static_cast<double>(sample) / 4.0);
    for (int c = 0; c < cols; ++c) {
      const double top = extremes[static_cast<std::size_t>(2 * c)],
                   bottom = -extremes[static_cast<std::size_t>(2 * c + 1)];
      for (int k = 0; k < 3; ++k) {
        hi[static_cast<std::size_t>(3 * c + k)] = top;
        lo[static_cast<std::size_t>(3 * c + k)] = top > bottom ? bottom - (top - bottom) / 1024.0 : top;
      }
    }
    VectorView mid("hmc::health_mid", nq);
    auto mid_h = Kokkos::create_mirror_view(mid);
    StateView below("hmc::health_below", m, nq);
    for (int round = 0; round < HealthRule::kBisections; ++round) {
      for (int c = 0; c < nq; ++c) mid_h(c) = 0.5 * (lo[static_cast<std::size_t>(c)] + hi[static_cast<std::size_t>(c)]);
      Kokkos::deep_copy(mid, mid_h);
      Kokkos::parallel_for(
          "hmc::health_below", Policy(0, m), KOKKOS_LAMBDA(const int k) {
            for (int c = 0; c < nq; ++c) below(k, c) = x(k, c / 3) <= mid(c) ? 1.0 : 0.0;
          });
      const auto counts = sums(below, m, sample);
      for (int c = 0; c < nq; ++c) {
        const auto u = static_cast<std::size_t>(c);
        if (!(hi[u] > lo[u])) continue;
        if (counts[u] >= target[u % 3]) {
          hi[u] = mid_h(c);
        } else {
          lo[u] = mid_h(c);
        }
      }
    }
    Fences f;
    const double iqr_lp = hi[2] - hi[0];
    f.lp_fence = hi[0] - std::max(HealthRule::kLogDensityFence * iqr_lp, HealthRule::kLogDensityFloor);
    f.median = VectorView("hmc::health_median", d);
    f.spread = VectorView("hmc::health_spread", d);
    auto med_h = Kokkos::create_mirror_view(f.median);
    auto spread_h = Kokkos::create_mirror_view(f.spread);
    for (int j = 0; j < d; ++j) {
      const auto b = static_cast<std::size_t>(3 * (1 + j));
      med_h(j) = hi[b + 1];
      spread_h(j) = hi[b + 2] - hi[b];
    }
    Kokkos::deep_copy(f.median, med_h);
    Kokkos::deep_copy(f.spread, spread_h);
    return f;
  }

  /// Per-check totals so far (the report: summary.json, the log).
  void add(const CheckCounts& c) {
    ++checks_;
    stuck_ += c.stuck;
    far_ += c.far;
    restarted_ += c.restarted;
    failed_ += c.failed;
    skipped_ += c.skipped ? 1 : 0;
  }
  void report(hmc::WarmupRepairs& r) const {
    r.checks = checks_;
    r.stuck = stuck_;
    r.far = far_;
    r.restarted = restarted_;
    r.failed = failed_;
    r.skipped_checks = skipped_;
  }
  void save(SavedState& out) const {
    if (!on_) return;
    out.put("health", {static_cast<double>(flagged_now_), static_cast<double>(checks_), static_cast<double>(stuck_),
                       static_cast<double>(far_), static_cast<double>(restarted_), static_cast<double>(failed_),
                       static_cast<double>(skipped_)});
  }
  void load(const SavedState& in) {
    if (!on_) return;
    const auto& v = in.get("health");
    flagged_now_ = static_cast<std::int64_t>(v.at(0));
    checks_ = static_cast<int>(v.at(1));
    stuck_ = static_cast<std::int64_t>(v.at(2));
    far_ = static_cast<std::int64_t>(v.at(3));
    restarted_ = static_cast<std::int64_t>(v.at(4));
    failed_ = static_cast<std::int64_t>(v.at(5));
    skipped_ = static_cast<int>(v.at(6));
    weights_are_one_ = false;  // weigh() recomputes them from the rows
  }

 private:
  int checks_ = 0, skipped_ = 0;
  std::int64_t stuck_ = 0, far_ = 0, restarted_ = 0, failed_ = 0;
  Model model_;
  Settings s_;
  int n_, dim_;
  std::int64_t first_;
  Allreduce allreduce_;
  bool on_;
  Fences fences_;           ///< those of the latest check (its restarts keep within them)
  WindowSchedule windows_;  ///< the metric's windows: a check at each one's end
  int last_check_;          ///< the last window's end (0: no window, no checks)
  StateView rows_;
  ParticleView weights_;
  std::int64_t flagged_now_ = 0;  ///< particles flagged now, all ranks (restarts that failed)
  bool weights_are_one_ = true;   ///< weights_ holds 1 everywhere
};

}  // namespace hmc::sampler
