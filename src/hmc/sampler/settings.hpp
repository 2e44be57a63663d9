#pragma once
/// \file
/// \brief Plain settings of one sampling run (filled from the config by the app).

#include <cstdint>
#include <string>

namespace hmc::sampler {

struct Settings {
  std::int64_t particles = 1024;  ///< global particle count
  int warmup = 500;               ///< iterations before recording
  int draws = 500;                ///< iterations after warmup
  int thin = 1;                   ///< record every thin-th post-warmup iteration
  double step_size = 0.1;
  int leapfrog_steps = 10;
  double temperature = 1.0;
  std::string init_strategy = "uniform";
  double init_radius = 2.0;
  std::uint64_t seed = 1;
  int progress_every = 0;  ///< 0: no progress lines

  /// Draws recorded per particle: ceil(draws / thin).
  int kept() const { return (draws + thin - 1) / thin; }
};

}  // namespace hmc::sampler
