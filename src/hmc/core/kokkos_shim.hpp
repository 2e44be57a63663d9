#pragma once
/// \file
/// \brief The one place where differences between Kokkos versions live.
///
/// Kokkos 3.4 keeps its math functions in `Kokkos::Experimental`; Kokkos 3.7+
/// and 4.x have them in `Kokkos` (and deprecate the old spelling). Device code
/// in hmc calls `hmc::math::exp` and friends, never `std::` or `Kokkos::`
/// directly, so a new Kokkos release touches this header only.

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>
#include <string>

#if KOKKOS_VERSION >= 30700
#define HMC_KOKKOS_MATH_NS Kokkos
#else
#define HMC_KOKKOS_MATH_NS Kokkos::Experimental
#endif

namespace hmc::math {

using HMC_KOKKOS_MATH_NS::ceil;
using HMC_KOKKOS_MATH_NS::cos;
using HMC_KOKKOS_MATH_NS::exp;
using HMC_KOKKOS_MATH_NS::expm1;
using HMC_KOKKOS_MATH_NS::fabs;
using HMC_KOKKOS_MATH_NS::isfinite;
using HMC_KOKKOS_MATH_NS::isnan;
using HMC_KOKKOS_MATH_NS::log;
using HMC_KOKKOS_MATH_NS::log1p;
using HMC_KOKKOS_MATH_NS::nearbyint;
using HMC_KOKKOS_MATH_NS::pow;
using HMC_KOKKOS_MATH_NS::sin;
using HMC_KOKKOS_MATH_NS::sqrt;

/// \brief log Γ(x). On the host lgamma_r, the same value as lgamma without writing the
/// global `signgam` (lgamma's data race when OpenMP threads call it); on a GPU Kokkos'.
KOKKOS_INLINE_FUNCTION double lgamma(double x) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__) || defined(__SYCL_DEVICE_ONLY__)
  return HMC_KOKKOS_MATH_NS::lgamma(x);
#else
  int sign = 0;
  return ::lgamma_r(x, &sign);
#endif
}

/// \brief log(1 / (1 + exp(-x))), accurate for large |x|. Written without branches
/// (one exp of -|x|), so that a loop over particles vectorises; the value is the
/// same as -log1p(exp(-x)) for x >= 0 and x - log1p(exp(x)) below. min(x, 0) - l rather
/// than a choice between -l and x - l: GCC turns that choice into a masked operation
/// with AVX-512 only, and leaves the loop scalar for AVX2 and SSE2 (the x86-64-v3 and
/// x86-64 builds); the values are the same (0 - l is -l, but for l = 0, +0 for -0).
KOKKOS_INLINE_FUNCTION double log_sigmoid(double x) {
  const double l = log1p(exp(-fabs(x)));
  return (x < 0.0 ? x : 0.0) - l;
}

/// \brief 1 / (1 + exp(-x)) without overflow: 1 / (1 + e) for x >= 0, e / (1 + e)
/// below, with e = exp(-|x|); without branches, as log_sigmoid.
KOKKOS_INLINE_FUNCTION double sigmoid(double x) {
  const double e = exp(-fabs(x));
  return (x >= 0.0 ? 1.0 : e) / (1.0 + e);
}

KOKKOS_INLINE_FUNCTION constexpr double pi() { return 3.14159265358979323846; }

KOKKOS_INLINE_FUNCTION constexpr double infinity() { return HUGE_VAL; }

}  // namespace hmc::math

#undef HMC_KOKKOS_MATH_NS

namespace hmc {

/// \brief RAII profiling region (Kokkos >= 4 ships `Kokkos::Profiling::ScopedRegion`;
/// 3.4 has only push/pop).
class ScopedRegion {
 public:
  explicit ScopedRegion(const std::string& name) { Kokkos::Profiling::pushRegion(name); }
  ~ScopedRegion() { Kokkos::Profiling::popRegion(); }
  ScopedRegion(const ScopedRegion&) = delete;
  ScopedRegion& operator=(const ScopedRegion&) = delete;
};

/// \brief The command-line option that sets the host threads of Kokkos' OpenMP backend
/// (`--kokkos-threads` in 3.4; 3.7+ spell it `--kokkos-num-threads` and deprecate the old one).
#if KOKKOS_VERSION >= 30700
inline constexpr const char* kKokkosThreadsOption = "--kokkos-num-threads";
#else
inline constexpr const char* kKokkosThreadsOption = "--kokkos-threads";
#endif

/// \brief Whether the host execution space runs OpenMP threads (else one host thread).
#if defined(KOKKOS_ENABLE_OPENMP)
inline constexpr bool kHostOpenMP = true;
#else
inline constexpr bool kHostOpenMP = false;
#endif

/// \brief Names of the Kokkos execution spaces enabled in this build.
std::string kokkos_backends();
/// \brief "major.minor.patch" of the Kokkos this was compiled against.
std::string kokkos_version();
/// \brief Is the default execution space's memory the host's (OpenMP, Serial, Threads)?
bool device_is_host_memory();
/// \brief Total memory of the device this rank uses, in bytes; 0 when it is host memory
/// or unknown. CUDA: cudaMemGetInfo; HIP: hipMemGetInfo.
std::int64_t device_memory_bytes();

}  // namespace hmc
