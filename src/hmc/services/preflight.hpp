#pragma once
/// \file
/// \brief The checks of a resolved config that need the model built: keys that depend on
/// its dimension, the step size and path length, and the disk the results will take.
/// Rank 0 runs them before anything is allocated or written (docs/config.md#validation).

#include "hmc/core/draw_source.hpp"
#include "hmc/io/draw_writer.hpp"
#include "hmc/io/run_config.hpp"
#include "hmc/services/resources.hpp"

namespace hmc::services {

/// \brief Throws DataError for a model of more coordinates than hmc supports
/// (model::kMaxDim), ConfigError for settings that cannot work with this model: init
/// values of the wrong length, "prior" init for a model that cannot draw from its prior,
/// a path length (step size x steps) that is not finite or
/// underflows, superchains that do not divide the particles, a dense metric beyond its
/// size limit.
void check_against_model(const io::RunConfig& run, const ModelShape& shape, bool samples_prior);

/// \brief Throws RunError (exit code 4) when the results of a run storing `layout` cannot
/// fit on the file system of /output/dir (estimate_output_bytes against free_disk_bytes).
void check_disk(const io::RunConfig& run, const hmc::StoreLayout& layout, const ModelShape& shape,
                const io::DrawFormats& formats);

}  // namespace hmc::services
