#pragma once
/// \file
/// \brief NOT Kokkos: a stand-in for a compile-only check (tests/compile/nvcc/check.sh).
///
/// Just enough of Kokkos' interface, spelled as a CUDA build of Kokkos >= 4 spells it, for
/// nvcc to compile the model kernels' headers in device code without a CUDA Kokkos: the
/// function macros are `__host__ __device__`, so nvcc reports a host-only function called
/// from them (diagnostics 20011, 20014, ...). What device code calls has a device-safe
/// body; what only host code calls (View construction, deep_copy, mirrors, profiling) is
/// declared and never defined: the check compiles, it never links or runs.

#include <cmath>
#include <cstddef>
#include <string>
#include <type_traits>

#if !defined(__CUDACC__)
#error "kokkos_standin/Kokkos_Core.hpp is for nvcc only (tests/compile/nvcc/check.sh)"
#endif

#define KOKKOS_VERSION 40400
#define KOKKOS_ENABLE_CUDA

#define KOKKOS_FUNCTION __host__ __device__
#define KOKKOS_INLINE_FUNCTION __host__ __device__ inline
#define KOKKOS_FORCEINLINE_FUNCTION __host__ __device__ __forceinline__
#define KOKKOS_LAMBDA [=] __host__ __device__

namespace Kokkos {

// ---- spaces and layouts ---------------------------------------------------------------

struct HostSpace {};
struct CudaSpace {};
struct Cuda {
  using memory_space = CudaSpace;
  using execution_space = Cuda;
};
using DefaultExecutionSpace = Cuda;
struct LayoutLeft {};
struct LayoutRight {};

// ---- View -------------------------------------------------------------------------------

namespace standin {
template <class T>
struct value_type {  // T of T*, T**, T***
  using type = T;
};
template <class T>
struct value_type<T*> : value_type<T> {};
template <class T>
struct rank_of {  // the number of * in T**
  static constexpr unsigned value = 0;
};
template <class T>
struct rank_of<T*> {
  static constexpr unsigned value = 1 + rank_of<T>::value;
};
}  // namespace standin

template <class DataType, class... Properties>
class View {
 public:
  using value_type = typename standin::value_type<DataType>::type;
  using const_value_type = const value_type;
  static constexpr unsigned rank = standin::rank_of<DataType>::value;
  using HostMirror = View<DataType, HostSpace>;

  View() = default;
  // Host only, as in Kokkos (allocation); declared, never defined.
  explicit View(const std::string& label, std::size_t n0 = 0, std::size_t n1 = 0, std::size_t n2 = 0);

  KOKKOS_INLINE_FUNCTION value_type& operator()(std::ptrdiff_t i0, std::ptrdiff_t i1 = 0, std::ptrdiff_t i2 = 0) const {
    return data_[i0 * stride_[0] + i1 * stride_[1] + i2 * stride_[2]];
  }
  KOKKOS_INLINE_FUNCTION std::size_t extent(int r) const { return extent_[r]; }
  KOKKOS_INLINE_FUNCTION std::size_t stride(int r) const { return stride_[r]; }
  KOKKOS_INLINE_FUNCTION value_type* data() const { return data_; }

