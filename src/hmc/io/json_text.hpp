#pragma once
/// \file
/// \brief Bounded JSON input and safe JSON text output: every file, `--set` value and
/// payload hmc reads as JSON goes through parse_bounded(), every JSON text it writes or
/// echoes through dump_text() or shown().
///
/// Limits (docs/config.md#limits): nesting deeper than kMaxJsonDepth levels is refused
/// before parsing (a scan without recursion), so nothing downstream recurses deeper than
/// that; config files are at most kMaxConfigBytes, data files kMaxDataBytes. Strings may
/// hold any bytes (paths are bytes on Linux): JSON text written by hmc replaces bytes that
/// are not UTF-8 by U+FFFD instead of failing, and internal transport (between ranks) is
/// CBOR, which keeps them.

#include "hmc/core/draw_source.hpp"
#include "hmc/core/text.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace hmc::io {

/// Deepest nesting of arrays and objects accepted in any JSON input.
inline constexpr int kMaxJsonDepth = 256;
/// Largest config file, in bytes.
inline constexpr std::int64_t kMaxConfigBytes = std::int64_t{16} << 20;
/// Largest data file, in bytes.
inline constexpr std::int64_t kMaxDataBytes = std::int64_t{1} << 30;

/// \brief Why some JSON text was refused: a message without the file's name (the caller
/// adds it, with the error class and exit code that fit).
class JsonInputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// \brief Parses `text` as JSON after checking its nesting depth. Throws JsonInputError
/// ("is nested deeper than 256 levels ... (at byte N)", "is not valid JSON (line L, column C: ...)").
nlohmann::json parse_bounded(const std::string& text, int max_depth = kMaxJsonDepth);

/// \brief The deepest nesting of arrays/objects in `text` (strings skipped), or the byte
/// offset where it first exceeds `limit` in `*where` (then returns limit + 1).
int json_depth(const std::string& text, int limit, std::size_t* where = nullptr);

/// \brief Opens the input file `path` for reading; the caller closes the descriptor. Only
/// a regular file is accepted (docs/config.md#input-files): a FIFO, a device or a socket
/// could block the read for ever. The type is checked before opening, and again on the
/// descriptor, which is opened without blocking (O_NONBLOCK, cleared after). Throws
/// JsonInputError with "cannot open: <errno text>", "is a directory" or "is not a regular
/// file (a FIFO)" (a character device, a block device, a socket).
int open_input_file(const std::string& path);

/// \brief Reads a whole regular file of at most `max_bytes` (open_input_file()). Throws
/// JsonInputError with open_input_file()'s messages, "cannot read: <errno text>" or "is
/// larger than N MiB".
std::string read_regular_file(const std::string& path, std::int64_t max_bytes);

/// \brief read_regular_file() of a text input (config, data, JSON records); also throws
/// JsonInputError "is empty" for a file of white space only.
std::string read_input_file(const std::string& path, std::int64_t max_bytes);

// dump_text(), shown() and printable() are in core/text.hpp (models and keys/ use them too).

/// \brief Byte-exact transport of a JSON value (CBOR), e.g. to other ranks.
std::string to_transport(const nlohmann::json& v);
nlohmann::json from_transport(const std::string& bytes);

/// \brief A layout's statistics as JSON ([[name, "real" | "integer" | "bool", compress], ...])
/// and back (the netCDF layout attribute, run-config.json); std::invalid_argument for
/// anything else.
nlohmann::json stats_json(const std::vector<StatColumn>& stats);
std::vector<StatColumn> stats_from_json(const nlohmann::json& j);

/// \brief A layout's further groups as JSON ([{"name": g, "arrays": [[name, [dims], [shape]], ...]}, ...])
/// and back; std::invalid_argument for anything else.
nlohmann::json groups_json(const std::vector<DrawGroup>& groups);
std::vector<DrawGroup> groups_from_json(const nlohmann::json& j);

}  // namespace hmc::io
