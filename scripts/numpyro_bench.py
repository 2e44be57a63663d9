#!/usr/bin/env python3
"""NumPyro on the project's four standard workloads (docs/performance.md).

Provenance: started from the project's shared anchor script (shared bench/numpyro_bench.py) of
../shared (BENCHMARKS.md, 2026-11-30), which measured the "NumPyro" columns there. The
models, step sizes and path lengths are that script's; this copy adds NUTS with
adaptation for ESS/s and a worker mode that scripts/bench drives, so that NumPyro and hmc
runs can alternate in one sitting with NumPyro's compilation paid once.

Throughput: HMC with a fixed step size and path length (no adaptation), chains
vectorised on one device, float64, so the work per gradient matches hmc's double
ensemble: chains * draws * leapfrog_steps / seconds (one gradient per leapfrog step).
Each shape is run once untimed first (tracing and compilation); later runs are timed.

In the worker mode the throughput loop is NumPyro's HMC kernel (numpyro.infer.hmc.hmc)
vmapped over the chains inside one jitted fori_loop, compiled once, then timed: MCMC.run
compiles again on every call, so timing its second call (as the anchor grid below does)
counts the compilation too.

ESS/s: what a NumPyro user gets by default, NUTS with its default adaptation, 4 chains,
500 warmup + 1,000 draws, the chains one after the other (what NumPyro's default
chain_method "parallel" falls back to on one CPU device); the minimum over parameters of
ArviZ's bulk ESS of the constrained draws, divided by the wall time of warmup + sampling,
compilation excluded (a compiled scan of NUTS' sample kernel, warmed up once). The ESS
runs have one workload more than the throughput ones: hmm_gaussian, the 2-state HMM with
Gaussian emissions of configs/hmm_gaussian.json (data configs/data/hmm_gaussian.json).

usage:
  numpyro_bench.py DATA_DIR OUT.json [cpu|gpu] [quick]     the anchor grid, as the shared script
  numpyro_bench.py --serve DATA_DIR [cpu|gpu]              worker: one JSON request per stdin line,
      {"op": "throughput", "workload": W, "chains": N, "draws": D}
      {"op": "ess", "workload": W, "chains": C, "warmup": A, "draws": D, "seed": S}
          (W: a throughput workload or hmm_gaussian)
      {"op": "versions"}
    one JSON answer per stdout line (an "error" member when the run failed).
"""
import json, os, sys, time

serve = len(sys.argv) > 1 and sys.argv[1] == "--serve"
args = sys.argv[2:] if serve else sys.argv[1:]
if serve:
    platform = args[1] if len(args) > 1 else "cpu"
else:
    platform = args[2] if len(args) > 2 else "gpu"
os.environ.setdefault("JAX_PLATFORMS", "cuda" if platform == "gpu" else "cpu")
import jax, jax.numpy as jnp
from jax.scipy.special import logsumexp
jax.config.update("jax_enable_x64", True)
# HMC_JAX_CACHE=DIR: JAX's persistent compilation cache, so that a later run loads the
# compiled loops instead of compiling them again (the CI's smoke test). Compilation is
# never part of a timing, so the figures do not change with it.
if os.environ.get("HMC_JAX_CACHE"):
    jax.config.update("jax_compilation_cache_dir", os.environ["HMC_JAX_CACHE"])
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
import numpyro, numpyro.distributions as dist
from numpyro.infer import MCMC, HMC, NUTS

data_dir = args[0]


from numpyro_models import coin_toss, harmonic, linear_accel, hmm  # noqa: E402 (after JAX_PLATFORMS)


