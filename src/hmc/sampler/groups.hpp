#pragma once
/// \file
/// \brief What a model computes from a recorded draw after its transition: the pointwise
/// log-likelihood, posterior predictive draws and generated quantities (the further
/// groups of draws.nc, model/concept.hpp's members after sampling). The sampling loop
/// calls it for each recorded draw (sampler/run.hpp) and `hmc generate` for each draw of
/// an earlier run's draws.nc (services/generate.hpp): the same kernel on the same
/// recorded values, with random numbers keyed by the draw (rng::DrawStream), gives the
/// same bits.

#include "hmc/core/errors.hpp"
#include "hmc/core/philox.hpp"
#include "hmc/core/types.hpp"
#include "hmc/model/concept.hpp"
#include "hmc/sampler/settings.hpp"

#include <cstdint>

namespace hmc::sampler {

/// \brief Values per draw of each group a run records (0: not recorded), in the order of
/// the groups' buffer: log_likelihood, posterior_predictive, generated_quantities.
struct GroupWidths {
  int log_likelihood = 0, predictive = 0, generated = 0;
  int total() const { return log_likelihood + predictive + generated; }
};

/// \brief The widths of the groups `s` asks for. Throws RunError for a group whose member
/// the model lacks (the services refuse such a config first, naming the key).
template <class Model>
GroupWidths group_widths(const Model& m, const Settings& s) {
  std::int64_t observed = 0, generated = 0;
  for (const auto& a : model::observations(m)) observed += a.size();
  for (const auto& a : model::generated_quantities(m)) generated += a.size();
  const auto need = [](bool has) {
    if (!has) throw RunError("the model has no member for a group this run records");
  };
  GroupWidths w;
  if (s.log_likelihood) {
    need(model::has_log_likelihood<Model>());
    w.log_likelihood = static_cast<int>(observed);
  }
  if (s.posterior_predictive) {
    need(model::has_posterior_predictive<Model>());
    w.predictive = static_cast<int>(observed);
  }
  if (s.generated_quantities) {
    need(model::has_generated_quantities<Model>());
    w.generated = static_cast<int>(generated);
  }
  return w;
}

/// \brief For local particles i in [0, n): the groups of the recorded draw draws(i, slot, :)
/// into out(i, slot, :), draw `draw` of its section (`warmup`), particle i's global id
/// first_particle + i.
template <class Model, class View>
void record_groups(const Model& m, const View& draws, const View& out, int slot, int n, const GroupWidths& w,
                   std::uint64_t seed, std::int64_t first_particle, std::uint32_t draw, bool warmup) {
  const int ll = w.log_likelihood, pp = w.predictive;
  const bool gq = w.generated > 0;
  const std::uint32_t warmup_bit = warmup ? rng::DrawStream::kWarmup : 0u;
  Kokkos::parallel_for(
      "hmc::record_groups", Kokkos::RangePolicy<ExecSpace>(0, n), KOKKOS_LAMBDA(const int i) {
        const Row params{&draws(i, slot, 0), static_cast<std::ptrdiff_t>(draws.stride(2))};
        const auto stride = static_cast<std::ptrdiff_t>(out.stride(2));
        const auto particle = static_cast<std::uint64_t>(first_particle + i);
        if (ll > 0) model::log_likelihood(m, params, Row{&out(i, slot, 0), stride}, ll);
        if (pp > 0) {
          const rng::DrawStream r(seed, particle, rng::DrawStream::kPredictive | warmup_bit, draw);
          model::posterior_predictive(m, params, r, Row{&out(i, slot, ll), stride}, pp);
        }
        if (gq) {
          const rng::DrawStream r(seed, particle, rng::DrawStream::kGenerated | warmup_bit, draw);
          model::generate(m, params, r, Row{&out(i, slot, ll + pp), stride});
        }
      });
}

}  // namespace hmc::sampler
