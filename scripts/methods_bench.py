#!/usr/bin/env python3
"""BlackJAX's MAMS (adjusted_mclmc_dynamic) and nutpie on the standard workloads and the posteriordb
examples: the peers of the section methods of scripts/bench.

The models are written once, as NumPyro models (the standard workloads as in scripts/numpyro_bench.py,
the posteriordb examples as their .stan programs: the same priors, likelihoods and constraints);
numpyro.infer.util.initialize_model turns each into the log density of the unconstrained parameters,
Jacobians included, and the map back to the constrained ones. Both peers sample that one flat,
float64 log density; ESS and the reference check are of the constrained parameters.

mams: BlackJAX's adjusted_mclmc_dynamic kernel (isokinetic McLachlan integrator, random trajectory
length around L / step size), tuned per chain by blackjax.adjusted_mclmc_find_L_and_step_size
(target acceptance 0.9, diagonal preconditioning, its default fractions: 10 % + 10 % of num_steps,
num_steps chosen so that the tuning takes `warmup` steps), then `iterations` steps; all chains vmapped
in one jitted function, compiled before the clock starts. Gradient evaluations: two per integration
step (McLachlan) in tuning and sampling, plus one per chain at the start.

nutpie: nutpie's NUTS (its default adaptation: the Fisher-divergence diagonal mass matrix; with
"low_rank": low_rank_modified_mass_matrix=True) on the same log density, given to nutpie as a Python
function (nutpie.compiled_pyfunc.from_pyfunc) that calls the jitted JAX log density and gradient, so
neither Stan nor PyMC is needed; the chains run in nutpie's threads. Each leapfrog step is one call
across the Python boundary, so its ESS/s is a lower bound of what nutpie does with a compiled model;
ESS per gradient evaluation does not depend on it. Gradient evaluations: the sum of n_steps over
warmup and draws, plus one per chain.

Both: ESS is the minimum over the constrained parameters (the reference's parameters for the
posteriordb examples) of ArviZ's bulk ESS over all chains; the answer also has each parameter's
mean, sd and mcse_mean (ArviZ), which scripts/bench checks against reference.json.

usage:
  methods_bench.py --serve DATA_DIR [cpu|gpu]   worker: one JSON request per stdin line,
      {"op": "mams", "workload": W, "chains": N, "warmup": A, "iterations": D, "seed": S}
      {"op": "nutpie", "workload": W, "chains": N, "warmup": A, "iterations": D, "seed": S,
       "low_rank": false}
      {"op": "versions"}
    one JSON answer per stdout line (an "error" member when the run failed).
  methods_bench.py DATA_DIR WORKLOAD mams|nutpie|nutpie_low_rank [--chains N] [--warmup A]
      [--iterations D] [--seed S]      one run, its JSON answer printed.
"""
import json, os, sys, time

serve = len(sys.argv) > 1 and sys.argv[1] == "--serve"
platform = "gpu" if "gpu" in sys.argv[2:] else "cpu"
os.environ.setdefault("JAX_PLATFORMS", "cuda" if platform == "gpu" else "cpu")
import jax, jax.numpy as jnp
import numpy as np
from jax.flatten_util import ravel_pytree
from jax.scipy.special import logsumexp
jax.config.update("jax_enable_x64", True)
if os.environ.get("HMC_JAX_CACHE"):  # as in scripts/numpyro_bench.py: compilation is never timed
    jax.config.update("jax_compilation_cache_dir", os.environ["HMC_JAX_CACHE"])
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
import numpyro, numpyro.distributions as dist
from numpyro.infer.util import initialize_model
import blackjax
from blackjax.mcmc import adjusted_mclmc_dynamic as mams_mod

POSTERIORDB = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(__file__))), "examples", "posteriordb")
TARGET_ACCEPT = 0.9
TUNE_FRACTION = 0.2  # adjusted_mclmc_find_L_and_step_size's frac_tune1 + frac_tune2 (its defaults)


def load(path):
    with open(path) as f:
        return json.load(f)


