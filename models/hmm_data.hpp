#pragma once
/// \file
/// \brief The hidden Markov model's config keys and its reader: the /model section (through
/// keys::Values) and the data (through keys::Data) into HmmDescription, a plain host
/// description that models/hmm.hpp builds the model from. Host only; no kernels here.
///
/// The keys hold every default but those of the per-state priors mu_loc and mu_scale:
/// these have none in the schema (a categorical config must not have them filled in), so
/// their per-state defaults are the constants below, which config_keys() documents and
/// read_hmm applies. read_hmm checks only what the keys cannot: the data, and the rules
/// that join keys (sigma and the mu priors only with gaussian emissions, num_states
/// required with them, per-state prior lengths 1 or num_states, the size limits).

#include "hmc/core/errors.hpp"
#include "hmc/core/text.hpp"
#include "hmc/keys/data.hpp"
#include "hmc/keys/key.hpp"
#include "hmc/keys/values.hpp"
#include "hmc/model/concept.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace hmc::models {

/// Largest number of hidden states (the size of the model's per-particle local arrays).
inline constexpr int kHmmMaxStates = 16;

/// Default of every state's mean in the prior of the gaussian means (/model/priors/mu_loc).
inline constexpr int kHmmMuLocDefault = 0;
/// Default of every state's sd in the prior of the gaussian means (/model/priors/mu_scale).
inline constexpr int kHmmMuScaleDefault = 10;

/// \brief How the forward pass runs (/model/forward): one particle per thread in time
/// order, or on a team of threads in parallel time (models/hmm.hpp), or chosen per run.
enum class HmmForward { kSequential, kParallel, kAuto };

/// \brief What a config and its data say about an HMM, read and checked, on the host.
struct HmmDescription {
  int num_states = 0;              ///< K
  int num_symbols = 0;             ///< V: symbols 0..V-1 (categorical; 0 for gaussian)
  bool gaussian = false;           ///< emission gaussian (else categorical)
  bool initial_dirichlet = false;  ///< initial distribution a parameter (else uniform)
  bool sigma_free = false;         ///< gaussian: sigma a parameter
  double sigma_fixed = 0.0;        ///< gaussian with /model/sigma: its value
  double transition_concentration = 0.0, emission_concentration = 0.0, initial_concentration = 0.0;
  double sigma_scale = 0.0;
  std::vector<double> mu_loc, mu_scale;    ///< gaussian: one per state
  std::vector<int> sequence_offsets{0};    ///< sequence s is [offsets[s], offsets[s + 1])
  std::vector<int> symbols;                ///< categorical: every observation, sequences one after another
  std::vector<double> observations;        ///< gaussian: every observation, sequences one after another
  HmmForward forward = HmmForward::kAuto;  ///< /model/forward
};

