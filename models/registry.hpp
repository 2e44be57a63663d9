#pragma once
/// \file
/// \brief The models hmc ships, by the name a config gives them, and `visit`, which hands
/// the type of the model a config names to a typed service:
///
///     models::visit(spec.run.model, [&](auto m) {
///       using Model = typename decltype(m)::type;
///       return services::sample<Model>(mpi, spec, io::draw_formats());
///     });
///
/// Adding a model to hmc itself is one header in models/, one line in shipped() below and
/// its section of docs/models.md, plus its config, data and test (docs/adding-a-model.md,
/// "in the tree"); a user's own model needs none of this (HMC_REGISTER_MODEL, "your first
/// model"). Every list of the shipped models (`hmc --list-models`, the schema's
/// /model/name, the docs' tables and their checks) comes from this list; the executables
/// run them through shipped_entries() (shipped.hpp).

#include "coin_toss.hpp"
#include "eight_schools.hpp"
#include "harmonic_oscillator.hpp"
#include "hmc/app/models.hpp"
#include "hmc/core/errors.hpp"
#include "hmc/io/config.hpp"
#include "hmc/keys/key.hpp"
#include "hmc/model/concept.hpp"
#include "hmm.hpp"
#include "linear_acceleration.hpp"
#include "logistic_regression.hpp"

#include <cstddef>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace hmc::models {

/// \brief A model's type, as visit() hands it over.
template <class Model>
struct Type {
  using type = Model;
};

/// \brief One entry of a list of models: its config name and a one-line summary.
template <class Model>
struct Registered {
  const char* name;
  const char* summary;
};

template <class Model>
constexpr Registered<Model> entry(const char* name, const char* summary) {
  return {name, summary};
}

using app::ModelInfo;

/// \brief A list of model types with their names: `ModelList list{entry<A>("a", ...), ...}`.
///
/// A type that lacks a member of the model concept fails to compile with one message
/// naming it (model/concept.hpp), and nothing else: visit() does not instantiate its
/// function for such a type, nor infos() its members.
template <class... Models>
class ModelList {
 public:
  constexpr explicit ModelList(Registered<Models>... entries) : entries_(entries...) {}

  /// \brief `f(Type<Model>{})` for the model named `name`; its result (`R`, an exit
  /// code unless said otherwise). Throws ConfigError for a name not in the list.
  template <class R = int, class F>
  R visit(const std::string& name, F&& f) const {
    return visit_from<R, 0>(name, f);
  }

  /// \brief Each model's entry (app/register.hpp: its services instantiated), in list
  /// order; only the file that calls it includes app/register.hpp (models/shipped.cpp).
  template <class EntryOf>
  void for_each_entry(EntryOf&& f) const {
    for_each_from<0>(f);
  }

  /// \brief Name, summary, keys and abilities of each model, in list order.
  std::vector<ModelInfo> infos() const {
    std::vector<ModelInfo> out;
    add_infos<0>(out);
    return out;
  }

 private:
  template <class R, std::size_t I, class F>
  R visit_from(const std::string& name, F& f) const {
    if constexpr (I == sizeof...(Models)) {
      throw ConfigError("config error: /model/name: this build has no model \"" + name + "\"");
    } else {
      using Model = std::tuple_element_t<I, std::tuple<Models...>>;
      if (name == std::get<I>(entries_).name) {
        if constexpr (model::check_registrable_model<Model>()) {
          return f(Type<Model>{});
        } else {
          throw std::logic_error("incomplete model");  // not reached: it does not compile
        }
      }
      return visit_from<R, I + 1>(name, f);
    }
  }

  template <std::size_t I, class F>
  void for_each_from(F& f) const {
    if constexpr (I < sizeof...(Models)) {
      using Model = std::tuple_element_t<I, std::tuple<Models...>>;
      if constexpr (model::check_registrable_model<Model>()) f(Type<Model>{}, std::get<I>(entries_));
      for_each_from<I + 1>(f);
    }
  }

  template <std::size_t I>
  void add_infos(std::vector<ModelInfo>& out) const {
    if constexpr (I < sizeof...(Models)) {
      using Model = std::tuple_element_t<I, std::tuple<Models...>>;
      if constexpr (model::is_registrable_model<Model>()) {
        const auto& e = std::get<I>(entries_);
        out.push_back(ModelInfo{e.name, e.summary, &Model::config_keys, model::can_sample_prior<Model>(), "hmc"});
      }
      add_infos<I + 1>(out);
    }
  }

  std::tuple<Registered<Models>...> entries_;
};

/// \brief The models this build ships, in the order `hmc --list-models` prints them.
inline const auto& shipped() {
  static const ModelList list{
      entry<CoinToss>("coin_toss", "independent coins, Bernoulli tosses, Beta(a, b) priors; p on the logit scale"),
      entry<EightSchools>("eight_schools",
                          "hierarchical normal (Rubin 1981), non-centred; gradient by forward-mode autodiff"),
      entry<HarmonicOscillator>("harmonic_oscillator", "U(q) = 1/2 (q - c)^T K (q - c): a Gaussian with known moments"),
      entry<Hmm>("hmm",
                 "hidden Markov model, categorical or Gaussian emissions; states summed out (forward algorithm)"),
      entry<LinearAcceleration>("linear_acceleration",
                                "z = h + v0 t + g t^2 + N(0, sigma): height under constant acceleration"),
      entry<LogisticRegression>("logistic_regression", "Bayesian logistic regression, Normal priors on alpha, beta"),
  };
  return list;
}

/// \brief shipped().visit: `f(Type<Model>{})` for the shipped model named `name`.
template <class R = int, class F>
R visit(const std::string& name, F&& f) {
  return shipped().template visit<R>(name, std::forward<F>(f));
}

/// \brief The shipped models' infos (registry.cpp).
const std::vector<ModelInfo>& registry();
/// \brief The entry for `name`, or nullptr.
const ModelInfo* find_model(const std::string& name);
std::vector<std::string> model_names();
/// \brief Model-specific config keys, for io::validate_config (none for an unknown name).
keys::Keys model_keys(const std::string& name);
/// \brief What configs of this build may name: the shipped models and draw formats.
io::Catalog catalog();

/// \brief `hmc --list-keys`: every key's table row, the generic keys (docs/config.md)
/// and then each model's (docs/models.md).
std::string keys_listing();

}  // namespace hmc::models