# The standard workloads (scripts/numpyro_models.py, shared with scripts/numpyro_bench.py).
from numpyro_models import coin_toss, harmonic, linear_accel, hmm  # noqa: E402


# The posteriordb examples, as their .stan programs (examples/posteriordb/NAME/NAME.stan). A Stan
# parameter with only a lower bound 0 and a prior on it is the prior truncated to (0, inf): the same
# density up to a constant, so a half distribution here.
def ark(K, T, y):
    y = jnp.asarray(y)
    alpha = numpyro.sample("alpha", dist.Normal(0.0, 10.0))
    beta = numpyro.sample("beta", dist.Normal(0.0, 10.0).expand([K]).to_event(1))
    sigma = numpyro.sample("sigma", dist.HalfCauchy(2.5))
    lags = jnp.stack([y[K - k - 1:T - k - 1] for k in range(K)], axis=1)  # row t: y[t-1], ..., y[t-K]
    numpyro.sample("y", dist.Normal(alpha + lags @ beta, sigma), obs=y[K:])


def kidscore_interaction(N, kid_score, mom_iq, mom_hs, **_):
    kid_score, mom_iq, mom_hs = jnp.asarray(kid_score), jnp.asarray(mom_iq), jnp.asarray(mom_hs)
    beta = numpyro.sample("beta", dist.ImproperUniform(dist.constraints.real_vector, (), (4,)))
    sigma = numpyro.sample("sigma", dist.HalfCauchy(2.5))
    mu = beta[0] + beta[1] * mom_hs + beta[2] * mom_iq + beta[3] * mom_hs * mom_iq
    numpyro.sample("kid_score", dist.Normal(mu, sigma), obs=kid_score)


def gp_pois_regr(N, x, k, **_):
    x, k = jnp.asarray(x, dtype=jnp.float64), jnp.asarray(k)
    rho = numpyro.sample("rho", dist.Gamma(25.0, 4.0))
    alpha = numpyro.sample("alpha", dist.HalfNormal(2.0))
    f_tilde = numpyro.sample("f_tilde", dist.Normal(0.0, 1.0).expand([N]).to_event(1))
    cov = alpha**2 * jnp.exp(-0.5 * (x[:, None] - x[None, :]) ** 2 / rho**2) + 1e-10 * jnp.eye(N)
    f = numpyro.deterministic("f", jnp.linalg.cholesky(cov) @ f_tilde)
    numpyro.sample("k", dist.Poisson(jnp.exp(f)), obs=k)


def hmm_drive_0(K, N, u, v, alpha):
    u, v, alpha = jnp.asarray(u), jnp.asarray(v), jnp.asarray(alpha, dtype=jnp.float64)
    theta1 = numpyro.sample("theta1", dist.Dirichlet(alpha[0]))
    theta2 = numpyro.sample("theta2", dist.Dirichlet(alpha[1]))
    phi = numpyro.sample("phi", dist.ImproperUniform(dist.constraints.positive_ordered_vector, (), (K,)))
    lam = numpyro.sample("lambda", dist.ImproperUniform(dist.constraints.positive_ordered_vector, (), (K,)))
    prior_loc = jnp.array([0.0, 3.0])
    numpyro.factor("priors", jnp.sum(dist.Normal(prior_loc, 1.0).log_prob(phi))
                   + jnp.sum(dist.Normal(prior_loc, 1.0).log_prob(lam)))
    lt = jnp.log(jnp.stack([theta1, theta2]))  # lt[j, k] = log theta[j][k]
    emis = (jnp.log(phi) - phi * u[:, None]) + (jnp.log(lam) - lam * v[:, None])  # (N, K) exponential_lpdf

    def step(gamma, e):
        return logsumexp(gamma[:, None] + lt, axis=0) + e, None

    gamma, _ = jax.lax.scan(step, emis[0], emis[1:])
    numpyro.factor("forward", logsumexp(gamma))


