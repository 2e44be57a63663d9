#include "hmc/core/errors.hpp"
#include "hmc/core/sizes.hpp"
#include "hmc/io/draw_writer.hpp"

namespace hmc::io {

/// The draw formats of /output/formats, one line each, in the order "both" lists them and
/// the files are written: NAME's file io/writers/NAME.cpp defines `DrawFormat NAME_format()`.
#define HMC_DRAW_FORMATS(X) \
  X(netcdf)                 \
  X(csv)

#define HMC_DECLARE_FORMAT(name) DrawFormat name##_format();
HMC_DRAW_FORMATS(HMC_DECLARE_FORMAT)
#undef HMC_DECLARE_FORMAT

const DrawFormats& draw_formats() {
#define HMC_LIST_FORMAT(name) name##_format(),
  static const DrawFormats formats = {HMC_DRAW_FORMATS(HMC_LIST_FORMAT)};
#undef HMC_LIST_FORMAT
  return formats;
}

std::vector<std::string> format_names(const DrawFormats& formats) {
  std::vector<std::string> names;
  for (const auto& f : formats) names.push_back(f.name);
  return names;
}

std::vector<std::unique_ptr<DrawWriter>> make_writers(const DrawFormats& formats, const std::vector<std::string>& names,
                                                      const WriterOptions& options) {
  std::vector<std::unique_ptr<DrawWriter>> writers;
  for (const auto& name : names) {
    const DrawFormat* format = nullptr;
    for (const auto& f : formats)
      if (f.name == name) format = &f;
    if (!format) throw ConfigError("config error: /output/formats: this build has no format \"" + name + "\"");
    writers.push_back(format->make(options));
  }
  return writers;
}

std::int64_t stored_bytes(const StoreLayout& layout, std::int64_t bytes_per_value) {
  const std::int64_t draws = add_sat(layout.draws, layout.warmup_draws);
  return mul_sat(mul_sat(mul_sat(layout.particles, draws), layout.num_columns()), bytes_per_value);
}

}  // namespace hmc::io
