#pragma once
/// \file
/// \brief Transitions on the host, vectorised across particles: a block of `kLanes`
/// particles advances in lock step, one SIMD lane each (the kernels' `lanes()`:
/// hmc_kernel.hpp, nuts_kernel.hpp).
///
/// A kernel's scalar transition advances one particle per thread, which suits a GPU
/// and leaves a CPU's vector units idle for models of small dimension. In the lane
/// path one thread takes a block of kLanes consecutive particles, holds their q, p and
/// ∇ in [coordinate][lane] arrays, and runs every leapfrog step (leapfrog_step on
/// PackRows) as loops over the lanes under `#pragma omp simd`, the model's gradient
/// included. A lane that does not move in a step (its trajectory has ended) takes a
/// step of size 0, which keeps its values exactly, so a lane's draws do not depend on
/// the other particles of its block.
///
/// The algorithm is that of the scalar transition, random numbers included. The draws
/// are not bitwise those of the scalar path: the vector exp/log (core/simd_math.hpp)
/// differ from the scalar ones in the last bits. They do not depend on the number of
/// ranks or threads: every particle runs through the same vector code, a block that is
/// not full being padded with copies of its first particle whose results are discarded.
///
/// Used when the execution space is the host, the model writes its gradient as a
/// template over the number type (`log_density_gradient_t<T>`, so that T = Pack
/// computes a whole block) or as a block gradient with scratch (below), and its
/// dimension is at most kMaxLaneDim (use_lanes()); else the scalar transition.
///
/// A model with per-particle scratch (the HMM) takes part by writing
///   int lane_scratch_size() const;  // Packs per block
///   Pack log_density_gradient_lanes(const PackRow& q, const PackRow& grad, Pack* scratch) const;
/// the scratch being one thread's buffer (lane_scratch()), reused by every block that
/// thread runs, so it stays in cache. Such a model must compute in every lane what its
/// scalar log_density_gradient computes, or say where it does not.

#include "hmc/core/pack.hpp"
#include "hmc/core/philox.hpp"
#include "hmc/model/concept.hpp"
#include "hmc/sampler/leapfrog.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <type_traits>
#include <utility>
#include <vector>

#if defined(__AVX512F__) && !defined(__CUDACC__)
#include <immintrin.h>
#endif

