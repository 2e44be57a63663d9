#pragma once
/// \file
/// \brief Checkpoint files: a JSON header and the particles' state rows, with a checksum.
///
/// Layout: the 8 bytes "HMCCKPT1", the header length (uint64), the header (JSON text),
/// the row count (uint64), the rows (doubles), and a checksum (uint64) of everything
/// before it. Written to a temporary file, flushed to disk and renamed into place, so
/// the file on disk is always a whole checkpoint: the previous one or the new one.
/// Doubles that must come back bit for bit go into the header as bit patterns
/// (io::double_bits).

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace hmc::io {

struct CheckpointData {
  nlohmann::json header;
  std::vector<double> rows;
};

/// \brief Writes `path` atomically (temp file, fsync, rename). Throws RunError.
void write_checkpoint(const std::string& path, const CheckpointData& c);

/// \brief Reads and checks a checkpoint; throws RunError with one line naming the file
/// when it is missing, truncated, corrupt (checksum) or not a checkpoint.
CheckpointData read_checkpoint(const std::string& path);

/// \brief A double as the hex string of its bits, and back (exact, NaN and inf included).
std::string double_bits(double x);
double double_from_bits(const std::string& s);

}  // namespace hmc::io
