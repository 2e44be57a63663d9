#include "hmc/io/netcdf.hpp"

#include "hmc/core/errors.hpp"
#include "hmc/io/json_text.hpp"
#include "hmc/io/variables.hpp"

#include <dirent.h>
#include <netcdf.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <numeric>
#include <utility>

namespace hmc::io {

namespace {

using nlohmann::json;

/// Version of the hmc_layout attribute's content (2: with the statistics' columns; a
/// file of format 1 has HMC's).
constexpr int kLayoutFormat = 2;

const char* const kGroupNames[2][2] = {{"posterior", "sample_stats"}, {"warmup_posterior", "warmup_sample_stats"}};

/// File type of a statistic.
nc_type stat_type(StatType t) {
  switch (t) {
    case StatType::kInteger:
      return NC_INT64;
    case StatType::kBool:
      return NC_BYTE;
    default:
      return NC_DOUBLE;
  }
}

/// Chunk shape for `full`: the largest C-order-complete block of at most `max_elems`
/// elements (whole trailing dims, part of one dim, 1 for the leading ones). Zero-length
/// dims (unlimited) count as 1.
std::vector<std::size_t> chunk_shape(const std::vector<std::size_t>& full, std::size_t max_elems) {
  std::vector<std::size_t> chunk(full.size(), 1);
  std::size_t prod = 1;
  for (std::size_t k = full.size(); k-- > 0;) {
    const std::size_t len = std::max<std::size_t>(full[k], 1);
    if (prod * len <= max_elems) {
      chunk[k] = len;
      prod *= len;
    } else {
      chunk[k] = std::max<std::size_t>(1, max_elems / prod);
      break;
    }
  }
  return chunk;
}

/// The open descriptors of this process (from /proc/self/fd, else 0 .. 65535).
std::vector<int> open_descriptors() {
  std::vector<int> fds;
  if (DIR* d = ::opendir("/proc/self/fd")) {
    const int own = ::dirfd(d);
    while (const dirent* e = ::readdir(d)) {
      char* end = nullptr;
      const long fd = std::strtol(e->d_name, &end, 10);
      if (end != e->d_name && *end == '\0' && fd != own) fds.push_back(static_cast<int>(fd));
    }
    ::closedir(d);
    return fds;
  }
  for (int fd = 0; fd < 65536; ++fd) fds.push_back(fd);
  return fds;
}

/// \brief Points every descriptor of this process that is open on the file `path` at an
/// empty anonymous file in memory instead; false if none was found or no such file can
/// be made.
///
/// For a file that is being discarded: whatever HDF5 still writes to it (closing it, or
/// trying to) goes to memory, so that nothing more can fail on the disk and the space
/// is freed once the file is removed.
bool detach_file(const std::string& path) {
  struct stat want {};
  if (::stat(path.c_str(), &want) != 0) return false;
  const int spare = ::memfd_create("hmc-discarded-file", MFD_CLOEXEC);
  if (spare < 0) return false;
  bool found = false;
  for (int fd : open_descriptors()) {
    struct stat st {};
    if (fd == spare || ::fstat(fd, &st) != 0) continue;
    if (st.st_dev == want.st_dev && st.st_ino == want.st_ino && S_ISREG(st.st_mode)) {
      found = ::dup2(spare, fd) == fd || found;
    }
  }
  ::close(spare);
  return found;
}

/// \brief After a failed write, lets the process end without HDF5's clean-up at exit.
///
/// HDF5 closes the files still open when the process exits (an atexit handler). A file
/// that a write failed on cannot be closed: netCDF has left some of its HDF5 objects open
/// and HDF5's cache is in an error state, and HDF5 then crashes there (SIGSEGV) or prints
/// "HDF5: infinite loop closing library". This handler, registered after HDF5's and so
/// run before it, flushes the C streams and ends the process with its exit status.
/// Everything else (MPI, Kokkos, hmc's files) is done by then.
void skip_hdf5_cleanup_at_exit() {
#ifdef __GLIBC__
  static const bool registered = [] {
    return ::on_exit(
               [](int status, void*) {
                 std::fflush(nullptr);
                 ::_exit(status);
               },
               nullptr) == 0;
  }();
  (void)registered;
#endif
}

/// \brief While netCDF closes a file: a crash inside it ends the process with hmc's one
/// line and exit code 4 instead of a SIGSEGV.
///
/// When the last write of a file fails (nc_close has HDF5 rewrite the 48-byte superblock
/// in place: an I/O error, or a full disk on a copy-on-write file system), netCDF 4.9 with
/// HDF5 1.10 reports the objects it left open by reading freed memory, inside nc_close,
/// where no error code comes back. The handler, installed for SIGSEGV and SIGBUS for the
/// length of the call only, writes the line prepared beforehand, removes the half-written
/// file and ends the process (async-signal-safe calls only). The checkpoint is not touched,
/// so `hmc resume` redoes the writing (docs/output.md#disk-space).
class CrashWhileClosing {
 public:
  explicit CrashWhileClosing(const std::string& path) {
    const std::string line = "hmc: cannot write " + path +
                             ": netCDF failed while closing it (its last write failed: an I/O error or a full disk)\n";
    line_len_ = std::min(line.size(), sizeof line_);
    std::memcpy(line_, line.data(), line_len_);
    const std::size_t n = std::min(path.size(), sizeof path_ - 1);
    std::memcpy(path_, path.data(), n);
    path_[n] = '\0';
    struct sigaction sa {};
    sa.sa_handler = on_crash;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &old_segv_);
    sigaction(SIGBUS, &sa, &old_bus_);
  }
  ~CrashWhileClosing() {
    sigaction(SIGSEGV, &old_segv_, nullptr);
    sigaction(SIGBUS, &old_bus_, nullptr);
  }
  CrashWhileClosing(const CrashWhileClosing&) = delete;
  CrashWhileClosing& operator=(const CrashWhileClosing&) = delete;