inline keys::Keys hmm_config_keys() {
  return {
      keys::string("/model/emission")
          .one_of({"categorical", "gaussian"})
          .default_("categorical")
          .doc("emission distribution of each hidden state: a categorical distribution over V symbols, or a Normal "
               "with a per-state mean and a common sd"),
      keys::integer("/model/num_states")
          .in_range(1, kHmmMaxStates)
          .default_doc("categorical: the data's `num_states`; gaussian: required")
          .doc("number K of hidden states. With categorical emissions it overrides the data's `num_states` (to fit "
               "another K to the same words)"),
      keys::string("/model/initial")
          .one_of({"uniform", "dirichlet"})
          .default_("uniform")
          .doc("initial state distribution: fixed at 1/K, or a parameter `initial[k]` with a Dirichlet prior"),
      keys::number("/model/sigma")
          .positive()
          .default_doc("none (sigma is a parameter)")
          .doc("gaussian: the emission sd, fixed. Absent: `sigma` is sampled, with a half-normal prior"),
      keys::string("/model/forward")
          .one_of({"sequential", "parallel", "auto"})
          .default_("auto")
          .doc("how the forward pass of the gradient runs: `sequential`, one particle per thread in time order; "
               "`parallel`, each particle on a team of threads as an associative scan over time (for a GPU with "
               "fewer particles than threads; the same values to rounding, not bit for bit); `auto`, on a GPU "
               "parallel where the particles per rank would keep at most half its threads busy and a sequence has "
               "64 steps or more, else sequential (docs/models.md#hmm)"),
      keys::number("/model/priors/transition_concentration")
          .positive()
          .default_(1.0)
          .doc("concentration of the symmetric Dirichlet prior on each row of the transition matrix (1: uniform over "
               "the simplex)"),
      keys::number("/model/priors/emission_concentration")
          .positive()
          .default_(0.1)
          .doc("categorical: concentration of the symmetric Dirichlet prior on each state's emission row (below 1 "
               "favours sparse rows)"),
      keys::number("/model/priors/initial_concentration")
          .positive()
          .default_(1.0)
          .doc("`initial` `dirichlet`: concentration of the symmetric Dirichlet prior on the initial distribution"),
      keys::numbers("/model/priors/mu_loc")
          .default_doc("all " + std::to_string(kHmmMuLocDefault))
          .allowed("K elements, or 1 for every state")
          .doc("gaussian: mean of the Normal prior on each state's emission mean `mu[k]` (state k of the ordered "
               "means)"),
      keys::numbers("/model/priors/mu_scale")
          .positive()
          .default_doc("all " + std::to_string(kHmmMuScaleDefault))
          .allowed("each > 0; K elements, or 1 for every state")
          .doc("gaussian: sd of the Normal prior on each `mu[k]`"),
      keys::number("/model/priors/sigma_scale")
          .positive()
          .default_(1.0)
          .doc("gaussian with free sigma: scale of the half-normal prior on sigma; choose it on the scale of the data"),
  };
}

namespace hmm_detail {

/// A per-state prior: the config's list (1 entry for every state, or one per state) or
/// `fallback` for every state.
inline std::vector<double> per_state(const keys::Values& v, const std::string& pointer, int num_states,
                                     double fallback) {
  if (!v.given(pointer)) return std::vector<double>(num_states, fallback);
  const auto given = v.numbers(pointer);
  if (given.size() != 1 && static_cast<int>(given.size()) != num_states)
    throw ConfigError("config error: " + pointer + " has " + std::to_string(given.size()) + " entries, expected 1 or " +
                      std::to_string(num_states) + " (num_states)");
  std::vector<double> out(num_states);
  for (int s = 0; s < num_states; ++s) out[s] = given.size() == 1 ? given[0] : given[s];
  return out;
}

}  // namespace hmm_detail

