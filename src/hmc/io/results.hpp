#pragma once
/// \file
/// \brief Writers for a run's results: draws.csv, summary.json, run.json (rank 0, host).
///
/// Every file is written to a temporary name in the output directory and renamed
/// into place, so a killed job never leaves a half-written result file.

#include "hmc/diagnostics/summary.hpp"
#include "hmc/sampler/run.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace hmc::io {

struct Timings {
  double total = 0, setup = 0, sampling = 0, gather = 0, write = 0;
};

/// \brief Whole-ensemble sampler statistics for summary.json.
struct SamplerStats {
  std::int64_t particles = 0;
  int ranks = 1;
  int warmup = 0, draws = 0, thin = 1;
  double acceptance_rate = 0.0;  ///< mean accept probability over all post-warmup transitions
  std::int64_t divergences = 0;  ///< post-warmup
  double step_size = 0.0;
  int leapfrog_steps = 0;
  double temperature = 1.0;
  std::uint64_t seed = 0;
  std::int64_t grad_evals = 0;
  double mean_leapfrog_steps = 0.0;  ///< over recorded draws (jittered with ChEES)
};

SamplerStats sampler_stats(const sampler::LocalDraws& all, const sampler::Settings& s, int ranks);

/// \brief Writes `content` to `path` via a temporary file and a rename.
void write_file_atomic(const std::string& path, const std::string& content);

/// \brief draws.csv: particle,draw,lp,accept_prob,divergent,<names...>, %.17g.
void write_draws_csv(const std::string& path, const sampler::LocalDraws& all, const std::vector<std::string>& names);

/// \brief particles.csv: particle,accept_rate,divergences,mean_n_leapfrog,e_bfmi — one row per
/// particle (post-warmup; E-BFMI from the recorded energies, empty with fewer than 2 draws).
void write_particles_csv(const std::string& path, const sampler::LocalDraws& all, int draws);

nlohmann::json summary_json(const std::vector<diagnostics::ParameterSummary>& params, const SamplerStats& stats,
                            const Timings& t, const sampler::Adapted& adapted,
                            const std::vector<std::string>& warnings);

/// \brief What warmup settled on, for summary.json and run.json.
nlohmann::json adaptation_json(const sampler::Adapted& adapted);

/// \brief The table rank 0 prints at the end of a run.
std::string summary_table(const std::vector<diagnostics::ParameterSummary>& params, const SamplerStats& stats,
                          const Timings& t, const sampler::Adapted& adapted, const std::vector<std::string>& warnings);

/// \brief Creates the output directory (and parents). Returns true if it did not exist.
/// Throws RunError naming the directory when it cannot be created or written.
bool prepare_output_dir(const std::string& dir);

}  // namespace hmc::io
