#pragma once
/// \file
/// \brief The HMC transition on the host, vectorised across particles: a block of
/// `kLanes` particles advances in lock step, one SIMD lane each.
///
/// HmcTransition (transition.hpp) advances one particle per thread, which suits a GPU
/// and leaves a CPU's vector units idle for models of small dimension. Here one
/// thread takes a block of kLanes consecutive particles, copies their q, p and ∇ into
/// [coordinate][lane] arrays on its stack, and runs every leapfrog step as loops over
/// the lanes under `#pragma omp simd`, the model's gradient included. Lanes whose
/// trajectory is shorter (ChEES jitter) or has hit a non-finite log density are
/// masked: their values are kept by a select, not recomputed. While every lane moves,
/// the steps run without selects; a lane computes the same values on either path, so
/// its draws do not depend on the other particles of its block.
///
/// The algorithm is that of HmcTransition, random numbers included. The draws are
/// not bitwise those of HmcTransition: the vector exp/log (core/simd_math.hpp) differ
/// from the scalar ones in the last bits. They do not depend on the number of ranks
/// or threads: every particle runs through the same vector code, a block that is not
/// full being padded with copies of its first particle whose results are discarded.
///
/// Used when the execution space is the host, the model writes its gradient as a
/// template over the number type (`log_density_gradient_t<T>`, so that T = Pack
/// computes a whole block) or as a block gradient with scratch (below), and its
/// dimension is at most kMaxLaneDim (use_lanes()); else HmcTransition.
///
/// A model with per-particle scratch (the HMM) takes part by writing
///   int lane_scratch_size() const;  // Packs per block
///   Pack log_density_gradient_lanes(const PackRow& q, const PackRow& grad, Pack* scratch) const;
/// the scratch being one thread's buffer (lane_scratch()), reused by every block that
/// thread runs, so it stays in cache. Such a model must compute in every lane what its
/// scalar log_density_gradient computes, or say where it does not.

#include "hmc/core/pack.hpp"
#include "hmc/sampler/transition.hpp"

#include <cstddef>
#include <cstdlib>
#include <type_traits>
#include <utility>
#include <vector>

namespace hmc::sampler {

/// Largest dimension the lane kernel takes: its arrays live on the thread's stack
/// (4 x kMaxLaneDim Packs = 32 KiB).
inline constexpr int kMaxLaneDim = 128;

/// True where the default execution space runs on the host.
inline constexpr bool kHostExecution = std::is_same_v<MemSpace, Kokkos::HostSpace>;

/// Whether the lane kernel exists for this model: on the host, for a model that
/// writes its gradient as a template over the number type (log_density_gradient_t) or
/// as a block gradient with scratch (log_density_gradient_lanes).
template <class Model>
constexpr bool lanes_available() {
  return kHostExecution && (model::has_lane_gradient<Model>() || model::has_lane_scratch_gradient<Model>());
}

/// This thread's scratch for a block of lanes: at least `packs` Packs, kept from call
/// to call (one buffer per host thread, grown when a model needs more).
inline Pack* lane_scratch(int packs) {
  static thread_local std::vector<Pack> buffer;
  if (buffer.size() < static_cast<std::size_t>(packs)) buffer.resize(static_cast<std::size_t>(packs));
  return buffer.data();
}

/// Whether run.hpp takes the lane kernel for this model and dimension.
/// HMC_SCALAR_TRANSITION=1 in the environment turns it off (A/B checks).
template <class Model>
bool use_lanes(int dim) {
  const char* off = std::getenv("HMC_SCALAR_TRANSITION");
  return lanes_available<Model>() && dim >= 1 && dim <= kMaxLaneDim && !(off != nullptr && off[0] == '1');
}

template <class Model>
struct HmcLaneTransition {
  HmcTransition<Model> t;  ///< the settings and Views of the transition (t.state, t.record, ...)
  int n;                   ///< local particles

  static constexpr int W = kLanes;

  /// Number of blocks for n particles.
  static int blocks(int n) { return (n + W - 1) / W; }

