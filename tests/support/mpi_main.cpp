// gtest main for MPI tests: MPI first, Kokkos second; only rank 0 prints results,
// and the exit code is failed on every rank if any rank failed.
#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>

int main(int argc, char* argv[]) {
  MPI_Init(&argc, &argv);
  setenv("KOKKOS_DISABLE_WARNINGS", "1", 0);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int failed = 0;
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    ::testing::InitGoogleTest(&argc, argv);
    if (rank != 0) {
      auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
      delete listeners.Release(listeners.default_result_printer());
    }
    failed = RUN_ALL_TESTS();
  }
  int any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any;
}
