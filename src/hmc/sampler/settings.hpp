#pragma once
/// \file
/// \brief Plain settings of one sampling run (filled from the config by the app).

#include "hmc/core/modes.hpp"
#include "hmc/sampler/adaptation.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace hmc::sampler {

struct Settings {
  std::int64_t particles = 1024;  ///< global particle count
  int warmup = 500;               ///< iterations before recording
  int draws = 500;                ///< iterations after warmup
  int thin = 1;                   ///< record every thin-th post-warmup iteration
  double step_size = 0.1;         ///< initial (adapted) or fixed step size
  int leapfrog_steps = 10;        ///< fixed steps, or initial length / step size for ChEES
  double temperature = 1.0;
  InitStrategy init_strategy = InitStrategy::kUniform;
  double init_radius = 2.0;
  std::vector<double> init_values;  ///< unconstrained centre for "values"
  int init_attempts = 100;          ///< re-draws of a particle with no finite log density
  std::uint64_t seed = 1;
  int progress_every = 0;             ///< 0: no progress lines
  bool save_warmup = false;           ///< record warmup draws too (every thin-th warmup iteration)
  bool log_likelihood = false;        ///< record the model's pointwise log-likelihood with every draw
  bool posterior_predictive = false;  ///< ... and its posterior predictive draws of the observations
  bool generated_quantities = false;  ///< ... and its generated quantities
  int block_draws = 0;                ///< draws per particle held on the device before they are handed over; 0: all
  AdaptSettings adapt;
  Algorithm algorithm = Algorithm::kHmc;          ///< the transition kernel
  int max_tree_depth = 10;                        ///< NUTS: most doublings of a trajectory
  Integrator integrator = Integrator::kLeapfrog;  ///< MAMS: of its isokinetic dynamics

  /// Draws recorded per particle: ceil(draws / thin).
  int kept() const { return (draws + thin - 1) / thin; }
  /// Warmup draws recorded per particle: ceil(warmup / thin) with save_warmup, else 0.
  int kept_warmup() const { return save_warmup ? (warmup + thin - 1) / thin : 0; }
};

}  // namespace hmc::sampler