 private:
  value_type* data_ = nullptr;
  std::size_t extent_[3] = {0, 0, 0};
  std::size_t stride_[3] = {0, 0, 0};
};

template <class T>
struct is_view : std::false_type {};
template <class D, class... P>
struct is_view<View<D, P...>> : std::true_type {};

// Host-only operations on Views: declared, never defined.
template <class Dst, class Src>
void deep_copy(const Dst& dst, const Src& src);
template <class D, class... P>
typename View<D, P...>::HostMirror create_mirror_view(const View<D, P...>& v);
template <class Space, class D, class... P>
typename View<D, P...>::HostMirror create_mirror_view_and_copy(const Space& space, const View<D, P...>& v);

// Host-only dispatch over a range: declared, never defined.
template <class... Properties>
struct RangePolicy {
  RangePolicy(long begin, long end);
};
template <class Policy, class F>
void parallel_for(const std::string& label, const Policy& policy, const F& f);

namespace Profiling {
void pushRegion(const std::string& name);
void popRegion();
}  // namespace Profiling

// ---- math (Kokkos >= 3.7 keeps them in Kokkos::; on a GPU, CUDA's functions) ----------

#define KOKKOS_STANDIN_MATH1(NAME) \
  KOKKOS_INLINE_FUNCTION double NAME(double x) { return ::NAME(x); }
KOKKOS_STANDIN_MATH1(ceil)
KOKKOS_STANDIN_MATH1(cos)
KOKKOS_STANDIN_MATH1(exp)
KOKKOS_STANDIN_MATH1(expm1)
KOKKOS_STANDIN_MATH1(fabs)
KOKKOS_STANDIN_MATH1(lgamma)
KOKKOS_STANDIN_MATH1(log)
KOKKOS_STANDIN_MATH1(log1p)
KOKKOS_STANDIN_MATH1(nearbyint)
KOKKOS_STANDIN_MATH1(sin)
KOKKOS_STANDIN_MATH1(sqrt)
#undef KOKKOS_STANDIN_MATH1
KOKKOS_INLINE_FUNCTION double pow(double x, double y) { return ::pow(x, y); }
KOKKOS_INLINE_FUNCTION bool isfinite(double x) { return ::isfinite(x); }
KOKKOS_INLINE_FUNCTION bool isnan(double x) { return ::isnan(x); }

// ---- teams --------------------------------------------------------------------------------

namespace standin {
/// One team of a TeamPolicy on the device: a CUDA block (on the host, never used: 0).
struct TeamMember {
#if defined(__CUDA_ARCH__)
  KOKKOS_INLINE_FUNCTION int league_rank() const { return static_cast<int>(blockIdx.x); }
  KOKKOS_INLINE_FUNCTION int league_size() const { return static_cast<int>(gridDim.x); }
  KOKKOS_INLINE_FUNCTION int team_rank() const { return static_cast<int>(threadIdx.x); }
  KOKKOS_INLINE_FUNCTION int team_size() const { return static_cast<int>(blockDim.x); }
  KOKKOS_INLINE_FUNCTION void team_barrier() const { __syncthreads(); }
#else
  KOKKOS_INLINE_FUNCTION int league_rank() const { return 0; }
  KOKKOS_INLINE_FUNCTION int league_size() const { return 1; }
  KOKKOS_INLINE_FUNCTION int team_rank() const { return 0; }
  KOKKOS_INLINE_FUNCTION int team_size() const { return 1; }
  KOKKOS_INLINE_FUNCTION void team_barrier() const {}
#endif
};
}  // namespace standin

template <class... Properties>
struct TeamPolicy {
  using member_type = standin::TeamMember;
};

template <class Member>
struct TeamThreadRangeBoundaries {
  const Member& member;
  int begin, end;
};
template <class Member>
KOKKOS_INLINE_FUNCTION TeamThreadRangeBoundaries<Member> TeamThreadRange(const Member& m, int end) {
  return {m, 0, end};
}
template <class Member>
KOKKOS_INLINE_FUNCTION TeamThreadRangeBoundaries<Member> TeamThreadRange(const Member& m, int begin, int end) {
  return {m, begin, end};
}

template <class Member>
struct PerTeamValue {
  const Member& member;
};
template <class Member>
KOKKOS_INLINE_FUNCTION PerTeamValue<Member> PerTeam(const Member& m) {
  return {m};
}

/// f(i) for i in the range, split over the team's threads.
template <class Member, class F>
KOKKOS_INLINE_FUNCTION void parallel_for(const TeamThreadRangeBoundaries<Member>& r, const F& f) {
  for (int i = r.begin + r.member.team_rank(); i < r.end; i += r.member.team_size()) f(i);
}

/// f() on one thread of the team.
template <class Member, class F>
KOKKOS_INLINE_FUNCTION void single(const PerTeamValue<Member>& s, const F& f) {
  if (s.member.team_rank() == 0) f();
}
/// f(value) on one thread of the team, value then handed to every thread.
template <class Member, class F, class T>
KOKKOS_INLINE_FUNCTION void single(const PerTeamValue<Member>& s, const F& f, T& value) {
#if defined(__CUDA_ARCH__)
  __shared__ T shared;
  if (s.member.team_rank() == 0) {
    f(value);
    shared = value;
  }
  s.member.team_barrier();
  value = shared;
#else
  f(value);
#endif
}

}  // namespace Kokkos
