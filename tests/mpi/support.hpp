#pragma once
// What the MPI tests share: a run spec made as `hmc --config` makes one, and a scratch
// directory that every rank sees (rank 0 names it).
#include "hmc/app/models.hpp"
#include "hmc/io/config.hpp"
#include "hmc/io/run_config.hpp"
#include "hmc/parallel/mpi_context.hpp"
#include "hmc/services/run_spec.hpp"
#include "hmc/services/staging.hpp"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace hmc::test {

/// \brief A directory of rank 0's making, named on every rank; removed by rank 0.
class SharedDir {
 public:
  explicit SharedDir(const parallel::MpiContext& mpi) : mpi_(mpi) {
    std::string path;
    if (mpi.root()) {
      std::string tmpl = (std::filesystem::temp_directory_path() / "hmc-mpi-test.XXXXXX").string();
      path = mkdtemp(tmpl.data()) ? tmpl : std::string();
    }
    path_ = mpi.broadcast(path);
  }
  ~SharedDir() {
    mpi_.broadcast(0);  // every rank is done with it
    std::error_code ec;
    if (mpi_.root() && !path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  const parallel::MpiContext& mpi_;
  std::string path_;
};

/// \brief The spec of `config` (validated against `catalog`, defaults filled in) writing to
/// `dir`, on every rank alike.
inline services::RunSpec spec_of(nlohmann::json config, const std::string& dir, const io::Catalog& catalog) {
  config["output"]["dir"] = dir;
  config["run"]["rank_timeout_s"] = 0;
  config["log"]["level"] = "off";
  io::validate_config(config, catalog, ".");
  services::RunSpec spec;
  spec.data = io::load_data(config);
  spec.config = std::move(config);
  spec.run = io::run_config(spec.config);
  spec.paths = services::output_paths(dir);
  return spec;
}

}  // namespace hmc::test