 private:
  static void on_crash(int) {
    (void)!::write(STDERR_FILENO, line_, line_len_);
    ::unlink(path_);
    ::_exit(kExitRunError);
  }
  static inline char line_[4352];
  static inline std::size_t line_len_ = 0;
  static inline char path_[4096];
  struct sigaction old_segv_ {
  }, old_bus_{};
};

/// One variable of a group and where its values come from.
struct VarPlan {
  Section section = Section::kPosterior;
  int grp = -1;
  int varid = -1;
  nc_type type = NC_DOUBLE;
  std::vector<int> columns;        ///< store columns, C order of the parameter's elements
  std::vector<std::size_t> full;   ///< (chain, draw, dims...)
  std::vector<std::size_t> align;  ///< write-block alignment in (chain, draw): the chunk, or 1 x 1
};

class Writer {
 public:
  Writer(std::string path, const DrawSource& src, const NetcdfOptions& opt, const json& attributes,
         const std::function<void(double)>& progress, const std::vector<DataArray>& data)
      : path_(std::move(path)), src_(src), opt_(opt), attributes_(attributes), progress_(progress), data_(data) {}

  ~Writer() { abandon(); }
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  /// After a failure: removes the file, if it was created, and closes it where that is
  /// safe. Once a netCDF call has failed (a write on a full disk, over a quota, an I/O
  /// error), netCDF 4.9 with HDF5 1.10 cannot close the file: HDF5 refuses, as netCDF has
  /// left some of the file's objects open, and netCDF's report of them reads freed memory
  /// (SIGSEGV in nc_abort or nc_close). Such a file stays open, its descriptor on memory
  /// (detach_file), and HDF5's clean-up at exit is skipped (skip_hdf5_cleanup_at_exit).
  void abandon() {
    // Also when nc_create failed: HDF5 may still hold the file.
    const bool detached = created_ && detach_file(path_);
    if (nc_failed_) {
      // netCDF's state is broken: nc_abort and nc_close would crash. The file stays open,
      // on memory, and HDF5 must not try to close it at exit either.
      skip_hdf5_cleanup_at_exit();
    } else if (ncid_ >= 0 && detached) {
      nc_abort(ncid_);  // a failure of hmc's own (a bad value, a store error): netCDF's state is sound
    } else if (ncid_ >= 0) {
      skip_hdf5_cleanup_at_exit();  // left open, as it could not be detached
    }
    ncid_ = -1;
    if (created_) std::remove(path_.c_str());
    created_ = false;
  }

