#include "hmc/app/kokkos_args.hpp"

#include "hmc/core/text.hpp"

#include <dlfcn.h>

#include <sstream>
#include <string>

namespace hmc::app {

namespace {

/// The `--kokkos-*` options hmc passes on to Kokkos (3.4 and 4.x spellings), with the
/// kind of value each takes.
enum class KokkosValue { kNone, kPositive, kNonNegative, kDevices, kText, kMapBy };

struct KokkosOption {
  const char* name;
  KokkosValue value;
};

constexpr KokkosOption kKokkosOptions[] = {
    {"--kokkos-threads", KokkosValue::kPositive},
    {"--kokkos-num-threads", KokkosValue::kPositive},
    {"--kokkos-numa", KokkosValue::kPositive},
    {"--kokkos-device", KokkosValue::kNonNegative},
    {"--kokkos-device-id", KokkosValue::kNonNegative},
    {"--kokkos-ndevices", KokkosValue::kDevices},
    {"--kokkos-num-devices", KokkosValue::kDevices},
    {"--kokkos-skip-device", KokkosValue::kNonNegative},
    {"--kokkos-map-device-id-by", KokkosValue::kMapBy},
    {"--kokkos-disable-warnings", KokkosValue::kNone},
    {"--kokkos-tune-internals", KokkosValue::kNone},
    {"--kokkos-print-configuration", KokkosValue::kNone},
    {"--kokkos-help", KokkosValue::kNone},
    {"--kokkos-tools-help", KokkosValue::kNone},
    {"--kokkos-tools-library", KokkosValue::kText},
    {"--kokkos-tools-libs", KokkosValue::kText},
    {"--kokkos-tools-args", KokkosValue::kText},
};

/// A decimal integer in [lo, 2^31): the whole of `s`.
bool parse_int(const std::string& s, long lo) {
  if (s.empty() || s.size() > 10 || s.find_first_not_of("0123456789") != std::string::npos) return false;
  const long v = std::stol(s);
  return v >= lo && v <= 2147483647L;
}

}  // namespace

std::string check_kokkos_option(const std::string& arg) {
  const auto eq = arg.find('=');
  const std::string name = arg.substr(0, eq), value = eq == std::string::npos ? std::string() : arg.substr(eq + 1);
  for (const auto& o : kKokkosOptions) {
    if (name != o.name) continue;
    if (o.value == KokkosValue::kNone) {
      return eq == std::string::npos ? "" : name + " takes no value (got '" + hmc::printable(arg) + "')";
    }
    if (eq == std::string::npos) return name + " needs a value: " + name + "=VALUE";
    bool ok = true;
    const char* want = "";
    switch (o.value) {
      case KokkosValue::kPositive:
        // More threads than that only ends in the OpenMP runtime failing inside Kokkos.
        ok = parse_int(value, 1) && std::stol(value) <= 4096, want = "an integer in 1..4096";
        break;
      case KokkosValue::kNonNegative:
        ok = parse_int(value, 0), want = "an integer >= 0";
        break;
      case KokkosValue::kDevices: {
        const auto comma = value.find(',');
        ok = parse_int(value.substr(0, comma), 1) &&
             (comma == std::string::npos || parse_int(value.substr(comma + 1), 0));
        want = "N or N,SKIP (integers)";
        break;
      }
      case KokkosValue::kMapBy:
        ok = value == "random" || value == "mpi_rank", want = "random or mpi_rank";
        break;
      default:
        ok = !value.empty(), want = "a value";
    }
    if (ok && (name == "--kokkos-tools-library" || name == "--kokkos-tools-libs")) {
      // Kokkos only prints an error for a library it cannot load, and runs on unprofiled.
      std::stringstream libs(value);
      std::string lib;
      while (std::getline(libs, lib, ';')) {
        if (lib.empty()) continue;
        void* handle = dlopen(lib.c_str(), RTLD_LAZY | RTLD_LOCAL);
        if (!handle) {
          const char* why = dlerror();
          return name + ": cannot load " + hmc::printable(lib, 80) + ": " + hmc::printable(why ? why : "", 120);
        }
        dlclose(handle);
      }
    }
    return ok ? "" : name + " must be " + want + " (got '" + hmc::printable(value, 40) + "')";
  }
  return "unknown Kokkos option " + hmc::printable(name, 60) + " (see hmc --kokkos-help)";
}

SplitArguments split_arguments(int argc, char** argv) {
  SplitArguments out;
  out.kokkos = {argv[0]};
  out.hmc = {argv[0]};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--kokkos-", 0) != 0) {
      out.hmc.push_back(argv[i]);
      continue;
    }
    if (const std::string error = check_kokkos_option(arg); !error.empty()) {
      out.error = error;
      return out;
    }
    out.kokkos_help = out.kokkos_help || arg == "--kokkos-help" || arg == "--kokkos-tools-help";
    out.kokkos.push_back(argv[i]);
  }
  return out;
}

}  // namespace hmc::app
