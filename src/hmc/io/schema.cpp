#include "hmc/io/schema.hpp"

namespace hmc::io {

const char* type_name(KeyType t) {
  switch (t) {
    case KeyType::kSection:
      return "an object";
    case KeyType::kInteger:
      return "an integer";
    case KeyType::kNumber:
      return "a number";
    case KeyType::kString:
      return "a string";
    case KeyType::kBoolean:
      return "a boolean";
    case KeyType::kNumberArray:
      return "an array of numbers";
    case KeyType::kNumberMatrix:
      return "an array of arrays of numbers";
    case KeyType::kData:
      return "a file path or an object";
  }
  return "?";
}

std::vector<KeySpec> generic_keys(const std::vector<std::string>& model_names) {
  using K = KeyType;
  std::vector<KeySpec> keys;
  auto add = [&](KeySpec k) { keys.push_back(std::move(k)); };
  add({"/model", K::kSection, nullptr, {}, {}, false, {}, true, "the model and its data"});
  add({"/model/name",
       K::kString,
       nullptr,
       {},
       {},
       false,
       model_names,
       true,
       "which model to sample (`hmc --list-models`)"});
  add({"/model/data",
       K::kData,
       nullptr,
       {},
       {},
       false,
       {},
       false,
       "data file (relative to the config file) or inline data object"});
  add({"/model/priors",
       K::kSection,
       nlohmann::json::object(),
       {},
       {},
       false,
       {},
       false,
       "prior hyper-parameters; keys depend on the model"});

  add({"/sampler", K::kSection, nlohmann::json::object(), {}, {}, false, {}, false, "HMC settings"});
  // Particle counts travel as int in the gather (MPI counts): at most 2^31 - 1.
  add({"/sampler/particles",
       K::kInteger,
       1024,
       1,
       2147483647.0,
       false,
       {},
       false,
       "global number of particles (independent chains), split over ranks"});
  add({"/sampler/warmup", K::kInteger, 500, 0, 1e9, false, {}, false, "iterations before draws are recorded"});
  add({"/sampler/draws", K::kInteger, 500, 1, 1e9, false, {}, false, "iterations after warmup"});
  add({"/sampler/thin", K::kInteger, 1, 1, 1e9, false, {}, false, "record every thin-th post-warmup iteration"});
  add({"/sampler/step_size", K::kNumber, 0.1, 0.0, {}, true, {}, false, "leapfrog step size"});
  add({"/sampler/leapfrog_steps", K::kInteger, 10, 1, 1e6, false, {}, false, "leapfrog steps per transition"});
  add({"/sampler/temperature", K::kNumber, 1.0, 0.0, 1e6, true, {}, false, "T: the ensemble samples p(q)^(1/T)"});
  add({"/sampler/init", K::kSection, nlohmann::json::object(), {}, {}, false, {}, false, "initial positions"});
  add({"/sampler/init/strategy",
       K::kString,
       "uniform",
       {},
       {},
       false,
       {"uniform", "values", "prior"},
       false,
       "uniform: each coordinate uniform in (-radius, radius), unconstrained scale; values: uniform in "
       "(-radius, radius) around /sampler/init/values; prior: a draw from the model's prior (models that can)"});
  add({"/sampler/init/radius", K::kNumber, 2.0, 0.0, {}, true, {}, false, "half-width of the uniform initialisation"});
  add({"/sampler/init/values",
       K::kNumberArray,
       nullptr,
       {},
       {},
       false,
       {},
       false,
       "unconstrained starting point (one value per unconstrained coordinate) for strategy values"});

  add({"/sampler/adapt", K::kSection, nlohmann::json::object(), {}, {}, false, {}, false, "warmup adaptation"});
  add({"/sampler/adapt/enabled",
       K::kBoolean,
       true,
       {},
       {},
       false,
       {},
       false,
       "adapt step size, metric and path length during warmup"});
  add({"/sampler/adapt/target_accept",
       K::kNumber,
       0.8,
       0.0,
       1.0,
       true,
       {},
       false,
       "target ensemble-mean acceptance probability of the step-size adaptation"});
  add({"/sampler/adapt/metric",
       K::kString,
       "diag",
       {},
       {},
       false,
       {"unit", "diag", "dense"},
       false,
       "metric (inverse mass matrix): unit, diag (ensemble variances) or dense (ensemble covariance)"});
  add({"/sampler/adapt/trajectory",
       K::kString,
       "chees",
       {},
       {},
       false,
       {"fixed", "chees"},
       false,
       "path length: fixed leapfrog_steps, or ChEES-adapted with jittered step counts"});
  add({"/sampler/adapt/max_leapfrog",
       K::kInteger,
       1000,
       1,
       1e6,
       false,
       {},
       false,
       "cap on leapfrog steps per ChEES trajectory"});
  add({"/sampler/adapt/init_buffer",
       K::kInteger,
       75,
       0,
       1e9,
       false,
       {},
       false,
       "warmup iterations before the first metric window"});
  add({"/sampler/adapt/term_buffer",
       K::kInteger,
       50,
       0,
       1e9,
       false,
       {},
       false,
       "final warmup iterations that adapt the step size only"});
  add({"/sampler/adapt/base_window",
       K::kInteger,
       25,
       1,
       1e9,
       false,
       {},
       false,
       "first metric window; each next one is twice as long"});

  add({"/seed",
       K::kInteger,
       1,
       0,
       18446744073709551615.0,
       false,
       {},
       false,
       "64-bit seed; draws depend only on it, not on ranks or threads"});

  add({"/diagnostics", K::kSection, nlohmann::json::object(), {}, {}, false, {}, false, "convergence diagnostics"});
  add({"/diagnostics/superchains",
       K::kInteger,
       0,
       0,
       2147483647.0,
       false,
       {},
       false,
       "superchains (groups of consecutive particles) for nested R-hat; 0: the largest divisor of particles "
       "up to min(64, particles / 2)"});
  add({"/diagnostics/max_draws",
       K::kInteger,
       8388608,
       1000,
       1e12,
       false,
       {},
       false,
       "draws per parameter that the rank-based diagnostics (R-hat, ESS, MCSE, quantiles) hold in memory; "
       "beyond it they use the first max_draws / draws particles (means and sds always use all)"});

  add({"/output", K::kSection, nlohmann::json::object(), {}, {}, false, {}, false, "where results go"});
  add({"/output/dir",
       K::kString,
       "output",
       {},
       {},
       false,
       {},
       false,
       "output directory; the run works in DIR.partial and renames it to DIR when done. An existing non-empty "
       "DIR is replaced only with --overwrite"});
  add({"/output/formats",
       K::kString,
       "netcdf",
       {},
       {},
       false,
       {"netcdf", "csv", "both"},
       false,
       "draws as draws.nc (ArviZ InferenceData, netCDF-4), draws.csv, or both"});
  add({"/output/save_warmup",
       K::kBoolean,
       false,
       {},
       {},
       false,
       {},
       false,
       "also keep the warmup draws (every thin-th warmup iteration): groups warmup_posterior and "
       "warmup_sample_stats of draws.nc"});
  add({"/output/flush_every",
       K::kInteger,
       0,
       0,
       1e9,
       false,
       {},
       false,
       "recorded draws per particle held on the device before they are written to the store; 0: as many as "
       "make a block of about 32 MiB"});
  add({"/output/checkpoint_every",
       K::kInteger,
       100,
       0,
       1e9,
       false,
       {},
       false,
       "write a checkpoint every N iterations (also after every block of draws, at the end of sampling and on "
       "SIGTERM/SIGINT/SIGUSR1); 0: only those"});
  add({"/output/precision",
       K::kInteger,
       0,
       0,
       17,
       false,
       {},
       false,
       "significant digits of the floating-point values in draws.csv; 0: the shortest text that reads back as "
       "the same double"});
  add({"/output/compression",
       K::kInteger,
       1,
       0,
       9,
       false,
       {},
       false,
       "deflate level of draws.nc's variables (0: none); netCDF readers decompress transparently"});

  add({"/log", K::kSection, nlohmann::json::object(), {}, {}, false, {}, false, "messages"});
  add({"/log/level",
       K::kString,
       "info",
       {},
       {},
       false,
       {"trace", "debug", "info", "warn", "error", "off"},
       false,
       "log level on rank 0"});
  add({"/log/progress_every",
       K::kInteger,
       0,
       0,
       1e9,
       false,
       {},
       false,
       "a progress line every N iterations; 0: about ten lines per run"});

  add({"/run", K::kSection, nlohmann::json::object(), {}, {}, false, {}, false, "fault handling of the job"});
  // Ten minutes: far above one iteration (or building the model) of any run that fits a
  // node, and short against a batch job's hours, so a hung rank stops the job, not its time.
  add({"/run/rank_timeout_s",
       K::kNumber,
       600.0,
       0.0,
       1e9,
       false,
       {},
       false,
       "under MPI: a rank whose process stops responding, or that computes this long without reaching its next "
       "MPI call, ends the job (exit code 4, a message naming the rank); 0: no watchdog"});
  return keys;
}

}  // namespace hmc::io