def standard(data_dir):
    def coin():
        d = load(os.path.join(data_dir, "coin_toss.json"))
        return coin_toss, dict(c1=jnp.array(d["c1"]), c2=jnp.array(d["c2"]))

    def lin():
        d = load(os.path.join(data_dir, "linear_motion.json"))
        return linear_accel, dict(t=jnp.array(d["t"]), z=jnp.array(d["z"]), sigma=float(d["sigmaObs"]))

    def hmm3():
        d = load(os.path.join(data_dir, "hmm_words_k3_v10_t2000.json"))
        return hmm, dict(words=jnp.array(d["words"]), K=3, V=10)

    return {"coin_toss": coin, "harmonic_d100": lambda: (harmonic, dict(k=jnp.arange(1.0, 101.0))),
            "linear_accel": lin, "hmm_k3_t2000": hmm3}


PDB_MODELS = {"ark": ark, "kidscore_interaction": kidscore_interaction, "gp_pois_regr": gp_pois_regr,
              "hmm_drive_0": hmm_drive_0}
# Initial positions: uniform in (-R, R) on the unconstrained scale around 0 (Stan's default, R = 2), or
# around the values of hmc's config (linear_accel: configs/bench/linear_accel.json).
INIT = {"linear_accel": (dict(h=-0.44, v0=0.95, g=-4.9), 0.2)}


def stan_names(name, value):
    """Flat Stan-style names and values of a constrained site: beta[1], beta[2], ...; theta[1,2]."""
    value = np.asarray(value)
    lead = value.shape[:2]  # (chain, draw)
    flat = value.reshape(lead + (-1,))
    if value.ndim == 2:
        return {name: flat[..., 0]}
    idx = np.ndindex(*value.shape[2:])
    return {f"{name}[{','.join(str(i + 1) for i in ix)}]": flat[..., j] for j, ix in enumerate(idx)}


class Model:
    """A workload's flat unconstrained log density, its initial positions and its constrained draws."""

    def __init__(self, workload, data_dir):
        std = standard(data_dir)
        if workload in std:
            model, kwargs = std[workload]()
            self.reference = None
        elif workload in PDB_MODELS:
            folder = os.path.join(POSTERIORDB, workload)
            model, kwargs = PDB_MODELS[workload], load(os.path.join(folder, "data.json"))
            self.reference = load(os.path.join(folder, "reference.json"))["parameter_order"]
        else:
            raise ValueError(f"no JAX model for {workload!r} (known: {', '.join(list(std) + list(PDB_MODELS))})")
        info, potential, post, _ = initialize_model(jax.random.PRNGKey(0), model, model_kwargs=kwargs,
                                                    dynamic_args=False)
        flat, self.unravel = ravel_pytree(info.z)
        self.dim = flat.size
        self.logdensity = lambda x: -potential(self.unravel(x))
        self.post = post
        centre, radius = INIT.get(workload, ({}, 2.0))
        self.centre = ravel_pytree({k: jnp.asarray(centre.get(k, jnp.zeros_like(v)), dtype=jnp.float64)
                                    * jnp.ones_like(v) for k, v in info.z.items()})[0]
        self.radius = radius
        self.value_and_grad = jax.jit(jax.value_and_grad(self.logdensity))

    def init(self, key, n):
        return self.centre + jax.random.uniform(key, (n, self.dim), minval=-self.radius, maxval=self.radius,
                                                dtype=jnp.float64)

    def constrained(self, draws):
        """draws (chain, draw, dim) unconstrained: {Stan name: (chain, draw)} of the constrained parameters
        (the reference's, for a posteriordb example)."""
        c, d, _ = draws.shape
        sites = jax.jit(jax.vmap(lambda x: self.post(self.unravel(x))))(jnp.asarray(draws.reshape(c * d, -1)))
        out = {}
        for k, v in sites.items():
            out.update(stan_names(k, np.asarray(v).reshape((c, d) + np.shape(v)[1:])))
        if self.reference:
            missing = [k for k in self.reference if k not in out]
            if missing:
                raise RuntimeError(f"the JAX model has no {missing}")
            out = {k: out[k] for k in self.reference}
        return out


