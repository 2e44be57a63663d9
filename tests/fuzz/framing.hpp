#pragma once
/// \file
/// \brief How one fuzz input holds a config, a data file and `--set` strings.
///
/// The input is split at every line that is exactly `%%`:
///
///     <config file>
///     %%
///     <data file, written as data.json next to the config>
///     %%
///     <one --set string>
///     %%
///     <another --set string> ...
///
/// Missing sections are absent (no data file, no --set). The same framing is used by
/// the harness (fuzz_config.cpp) and by the seed builder (make_seed.cpp), so a seed
/// stays readable and editable by hand.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace hmc::fuzz {

/// The separator between sections, newline included on both sides.
inline constexpr std::string_view kSeparator = "\n%%\n";
/// Name of the data section's file, in the same directory as the config.
inline constexpr const char* kDataFile = "data.json";
/// At most this many `--set` strings are taken from one input (the rest is ignored).
inline constexpr std::size_t kMaxSets = 16;

inline std::vector<std::string> split_sections(std::string_view input) {
  std::vector<std::string> out;
  for (;;) {
    const auto at = input.find(kSeparator);
    if (at == std::string_view::npos) break;
    out.emplace_back(input.substr(0, at));
    input.remove_prefix(at + kSeparator.size());
  }
  out.emplace_back(input);
  return out;
}

inline std::string join_sections(const std::vector<std::string>& sections) {
  std::string out;
  for (std::size_t i = 0; i < sections.size(); ++i) {
    if (i > 0) out += kSeparator;
    out += sections[i];
  }
  return out;
}

}  // namespace hmc::fuzz
