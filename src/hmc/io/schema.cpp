#include "hmc/io/schema.hpp"

#include "hmc/core/modes.hpp"

namespace hmc::io {

std::vector<KeySpec> generic_keys(const std::vector<std::string>& model_names,
                                  const std::vector<std::string>& format_names) {
  using nlohmann::json;
  std::vector<KeySpec> keys;
  auto add = [&](KeySpec k) { keys.push_back(std::move(k)); };
  add(keys::section("/model").required().doc("the model and its data"));
  add(keys::string("/model/name")
          .one_of(model_names)
          .required()
          .allowed("a name that `hmc --list-models` prints ([models.md](models.md))")
          .doc("which model to sample; it decides which model keys exist"));
  add(keys::data("/model/data")
          .allowed("a path to a JSON file holding an object, or an inline object")
          .doc("the model's data. A relative path in the config file is relative to the directory of the config file; "
               "one given with `--set` is relative to the working directory. The resolved config holds the absolute "
               "path"));
  add(keys::section("/model/priors")
          .default_(json::object())
          .allowed("the model's prior keys ([models.md](models.md))")
          .doc("prior hyper-parameters"));
  add(keys::section("/sampler").default_(json::object()).doc("HMC settings"));
  // Particle counts travel as int in the gather (MPI counts): at most 2^31 - 1.
  add(keys::integer("/sampler/particles")
          .in_range(1, 2147483647.0)
          .default_(1024)
          .doc("global number of particles (independent chains). They are split over the MPI ranks, so the result does "
               "not depend on the rank count"));
  add(keys::integer("/sampler/warmup")
          .in_range(0, 1e9)
          .default_(500)
          .doc("iterations before draws are recorded. They adapt the step size, the metric and the ChEES path length "
               "([Adaptation](#adaptation-sampleradapt)); with 0, or with adaptation off, nothing is adapted"));
  add(keys::integer("/sampler/draws").in_range(1, 1e9).default_(500).doc("iterations after warmup"));
  add(keys::integer("/sampler/thin")
          .in_range(1, 1e9)
          .default_(1)
          .doc("record every thin-th post-warmup iteration. Each particle records ceil(draws / thin) draws: "
               "post-warmup iterations 0, thin, 2·thin, ..."));
  add(keys::string("/sampler/algorithm")
          .one_of(mode_names<Algorithm>())
          .default_("nuts")
          .doc("the transition kernel. `nuts` (the default): the No-U-Turn sampler (multinomial, generalised U-turn "
               "criterion), which builds each trajectory until it turns; `/sampler/adapt/trajectory` `chees` is a "
               "config error with it. `hmc`: static HMC, its path length fixed or adapted by ChEES "
               "(`/sampler/adapt/trajectory`); a config that sets `/sampler/adapt/trajectory` or "
               "`/sampler/leapfrog_steps` and no algorithm is `hmc`. `mams`: adjusted microcanonical HMC (Robnik et "
               "al. 2025; BlackJAX's `adjusted_mclmc`): unit-speed trajectories of jittered length around an adapted "
               "decoherence length, a Metropolis test; it aims for an acceptance of 0.9 unless "
               "`/sampler/adapt/target_accept` is given (see [sampler.md](sampler.md#which-algorithm))"));
  add(keys::integer("/sampler/max_tree_depth")
          .in_range(1, 20)
          .default_(10)
          .doc("`nuts`: most doublings of a trajectory (at most 2^depth - 1 leapfrog steps); its scratch grows "
               "with it (2 · depth + 10 numbers per coordinate and particle). Not used with `hmc` or `mams`"));
  add(keys::string("/sampler/integrator")
          .one_of(mode_names<Integrator>())
          .default_("leapfrog")
          .doc("`mams`: the integrator of its isokinetic dynamics. `leapfrog` (velocity Verlet, one gradient a step; "
               "the better ESS per gradient on the workloads of docs/performance.md) or `mclachlan` (McLachlan's "
               "two-stage integrator, two gradients a step, BlackJAX's default: smaller energy errors, which pays in "
               "high dimension). Not used with `hmc` or `nuts` (leapfrog)"));
  add(keys::number("/sampler/step_size")
          .positive()
          .default_(0.1)
          .doc("leapfrog step size ε. With adaptation, only its initial value: warmup adapts it, and the adapted value "
               "is in `summary.json` (`adaptation.step_size`). Without adaptation, the step size of every transition"));
  add(keys::integer("/sampler/leapfrog_steps")
          .in_range(1, 1e6)
          .default_(10)
          .doc(
              "leapfrog steps L per transition with `/sampler/adapt/trajectory` `fixed` (the path length ε·L follows "
              "the adapted ε). With `chees`, step_size × leapfrog_steps is the path length without adaptation, and its "
              "initial value with the unit metric; an adapted metric's path length starts at one step "
              "(docs/sampler.md#trajectory-length-fixed-or-chees)"));
  add(keys::number("/sampler/temperature")
          .positive()
          .at_most(1e6)
          .default_(1.0)
          .doc("T: the positions follow p(q)^(1/T) (see [algorithm.md](algorithm.md#temperature))"));
  add(keys::section("/sampler/init").default_(json::object()).doc("initial positions"));
  add(keys::string("/sampler/init/strategy")
          .one_of(mode_names<InitStrategy>())
          .default_("uniform")
          .doc(
              "`uniform`: each coordinate uniform in (-radius, radius) on the unconstrained scale. `values`: uniform "
              "in (-radius, radius) around `/sampler/init/values`. `prior`: an independent draw from the model's prior "
              "per particle (`coin_toss`, `linear_acceleration`, `eight_schools`; a config error for other models)"));
  add(keys::number("/sampler/init/radius").positive().default_(2.0).doc("half-width r of the uniform initialisation"));
  add(keys::numbers("/sampler/init/values")
          .allowed("one number per unconstrained coordinate of the model")
          .doc("the centre of the initialisation for strategy `values`, on the **unconstrained** scale (e.g. the logit "
               "of a probability). Required with `values`, an error with `uniform`"));
  add(keys::section("/sampler/adapt").default_(json::object()).doc("warmup adaptation"));
  add(keys::boolean("/sampler/adapt/enabled")
          .default_(true)
          .doc("adapt step size, metric and path length during warmup. `false` (or `/sampler/warmup` 0): every "
               "transition uses `/sampler/step_size`, the unit metric and `/sampler/leapfrog_steps` (with `chees`: "
               "jittered steps around the path length step_size × leapfrog_steps)"));
  add(keys::number("/sampler/adapt/target_accept")
          .positive()
          .at_most(1.0)
          .default_(0.8)
          .doc(
              "the ensemble-mean Metropolis acceptance probability that dual averaging aims for (Stan's "
              "`adapt_delta`). Higher values give a smaller step size and fewer divergences. With `/sampler/algorithm` "
              "`mams` the default is 0.9"));
  add(keys::string("/sampler/adapt/metric")
          .one_of(mode_names<MetricKind>())
          .default_("diag")
          .doc("the metric Σ (inverse mass matrix). `unit`: the identity, not adapted. `diag`: the variances of the "
               "draws of all particles in a window. `dense`: the covariance of the particles' positions at 16 "
               "iterations spread over a window; only for models with at most 100 unconstrained coordinates (a config "
               "error otherwise). `fisher_diag`: sqrt(Var q / Var ∇ log p) per coordinate from the draws and gradients "
               "of a window (as nutpie). `low_rank`: that diagonal plus the directions in which the particles' "
               "positions and gradients at those 16 iterations say it is wrong (`/sampler/adapt/rank` of them), "
               "applied as a d×d matrix, so up to 100 coordinates as `dense`. With warmup < 20 there is no window and "
               "the metric stays the identity"));
  add(keys::integer("/sampler/adapt/rank")
          .in_range(0, 100)
          .default_(0)
          .doc("`low_rank`: most directions kept beside the diagonal. 0: every direction whose scale the estimate "
               "puts at more than twice or less than half the diagonal's"));
  add(keys::string("/sampler/adapt/trajectory")
          .one_of(mode_names<TrajectoryKind>())
          .default_("chees")
          .doc("`fixed`: `/sampler/leapfrog_steps` steps per transition. `chees`: the path length is adapted by ChEES "
               "(Hoffman, Radul & Sountsov 2021), and each transition, during warmup and after, takes ceil(u · length "
               "/ ε) steps, u uniform in (0, 1]"));
  add(keys::integer("/sampler/adapt/max_leapfrog")
          .in_range(1, 1e6)
          .default_(1000)
          .doc("`chees`: most steps of one trajectory; during warmup the length is also kept within [ε, ε · "
               "max_leapfrog]. Not used with `fixed`"));
  add(keys::boolean("/sampler/adapt/restarts")
          .default_(true)
          .doc("restart, at warmup's checks (every 25 iterations and each metric window's end), the particles whose "
               "acceptance stays near 0 or that sit far outside the ensemble, from a normal fitted to the others "
               "(at the last check kept only inside the check's fences, else a copy of one of them: docs/sampler.md, "
               "robust warmup); never after warmup. `false`: such particles are still left out of the ensemble "
               "statistics, but stay where they are"));
  add(keys::integer("/sampler/adapt/init_buffer")
          .in_range(0, 1e9)
          .default_(75)
          .doc("warmup iterations before the first metric window, which adapt the step size (and ChEES length) only"));
  add(keys::integer("/sampler/adapt/term_buffer")
          .in_range(0, 1e9)
          .default_(50)
          .doc("the last warmup iterations, after the last metric window: step size (and ChEES length) only. The final "
               "step size is the dual-averaging average over them"));
  add(keys::integer("/sampler/adapt/base_window")
          .in_range(1, 1e9)
          .default_(25)
          .doc("length of the first metric window. Each next window is twice as long; a window whose successor would "
               "end past warmup - term_buffer is stretched to end there"));
  add(keys::integer("/seed")
          .non_negative()
          .default_(1)
          .allowed("0 to 18446744073709551615 (2^64 - 1)")
          .doc("the 64-bit seed. With the same build, draws depend only on the seed and the settings, not on the "
               "number of ranks or threads"));
  add(keys::section("/diagnostics").default_(json::object()).doc("convergence diagnostics"));
  add(keys::integer("/diagnostics/superchains")
          .in_range(0, 2147483647.0)
          .default_(0)
          .allowed("0, or 2 to 2,147,483,647 dividing `/sampler/particles`")
          .doc("number K of superchains for nested R-hat (`rhat_nested` in `summary.json`): superchain k holds the "
               "particles/K consecutive particles from k · particles/K on. `0`: the largest divisor of particles that "
               "is at most min(64, particles / 2); when there is none (a prime number of particles, or fewer than 4), "
               "`rhat_nested` is null"));
  add(keys::integer("/diagnostics/max_draws")
          .in_range(1000, 1e12)
          .default_(8388608)
          .doc("draws per parameter that the rank-based diagnostics (R-hat, ESS, MCSE, quantiles) read into memory at "
               "once (about 48 bytes each). With more recorded draws than that (particles × ceil(draws / thin)), they "
               "use the first floor(max_draws / kept draws) particles; means and sds always use all particles "
               "([output.md](output.md#which-draws-the-diagnostics-use))"));
  add(keys::section("/output").default_(json::object()).doc("where results go"));
  add(keys::string("/output/dir")
          .default_("output")
          .allowed("a directory path")
          .doc("output directory OUT, relative to the working directory (not to the config file). The run works in "
               "`OUT.partial` next to it and renames that to OUT when every file is written; where OUT exists empty "
               "(or is a mount point) it works in `OUT/.hmc.partial` and renames each file into OUT. An existing "
               "non-empty OUT, or a stopped run waiting, is refused (exit code 2) unless `--overwrite` is given "
               "([output.md](output.md#staging-and-publishing))"));
  add(keys::strings("/output/formats")
          .one_of(format_names)
          .alias("both", {"netcdf", "csv"})
          .default_(json::array({"netcdf"}))
          .doc("the files the draws are written to, in this order: `netcdf` is `draws.nc` (ArviZ InferenceData, "
               "netCDF-4), `csv` is `draws.csv` ([output.md](output.md#drawsnc)). One format may be given as a string; "
               "`\"both\"` means `[\"netcdf\", \"csv\"]`"));
  add(keys::boolean("/output/save_warmup")
          .default_(false)
          .doc("also keep every thin-th warmup draw, in the groups `warmup_posterior` and `warmup_sample_stats` of "
               "`draws.nc` (never in `draws.csv`)"));
  add(keys::boolean("/output/log_likelihood")
          .default_(false)
          .doc("record the model's pointwise log-likelihood with every draw, in the group `log_likelihood` of "
               "`draws.nc` (with `observed_data`), for `arviz.loo`, `arviz.compare` and the PSIS-LOO of `hmc summary`; "
               "for models with a log_likelihood member (a config error names a model without one). It adds one value "
               "per observation per draw: the memory and disk checks count it "
               "([output.md](output.md#log-likelihood-and-loo))"));
  add(keys::boolean("/output/posterior_predictive")
          .default_(false)
          .doc(
              "record a posterior predictive draw of the observations with every draw, in the group "
              "`posterior_predictive` of `draws.nc` (with `observed_data`), for `arviz.plot_ppc`; for models with a "
              "posterior_predictive member. Its random numbers are keyed by the seed, the particle, the draw and a use "
              "of their own: the same on any number of ranks and threads, and in `hmc generate` "
              "([output.md](output.md#posterior-predictive-and-generated-quantities))"));
  add(keys::boolean("/output/generated_quantities")
          .default_(false)
          .doc("record the model's generated quantities (derived values, possibly random) with every draw, in the "
               "group `generated_quantities` of `draws.nc`; for models with the member "
               "([output.md](output.md#posterior-predictive-and-generated-quantities))"));
  add(keys::integer("/output/flush_every")
          .in_range(0, 1e9)
          .default_(0)
          .doc("B: recorded draws per particle held on the device before a block is gathered to rank 0 and appended to "
               "the store. `0`: as many as make a gathered block of about 32 MiB. Memory is bounded by one block, not "
               "by the run ([output.md](output.md#memory-streaming-draws-to-disk))"));
  add(keys::integer("/output/checkpoint_every")
          .in_range(0, 1e9)
          .default_(100)
          .doc("write a checkpoint every N iterations (warmup included). Checkpoints are also written after every "
               "block of draws, at the end of sampling and on SIGTERM/SIGINT/SIGUSR1. `0`: only on those occasions "
               "([output.md](output.md#checkpoints-and-resume))"));
  add(keys::integer("/output/precision")
          .in_range(0, 17)
          .default_(0)
          .doc("significant digits of the floating-point values in `draws.csv`. `0`: the shortest text that reads back "
               "as the same double (nothing is lost)"));
  add(keys::integer("/output/compression")
          .in_range(0, 9)
          .default_(1)
          .doc("deflate level of the compressible variables of `draws.nc` (`0`: none); netCDF readers decompress "
               "transparently"));
  add(keys::section("/log").default_(json::object()).doc("messages"));
  add(keys::string("/log/level")
          .one_of({"trace", "debug", "info", "warn", "error", "off"})
          .default_("info")
          .doc("level of the log on rank 0 (stderr). The other ranks print errors only. Progress lines are at `info`"));
  add(keys::integer("/log/progress_every")
          .in_range(0, 1e9)
          .default_(0)
          .doc("print a progress line every N iterations (warmup included) and at the last one. `0`: every max(1, "
               "floor((warmup + draws) / 10)) iterations, about ten lines per run"));
  add(keys::section("/run").default_(json::object()).doc("fault handling of the job"));
  // Ten minutes: far above one iteration (or building the model) of any run that fits a
  // node, and short against a batch job's hours, so a hung rank stops the job, not its time.
  add(keys::number("/run/rank_timeout_s")
          .in_range(0.0, 1e9)
          .default_(600.0)
          .doc("the rank watchdog, under MPI: a rank whose process stops responding (SIGSTOP, a dead node, a lost "
               "network), or whose main thread computes this many seconds without reaching its next MPI call, ends "
               "every rank with exit code 4 and one line naming it, e.g. `hmc: run error: rank 1 made no progress for "
               "600 s (/run/rank_timeout_s): its process does not respond (stopped, killed or unreachable); stopping "
               "all ranks`. Waiting inside MPI for the other ranks is no fault, nor is rank 0 working alone (reading a "
               "checkpoint, writing blocks, checkpoints and the results) while the others wait. `0`: no watchdog. One "
               "rank: no effect. Not part of a checkpoint's fingerprint"));
  return keys;
}

}  // namespace hmc::io