namespace hmc::sampler {

/// Largest dimension the lane kernel takes: its arrays live on the thread's stack
/// (4 x kMaxLaneDim Packs = 32 KiB).
inline constexpr int kMaxLaneDim = 128;

/// True where the default execution space runs on the host.
inline constexpr bool kHostExecution = std::is_same_v<MemSpace, Kokkos::HostSpace>;

/// Whether the lane kernel exists for this model: on the host, for a model that
/// writes its gradient as a template over the number type (log_density_gradient_t) or
/// as a block gradient with scratch (log_density_gradient_lanes, which an automatic
/// gradient supplies: hmc/model/autodiff.hpp).
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

/// Grows every host thread's lane scratch to at least `packs` Packs, before sampling, so
/// that no block allocates it inside the loop (tests/unit/test_allocations.cpp): one
/// iteration per thread of the pool (a static schedule of chunk 1 over as many iterations
/// as threads).
inline void reserve_lane_scratch(int packs) {
  // The host's execution space, whatever the device's: the lanes run on host threads, and a
  // non-template function is compiled whole (a CUDA build too, where a host lambda may not
  // go to the device's parallel_for).
  using Host = Kokkos::DefaultHostExecutionSpace;
  const int threads = Host().concurrency();
  Kokkos::parallel_for("hmc::reserve_lane_scratch",
                       Kokkos::RangePolicy<Host, Kokkos::Schedule<Kokkos::Static>>(0, threads).set_chunk_size(1),
                       [packs](int) { (void)lane_scratch(packs); });
  Host().fence();
}

/// Whether the loop takes the lane path for this model and dimension.
/// HMC_SCALAR_TRANSITION=1 in the environment turns it off (A/B checks).
template <class Model>
bool use_lanes(int dim) {
  const char* off = std::getenv("HMC_SCALAR_TRANSITION");
  return lanes_available<Model>() && dim >= 1 && dim <= kMaxLaneDim && !(off != nullptr && off[0] == '1');
}

/// \brief ParticleStream::uniform2 of kLanes streams at once, bit for bit: lane l's
/// uniforms of use `use[l]` from `streams[l]`. With AVX-512, Philox-4x32-10 with each 32-bit
/// word in a 64-bit lane of one register, so that each round's 32 x 32 -> 64-bit products
/// of all lanes are two vpmuludq with no shuffles (the compiler, vectorising the scalar
/// code, packs the words in 32-bit lanes and spends most of its time moving them, or
/// uses the slower 64-bit multiply); elsewhere the scalar code in a loop over the lanes.
inline void lane_uniform2(const rng::ParticleStream* streams, std::uint32_t iteration, const std::uint32_t* use,
                          Pack& u0, Pack& u1) {
#if defined(__AVX512F__) && !defined(__CUDACC__)
  static_assert(kLanes == 8, "one 512-bit register of 64-bit words");
  alignas(64) std::uint64_t w[6][kLanes];
  for (int l = 0; l < kLanes; ++l) {
    w[0][l] = use[l];
    w[1][l] = iteration;
    w[2][l] = streams[l].id(0);
    w[3][l] = streams[l].id(1);
    w[4][l] = streams[l].key(0);
    w[5][l] = streams[l].key(1);
  }
  __m512i c0 = _mm512_load_si512(w[0]), c1 = _mm512_load_si512(w[1]), c2 = _mm512_load_si512(w[2]),
          c3 = _mm512_load_si512(w[3]), k0 = _mm512_load_si512(w[4]), k1 = _mm512_load_si512(w[5]);
  const __m512i low = _mm512_set1_epi64(0xFFFFFFFFll), mul0 = _mm512_set1_epi64(rng::kPhiloxMul0),
                mul1 = _mm512_set1_epi64(rng::kPhiloxMul1), weyl0 = _mm512_set1_epi64(rng::kPhiloxWeyl0),
                weyl1 = _mm512_set1_epi64(rng::kPhiloxWeyl1);
  for (int round = 0; round < 10; ++round) {  // philox4x32_10's round (core/philox.hpp)
    // 32 x 32 -> 64 bits. The maskz forms (all lanes) because GCC 12 warns about the
    // undefined pass-through of the plain ones (its bug 105593).
    const __m512i p0 = _mm512_maskz_mul_epu32(0xFF, c0, mul0), p1 = _mm512_maskz_mul_epu32(0xFF, c2, mul1);
    c0 = _mm512_xor_si512(_mm512_xor_si512(_mm512_maskz_srli_epi64(0xFF, p1, 32), c1), k0);
    c1 = _mm512_and_si512(p1, low);
    c2 = _mm512_xor_si512(_mm512_xor_si512(_mm512_maskz_srli_epi64(0xFF, p0, 32), c3), k1);
    c3 = _mm512_and_si512(p0, low);
    k0 = _mm512_and_si512(_mm512_add_epi64(k0, weyl0), low);
    k1 = _mm512_and_si512(_mm512_add_epi64(k1, weyl1), low);
  }
  _mm512_store_si512(w[0], c0);
  _mm512_store_si512(w[1], c1);
  _mm512_store_si512(w[2], c2);
  _mm512_store_si512(w[3], c3);
  HMC_LANES_LOOP {  // rng::to_unit_double on 64-bit words (below 2^32), which keeps the loop in 64-bit lanes
    u0[l] = static_cast<double>(((w[0][l] >> 5) << 26) | (w[1][l] >> 6)) * (1.0 / 9007199254740992.0);
    u1[l] = static_cast<double>(((w[2][l] >> 5) << 26) | (w[3][l] >> 6)) * (1.0 / 9007199254740992.0);
  }
#else
  HMC_LANES_LOOP streams[l].uniform2(iteration, use[l], u0[l], u1[l]);
#endif
}
/// lane_uniform2 with one use for every lane.
inline void lane_uniform2(const rng::ParticleStream* streams, std::uint32_t iteration, std::uint32_t use, Pack& u0,
                          Pack& u1) {
  std::uint32_t uses[kLanes];
  for (int l = 0; l < kLanes; ++l) uses[l] = use;
  lane_uniform2(streams, iteration, uses, u0, u1);
}

/// \brief The momentum normals of Step::draw_momentum for a block of lanes, a pair of
/// coordinates for all lanes at a time: p[j][l] for lane l's stream.
inline void lane_momenta(const rng::ParticleStream* streams, std::uint32_t iteration, int dim, Pack* p) {
  for (int j = 0; j < dim; j += 2) {
    // ParticleStream::normal2 in separate loops over the lanes: one loop with both
    // sin and cos of the angle would become one sincos call, which has no vector version.
    Pack u0, u1, radius, angle;
    lane_uniform2(streams, iteration, static_cast<std::uint32_t>(j / 2), u0, u1);
    HMC_LANES_LOOP {
      radius[l] = rng::ParticleStream::box_muller_radius(u0[l]);
      angle[l] = rng::ParticleStream::box_muller_angle(u1[l]);
    }
    HMC_LANES_LOOP p[j][l] = radius[l] * math::cos(angle[l]);
    if (j + 1 < dim) {
      HMC_LANES_LOOP p[j + 1][l] = radius[l] * math::sin(angle[l]);
    }
  }
}

/// \brief Particles per lane task for n particles: max_task (a multiple of kLanes), or fewer (a
/// multiple of kLanes) where there would be fewer tasks than threads. The draws do not depend on it.
inline int lane_task_size(int n, int max_task) {
  const int threads = ExecSpace().concurrency();
  const int blocks = (n + kLanes - 1) / kLanes;
  const int per_thread = threads > 0 ? (blocks + threads - 1) / threads : blocks;
  return kLanes * (per_thread < 1 ? 1 : (per_thread > max_task / kLanes ? max_task / kLanes : per_thread));
}
/// The lane tasks of n particles, lane_task_size(n, max_task) each.
inline int lane_tasks(int n, int max_task) {
  const int size = lane_task_size(n, max_task);
  return (n + size - 1) / size;
}

/// \brief The particles [first, first + count) of one lane task (count <= kMaxTask) in blocks of
/// kLanes, sorted by their step counts (ties by index), so that the lanes of a block take about as
/// many steps (with jittered lengths, blocks of consecutive particles left about 45% of the
/// lane-steps idle). `stream(i)` is local particle i's random stream; with `jitter`, particle i
/// takes steps_of(u) steps for its uniform u of use kUseJitter (else steps_of(0)); its Metropolis
/// uniform is that of use kUseAccept. block(particle, steps, u_accept, m) runs one block: lane l
/// is particle[l], the first m lanes count, the others repeat the block's first particle. A
/// particle computes the same values in any lane and block, so the order changes no draw.
template <int kMaxTask, class Stream, class StepsOf, class Block>
void sorted_lane_blocks(int first, int count, std::uint32_t iteration, std::uint32_t use_jitter,
                        std::uint32_t use_accept, bool jitter, const Stream& stream, const StepsOf& steps_of,
                        const Block& block) {
  int steps[kMaxTask], order[kMaxTask];
  double accept_u[kMaxTask];
  for (int b = 0; b < count; b += kLanes) {
    // The jitter and Metropolis uniforms of kLanes particles at once (Philox in vector
    // code); past the end, the task's first particle's.
    rng::ParticleStream streams[kLanes];
    for (int l = 0; l < kLanes; ++l) streams[l] = stream(first + (b + l < count ? b + l : 0));
    Pack u_jitter, u_accept, unused;
    lane_uniform2(streams, iteration, use_accept, u_accept, unused);
    if (jitter) lane_uniform2(streams, iteration, use_jitter, u_jitter, unused);
    for (int l = 0; l < kLanes && b + l < count; ++l) {
      steps[b + l] = steps_of(jitter ? u_jitter[l] : 0.0);
      accept_u[b + l] = u_accept[l];
    }
  }
  // Insertion sort of the task's particles by step count (ties by index).
  for (int k = 0; k < count; ++k) {
    int m = k;
    while (m > 0 && steps[order[m - 1]] > steps[k]) {
      order[m] = order[m - 1];
      --m;
    }
    order[m] = k;
  }
  for (int b = 0; b < count; b += kLanes) {
    int particle[kLanes], block_steps[kLanes];
    Pack u_accept;
    const int m = count - b < kLanes ? count - b : kLanes;
    // Lane l is the task's particle order[b + l]; past the end, a copy of the block's first.
    for (int l = 0; l < kLanes; ++l) {
      const int k = order[b + (l < m ? l : 0)];
      particle[l] = first + k;
      block_steps[l] = steps[k];
      u_accept[l] = accept_u[k];
    }
    block(particle, block_steps, u_accept, m);
  }
}

/// \brief log p and its gradient for a block of lanes, in whichever form the model has
/// (leapfrog_step's gradient on PackRows).
template <class Model>
struct LaneGradient {
  const Model& model;
  Pack operator()(const PackRow& q, const PackRow& grad) const {
    if constexpr (model::has_lane_scratch_gradient<Model>()) {
      return model.log_density_gradient_lanes(q, grad, lane_scratch(model.lane_scratch_size()));
    } else {
      return model.template log_density_gradient_t<Pack>(q, grad);
    }
  }
};

}  // namespace hmc::sampler
