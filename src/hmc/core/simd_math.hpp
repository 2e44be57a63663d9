#pragma once
/// \file
/// \brief Vector versions of exp, log, log1p, expm1, sin and cos for loops that run across
/// particles on the host (sampler/lanes.hpp).
///
/// glibc's libmvec has them (`_ZGVeN8v_exp`, ...), but math.h declares them only
/// under -ffast-math. Declaring the SIMD clones here lets GCC call them from an
/// `#pragma omp simd` loop; -fno-math-errno (set for every target, CMakeLists.txt)
/// is the other half. They agree with the scalar functions to a few ulp, not
/// bitwise, so a loop that uses them must run every particle through the vector
/// code (sampler/lanes.hpp pads its blocks): a particle's draws then do not depend
/// on where in a block it falls. Include this header only where that holds.
///
/// Elsewhere (clang, CUDA, other C libraries) this header declares nothing and the
/// loops call the scalar functions, lane by lane.

#include <cmath>

#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__) && !defined(__INTEL_COMPILER) && \
    defined(__x86_64__) && defined(__GLIBC__) && !defined(__FAST_MATH__) && !defined(HMC_NO_LIBMVEC)
#if __GLIBC_PREREQ(2, 35)
#define HMC_HAVE_LIBMVEC 1
extern "C" {
__attribute__((simd("notinbranch"))) double exp(double) noexcept;
__attribute__((simd("notinbranch"))) double log(double) noexcept;
__attribute__((simd("notinbranch"))) double log1p(double) noexcept;
__attribute__((simd("notinbranch"))) double expm1(double) noexcept;
__attribute__((simd("notinbranch"))) double sin(double) noexcept;
__attribute__((simd("notinbranch"))) double cos(double) noexcept;
}
#endif
#endif

#ifndef HMC_HAVE_LIBMVEC
#define HMC_HAVE_LIBMVEC 0
#endif
