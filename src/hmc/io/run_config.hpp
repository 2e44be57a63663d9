#pragma once
/// \file
/// \brief The typed form of a resolved config: what a run reads of its generic keys,
/// filled once through keys::Values (so every default comes from the schema), and the
/// arithmetic of kept draws and blocks. Nothing outside io/config reads a config's JSON;
/// the rest of hmc reads a RunConfig (a test enforces it: tests/layering).

#include "hmc/sampler/settings.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace hmc::io {

/// \brief /output.
struct OutputConfig {
  std::string dir = "output";                  ///< /output/dir, as given (services::output_paths makes it absolute)
  std::vector<std::string> formats{"netcdf"};  ///< /output/formats as a list ("both": netcdf, csv)
  bool save_warmup = false;
  int flush_every = 0;  ///< 0: blocks of about 32 MiB
  int checkpoint_every = 100;
  int precision = 0;
  int compression = 1;
};

/// \brief /diagnostics.
struct DiagnosticsConfig {
  int superchains = 0;  ///< 0: diagnostics::default_superchains
  std::int64_t max_draws = 8388608;
};

/// \brief /log.
struct LogConfig {
  std::string level = "info";
  int progress_every = 0;  ///< as given; sampler.progress_every is the one in use
};

/// \brief /run (fault handling of the job).
struct FaultConfig {
  double rank_timeout_s = 600.0;
};

/// \brief Everything a run reads of its config's generic keys.
struct RunConfig {
  std::string model;               ///< /model/name
  nlohmann::json model_section;    ///< /model, as the model reads it (Model::from_config, keys::Values)
  sampler::Settings sampler;       ///< /sampler, /seed, /output/save_warmup, the progress interval
  bool init_values_given = false;  ///< the config has /sampler/init/values (perhaps empty)
  OutputConfig output;
  DiagnosticsConfig diagnostics;
  LogConfig log;
  FaultConfig run;

  /// Recorded post-warmup draws per particle: ceil(draws / thin).
  std::int64_t kept_draws() const { return sampler.kept(); }
  /// Recorded warmup draws per particle: ceil(warmup / thin) with save_warmup, else 0.
  std::int64_t kept_warmup_draws() const { return sampler.kept_warmup(); }
  /// B, the draws per particle of one block of `columns` recorded values per draw
  /// (parameters and statistics): /output/flush_every, or as many as keep a gathered block near 32 MiB;
  /// never more than a section records (docs/output.md#memory-streaming-draws-to-disk).
  int block_draws(std::int64_t columns) const;
  /// Superchains for nested R-hat: /diagnostics/superchains, or the default for the particles.
  int superchains() const;
};

/// \brief The typed config of a config that io::validate_config accepted (or one a
/// checkpoint or run.json recorded: keys it lacks take their defaults).
RunConfig run_config(const nlohmann::json& config);

/// \brief The config as the result files record it: without /output/dir (where a run
/// was written is not part of it, and leaving it out keeps draws.nc the same wherever
/// the same run is written).
nlohmann::json recorded_config(const nlohmann::json& config);

/// \brief A hash of what must not change between a checkpoint and its resumption: the
/// config without /output, /log and /run, and the data (16 hex digits).
std::string config_fingerprint(const nlohmann::json& config, const nlohmann::json& data);

/// \brief Bytes the model's data takes once a model holds it: 8 per number of the data
/// (the shipped models keep their data as doubles or integers on the device).
std::int64_t data_bytes(const nlohmann::json& data);

}  // namespace hmc::io