def summarise(cons, seconds, grads, warm_grads, chains, extra):
    """ESS (ArviZ bulk, minimum over parameters) and each parameter's mean, sd and mcse_mean."""
    import arviz as az
    ds = az.convert_to_dataset({k: np.asarray(v) for k, v in cons.items()})
    ess = az.ess(ds, method="bulk")
    mcse = az.mcse(ds, method="mean")
    per = {k: dict(ess_bulk=float(ess[k].values), mean=float(np.mean(v)), sd=float(np.std(v, ddof=1)),
                   mcse_mean=float(mcse[k].values)) for k, v in cons.items()}
    ess_min = min(p["ess_bulk"] for p in per.values())
    return dict(chains=chains, seconds=seconds, ess_bulk_min=ess_min, ess_per_s=ess_min / seconds,
                grad_evals=grads, grad_evals_warmup=warm_grads, ess_per_grad=ess_min / grads,
                ess_per_1k_grads=1000.0 * ess_min / grads, parameters=per, **extra)


class Worker:
    def __init__(self, data_dir):
        self.data_dir = data_dir
        self.models = {}
        self.compiled = {}

    def model(self, workload):
        if workload not in self.models:
            self.models[workload] = Model(workload, self.data_dir)
        return self.models[workload]

    def _mams(self, m, chains, warmup, iterations):
        logdensity = m.logdensity
        steps_fn = mams_mod.make_random_trajectory_length_fn(True)
        kernel = mams_mod.build_kernel(integration_steps_fn=steps_fn)
        num_steps = max(1, round(warmup / TUNE_FRACTION))  # tuning: TUNE_FRACTION * num_steps steps

        def chain(key, x0):
            k_init, k_tune, k_run = jax.random.split(key, 3)
            state = mams_mod.init(x0, logdensity, k_init)
            state, params, tune_steps = blackjax.adjusted_mclmc_find_L_and_step_size(
                mclmc_kernel=kernel, logdensity_fn=logdensity, num_steps=num_steps, state=state, rng_key=k_tune,
                target=TARGET_ACCEPT, diagonal_preconditioning=True)
            alg = blackjax.adjusted_mclmc_dynamic(
                logdensity, step_size=params.step_size, inverse_mass_matrix=params.inverse_mass_matrix,
                integration_steps_fn=steps_fn, integration_steps_params=(params.L / params.step_size,))

            def one(st, k):
                st, info = alg.step(k, st)
                return st, (st.position, info.num_integration_steps, info.acceptance_rate, info.is_divergent)

            _, (draws, nsteps, acc, div) = jax.lax.scan(one, state, jax.random.split(k_run, iterations))
            return dict(draws=draws, tune_steps=tune_steps, steps=jnp.sum(nsteps), acceptance=jnp.mean(acc),
                        divergences=jnp.sum(div), step_size=params.step_size, L=params.L)

        def run(key):
            k0, k1 = jax.random.split(key)
            return jax.vmap(chain)(jax.random.split(k1, chains), m.init(k0, chains))

        return jax.jit(run).lower(jax.random.PRNGKey(0)).compile()

    def mams(self, workload, chains, warmup, iterations, seed):
        m = self.model(workload)
        key = ("mams", workload, chains, warmup, iterations)
        compile_s = None
        if key not in self.compiled:
            t0 = time.perf_counter()
            self.compiled[key] = self._mams(m, chains, warmup, iterations)
            compile_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        out = jax.block_until_ready(self.compiled[key](jax.random.PRNGKey(seed)))
        seconds = time.perf_counter() - t0
        draws = np.asarray(out["draws"])  # (chain, draw, dim)
        tune, samp = int(np.sum(out["tune_steps"])), int(np.sum(out["steps"]))
        warm_grads = 2 * tune + chains
        grads = warm_grads + 2 * samp
        return summarise(m.constrained(draws), seconds, grads, warm_grads, chains, dict(
            method="mams", workload=workload, warmup=warmup, iterations=iterations, seed=seed, compile_s=compile_s,
            target_accept=TARGET_ACCEPT, acceptance_rate=float(np.mean(out["acceptance"])),
            divergences=int(np.sum(out["divergences"])), step_size=float(np.median(out["step_size"])),
            mean_integration_steps=samp / (chains * iterations), L=float(np.median(out["L"]))))

    def nutpie(self, workload, chains, warmup, iterations, seed, low_rank=False):
        import nutpie
        from nutpie.compiled_pyfunc import from_pyfunc
        m = self.model(workload)
        vg = m.value_and_grad
        vg(m.centre)  # compiled before the clock starts

        def make_logp_fn():
            def logp(x):
                v, g = vg(x)
                return float(v), np.asarray(g, dtype=np.float64)
            return logp

        def make_expand_fn(*args, **kwargs):
            def expand(x, **_):
                return {"x": np.asarray(x, dtype=np.float64)}
            return expand

        compiled = from_pyfunc(m.dim, make_logp_fn, make_expand_fn, [np.dtype("float64")], [(m.dim,)], ["x"])
        kw = dict(low_rank_modified_mass_matrix=True) if low_rank else {}
        t0 = time.perf_counter()
        trace = nutpie.sample(compiled, draws=iterations, tune=warmup, chains=chains, seed=seed, cores=chains,
                              save_warmup=True, progress_bar=False, init_mean=np.asarray(m.centre), **kw)
        seconds = time.perf_counter() - t0
        n_post = np.asarray(trace.sample_stats["n_steps"])
        n_warm = np.asarray(trace.warmup_sample_stats["n_steps"])
        warm_grads = int(n_warm.sum()) + chains
        grads = warm_grads + int(n_post.sum())
        draws = np.asarray(trace.posterior["x"])  # (chain, draw, dim)
        div = trace.sample_stats.get("diverging")
        return summarise(m.constrained(draws), seconds, grads, warm_grads, chains, dict(
            method="nutpie_low_rank" if low_rank else "nutpie", workload=workload, warmup=warmup,
            iterations=iterations, seed=seed, mean_leapfrog_steps=float(n_post.mean()),
            divergences=int(np.asarray(div).sum()) if div is not None else None,
            step_size=float(np.median(np.asarray(trace.sample_stats["step_size"])))))


