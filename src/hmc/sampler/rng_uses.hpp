#pragma once
/// \file
/// \brief The one table of random-number uses, for every kernel.
///
/// A random number is keyed by (seed, global particle id, iteration, use)
/// (core/philox.hpp): the draws of a particle never depend on the ranks, the threads or
/// the other particles. Within one iteration each use id is taken once, by one kernel
/// (each ParticleStream::uniform2 or normal2 call gives two numbers of one use).
///
///   use                        kernel   what
///   0 .. ceil(d/2) - 1         all      the iteration's normals, a pair of coordinates per use
///                                       (hmc, nuts: momenta; mams: its velocity; the toy RWM of
///                                       tests/unit/test_kernel.cpp: its proposal)
///   kUseLeaf + m               nuts     multinomial choices at the tree's steps 2m (u0) and 2m + 1 (u1)
///   kUseDoubling + depth       nuts     direction of doubling `depth` (u0) and its biased choice (u1)
///   kUseJitter                 hmc      ChEES: the jittered number of steps (mams: its jittered steps)
///   kUseRestart + a·ceil(d/2) + j/2   warmup   a restarted particle's normals, attempt a < A (health.hpp)
///   kUseRestart + A·ceil(d/2)  warmup   at the last check, its donor (u0; A: /sampler/init/attempts)
///   kUseAccept                 hmc      the Metropolis test (also mams's and the toy RWM's)
///
/// Iteration 0 is the initialisation (InitParticles): uniforms of use
/// attempt * ceil(d/2) + j / 2, or the prior's draws from use attempt << 20.

#include "hmc/core/philox.hpp"

#include <cstdint>

namespace hmc::sampler {

inline constexpr std::uint32_t kUseRestart = 0x40000000u;
inline constexpr std::uint32_t kUseLeaf = 0x80000000u;
inline constexpr std::uint32_t kUseDoubling = 0xFFFF0000u;
inline constexpr std::uint32_t kUseJitter = 0xFFFFFFFEu;
inline constexpr std::uint32_t kUseAccept = rng::ParticleStream::kUseAccept;  // 0xFFFFFFFF

}  // namespace hmc::sampler
