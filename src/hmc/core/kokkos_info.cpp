#include "hmc/core/kokkos_shim.hpp"
#include "hmc/core/types.hpp"

#include <type_traits>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime_api.h>
#elif defined(KOKKOS_ENABLE_HIP)
#include <hip/hip_runtime_api.h>
#endif

namespace hmc {

std::string kokkos_version() {
  return std::to_string(KOKKOS_VERSION / 10000) + "." + std::to_string(KOKKOS_VERSION / 100 % 100) + "." +
         std::to_string(KOKKOS_VERSION % 100);
}

std::string kokkos_backends() {
  std::string s;
  auto add = [&](const char* name) { s += (s.empty() ? "" : ", ") + std::string(name); };
#ifdef KOKKOS_ENABLE_CUDA
  add("Cuda");
#endif
#ifdef KOKKOS_ENABLE_HIP
  add("HIP");
#endif
#ifdef KOKKOS_ENABLE_SYCL
  add("SYCL");
#endif
#ifdef KOKKOS_ENABLE_OPENMP
  add("OpenMP");
#endif
#ifdef KOKKOS_ENABLE_THREADS
  add("Threads");
#endif
#ifdef KOKKOS_ENABLE_SERIAL
  add("Serial");
#endif
  return s;
}

bool device_is_host_memory() { return std::is_same<MemSpace, Kokkos::HostSpace>::value; }

std::int64_t device_memory_bytes() {
  if (device_is_host_memory()) return 0;
  std::size_t free = 0, total = 0;
#if defined(KOKKOS_ENABLE_CUDA)
  if (cudaMemGetInfo(&free, &total) != cudaSuccess) return 0;
#elif defined(KOKKOS_ENABLE_HIP)
  if (hipMemGetInfo(&free, &total) != hipSuccess) return 0;
#endif
  (void)free;
  return static_cast<std::int64_t>(total);
}

}  // namespace hmc
