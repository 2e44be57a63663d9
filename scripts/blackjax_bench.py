#!/usr/bin/env python3
"""BlackJAX ChEES-HMC on coin_toss and linear_accel: the peer of hmc's default sampler.

Provenance: adapted from the project's shared script (shared bench/blackjax_chees.py), which
measured the BlackJAX row of the project's benchmark notes (2026-12-02): the same models
(sufficient statistics for linear_accel, as hmc's model), initial positions, Adam learning
rate and diagonal metric (chees_adaptation's mass_matrix_estimation="diagonal"). This copy
adds a worker mode that scripts/bench drives (its "chees" section), so that BlackJAX and hmc
runs alternate in one sitting, and compiles each shape ahead of time instead of timing a
second call.

What is timed: one call of a jitted function that runs BlackJAX's ChEES warmup
(blackjax.chees_adaptation, its Adam optimiser from optax) and then the sampling iterations
of blackjax.dynamic_hmc with the adapted step size, path length and diagonal inverse mass
matrix, all chains vmapped on one device, float64: warmup + sampling, as hmc's
timings_s.sampling. The function is lowered and compiled before the clock starts
(jax.jit(f).lower(key).compile()), so no tracing or compilation is counted and nothing runs
twice. ESS: the minimum over parameters of ArviZ's bulk ESS over all chains of the recorded
(thinned) constrained draws. Gradient evaluations: the leapfrog steps (one gradient each) of
every chain in warmup and sampling, plus one initial gradient per chain.

Warmup, iterations, thin and the initial step size come with each request (scripts/bench
reads them from hmc's configs/coin_toss.json and configs/linear_acceleration.json); the
initial positions are hmc's for those configs: coin_toss uniform in (-2, 2) on the logit
scale, linear_accel uniform in (-0.2, 0.2) around (-0.44, 0.95, -4.9) unconstrained.

usage:
  blackjax_bench.py --serve DATA_DIR [cpu|gpu]   worker: one JSON request per stdin line,
      {"op": "chees", "workload": W, "chains": N, "warmup": A, "iterations": D, "thin": T,
       "step_size": E, "seed": S}                 (optional "lr": Adam's learning rate, 0.05)
      {"op": "versions"}
    one JSON answer per stdout line (an "error" member when the run failed).
  blackjax_bench.py DATA_DIR WORKLOAD [--chains N] [--warmup A] [--iterations D] [--thin T]
      [--step-size E] [--seed S] [--lr LR] [cpu|gpu]
    one run, its JSON answer printed (the defaults: hmc's shipped config of WORKLOAD, 1,024 chains).
"""
import json, math, os, sys, time

serve = len(sys.argv) > 1 and sys.argv[1] == "--serve"
platform = "gpu" if "gpu" in sys.argv[2:] else "cpu"
os.environ.setdefault("JAX_PLATFORMS", "cuda" if platform == "gpu" else "cpu")
import jax, jax.numpy as jnp
import numpy as np
jax.config.update("jax_enable_x64", True)
# HMC_JAX_CACHE=DIR: JAX's persistent compilation cache (as in scripts/numpyro_bench.py): a
# later run loads the compiled functions instead of compiling them again. Compilation is never
# part of a timing, so the figures do not change with it.
if os.environ.get("HMC_JAX_CACHE"):
    jax.config.update("jax_compilation_cache_dir", os.environ["HMC_JAX_CACHE"])
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
import optax, blackjax

# hmc's shipped settings of each workload (configs/coin_toss.json, configs/linear_acceleration.json),
# the defaults of the one-run command line.
SHIPPED = {"coin_toss": dict(warmup=200, iterations=1000, thin=5, step_size=0.5),
           "linear_accel": dict(warmup=300, iterations=500, thin=1, step_size=0.001)}
LR = 0.05


def load(data_dir, name):
    with open(os.path.join(data_dir, name)) as f:
        return json.load(f)


