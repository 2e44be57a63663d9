#include "hmc/io/results.hpp"

#include "hmc/core/errors.hpp"
#include "hmc/diagnostics/convergence.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <utility>

namespace hmc::io {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

/// JSON has no NaN: a statistic that cannot be computed is null.
json number(double x) { return std::isfinite(x) ? json(x) : json(nullptr); }

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

std::string temp_name(const std::string& path) {
  const fs::path p(path);
  return (p.parent_path() / ("." + p.filename().string() + ".tmp")).string();
}

void commit(const std::string& tmp, const std::string& path) {
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    throw RunError("cannot write " + path + ": " + why);
  }
}

std::unique_ptr<std::FILE, FileCloser> open_for_write(const std::string& tmp, const std::string& path) {
  std::unique_ptr<std::FILE, FileCloser> f(std::fopen(tmp.c_str(), "wb"));
  if (!f) throw RunError("cannot write " + path + ": " + std::strerror(errno));
  return f;
}

/// The error of a failed call: errno, or EIO where the call left none.
int last_error() { return errno != 0 ? errno : EIO; }

/// Closes `f` (the temporary file `tmp` of `path`); on a failure (`error`, the errno of an
/// earlier write, a stream error, or the flush at close: a full disk, a quota, an I/O
/// error) removes it and throws RunError naming `path` and the error.
void close_checked(std::unique_ptr<std::FILE, FileCloser>& f, const std::string& tmp, const std::string& path,
                   int error = 0) {
  if (error == 0 && std::ferror(f.get()) != 0) error = EIO;
  errno = 0;
  if (std::fclose(f.release()) != 0 && error == 0) error = last_error();
  if (error != 0) {
    std::remove(tmp.c_str());
    throw RunError("cannot write " + path + ": " + std::strerror(error));
  }
}

constexpr std::int64_t kRangeBytes = std::int64_t{32} << 20;  // largest read of draws at once
constexpr std::size_t kMaxField = 64;                         // room for one formatted value

/// f(p0, p1, values, count) over column `column` of all particles, in ranges of at
/// most kRangeBytes; `draws` per particle, `columns` read at once (for the range size).
template <class F>
void for_each_range(const DrawSource& source, int column, std::int64_t draws, std::int64_t columns,
                    std::vector<double>& buf, F&& f) {
  const std::int64_t particles = source.layout().particles;
  if (draws <= 0) return;
  const std::int64_t step = std::max<std::int64_t>(
      1, kRangeBytes / static_cast<std::int64_t>(sizeof(double)) / (draws * std::max<std::int64_t>(1, columns)));
  for (std::int64_t p0 = 0; p0 < particles; p0 += step) {
    const std::int64_t p1 = std::min(particles, p0 + step);
    buf.resize(static_cast<std::size_t>((p1 - p0) * draws));
    source.read(Section::kPosterior, column, p0, p1, buf.data());
    f(p0, p1, buf.data(), buf.size());
  }
}

/// A CSV field as RFC 4180 has it: quoted, with quotes doubled, when it holds a
/// comma, a double quote or a line break.
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + "\"";
}

char* put_integer(char* w, std::int64_t v) { return std::to_chars(w, w + kMaxField, v).ptr; }

/// `precision` 0: the shortest representation that reads back exactly; else that
/// many significant digits (at most 40). NaN, Inf, -Inf as R and pandas read them.
char* put_double(char* w, double v, int precision) {
  if (std::isnan(v)) return std::copy_n("NaN", 3, w);
  if (std::isinf(v)) return v > 0 ? std::copy_n("Inf", 3, w) : std::copy_n("-Inf", 4, w);
  if (precision <= 0) return std::to_chars(w, w + kMaxField, v).ptr;
  return std::to_chars(w, w + kMaxField, v, std::chars_format::general, std::min(precision, 40)).ptr;
}

/// Shortest exact representation, or nothing when not finite.
char* put_finite(char* w, double v) { return std::isfinite(v) ? std::to_chars(w, w + kMaxField, v).ptr : w; }

/// A file written through a large buffer, to a temporary name renamed into place by
/// finish(); removed, with a RunError naming `path`, on failure (or when destroyed
/// unfinished).
class CsvFile {
 public:
  explicit CsvFile(std::string path) : path_(std::move(path)), tmp_(temp_name(path_)), f_(open_for_write(tmp_, path_)) {
    buf_.resize(kBuffer);
  }
  CsvFile(const CsvFile&) = delete;
  CsvFile& operator=(const CsvFile&) = delete;
  ~CsvFile() {
    if (f_) {
      std::fclose(f_.release());
      std::remove(tmp_.c_str());
    }
  }

