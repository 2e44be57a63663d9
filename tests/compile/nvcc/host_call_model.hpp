#pragma once
// A scratch copy of models/coin_toss.hpp's device members with the classic GPU mistake
// put in on purpose: log_density (KOKKOS_INLINE_FUNCTION) calls the member function
// coin_term, which is not marked KOKKOS_INLINE_FUNCTION and so is host-only. nvcc
// reports it (diagnostic 20011 or 20014), and tests/compile/nvcc/check.sh must fail:
// the ctest nvcc_device_rules_catches_host_call. Included only with HMC_NVCC_PROVOKE.
// (std::exp would not do: nvcc accepts the <cmath> functions in device code.)
#include "hmc/core/kokkos_shim.hpp"
#include "hmc/core/types.hpp"

namespace nvcc_check {

struct HostCallModel {
  int coins = 0;
  hmc::VectorView heads_a, tails_b;

  /// Host-only: missing KOKKOS_INLINE_FUNCTION.
  double coin_term(double x, int c) const {
    return heads_a(c) * hmc::math::log_sigmoid(x) + tails_b(c) * hmc::math::log_sigmoid(-x);
  }

  KOKKOS_INLINE_FUNCTION double log_density(const hmc::Row& q) const {
    double lp = 0.0;
    for (int c = 0; c < coins; ++c) lp += coin_term(q(c), c);
    return lp;
  }

  KOKKOS_INLINE_FUNCTION double log_density_gradient(const hmc::Row& q, const hmc::Row& grad) const {
    double lp = 0.0;
    for (int c = 0; c < coins; ++c) {
      const double p = hmc::math::sigmoid(q(c));
      lp += heads_a(c) * hmc::math::log_sigmoid(q(c)) + tails_b(c) * hmc::math::log_sigmoid(-q(c));
      grad(c) = heads_a(c) * (1.0 - p) - tails_b(c) * p;
    }
    return lp;
  }

  KOKKOS_INLINE_FUNCTION void constrain(const hmc::Row& q, const hmc::Row& out) const {
    for (int c = 0; c < coins; ++c) out(c) = hmc::math::sigmoid(q(c));
  }
};

}  // namespace nvcc_check
