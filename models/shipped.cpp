/// \file
/// \brief The models hmc ships: one HMC_REGISTER_MODEL line each (app/register.hpp), the
/// line a user's header has for the user's model, in the order `hmc --list-models` prints
/// them (alphabetical). This list is the only one: the registry (app/models.hpp: registry())
/// gives `--list-models`, `--list-keys`, the schema's /model/name, the docs' checks and the
/// tests their models.
///
/// Adding a model to hmc itself is its header in models/, its #include and its line here
/// and its section of docs/models.md, plus its config, data and test
/// (docs/adding-a-model.md, "in the tree"); a user's own model needs none of this.
///
/// This file instantiates the sampler for each shipped model. Every executable that links
/// hmc::models holds it, its registrations included: the library's link option names
/// hmc_shipped_models, defined below, so the linker takes this file (models/CMakeLists.txt).

#define HMC_MODEL_ORIGIN "hmc"  // the origin of these models (ModelInfo::origin), not this file's name
#include "coin_toss.hpp"
#include "eight_schools.hpp"
#include "harmonic_oscillator.hpp"
#include "hmc/app/register.hpp"
#include "hmm.hpp"
#include "linear_acceleration.hpp"
#include "logistic_regression.hpp"

HMC_REGISTER_MODEL(hmc::models::CoinToss, "coin_toss",
                   "independent coins, Bernoulli tosses, Beta(a, b) priors; p on the logit scale");
HMC_REGISTER_MODEL(hmc::models::EightSchools, "eight_schools",
                   "hierarchical normal (Rubin 1981), non-centred; gradient by forward-mode autodiff");
HMC_REGISTER_MODEL(hmc::models::HarmonicOscillator, "harmonic_oscillator",
                   "U(q) = 1/2 (q - c)^T K (q - c): a Gaussian with known moments");
HMC_REGISTER_MODEL(hmc::models::Hmm, "hmm",
                   "hidden Markov model, categorical or Gaussian emissions; states summed out (forward algorithm)");
HMC_REGISTER_MODEL(hmc::models::LinearAcceleration, "linear_acceleration",
                   "z = h + v0 t + g t^2 + N(0, sigma): height under constant acceleration");
HMC_REGISTER_MODEL(hmc::models::LogisticRegression, "logistic_regression",
                   "Bayesian logistic regression, Normal priors on alpha, beta");

/// The symbol the link option of hmc::models names (models/CMakeLists.txt).
extern "C" const bool hmc_shipped_models = true;
