#pragma once
/// \file
/// \brief `hmc generate DIR`: what a model computes from recorded draws (the pointwise
/// log-likelihood, posterior predictive draws, generated quantities: sampler/groups.hpp)
/// over the draws.nc of an earlier run, as Stan's standalone generated quantities do,
/// on any number of ranks; written as a new result set (draws.nc, summary.json, run.json)
/// in OUT (default DIR.generated), DIR untouched. The values are bitwise those the run
/// would have recorded with the same groups asked for: the same kernel on the same
/// recorded values, with random numbers keyed by seed, particle and draw.
///
///   1. the spec: DIR's recorded config with /output/dir OUT and the groups asked for
///      (generate_spec), the model built once per rank and checked (memory, disk);
///   2. DIR/draws.nc checked against the model (parameter names, particles);
///   3. block by block of draws: each rank reads its particles' draws, computes their
///      groups on its device, rank 0 gathers them into a store as a run does;
///   4. the files, published at once (a failure leaves nothing in OUT).

#include "hmc/core/draw_source.hpp"
#include "hmc/io/draw_writer.hpp"
#include "hmc/io/netcdf.hpp"
#include "hmc/io/tile_store.hpp"
#include "hmc/model/concept.hpp"
#include "hmc/parallel/decomposition.hpp"
#include "hmc/parallel/gather.hpp"
#include "hmc/parallel/mpi_context.hpp"
#include "hmc/sampler/groups.hpp"
#include "hmc/services/collective.hpp"
#include "hmc/services/prepare.hpp"
#include "hmc/services/run_spec.hpp"
#include "hmc/services/staging.hpp"

#include <memory>
#include <string>
#include <vector>

namespace hmc::services {

/// \brief What the command line asks of `hmc generate`.
struct GenerateRequest {
  std::string dir;     ///< the finished run
  std::string output;  ///< OUT; empty: DIR.generated
  std::vector<std::string>
      groups;  ///< log_likelihood, posterior_predictive, generated_quantities; empty: all the model has
  bool overwrite = false;
};

/// \brief The spec of `hmc generate` on every rank (collective): DIR/run.json's config with
/// /output/dir OUT, its data reloaded. Throws RunError naming DIR when it holds no
/// finished run with draws.nc, or a model this build lacks.
RunSpec generate_spec(const parallel::MpiContext& mpi, const GenerateRequest& request,
                      const std::vector<std::string>& model_names);

/// \brief `spec` with the groups to compute: those asked for, else every one the model has
/// a member for (`has`: log_likelihood, posterior_predictive, generated_quantities);
/// ConfigError when none is left.
RunSpec with_groups(const RunSpec& spec, const std::vector<std::string>& asked, const bool has[3]);

/// \brief Rank 0: checks that `src` holds draws of `layout`'s parameters and particles
/// (RunError naming `path` otherwise).
void check_source(const hmc::DrawSource& src, const hmc::StoreLayout& layout, const std::string& path);

/// \brief Rank 0: writes draws.nc (with `data`), summary.json and run.json of the store into
/// the staging directory, and publishes them.
void finish_generate(const RunSpec& spec, const GenerateRequest& request, const io::TileStore& store,
                     const io::DrawFormats& formats, std::vector<hmc::DataArray> data);

/// \brief The whole command for Model (collective); returns the exit code.
template <class Model>
int generate(const parallel::MpiContext& mpi, const RunSpec& asked, const GenerateRequest& request,
             const io::DrawFormats& formats) {
  const bool has[3] = {model::has_log_likelihood<Model>(), model::has_posterior_predictive<Model>(),
                       model::has_generated_quantities<Model>()};
  const RunSpec spec = with_groups(asked, request.groups, has);
  const Model model = prepare_model<Model>(mpi, spec, formats, Checks{true, true});
  const auto widths = sampler::group_widths(model, spec.run.sampler);
  const std::string path = request.dir + "/draws.nc";

  hmc::StoreLayout layout = store_layout(model, spec.run);
  std::unique_ptr<io::NetcdfSource> src;
  std::unique_ptr<io::TileStore> store;
  on_root(mpi, [&] {
    src = std::make_unique<io::NetcdfSource>(path);
    layout.stats = src->layout().stats;
    layout.draws = src->available(hmc::Section::kPosterior);
    check_source(*src, layout, path);
    prepare_staging(spec.paths, spec.overwrite);
    store = std::make_unique<io::TileStore>(spec.paths.blocks(), layout);
  });
  // The other ranks read their own particles' draws from the file.
  if (!mpi.root()) {
    src = std::make_unique<io::NetcdfSource>(path);
    layout.stats = src->layout().stats;
    layout.draws = src->available(hmc::Section::kPosterior);
  }

  const parallel::Decomposition dec{layout.particles, mpi.size(), mpi.rank()};
  const int n = static_cast<int>(dec.count()), params = layout.num_params(), G = widths.total();
  const std::int64_t K = layout.draws, N = layout.particles;
  const int B = static_cast<int>(
      std::max<std::int64_t>(1, std::min<std::int64_t>(K, spec.run.block_draws(layout.num_columns()))));
  DrawView draws("hmc::generate_draws", n, B, params), out("hmc::generate_groups", n, B, G);
  auto draws_h = Kokkos::create_mirror_view(draws);
  auto out_h = Kokkos::create_mirror_view(out);
  std::vector<double> column, local, tile;
  const int first_group = layout.num_params() + layout.num_stats();
  for (std::int64_t d0 = 0; d0 < K; d0 += B) {
    const int b = static_cast<int>(std::min<std::int64_t>(B, K - d0));
    column.resize(static_cast<std::size_t>(n) * b);
    for (int c = 0; c < params; ++c) {
      src->read_draws(hmc::Section::kPosterior, c, dec.begin(), dec.begin() + n, d0, d0 + b, column.data());
      for (int i = 0; i < n; ++i)
        for (int d = 0; d < b; ++d) draws_h(i, d, c) = column[static_cast<std::size_t>(i) * b + d];
    }
    Kokkos::deep_copy(draws, draws_h);
    for (int slot = 0; slot < b; ++slot) {
      sampler::record_groups(model, draws, out, slot, n, widths, spec.run.sampler.seed, dec.begin(),
                             static_cast<std::uint32_t>(d0 + slot), false);
    }
    Kokkos::deep_copy(out_h, out);
    // The tile [column][particle][draw]: the recorded columns from the file, the groups gathered.
    if (mpi.root()) {
      tile.assign(static_cast<std::size_t>(layout.num_columns()) * N * b, 0.0);
      for (int c = 0; c < first_group; ++c) {
        src->read_draws(hmc::Section::kPosterior, c, 0, N, d0, d0 + b,
                        tile.data() + static_cast<std::int64_t>(c) * N * b);
      }
    }
    local.resize(static_cast<std::size_t>(n) * b);
    for (int g = 0; g < G; ++g) {
      for (int i = 0; i < n; ++i)
        for (int d = 0; d < b; ++d) local[static_cast<std::size_t>(i) * b + d] = out_h(i, d, g);
      double* dest = mpi.root() ? tile.data() + static_cast<std::int64_t>(first_group + g) * N * b : nullptr;
      parallel::gather_rows(mpi, dec, local.data(), dest, b);
    }
    on_root(mpi, [&] { store->append(hmc::Section::kPosterior, d0, b, tile.data()); });
  }
  on_root(mpi, [&] { finish_generate(spec, request, *store, formats, data_arrays(model, spec.run)); });
  return kExitOk;
}

}  // namespace hmc::services
