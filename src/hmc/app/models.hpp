#pragma once
/// \file
/// \brief hmc's one registry of models: registry(), the models an executable runs, each
/// added by one HMC_REGISTER_MODEL line (app/register.hpp) as the program starts: hmc's
/// own in models/shipped.cpp, a user's in the user's header. Each entry carries the
/// model's name, summary and config keys and the services instantiated for its type, so
/// that the command line (app/main.hpp), `--list-models`, `--list-keys`, the schema's
/// /model/name and the tests find any of them by name without knowing the types.

#include "hmc/io/config.hpp"
#include "hmc/keys/key.hpp"
#include "hmc/parallel/mpi_context.hpp"
#include "hmc/services/diagnose.hpp"
#include "hmc/services/run_spec.hpp"

#include <string>
#include <vector>

namespace hmc::services {
struct GenerateRequest;  // services/generate.hpp
}  // namespace hmc::services

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
  /// `hmc generate`: the groups after sampling over an earlier run's draws.nc.
  int (*generate)(const parallel::MpiContext&, const services::RunSpec&, const services::GenerateRequest&) = nullptr;
  /// The checks of `--validate` in this process alone, without MPI (the config fuzzer,
  /// tests/fuzz): builds the model, checks the run against it and its memory for one
  /// rank, estimates its output. Throws what the model and the checks throw.
  void (*check)(const services::RunSpec&) = nullptr;
};

/// \brief The config keys, draw formats and key listing of a list of models.
io::Catalog catalog_of(const std::vector<ModelInfo>& infos);
/// \brief `hmc --list-keys`: every key's table row, the generic keys (docs/config.md)
/// and then each model's (docs/models.md).
std::string keys_listing_of(const std::vector<ModelInfo>& infos);

/// \brief A list of models, in the order `--list-models` prints them (registry()).
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

/// \brief The registry: every model that an HMC_REGISTER_MODEL line of this executable
/// registered, in the order `--list-models` prints them: the shipped ones (origin "hmc",
/// models/shipped.cpp) first, in the order of their lines, then the others in the order
/// their registrations ran. Built on the first call, after the program's static
/// initialisation; throws std::invalid_argument (ModelTable) when two share a name.
/// An executable that links hmc::models holds the shipped models (models/CMakeLists.txt).
const ModelTable& registry();

/// \brief What HMC_REGISTER_MODEL appends to as the program starts (app/register.hpp);
/// registry() reads it.
std::vector<ModelEntry>& registered_models();

}  // namespace hmc::app
