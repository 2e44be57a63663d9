#pragma once
/// \file
/// \brief The model-typed middle of a run: the sampling loop of one rank, with blocks
/// handed to the Session, checkpoints, and a clean stop on signals.

#include "hmc/model/concept.hpp"
#include "hmc/services/session.hpp"

#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace hmc::services {

/// \brief The store layout of a model's run.
template <class Model>
hmc::StoreLayout store_layout(const Model& model, const sampler::Settings& s) {
  hmc::StoreLayout layout;
  layout.particles = s.particles;
  layout.param_names = model.parameter_names();
  layout.dim_names = hmc::model::dim_names(model);
  layout.draws = s.kept();
  layout.warmup_draws = s.kept_warmup();
  return layout;
}

/// \brief Samples `model` in `session`: initialise (or restore), iterate, hand blocks
/// over, checkpoint (after every block, every /output/checkpoint_every iterations, at
/// the end of sampling and on a signal), finish. Returns the exit code.
template <class Model>
int run_model(const Model& model, Session& session) {
  const auto& s = session.settings();
  const auto& dec = session.decomposition();
  session.plan(store_layout(model, s));  // fixes the block size the ensemble records into
  sampler::EnsembleSampler<Model> ensemble(model, s, dec.begin(), dec.count(), session.mpi().allreduce());
  session.set_note(hmc::model::note(model));
  auto resumed = session.open(ensemble.row_width());
  if (resumed) {
    ensemble.restore(resumed->rows, resumed->loop);
  } else {
    session.agree_init(ensemble.initialise(), session.spec().config["model"]["name"].template get<std::string>());
  }
  const auto progress = session.progress(ensemble.iteration());
  while (!ensemble.done()) {
    ensemble.iterate(progress, session.elapsed());
    const bool flushed = ensemble.block_ready();
    if (flushed) session.write_block(ensemble.take_block());
    const bool stop = session.stop_requested(ensemble.iteration());
    if (stop || flushed || ensemble.done() || session.checkpoint_due(ensemble.iteration())) {
      if (ensemble.pending() > 0) session.write_block(ensemble.take_block());
      session.checkpoint(ensemble.iteration(), ensemble.particle_rows(), ensemble.loop_state());
      if (stop) return session.interrupted(ensemble.iteration());
    }
  }
  std::vector<double> accept_sum, divergences;
  ensemble.totals(accept_sum, divergences);
  return session.finish(ensemble.adapted(), accept_sum, divergences, ensemble.grad_evals());
}

}  // namespace hmc::services