  void run() {
    if (opt_.compression < 0 || opt_.compression > 9) fail("compression level must be 0..9");
    if (!attributes_.is_null() && !attributes_.is_object()) fail("attributes must be a JSON object");
    const StoreLayout& layout = src_.layout();
    std::vector<std::pair<std::string, std::vector<Variable>>> data_groups;  // observed_data, constant_data
    try {
      vars_ = group_parameters(layout);
      for (std::size_t k = 0; k < layout.groups.size(); ++k) group_vars_.push_back(group_arrays(layout, k));
      for (const auto& a : data_) {
        if (data_groups.empty() || data_groups.back().first != a.group) data_groups.push_back({a.group, {}});
      }
      for (auto& [name, vars] : data_groups) {
        std::vector<DataArray> arrays;
        for (const auto& a : data_)
          if (a.group == name) arrays.push_back(a);
        vars = data_variables(arrays, name);
      }
    } catch (const RunError& e) {
      fail(e.what());
    }

    created_ = true;  // from here on, a failure removes whatever nc_create left at path_
    errno = 0;
    check(nc_create(path_.c_str(), NC_NETCDF4 | NC_CLOBBER, &ncid_));
    put_attributes(ncid_);
    put_text(ncid_, "hmc_layout", dump_text(layout_json(layout)));  // after: an attribute cannot replace it
    std::vector<VarPlan> plans;
    for (int s = 0; s < 2; ++s) {
      const auto section = static_cast<Section>(s);
      if (section == Section::kWarmup && layout.warmup_draws <= 0) continue;
      define_section(section, plans);
    }
    std::vector<std::pair<int, const DataArray*>> data_vars;  // varid, values
    for (const auto& [name, vars] : data_groups) {
      int grp = -1;
      check(nc_def_grp(ncid_, name.c_str(), &grp));
      put_attributes(grp);
      std::vector<const DataArray*> arrays;
      for (const auto& a : data_)
        if (a.group == name) arrays.push_back(&a);
      std::map<std::string, int> dimids;
      for (const Variable& v : vars) {
        std::vector<int> ids;
        for (std::size_t a = 0; a < v.dims.size(); ++a) {
          if (dimids.count(v.dims[a]) == 0) {
            dimids[v.dims[a]] = define_dim(grp, v.dims[a], static_cast<std::size_t>(v.shape[a]));
          }
          ids.push_back(dimids[v.dims[a]]);
        }
        const DataArray* a = arrays[static_cast<std::size_t>(v.columns[0])];
        int varid = -1;
        check(nc_def_var(grp, v.name.c_str(), a->integer ? NC_INT64 : NC_DOUBLE, static_cast<int>(ids.size()),
                         ids.data(), &varid));
        std::vector<std::size_t> full;
        for (auto x : v.shape) full.push_back(static_cast<std::size_t>(x));
        set_storage(grp, varid, full, opt_.compression > 0);
        data_vars.push_back({grp, a});
        data_varids_.push_back(varid);
      }
    }
    check(nc_enddef(ncid_));
    for (std::size_t i = 0; i < data_vars.size(); ++i) {
      const auto [grp, a] = data_vars[i];
      if (a->values.empty()) continue;
      if (a->integer) {
        std::vector<long long> v(a->values.size());
        for (std::size_t e = 0; e < v.size(); ++e) {
          const double x = a->values[e];
          if (!(std::fabs(x) < 9.2e18) || x != std::trunc(x))
            fail(a->name + " value " + std::to_string(x) + " is not an integer");
          v[e] = static_cast<long long>(x);
        }
        check(nc_put_var_longlong(grp, data_varids_[i], v.data()));
      } else {
        check(nc_put_var_double(grp, data_varids_[i], a->values.data()));
      }
    }

    // Coordinates first (small), then the draws, section by section.
    for (const auto& c : coords_) {
      std::vector<long long> iota(c.length);
      std::iota(iota.begin(), iota.end(), 0LL);
      if (c.length > 0) check(nc_put_var_longlong(c.grp, c.varid, iota.data()));
    }
    total_ = 0;
    for (const auto& p : plans) total_ += static_cast<double>(count(p.full));
    report(0.0);
    for (const auto& p : plans) write_var(p);
    // Everything to disk first, so that a failure is one of nc_sync, which abandon()
    // handles, and nc_close has only the superblock left to rewrite in place (a failure
    // there crashes inside netCDF: CrashWhileClosing turns that into hmc's line).
    check(nc_sync(ncid_));
    const int ncid = ncid_;
    ncid_ = -1;
    {
      const CrashWhileClosing guard(path_);
      check(nc_close(ncid));
    }
    created_ = false;
    report(1.0);
  }

 private:
  struct Coord {
    int grp, varid;
    std::size_t length;
  };