def hmm_gaussian(y, K, mu_loc, mu_scale, sigma_scale):
    """hmc's hmm model with emission "gaussian" (models/hmm.hpp): Dirichlet(1) transition rows,
    ordered state means mu[1] < ... < mu[K] with independent Normal(mu_loc_k, mu_scale_k) priors
    on the ordered values, a common sigma ~ HalfNormal(sigma_scale), uniform initial distribution;
    the state paths summed out by the forward algorithm (in log space here)."""
    trans = numpyro.sample("transition", dist.Dirichlet(jnp.ones((K, K))))
    mu = numpyro.sample("mu", dist.ImproperUniform(dist.constraints.ordered_vector, (), (K,)))
    numpyro.factor("mu_prior", jnp.sum(dist.Normal(mu_loc, mu_scale).log_prob(mu)))
    sigma = numpyro.sample("sigma", dist.HalfNormal(sigma_scale))
    le = dist.Normal(mu, sigma).log_prob(y[:, None])  # (T, K)
    lt = jnp.log(trans)

    def step(alpha, le_t):
        return logsumexp(alpha[:, None] + lt, axis=0) + le_t, None

    alpha, _ = jax.lax.scan(step, le[0] - jnp.log(K), le[1:])
    numpyro.factor("forward", logsumexp(alpha))


def load(name):
    with open(os.path.join(data_dir, name)) as f:
        return json.load(f)


def workloads():
    coin = load("coin_toss.json")
    lm = load("linear_motion.json")
    hw = load("hmm_words_k3_v10_t2000.json")
    D = 100
    return {
        "coin_toss": (coin_toss, dict(c1=jnp.array(coin["c1"]), c2=jnp.array(coin["c2"])), 0.05, 20),
        "harmonic_d100": (harmonic, dict(k=jnp.arange(1.0, D + 1.0)), 0.05, 20),
        "linear_accel": (linear_accel, dict(t=jnp.array(lm["t"]), z=jnp.array(lm["z"]), sigma=float(lm["sigmaObs"])), 0.001, 20),
        "hmm_k3_t2000": (hmm, dict(words=jnp.array(hw["words"]), K=3, V=10), 0.01, 10),
    }


def ess_workloads():
    """The workloads of the ESS runs: the throughput ones and hmm_gaussian (its priors those of
    configs/hmm_gaussian.json: K = 2, mu_loc (0, 0), mu_scale (5, 5), sigma_scale 2), whose data
    is read only when it is asked for (the anchor grid's data folder need not have it)."""
    w = {k: (v[0], v[1]) for k, v in workloads().items()}

    def gaussian():
        y = jnp.array(load("hmm_gaussian.json")["y"])
        return hmm_gaussian, dict(y=y, K=2, mu_loc=jnp.array([0.0, 0.0]), mu_scale=jnp.array([5.0, 5.0]),
                                  sigma_scale=2.0)

    w["hmm_gaussian"] = gaussian
    return w


def run(model, kwargs, eps, L, chains, draws):
    kernel = HMC(model, step_size=eps, trajectory_length=eps * L,
                 adapt_step_size=False, adapt_mass_matrix=False)
    mcmc = MCMC(kernel, num_warmup=0, num_samples=draws, num_chains=chains,
                chain_method="vectorized", progress_bar=False)
    times = []
    for rep in range(2):
        t0 = time.perf_counter()
        mcmc.run(jax.random.PRNGKey(rep), **kwargs)
        jax.block_until_ready(mcmc.get_samples())
        times.append(time.perf_counter() - t0)
    return times


def versions():
    return {"platform": platform, "device": str(jax.devices()[0]), "jax": jax.__version__,
            "numpyro": numpyro.__version__}


