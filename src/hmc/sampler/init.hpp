#pragma once
/// \file
/// \brief The ensemble's initial positions.

#include "hmc/core/philox.hpp"
#include "hmc/core/types.hpp"
#include "hmc/model/concept.hpp"
#include "hmc/sampler/kernel.hpp"

#include <cstdint>

namespace hmc::sampler {

/// \brief Initial positions, a function of (seed, global particle id) alone:
/// uniform in (-radius, radius) on the unconstrained scale around `centre` (zero, or
/// the user's values), or a draw from the model's prior. A particle whose log density
/// is not finite is re-drawn, up to `attempts` times; the reduction counts those that
/// never found one.
template <class Model>
struct InitParticles {
  /// The reduction's type, named: the two call operators keep Kokkos from deducing it.
  using value_type = int;
  Model model;
  EnsembleState state;
  int dim;
  double radius;
  VectorView centre;
  bool prior;
  int attempts;
  std::uint64_t seed;
  std::int64_t first_particle;

  /// Attempt `attempt`'s position of particle i into q.
  KOKKOS_INLINE_FUNCTION void place(const int i, const int attempt, const Row& q) const {
    const rng::ParticleStream stream(seed, static_cast<std::uint64_t>(first_particle + i));
    if (prior) {
      // 2^20 uses per attempt: room for many gamma draws (256 uses each).
      model::sample_prior(model, stream, static_cast<std::uint32_t>(attempt) << 20, q);
    } else {
      const auto pairs = static_cast<std::uint32_t>((dim + 1) / 2);
      for (int j = 0; j < dim; j += 2) {
        double u0, u1;
        stream.uniform2(0, static_cast<std::uint32_t>(attempt) * pairs + static_cast<std::uint32_t>(j / 2), u0, u1);
        q(j) = centre(j) + radius * (2.0 * u0 - 1.0);
        if (j + 1 < dim) q(j + 1) = centre(j + 1) + radius * (2.0 * u1 - 1.0);
      }
    }
  }

  KOKKOS_INLINE_FUNCTION void operator()(const int i, int& failed) const {
    const Row q = row(state.q, i);
    for (int attempt = 0; attempt < attempts; ++attempt) {
      place(i, attempt, q);
      state.lp(i) = model::log_density_gradient(model, q, row(state.grad, i), state.scratch(i));
      if (math::isfinite(state.lp(i))) return;
    }
    ++failed;
  }

  /// The same for particle team.league_rank() by a team of threads (the model's team gradient).
  KOKKOS_INLINE_FUNCTION void operator()(const TeamMember& team, int& failed) const {
    const int i = team.league_rank();
    const Row q = row(state.q, i);
    for (int attempt = 0; attempt < attempts; ++attempt) {
      Kokkos::single(Kokkos::PerTeam(team), [&]() { place(i, attempt, q); });
      team.team_barrier();
      const double lp = model::log_density_gradient(model, team, q, row(state.grad, i), state.scratch(i));
      Kokkos::single(Kokkos::PerTeam(team), [&]() { state.lp(i) = lp; });
      if (math::isfinite(lp)) return;
    }
    if (team.team_rank() == 0) ++failed;
  }
};

}  // namespace hmc::sampler