  [[noreturn]] void fail(const std::string& what) const { throw RunError("cannot write " + path_ + ": " + what); }
  /// A failed netCDF call: the system's error where HDF5 left one (netCDF reports a
  /// failed write as "HDF error", a failed create as EACCES), and netCDF's own.
  /// errno is cleared after each call that succeeds, so that it is the failed call's.
  void check(int status) {
    if (status == NC_NOERR) {
      errno = 0;
      return;
    }
    const int e = errno;
    nc_failed_ = true;
    if (e != 0 && status > 0) fail(std::strerror(e));  // netCDF's own errno guess (EACCES for a create)
    if (e != 0) fail(std::string(std::strerror(e)) + " (" + nc_strerror(status) + ")");
    fail(nc_strerror(status));
  }
  void report(double f) const {
    if (progress_) progress_(std::min(1.0, f));
  }
  static std::size_t count(const std::vector<std::size_t>& shape) {
    std::size_t n = 1;
    for (std::size_t x : shape) n *= x;
    return n;
  }

  json layout_json(const StoreLayout& layout) const {
    json dims = json::array();
    for (const auto& d : layout.dim_names) dims.push_back({d.first, d.second});
    json variables = json::array();
    for (const Variable& v : vars_) {
      json flat = json::array();
      for (int c : v.columns) flat.push_back(layout.param_names[static_cast<std::size_t>(c)]);
      variables.push_back({{"name", v.name}, {"dims", v.dims}, {"shape", v.shape}, {"param_names", flat}});
    }
    json out = {{"format", kLayoutFormat}, {"particles", layout.particles},     {"param_names", layout.param_names},
                {"dim_names", dims},       {"stats", stats_json(layout.stats)}, {"variables", variables}};
    if (!layout.groups.empty()) out["groups"] = groups_json(layout.groups);
    return out;
  }

  void put_text(int grp, const std::string& name, const std::string& value) {
    check(nc_put_att_text(grp, NC_GLOBAL, name.c_str(), value.size(), value.data()));
  }

  void put_attributes(int grp) {
    if (attributes_.is_object()) {
      for (const auto& [key, v] : attributes_.items()) {
        if (v.is_string()) {
          put_text(grp, key, v.get<std::string>());
        } else if (v.is_number_unsigned() && v.get<std::uint64_t>() > std::uint64_t{INT64_MAX}) {
          const auto x = v.get<unsigned long long>();
          check(nc_put_att_ulonglong(grp, NC_GLOBAL, key.c_str(), NC_UINT64, 1, &x));
        } else if (v.is_number_integer()) {
          const auto x = v.get<long long>();
          check(nc_put_att_longlong(grp, NC_GLOBAL, key.c_str(), NC_INT64, 1, &x));
        } else if (v.is_number_float()) {
          const auto x = v.get<double>();
          check(nc_put_att_double(grp, NC_GLOBAL, key.c_str(), NC_DOUBLE, 1, &x));
        } else {
          put_text(grp, key, dump_text(v));
        }
      }
    }
    put_text(grp, "inference_library", "hmc");
  }

  /// A dim and its int64 coordinate variable 0..n-1. A zero length makes the dim
  /// unlimited in netCDF (length 0 until written), which only chunked variables may use.
  int define_dim(int grp, const std::string& name, std::size_t length) {
    int dimid = -1, varid = -1;
    check(nc_def_dim(grp, name.c_str(), length, &dimid));
    check(nc_def_var(grp, name.c_str(), NC_INT64, 1, &dimid, &varid));
    set_storage(grp, varid, {length}, opt_.compression > 0);
    coords_.push_back({grp, varid, length});
    return dimid;
  }

  /// Chunking, deflate, no fill, and an empty chunk cache; returns the chunk shape (empty
  /// when contiguous).
  std::vector<std::size_t> set_storage(int grp, int varid, const std::vector<std::size_t>& full, bool compress) {
    // every value is written, so HDF5 need not write fill values first
    check(nc_def_var_fill(grp, varid, NC_NOFILL, nullptr));
    const bool has_zero = std::find(full.begin(), full.end(), std::size_t{0}) != full.end();
    std::vector<std::size_t> chunk;
    if (compress || has_zero) {
      chunk = chunk_shape(full, std::max<std::size_t>(1, opt_.chunk_bytes / sizeof(double)));
      check(nc_def_var_chunking(grp, varid, NC_CHUNKED, chunk.data()));
      if (compress) check(nc_def_var_deflate(grp, varid, opt_.shuffle ? 1 : 0, 1, opt_.compression));
    } else {
      check(nc_def_var_chunking(grp, varid, NC_CONTIGUOUS, nullptr));
    }
    // Each write fills whole chunks, so caching them gains nothing, and a cache that holds
    // no chunk makes HDF5 compress and write each one at once: memory stays independent of
    // the number of variables (the default, 16 MiB per variable, is kept until nc_close).
    // 1 byte, not 0: netCDF takes 0 to mean the default. Set last: netCDF enlarges a
    // default cache to fit the chunks.
    check(nc_set_var_chunk_cache(grp, varid, 1, 1, 0.0f));
    return chunk;
  }