def versions():
    import arviz as az
    out = {"platform": platform, "device": str(jax.devices()[0]), "jax": jax.__version__,
           "blackjax": blackjax.__version__, "numpyro": numpyro.__version__, "arviz": az.__version__}
    try:
        import nutpie
        out["nutpie"] = nutpie.__version__
    except ImportError:
        out["nutpie"] = None
    return out


def answer(worker, req):
    op = req.pop("op")
    if op == "versions":
        return versions()
    if op == "mams":
        return worker.mams(**req)
    if op == "nutpie":
        return worker.nutpie(**req)
    raise ValueError(f"unknown op {op!r}")


def serve_loop(data_dir):
    worker = Worker(data_dir)
    out = sys.stdout
    sys.stdout = sys.stderr  # whatever BlackJAX, nutpie or JAX print must not mix with the answers
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            ans = answer(worker, json.loads(line))
        except Exception as e:  # answer, and keep serving: one failure must not lose the others
            ans = dict(error=repr(e)[:500])
        out.write(json.dumps(ans) + "\n")
        out.flush()


def one_run(argv):
    import argparse
    p = argparse.ArgumentParser(prog="methods_bench.py")
    p.add_argument("data_dir")
    p.add_argument("workload")
    p.add_argument("method", choices=["mams", "nutpie", "nutpie_low_rank"])
    p.add_argument("platform", nargs="?", choices=["cpu", "gpu"], default="cpu")
    p.add_argument("--chains", type=int, default=4)
    p.add_argument("--warmup", type=int, default=300)
    p.add_argument("--iterations", type=int, default=1000)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args(argv)
    req = dict(op="nutpie" if a.method.startswith("nutpie") else "mams", workload=a.workload, chains=a.chains,
               warmup=a.warmup, iterations=a.iterations, seed=a.seed)
    if a.method == "nutpie_low_rank":
        req["low_rank"] = True
    ans = answer(Worker(a.data_dir), req)
    ans.pop("parameters")
    print(json.dumps(dict(ans, **versions())))


if __name__ == "__main__":
    if serve:
        serve_loop(sys.argv[2])
    else:
        one_run(sys.argv[1:])
