// /output/formats "csv": draws.csv, one row per particle and post-warmup draw (io/results.hpp).
#include "hmc/io/draw_writer.hpp"
#include "hmc/io/results.hpp"

namespace hmc::io {

namespace {

class CsvWriter : public DrawWriter {
 public:
  explicit CsvWriter(const WriterOptions& o) : precision_(o.precision) {}
  std::string file_name() const override { return "draws.csv"; }
  /// About 25 bytes a value.
  std::int64_t size_estimate(const StoreLayout& layout) const override { return stored_bytes(layout, 25); }
  void write(const std::string& path, const DrawSource& source,
             const std::function<void(double)>& progress) const override {
    write_draws_csv(path, source, precision_, progress);
  }

 private:
  int precision_;
};

}  // namespace

DrawFormat csv_format() {
  return {"csv", [](const WriterOptions& o) { return std::make_unique<CsvWriter>(o); }};
}

}  // namespace hmc::io