  void define_section(Section section, std::vector<VarPlan>& plans) {
    const StoreLayout& layout = src_.layout();
    const auto n = static_cast<std::size_t>(layout.particles);
    const auto k = static_cast<std::size_t>(src_.available(section));
    const int s = static_cast<int>(section);

    // posterior: ensemble dims, parameter dims, parameters
    int grp = -1;
    check(nc_def_grp(ncid_, kGroupNames[s][0], &grp));
    put_attributes(grp);
    define_variables(grp, section, vars_, n, k, plans);

    // sample_stats
    check(nc_def_grp(ncid_, kGroupNames[s][1], &grp));
    put_attributes(grp);
    const int ids[2] = {define_dim(grp, "chain", n), define_dim(grp, "draw", k)};
    for (int st = 0; st < layout.num_stats(); ++st) {
      const StatColumn& stat = layout.stats[static_cast<std::size_t>(st)];
      VarPlan p;
      p.section = section;
      p.grp = grp;
      p.type = stat_type(stat.type);
      p.columns = {layout.num_params() + st};
      p.full = {n, k};
      check(nc_def_var(grp, stat.name.c_str(), p.type, 2, ids, &p.varid));
      if (stat.type == StatType::kBool) put_text_var(grp, p.varid, "dtype", "bool");  // xarray's BooleanCoder
      // integers, booleans and the (post-warmup constant) step size shrink many-fold at
      // little cost (StatColumn::compress); lp, energy and acceptance_rate are mostly noise
      finish_plan(p, opt_.compression > 0 && (opt_.compress_floats || stat.compress));
      plans.push_back(std::move(p));
    }

    // further groups (log_likelihood, ...): chain, draw, the arrays' dims
    for (std::size_t g = 0; g < layout.groups.size(); ++g) {
      const std::string name = (section == Section::kWarmup ? "warmup_" : "") + layout.groups[g].name;
      check(nc_def_grp(ncid_, name.c_str(), &grp));
      put_attributes(grp);
      define_variables(grp, section, group_vars_[g], n, k, plans);
    }
  }

  /// The dims chain, draw and those of `vars` in group `grp`, and the float64 variables
  /// (chain, draw, dims...) of `vars`, planned for writing.
  void define_variables(int grp, Section section, const std::vector<Variable>& vars, std::size_t n, std::size_t k,
                        std::vector<VarPlan>& plans) {
    std::map<std::string, int> dimids;
    dimids["chain"] = define_dim(grp, "chain", n);
    dimids["draw"] = define_dim(grp, "draw", k);
    for (const Variable& v : vars) {
      for (std::size_t a = 0; a < v.dims.size(); ++a) {
        if (dimids.count(v.dims[a]) == 0) {
          dimids[v.dims[a]] = define_dim(grp, v.dims[a], static_cast<std::size_t>(v.shape[a]));
        }
      }
    }
    for (const Variable& v : vars) {
      VarPlan p;
      p.section = section;
      p.grp = grp;
      p.type = NC_DOUBLE;
      p.columns = v.columns;
      p.full = {n, k};
      std::vector<int> ids = {dimids["chain"], dimids["draw"]};
      for (std::size_t a = 0; a < v.dims.size(); ++a) {
        p.full.push_back(static_cast<std::size_t>(v.shape[a]));
        ids.push_back(dimids[v.dims[a]]);
      }
      check(nc_def_var(grp, v.name.c_str(), NC_DOUBLE, static_cast<int>(ids.size()), ids.data(), &p.varid));
      finish_plan(p, opt_.compression > 0 && opt_.compress_floats);
      plans.push_back(std::move(p));
    }
  }

  void put_text_var(int grp, int varid, const char* name, const std::string& value) {
    check(nc_put_att_text(grp, varid, name, value.size(), value.data()));
  }