  /// Room for `n` more bytes; write them at the pointer returned, then commit().
  char* reserve(std::size_t n) {
    if (used_ + n > buf_.size()) {
      flush();
      if (n > buf_.size()) buf_.resize(n);
    }
    return buf_.data() + used_;
  }
  void commit(std::size_t n) { used_ += n; }
  void append(const std::string& s) {
    std::memcpy(reserve(s.size()), s.data(), s.size());
    commit(s.size());
  }

  void finish() {
    flush();
    close_checked(f_, tmp_, path_);
    hmc::io::commit(tmp_, path_);
  }

 private:
  static constexpr std::size_t kBuffer = std::size_t{4} << 20;

  void flush() {
    errno = 0;
    if (used_ > 0 && std::fwrite(buf_.data(), 1, used_, f_.get()) != used_) {
      const std::string why = std::strerror(last_error());
      std::fclose(f_.release());
      std::remove(tmp_.c_str());
      throw RunError("cannot write " + path_ + ": " + why);
    }
    used_ = 0;
  }

  std::string path_, tmp_;
  std::unique_ptr<std::FILE, FileCloser> f_;
  std::vector<char> buf_;
  std::size_t used_ = 0;
};

}  // namespace

SamplerStats sampler_stats(const DrawSource& source, const RunTotals& totals, const sampler::Settings& s, int ranks) {
  SamplerStats st;
  st.particles = source.layout().particles;
  st.ranks = ranks;
  st.warmup = s.warmup;
  st.draws = s.draws;
  st.thin = s.thin;
  st.leapfrog_steps = s.leapfrog_steps;
  st.temperature = s.temperature;
  st.seed = s.seed;
  st.grad_evals = totals.grad_evals;
  const std::int64_t kept = source.available(Section::kPosterior);
  double steps = 0.0;
  std::vector<double> buf;
  const int steps_column = source.layout().stat_column("n_steps");
  if (steps_column >= 0) {
    for_each_range(source, steps_column, kept, 1, buf, [&](std::int64_t, std::int64_t, const double* v, std::size_t n) {
      for (std::size_t i = 0; i < n; ++i) steps += v[i];
    });
  }
  const double recorded = static_cast<double>(st.particles) * static_cast<double>(kept);
  st.mean_leapfrog_steps = recorded > 0 ? steps / recorded : 0.0;
  double accept = 0.0, div = 0.0;
  for (double a : totals.accept_sum) accept += a;
  for (double d : totals.divergences) div += d;
  const double transitions = static_cast<double>(st.particles) * s.draws;
  st.acceptance_rate = transitions > 0 ? accept / transitions : 0.0;
  st.divergences = static_cast<std::int64_t>(div);
  return st;
}

void write_file_atomic(const std::string& path, const std::string& content) {
  const std::string tmp = temp_name(path);
  auto f = open_for_write(tmp, path);
  errno = 0;
  const bool ok = std::fwrite(content.data(), 1, content.size(), f.get()) == content.size();
  close_checked(f, tmp, path, ok ? 0 : last_error());
  commit(tmp, path);
}