def anchor_grid(out_path, quick):
    results = dict(versions(), runs=[])
    grid = {
        "coin_toss": [(1024, 200), (65536, 50)],
        "harmonic_d100": [(1024, 100), (65536, 20)],
        "linear_accel": [(1024, 100), (65536, 20)],
        "hmm_k3_t2000": [(1024, 5), (8192, 5)],
    }
    if platform == "cpu":
        grid = {k: [(min(n, 1024), max(2, d // 10)) for n, d in v[:1]] for k, v in grid.items()}
    if quick:
        grid = {k: [(64, 2)] for k in grid}
    for name, (model, kwargs, eps, L) in workloads().items():
        for chains, draws in grid[name]:
            try:
                t_first, t_second = run(model, kwargs, eps, L, chains, draws)
                grads = chains * draws * L
                rec = dict(workload=name, chains=chains, draws=draws, leapfrog_steps=L,
                           step_size=eps, first_run_s=t_first, timed_run_s=t_second,
                           grad_evals=grads, grad_evals_per_s=grads / t_second)
            except Exception as e:  # keep going: one failure must not lose the others
                rec = dict(workload=name, chains=chains, error=repr(e)[:500])
            results["runs"].append(rec)
            print(json.dumps(rec), flush=True)
            with open(out_path, "w") as f:
                json.dump(results, f, indent=1)


class Worker:
    """NumPyro's own HMC and NUTS kernels (numpyro.infer.hmc.hmc), driven by a jitted loop.

    MCMC.run traces and compiles its sampling loop again on every call (about 4 s here
    for coin_toss whatever the number of draws), so a "second run" through MCMC still pays
    for compilation. The worker compiles the loop once per shape (the untimed first call)
    and times later calls of the same compiled function: the kernel's steady state, which
    is what hmc's timings_s.sampling measures for hmc.
    """

    def __init__(self):
        from numpyro.infer.hmc import hmc as hmc_kernel
        from numpyro.infer.util import initialize_model
        self.hmc_kernel, self.initialize_model = hmc_kernel, initialize_model
        self.workloads = workloads()
        self.ess_workloads = ess_workloads()
        self.cache = {}
        self.calls = 0

    def _init(self, workload, chains, seed, ess=False):
        if ess:
            spec = self.ess_workloads[workload]
            if callable(spec):
                spec = self.ess_workloads[workload] = spec()
            model, kwargs = spec
        else:
            model, kwargs, _, _ = self.workloads[workload]
        keys = jax.random.split(jax.random.PRNGKey(seed), chains)
        info, potential_fn, postprocess_fn, _ = self.initialize_model(keys, model, model_kwargs=kwargs,
                                                                      dynamic_args=False)
        return info.z, potential_fn, keys, postprocess_fn

    def throughput(self, workload, chains, draws):
        _, _, eps, L = self.workloads[workload]
        key = ("throughput", workload, chains, draws)
        first = None
        self.calls += 1
        if key not in self.cache:
            t0 = time.perf_counter()
            z, potential_fn, keys, _ = self._init(workload, chains, 0)
            init_kernel, sample_kernel = self.hmc_kernel(potential_fn, algo="HMC")
            state = jax.vmap(lambda z, k: init_kernel(z, num_warmup=0, step_size=eps, trajectory_length=eps * L,
                                                      adapt_step_size=False, adapt_mass_matrix=False,
                                                      rng_key=k))(z, keys)
            loop = jax.jit(lambda s: jax.lax.fori_loop(0, draws, lambda i, s: jax.vmap(sample_kernel)(s), s))
            state = jax.block_until_ready(loop(state))
            first = time.perf_counter() - t0
            self.cache[key] = [loop, state]
        loop, state = self.cache[key]
        t0 = time.perf_counter()
        state = jax.block_until_ready(loop(state))  # continues the chains where the last call left them
        seconds = time.perf_counter() - t0
        self.cache[key][1] = state
        steps = int(jnp.sum(state.num_steps)) // chains
        grads = chains * draws * L
        return dict(workload=workload, chains=chains, draws=draws, leapfrog_steps=L, step_size=eps,
                    compile_and_first_run_s=first, seconds=seconds, grad_evals=grads,
                    grad_evals_per_s=grads / seconds, accept_prob=float(jnp.mean(state.accept_prob)),
                    num_steps_last=steps)

    def ess(self, workload, chains, warmup, draws, seed):
        import arviz as az
        import numpy as np
        key = ("ess", workload, warmup, draws)
        if workload not in self.ess_workloads:
            raise ValueError(f"unknown workload {workload!r} (known: {', '.join(self.ess_workloads)})")
        z, potential_fn, keys, postprocess_fn = self._init(workload, chains, seed, ess=True)
        if key not in self.cache:
            self.cache[key + ("kernel",)] = self.hmc_kernel(potential_fn, algo="NUTS")
        init_kernel, sample_kernel = self.cache[key + ("kernel",)]
        # NUTS' defaults, as NUTS(model) in MCMC: step size 1 adapted to 0.8 acceptance, diagonal mass
        # matrix adapted in windows, tree depth 10, init_to_uniform. The adaptation schedule is set by
        # init_kernel (the same warmup for every chain).
        states = [init_kernel(jax.tree_util.tree_map(lambda x: x[c], z), num_warmup=warmup, rng_key=keys[c])
                  for c in range(chains)]

        def chain(state):
            def body(s, _):
                s = sample_kernel(s)
                return s, (s.z, s.num_steps, s.diverging)
            return jax.lax.scan(body, state, None, length=warmup + draws)[1]

        first = None
        if key not in self.cache:
            t0 = time.perf_counter()
            self.cache[key] = jax.jit(chain)
            jax.block_until_ready(self.cache[key](states[0]))
            first = time.perf_counter() - t0
        run = self.cache[key]
        t0 = time.perf_counter()
        outs = [jax.block_until_ready(run(s)) for s in states]  # the chains one after the other
        seconds = time.perf_counter() - t0
        # The constrained draws (postprocess_fn: the transforms of the sample sites), as hmc's
        # summary.json has them: for most sites each constrained coordinate is a monotone map of one
        # unconstrained coordinate (the same ranks, so the same bulk ESS), but an ordered vector's
        # later entries are not (mu[2] = mu[1] + exp(x[1]) of the HMM).
        constrain = jax.jit(jax.vmap(postprocess_fn))
        cons = [constrain(jax.tree_util.tree_map(lambda x: x[warmup:], o[0])) for o in outs]
        post = {name: np.stack([np.asarray(c[name]) for c in cons]) for name in cons[0]}
        ess = az.ess(az.convert_to_dataset(post), method="bulk")
        per = {name: float(np.min(ess[name].values)) for name in ess.data_vars}
        ess_min = min(per.values())
        steps = np.stack([np.asarray(o[1])[warmup:] for o in outs])
        div = int(np.sum(np.stack([np.asarray(o[2])[warmup:] for o in outs])))
        # One gradient per leapfrog step, warmup included, plus one at each chain's start.
        grads = int(sum(np.sum(np.asarray(o[1])) for o in outs)) + chains
        return dict(workload=workload, chains=chains, warmup=warmup, draws=draws, compile_and_first_run_s=first,
                    seconds=seconds, ess_bulk_min=ess_min, ess_bulk_min_by_param=per,
                    ess_per_s=ess_min / seconds, mean_leapfrog_steps=float(steps.mean()), divergences=div,
                    grad_evals=grads, ess_per_1k_grads=1000.0 * ess_min / grads)


def serve_loop():
    worker = Worker()
    out = sys.stdout
    sys.stdout = sys.stderr  # whatever NumPyro or JAX print must not mix with the answers
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            req = json.loads(line)
            op = req.pop("op")
            if op == "versions":
                ans = versions()
            elif op == "throughput":
                ans = worker.throughput(**req)
            elif op == "ess":
                ans = worker.ess(**req)
            else:
                raise ValueError(f"unknown op {op!r}")
        except Exception as e:  # answer, and keep serving: one failure must not lose the others
            ans = dict(error=repr(e)[:500])
        out.write(json.dumps(ans) + "\n")
        out.flush()


if __name__ == "__main__":
    if serve:
        serve_loop()
    else:
        anchor_grid(args[1], len(args) > 3 and args[3] == "quick")
