#pragma once
/// \file
/// \brief The tests' road to a whole run in memory: hmc::test::sample() runs an
/// EnsembleSampler over one process's particles, block by block as a real run does,
/// and keeps every post-warmup draw on the host (LocalDraws); LocalDrawsSource reads
/// them as a DrawSource for the writers and diagnostics, and summarize() / warnings()
/// apply those to them. Real runs stream blocks to the store instead
/// (services/sample.hpp); tests/mpi/test_block_path.cpp checks that both give the
/// same draws.

#include "hmc/core/draw_source.hpp"
#include "hmc/core/draws.hpp"
#include "hmc/core/errors.hpp"
#include "hmc/diagnostics/summary.hpp"
#include "hmc/sampler/kernels.hpp"
#include "hmc/sampler/run.hpp"

#include <chrono>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace hmc::test {

/// \brief What one process recorded, on the host, particle-major.
struct LocalDraws {
  using HostDraws = Kokkos::View<double***, Kokkos::LayoutRight, Kokkos::HostSpace>;
  using HostStat = Kokkos::View<double**, Kokkos::LayoutStride, Kokkos::HostSpace>;
  using HostVector = Kokkos::View<double*, Kokkos::HostSpace>;
  HostDraws draws;                                                 ///< [particle][draw][param]
  HostDraws stats;                                                 ///< [particle][draw][statistic]
  std::vector<hmc::StatColumn> columns = hmc::hmc_stat_columns();  ///< the kernel's statistics
  HostVector accept_sum, divergences;                              ///< per particle, post-warmup
  hmc::Adapted adapted;
  double sampling_s = 0.0;
  std::int64_t grad_evals = 0;  ///< leapfrog steps of warmup and sampling

  /// Index of the statistic named `name` in `columns`; RunError when there is none.
  int stat_index(const std::string& name) const {
    for (std::size_t k = 0; k < columns.size(); ++k)
      if (columns[k].name == name) return static_cast<int>(k);
    throw hmc::RunError("LocalDraws: no statistic " + name);
  }
  /// Statistic `name` of every particle and draw: [particle][draw].
  HostStat stat(const std::string& name) const {
    return Kokkos::subview(stats, Kokkos::ALL(), Kokkos::ALL(), stat_index(name));
  }
  /// Room for `particles` x `draws` draws of `params` parameters and the statistics of `columns`.
  void allocate(std::size_t particles, std::size_t n_draws, std::size_t params) {
    draws = HostDraws("hmc::draws_host", particles, n_draws, params);
    stats = HostDraws("hmc::stats_host", particles, n_draws, columns.size());
  }
};

/// \brief Copies a post-warmup block into the whole-run arrays (warmup blocks are skipped).
inline void append_block(LocalDraws& all, const hmc::DrawBlock& b) {
  if (b.warmup) return;
  const std::size_t n = all.draws.extent(0), params = all.draws.extent(2);
  for (std::size_t i = 0; i < n; ++i)
    for (int k = 0; k < b.count; ++k) {
      const std::size_t d = static_cast<std::size_t>(b.first_draw) + k;
      for (std::size_t j = 0; j < params; ++j) all.draws(i, d, j) = b.draws(i, k, j);
      for (std::size_t j = 0; j < all.stats.extent(2); ++j) all.stats(i, d, j) = b.stats(i, k, j);
    }
}

