#pragma once
/// \file
/// \brief The No-U-Turn sampler: `/sampler/algorithm` `nuts`.
///
/// Multinomial NUTS (Betancourt 2017, as Stan and NumPyro run it), built iteratively,
/// one leapfrog step at a time, with no recursion:
///
/// - the trajectory doubles in a random direction until it turns, diverges or reaches
///   2^max_tree_depth - 1 steps; doubling `depth` adds a subtree of 2^depth steps to
///   the end in that direction (the "work" edge moves; the other edge waits in scratch);
/// - within a subtree the sample is chosen progressively, each new point replacing the
///   current one with probability w / Σw (w = exp(-ΔH / T)); a finished subtree's sample
///   replaces the tree's with probability min(1, W_subtree / W_tree) (biased progressive
///   sampling);
/// - the generalised U-turn criterion p♯₋·ρ > 0 and p♯₊·ρ > 0 (p♯ = Σ p, ρ the sum of
///   the momenta) is checked on every binary subtree of the new subtree as soon as its
///   last step is taken, with the momenta and partial sums of ρ kept at ≤ max_tree_depth
///   checkpoints (the iterative scheme of NumPyro's iterative NUTS), and on the whole
///   tree when a subtree joins it: every binary subtree of the final tree is tested
///   once, the same way, whichever of its points the tree was built from;
/// - a step whose energy error exceeds 1000 (or whose log density is not finite) is a
///   divergence and ends the transition; a turning or divergent subtree's points are
///   not sampled from.
///
/// The acceptance statistic is the mean of min(1, exp(-ΔH / T)) over the tree's steps
/// (Stan's), which dual averaging drives to /sampler/adapt/target_accept. The
/// transition of one particle per thread (GPU and host), and on the host a lane path:
/// kLanes particles per thread, each lane its own tree, the leapfrog steps in lock step
/// and a finished lane taking steps of size 0 (lanes.hpp) until the block's last tree
/// is done. Random numbers: sampler/rng_uses.hpp.

#include "hmc/core/pack.hpp"
#include "hmc/sampler/kernel.hpp"
#include "hmc/sampler/lanes.hpp"
#include "hmc/sampler/leapfrog.hpp"
#include "hmc/sampler/rng_uses.hpp"

#include <vector>

namespace hmc::sampler {

/// Most doublings /sampler/max_tree_depth allows (trajectories of 2^20 - 1 steps).
inline constexpr int kMaxTreeDepth = 20;

template <class Model>
struct NutsKernel {
  struct Settings {
    int max_depth = 10;
  };
  static constexpr const char* name = "nuts";
  /// Columns of stat_columns().
  enum Column : int {
    kLp = 0,
    kAccept,
    kStepSize,
    kTreeDepth,
    kMaxDepth,
    kSteps,
    kDiverging,
    kEnergy,
    kEnergyError,
  };
  /// ArviZ 1.x's sample_stats names.
  static std::vector<StatColumn> stat_columns() {
    return {{"lp", StatType::kReal, false},
            {"acceptance_rate", StatType::kReal, false},
            {"step_size", StatType::kReal, true},
            {"tree_depth", StatType::kInteger, true},
            {"reached_max_treedepth", StatType::kBool, true},
            {"n_steps", StatType::kInteger, true},
            {"diverging", StatType::kBool, true},
            {"energy", StatType::kReal, false},
            {"energy_error", StatType::kReal, false}};
  }
  /// Parts of a particle's scratch row, dim doubles each: the moving edge (q, p, ∇; the
  /// lane path keeps it in Packs), the other edge, the subtree's sample (q, ∇), ρ of the
  /// tree and of the subtree, and the checkpoints (max_depth momenta, max_depth partial
  /// sums).
  enum Part : int { kWorkQ = 0, kWorkP, kWorkG, kOtherQ, kOtherP, kOtherG, kSubQ, kSubG, kRho, kRhoSub, kCheckpoints };
  static int scratch_size(int dim, const Settings& s) { return (kCheckpoints + 2 * s.max_depth) * dim; }
  static Settings settings(const sampler::Settings& s) { return Settings{s.max_tree_depth}; }
  static bool lanes_for(int dim) { return use_lanes<Model>(dim); }

  NutsKernel(const Model& m, const Settings& s, const StateView& rows) : model(m), opts(s), scratch(rows) {}

  Model model;
  Settings opts;
  StateView scratch;
  Step step;

