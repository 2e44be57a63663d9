#include "hmc/io/results.hpp"

#include "hmc/diagnostics/convergence.hpp"
#include "hmc/io/errors.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

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

void close_checked(std::unique_ptr<std::FILE, FileCloser>& f, const std::string& tmp, const std::string& path) {
  const bool bad = std::ferror(f.get()) != 0;
  const bool close_failed = std::fclose(f.release()) != 0;
  if (bad || close_failed) {
    std::remove(tmp.c_str());
    throw RunError("cannot write " + path + ": write failed (disk full?)");
  }
}

}  // namespace

SamplerStats sampler_stats(const sampler::LocalDraws& all, const sampler::Settings& s, int ranks) {
  SamplerStats st;
  st.particles = static_cast<std::int64_t>(all.accept_sum.extent(0));
  st.ranks = ranks;
  st.warmup = s.warmup;
  st.draws = s.draws;
  st.thin = s.thin;
  st.step_size = s.step_size;
  st.leapfrog_steps = s.leapfrog_steps;
  st.temperature = s.temperature;
  st.seed = s.seed;
  st.grad_evals = all.grad_evals;
  double steps = 0.0;
  for (std::size_t i = 0; i < all.n_leapfrog.extent(0); ++i)
    for (std::size_t d = 0; d < all.n_leapfrog.extent(1); ++d) steps += all.n_leapfrog(i, d);
  const double recorded = static_cast<double>(all.n_leapfrog.extent(0) * all.n_leapfrog.extent(1));
  st.mean_leapfrog_steps = recorded > 0 ? steps / recorded : 0.0;
  double accept = 0.0, div = 0.0;
  for (std::size_t i = 0; i < all.accept_sum.extent(0); ++i) {
    accept += all.accept_sum(i);
    div += all.divergences(i);
  }
  const double transitions = static_cast<double>(st.particles) * s.draws;
  st.acceptance_rate = transitions > 0 ? accept / transitions : 0.0;
  st.divergences = static_cast<std::int64_t>(div);
  return st;
}

void write_file_atomic(const std::string& path, const std::string& content) {
  const std::string tmp = temp_name(path);
  auto f = open_for_write(tmp, path);
  std::fwrite(content.data(), 1, content.size(), f.get());
  close_checked(f, tmp, path);
  commit(tmp, path);
}

void write_draws_csv(const std::string& path, const sampler::LocalDraws& all, const std::vector<std::string>& names) {
  const std::string tmp = temp_name(path);
  auto f = open_for_write(tmp, path);
  std::string header = "particle,draw,lp,accept_prob,step_size,n_leapfrog,divergent,energy";
  for (const auto& n : names) header += "," + n;
  header += "\n";
  std::fputs(header.c_str(), f.get());

  std::string line;
  char buf[64];
  const auto append = [&](double x) {
    const int len = std::snprintf(buf, sizeof buf, ",%.17g", x);
    line.append(buf, static_cast<std::size_t>(len));
  };
  const std::size_t particles = all.draws.extent(0), draws = all.draws.extent(1), params = all.draws.extent(2);
  for (std::size_t i = 0; i < particles; ++i) {
    for (std::size_t d = 0; d < draws; ++d) {
      line.clear();
      const int len = std::snprintf(buf, sizeof buf, "%zu,%zu", i, d);
      line.append(buf, static_cast<std::size_t>(len));
      append(all.lp(i, d));
      append(all.accept_prob(i, d));
      append(all.adapted.step_size);
      line += "," + std::to_string(static_cast<long long>(all.n_leapfrog(i, d)));
      line += all.divergent(i, d) != 0.0 ? ",1" : ",0";
      append(all.energy(i, d));
      for (std::size_t k = 0; k < params; ++k) append(all.draws(i, d, k));
      line += '\n';
      std::fwrite(line.data(), 1, line.size(), f.get());
    }
  }
  close_checked(f, tmp, path);
  commit(tmp, path);
}

void write_particles_csv(const std::string& path, const sampler::LocalDraws& all, int draws) {
  const std::string tmp = temp_name(path);
  auto f = open_for_write(tmp, path);
  std::fputs("particle,accept_rate,divergences,mean_n_leapfrog,e_bfmi\n", f.get());
  const std::size_t particles = all.accept_sum.extent(0), kept = all.energy.extent(1);
  for (std::size_t i = 0; i < particles; ++i) {
    double steps = 0.0;
    for (std::size_t d = 0; d < kept; ++d) steps += all.n_leapfrog(i, d);
    const double bfmi = kept >= 2 ? diagnostics::e_bfmi(all.energy.data() + i * kept, static_cast<int>(kept), 1) : NAN;
    std::fprintf(f.get(), "%zu,%.17g,%lld,%.17g,", i, draws > 0 ? all.accept_sum(i) / draws : NAN,
                 static_cast<long long>(all.divergences(i)), kept > 0 ? steps / static_cast<double>(kept) : NAN);
    if (std::isfinite(bfmi)) std::fprintf(f.get(), "%.17g", bfmi);
    std::fputc('\n', f.get());
  }
  close_checked(f, tmp, path);
  commit(tmp, path);
}

