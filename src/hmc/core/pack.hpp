#pragma once
/// \file
/// \brief `Pack`: kLanes doubles, one per particle of a block, with the arithmetic and
/// math functions that a model's gradient uses, each a loop over the lanes that the
/// compiler turns into vector instructions (host only; sampler/lanes.hpp).
///
/// A model that writes its gradient once as a template over the number type
/// (`log_density_gradient_t<T>`, model/concept.hpp) gets it for T = double, which the
/// GPU and the scalar kernel use, and for T = Pack, which the lane kernel uses. Every
/// operation on a Pack is the same double operation lane by lane, in the same order, so
/// a lane computes what the double code computes, except where exp, log, log1p and
/// expm1 come from the vector math library (core/simd_math.hpp: a few ulp apart).

#include "hmc/core/kokkos_shim.hpp"
#include "hmc/core/simd_math.hpp"

#include <cmath>

namespace hmc {

/// Particles per block of the lane kernel: 8 doubles fill an AVX-512 register (two
/// AVX2 registers, four SSE2 registers).
inline constexpr int kLanes = 8;

/// A loop over the lanes, which the compiler vectorises. `omp simd` asks GCC to (with OpenMP,
/// or -fopenmp-simd: HMC_OPENMP_SIMD, CMakeLists.txt); clang, which warns where it cannot
/// (e.g. without the vector math functions), vectorises on its own.
#if defined(__GNUC__) && !defined(__clang__) && (defined(_OPENMP) || defined(HMC_OPENMP_SIMD))
#define HMC_LANES_LOOP _Pragma("omp simd") for (int l = 0; l < kLanes; ++l)
#else
#define HMC_LANES_LOOP for (int l = 0; l < kLanes; ++l)
#endif

// GCC and clang: a vector type, so that Packs live in registers. nvcc (whose host code
// never uses Packs: the lane kernel is host-only) and other compilers: a plain array.
#if defined(__GNUC__) && !defined(__CUDACC__)
#define HMC_PACK_VECTOR 1
#else
#define HMC_PACK_VECTOR 0
#endif

// Pack's functions: host only, but host and device for nvcc, whose host code instantiates
// device-capable templates (hmc/distributions, the models' template gradients) with Packs (tests):
// it would warn that they call host functions. No device code uses a Pack.
#if defined(__CUDACC__)
#define HMC_PACK_FUNCTION KOKKOS_INLINE_FUNCTION
#define HMC_PACK_MATH(F) ::hmc::math::F
#else
#define HMC_PACK_FUNCTION inline
#define HMC_PACK_MATH(F) std::F
#endif

struct Pack {
#if HMC_PACK_VECTOR
  typedef double Vec __attribute__((vector_size(kLanes * sizeof(double))));
  Vec v;
  double* lanes() { return reinterpret_cast<double*>(&v); }
  const double* lanes() const { return reinterpret_cast<const double*>(&v); }
#else
  alignas(kLanes * sizeof(double)) double v[kLanes];
  HMC_PACK_FUNCTION double* lanes() { return v; }
  HMC_PACK_FUNCTION const double* lanes() const { return v; }
#endif

