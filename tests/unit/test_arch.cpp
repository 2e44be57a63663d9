// The choice of an x86-64 level (core/arch.hpp): the level of a feature set, the launcher's
// choice among the built levels with and without HMC_ARCH, and this build's record.
#include "hmc/core/arch.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <string>
#include <vector>

namespace {

using hmc::arch::Features;

Features v2() {
  Features f;
  f.cx16 = f.lahf = f.popcnt = f.sse3 = f.ssse3 = f.sse4_1 = f.sse4_2 = true;
  return f;
}

Features v3() {
  Features f = v2();
  f.avx = f.avx2 = f.bmi1 = f.bmi2 = f.f16c = f.fma = f.lzcnt = f.movbe = f.xsave = f.ymm_state = true;
  return f;
}

Features v4() {
  Features f = v3();
  f.avx512f = f.avx512bw = f.avx512cd = f.avx512dq = f.avx512vl = f.zmm_state = true;
  return f;
}

const std::vector<std::string> kPortable{"x86-64", "x86-64-v3", "x86-64-v4"};

}  // namespace

TEST(Arch, LevelsInOrder) {
  EXPECT_EQ(hmc::arch::levels(), (std::vector<std::string>{"x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4"}));
  EXPECT_EQ(hmc::arch::level_index("x86-64"), 0);
  EXPECT_EQ(hmc::arch::level_index("x86-64-v4"), 3);
  EXPECT_EQ(hmc::arch::level_index("native"), -1);
  EXPECT_EQ(hmc::arch::level_index("avx2"), -1);
}

TEST(Arch, LevelOfFeatures) {
  EXPECT_EQ(hmc::arch::level_of(Features{}), 0);
  EXPECT_EQ(hmc::arch::level_of(v2()), 1);
  EXPECT_EQ(hmc::arch::level_of(v3()), 2);
  EXPECT_EQ(hmc::arch::level_of(v4()), 3);
  // One feature missing drops to the level below, whatever the higher features say.
  Features f = v4();
  f.fma = false;
  EXPECT_EQ(hmc::arch::level_of(f), 1);
  f = v4();
  f.avx512vl = false;  // Xeon Phi (Knights Landing): AVX-512 F and CD, no VL, BW, DQ
  EXPECT_EQ(hmc::arch::level_of(f), 2);
  f = v4();
  f.popcnt = false;
  EXPECT_EQ(hmc::arch::level_of(f), 0);
}

TEST(Arch, RegistersTheOsDoesNotSaveDoNotCount) {
  Features f = v4();
  f.zmm_state = false;  // an OS (or hypervisor) that does not save the AVX-512 state
  EXPECT_EQ(hmc::arch::level_of(f), 2);
  f.ymm_state = false;
  EXPECT_EQ(hmc::arch::level_of(f), 1);
}

TEST(Arch, ChoosesTheHighestBuiltLevelTheCpuRuns) {
  EXPECT_EQ(hmc::arch::choose(3, kPortable, nullptr).level, "x86-64-v4");
  EXPECT_EQ(hmc::arch::choose(2, kPortable, nullptr).level, "x86-64-v3");
  EXPECT_EQ(hmc::arch::choose(1, kPortable, nullptr).level, "x86-64");  // v2 is not built
  EXPECT_EQ(hmc::arch::choose(0, kPortable, nullptr).level, "x86-64");
  EXPECT_EQ(hmc::arch::choose(3, kPortable, "").level, "x86-64-v4");  // empty: unset
  EXPECT_EQ(hmc::arch::choose(3, {"x86-64", "x86-64-v3"}, nullptr).level, "x86-64-v3");
  const auto none = hmc::arch::choose(1, {"x86-64-v3", "x86-64-v4"}, nullptr);
  EXPECT_TRUE(none.level.empty());
  EXPECT_NE(none.error.find("no level of this build runs on this CPU (x86-64-v2 at most"), std::string::npos)
      << none.error;
}