json summary_json(const std::vector<diagnostics::ParameterSummary>& params, const SamplerStats& st, const Timings& t,
                  const sampler::Adapted& adapted, const std::vector<std::string>& warnings) {
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
  return {
      {"parameters", p},
      {"parameter_order", order},
      {"warnings", warnings},
      {"sampler",
       {{"particles", st.particles},
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
        {"seed", st.seed}}},
      {"adaptation", adaptation_json(adapted)},
      {"timings_s",
       {{"total", t.total}, {"setup", t.setup}, {"sampling", t.sampling}, {"gather", t.gather}, {"write", t.write}}},
      {"throughput",
       {{"grad_evals", st.grad_evals},
        {"grad_evals_per_s", number(t.sampling > 0 ? static_cast<double>(st.grad_evals) / t.sampling : NAN)}}}};
}

json adaptation_json(const sampler::Adapted& a) {
  json metric = a.inv_metric;
  if (a.metric == "dense") {
    const auto d = static_cast<std::size_t>(std::llround(std::sqrt(static_cast<double>(a.inv_metric.size()))));
    metric = json::array();
    for (std::size_t i = 0; i < d; ++i)
      metric.push_back(std::vector<double>(a.inv_metric.begin() + i * d, a.inv_metric.begin() + (i + 1) * d));
  }
  return {{"step_size", a.step_size},
          {"metric", a.metric},
          {"inv_metric", metric},
          {"trajectory", a.trajectory},
          {"trajectory_length", a.trajectory_length},
          {"leapfrog_steps", a.leapfrog_steps}};
}

std::string summary_table(const std::vector<diagnostics::ParameterSummary>& params, const SamplerStats& st,
                          const Timings& t, const sampler::Adapted& adapted, const std::vector<std::string>& warnings) {
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
  std::snprintf(buf, sizeof buf,
                "\n%lld particles on %d rank(s), %d warmup + %d draws (thin %d); step size %.4g, %s metric, %s\n"
                "acceptance rate %.3f, %lld divergent transitions after warmup\n",
                static_cast<long long>(st.particles), st.ranks, st.warmup, st.draws, st.thin, adapted.step_size,
                adapted.metric.c_str(),
                adapted.trajectory == "chees" ? ("ChEES path length " + std::to_string(adapted.trajectory_length) +
                                                 " (mean " + std::to_string(st.mean_leapfrog_steps) + " steps)")
                                                    .c_str()
                                              : (std::to_string(adapted.leapfrog_steps) + " leapfrog steps").c_str(),
                st.acceptance_rate, static_cast<long long>(st.divergences));
  out += buf;
  std::snprintf(buf, sizeof buf,
                "time %.3f s (setup %.3f, sampling %.3f, gather %.3f, write %.3f); %.3g gradient evaluations/s\n",
                t.total, t.setup, t.sampling, t.gather, t.write,
                t.sampling > 0 ? static_cast<double>(st.grad_evals) / t.sampling : 0.0);
  out += buf;
  for (const auto& w : warnings) out += "warning: " + w + "\n";
  return out;
}

bool prepare_output_dir(const std::string& dir) {
  std::error_code ec;
  const bool existed = fs::exists(dir, ec);
  if (existed && !fs::is_directory(dir, ec)) throw RunError("output.dir " + dir + " exists and is not a directory");
  if (!existed) {
    fs::create_directories(dir, ec);
    if (ec) throw RunError("cannot create output.dir " + dir + ": " + ec.message());
  }
  // Fail now, not after sampling, if results could not be written.
  const std::string probe = (fs::path(dir) / ".hmc-write-test").string();
  std::FILE* f = std::fopen(probe.c_str(), "wb");
  if (!f) {
    const std::string why = std::strerror(errno);
    if (!existed) fs::remove(dir, ec);
    throw RunError("cannot write into output.dir " + dir + ": " + why);
  }
  std::fclose(f);
  std::remove(probe.c_str());
  return !existed;
}

}  // namespace hmc::io
