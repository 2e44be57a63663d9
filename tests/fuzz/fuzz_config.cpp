/// \file
/// \brief libFuzzer harness: config file + data file + `--set` strings, through the
/// functions `hmc --config` and `hmc --validate` call before sampling.
///
/// The input is split as tests/fuzz/framing.hpp describes; the config and data sections
/// are written to a temporary directory of this process, and then, as in
/// apps/hmc/main.cpp (resolve_everywhere and what follows it):
///   hmc::io::resolve_config(config, sets, model names, model keys)   read, override, validate, load data
///   registry entry ->check(model, data)                               the model parses its data
///   check_against_model, check_memory, estimate_output_bytes          the preflight checks
///   to_transport/from_transport, dump_text(config, 2)                 the rank-0 broadcast, --validate
///   hmc::io::settings_from_config(config)                             what a run and diagnose read
/// ConfigError, DataError and RunError are the expected outcomes of bad input (exit codes
/// 2, 3, 4). Anything else is a finding: another exception (uncaught here, so libFuzzer
/// reports it: `hmc` would exit 1, "internal error"), a crash, a sanitizer report or a
/// Kokkos abort.

#include "framing.hpp"
#include "hmc/io/config.hpp"
#include "hmc/core/errors.hpp"
#include "hmc/io/json_text.hpp"
#include "hmc/services/preflight.hpp"
#include "hmc/services/resources.hpp"
#include "registry.hpp"

#include <Kokkos_Core.hpp>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace {

namespace fs = std::filesystem;

fs::path g_dir;  ///< this process's temporary directory

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (!out) {
    std::fprintf(stderr, "fuzz_config: cannot write %s\n", path.c_str());
    std::abort();
  }
}

void cleanup() {
  if (Kokkos::is_initialized()) Kokkos::finalize();
  std::error_code ec;
  if (!g_dir.empty()) fs::remove_all(g_dir, ec);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // One host thread: inputs are small, and the fuzzer runs one process per core.
  setenv("OMP_NUM_THREADS", "1", 0);
  setenv("OMP_PROC_BIND", "false", 0);
  setenv("KOKKOS_DISABLE_WARNINGS", "1", 0);
  Kokkos::initialize();
  spdlog::set_level(spdlog::level::off);
  const fs::path base = std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp";
  std::string tmpl = (base / "hmc-fuzz.XXXXXX").string();
  if (!mkdtemp(tmpl.data())) {
    std::perror("fuzz_config: mkdtemp");
    std::abort();
  }
  g_dir = tmpl;
  std::atexit(cleanup);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  static const std::vector<std::string> names = hmc::models::model_names();
  const auto sections = hmc::fuzz::split_sections(std::string_view(reinterpret_cast<const char*>(bytes), size));

  const fs::path config_path = g_dir / "config.json", data_path = g_dir / hmc::fuzz::kDataFile;
  write_file(config_path, sections[0]);
  std::error_code ec;
  if (sections.size() > 1)
    write_file(data_path, sections[1]);
  else
    fs::remove(data_path, ec);
  std::vector<std::string> sets;
  for (std::size_t i = 2; i < sections.size() && sets.size() < hmc::fuzz::kMaxSets; ++i) sets.push_back(sections[i]);

  try {
    const auto resolved = hmc::io::resolve_config(config_path.string(), sets, names, hmc::models::model_keys);
    const auto* entry = hmc::models::find_model(resolved.config["model"]["name"].get<std::string>());
    if (!entry) {
      std::fprintf(stderr, "fuzz_config: a validated config names no known model: %s\n",
                   hmc::dump_text(resolved.config["model"]["name"]).c_str());
      std::abort();
    }
    const auto shape = entry->check(resolved.config["model"], resolved.data);
    hmc::services::check_against_model(resolved.config, shape, entry->name, entry->samples_prior);
    hmc::services::check_memory(resolved.config, shape, 1, 1);
    (void)hmc::services::estimate_output_bytes(resolved.config, shape);
    const nlohmann::json both{{"config", resolved.config}, {"data", resolved.data}};
    const std::string payload = hmc::io::to_transport(both);
    if (hmc::io::from_transport(payload) != both) {
      std::fprintf(stderr, "fuzz_config: the rank-0 broadcast does not round-trip\n");
      std::abort();
    }
    const std::string shown = hmc::dump_text(resolved.config, 2);
    const auto settings = hmc::io::settings_from_config(resolved.config);
    (void)shown;
    (void)settings;
  } catch (const hmc::ConfigError&) {
  } catch (const hmc::DataError&) {
  } catch (const hmc::RunError&) {
  }
  return 0;
}