  Pack() = default;
  // Implicit, so that model code mixes constants and Packs as it mixes them with doubles.
  HMC_PACK_FUNCTION Pack(double x) {  // NOLINT(google-explicit-constructor)
#if HMC_PACK_VECTOR
    v = x - Vec{};  // every lane x
#else
    HMC_LANES_LOOP v[l] = x;
#endif
  }
  HMC_PACK_FUNCTION double& operator[](int l) { return lanes()[l]; }
  HMC_PACK_FUNCTION double operator[](int l) const { return lanes()[l]; }

#if HMC_PACK_VECTOR
  Pack& operator+=(const Pack& b) {
    v += b.v;
    return *this;
  }
  Pack& operator-=(const Pack& b) {
    v -= b.v;
    return *this;
  }
  Pack& operator*=(const Pack& b) {
    v *= b.v;
    return *this;
  }
#else
  HMC_PACK_FUNCTION Pack& operator+=(const Pack& b) {
    HMC_LANES_LOOP v[l] += b.v[l];
    return *this;
  }
  HMC_PACK_FUNCTION Pack& operator-=(const Pack& b) {
    HMC_LANES_LOOP v[l] -= b.v[l];
    return *this;
  }
  HMC_PACK_FUNCTION Pack& operator*=(const Pack& b) {
    HMC_LANES_LOOP v[l] *= b.v[l];
    return *this;
  }
#endif
};

#if HMC_PACK_VECTOR
#define HMC_PACK_BINARY(OP)                               \
  inline Pack operator OP(const Pack& a, const Pack& b) { \
    Pack r;                                               \
    r.v = a.v OP b.v;                                     \
    return r;                                             \
  }                                                       \
  inline Pack operator OP(double a, const Pack& b) {      \
    Pack r;                                               \
    r.v = a OP b.v;                                       \
    return r;                                             \
  }                                                       \
  inline Pack operator OP(const Pack& a, double b) {      \
    Pack r;                                               \
    r.v = a.v OP b;                                       \
    return r;                                             \
  }
#else
#define HMC_PACK_BINARY(OP)                                          \
  HMC_PACK_FUNCTION Pack operator OP(const Pack& a, const Pack& b) { \
    Pack r;                                                          \
    HMC_LANES_LOOP r.v[l] = a.v[l] OP b.v[l];                        \
    return r;                                                        \
  }                                                                  \
  HMC_PACK_FUNCTION Pack operator OP(double a, const Pack& b) {      \
    Pack r;                                                          \
    HMC_LANES_LOOP r.v[l] = a OP b.v[l];                             \
    return r;                                                        \
  }                                                                  \
  HMC_PACK_FUNCTION Pack operator OP(const Pack& a, double b) {      \
    Pack r;                                                          \
    HMC_LANES_LOOP r.v[l] = a.v[l] OP b;                             \
    return r;                                                        \
  }
#endif
HMC_PACK_BINARY(+)
HMC_PACK_BINARY(-)
HMC_PACK_BINARY(*)
HMC_PACK_BINARY(/)
#undef HMC_PACK_BINARY

HMC_PACK_FUNCTION Pack operator-(const Pack& a) {
#if HMC_PACK_VECTOR
  Pack r;
  r.v = -a.v;
  return r;
#else
  Pack r;
  HMC_LANES_LOOP r.v[l] = -a.v[l];
  return r;
#endif
}

/// A row of a [coordinate][lane] block: element j is the Pack of coordinate j.
struct PackRow {
  Pack* data;
  HMC_PACK_FUNCTION Pack& operator()(int j) const { return data[j]; }
};

/// Lane l of a [coordinate][lane] block, as a vector of doubles (for per-lane code).
struct LaneRow {
  Pack* data;
  int lane;
  HMC_PACK_FUNCTION double& operator()(int j) const { return data[j][lane]; }
};

namespace math {

// Lane-wise versions of the functions of kokkos_shim.hpp that models use. The scalar
// functions are called lane by lane; under `omp simd` with core/simd_math.hpp's
// declarations the compiler calls their vector versions.
#define HMC_PACK_UNARY(NAME, EXPR)                  \
  HMC_PACK_FUNCTION Pack NAME(const Pack& a) {      \
    alignas(64) double in[kLanes], out[kLanes];     \
    for (int l = 0; l < kLanes; ++l) in[l] = a[l];  \
    HMC_LANES_LOOP {                                \
      const double x = in[l];                       \
      out[l] = EXPR;                                \
    }                                               \
    Pack r;                                         \
    for (int l = 0; l < kLanes; ++l) r[l] = out[l]; \
    return r;                                       \
  }
HMC_PACK_UNARY(exp, HMC_PACK_MATH(exp)(x))
HMC_PACK_UNARY(log, HMC_PACK_MATH(log)(x))
HMC_PACK_UNARY(log1p, HMC_PACK_MATH(log1p)(x))
HMC_PACK_UNARY(expm1, HMC_PACK_MATH(expm1)(x))
HMC_PACK_UNARY(sqrt, HMC_PACK_MATH(sqrt)(x))
HMC_PACK_UNARY(fabs, HMC_PACK_MATH(fabs)(x))
HMC_PACK_UNARY(sigmoid, math::sigmoid(x))
HMC_PACK_UNARY(log_sigmoid, math::log_sigmoid(x))
#undef HMC_PACK_UNARY

}  // namespace math
}  // namespace hmc
