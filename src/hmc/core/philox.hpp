#pragma once
/// \file
/// \brief Philox-4x32-10 counter-based generator (Salmon et al., SC'11, "Parallel
/// random numbers: as easy as 1, 2, 3"), and the draws hmc makes from it.
///
/// A draw is a pure function of (key, counter): no state, no pools, so the same
/// particle sees the same numbers on any rank count, thread count or device.
/// hmc uses key = the run's 64-bit seed and counter = (use, iteration, global
/// particle id low, high): a stream per (seed, particle), stepped by (iteration, use).

#include "hmc/core/kokkos_shim.hpp"

#include <cstdint>

namespace hmc::rng {

struct Philox4x32 {
  std::uint32_t v[4];
};

/// Philox-4x32's round multipliers and key increments (Weyl sequence); also used by
/// the lane kernel's vector Philox (sampler/lanes.hpp, lane_uniform2).
inline constexpr std::uint32_t kPhiloxMul0 = 0xD2511F53u;
inline constexpr std::uint32_t kPhiloxMul1 = 0xCD9E8D57u;
inline constexpr std::uint32_t kPhiloxWeyl0 = 0x9E3779B9u;
inline constexpr std::uint32_t kPhiloxWeyl1 = 0xBB67AE85u;

/// \brief Ten rounds of Philox-4x32 on `ctr` with key (k0, k1).
KOKKOS_INLINE_FUNCTION Philox4x32 philox4x32_10(Philox4x32 ctr, std::uint32_t k0, std::uint32_t k1) {
  constexpr std::uint32_t kMul0 = kPhiloxMul0;
  constexpr std::uint32_t kMul1 = kPhiloxMul1;
  constexpr std::uint32_t kWeyl0 = kPhiloxWeyl0;
  constexpr std::uint32_t kWeyl1 = kPhiloxWeyl1;
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__)
#pragma GCC unroll 10  // straight-line code: a loop over particles around it vectorises
#endif
  for (int round = 0; round < 10; ++round) {
    const std::uint64_t p0 = static_cast<std::uint64_t>(kMul0) * ctr.v[0];
    const std::uint64_t p1 = static_cast<std::uint64_t>(kMul1) * ctr.v[2];
    const auto hi0 = static_cast<std::uint32_t>(p0 >> 32), lo0 = static_cast<std::uint32_t>(p0);
    const auto hi1 = static_cast<std::uint32_t>(p1 >> 32), lo1 = static_cast<std::uint32_t>(p1);
    ctr = Philox4x32{{hi1 ^ ctr.v[1] ^ k0, lo1, hi0 ^ ctr.v[3] ^ k1, lo0}};
    k0 += kWeyl0;
    k1 += kWeyl1;
  }
  return ctr;
}

/// \brief 53-bit uniform double in [0, 1) from two 32-bit words.
KOKKOS_INLINE_FUNCTION double to_unit_double(std::uint32_t hi, std::uint32_t lo) {
  return static_cast<double>((static_cast<std::uint64_t>(hi >> 5) << 26) | (lo >> 6)) * (1.0 / 9007199254740992.0);
}

/// \brief The random stream of one particle in one run.
///
/// `use` indexes the draws made within one iteration (momentum pairs 0, 1, ...,
/// the accept test kUseAccept); iteration 0 is the initialisation.
class ParticleStream {
 public:
  static constexpr std::uint32_t kUseAccept = 0xFFFFFFFFu;

  ParticleStream() = default;
  KOKKOS_INLINE_FUNCTION ParticleStream(std::uint64_t seed, std::uint64_t particle)
      : k0_(static_cast<std::uint32_t>(seed)),
        k1_(static_cast<std::uint32_t>(seed >> 32)),
        id_lo_(static_cast<std::uint32_t>(particle)),
        id_hi_(static_cast<std::uint32_t>(particle >> 32)) {}

  KOKKOS_INLINE_FUNCTION Philox4x32 bits(std::uint32_t iteration, std::uint32_t use) const {
    return philox4x32_10(Philox4x32{{use, iteration, id_lo_, id_hi_}}, k0_, k1_);
  }

  /// Two independent uniforms in [0, 1).
  KOKKOS_INLINE_FUNCTION void uniform2(std::uint32_t iteration, std::uint32_t use, double& u0, double& u1) const {
    const Philox4x32 r = bits(iteration, use);
    u0 = to_unit_double(r.v[0], r.v[1]);
    u1 = to_unit_double(r.v[2], r.v[3]);
  }