  /// The bookkeeping of one particle's tree (its vectors are in its scratch row).
  struct Tree {
    double h0;
    /// Weights exp(-(H - H0) / T) are summed relative to exp(ref): w_tree of the tree,
    /// w_sub of the subtree being built (ref is 0 unless a weight would overflow).
    double ref, w_tree, w_sub;
    double sum_accept, h_z, h_sub, lp_sub, u_top, u_leaf;
    int depth, leaf, n_steps, dir, work_dir;
    bool diverging, done;
  };

  KOKKOS_INLINE_FUNCTION Row part(int i, int k) const {
    return Row{&scratch(i, k * step.dim), static_cast<std::ptrdiff_t>(scratch.stride(1))};
  }
  /// Checkpoint k of the momenta (rho = false) or of the partial sums of ρ.
  KOKKOS_INLINE_FUNCTION Row checkpoint(int i, int k, bool rho) const {
    return part(i, kCheckpoints + (rho ? opts.max_depth : 0) + k);
  }

  template <class A, class B>
  KOKKOS_INLINE_FUNCTION void copy(const A& to, const B& from) const {
    for (int j = 0; j < step.dim; ++j) to(j) = from(j);
  }
  template <class A, class B>
  KOKKOS_INLINE_FUNCTION void swap(const A& a, const B& b) const {
    for (int j = 0; j < step.dim; ++j) {
      const double t = a(j);
      a(j) = b(j);
      b(j) = t;
    }
  }
  /// The uniform of the progressive choice at step s (0-based) of particle i's tree:
  /// steps 2m and 2m + 1 share the two uniforms of use kUseLeaf + m.
  KOKKOS_INLINE_FUNCTION double leaf_uniform(int i, Tree& t, int s) const {
    if ((s & 1) != 0) return t.u_leaf;
    double u0;
    step.stream(i).uniform2(step.iteration, kUseLeaf + static_cast<std::uint32_t>(s / 2), u0, t.u_leaf);
    return u0;
  }

  /// Starts particle i's tree: the momentum is in (wq, wp, wg), the work edge, which
  /// holds the particle's position and gradient; rs is where the subtree's momentum sum is
  /// kept (the scratch row's, or the lane path's Packs).
  template <class V, class R>
  KOKKOS_INLINE_FUNCTION void begin(int i, Tree& t, const V& wq, const V& wp, const V& wg, const R& rs) const {
    t.h0 = -step.state.lp(i) + step.metric.kinetic(wp);
    copy(part(i, kOtherQ), wq);
    copy(part(i, kOtherP), wp);
    copy(part(i, kOtherG), wg);
    copy(part(i, kRho), wp);
    t.ref = 0.0;
    t.w_tree = 1.0;  // the starting point
    t.h_z = t.h0;
    t.depth = 0;
    t.n_steps = 0;
    t.sum_accept = 0.0;
    t.diverging = false;
    t.done = false;
    t.work_dir = 1;
    start_subtree(i, t, wq, wp, wg, rs);
  }

  /// The next doubling: its direction and biased-sampling uniform; the work edge is put
  /// on that side.
  template <class V, class R>
  KOKKOS_INLINE_FUNCTION void start_subtree(int i, Tree& t, const V& wq, const V& wp, const V& wg, const R& rs) const {
    double u_dir;
    step.stream(i).uniform2(step.iteration, kUseDoubling + static_cast<std::uint32_t>(t.depth), u_dir, t.u_top);
    t.dir = u_dir < 0.5 ? -1 : 1;
    if (t.dir != t.work_dir) {
      swap(wq, part(i, kOtherQ));
      swap(wp, part(i, kOtherP));
      swap(wg, part(i, kOtherG));
      t.work_dir = t.dir;
    }
    for (int j = 0; j < step.dim; ++j) rs(j) = 0.0;
    t.leaf = 0;
    t.w_sub = 0.0;
  }

  /// What the step computed for a tree: log density and kinetic energy at the new point;
  /// the lane path also gives the weight exp(lw - ref) and the leaf's uniform (computed
  /// for all lanes at once) and has added p to the momentum sum; the scalar path leaves
  /// those to after_step (w, u negative; rho_added false).
  struct StepResult {
    double lp, kinetic;
    double w = -1.0, u = -1.0;
    bool rho_added = false;
  };