void write_draws_csv(const std::string& path, const DrawSource& source, int precision,
                     const std::function<void(double)>& progress) {
  const StoreLayout& layout = source.layout();
  const std::int64_t particles = layout.particles, draws = source.available(Section::kPosterior);
  // Columns in file order: the statistics, then the parameters.
  std::vector<int> columns;
  std::vector<StatType> types;  // of the file's columns
  for (int st = 0; st < layout.num_stats(); ++st) {
    columns.push_back(layout.num_params() + st);
    types.push_back(layout.stats[static_cast<std::size_t>(st)].type);
  }
  for (int k = 0; k < layout.num_params(); ++k) {
    columns.push_back(k);
    types.push_back(StatType::kReal);
  }
  const std::size_t ncol = columns.size();

  std::string header = "particle,draw";
  for (const auto& st : layout.stats) header += "," + csv_field(st.name);
  for (const auto& n : layout.param_names) header += "," + csv_field(n);
  header += "\n";

  CsvFile out(path);
  out.append(header);
  const std::int64_t step =
      std::max<std::int64_t>(1, kRangeBytes / static_cast<std::int64_t>(sizeof(double)) /
                                    std::max<std::int64_t>(1, draws * static_cast<std::int64_t>(ncol)));
  const auto d = static_cast<std::size_t>(draws);
  std::vector<double> values;
  const std::size_t row_cap = (ncol + 2) * kMaxField + 1;
  for (std::int64_t p0 = 0; p0 < particles && draws > 0; p0 += step) {
    const std::int64_t p1 = std::min(particles, p0 + step);
    const std::size_t per_column = static_cast<std::size_t>(p1 - p0) * d;
    values.resize(per_column * ncol);
    for (std::size_t c = 0; c < ncol; ++c)
      source.read(Section::kPosterior, columns[c], p0, p1, values.data() + c * per_column);
    for (std::int64_t p = p0; p < p1; ++p) {
      for (std::size_t t = 0; t < d; ++t) {
        char* w = out.reserve(row_cap);
        char* const begin = w;
        w = put_integer(w, p);
        *w++ = ',';
        w = put_integer(w, static_cast<std::int64_t>(t));
        const std::size_t at = static_cast<std::size_t>(p - p0) * d + t;
        for (std::size_t c = 0; c < ncol; ++c) {
          *w++ = ',';
          const double v = values[c * per_column + at];
          if (types[c] == StatType::kInteger) {
            w = std::isfinite(v) && std::fabs(v) < 9e18 ? put_integer(w, static_cast<std::int64_t>(v))
                                                        : put_double(w, v, precision);
          } else if (types[c] == StatType::kBool) {
            *w++ = v != 0.0 ? '1' : '0';
          } else {
            w = put_double(w, v, precision);
          }
        }
        *w++ = '\n';
        out.commit(static_cast<std::size_t>(w - begin));
      }
    }
    if (progress) progress(static_cast<double>(p1) / static_cast<double>(particles));
  }
  out.finish();
}

void write_particles_csv(const std::string& path, const DrawSource& source, const RunTotals& totals, int draws) {
  const std::int64_t particles = source.layout().particles;
  const std::int64_t kept = source.available(Section::kPosterior);
  const auto d = static_cast<std::size_t>(kept);
  std::vector<double> mean_steps(static_cast<std::size_t>(particles), NAN), buf;
  const int steps_column = source.layout().stat_column("n_steps");
  if (steps_column >= 0)
    for_each_range(source, steps_column, kept, 1, buf,
                   [&](std::int64_t p0, std::int64_t p1, const double* v, std::size_t) {
                     for (std::int64_t p = p0; p < p1; ++p) {
                       const double* row = v + static_cast<std::size_t>(p - p0) * d;
                       double steps = 0.0;
                       for (std::size_t t = 0; t < d; ++t) steps += row[t];
                       mean_steps[static_cast<std::size_t>(p)] = steps / static_cast<double>(kept);
                     }
                   });
  const std::vector<double> bfmi = diagnostics::e_bfmi_per_particle(source);
  const auto at = [](const std::vector<double>& v, std::int64_t i) {
    return static_cast<std::size_t>(i) < v.size() ? v[static_cast<std::size_t>(i)] : NAN;
  };
  CsvFile out(path);
  out.append("particle,accept_rate,divergences,mean_n_leapfrog,e_bfmi\n");
  for (std::int64_t i = 0; i < particles; ++i) {
    char* w = out.reserve(5 * kMaxField);
    char* const begin = w;
    w = put_integer(w, i);
    *w++ = ',';
    w = put_finite(w, draws > 0 ? at(totals.accept_sum, i) / draws : NAN);
    *w++ = ',';
    const double div = at(totals.divergences, i);
    w = std::isfinite(div) && std::fabs(div) < 9e18 ? put_integer(w, static_cast<std::int64_t>(div)) : w;
    *w++ = ',';
    w = put_finite(w, mean_steps[static_cast<std::size_t>(i)]);
    *w++ = ',';
    w = put_finite(w, bfmi[static_cast<std::size_t>(i)]);
    *w++ = '\n';
    out.commit(static_cast<std::size_t>(w - begin));
  }
  out.finish();
}

json parameters_json(const std::vector<diagnostics::ParameterSummary>& params) {
  json p = json::object();
  for (const auto& s : params) {
    p[s.name] = {{"mean", number(s.mean)},
                 {"sd", number(s.sd)},
                 {"q5", number(s.q5)},
                 {"q50", number(s.q50)},
                 {"q95", number(s.q95)},
                 {"mcse_mean", number(s.mcse_mean)},
                 {"mcse_sd", number(s.mcse_sd)},
                 {"mcse_q5", number(s.mcse_q5)},
                 {"mcse_q95", number(s.mcse_q95)},
                 {"ess_bulk", number(s.ess_bulk)},
                 {"ess_tail", number(s.ess_tail)},
                 {"rhat", number(s.rhat)},
                 {"rhat_nested", number(s.rhat_nested)}};
  }
  // nlohmann::json sorts object keys; keep the parameters in model order as well.
  json order = json::array();
  for (const auto& s : params) order.push_back(s.name);
  json out = {{"parameters", p}, {"parameter_order", order}};
  if (!params.empty()) {
    const auto& s = params.front();
    out["diagnostics"] = {{"particles", s.particles},
                          {"particles_used", s.diagnostic_particles},
                          {"max_draws", s.max_draws > 0 ? json(s.max_draws) : json(nullptr)}};
  }
  return out;
}

