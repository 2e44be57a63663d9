#pragma once
/// \file
/// \brief JSON text that is safe to write and to echo: bytes that are not UTF-8 become
/// U+FFFD, control characters spaces, long values are cut. Every message that quotes a
/// user's value goes through shown() or printable().

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>

namespace hmc {

/// \brief JSON text of `v` (indent as nlohmann's dump); bytes that are not UTF-8 become U+FFFD.
std::string dump_text(const nlohmann::json& v, int indent = -1);

/// \brief A short echo of a user value for messages: at most `max_chars` characters of its
/// JSON text, "..." marking a cut; never expensive (large arrays/objects are summarised).
std::string shown(const nlohmann::json& v, std::size_t max_chars = 40);

/// \brief `s` with bytes that are not UTF-8 replaced by U+FFFD, control characters by
/// spaces: safe for a one-line message.
std::string printable(const std::string& s, std::size_t max_chars = 200);

}  // namespace hmc