  void finish_plan(VarPlan& p, bool compress) {
    const std::vector<std::size_t> chunk = set_storage(p.grp, p.varid, p.full, compress);
    if (chunk.empty()) {
      p.align = {1, 1};
    } else {
      p.align = {chunk[0], chunk[1]};
    }
  }

  /// Writes one variable in blocks of whole chunks: (bp particles, all draws) or, when one
  /// particle's draws exceed a block, (1 particle, bd draws).
  void write_var(const VarPlan& p) {
    const std::size_t n = p.full[0], k = p.full[1];
    if (n == 0 || k == 0) return;
    const std::size_t e = p.columns.size();  // elements per draw
    const std::size_t block_elems = std::max<std::size_t>(1, opt_.block_bytes / sizeof(double));
    std::size_t bp = 1, bd = k;
    if (k * e <= block_elems || p.align[1] >= k) {
      bp = std::max<std::size_t>(1, block_elems / (k * e));
      bp = std::min(n, std::max(p.align[0], bp / p.align[0] * p.align[0]));
    } else {
      bd = std::max<std::size_t>(1, block_elems / e);
      bd = std::min(k, std::max(p.align[1], bd / p.align[1] * p.align[1]));
    }
    const bool direct = e == 1 && bd == k;  // the source's layout is already the file's
    buf_.resize(bp * bd * e);
    if (!direct) tmp_.resize(bp * k);

    std::vector<std::size_t> start(p.full.size(), 0), cnt = p.full;
    for (std::size_t p0 = 0; p0 < n; p0 += bp) {
      const std::size_t p1 = std::min(n, p0 + bp), np = p1 - p0;
      for (std::size_t d0 = 0; d0 < k; d0 += bd) {
        const std::size_t nd = std::min(k, d0 + bd) - d0;
        if (direct) {
          src_.read(p.section, p.columns[0], static_cast<std::int64_t>(p0), static_cast<std::int64_t>(p1), buf_.data());
        } else {
          for (std::size_t el = 0; el < e; ++el) {
            src_.read(p.section, p.columns[el], static_cast<std::int64_t>(p0), static_cast<std::int64_t>(p1),
                      tmp_.data());
            for (std::size_t i = 0; i < np; ++i) {
              const double* from = tmp_.data() + i * k + d0;
              double* to = buf_.data() + i * nd * e + el;
              for (std::size_t d = 0; d < nd; ++d) to[d * e] = from[d];
            }
          }
        }
        start[0] = p0;
        start[1] = d0;
        cnt[0] = np;
        cnt[1] = nd;
        put(p, start, cnt, np * nd * e);
        done_ += static_cast<double>(np * nd * e);
        report(done_ / total_);
      }
    }
  }

  void put(const VarPlan& p, const std::vector<std::size_t>& start, const std::vector<std::size_t>& cnt,
           std::size_t len) {
    errno = 0;  // reading the store may have set it
    if (p.type == NC_DOUBLE) {
      check(nc_put_vara_double(p.grp, p.varid, start.data(), cnt.data(), buf_.data()));
    } else if (p.type == NC_INT64) {
      static_assert(sizeof(long long) == sizeof(double), "n_steps is converted in place");
      // converted in place (the int64 bits replace the doubles) and written with the
      // variable's own type: no second block-sized buffer
      for (std::size_t i = 0; i < len; ++i) {
        const double v = buf_[i];
        // exact integers only: anything else would not read back as written
        if (!(std::fabs(v) < 9.2e18) || v != std::trunc(v)) {
          fail("n_steps value " + std::to_string(v) + " is not an integer");
        }
        const auto x = static_cast<long long>(v);
        std::memcpy(&buf_[i], &x, sizeof x);
      }
      check(nc_put_vara(p.grp, p.varid, start.data(), cnt.data(), buf_.data()));
    } else {
      bbuf_.resize(len);
      for (std::size_t i = 0; i < len; ++i) bbuf_[i] = buf_[i] != 0.0 ? 1 : 0;
      check(nc_put_vara_schar(p.grp, p.varid, start.data(), cnt.data(), bbuf_.data()));
    }
  }

