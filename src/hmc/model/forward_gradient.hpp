#pragma once
/// \file
/// \brief The forward-mode reference gradient of a model that writes its log density as
/// a template on its scalar, `template <class T, class Q> T log_density_t(const Q& q)
/// const`: d log p / d q_j from one pass with hmc::Dual, coordinate j seeded with tangent
/// 1. `hmc diagnose` compares the model's own `log_density_gradient` with it, exactly (no
/// step size).
///
/// It is written here, and not taken from AutodiffModel, so that the reference stays the
/// same whatever gradient the model's base gives (reverse mode on a tape, or forward mode
/// where D is small or the tape has no room): a hand-written gradient or the base's
/// automatic one is checked against this one. Device code: it reads q from a View row and allocates nothing. Whether a
/// model has log_density_t for it is detected in hmc/model/concept.hpp (has_forward_reference).

#include "hmc/core/types.hpp"
#include "hmc/model/dual.hpp"

namespace hmc::model {

/// \brief One particle's coordinates read as Duals, coordinate `seed` carrying tangent 1 (any
/// indexable of doubles: a Row, or a lane of a block, LaneRow).
template <class Q>
struct DualRowOf {
  Q q;
  int seed;
  KOKKOS_INLINE_FUNCTION Dual operator()(int i) const { return Dual(q(i), i == seed ? 1.0 : 0.0); }
};
using SeededRow = DualRowOf<Row>;

/// \brief d log p / d q_j at q by one forward pass; `value` gets the pass's log p.
template <class M>
KOKKOS_INLINE_FUNCTION double forward_gradient_entry(const M& m, const Row& q, int j, double& value) {
  const Dual r = m.template log_density_t<Dual>(SeededRow{q, j});
  value = r.value;
  return r.tangent;
}

}  // namespace hmc::model
