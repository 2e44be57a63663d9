#pragma once
// Test helpers that evaluate a model on the default execution space, so the same
// tests run on a GPU build (model data lives in device memory there).

#include "hmc/core/types.hpp"

#include <vector>

namespace hmc::test {

using HostMatrix = Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace>;

inline StateView to_device(const std::vector<std::vector<double>>& rows) {
  const int n = static_cast<int>(rows.size()), d = static_cast<int>(rows.front().size());
  StateView v("test::points", n, d);
  auto h = Kokkos::create_mirror_view(v);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < d; ++j) h(i, j) = rows[i][j];
  Kokkos::deep_copy(v, h);
  return v;
}

inline HostMatrix to_host(const StateView& v) {
  HostMatrix h("test::host", v.extent(0), v.extent(1));
  auto m = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  for (std::size_t i = 0; i < v.extent(0); ++i)
    for (std::size_t j = 0; j < v.extent(1); ++j) h(i, j) = m(i, j);
  return h;
}

}  // namespace hmc::test
