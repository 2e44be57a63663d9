// /output/formats "netcdf": draws.nc, ArviZ InferenceData (io/netcdf.hpp).
#include "hmc/io/netcdf.hpp"

#include "hmc/io/draw_writer.hpp"

namespace hmc::io {

namespace {

class NetcdfWriter : public DrawWriter {
 public:
  explicit NetcdfWriter(const WriterOptions& o) : attributes_(o.attributes), data_(o.data) {
    options_.compression = o.compression;
  }
  std::string file_name() const override { return "draws.nc"; }
  /// Uncompressed: 8 bytes a value (coordinates and attributes are small beside them).
  std::int64_t size_estimate(const StoreLayout& layout) const override { return stored_bytes(layout, 8); }
  void write(const std::string& path, const DrawSource& source,
             const std::function<void(double)>& progress) const override {
    write_inference_data(path, source, options_, attributes_, progress, data_);
  }

 private:
  NetcdfOptions options_;
  nlohmann::json attributes_;
  std::vector<DataArray> data_;
};

}  // namespace

DrawFormat netcdf_format() {
  return {"netcdf", [](const WriterOptions& o) { return std::make_unique<NetcdfWriter>(o); }};
}

}  // namespace hmc::io