std::string parameter_table(const std::vector<diagnostics::ParameterSummary>& params) {
  std::string out;
  char buf[512];
  std::size_t width = 9;
  for (const auto& s : params) width = std::max(width, s.name.size());
  std::snprintf(buf, sizeof buf, "%-*s %11s %11s %11s %11s %11s %10s %6s %8s %8s\n", static_cast<int>(width),
                "parameter", "mean", "sd", "q5", "q50", "q95", "mcse_mean", "rhat", "ess_bulk", "ess_tail");
  out += buf;
  for (const auto& s : params) {
    std::snprintf(buf, sizeof buf, "%-*s %11.5g %11.5g %11.5g %11.5g %11.5g %10.3g %6.4g %8.0f %8.0f\n",
                  static_cast<int>(width), s.name.c_str(), s.mean, s.sd, s.q5, s.q50, s.q95, s.mcse_mean, s.rhat,
                  s.ess_bulk, s.ess_tail);
    out += buf;
  }
  if (!params.empty() && params.front().diagnostic_particles < params.front().particles) {
    const auto& s = params.front();
    std::snprintf(buf, sizeof buf,
                  "(quantiles, mcse_mean, rhat and ESS from the first %lld of %lld particles: "
                  "diagnostics.max_draws %lld)\n",
                  static_cast<long long>(s.diagnostic_particles), static_cast<long long>(s.particles),
                  static_cast<long long>(s.max_draws));
    out += buf;
  }
  return out;
}

json summary_json(const std::vector<diagnostics::ParameterSummary>& params, const SamplerStats& st, const Timings& t,
                  const hmc::Adapted& adapted, const std::vector<std::string>& warnings) {
  json out = parameters_json(params);
  out["warnings"] = warnings;
  out["sampler"] = {{"particles", st.particles},
                    {"ranks", st.ranks},
                    {"warmup", st.warmup},
                    {"draws", st.draws},
                    {"thin", st.thin},
                    {"acceptance_rate", number(st.acceptance_rate)},
                    {"divergences", st.divergences},
                    {"step_size", adapted.step_size},
                    {"leapfrog_steps", st.leapfrog_steps},
                    {"mean_leapfrog_steps", number(st.mean_leapfrog_steps)},
                    {"temperature", st.temperature},
                    {"seed", st.seed}};
  out["adaptation"] = adaptation_json(adapted);
  out["timings_s"] = {
      {"total", t.total}, {"setup", t.setup}, {"sampling", t.sampling}, {"gather", t.gather}, {"write", t.write}};
  out["throughput"] = {
      {"grad_evals", st.grad_evals},
      {"grad_evals_per_s", number(t.sampling > 0 ? static_cast<double>(st.grad_evals) / t.sampling : NAN)}};
  return out;
}

json adaptation_json(const hmc::Adapted& a) {
  json metric = a.inv_metric;
  if (matrix_metric(a.metric)) {
    const auto d = static_cast<std::size_t>(std::llround(std::sqrt(static_cast<double>(a.inv_metric.size()))));
    metric = json::array();
    for (std::size_t i = 0; i < d; ++i)
      metric.push_back(std::vector<double>(a.inv_metric.begin() + i * d, a.inv_metric.begin() + (i + 1) * d));
  }
  json out = {
      {"algorithm", a.algorithm}, {"step_size", a.step_size}, {"metric", mode_name(a.metric)}, {"inv_metric", metric}};
  if (a.algorithm == "hmc") {
    out["trajectory"] = mode_name(a.trajectory);
    out["trajectory_length"] = a.trajectory_length;
    out["leapfrog_steps"] = a.leapfrog_steps;
  }
  for (const auto& [name, value] : a.values) out[name] = number(value);
  const auto& r = a.repairs;
  out["warmup_checks"] = {{"checks", r.checks},
                          {"stuck", r.stuck},
                          {"far", r.far},
                          {"restarted", r.restarted},
                          {"restarts_failed", r.failed},
                          {"skipped_checks", r.skipped_checks}};
  return out;
}