  std::string path_;
  const DrawSource& src_;
  const NetcdfOptions& opt_;
  const json& attributes_;
  const std::function<void(double)>& progress_;
  const std::vector<DataArray>& data_;
  int ncid_ = -1;
  std::vector<Variable> vars_;
  std::vector<std::vector<Variable>> group_vars_;  ///< per further group of the layout
  std::vector<int> data_varids_;
  std::vector<Coord> coords_;
  bool created_ = false;
  bool nc_failed_ = false;  ///< a netCDF call failed: see abandon()
  std::vector<double> buf_, tmp_;
  std::vector<signed char> bbuf_;
  double total_ = 0, done_ = 0;
};

}  // namespace

void write_inference_data(const std::string& path, const DrawSource& src, const NetcdfOptions& opt,
                          const nlohmann::json& attributes, const std::function<void(double)>& progress,
                          const std::vector<DataArray>& data) {
  Writer w(path, src, opt, attributes, progress, data);
  try {
    w.run();
  } catch (...) {
    w.abandon();  // no half-written file
    throw;
  }
}

NetcdfSource::NetcdfSource(const std::string& path) : path_(path) {
  // A regular file only: HDF5 would wait for ever on a FIFO (docs/config.md#input-files).
  try {
    ::close(open_input_file(path));
  } catch (const JsonInputError& e) {
    const std::string why = e.what();
    fail(why.rfind("cannot open: ", 0) == 0 ? why.substr(13) : why);
  }
  int status = nc_open(path.c_str(), NC_NOWRITE, &ncid_);
  if (status != NC_NOERR) {
    ncid_ = -1;
    fail(nc_strerror(status));
  }
  try {
    const auto check = [&](int st) {
      if (st != NC_NOERR) fail(nc_strerror(st));
    };
    std::size_t len = 0;
    if (nc_inq_attlen(ncid_, NC_GLOBAL, "hmc_layout", &len) != NC_NOERR) {
      fail("no hmc_layout attribute (not written by hmc)");
    }
    std::string text(len, '\0');
    check(nc_get_att_text(ncid_, NC_GLOBAL, "hmc_layout", text.data()));
    json j;
    try {
      j = json::parse(text);
      const int format = j.at("format").get<int>();
      if (format != 1 && format != kLayoutFormat) fail("hmc_layout format " + dump_text(j.at("format")) + " unknown");
      layout_.stats = format == 1 ? hmc_stat_columns() : stats_from_json(j.at("stats"));
      layout_.particles = j.at("particles").get<std::int64_t>();
      layout_.param_names = j.at("param_names").get<std::vector<std::string>>();
      for (const auto& d : j.at("dim_names")) {
        layout_.dim_names.emplace_back(d.at(0).get<std::string>(), d.at(1).get<std::vector<std::string>>());
      }
      if (j.contains("groups")) layout_.groups = groups_from_json(j.at("groups"));
    } catch (const json::exception& e) {
      fail(std::string("bad hmc_layout attribute: ") + e.what());
    } catch (const std::invalid_argument& e) {
      fail(std::string("bad hmc_layout attribute: ") + e.what());
    }
    std::vector<Variable> vars;
    std::vector<std::vector<Variable>> group_vars;
    try {
      vars = group_parameters(layout_);
      for (std::size_t g = 0; g < layout_.groups.size(); ++g) group_vars.push_back(group_arrays(layout_, g));
    } catch (const RunError& e) {
      fail(e.what());
    }

    for (int s = 0; s < 2; ++s) {
      int grp[2] = {-1, -1};
      for (int g = 0; g < 2; ++g) {
        status = nc_inq_grp_ncid(ncid_, kGroupNames[s][g], &grp[g]);
        if (status == NC_ENOGRP && s == 1) break;
        if (status != NC_NOERR) fail(std::string("group ") + kGroupNames[s][g] + ": " + nc_strerror(status));
      }
      if (grp[1] < 0) continue;  // no warmup groups
      for (int g = 0; g < 2; ++g) {
        int dim = -1;
        std::size_t n = 0, k = 0;
        check(nc_inq_dimid(grp[g], "chain", &dim));
        check(nc_inq_dimlen(grp[g], dim, &n));
        check(nc_inq_dimid(grp[g], "draw", &dim));
        check(nc_inq_dimlen(grp[g], dim, &k));
        if (static_cast<std::int64_t>(n) != layout_.particles ||
            (g == 1 && static_cast<std::int64_t>(k) != available_[s])) {
          fail(std::string("group ") + kGroupNames[s][g] + " has an unexpected number of chains or draws");
        }
        available_[s] = static_cast<std::int64_t>(k);
      }

      auto& slots = slots_[s];
      slots.resize(static_cast<std::size_t>(layout_.num_columns()));
      // (group, name, expected trailing shape) -> varid, with the shape checked
      const auto find = [&](int g, const std::string& name, const std::vector<std::int64_t>& shape) {
        int varid = -1, ndims = 0;
        if (nc_inq_varid(g, name.c_str(), &varid) != NC_NOERR) fail("no variable " + name);
        check(nc_inq_varndims(g, varid, &ndims));
        std::vector<int> ids(static_cast<std::size_t>(ndims));
        check(nc_inq_vardimid(g, varid, ids.data()));
        bool ok = ndims == static_cast<int>(shape.size()) + 2;
        for (std::size_t a = 0; ok && a < shape.size(); ++a) {
          std::size_t l = 0;
          check(nc_inq_dimlen(g, ids[a + 2], &l));
          ok = static_cast<std::int64_t>(l) == shape[a];
        }
        if (!ok) fail("variable " + name + " has an unexpected shape");
        // no chunk cache (1 byte; 0 means the default): memory does not grow with variables
        check(nc_set_var_chunk_cache(g, varid, 1, 1, 0.0f));
        return varid;
      };
      const auto place = [&](int g, const Variable& v) {
        const int varid = find(g, v.name, v.shape);
        std::vector<std::size_t> index(v.shape.size(), 0);
        for (int c : v.columns) {
          slots[static_cast<std::size_t>(c)] = {g, varid, index};
          for (std::size_t a = index.size(); a-- > 0;) {
            if (++index[a] < static_cast<std::size_t>(v.shape[a])) break;
            index[a] = 0;
          }
        }
      };
      for (const Variable& v : vars) place(grp[0], v);
      for (std::size_t g = 0; g < layout_.groups.size(); ++g) {
        const std::string name = (s == 1 ? "warmup_" : "") + layout_.groups[g].name;
        int id = -1;
        status = nc_inq_grp_ncid(ncid_, name.c_str(), &id);
        if (status != NC_NOERR) fail("group " + name + ": " + nc_strerror(status));
        for (const Variable& v : group_vars[g]) place(id, v);
      }
      for (int st = 0; st < layout_.num_stats(); ++st) {
        slots[static_cast<std::size_t>(layout_.num_params() + st)] = {
            grp[1], find(grp[1], layout_.stats[static_cast<std::size_t>(st)].name, {}), {}};
      }
    }
    if (slots_[0].empty()) fail("no posterior group");
    layout_.draws = available_[0];
    layout_.warmup_draws = available_[1];
  } catch (...) {
    nc_close(ncid_);
    ncid_ = -1;
    throw;
  }
}