/// \brief Reads the /model section `model` and the data `data` of an hmm config (see
/// docs/models.md#hmm). ConfigError or DataError, naming the key or data entry.
inline HmmDescription read_hmm(const nlohmann::json& model, const nlohmann::json& data) {
  using nlohmann::json;
  enum class Emission { kCategorical, kGaussian };
  enum class Initial { kUniform, kDirichlet };
  const keys::Values v(model, hmm_config_keys());
  HmmDescription h;
  h.gaussian = v.choice<Emission>("/model/emission", {{"categorical", Emission::kCategorical},
                                                      {"gaussian", Emission::kGaussian}}) == Emission::kGaussian;
  h.initial_dirichlet =
      v.choice<Initial>("/model/initial", {{"uniform", Initial::kUniform}, {"dirichlet", Initial::kDirichlet}}) ==
      Initial::kDirichlet;
  h.forward = v.choice<HmmForward>(
      "/model/forward",
      {{"sequential", HmmForward::kSequential}, {"parallel", HmmForward::kParallel}, {"auto", HmmForward::kAuto}});
  h.transition_concentration = v.number("/model/priors/transition_concentration");
  h.emission_concentration = v.number("/model/priors/emission_concentration");
  h.initial_concentration = v.number("/model/priors/initial_concentration");
  h.sigma_scale = v.number("/model/priors/sigma_scale");
  if (!h.gaussian) {
    for (const char* k : {"/model/sigma", "/model/priors/mu_loc", "/model/priors/mu_scale"}) {
      if (v.given(k))
        throw ConfigError(std::string("config error: ") + k + " applies only to /model/emission gaussian");
    }
  }

  const keys::Data d(data, "hmm");
  const std::string key = h.gaussian ? "y" : "words";
  d.at(key);  // DataError "hmm data needs /words" before the other entries are read

  // Number of states: the config's, else (categorical) the data's.
  if (v.given("/model/num_states")) {
    h.num_states = static_cast<int>(v.integer("/model/num_states"));
  } else if (h.gaussian) {
    throw ConfigError("config error: /model/num_states is required with /model/emission gaussian");
  } else {
    if (!d.has("num_states"))
      throw DataError("data error: hmm needs /num_states in the data or /model/num_states in the config");
    h.num_states = static_cast<int>(d.integer("num_states", 1, kHmmMaxStates));
  }
  const int K = h.num_states;

  if (h.gaussian) {
    for (const auto& seq : d.number_sequences(key)) {
      h.observations.insert(h.observations.end(), seq.begin(), seq.end());
      h.sequence_offsets.push_back(static_cast<int>(h.observations.size()));
    }
  } else {
    // Symbols below num_words where the data gives it, else below the largest int the
    // model indexes with (num_words is then the largest symbol + 1).
    constexpr std::int64_t kMaxSymbols = 1000000000;
    const bool given_words = d.has("num_words");
    if (given_words && !(d.at("num_words").is_number_integer() && d.at("num_words").get<std::int64_t>() >= 2 &&
                         d.at("num_words").get<std::int64_t>() <= kMaxSymbols)) {
      throw DataError("data error: /num_words must be an integer >= 2 (got " + shown(d.at("num_words")) + ")");
    }
    const std::int64_t limit = given_words ? d.at("num_words").get<std::int64_t>() : kMaxSymbols;
    const std::string range =
        given_words ? std::to_string(limit - 1) + " (num_words - 1)" : std::string("num_words - 1");
    std::int64_t largest = -1;
    const auto seqs = d.sequences(key, [&](const json& s, const std::string& where) {
      if (!s.is_number_integer() || s.get<std::int64_t>() < 0 || s.get<std::int64_t>() >= limit)
        throw DataError("data error: " + where + " must be an integer in 0.." + range + " (got " + shown(s) + ")");
      largest = std::max(largest, s.get<std::int64_t>());
    });
    for (const auto& seq : seqs) {
      for (const auto& s : seq) h.symbols.push_back(s.get<int>());
      h.sequence_offsets.push_back(static_cast<int>(h.symbols.size()));
    }
    h.num_symbols = static_cast<int>(given_words ? limit : largest + 1);
    if (h.num_symbols < 2) throw DataError("data error: /words uses only symbol 0; give /num_words (>= 2) in the data");
    // K (V - 1) emission coordinates: refuse before any size of the model overflows int.
    const long long coords = static_cast<long long>(K) * (K - 1) + static_cast<long long>(K) * (h.num_symbols - 1);
    if (coords > model::kMaxDim) {
      throw DataError("data error: /num_words " + std::to_string(h.num_symbols) + " with " + std::to_string(K) +
                      " states makes " + std::to_string(coords) + " coordinates per particle, more than the " +
                      std::to_string(model::kMaxDim) + " that fit in memory (docs/models.md#hmm)");
    }
  }
  if (h.sequence_offsets.back() > (1 << 30) / (K + 1))
    throw DataError("data error: /" + key + " has too many observations");

  if (h.gaussian) {
    h.mu_loc = hmm_detail::per_state(v, "/model/priors/mu_loc", K, kHmmMuLocDefault);
    h.mu_scale = hmm_detail::per_state(v, "/model/priors/mu_scale", K, kHmmMuScaleDefault);
    h.sigma_free = !v.given("/model/sigma");
    if (!h.sigma_free) h.sigma_fixed = v.number("/model/sigma");
  }
  return h;
}

}  // namespace hmc::models