def coin_toss(data_dir):
    """Two coins, Uniform(0, 1) = Beta(1, 1) priors (configs/coin_toss.json), on the logit scale:
    log p(θ) = Σ (heads + 1) log σ(θ) + (tails + 1) log σ(-θ), the log-Jacobian log p(1 - p) included."""
    d = load(data_dir, "coin_toss.json")
    heads = jnp.array([sum(d["c1"]), sum(d["c2"])], dtype=jnp.float64)
    tails = jnp.array([len(d["c1"]) - sum(d["c1"]), len(d["c2"]) - sum(d["c2"])], dtype=jnp.float64)

    def logdensity(theta):
        return jnp.sum((heads + 1.0) * jax.nn.log_sigmoid(theta) + (tails + 1.0) * jax.nn.log_sigmoid(-theta))

    def constrain(th):
        return {"p[1]": jax.nn.sigmoid(th[..., 0]), "p[2]": jax.nn.sigmoid(th[..., 1])}

    def init(key, n):
        return jax.random.uniform(key, (n, 2), minval=-2.0, maxval=2.0, dtype=jnp.float64)

    return logdensity, constrain, init


def linear_accel(data_dir):
    """z = h + v0·t + g·t² + N(0, 3²), t from its first value; h ~ U(70, 150), v0 ~ U(20, 100),
    g ~ N(-6, 2) (configs/linear_acceleration.json); h and v0 through scaled logistic transforms.
    The likelihood from the sufficient statistics X'X, X'z and z'z, as hmc's model."""
    d = load(data_dir, "linear_motion.json")
    t = np.asarray(d["t"], dtype=np.float64)
    t = t - t[0]
    z = np.asarray(d["z"], dtype=np.float64)
    sigma, mu_g, s_g = 3.0, -6.0, 2.0
    H_LO, H_HI, V_LO, V_HI = 70.0, 150.0, 20.0, 100.0
    X = np.stack([np.ones_like(t), t, t * t], axis=1)
    XtX, Xtz, ztz = jnp.asarray(X.T @ X), jnp.asarray(X.T @ z), float(z @ z)

    def unpack(u):
        h = H_LO + (H_HI - H_LO) * jax.nn.sigmoid(u[..., 0])
        v0 = V_LO + (V_HI - V_LO) * jax.nn.sigmoid(u[..., 1])
        return h, v0, u[..., 2]

    def logdensity(u):
        h, v0, g = unpack(u)
        b = jnp.stack([h, v0, g])
        sse = ztz - 2.0 * b @ Xtz + b @ XtX @ b
        lj = (jax.nn.log_sigmoid(u[0]) + jax.nn.log_sigmoid(-u[0])
              + jax.nn.log_sigmoid(u[1]) + jax.nn.log_sigmoid(-u[1]))
        return -0.5 * sse / sigma**2 - 0.5 * ((g - mu_g) / s_g) ** 2 + lj

    def constrain(u):
        h, v0, g = unpack(u)
        return {"h": h, "v0": v0, "g": g}

    centre = jnp.array([-0.44, 0.95, -4.9])

    def init(key, n):
        return centre + jax.random.uniform(key, (n, 3), minval=-0.2, maxval=0.2, dtype=jnp.float64)

    return logdensity, constrain, init


MODELS = {"coin_toss": coin_toss, "linear_accel": linear_accel}


def versions():
    import arviz as az
    return {"platform": platform, "device": str(jax.devices()[0]), "jax": jax.__version__,
            "blackjax": blackjax.__version__, "optax": optax.__version__, "arviz": az.__version__}


