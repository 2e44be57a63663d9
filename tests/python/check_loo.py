"""PSIS-LOO as ArviZ users compute it, on hmc runs that recorded a log_likelihood group.

Usage: python check_loo.py HMC OUT_A OUT_B [OUT...]

With the ArviZ of this interpreter (0.23: InferenceData; 1.x: DataTree):
- draws.nc opens with arviz.from_netcdf, with groups log_likelihood and observed_data
  (and constant_data where the model has covariates), the log-likelihood variables named
  as the observed ones, dims (chain, draw, the observation dims);
- az.loo runs on every OUT with no reshaping, and `HMC summary OUT --format json --arviz
  MAJOR` gives its elpd_loo, p_loo and se to 1e-8 (relative), and its Pareto k counts;
- az.compare runs on OUT_A and OUT_B (the same observations);
- OUT_A's posterior_predictive group has observed_data's variables and dims, and az.plot_ppc
  (ArviZ 1.x: plot_ppc_dist) renders it to OUT_A/ppc.png (skipped, with a line, where the
  environment has no matplotlib); its generated theta_new (eight_schools) is Normal(mu, tau) in the mean.
Prints a line per check and exits non-zero if any failed.
"""
import json
import subprocess
import sys
import warnings

warnings.filterwarnings("ignore")  # ArviZ's notices (refactor, Pareto k) are not failures here
import arviz as az  # noqa: E402
import numpy as np  # noqa: E402

MAJOR = int(az.__version__.split(".")[0])
RULE = "1" if MAJOR >= 1 else "0.23"
failures = 0


def check(ok, what):
    global failures
    print(("ok: " if ok else "FAIL: ") + what)
    if not ok:
        failures += 1


def group(data, name):
    if MAJOR >= 1:
        return data[name].to_dataset() if name in data.children else None
    return getattr(data, name, None)


def loo_values(result):
    if MAJOR >= 1:
        return float(result.elpd), float(result.p), float(result.se), np.asarray(result.pareto_k).ravel()
    return float(result["elpd_loo"]), float(result["p_loo"]), float(result["se"]), np.asarray(result["pareto_k"]).ravel()


def rel(a, b):
    return abs(a - b) / max(abs(b), 1e-300)


hmc, dirs = sys.argv[1], sys.argv[2:]
data = {}
for d in dirs:
    idata = az.from_netcdf(f"{d}/draws.nc")
    data[d] = idata
    ll, obs = group(idata, "log_likelihood"), group(idata, "observed_data")
    check(ll is not None and obs is not None, f"{d}: groups log_likelihood and observed_data")
    if ll is None or obs is None:
        continue
    post = group(idata, "posterior")
    for name, var in ll.data_vars.items():
        check(name in obs.data_vars and var.dims[:2] == ("chain", "draw") and var.dims[2:] == obs[name].dims
              and var.shape[0] == post.sizes["chain"] and var.shape[1] == post.sizes["draw"],
              f"{d}: log_likelihood {name} {var.dims} matches observed_data's {name}")
    result = az.loo(idata, pointwise=True)
    elpd, p_loo, se, k = loo_values(result)
    out = subprocess.run([hmc, "summary", d, "--format", "json", "--arviz", RULE], capture_output=True, text=True)
    check(out.returncode == 0, f"{d}: hmc summary --arviz {RULE} " + out.stderr.strip())
    if out.returncode != 0:
        continue
    mine = json.loads(out.stdout)["loo"]
    for key, theirs in (("elpd_loo", elpd), ("p_loo", p_loo), ("se", se)):
        check(rel(mine[key], theirs) < 1e-8, f"{d}: {key} {mine[key]!r} equals ArviZ {az.__version__}'s {theirs!r}")
    good = int(np.sum(k <= mine["good_k"]))
    check(mine["pareto_k_counts"]["good"] == good and mine["n_data_points"] == k.size,
          f"{d}: {good} of {k.size} Pareto k good, as ArviZ")

# Posterior predictive checks: the group as ArviZ's plots read it, rendered to a file.
idata = data[dirs[0]]
pp, obs = group(idata, "posterior_predictive"), group(idata, "observed_data")
check(pp is not None and set(pp.data_vars) == set(obs.data_vars)
      and all(pp[v].dims[2:] == obs[v].dims for v in pp.data_vars),
      f"{dirs[0]}: posterior_predictive has the variables and dims of observed_data")
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    print(f"skipped: the PPC plot with ArviZ {az.__version__} (no matplotlib in this environment)")
else:
    png = f"{dirs[0]}/ppc.png"
    if MAJOR >= 1:
        az.plot_ppc_dist(idata)
    else:
        az.plot_ppc(idata)
    plt.savefig(png)
    import os
    check(os.path.getsize(png) > 1000, f"{dirs[0]}: az.plot_ppc rendered {png}")
gq = group(idata, "generated_quantities")
if gq is not None:
    post = group(idata, "posterior")
    # theta_new - mu = tau z with z ~ N(0, 1) fresh at every draw: its mean is within 5
    # standard errors sqrt(mean(tau²) / S) of 0
    diff = gq["theta_new"].values - post["mu"].values
    se = float(np.sqrt((post["tau"].values ** 2).mean() / diff.size))
    check(abs(diff.mean()) < 5 * se, f"{dirs[0]}: generated theta_new - mu has mean {diff.mean():.3g} (se {se:.2g})")

comparison = az.compare({"a": data[dirs[0]], "b": data[dirs[1]]})
check(len(comparison) == 2, f"az.compare of {dirs[0]} and {dirs[1]}:\n{comparison}")
print(f"{failures} failure(s) (ArviZ {az.__version__})")
sys.exit(1 if failures else 0)