NetcdfSource::~NetcdfSource() {
  if (ncid_ >= 0) nc_close(ncid_);
}

void NetcdfSource::fail(const std::string& what) const { throw RunError("cannot read " + path_ + ": " + what); }

void NetcdfSource::read(Section s, int column, std::int64_t p0, std::int64_t p1, double* out) const {
  read_draws(s, column, p0, p1, 0, available_[static_cast<int>(s)], out);
}

void NetcdfSource::read_draws(Section s, int column, std::int64_t p0, std::int64_t p1, std::int64_t d0, std::int64_t d1,
                              double* out) const {
  const std::int64_t available = available_[static_cast<int>(s)];
  if (column < 0 || column >= layout_.num_columns() || p0 < 0 || p1 < p0 || p1 > layout_.particles || d0 < 0 ||
      d1 < d0 || d1 > available) {
    fail("column " + std::to_string(column) + " of particles [" + std::to_string(p0) + ", " + std::to_string(p1) +
         "), draws [" + std::to_string(d0) + ", " + std::to_string(d1) + ") is not in the file");
  }
  const std::int64_t k = d1 - d0;
  if (p0 == p1 || k == 0) return;  // also a section without groups (no warmup saved)
  const Slot& slot = slots_[static_cast<int>(s)][static_cast<std::size_t>(column)];
  std::vector<std::size_t> start = {static_cast<std::size_t>(p0), static_cast<std::size_t>(d0)};
  std::vector<std::size_t> count = {static_cast<std::size_t>(p1 - p0), static_cast<std::size_t>(k)};
  start.insert(start.end(), slot.index.begin(), slot.index.end());
  count.resize(start.size(), 1);
  const int status = nc_get_vara_double(slot.group, slot.varid, start.data(), count.data(), out);
  if (status != NC_NOERR) fail(nc_strerror(status));
}

}  // namespace hmc::io
