#pragma once
/// \file
/// \brief Recorded draws as the writers and the diagnostics see them: a column
/// layout (the model's parameters, then the sample statistics) and a read-only
/// source that hands out one column for a range of particles at a time.
///
/// The sampler hands draws over in blocks (services/); they are kept on disk in the
/// staging directory's tile store (io/tile_store.hpp) while the run goes on. At the
/// end, the netCDF and CSV writers and the diagnostics read the store back through
/// DrawSource, one column (and, for very large ensembles, one range of particles) at a
/// time, so memory is bounded by what one call asks for, not by the run.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace hmc {

/// \brief How a sample statistic is stored (all are doubles in the sampler and the store).
enum class StatType : int { kReal = 0, kInteger, kBool };

/// \brief A sample statistic recorded with every draw, after the parameters: its ArviZ
/// name (sample_stats), its type, and whether compression pays for it (integers,
/// booleans, values that repeat). The transition kernel declares its columns
/// (sampler/kernel.hpp); the writers and the diagnostics read them from the layout.
struct StatColumn {
  std::string name;
  StatType type = StatType::kReal;
  bool compress = false;
};

/// \brief The statistics of the HMC kernel: lp, acceptance_rate, step_size, n_steps,
/// diverging, energy (also those of files written before layouts named their columns).
std::vector<StatColumn> hmc_stat_columns();

/// \brief Warmup draws (with /output/save_warmup) and post-warmup draws are stored apart.
enum class Section : int { kPosterior = 0, kWarmup = 1 };

/// \brief The name, dims and shape of an array (no chain or draw dims).
struct ArrayShape {
  std::string name;
  std::vector<std::string> dims;    ///< one per axis
  std::vector<std::int64_t> shape;  ///< one per axis; empty: a scalar
  std::int64_t size() const {
    std::int64_t n = 1;
    for (auto x : shape) n *= x;
    return n;
  }
};

/// \brief A fixed array of a run, not drawn (ArviZ's `observed_data` and `constant_data`),
/// values in C order.
struct DataArray : ArrayShape {
  std::string group;  ///< "observed_data" or "constant_data" (hmc sets it)
  std::vector<double> values;
  bool integer = false;  ///< written as int64 (counts, outcomes)
};

/// \brief Values recorded with every draw besides the parameters and the statistics: one
/// InferenceData group (`log_likelihood`) of arrays, stored one column per element, the
/// arrays in order and each in C order.
struct DrawGroup {
  std::string name;  ///< the group: "log_likelihood"
  std::vector<ArrayShape> arrays;
  std::int64_t size() const {
    std::int64_t n = 0;
    for (const auto& a : arrays) n += a.size();
    return n;
  }
};

/// \brief What a store holds.
struct StoreLayout {
  std::int64_t particles = 0;            ///< chains
  std::vector<std::string> param_names;  ///< flat parameter names in model order ("transition[1,2]")
  /// Optional dimension names per vector/matrix parameter, e.g. {"transition", {"from_state", "to_state"}}.
  std::vector<std::pair<std::string, std::vector<std::string>>> dim_names;
  std::int64_t draws = 0;                              ///< recorded post-warmup draws per particle: ceil(draws / thin)
  std::int64_t warmup_draws = 0;                       ///< recorded warmup draws per particle (0 unless save_warmup)
  std::vector<StatColumn> stats = hmc_stat_columns();  ///< the kernel's statistics, in column order
  std::vector<DrawGroup> groups;                       ///< further groups, after the statistics

  int num_params() const { return static_cast<int>(param_names.size()); }
  int num_stats() const { return static_cast<int>(stats.size()); }
  /// Columns of the further groups, all of them.
  int num_group_columns() const {
    std::int64_t n = 0;
    for (const auto& g : groups) n += g.size();
    return static_cast<int>(n);
  }
  /// First column of group k.
  int group_column(std::size_t k) const {
    int c = num_params() + num_stats();
    for (std::size_t i = 0; i < k; ++i) c += static_cast<int>(groups[i].size());
    return c;
  }
  /// Index of the group named `name`, or -1.
  int group_index(const std::string& name) const {
    for (std::size_t k = 0; k < groups.size(); ++k)
      if (groups[k].name == name) return static_cast<int>(k);
    return -1;
  }
  /// Parameters, then the statistics, then the further groups' values.
  int num_columns() const { return num_params() + num_stats() + num_group_columns(); }
  /// Column index of the statistic named `name`, or -1 when the kernel records none.
  int stat_column(const std::string& name) const {
    for (int s = 0; s < num_stats(); ++s)
      if (stats[static_cast<std::size_t>(s)].name == name) return num_params() + s;
    return -1;
  }
  /// The statistic of column c (c >= num_params()).
  const StatColumn& stat_of(int c) const { return stats[static_cast<std::size_t>(c - num_params())]; }
  std::int64_t draws_of(Section s) const { return s == Section::kPosterior ? draws : warmup_draws; }
};

/// \brief Read access to stored draws.
class DrawSource {
 public:
  virtual ~DrawSource() = default;
  virtual const StoreLayout& layout() const = 0;
  /// \brief Draws per particle available in section `s` (all of them once a run is
  /// complete; fewer in a checkpointed run).
  virtual std::int64_t available(Section s) const = 0;
  /// \brief Column `column` of particles [p0, p1) and draws [0, available(s)):
  /// out[(p - p0) * available(s) + d]. Throws RunError naming the file on I/O errors.
  virtual void read(Section s, int column, std::int64_t p0, std::int64_t p1, double* out) const = 0;
};

/// \brief A DrawSource over values held in memory, laid out [column][particle][draw]
/// (for tests and small runs).
class MemorySource : public DrawSource {
 public:
  MemorySource(StoreLayout layout, std::vector<double> posterior, std::vector<double> warmup = {});
  const StoreLayout& layout() const override { return layout_; }
  std::int64_t available(Section s) const override { return layout_.draws_of(s); }
  void read(Section s, int column, std::int64_t p0, std::int64_t p1, double* out) const override;

 private:
  StoreLayout layout_;
  std::vector<double> posterior_, warmup_;
};

}  // namespace hmc
