#include "hmc/core/arch.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#define HMC_ARCH_CPUID 1
#else
#define HMC_ARCH_CPUID 0
#endif

// What the build compiled this file for (CMakeLists.txt): "native", the lowest level of a
// portable build, or "baseline"; and the levels that build made.
#ifndef HMC_ARCH_LEVEL
#define HMC_ARCH_LEVEL "baseline"
#endif
#ifndef HMC_ARCH_BUILT
#define HMC_ARCH_BUILT HMC_ARCH_LEVEL
#endif

namespace hmc::arch {

namespace {

struct Declared {
  std::string level = HMC_ARCH_LEVEL;
  std::string built = HMC_ARCH_BUILT;
};

Declared& declared() {
  static Declared d;
  return d;
}

#if HMC_ARCH_CPUID
/// XCR0, the register state the operating system saves (valid only where CPUID says OSXSAVE).
unsigned long long xcr0() {
  unsigned eax = 0, edx = 0;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<unsigned long long>(edx) << 32) | eax;
}
#endif

std::string trimmed(std::string s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  const auto last = s.find_last_not_of(" \t");
  return s.substr(first, last - first + 1);
}

std::string joined(const std::vector<std::string>& items) {
  std::string s;
  for (const auto& x : items) s += (s.empty() ? "" : ", ") + x;
  return s;
}

}  // namespace

const std::vector<std::string>& levels() {
  static const std::vector<std::string> names{"x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4"};
  return names;
}

int level_index(const std::string& name) {
  const auto& all = levels();
  const auto it = std::find(all.begin(), all.end(), name);
  return it == all.end() ? -1 : static_cast<int>(it - all.begin());
}

int level_of(const Features& f) {
  const bool v2 = f.cx16 && f.lahf && f.popcnt && f.sse3 && f.ssse3 && f.sse4_1 && f.sse4_2;
  const bool v3 =
      v2 && f.avx && f.avx2 && f.bmi1 && f.bmi2 && f.f16c && f.fma && f.lzcnt && f.movbe && f.xsave && f.ymm_state;
  const bool v4 = v3 && f.avx512f && f.avx512bw && f.avx512cd && f.avx512dq && f.avx512vl && f.zmm_state;
  return v4 ? 3 : v3 ? 2 : v2 ? 1 : 0;
}

Features detect() {
  Features f;
#if HMC_ARCH_CPUID
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
  auto bit = [](unsigned reg, int n) { return ((reg >> n) & 1u) != 0; };
  f.sse3 = bit(c, 0);
  f.ssse3 = bit(c, 9);
  f.fma = bit(c, 12);
  f.cx16 = bit(c, 13);
  f.sse4_1 = bit(c, 19);
  f.sse4_2 = bit(c, 20);
  f.movbe = bit(c, 22);
  f.popcnt = bit(c, 23);
  f.xsave = bit(c, 26);
  f.avx = bit(c, 28);
  f.f16c = bit(c, 29);
  if (bit(c, 27)) {  // OSXSAVE: XGETBV tells which registers the OS saves
    const unsigned long long x = xcr0();
    f.ymm_state = (x & 0x6) == 0x6;    // SSE and AVX state
    f.zmm_state = (x & 0xE6) == 0xE6;  // and opmask, ZMM_Hi256, Hi16_ZMM
  }
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
    f.bmi1 = bit(b, 3);
    f.avx2 = bit(b, 5);
    f.bmi2 = bit(b, 8);
    f.avx512f = bit(b, 16);
    f.avx512dq = bit(b, 17);
    f.avx512cd = bit(b, 28);
    f.avx512bw = bit(b, 30);
    f.avx512vl = bit(b, 31);
  }
  if (__get_cpuid(0x80000001u, &a, &b, &c, &d)) {
    f.lahf = bit(c, 0);
    f.lzcnt = bit(c, 5);
  }
#endif
  return f;
}

std::string cpu_name() {
#if HMC_ARCH_CPUID
  unsigned r[12] = {};
  if (static_cast<unsigned>(__get_cpuid_max(0x80000000u, nullptr)) >= 0x80000004u) {
    for (unsigned i = 0; i < 3; ++i)
      __get_cpuid(0x80000002u + i, &r[4 * i], &r[4 * i + 1], &r[4 * i + 2], &r[4 * i + 3]);
    std::string brand(reinterpret_cast<const char*>(r), sizeof r);
    brand = trimmed(brand.substr(0, brand.find('\0')));
    if (!brand.empty()) return brand;
  }
#endif
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
      return trimmed(line.substr(line.find(':') + 1));
    }
  }
  return "unknown";
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::string item;
  for (const char ch : text + ";") {
    if (ch == ';' || ch == ',') {
      item = trimmed(item);
      if (!item.empty()) items.push_back(item);
      item.clear();
    } else {
      item += ch;
    }
  }
  return items;
}

Choice choose(int cpu_level, const std::vector<std::string>& built, const char* requested) {
  Choice c;
  const std::string want = requested ? trimmed(requested) : "";
  if (!want.empty()) {
    if (std::find(built.begin(), built.end(), want) == built.end()) {
      c.error = "HMC_ARCH=" + want + " is not " + (level_index(want) < 0 ? "a level of this build" : "built") +
                " (built: " + joined(built) + ")";
    } else if (level_index(want) > cpu_level) {
      c.error = "HMC_ARCH=" + want + ": this CPU runs " + levels()[static_cast<std::size_t>(cpu_level)] +
                " at most (built: " + joined(built) + ")";
    } else {
      c.level = want;
    }
    return c;
  }
  int best = -1;
  for (const auto& b : built) {
    const int i = level_index(b);
    if (i >= 0 && i <= cpu_level && i > best) best = i;
  }
  if (best < 0) {
    c.error = "no level of this build runs on this CPU (" + levels()[static_cast<std::size_t>(cpu_level)] +
              " at most; built: " + joined(built) + ")";
  } else {
    c.level = levels()[static_cast<std::size_t>(best)];
  }
  return c;
}

Record this_build() {
  Record r;
  r.level = declared().level;
  r.built = split_list(declared().built);
  r.cpu = cpu_name();
#if HMC_ARCH_CPUID
  r.cpu_level = levels()[static_cast<std::size_t>(level_of(detect()))];
#else
  r.cpu_level = "unknown";
#endif
  const char* env = std::getenv("HMC_ARCH");
  r.requested = env ? env : "";
  return r;
}

std::string describe(const Record& r) {
  return "instruction set " + r.level + " (built: " + joined(r.built) + "; CPU " + r.cpu + ": " + r.cpu_level +
         (r.requested.empty() ? "" : "; HMC_ARCH=" + r.requested) + ")";
}

std::string refusal(const Record& r) {
  const std::string want = trimmed(r.requested);
  if (want.empty() || want == r.level) return "";
  return "HMC_ARCH=" + want + ": this executable is built for " + r.level +
         (r.built.size() > 1 ? "" : " only (a portable build, -DHMC_NATIVE_ARCH=OFF, has the x86-64 levels)");
}

BuildLevel::BuildLevel(const char* level, const char* built) {
  declared().level = level;
  declared().built = built;
}

}  // namespace hmc::arch
