#pragma once
/// \file
/// \brief draws.nc: the recorded draws as an ArviZ InferenceData netCDF-4 file, and a
/// DrawSource that reads such a file back.
///
/// Groups `posterior` and `sample_stats`, plus `warmup_posterior` and
/// `warmup_sample_stats` when the layout has warmup draws, and the layout's further
/// groups (`log_likelihood`, also with a `warmup_` twin), each array a float64 variable
/// (chain, draw, its dims); the fixed arrays handed in (`data`) go into their groups
/// (`observed_data`, `constant_data`) without chain and draw. `arviz.from_netcdf` opens it.
/// Every group has dims `chain` (one per particle) and `draw`, with int64 coordinate
/// variables 0..n-1, as has every parameter dim. Parameters are float64 variables
/// (chain, draw, dims...) grouped by io::group_parameters; sample_stats holds lp,
/// acceptance_rate, step_size, n_steps (int64), diverging (int8 0/1 with attribute
/// dtype = "bool", which xarray decodes to bool) and energy. The root group's attribute
/// `hmc_layout` (JSON) records the flat parameter names, dim names and variables so the
/// file can be read back column by column.
///
/// The file holds no time stamps: the same draws, options and attributes give the same
/// bytes. Memory is bounded whatever the run size: the writer reads at most ~32 MB of
/// draws at a time and HDF5's chunk caches are kept empty.

#include "hmc/core/draw_source.hpp"

#include <nlohmann/json_fwd.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace hmc::io {

/// \brief How draws.nc is stored.
struct NetcdfOptions {
  /// Deflate level 0..9 for the variables chosen by `compress_floats`; 0: no compression
  /// at all, every variable stored contiguously.
  int compression = 1;
  /// HDF5 byte shuffle before deflate (helps doubles and int64 a lot, costs little).
  bool shuffle = true;
  /// With compression > 0, false: deflate only n_steps, diverging, step_size and the
  /// coordinates, which shrink many-fold at little cost; true: also the parameters, lp,
  /// energy and acceptance_rate. Those are mostly noise in their low bytes: deflate saves
  /// ~10-15% of their size and takes most of the write time (4,096 particles x 1,000
  /// draws x 2 parameters: ~0.5 s with false, ~5 s with true).
  bool compress_floats = false;
  /// Largest HDF5 chunk (chunked variables only). Chunks span whole draws where they fit,
  /// and are shared by as many particles as fit.
  std::size_t chunk_bytes = std::size_t{4} << 20;
  /// Largest block of draws read from the source and written at once (rounded up to
  /// whole chunks): with the chunk, this bounds the writer's memory.
  std::size_t block_bytes = std::size_t{32} << 20;
};

/// \brief Writes `path` (overwriting it) from `src` in ArviZ's InferenceData layout.
/// `attributes` (a JSON object, or null for none) go on every group: strings as text,
/// numbers as int64 or float64 attributes, anything else as its JSON text; then
/// `inference_library = "hmc"`. progress(fraction in [0, 1]) is called now and then, if
/// given. Throws RunError("cannot write PATH: ...") on any failure, and then removes the
/// partly written file.
void write_inference_data(const std::string& path, const DrawSource& src, const NetcdfOptions& opt,
                          const nlohmann::json& attributes, const std::function<void(double)>& progress = {},
                          const std::vector<DataArray>& data = {});

/// \brief The draws of a file written by write_inference_data, read on demand.
///
/// Not thread-safe (neither is the netCDF library): one reader at a time.
class NetcdfSource : public DrawSource {
 public:
  /// Throws RunError("cannot read PATH: ...") if the file cannot be opened or was not
  /// written by write_inference_data.
  explicit NetcdfSource(const std::string& path);
  ~NetcdfSource() override;
  NetcdfSource(const NetcdfSource&) = delete;
  NetcdfSource& operator=(const NetcdfSource&) = delete;

  const StoreLayout& layout() const override { return layout_; }
  std::int64_t available(Section s) const override { return available_[static_cast<int>(s)]; }
  void read(Section s, int column, std::int64_t p0, std::int64_t p1, double* out) const override;
  /// \brief Draws [d0, d1) only: out[(p - p0) * (d1 - d0) + d - d0].
  void read_draws(Section s, int column, std::int64_t p0, std::int64_t p1, std::int64_t d0, std::int64_t d1,
                  double* out) const;

 private:
  /// Where a store column lives in one section.
  struct Slot {
    int group = -1;
    int varid = -1;
    std::vector<std::size_t> index;  ///< element index within the parameter's dims
  };
  [[noreturn]] void fail(const std::string& what) const;

  std::string path_;
  int ncid_ = -1;
  StoreLayout layout_;
  std::int64_t available_[2] = {0, 0};
  std::vector<Slot> slots_[2];  ///< per section, per column
};

}  // namespace hmc::io