class Worker:
    def __init__(self, data_dir):
        self.data_dir = data_dir
        self.models = {}
        self.cache = {}

    def _build(self, workload, chains, warmup, iterations, thin, step_size, lr):
        if workload not in MODELS:
            raise ValueError(f"unknown workload {workload!r} (known: {', '.join(MODELS)})")
        if workload not in self.models:
            self.models[workload] = MODELS[workload](self.data_dir)
        logdensity, _, init = self.models[workload]

        def run(key):
            k_init, k_warm, k_samp = jax.random.split(key, 3)
            warm = blackjax.chees_adaptation(logdensity, chains, mass_matrix_estimation="diagonal")
            (state, params), winfo = warm.run(k_warm, init(k_init, chains), step_size=step_size,
                                              optim=optax.adam(lr), num_steps=warmup,
                                              max_sampling_steps=iterations)
            kernel = blackjax.dynamic_hmc(logdensity, **params).step

            def one(st, k):
                st, info = jax.vmap(kernel)(jax.random.split(k, chains), st)
                return st, (st.position, info.num_integration_steps, info.acceptance_rate, info.is_divergent)

            _, (draws, nsteps, acc, div) = jax.lax.scan(one, state, jax.random.split(k_samp, iterations))
            return dict(draws=draws[::thin], sampling_steps=jnp.sum(nsteps),
                        warmup_steps=jnp.sum(winfo.info.num_integration_steps), acceptance=jnp.mean(acc),
                        divergences=jnp.sum(div), step_size=params["step_size"],
                        mean_leapfrog_steps=jnp.mean(nsteps))

        return jax.jit(run).lower(jax.random.PRNGKey(0)).compile()

    def chees(self, workload, chains, warmup, iterations, thin, step_size, seed, lr=LR):
        import arviz as az
        key = (workload, chains, warmup, iterations, thin, float(step_size), float(lr))
        compile_s = None
        if key not in self.cache:
            t0 = time.perf_counter()
            self.cache[key] = self._build(workload, chains, warmup, iterations, thin, step_size, lr)
            compile_s = time.perf_counter() - t0
        fn = self.cache[key]
        rng = jax.random.PRNGKey(seed)
        t0 = time.perf_counter()
        out = jax.block_until_ready(fn(rng))
        seconds = time.perf_counter() - t0
        _, constrain, _ = self.models[workload]
        draws = np.asarray(out["draws"])  # (recorded draws, chains, dim)
        cons = {k: np.asarray(v).T for k, v in constrain(jnp.asarray(draws)).items()}  # (chain, draw)
        ess = az.ess(az.convert_to_dataset(cons), method="bulk")
        per = {k: float(ess[k].values) for k in cons}
        ess_min = min(per.values())
        warm_steps, samp_steps = int(out["warmup_steps"]), int(out["sampling_steps"])
        grads = warm_steps + samp_steps + chains
        return dict(workload=workload, chains=chains, warmup=warmup, iterations=iterations, thin=thin,
                    recorded_draws_per_chain=int(draws.shape[0]), initial_step_size=step_size, lr=lr, seed=seed,
                    compile_s=compile_s, seconds=seconds, ess_bulk_min=ess_min, ess_bulk_by_param=per,
                    ess_per_s=ess_min / seconds, grad_evals=grads, grad_evals_warmup=warm_steps,
                    grad_evals_sampling=samp_steps, ess_per_1k_grads=1000.0 * ess_min / grads,
                    step_size=float(out["step_size"]), mean_leapfrog_steps=float(out["mean_leapfrog_steps"]),
                    acceptance_rate=float(out["acceptance"]), divergences=int(out["divergences"]),
                    means={k: float(v.mean()) for k, v in cons.items()})


def serve_loop(data_dir):
    worker = Worker(data_dir)
    out = sys.stdout
    sys.stdout = sys.stderr  # whatever BlackJAX or JAX print must not mix with the answers
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            req = json.loads(line)
            op = req.pop("op")
            if op == "versions":
                ans = versions()
            elif op == "chees":
                ans = worker.chees(**req)
            else:
                raise ValueError(f"unknown op {op!r}")
        except Exception as e:  # answer, and keep serving: one failure must not lose the others
            ans = dict(error=repr(e)[:500])
        out.write(json.dumps(ans) + "\n")
        out.flush()


def one_run(argv):
    import argparse
    p = argparse.ArgumentParser(prog="blackjax_bench.py")
    p.add_argument("data_dir")
    p.add_argument("workload", choices=sorted(MODELS))
    p.add_argument("platform", nargs="?", choices=["cpu", "gpu"], default="cpu")
    p.add_argument("--chains", type=int, default=1024)
    for k in ("warmup", "iterations", "thin"):
        p.add_argument(f"--{k}", type=int)
    p.add_argument("--step-size", type=float)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--lr", type=float, default=LR)
    a = p.parse_args(argv)
    s = dict(SHIPPED[a.workload])
    for k in ("warmup", "iterations", "thin", "step_size"):
        if getattr(a, k) is not None:
            s[k] = getattr(a, k)
    ans = dict(Worker(a.data_dir).chees(a.workload, a.chains, seed=a.seed, lr=a.lr, **s), **versions())
    print(json.dumps(ans))


if __name__ == "__main__":
    if serve:
        serve_loop(sys.argv[2])
    else:
        one_run(sys.argv[1:])
