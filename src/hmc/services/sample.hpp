#pragma once
/// \file
/// \brief `hmc --config run.json` (and `hmc resume`): one sampling run of a model,
/// top-down, as Stan's services/sample/hmc_static_diag_e_adapt.hpp is one run of its
/// sampler. A model's entry (app/register.hpp: entry_of) instantiates it for its type.
///
///   1. the job around the run: signal handlers, the rank watchdog (RunFrame);
///   2. the model, built once per rank; rank 0 checks the run against it (prepare.hpp);
///   3. the session (staging directory, draw store) and the ensemble of this rank's
///      particles (sampler/run.hpp) with the transition kernel of /sampler/algorithm
///      (sampler/kernels.hpp);
///   4. a fresh start (initial positions) or the checkpoint of a resumed run;
///   5. the loop: an iteration, a block of draws to the store when one is full, a
///      checkpoint after every block, every /output/checkpoint_every iterations, at the
///      end of sampling and on a stop signal (exit code 75, `hmc resume` goes on);
///   6. finish: diagnostics, the draw files of /output/formats, summary.json, run.json,
///      published all at once.
/// An error on the way ends the run through RunFrame::failed: one line on rank 0, its
/// exit code, and no partial output left behind.

#include "hmc/io/draw_writer.hpp"
#include "hmc/model/concept.hpp"
#include "hmc/parallel/mpi_context.hpp"
#include "hmc/sampler/kernels.hpp"
#include "hmc/sampler/run.hpp"
#include "hmc/services/prepare.hpp"
#include "hmc/services/run_spec.hpp"
#include "hmc/services/session.hpp"

#include <spdlog/spdlog.h>

#include <optional>
#include <vector>

namespace hmc::services {

/// \brief One line on what warmup's checks repaired (sampler/health.hpp), where they did anything.
inline void log_warmup(const WarmupRepairs& r) {
  if (r.restarted == 0 && r.failed == 0 && r.skipped_checks == 0) return;
  spdlog::info("warmup: {} particle(s) restarted at {} checks ({} found stuck, {} far from the ensemble){}{}",
               r.restarted, r.checks, r.stuck, r.far,
               r.failed > 0 ? fmt::format("; {} found no finite log density and stayed", r.failed) : std::string(),
               r.skipped_checks > 0 ? fmt::format("; {} check(s) found most particles stuck or far, and restarted none",
                                                  r.skipped_checks)
                                    : std::string());
}

/// \brief sample() with the transition kernel Kernel (of /sampler/algorithm).
template <class Model, class Kernel>
int sample_with(const parallel::MpiContext& mpi, const RunSpec& spec, const io::DrawFormats& formats) {
  if constexpr (!sampler::check_kernel<Kernel, Model>()) {
    return 1;  // check_kernel's message names what the kernel lacks
  } else {
    const RunFrame frame(mpi, spec);
    std::optional<Session> session;
    const auto failed = [&](const std::exception& e) { return frame.failed(e, session && session->checkpointed()); };
    try {
      const Model model = prepare_model<Model>(mpi, spec, formats, Checks{true, !spec.resume});
      session.emplace(mpi, spec, store_layout(model, spec.run), formats, data_arrays(model, spec.run));
      const auto& dec = session->decomposition();
      sampler::EnsembleSampler<Model, Kernel> ensemble(model, session->settings(), dec.begin(), dec.count(),
                                                       mpi.allreduce());
      session->set_note(model::note(model));
      if (mpi.root()) {
        // The model's gradient on a team of threads per particle (the HMM's /model/forward).
        const int wanted = model::gradient_team_size(model);
        if (ensemble.team_size() > 0) {
          spdlog::info("gradient on a team of {} thread(s) per particle ({} chunks of the forward pass in parallel)",
                       ensemble.team_size(), wanted);
        } else if (wanted > 0) {
          spdlog::warn("/sampler/algorithm {} has no team path: the gradient runs one particle per thread",
                       Kernel::name);
        }
      }

      if (auto resumed = session->open(ensemble.row_width())) {
        ensemble.restore(resumed->rows, resumed->loop);
      } else {
        session->agree_init(ensemble.initialise());
      }

      const auto progress = session->progress(ensemble.iteration());
      while (!ensemble.done()) {
        ensemble.iterate(progress, session->elapsed());
        if (mpi.root() && ensemble.iteration() == spec.run.sampler.warmup) log_warmup(ensemble.adapted().repairs);
        const bool flushed = ensemble.block_ready();
        if (flushed) session->write_block(ensemble.take_block());
        const bool stop = session->stop_requested(ensemble.iteration());
        if (stop || flushed || ensemble.done() || session->checkpoint_due(ensemble.iteration())) {
          if (ensemble.pending() > 0) session->write_block(ensemble.take_block());
          session->checkpoint(ensemble.iteration(), ensemble.particle_rows(), ensemble.loop_state());
          if (stop) return session->interrupted(ensemble.iteration());
        }
      }

      std::vector<double> accept_sum, divergences;
      ensemble.totals(accept_sum, divergences);
      return session->finish(ensemble.adapted(), accept_sum, divergences, ensemble.grad_evals());
    } catch (const ConfigError& e) {
      return failed(e);
    } catch (const DataError& e) {
      return failed(e);
    } catch (const RunError& e) {
      return failed(e);
    }
  }
}

/// \brief Samples the model of `spec` (collective) with the kernel of /sampler/algorithm;
/// `formats`: the draw formats that /output/formats may name (io::draw_formats() for
/// hmc itself). Returns the exit code (0, 2, 3, 4 or 75) on every rank.
template <class Model>
int sample(const parallel::MpiContext& mpi, const RunSpec& spec, const io::DrawFormats& formats) {
  return sampler::visit_kernel(spec.run.sampler.algorithm, [&](auto kernel) {
    return sample_with<Model, typename decltype(kernel)::template type<Model>>(mpi, spec, formats);
  });
}

}  // namespace hmc::services