TEST(Arch, HmcArchPicksABuiltLevelTheCpuRuns) {
  EXPECT_EQ(hmc::arch::choose(3, kPortable, "x86-64").level, "x86-64");
  EXPECT_EQ(hmc::arch::choose(3, kPortable, "x86-64-v3").level, "x86-64-v3");
  EXPECT_EQ(hmc::arch::choose(3, kPortable, " x86-64-v4 ").level, "x86-64-v4");
  const auto above = hmc::arch::choose(2, kPortable, "x86-64-v4");
  EXPECT_TRUE(above.level.empty());
  EXPECT_EQ(above.error, "HMC_ARCH=x86-64-v4: this CPU runs x86-64-v3 at most (built: x86-64, x86-64-v3, x86-64-v4)");
  const auto unbuilt = hmc::arch::choose(3, kPortable, "x86-64-v2");
  EXPECT_EQ(unbuilt.error, "HMC_ARCH=x86-64-v2 is not built (built: x86-64, x86-64-v3, x86-64-v4)");
  const auto unknown = hmc::arch::choose(3, kPortable, "avx512");
  EXPECT_EQ(unknown.error, "HMC_ARCH=avx512 is not a level of this build (built: x86-64, x86-64-v3, x86-64-v4)");
}

TEST(Arch, SplitList) {
  EXPECT_EQ(hmc::arch::split_list("x86-64,x86-64-v3;x86-64-v4"), kPortable);
  EXPECT_EQ(hmc::arch::split_list(" native "), std::vector<std::string>{"native"});
  EXPECT_TRUE(hmc::arch::split_list(";,").empty());
}

TEST(Arch, RefusesAnotherLevel) {
  hmc::arch::Record native{"native", {"native"}, "cpu", "x86-64-v4", ""};
  EXPECT_EQ(hmc::arch::refusal(native), "");
  native.requested = "native";
  EXPECT_EQ(hmc::arch::refusal(native), "");
  native.requested = "x86-64-v3";
  EXPECT_EQ(hmc::arch::refusal(native),
            "HMC_ARCH=x86-64-v3: this executable is built for native only (a portable build, -DHMC_NATIVE_ARCH=OFF, "
            "has the x86-64 levels)");
  hmc::arch::Record level{"x86-64-v3", kPortable, "cpu", "x86-64-v4", "x86-64-v3"};
  EXPECT_EQ(hmc::arch::refusal(level), "");
  level.requested = "x86-64";
  EXPECT_EQ(hmc::arch::refusal(level), "HMC_ARCH=x86-64: this executable is built for x86-64-v3");
}

TEST(Arch, ThisBuild) {
  const auto r = hmc::arch::this_build();
  EXPECT_FALSE(r.level.empty());
  ASSERT_FALSE(r.built.empty());
  EXPECT_FALSE(r.cpu.empty());
  const auto j = hmc::arch::record_json(r);
  EXPECT_EQ(j.at("level"), r.level);
  EXPECT_EQ(j.at("built").size(), r.built.size());
  EXPECT_NE(hmc::arch::describe(r).find("instruction set " + r.level), std::string::npos);
#if defined(__x86_64__)
  EXPECT_GE(hmc::arch::level_index(r.cpu_level), 0);
#endif
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
// GCC 12's own reading of the CPU (libgcc's cpu model, which checks XGETBV too) agrees.
TEST(Arch, DetectAgreesWithTheCompiler) {
  __builtin_cpu_init();
  const int gcc_level = __builtin_cpu_supports("x86-64-v4")   ? 3
                        : __builtin_cpu_supports("x86-64-v3") ? 2
                        : __builtin_cpu_supports("x86-64-v2") ? 1
                                                              : 0;
  EXPECT_EQ(hmc::arch::level_of(hmc::arch::detect()), gcc_level);
}
#endif