  /// The weighing of a step: whether it diverged, whether its point becomes the
  /// subtree's choice, its energy.
  struct Weighed {
    bool diverged, take;
    double h;
  };

  /// The energy and weight of the point the work edge has moved to: the running sums,
  /// the divergence test and the progressive choice (not yet the copy of the point).
  KOKKOS_INLINE_FUNCTION Weighed weigh(int i, Tree& t, const StepResult& in) const {
    const int s = t.n_steps++;
    const double lp = in.lp;
    const double h = -lp + in.kinetic;
    const double delta = energy_error(lp, t.h0, in.kinetic);
    const double lw = -delta / step.temperature;
    if (is_divergence(delta)) {
      t.sum_accept += math::exp(lw);
      t.diverging = true;
      return {true, false, h};
    }
    double w = in.w;
    if (lw - t.ref > 600.0) {
      // Far below the starting energy: rescale the sums before exp(lw - ref) overflows.
      const double f = math::exp(t.ref - lw);
      t.w_tree *= f;
      t.w_sub *= f;
      t.ref = lw;
      w = -1.0;
    }
    if (w < 0.0) w = math::exp(lw - t.ref);
    t.sum_accept += lw >= 0.0 ? 1.0 : (t.ref == 0.0 ? w : math::exp(lw));
    // Progressive sampling within the subtree: the new point with probability w / Σw.
    const double w_sub = t.w_sub + w;
    const bool take = t.leaf == 0 || (in.u >= 0.0 ? in.u : leaf_uniform(i, t, s)) * w_sub < w;
    if ((s & 1) == 0 && t.leaf == 0 && in.u < 0.0) leaf_uniform(i, t, s);  // the pair's second, for step s + 1
    if (take) {
      t.lp_sub = lp;
      t.h_sub = h;
    }
    t.w_sub = w_sub;
    return {false, take, h};
  }

  /// \brief The generalised U-turn criterion of a tree or subtree whose edges have the
  /// momenta p_minus and p_plus and whose momentum sum is rho(j): adds p♯₋·ρ to da and
  /// p♯₊·ρ to db (T: double, or a Pack of lanes). The one U-turn test of the kernel: the
  /// binary subtrees of a new subtree, the whole tree, and the lane path's subtrees.
  template <class T, class PM, class PP, class Rho>
  KOKKOS_INLINE_FUNCTION void u_turn_dots(const PM& p_minus, const PP& p_plus, const Rho& rho, T& da, T& db) const {
    for (int j = 0; j < step.dim; ++j) {
      const T r = rho(j);
      da += step.metric.velocity(p_minus, j) * r;
      db += step.metric.velocity(p_plus, j) * r;
    }
  }
  /// Whether a tree with the dot products (da, db) of u_turn_dots goes on (it has not turned).
  static KOKKOS_INLINE_FUNCTION bool no_u_turn(double da, double db) { return da > 0.0 && db > 0.0; }

  /// The U-turn checkpoints of leaf n of a subtree: an even leaf stores its momentum and
  /// partial sum at checkpoint `store`; an odd one ends as many binary subtrees as its
  /// trailing one bits, to be checked against checkpoints [lo, hi] (hi: the one bits of n
  /// above the last).
  struct Checks {
    int store, lo, hi;
  };
  static KOKKOS_INLINE_FUNCTION Checks checks_of(int n) {
    int hi = 0, ones = 0;
    for (int m = n >> 1; m > 0; m >>= 1) hi += m & 1;
    for (int m = n; (m & 1) != 0; m >>= 1) ++ones;
    if ((n & 1) == 0) return {hi, 0, -1};
    return {-1, hi - ones + 1, hi};
  }

