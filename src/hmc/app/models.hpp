#pragma once
/// \file
/// \brief The models an `hmc` executable runs, as a list built at start-up: the shipped
/// ones (models/shipped.cpp) and those a user's header registers with
/// HMC_REGISTER_MODEL (app/register.hpp). Each entry carries the model's name, summary
/// and config keys and the services instantiated for its type, so that the command line
/// (app/main.hpp) runs any of them by name without knowing the types.

#include "hmc/io/config.hpp"
#include "hmc/keys/key.hpp"
#include "hmc/parallel/mpi_context.hpp"
#include "hmc/services/diagnose.hpp"
#include "hmc/services/run_spec.hpp"

#include <string>
#include <vector>

namespace hmc::app {

/// \brief What a build knows of a model without its type.
struct ModelInfo {
  std::string name;
  std::string summary;
  keys::Keys (*keys)() = nullptr;  ///< the config keys it adds
  bool samples_prior = false;      ///< /sampler/init/strategy "prior" works
  std::string origin = "hmc";      ///< "hmc" for a shipped model, else the header that registered it
};

/// \brief A model with its services: a run, `--validate` and `hmc diagnose`.
struct ModelEntry {
  ModelInfo info;
  int (*sample)(const parallel::MpiContext&, const services::RunSpec&) = nullptr;
  int (*validate)(const parallel::MpiContext&, const services::RunSpec&) = nullptr;
  int (*diagnose)(const parallel::MpiContext&, const services::RunSpec&, const services::DiagnoseOptions&) = nullptr;
};

/// \brief The config keys, draw formats and key listing of a list of models.
io::Catalog catalog_of(const std::vector<ModelInfo>& infos);
/// \brief `hmc --list-keys`: every key's table row, the generic keys (docs/config.md)
/// and then each model's (docs/models.md).
std::string keys_listing_of(const std::vector<ModelInfo>& infos);

/// \brief The models of one executable, in the order `--list-models` prints them.
class ModelTable {
 public:
  /// Throws std::invalid_argument naming both origins when two entries share a name.
  explicit ModelTable(std::vector<ModelEntry> entries);

  const std::vector<ModelEntry>& entries() const { return entries_; }
  std::vector<ModelInfo> infos() const;
  std::vector<std::string> names() const;
  /// \brief The entry for `name`; throws ConfigError ("/model/name: this build has no
  /// model ...") for a name not in the table.
  const ModelEntry& at(const std::string& name) const;
  io::Catalog catalog() const { return catalog_of(infos()); }

 private:
  std::vector<ModelEntry> entries_;
};

/// \brief The models registered by HMC_REGISTER_MODEL in this executable, in the order
/// their registrations ran (app/register.hpp).
std::vector<ModelEntry>& registered_models();

}  // namespace hmc::app
