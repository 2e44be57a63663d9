#pragma once
/// \file
/// \brief The on-disk store of a run in progress: recorded draws as tiles, one file per
/// handed-over block of draws.
///
/// A tile holds draws [first, first + count) of one section (posterior or warmup) for
/// all particles, laid out [column][particle][draw] after a 64-byte header (magic,
/// section, first, count, particles, columns, checksum of the values). It is written
/// to a temporary name and renamed into place, so a tile either exists whole or not at
/// all. The tiles of a section cover draws 0, 1, ... without gaps; how they are cut
/// (block sizes, checkpoints, rank counts) does not matter to a reader, so a resumed
/// run reads back the same values as an uninterrupted one.

#include "hmc/core/draw_source.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace hmc::io {

class TileStore : public DrawSource {
 public:
  /// \brief The store in directory `dir` (created if missing) for `layout`; indexes
  /// the tiles already there. Throws RunError on unreadable or foreign tiles.
  TileStore(std::string dir, StoreLayout layout);

  const StoreLayout& layout() const override { return layout_; }
  /// \brief Draws 0 .. n-1 of section s covered by tiles without a gap.
  std::int64_t available(Section s) const override;
  void read(Section s, int column, std::int64_t p0, std::int64_t p1, double* out) const override;

  /// \brief Adds draws [first, first + count) of section s; `values` is
  /// [column][particle][draw] (columns × particles × count doubles).
  void append(Section s, std::int64_t first, std::int64_t count, const double* values);

  /// \brief Drops every tile of section s that starts at or after draw `draws` (what
  /// was written after the checkpoint being resumed). Throws RunError if a tile
  /// straddles `draws` or the remaining tiles do not cover [0, draws).
  void truncate(Section s, std::int64_t draws);

  /// \brief Re-reads every tile and checks its checksum; throws RunError naming the
  /// first bad one.
  void verify() const;

  /// \brief Bytes one tile of `count` draws takes (header included).
  std::int64_t tile_bytes(std::int64_t count) const;

  const std::string& dir() const { return dir_; }

 private:
  struct Tile {
    Section section;
    std::int64_t first, count;
    std::string path;
  };
  std::string tile_path(Section s, std::int64_t first) const;
  void index();

  std::string dir_;
  StoreLayout layout_;
  std::vector<Tile> tiles_;  ///< sorted by section, then first
};

}  // namespace hmc::io
