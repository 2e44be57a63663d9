#include "hmc/core/kokkos_shim.hpp"

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

}  // namespace hmc
