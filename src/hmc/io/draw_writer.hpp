#pragma once
/// \file
/// \brief Draw writers as parts (as Stan's callbacks::writer): a run writes its draws
/// through every writer that /output/formats names, each reading the stored draws through
/// a DrawSource. The disk check asks the same writers for their size estimates.
///
/// A format is one file in io/writers/ that defines `DrawFormat NAME_format()`, plus its
/// line in the list of io/draw_formats.cpp; /output/formats then accepts NAME, and the
/// run, the disk estimate and the docs' key table follow. A caller may also hand a run a
/// list of its own (a test adds a toy format that way: tests/mpi/test_toy_format.cpp).

#include "hmc/core/draw_source.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace hmc::io {

/// \brief What a writer may use of the run besides the draws.
struct WriterOptions {
  int precision = 0;            ///< /output/precision: significant digits of text formats (0: round trip)
  int compression = 1;          ///< /output/compression: deflate level of compressing formats
  nlohmann::json attributes;    ///< versions, seed, particles, thin and the recorded config (an object)
  std::vector<DataArray> data;  ///< observed_data and constant_data arrays (formats that have such groups)
};

/// \brief Writes the draws of a run to one file of its output directory.
class DrawWriter {
 public:
  virtual ~DrawWriter() = default;
  /// The file's name in the output directory ("draws.nc").
  virtual std::string file_name() const = 0;
  /// An upper bound of the file's size for draws of `layout`, bytes (the disk check).
  virtual std::int64_t size_estimate(const StoreLayout& layout) const = 0;
  /// Writes `path` from `source` (overwriting it, via a temporary name), calling
  /// progress(fraction in [0, 1]) now and then. Throws RunError naming the file, and
  /// leaves no partial file behind.
  virtual void write(const std::string& path, const DrawSource& source,
                     const std::function<void(double)>& progress) const = 0;
};

/// \brief A format /output/formats can name, and how to make its writer.
struct DrawFormat {
  std::string name;  ///< the /output/formats value, e.g. "netcdf"
  std::function<std::unique_ptr<DrawWriter>(const WriterOptions&)> make;
};

using DrawFormats = std::vector<DrawFormat>;

/// \brief The formats hmc ships, in the order of io/draw_formats.cpp.
const DrawFormats& draw_formats();

/// \brief Their names, for the schema's choices (io::Catalog).
std::vector<std::string> format_names(const DrawFormats& formats);

/// \brief The writers of the formats `names` (validated), in that order.
std::vector<std::unique_ptr<DrawWriter>> make_writers(const DrawFormats& formats, const std::vector<std::string>& names,
                                                      const WriterOptions& options);

/// \brief Bytes of the draws of `layout` in both sections at `bytes_per_value`:
/// particles × recorded draws × columns (parameters and statistics) × bytes_per_value,
/// saturating at INT64_MAX; the basis of the size estimates.
std::int64_t stored_bytes(const StoreLayout& layout, std::int64_t bytes_per_value);

}  // namespace hmc::io