  /// Gamma(shape, 1) by Marsaglia & Tsang (2000), using uses [use_base, use_base + 256)
  /// of `iteration`. shape < 1 via Gamma(shape + 1) · U^(1/shape).
  KOKKOS_INLINE_FUNCTION double gamma(std::uint32_t iteration, std::uint32_t use_base, double shape) const {
    double boost = 1.0;
    if (shape < 1.0) {
      double u, unused;
      uniform2(iteration, use_base + 255u, u, unused);
      boost = math::exp(math::log(1.0 - u) / shape);  // 1 - u lies in (0, 1]
      shape += 1.0;
    }
    const double d = shape - 1.0 / 3.0, c = 1.0 / math::sqrt(9.0 * d);
    for (std::uint32_t k = 0; k < 127u; ++k) {
      double z, unused, u;
      normal2(iteration, use_base + 2u * k, z, unused);
      uniform2(iteration, use_base + 2u * k + 1u, u, unused);
      const double v = (1.0 + c * z) * (1.0 + c * z) * (1.0 + c * z);
      if (v > 0.0 && math::log(1.0 - u) < 0.5 * z * z + d - d * v + d * math::log(v)) return d * v * boost;
    }
    return d * boost;  // acceptance is > 95% per try: never reached in practice
  }

  /// Two independent standard normals (Box-Muller on one Philox block).
  KOKKOS_INLINE_FUNCTION void normal2(std::uint32_t iteration, std::uint32_t use, double& z0, double& z1) const {
    double u0, u1;
    uniform2(iteration, use, u0, u1);
    const double radius = box_muller_radius(u0), angle = box_muller_angle(u1);
    z0 = radius * math::cos(angle);
    z1 = radius * math::sin(angle);
  }

  /// Box-Muller's radius and angle of the uniforms (u0, u1) of normal2 (the lane
  /// kernel computes them for a block of particles with the same formulas).
  KOKKOS_INLINE_FUNCTION static double box_muller_radius(double u0) {
    return math::sqrt(-2.0 * math::log(1.0 - u0));  // 1 - u0 lies in (0, 1]: finite
  }
  KOKKOS_INLINE_FUNCTION static double box_muller_angle(double u1) { return 2.0 * math::pi() * u1; }

  /// Word k (0, 1) of the key (the seed) and of the particle id: what the lane kernel's
  /// vector Philox (sampler/lanes.hpp, lane_uniform2) needs.
  KOKKOS_INLINE_FUNCTION std::uint32_t key(int k) const { return k == 0 ? k0_ : k1_; }
  KOKKOS_INLINE_FUNCTION std::uint32_t id(int k) const { return k == 0 ? id_lo_ : id_hi_; }

 private:
  std::uint32_t k0_, k1_, id_lo_, id_hi_;
};

/// \brief The random numbers of one recorded draw of one particle, for what a model
/// computes from the draw after sampling (posterior predictive draws, generated
/// quantities): keyed by (seed, global particle id, purpose, draw index, use). The purpose
/// sits in the particle word that the sampler's streams leave 0 (particle ids are below
/// 2^31), so these numbers are apart from every number the sampler draws, and they do not
/// depend on ranks, threads, or whether they are computed during the run or afterwards
/// (`hmc generate`).
class DrawStream {
 public:
  /// Purposes: what the numbers are for; a warmup draw's add kWarmup.
  static constexpr std::uint32_t kPredictive = 1u, kGenerated = 2u, kWarmup = 0x100u;

  DrawStream() = default;
  KOKKOS_INLINE_FUNCTION DrawStream(std::uint64_t seed, std::uint64_t particle, std::uint32_t purpose,
                                    std::uint32_t draw, std::uint32_t first_use = 0)
      : s_(seed, (particle & 0xFFFFFFFFull) | (static_cast<std::uint64_t>(purpose) << 32)),
        draw_(draw),
        first_(first_use) {}

  /// Two independent uniforms in [0, 1) of use `use`.
  KOKKOS_INLINE_FUNCTION void uniform2(std::uint32_t use, double& u0, double& u1) const {
    s_.uniform2(draw_, first_ + use, u0, u1);
  }
  /// Two independent standard normals of use `use`.
  KOKKOS_INLINE_FUNCTION void normal2(std::uint32_t use, double& z0, double& z1) const {
    s_.normal2(draw_, first_ + use, z0, z1);
  }
  /// One uniform in [0, 1) (the first of use `use`'s two).
  KOKKOS_INLINE_FUNCTION double uniform(std::uint32_t use) const {
    double u0, u1;
    uniform2(use, u0, u1);
    return u0;
  }
  /// One standard normal (the first of use `use`'s two).
  KOKKOS_INLINE_FUNCTION double normal(std::uint32_t use) const {
    double z0, z1;
    normal2(use, z0, z1);
    return z0;
  }
  /// Gamma(shape, 1) from uses [use_base, use_base + 256) (ParticleStream::gamma).
  KOKKOS_INLINE_FUNCTION double gamma(std::uint32_t use_base, double shape) const {
    return s_.gamma(draw_, first_ + use_base, shape);
  }
  /// The same stream from use `use` on (its use 0 is this one's `use`).
  KOKKOS_INLINE_FUNCTION DrawStream from(std::uint32_t use) const {
    DrawStream d = *this;
    d.first_ += use;
    return d;
  }

 private:
  ParticleStream s_;
  std::uint32_t draw_ = 0, first_ = 0;
};

}  // namespace hmc::rng