  void operator()(const int block) const {
    const int dim = t.dim;
    const int first = block * W;
    Pack q[kMaxLaneDim], p[kMaxLaneDim], g[kMaxLaneDim], gn[kMaxLaneDim];
    Pack lp, lpn, h0, active;  // active: 1 while the lane's trajectory goes on, else 0
    int steps[W], particle[W];

    // Lane l is particle first + l; past the end, a copy of the block's first one.
    for (int l = 0; l < W; ++l) particle[l] = first + l < n ? first + l : first;
    for (int j = 0; j < dim; ++j) {
      for (int l = 0; l < W; ++l) {
        q[j][l] = t.state.q(particle[l], j);
        g[j][l] = t.state.grad(particle[l], j);
      }
    }
    // Momenta: the normals of HmcTransition, a pair of coordinates for all lanes at a time.
    rng::ParticleStream streams[W];
    for (int l = 0; l < W; ++l)
      streams[l] = rng::ParticleStream(t.seed, static_cast<std::uint64_t>(t.first_particle + particle[l]));
    for (int j = 0; j < dim; j += 2) {
      // ParticleStream::normal2 in separate loops over the lanes: one loop with both
      // sin and cos of the angle would become one sincos call, which has no vector version.
      Pack u0, u1, radius, angle;
      const auto use = static_cast<std::uint32_t>(j / 2);
      HMC_LANES_LOOP streams[l].uniform2(t.iteration, use, u0[l], u1[l]);
      HMC_LANES_LOOP {
        radius[l] = rng::ParticleStream::box_muller_radius(u0[l]);
        angle[l] = rng::ParticleStream::box_muller_angle(u1[l]);
      }
      HMC_LANES_LOOP p[j][l] = radius[l] * math::cos(angle[l]);
      if (j + 1 < dim) {
        HMC_LANES_LOOP p[j + 1][l] = radius[l] * math::sin(angle[l]);
      }
    }
    const double scale = math::sqrt(t.temperature);
    int longest = 0;
    for (int l = 0; l < W; ++l) {
      const rng::ParticleStream& stream = streams[l];
      const LaneRow pl{p, l};
      t.metric.momentum_from_normals(pl, scale);
      steps[l] = t.steps_for(stream);
      longest = steps[l] > longest ? steps[l] : longest;
      lp[l] = t.state.lp(particle[l]);
      h0[l] = -lp[l] + t.metric.kinetic(pl);
      active[l] = 1.0;
    }

    const double eps = t.step_size, half = 0.5 * eps;
    for (int s = 0; s < longest; ++s) {
      int running = 0;
      for (int l = 0; l < W; ++l) {
        if (s >= steps[l]) active[l] = 0.0;
        running += active[l] != 0.0;
      }
      if (running == 0) break;
      if (running == W) {
        // Every lane moves (fixed path lengths, and jittered ones until the shortest
        // ends): the same arithmetic as below without the selects.
        for (int j = 0; j < dim; ++j) p[j] += half * g[j];
        if (!t.metric.dense) {
          for (int j = 0; j < dim; ++j) q[j] += eps * t.metric.diag(j) * p[j];
        } else {
          drift(q, p, active, eps);
        }
        lp = gradient(q, g);
        bool finite = true;
        for (int l = 0; l < W; ++l) {
          // A non-finite log density ends the trajectory, as in leapfrog().
          if (!math::isfinite(lp[l])) {
            active[l] = 0.0;
            finite = false;
          }
        }
        if (finite) {
          for (int j = 0; j < dim; ++j) p[j] += half * g[j];
        } else {
          for (int j = 0; j < dim; ++j) {
            HMC_LANES_LOOP p[j][l] = active[l] != 0.0 ? p[j][l] + half * g[j][l] : p[j][l];
          }
        }
        continue;
      }
      for (int j = 0; j < dim; ++j) {
        HMC_LANES_LOOP p[j][l] = active[l] != 0.0 ? p[j][l] + half * g[j][l] : p[j][l];
      }
      drift(q, p, active, eps);
      lpn = gradient(q, gn);
      HMC_LANES_LOOP {
        if (active[l] != 0.0) lp[l] = lpn[l];
      }
      for (int l = 0; l < W; ++l) {
        if (active[l] != 0.0 && !math::isfinite(lpn[l])) active[l] = 0.0;
      }
      for (int j = 0; j < dim; ++j) {
        HMC_LANES_LOOP {
          const double gj = active[l] != 0.0 ? gn[j][l] : g[j][l];
          g[j][l] = gj;
          p[j][l] = active[l] != 0.0 ? p[j][l] + half * gj : p[j][l];
        }
      }
    }

    for (int l = 0; l < W && first + l < n; ++l) {
      finish(first + l, LaneRow{q, l}, LaneRow{g, l}, LaneRow{p, l}, lp[l], h0[l], steps[l]);
    }
  }

 private:
  /// log p and its gradient (into grad) for the block, in whichever form the model has.
  Pack gradient(Pack* q, Pack* grad) const {
    if constexpr (model::has_lane_scratch_gradient<Model>()) {
      return t.model.log_density_gradient_lanes(PackRow{q}, PackRow{grad}, lane_scratch(t.model.lane_scratch_size()));
    } else {
      return t.model.template log_density_gradient_t<Pack>(PackRow{q}, PackRow{grad});
    }
  }

  /// q += eps Σ p on the active lanes.
  void drift(Pack* q, const Pack* p, const Pack& active, double eps) const {
    const int dim = t.dim;
    const Metric& m = t.metric;
    if (!m.dense) {
      for (int j = 0; j < dim; ++j) {
        const double d = m.diag(j);
        HMC_LANES_LOOP q[j][l] = active[l] != 0.0 ? q[j][l] + eps * d * p[j][l] : q[j][l];
      }
      return;
    }
    for (int i = 0; i < dim; ++i) {
      Pack v(0.0);
      for (int k = 0; k < dim; ++k) {
        const double f = m.full(i, k);
        HMC_LANES_LOOP v[l] += f * p[k][l];
      }
      HMC_LANES_LOOP q[i][l] = active[l] != 0.0 ? q[i][l] + eps * v[l] : q[i][l];
    }
  }

  /// The Metropolis test and records of particle i, whose trajectory ended at (q, grad, p)
  /// with log density lp1: HmcTransition's, with the start point still in the state.
  void finish(int i, const LaneRow& q, const LaneRow& grad, const LaneRow& p, double lp1, double h0, int steps) const {
    const rng::ParticleStream stream(t.seed, static_cast<std::uint64_t>(t.first_particle + i));
    const auto v = t.judge(stream, lp1, h0, t.metric.kinetic(p));
    const Row q0 = row(t.state.q, i);
    t.record.stats(i, 0) = v.accept_prob;
    t.record.stats(i, 1) = (t.centre.extent(0) > 0 && v.accept_prob > 0.0)
                               ? v.accept_prob * t.chees_term(q, q0, p, steps * t.step_size)
                               : 0.0;
    if (v.accepted) {
      t.state.lp(i) = lp1;
      const Row g0 = row(t.state.grad, i);
      for (int j = 0; j < t.dim; ++j) {
        q0(j) = q(j);
        g0(j) = grad(j);
      }
    }
    t.record_transition(i, v, steps, q0);
  }
};

}  // namespace hmc::sampler
