#pragma once
/// \file
/// \brief Writers for a run's results (rank 0, host): draws.csv (the "csv" draw format,
/// io/writers/csv.cpp), particles.csv and the text of summary.json and of the summary
/// table; write_file_atomic writes any of them. Draws are read back from a DrawSource in
/// ranges of particles, so memory stays bounded whatever the run.
///
/// Every file is written to a temporary name in the output directory and renamed
/// into place, so a killed job never leaves a half-written result file.

#include "hmc/core/draw_source.hpp"
#include "hmc/core/draws.hpp"
#include "hmc/diagnostics/loo.hpp"
#include "hmc/diagnostics/summary.hpp"
#include "hmc/sampler/settings.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
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
  int leapfrog_steps = 0;
  double temperature = 1.0;
  std::uint64_t seed = 0;
  std::int64_t grad_evals = 0;
  double mean_leapfrog_steps = 0.0;  ///< over recorded draws (jittered with ChEES)
};

/// \brief Per-particle post-warmup totals, in global particle order, thinned-out
/// transitions included (the stored draws hold the recorded ones only).
struct RunTotals {
  std::vector<double> accept_sum;   ///< sum of the acceptance probabilities
  std::vector<double> divergences;  ///< divergent transitions
  std::int64_t grad_evals = 0;      ///< gradient evaluations, warmup included, all ranks
};

/// \brief summary.json's sampler statistics: acceptance and divergences from
/// `totals`, mean leapfrog steps from the stored n_steps column (read in ranges).
SamplerStats sampler_stats(const DrawSource& source, const RunTotals& totals, const sampler::Settings& s, int ranks);

/// \brief Writes `content` to `path` via a temporary file and a rename.
void write_file_atomic(const std::string& path, const std::string& content);

/// \brief draws.csv: `particle,draw,lp,acceptance_rate,step_size,n_steps,diverging,energy,<parameter
/// names>`, one row per particle and post-warmup draw, particle-major, both 0-based.
/// n_steps and diverging are integers; other values std::to_chars: the shortest
/// representation that reads back exactly (`precision` 0) or `precision` significant
/// digits; NaN and infinities as NaN, Inf, -Inf. Header fields holding a comma, a
/// double quote or a line break are quoted as RFC 4180 says. `progress(fraction)`
/// after each range of particles. Throws RunError naming the file on failure.
void write_draws_csv(const std::string& path, const DrawSource& source, int precision,
                     const std::function<void(double)>& progress = {});

/// \brief particles.csv: particle,accept_rate,divergences,mean_n_leapfrog,e_bfmi — one row per
/// particle: accept_sum / draws and divergences from `totals` (`draws`: post-warmup
/// iterations), the mean of its stored n_steps, the E-BFMI of its stored energies.
/// A value that is not finite (E-BFMI with fewer than 2 draws) is an empty field.
void write_particles_csv(const std::string& path, const DrawSource& source, const RunTotals& totals, int draws);

/// \brief "parameters" (name -> statistics), "parameter_order" and "diagnostics"
/// (particles used by the capped statistics) of summary.json.
nlohmann::json parameters_json(const std::vector<diagnostics::ParameterSummary>& params);

/// \brief PSIS-LOO as JSON: elpd_loo, se, p_loo, n_samples, n_data_points, r_eff, good_k,
/// pareto_k_counts {good, bad, very_bad}, arviz ("1" or "0.23": whose rules).
nlohmann::json loo_json(const diagnostics::LooResult& r);

/// \brief The per-parameter table (header and one row per parameter), and a line
/// saying so when the rank-based statistics used a subset of the particles.
std::string parameter_table(const std::vector<diagnostics::ParameterSummary>& params);

nlohmann::json summary_json(const std::vector<diagnostics::ParameterSummary>& params, const SamplerStats& stats,
                            const Timings& t, const hmc::Adapted& adapted, const std::vector<std::string>& warnings);

/// \brief What warmup settled on, for summary.json and run.json.
nlohmann::json adaptation_json(const hmc::Adapted& adapted);

/// \brief Sentences that name the likely cause of a run's trouble and the keys that help,
/// from what warmup did (restarts: heavy tails, initialisation, modes) and the length of
/// its trajectories (correlation); empty when neither points to anything. They follow the
/// `warnings` (diagnostics::warnings) in summary.json and the table.
std::vector<std::string> warning_causes(const hmc::Adapted& adapted, const SamplerStats& st, const sampler::Settings& s,
                                        const std::vector<std::string>& warnings);

/// \brief The table rank 0 prints at the end of a run.
std::string summary_table(const std::vector<diagnostics::ParameterSummary>& params, const SamplerStats& stats,
                          const Timings& t, const hmc::Adapted& adapted, const std::vector<std::string>& warnings);

}  // namespace hmc::io
