#pragma once
/// \file
/// \brief Scalar and View aliases shared by the engine, the models and the tests.

#include "hmc/core/draw_source.hpp"
#include "hmc/core/kokkos_shim.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace hmc {

using ExecSpace = Kokkos::DefaultExecutionSpace;
using MemSpace = ExecSpace::memory_space;
/// A team of threads of the execution space (a model's team gradient, sampler/hmc_kernel.hpp).
using TeamPolicy = Kokkos::TeamPolicy<ExecSpace>;
using TeamMember = TeamPolicy::member_type;

/// Ensemble state: [particle][dim], default layout of the device, so consecutive
/// particles are adjacent on a GPU (coalesced) and a particle's row is contiguous on a CPU.
using StateView = Kokkos::View<double**, MemSpace>;
/// One value per particle.
using ParticleView = Kokkos::View<double*, MemSpace>;
/// A small per-model vector (centres, spring constants, counts, ...).
using VectorView = Kokkos::View<double*, MemSpace>;
/// A small per-model matrix (e.g. a precision matrix).
using MatrixView = Kokkos::View<double**, MemSpace>;

/// Recorded draws: [particle][draw][column], column-major (LayoutLeft: the particle index
/// fastest), so that the particles of one iteration write neighbouring addresses: one
/// run of particles per column on the host, coalesced writes on a GPU. Their host copy
/// (DrawBlock) has the same layout, so handing a block over is one contiguous copy (none
/// where the buffer already is on the host).
using DrawView = Kokkos::View<double***, Kokkos::LayoutLeft, MemSpace>;
/// Per-draw statistics: [particle][draw].
using DrawStatView = Kokkos::View<double**, Kokkos::LayoutRight, MemSpace>;

/// \brief A non-owning strided vector: one particle's row of a StateView, or a plain
/// host array in tests. Device-safe and cheap to copy.
struct Row {
  double* data;
  std::ptrdiff_t stride;
  KOKKOS_INLINE_FUNCTION double& operator()(int j) const { return data[j * stride]; }
};

/// \brief Row i of a 2-D View, whatever its layout.
template <class View2D>
KOKKOS_INLINE_FUNCTION Row row(const View2D& v, int i) {
  return Row{&v(i, 0), static_cast<std::ptrdiff_t>(v.stride(1))};
}

/// \brief A device View holding a copy of `values` (host data uploaded once, when a
/// model is built from its config and data).
template <class T>
Kokkos::View<T*, MemSpace> to_device_view(const std::string& label, const std::vector<T>& values) {
  Kokkos::View<T*, MemSpace> view(label, values.size());
  auto host = Kokkos::create_mirror_view(view);
  for (std::size_t i = 0; i < values.size(); ++i) host(i) = values[i];
  Kokkos::deep_copy(view, host);
  return view;
}

/// \brief A model's data as draws.nc's observed_data or constant_data hold it (a model's
/// observations() and constant_data(), model/concept.hpp): a host copy of the 1-D or 2-D
/// View `v` in C order, with one dim name per axis.
template <class View>
DataArray data_array(const std::string& name, const std::vector<std::string>& dims, const View& v,
                     bool integer = false) {
  DataArray a;
  a.name = name;
  a.dims = dims;
  a.integer = integer;
  const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  for (int r = 0; r < static_cast<int>(View::rank); ++r) a.shape.push_back(static_cast<std::int64_t>(h.extent(r)));
  if constexpr (View::rank == 1) {
    for (std::size_t i = 0; i < h.extent(0); ++i) a.values.push_back(h(i));
  } else {
    for (std::size_t i = 0; i < h.extent(0); ++i)
      for (std::size_t j = 0; j < h.extent(1); ++j) a.values.push_back(h(i, j));
  }
  return a;
}

}  // namespace hmc