std::vector<std::string> warning_causes(const hmc::Adapted& a, const SamplerStats& st, const sampler::Settings& s,
                                        const std::vector<std::string>& warnings) {
  std::vector<std::string> out;
  bool unconverged = false, divergent = false;
  for (const auto& w : warnings) {
    unconverged = unconverged || w.rfind("R-hat", 0) == 0 || w.rfind("separated modes", 0) == 0;
    divergent = divergent || w.find("divergent transitions") != std::string::npos;
  }
  const auto& r = a.repairs;
  if (r.skipped_checks > 0) {
    out.push_back("likely cause: at " + std::to_string(r.skipped_checks) +
                  " warmup check(s) most particles were stuck or far from the rest, too many to restart "
                  "(separate modes, or a start far from the posterior): try a smaller /sampler/init/radius, "
                  "/sampler/init/strategy prior or /sampler/init/values, and a longer /sampler/warmup");
  } else if ((unconverged || divergent) && (r.restarted > 0 || r.failed > 0)) {
    out.push_back(
        "likely cause: warmup restarted " + std::to_string(r.restarted) + " particle(s) (" + std::to_string(r.stuck) +
        " found stuck, " + std::to_string(r.far) + " far from the ensemble" +
        (r.failed > 0 ? ", " + std::to_string(r.failed) + " could not move" : "") +
        "): heavy tails (a scale with a wide prior), separate modes, or a start far from the posterior; try a longer "
        "/sampler/warmup, a smaller /sampler/init/radius, or tighter priors on scales");
  }
  const bool nuts = a.algorithm == "nuts";
  const double cap = nuts ? std::ldexp(1.0, s.max_tree_depth) - 1.0 : static_cast<double>(s.adapt.max_leapfrog);
  const bool adapted_length = nuts || a.trajectory == TrajectoryKind::kChees;
  const bool long_paths = adapted_length && st.mean_leapfrog_steps >= 0.25 * cap;
  if (long_paths) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.0f", st.mean_leapfrog_steps);
    out.push_back(std::string("likely cause: trajectories of ") + buf +
                  " leapfrog steps on average, the step size being small next to the posterior's widest scale "
                  "(strong correlation, or scales far apart): try /sampler/adapt/metric dense (up to 100 "
                  "coordinates) or a reparametrisation" +
                  (nuts ? std::string() : ", or /sampler/algorithm nuts"));
  }
  return out;
}

std::string summary_table(const std::vector<diagnostics::ParameterSummary>& params, const SamplerStats& st,
                          const Timings& t, const hmc::Adapted& adapted, const std::vector<std::string>& warnings) {
  std::string out = parameter_table(params);
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "\n%lld particles on %d rank(s), %d warmup + %d draws (thin %d); step size %.4g, %s metric, %s\n"
                "acceptance rate %.3f, %lld divergent transitions after warmup\n",
                static_cast<long long>(st.particles), st.ranks, st.warmup, st.draws, st.thin, adapted.step_size,
                mode_name(adapted.metric),
                adapted.algorithm != "hmc"
                    ? (adapted.algorithm + " (mean " + std::to_string(st.mean_leapfrog_steps) + " steps)").c_str()
                : adapted.trajectory == TrajectoryKind::kChees
                    ? ("ChEES path length " + std::to_string(adapted.trajectory_length) + " (mean " +
                       std::to_string(st.mean_leapfrog_steps) + " steps)")
                          .c_str()
                    : (std::to_string(adapted.leapfrog_steps) + " leapfrog steps").c_str(),
                st.acceptance_rate, static_cast<long long>(st.divergences));
  out += buf;
  std::snprintf(buf, sizeof buf,
                "time %.3f s (setup %.3f, sampling %.3f, store %.3f, write %.3f); %.3g gradient evaluations/s\n",
                t.total, t.setup, t.sampling, t.gather, t.write,
                t.sampling > 0 ? static_cast<double>(st.grad_evals) / t.sampling : 0.0);
  out += buf;
  for (const auto& w : warnings) out += "warning: " + w + "\n";
  return out;
}

nlohmann::json loo_json(const diagnostics::LooResult& r) {
  return {{"elpd_loo", r.elpd_loo},
          {"se", r.se},
          {"p_loo", r.p_loo},
          {"n_samples", r.n_samples},
          {"n_data_points", r.n_data_points},
          {"r_eff", r.r_eff},
          {"good_k", r.good_k},
          {"pareto_k_counts", {{"good", r.k_good}, {"bad", r.k_bad}, {"very_bad", r.k_very_bad}}},
          {"arviz", r.rule == diagnostics::LooRule::kArviz1 ? "1" : "0.23"}};
}

}  // namespace hmc::io
