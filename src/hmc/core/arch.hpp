#pragma once
/// \file
/// \brief The instruction set an hmc executable was compiled for, and the choice of one at start.
///
/// A native build (HMC_NATIVE_ARCH=ON, the default) is one executable for the CPU that built
/// it: its level is "native". A portable build (-DHMC_NATIVE_ARCH=OFF on x86-64) compiles the
/// sampler once per x86-64 level of HMC_ARCH_LEVELS (x86-64, x86-64-v3, x86-64-v4 by
/// default) into libexec/hmc/hmc-LEVEL, and bin/hmc is a launcher (apps/hmc/launcher.cpp)
/// that picks the highest level this CPU runs, or the one HMC_ARCH names, and executes it
/// with the same arguments (docs/performance.md#portable-builds).
///
/// The choice is the pure function choose() over the CPU's features (detect()), so that it
/// is tested without the CPU at hand. Nothing here uses Kokkos or MPI: the launcher
/// compiles this file's arch.cpp alone. run.json's record of it: record_json (arch_json.cpp).

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <vector>

namespace hmc::arch {

/// The x86-64 levels of the psABI, lowest first: "x86-64" (SSE2), "x86-64-v2" (SSE4.2,
/// POPCNT), "x86-64-v3" (AVX2, FMA, BMI2), "x86-64-v4" (AVX-512 F, BW, CD, DQ, VL).
const std::vector<std::string>& levels();
/// The position of `name` in levels(); -1 for a name that is not a level.
int level_index(const std::string& name);

/// What CPUID and XGETBV say about this CPU: the features that the x86-64 levels require,
/// and whether the operating system saves the AVX (ymm) and AVX-512 (zmm, opmask) registers
/// across context switches, without which those instructions fault.
struct Features {
  // x86-64-v2
  bool cx16 = false, lahf = false, popcnt = false, sse3 = false, ssse3 = false, sse4_1 = false, sse4_2 = false;
  // x86-64-v3
  bool avx = false, avx2 = false, bmi1 = false, bmi2 = false, f16c = false, fma = false, lzcnt = false, movbe = false,
       xsave = false, ymm_state = false;
  // x86-64-v4
  bool avx512f = false, avx512bw = false, avx512cd = false, avx512dq = false, avx512vl = false, zmm_state = false;
};

/// The highest level whose every feature `f` has, as an index into levels() (0 at least:
/// every x86-64 CPU runs the baseline).
int level_of(const Features& f);

/// This CPU's features (all false on a CPU that is not x86-64).
Features detect();
/// This CPU's name (CPUID's brand string, else /proc/cpuinfo's "model name"), or "unknown".
std::string cpu_name();

/// The outcome of choose(): a level, or the one-line reason there is none.
struct Choice {
  std::string level;
  std::string error;
};

/// The level to run: the one `requested` names (HMC_ARCH; null or empty: none), refused if it
/// is not a level, was not built or is above `cpu_level`; otherwise the highest of `built`
/// at or below `cpu_level`.
Choice choose(int cpu_level, const std::vector<std::string>& built, const char* requested);

/// `text` cut at ';' or ',' (a CMake list, HMC_ARCH_LEVELS), empty items dropped.
std::vector<std::string> split_list(const std::string& text);

/// What this executable is: its level ("native" for -march=native, a level of levels(),
/// or "baseline" for the compiler's default target where there are no levels), the levels
/// its build made (one for a single-level build), the CPU and the highest level it runs.
struct Record {
  std::string level;
  std::vector<std::string> built;
  std::string cpu;
  std::string cpu_level;
  std::string requested;  ///< HMC_ARCH as set, "" when unset
};
Record this_build();

/// One line for the log and `hmc --version`: "instruction set x86-64-v4 (built: x86-64,
/// x86-64-v3, x86-64-v4; CPU AMD EPYC: x86-64-v4)".
std::string describe(const Record& r);

/// run.json's "arch": {"level", "built", "cpu", "cpu_level", "requested"} (arch_json.cpp).
nlohmann::json record_json(const Record& r);

/// The refusal of an executable that is not the level HMC_ARCH names ("" when HMC_ARCH is
/// unset, empty or names this executable's level): a single-level build, or a level's
/// executable run directly, cannot run another level.
std::string refusal(const Record& r);

/// Declares the level of the executable that holds it: a portable build compiles
/// apps/hmc/level.cpp, one static BuildLevel, into each level's executable. Without one,
/// this_build() reports the level the library was compiled for.
struct BuildLevel {
  BuildLevel(const char* level, const char* built);
};

}  // namespace hmc::arch
