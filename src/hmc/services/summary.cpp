#include "hmc/services/summary.hpp"

#include "hmc/core/errors.hpp"
#include "hmc/diagnostics/loo.hpp"
#include "hmc/diagnostics/summary.hpp"
#include "hmc/io/json_text.hpp"
#include "hmc/io/netcdf.hpp"
#include "hmc/io/results.hpp"
#include "hmc/io/run_config.hpp"
#include "hmc/io/tile_store.hpp"
#include "hmc/services/staging.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

namespace hmc::services {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

json read_json(const std::string& path) {
  try {
    return io::parse_bounded(io::read_input_file(path, io::kMaxConfigBytes + io::kMaxDataBytes),
                             io::kMaxJsonDepth + 2);  // run.json wraps an accepted config
  } catch (const io::JsonInputError& e) {
    const std::string why = e.what();
    if (why.rfind("cannot open", 0) == 0) throw RunError("cannot read " + path + why.substr(11));
    throw RunError(path + " " + (why.rfind("is ", 0) == 0 ? why : "is not valid JSON: " + why));
  }
}

hmc::StoreLayout layout_from_json(const json& j) {
  hmc::StoreLayout l;
  l.particles = j.at("particles").get<std::int64_t>();
  l.param_names = j.at("param_names").get<std::vector<std::string>>();
  for (const auto& [name, dims] : j.at("dim_names").items())
    l.dim_names.emplace_back(name, dims.get<std::vector<std::string>>());
  l.draws = j.at("draws").get<std::int64_t>();
  l.warmup_draws = j.at("warmup_draws").get<std::int64_t>();
  if (j.contains("stats")) l.stats = io::stats_from_json(j.at("stats"));  // else HMC's (older runs)
  if (j.contains("groups")) l.groups = io::groups_from_json(j.at("groups"));
  return l;
}

/// The diagnostics' options of the run that recorded `config`.
diagnostics::SummaryOptions options_from(const json& config) {
  io::RunConfig run;
  try {
    run = io::run_config(config);
  } catch (const std::exception& e) {
    throw RunError(std::string("the run's recorded config is not valid: ") + e.what());
  }
  diagnostics::SummaryOptions opt;
  opt.superchains = run.superchains();
  opt.max_draws = run.diagnostics.max_draws;
  return opt;
}

}  // namespace

int print_summary(const std::string& dir, const std::string& format, const std::string& arviz) {
  try {
    const OutputPaths finished = output_paths(dir);
    std::unique_ptr<hmc::DrawSource> source;
    json config, status;
    if (fs::exists(fs::path(finished.final_dir) / "summary.json") &&
        fs::exists(fs::path(finished.final_dir) / "draws.nc")) {
      config = read_json(finished.final_dir + "/run.json").at("config");
      source = std::make_unique<io::NetcdfSource>(finished.final_dir + "/draws.nc");
      status = {{"state", "finished"}, {"dir", finished.final_dir}};
    } else {
      OutputPaths p = finished;
      if (!fs::exists(p.run_config()) && fs::exists(fs::path(finished.final_dir) / "summary.json") &&
          !fs::exists(fs::path(finished.final_dir) / "draws.nc")) {
        throw RunError("the run in " + finished.final_dir +
                       " finished without draws.nc (its /output/formats has no \"netcdf\"), which hmc summary "
                       "reads; its summary is " +
                       finished.final_dir + "/summary.json");
      }
      if (!fs::exists(p.run_config())) p = find_checkpointed(dir);
      const json rc = read_json(p.run_config());
      config = rc.at("config");
      source = std::make_unique<io::TileStore>(p.blocks(), layout_from_json(rc.at("layout")));
      status = {{"state", "checkpointed"}, {"dir", p.staging}};
    }
    const auto& layout = source->layout();
    const std::int64_t have = source->available(hmc::Section::kPosterior);
    status["draws"] = have;
    status["draws_planned"] = layout.draws;
    status["particles"] = layout.particles;
    if (have == 0) {
      if (format == "json") {
        std::cout << hmc::dump_text(json{{"status", status}}, 2) << "\n";
      } else {
        std::cout << "no post-warmup draws stored yet in " << status["dir"].get<std::string>() << "\n";
      }
      return 0;
    }
    const auto params = diagnostics::summarize(*source, options_from(config));
    std::optional<diagnostics::LooResult> loo;
    if (layout.group_index("log_likelihood") >= 0) {
      loo =
          diagnostics::loo(*source, arviz == "0.23" ? diagnostics::LooRule::kArviz023 : diagnostics::LooRule::kArviz1);
    }
    if (format == "json") {
      json out = io::parameters_json(params);
      if (loo) {
        out["loo"] = io::loo_json(*loo);
      }
      out["status"] = status;
      std::cout << hmc::dump_text(out, 2) << "\n";
    } else {
      std::cout << io::parameter_table(params) << "\n";
      if (loo) std::cout << "\n" << diagnostics::loo_text(*loo) << "\n\n";
      std::cout << status["state"].get<std::string>() << " run in " << status["dir"].get<std::string>() << ": "
                << layout.particles << " particles x " << have << " of " << layout.draws << " draws\n";
    }
    return 0;
  } catch (const RunError& e) {
    std::cerr << "hmc: " << e.what() << "\n";
    return exit_code(e);
  } catch (const fs::filesystem_error& e) {  // e.g. DIR is a symlink loop
    std::cerr << "hmc: cannot read " << dir << ": " << e.code().message() << "\n";
    return kExitRunError;
  } catch (const json::exception& e) {  // a recorded file without a key it must have
    std::cerr << "hmc: the run in " << dir << " is not valid (" << e.what() << ")\n";
    return kExitRunError;
  }
}

}  // namespace hmc::services