  /// The work edge has moved one step: weigh, sample, check (the scalar path; the lane
  /// path does the same, its vector parts for all lanes at once).
  template <class V, class R>
  KOKKOS_INLINE_FUNCTION void after_step(int i, Tree& t, const V& wq, const V& wp, const V& wg, const R& rs,
                                         const StepResult& in) const {
    const int dim = step.dim;
    const Weighed m = weigh(i, t, in);
    if (m.diverged) {
      finish(i, t);
      return;
    }
    if (m.take) {
      copy(part(i, kSubQ), wq);
      copy(part(i, kSubG), wg);
    }
    if (!in.rho_added) {
      for (int j = 0; j < dim; ++j) rs(j) += wp(j);
    }
    const Checks c = checks_of(t.leaf);
    if (c.store >= 0) {
      copy(checkpoint(i, c.store, false), wp);
      copy(checkpoint(i, c.store, true), rs);
    }
    for (int k = c.hi; k >= c.lo; --k) {
      // ρ of the binary subtree from checkpoint k's leaf to here.
      const Row pk = checkpoint(i, k, false), rk = checkpoint(i, k, true);
      double da = 0.0, db = 0.0;
      u_turn_dots(
          pk, wp, [&](int j) { return rs(j) - rk(j) + pk(j); }, da, db);
      if (!no_u_turn(da, db)) {
        finish(i, t);  // a turning subtree: its points are not sampled from
        return;
      }
    }
    advance(i, t, wq, wp, wg, rs, part(i, kSubQ), part(i, kSubG));
  }

  /// The step's point passed the checks: the next leaf, or the subtree is complete.
  template <class V, class R, class S>
  KOKKOS_INLINE_FUNCTION void advance(int i, Tree& t, const V& wq, const V& wp, const V& wg, const R& rs,
                                      const S& sub_q, const S& sub_g) const {
    if (++t.leaf < (1 << t.depth)) return;
    join(i, t, wq, wp, wg, rs, sub_q, sub_g);
  }

  /// The subtree is complete and valid: its sample may replace the tree's; the tree
  /// doubles, then goes on unless it turns or is as deep as allowed.
  template <class V, class R, class S>
  KOKKOS_INLINE_FUNCTION void join(int i, Tree& t, const V& wq, const V& wp, const V& wg, const R& rs, const S& sub_q,
                                   const S& sub_g) const {
    const int dim = step.dim;
    if (t.u_top * t.w_tree < t.w_sub) {  // probability min(1, W_subtree / W_tree)
      copy(row(step.state.q, i), sub_q);
      copy(row(step.state.grad, i), sub_g);
      step.state.lp(i) = t.lp_sub;
      t.h_z = t.h_sub;
    }
    t.w_tree += t.w_sub;
    // The criterion on the whole tree, as on every binary subtree inside the new one:
    // the same test on every binary subtree of the final tree, whichever point it was
    // built from, which detailed balance needs. (Stan's extra checks across a junction
    // would have to be made at every junction inside a subtree too, not only here.)
    const Row rho = part(i, kRho);
    for (int j = 0; j < dim; ++j) rho(j) += rs(j);
    double a = 0.0, b = 0.0;
    u_turn_dots(part(i, kOtherP), wp, rho, a, b);
    ++t.depth;
    const bool on = no_u_turn(a, b);
    if (!on || t.depth >= opts.max_depth) {
      finish(i, t);
      return;
    }
    start_subtree(i, t, wq, wp, wg, rs);
  }

  /// The transition is complete: the tree's sample is in the state.
  KOKKOS_INLINE_FUNCTION void finish(int i, Tree& t) const {
    t.done = true;
    const double accept = t.n_steps > 0 ? t.sum_accept / t.n_steps : 0.0;
    step.tally(i, accept, t.diverging, t.n_steps);
    step.record_params(model, i, row(step.state.q, i));
    step.record_stat(i, kLp, step.state.lp(i));
    step.record_stat(i, kAccept, accept);
    step.record_stat(i, kStepSize, step.step_size);
    step.record_stat(i, kTreeDepth, t.depth);
    step.record_stat(i, kMaxDepth, t.depth >= opts.max_depth ? 1.0 : 0.0);
    step.record_stat(i, kSteps, t.n_steps);
    step.record_stat(i, kDiverging, t.diverging ? 1.0 : 0.0);
    step.record_stat(i, kEnergy, t.h_z);
    step.record_stat(i, kEnergyError, t.h_z - t.h0);
  }

  /// One particle's transition (a thread each).
  KOKKOS_INLINE_FUNCTION void operator()(const int i) const {
    const Row wq = part(i, kWorkQ), wp = part(i, kWorkP), wg = part(i, kWorkG);
    copy(wq, row(step.state.q, i));
    copy(wg, row(step.state.grad, i));
    step.draw_momentum(step.stream(i), wp);
    const Row rs = part(i, kRhoSub);
    Tree t;
    begin(i, t, wq, wp, wg, rs);
    const RowGradient<Model> gradient{model, step.state.scratch(i)};
    while (!t.done) {
      StepResult r;
      r.lp = leapfrog_step(wq, wp, wg, step.metric, step.dim, t.dir * step.step_size, gradient);
      r.kinetic = step.metric.kinetic(wp);
      after_step(i, t, wq, wp, wg, rs, r);
    }
  }

