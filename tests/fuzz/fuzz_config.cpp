/// \file
/// \brief libFuzzer harness: config file + data file + `--set` strings, through the
/// functions `hmc --config` and `hmc --validate` call before sampling.
///
/// The input is split as tests/fuzz/framing.hpp describes; the config and data sections
/// are written to a temporary directory of this process, and then, as services::resolve
/// and services::prepare_model do for `hmc --config`:
///   hmc::io::resolve_config(config, sets, catalog)                  read, override, validate, load data
///   hmc::io::run_config(config)                                     the typed config a run reads
///   check(spec) of the model's entry (app::registry()):
///     Model::from_config(model, data)                               the model parses its data
///     check_against_model, check_memory, estimate_output_bytes      the preflight checks
///   spec_json/spec_from_json, to_transport, dump_text(config, 2)    the rank-0 broadcast, --validate
/// ConfigError, DataError and RunError are the expected outcomes of bad input (exit codes
/// 2, 3, 4). Anything else is a finding: another exception (uncaught here, so libFuzzer
/// reports it: `hmc` would exit 1, "internal error"), a crash, a sanitizer report or a
/// Kokkos abort.

#include "framing.hpp"
#include "hmc/app/models.hpp"
#include "hmc/core/errors.hpp"
#include "hmc/io/config.hpp"
#include "hmc/io/json_text.hpp"
#include "hmc/io/run_config.hpp"
#include "hmc/services/run_spec.hpp"

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
  static const hmc::io::Catalog catalog = hmc::app::registry().catalog();
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
    const auto resolved = hmc::io::resolve_config(config_path.string(), sets, catalog);
    hmc::services::RunSpec spec;
    spec.config = resolved.config;
    spec.data = resolved.data;
    spec.run = hmc::io::run_config(resolved.config);
    const hmc::app::ModelEntry* entry = nullptr;
    for (const auto& e : hmc::app::registry().entries())
      if (e.info.name == spec.run.model) entry = &e;
    if (!entry) {
      std::fprintf(stderr, "fuzz_config: a validated config names no known model: %s\n", spec.run.model.c_str());
      std::abort();
    }
    entry->check(spec);
    const nlohmann::json both{{"spec", hmc::services::spec_json(spec)}, {"data", spec.data}};
    const std::string payload = hmc::io::to_transport(both);
    const nlohmann::json back = hmc::io::from_transport(payload);
    if (back != both || hmc::services::spec_from_json(back["spec"], "fuzz").config != spec.config) {
      std::fprintf(stderr, "fuzz_config: the rank-0 broadcast does not round-trip\n");
      std::abort();
    }
    const std::string shown = hmc::dump_text(resolved.config, 2);
    (void)shown;
  } catch (const hmc::ConfigError&) {
  } catch (const hmc::DataError&) {
  } catch (const hmc::RunError&) {
  }
  return 0;
}
