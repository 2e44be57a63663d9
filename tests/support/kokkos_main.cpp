// gtest main for single-process tests: Kokkos up for the whole binary.
#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include <cstdlib>

int main(int argc, char* argv[]) {
  setenv("KOKKOS_DISABLE_WARNINGS", "1", 0);
  Kokkos::ScopeGuard kokkos(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