/// \brief Particles [first, first + count) of an ensemble of s.particles: initialise
/// (throwing InitError if any cannot start), run every iteration, keep every post-warmup
/// draw. `allreduce` joins the ensemble sums of other processes (tests/mpi). The kernel
/// is s.algorithm's (sampler/kernels.hpp), or Kernel when given.
template <class Model, class Kernel>
LocalDraws sample_with(const Model& model, const hmc::sampler::Settings& s, std::int64_t first, std::int64_t count,
                       const hmc::sampler::ProgressCallback& progress = {},
                       hmc::Allreduce allreduce = hmc::no_allreduce()) {
  hmc::sampler::EnsembleSampler<Model, Kernel> sampler(model, s, first, count, std::move(allreduce));
  if (const int bad = sampler.initialise(); bad > 0) {
    throw hmc::sampler::InitError(std::to_string(bad) + " of " + std::to_string(count) +
                                  " particles found no finite log density in " + std::to_string(s.init_attempts) +
                                  " draws");
  }
  const auto start = std::chrono::steady_clock::now();
  const auto n = static_cast<std::size_t>(count);
  const auto kept = static_cast<std::size_t>(s.kept());
  LocalDraws out;
  out.columns = Kernel::stat_columns();
  out.allocate(n, kept, static_cast<std::size_t>(model.num_params()));
  while (!sampler.done()) {
    sampler.iterate(progress, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (sampler.block_ready()) append_block(out, sampler.take_block());
  }
  Kokkos::fence();
  std::vector<double> accept, div;
  sampler.totals(accept, div);
  out.accept_sum = LocalDraws::HostVector("hmc::accept_sum_host", n);
  out.divergences = LocalDraws::HostVector("hmc::divergences_host", n);
  for (std::size_t i = 0; i < n; ++i) {
    out.accept_sum(i) = accept[i];
    out.divergences(i) = div[i];
  }
  out.adapted = sampler.adapted();
  out.sampling_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out.grad_evals = sampler.grad_evals();
  return out;
}

template <class Model>
LocalDraws sample(const Model& model, const hmc::sampler::Settings& s, std::int64_t first, std::int64_t count,
                  const hmc::sampler::ProgressCallback& progress = {}, hmc::Allreduce allreduce = hmc::no_allreduce()) {
  return hmc::sampler::visit_kernel(s.algorithm, [&](auto kernel) {
    using Kernel = typename decltype(kernel)::template type<Model>;
    return sample_with<Model, Kernel>(model, s, first, count, progress, std::move(allreduce));
  });
}

/// \brief Reads a LocalDraws as a posterior section; no warmup draws. Statistics that
/// were not allocated read as NaN. Keeps a reference: `all` must outlive the source.
class LocalDrawsSource : public hmc::DrawSource {
 public:
  LocalDrawsSource(const LocalDraws& all, std::vector<std::string> param_names) : all_(all) {
    layout_.particles = static_cast<std::int64_t>(all.draws.extent(0));
    layout_.draws = static_cast<std::int64_t>(all.draws.extent(1));
    layout_.param_names = std::move(param_names);
    layout_.stats = all.columns;
    if (layout_.param_names.size() != all.draws.extent(2)) {
      throw hmc::RunError("LocalDrawsSource: " + std::to_string(layout_.param_names.size()) + " names for " +
                          std::to_string(all.draws.extent(2)) + " parameters");
    }
  }

  const hmc::StoreLayout& layout() const override { return layout_; }
  std::int64_t available(hmc::Section s) const override { return layout_.draws_of(s); }

  void read(hmc::Section s, int column, std::int64_t p0, std::int64_t p1, double* out) const override {
    const std::int64_t draws = layout_.draws_of(s);
    if (draws == 0 || p1 <= p0) return;
    if (column < 0 || column >= layout_.num_columns() || p0 < 0 || p1 > layout_.particles) {
      throw hmc::RunError("LocalDrawsSource: column " + std::to_string(column) + " or particles [" +
                          std::to_string(p0) + ", " + std::to_string(p1) + ") out of range");
    }
    const int params = layout_.num_params();
    if (column < params) {
      for (std::int64_t p = p0; p < p1; ++p)
        for (std::int64_t d = 0; d < draws; ++d) *out++ = all_.draws(p, d, column);
      return;
    }
    const auto& v = all_.stats;
    const std::size_t k = static_cast<std::size_t>(column - params);
    const bool present = static_cast<std::int64_t>(v.extent(0)) >= p1 &&
                         static_cast<std::int64_t>(v.extent(1)) == draws && v.extent(2) > k;
    for (std::int64_t p = p0; p < p1; ++p)
      for (std::int64_t d = 0; d < draws; ++d) *out++ = present ? v(p, d, k) : std::numeric_limits<double>::quiet_NaN();
  }

 private:
  const LocalDraws& all_;
  hmc::StoreLayout layout_;
};

/// \brief One summary per parameter of in-memory draws, all draws (no cap).
inline std::vector<hmc::diagnostics::ParameterSummary> summarize(const LocalDraws& all,
                                                                 const std::vector<std::string>& names,
                                                                 int superchains = 0) {
  const LocalDrawsSource source(all, names);
  hmc::diagnostics::SummaryOptions options;
  options.superchains = superchains;
  options.max_draws = 0;
  return hmc::diagnostics::summarize(source, options);
}

/// \brief The summary of parameter k alone (named `name`), all draws.
inline hmc::diagnostics::ParameterSummary summarize_parameter(const LocalDraws& all, int k, const std::string& name,
                                                              int superchains = 0) {
  std::vector<std::string> names(all.draws.extent(2));
  for (std::size_t j = 0; j < names.size(); ++j) names[j] = "column" + std::to_string(j);
  names.at(static_cast<std::size_t>(k)) = name;
  return summarize(all, names, superchains).at(static_cast<std::size_t>(k));
}

/// \brief diagnostics::warnings on in-memory draws (divergences from `all`).
inline std::vector<std::string> warnings(const LocalDraws& all,
                                         const std::vector<hmc::diagnostics::ParameterSummary>& params) {
  std::vector<std::string> names(all.draws.extent(2));
  for (std::size_t k = 0; k < names.size() && k < params.size(); ++k) names[k] = params[k].name;
  const LocalDrawsSource source(all, std::move(names));
  double div = 0.0;
  for (std::size_t i = 0; i < all.divergences.extent(0); ++i) div += all.divergences(i);
  return hmc::diagnostics::warnings(source, params, div);
}

}  // namespace hmc::test