  /// This thread's buffer of the lane path's checkpoints: at least `packs` Packs (kept
  /// from call to call; apart from lane_scratch(), which the model may use).
  static Pack* nuts_lane_buffer(int packs) {
    static thread_local std::vector<Pack> buffer;
    if (buffer.size() < static_cast<std::size_t>(packs)) buffer.resize(static_cast<std::size_t>(packs));
    return buffer.data();
  }

  /// Particles per task of the lane path: a thread's kLanes lanes work through them,
  /// each lane taking the next particle as soon as its tree is done.
  static constexpr int kLaneTask = 8 * kLanes;
  static int lane_tasks(int n) { return (n + kLaneTask - 1) / kLaneTask; }

  /// The transitions of the particles [task · kLaneTask, task · kLaneTask + kLaneTask):
  /// kLanes trees at a time, their leapfrog steps in lock step (lanes.hpp), a lane that
  /// finishes its tree starting the next particle's; host only. A particle computes the
  /// same values in any lane and whichever particles share its lanes.
  void lanes(const int task) const {
    if constexpr (lanes_available<Model>()) {
      constexpr int W = kLanes;
      const int n = static_cast<int>(step.state.lp.extent(0));
      const int dim = step.dim;
      const int last = n < (task + 1) * kLaneTask ? n : (task + 1) * kLaneTask;
      const int first_of_task = task * kLaneTask;
      int next = first_of_task;
      // The work edges, the subtrees' momentum sums and chosen points, and (in this
      // thread's buffer) the U-turn checkpoints: momenta and partial sums, [depth][coordinate].
      Pack q[kMaxLaneDim], p[kMaxLaneDim], g[kMaxLaneDim], rs[kMaxLaneDim], sub_q[kMaxLaneDim], sub_g[kMaxLaneDim];
      Pack* const ckpt = nuts_lane_buffer(2 * opts.max_depth * dim + (kLaneTask / W) * dim);
      // The task's momentum normals, drawn for 8 particles at a time by the vector code
      // of the HMC lanes (lane_momenta): [block of the task][coordinate], lane = particle.
      Pack* const normals = ckpt + 2 * opts.max_depth * dim;
      for (int b = 0; first_of_task + b * W < last; ++b) {
        rng::ParticleStream block_streams[W];
        for (int l = 0; l < W; ++l) {
          const int i = first_of_task + b * W + l;
          block_streams[l] = step.stream(i < last ? i : first_of_task);
        }
        lane_momenta(block_streams, step.iteration, dim, normals + b * dim);
      }
      Tree t[W];
      int particle[W];
      rng::ParticleStream streams[W];
      // Lane l starts the next particle of the task, or is done.
      const auto start = [&](int l) {
        if (next >= last) {
          t[l].done = true;
          return;
        }
        const int i = particle[l] = next++;
        streams[l] = step.stream(i);
        const LaneRow lq{q, l}, lp{p, l}, lg{g, l};
        for (int j = 0; j < dim; ++j) {
          lq(j) = step.state.q(i, j);
          lg(j) = step.state.grad(i, j);
        }
        const int b = (i - first_of_task) / W, bl = (i - first_of_task) % W;
        for (int j = 0; j < dim; ++j) lp(j) = normals[b * dim + j][bl];
        step.metric.momentum_from_normals(lp, math::sqrt(step.temperature));
        begin(i, t[l], lq, lp, lg, LaneRow{rs, l});
      };
      for (int l = 0; l < W; ++l) start(l);
      const LaneGradient<Model> gradient{model};
      const double temperature = step.temperature;
      for (;;) {
        Pack eps, h0, ref;
        std::uint32_t use[W];
        int running = 0;
        for (int l = 0; l < W; ++l) {
          eps[l] = t[l].done ? 0.0 : t[l].dir * step.step_size;
          h0[l] = t[l].h0;
          ref[l] = t[l].ref;
          use[l] = kUseLeaf + static_cast<std::uint32_t>(t[l].n_steps / 2);
          running += !t[l].done;
        }
        if (running == 0) break;
        const Pack lp = leapfrog_step(PackRow{q}, PackRow{p}, PackRow{g}, step.metric, dim, eps, gradient);
        // What every lane's bookkeeping needs, for all lanes at once: kinetic energy,
        // momentum sum, weight, the uniforms of the step's pair.
        const Pack kinetic = step.metric.kinetic(PackRow{p});
        for (int j = 0; j < dim; ++j) rs[j] += p[j];
        Pack lw, u0, u1;
        HMC_LANES_LOOP lw[l] = -energy_error(lp[l], h0[l], kinetic[l]) / temperature;
        const Pack w = math::exp(lw - ref);
        lane_uniform2(streams, step.iteration, use, u0, u1);
        // Each lane's control (scalar), then the parts that touch the coordinates for
        // all lanes at once: the subtree's choice, the checkpoints, the U-turn tests.
        Pack take(0.0);
        int store[W], lo[W], hi[W];
        bool live[W];
        int kmax = -1, kmin = opts.max_depth, smax = -1;
        for (int l = 0; l < W; ++l) {
          live[l] = false;
          store[l] = -1;
          lo[l] = 0;
          hi[l] = -1;
          if (t[l].done) continue;
          StepResult r;
          r.lp = lp[l];
          r.kinetic = kinetic[l];
          r.w = lw[l] > -math::infinity() ? w[l] : -1.0;
          r.u = (t[l].n_steps & 1) == 0 ? u0[l] : u1[l];
          const Weighed m = weigh(particle[l], t[l], r);
          if (m.diverged) {
            finish(particle[l], t[l]);
            start(l);
            continue;
          }
          live[l] = true;
          take[l] = m.take ? 1.0 : 0.0;
          const Checks c = checks_of(t[l].leaf);
          store[l] = c.store;
          lo[l] = c.lo;
          hi[l] = c.hi;
          smax = c.store > smax ? c.store : smax;
          if (c.hi >= c.lo) {
            kmax = c.hi > kmax ? c.hi : kmax;
            kmin = c.lo < kmin ? c.lo : kmin;
          }
        }
        bool any_take = false;
        unsigned stores = 0;  // bit k: some lane stores checkpoint k
        for (int l = 0; l < W; ++l) {
          any_take = any_take || take[l] != 0.0;
          if (store[l] >= 0) stores |= 1u << store[l];
        }
        if (any_take) {
          for (int j = 0; j < dim; ++j) {
            HMC_LANES_LOOP {
              sub_q[j][l] = take[l] != 0.0 ? q[j][l] : sub_q[j][l];
              sub_g[j][l] = take[l] != 0.0 ? g[j][l] : sub_g[j][l];
            }
          }
        }
        for (int k = 0; k <= smax; ++k) {
          if ((stores >> k & 1u) == 0) continue;
          Pack* cp = ckpt + (2 * k) * dim;
          Pack* cr = ckpt + (2 * k + 1) * dim;
          for (int j = 0; j < dim; ++j) {
            HMC_LANES_LOOP {
              cp[j][l] = store[l] == k ? p[j][l] : cp[j][l];
              cr[j][l] = store[l] == k ? rs[j][l] : cr[j][l];
            }
          }
        }
        bool turned[W] = {};
        for (int k = kmax; k >= kmin; --k) {
          bool any = false;
          for (int l = 0; l < W; ++l) any = any || (live[l] && !turned[l] && lo[l] <= k && k <= hi[l]);
          if (!any) continue;
          const PackRow cp{ckpt + (2 * k) * dim};
          const Pack* cr = ckpt + (2 * k + 1) * dim;
          Pack da(0.0), db(0.0);
          u_turn_dots(
              cp, PackRow{p}, [&](int j) { return Pack(rs[j] - cr[j] + cp(j)); }, da, db);
          for (int l = 0; l < W; ++l) {
            if (live[l] && lo[l] <= k && k <= hi[l] && !no_u_turn(da[l], db[l])) turned[l] = true;
          }
        }
        for (int l = 0; l < W; ++l) {
          if (!live[l]) continue;
          if (turned[l]) {
            finish(particle[l], t[l]);  // a turning subtree: its points are not sampled from
          } else {
            advance(particle[l], t[l], LaneRow{q, l}, LaneRow{p, l}, LaneRow{g, l}, LaneRow{rs, l}, LaneRow{sub_q, l},
                    LaneRow{sub_g, l});
          }
          if (t[l].done) start(l);
        }
      }
    }
  }
};

}  // namespace hmc::sampler
