"""Checks hmc result directories as a Python user reads them (ArviZ, xarray, pandas), with
the ArviZ of this interpreter: 0.23 (draws.nc opens as an InferenceData) or 1.x (an
xarray DataTree).

Usage: python check_output.py [--doc DOC.md] OUT...

For every OUT:
- draws.nc opens with arviz.from_netcdf: groups posterior and sample_stats (and the
  warmup groups exactly when /output/save_warmup; log_likelihood, posterior_predictive,
  generated_quantities, observed_data and constant_data exactly when asked for), every variable with dims (chain, draw)
  first, chain = particles and draw = ceil(draws / thin), vector and matrix parameters as
  one variable with named dims, sample_stats under ArviZ's names and dtypes, the
  attributes (config, seed, versions).
- az.summary on draws.nc gives the mean of summary.json to 1e-9, and R-hat, bulk ESS and
  mcse_mean to 1e-6 (relative), with either major.
- Tail ESS follows ArviZ 1.x, the quantile MCSEs ArviZ 0.23 (docs/output.md, "Which ArviZ
  the figures match"): with 1.x, az.summary's ess_tail to 1e-6; with 0.23, whose summary
  takes the quantiles 0.05 and 0.95, az.ess(method="tail", prob=0.89). mcse_q5 and mcse_q95
  against az.mcse(method="quantile", prob=0.05 and 0.95) to 1e-6. The two majors compute a
  quantile threshold in different roundings (0.23 scipy's mquantiles, 1.x numpy's
  quantile), which select different draws when the quantile falls between tied draws (a
  rejected transition repeats its draw); the comparison with the other major's function
  is made where both thresholds select the same draws, and the line says how many were
  left out.
- With draws.csv: plain pandas.read_csv gives the documented columns, and every
  parameter and statistic equals the netCDF value of the same particle and draw, bit for
  bit.
With --doc, then runs the ```python blocks of DOC.md (run_doc_snippets.py) in the current
directory. One process does it all (tests/python/test_output.sh runs one per ArviZ major).
Prints a line per directory and per block, one line per failed check, and exits non-zero
if any failed.
"""
import argparse
import json
import math
import platform
import re
import sys
import traceback
import warnings
from pathlib import Path

warnings.filterwarnings("ignore", category=FutureWarning)  # ArviZ 0.23's notice of the refactor
import arviz as az  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from scipy.stats import mstats  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run_doc_snippets  # noqa: E402

MAJOR = int(az.__version__.split(".")[0])
TAIL_PROB = 0.89  # ArviZ 1.x's rcParams["stats.ci_prob"]: the default prob of its tail ESS
STATS = ["lp", "acceptance_rate", "step_size", "n_steps", "diverging", "energy"]
STAT_DTYPES = {"lp": np.float64, "acceptance_rate": np.float64, "step_size": np.float64, "n_steps": np.int64,
               "diverging": np.bool_, "energy": np.float64}
# The dims each shipped model gives its vector and matrix parameters (docs/output.md).
MODEL_DIMS = {"hmm": {"transition": ("from_state", "to_state"), "emission": ("state", "word"), "mu": ("state",),
                      "initial": ("state",), "sigma": ()},
              "coin_toss": {"p": ("p_dim_0",)}, "harmonic_oscillator": {"q": ("q_dim_0",)}}


def split_name(name):
    """'transition[1,2]' -> ('transition', (0, 1)); 'sigma' -> ('sigma', ())."""
    m = re.fullmatch(r"([^\[]+)(?:\[([0-9,]+)\])?", name)
    index = tuple(int(i) - 1 for i in m.group(2).split(",")) if m.group(2) else ()
    return m.group(1), index


def thresholds_agree(x, probs):
    """Do numpy's quantile (ArviZ 1.x) and scipy's mquantiles (0.23) select the same draws x <= q?"""
    x = np.asarray(x, dtype=float).ravel()
    return all((x <= np.quantile(x, p)).sum() == (x <= mstats.mquantiles(x, [p], alphap=1, betap=1)[0]).sum()
               for p in probs)


def group(idata, name):
    """A group as an xarray Dataset: InferenceData (0.23) holds Datasets, a DataTree (1.x) nodes."""
    g = idata[name]
    return g.to_dataset() if hasattr(g, "to_dataset") else g


def check_dir(out):
    """The checks of one result directory: (failures, largest relative deviation per statistic)."""
    failures = []
    worst = {}
    left_out = {}

    def check(ok, what):
        if not ok:
            failures.append(what)
        return ok

    def agree(a, b, name, key, tol=1e-6):
        """ArviZ's a against summary.json's b (None where hmc wrote null), relative."""
        a = float(a)
        if b is None or math.isnan(a):
            return check(b is None and math.isnan(a), f"{name}: {key}: ArviZ {a!r} vs summary.json {b!r}")
        rel = abs(a - b) / abs(b) if b != 0 else abs(a)
        worst[key] = max(worst.get(key, 0.0), rel)
        return check(rel <= tol, f"{name}: {key}: ArviZ {a!r} vs summary.json {b!r} (relative deviation {rel:.3g})")

    summary = json.load(open(out / "summary.json"))
    config = json.load(open(out / "run.json"))["config"]
    model = config["model"]["name"]
    particles = config["sampler"]["particles"]
    thin = config["sampler"]["thin"]
    draws = -(-config["sampler"]["draws"] // thin)
    warmup_draws = -(-config["sampler"]["warmup"] // thin)
    order = summary["parameter_order"]

    idata = az.from_netcdf(out / "draws.nc")
    groups = {"posterior", "sample_stats"}
    if config["output"]["save_warmup"]:
        groups |= {"warmup_posterior", "warmup_sample_stats"}
    for extra in ("log_likelihood", "posterior_predictive", "generated_quantities"):  # check_loo.py: their contents
        if config["output"].get(extra):
            groups.add(extra)
            if extra != "generated_quantities":
                groups |= {"observed_data"} | ({"constant_data"} & set(idata))
            if config["output"]["save_warmup"]:
                groups.add("warmup_" + extra)
    check(set(idata) == groups, f"groups {sorted(idata)} != {sorted(groups)}")  # both iterate over their groups

    for name, n_draw in [("posterior", draws), ("sample_stats", draws), ("warmup_posterior", warmup_draws),
                         ("warmup_sample_stats", warmup_draws)]:
        if name not in set(idata):
            continue
        ds = group(idata, name)
        check(ds.sizes["chain"] == particles and ds.sizes["draw"] == n_draw,
              f"{name}: sizes {dict(ds.sizes)}, expected chain={particles}, draw={n_draw}")
        check((ds["chain"].values == np.arange(particles)).all(), f"{name}: chain coordinate")
        check((ds["draw"].values == np.arange(n_draw)).all(), f"{name}: draw coordinate")
        for var_name, var in ds.data_vars.items():
            check(var.dims[:2] == ("chain", "draw"), f"{name}.{var_name}: dims {var.dims}")
        attrs = ds.attrs
        check(attrs.get("inference_library") == "hmc", f"{name}: inference_library {attrs.get('inference_library')}")
        check(json.loads(attrs["config"])["sampler"] == config["sampler"], f"{name}: config attribute")
        check(str(attrs.get("seed")) == str(config["seed"]), f"{name}: seed {attrs.get('seed')} != {config['seed']}")
        check("hmc_version" in attrs and "kokkos_version" in attrs, f"{name}: version attributes")
        if name.endswith("sample_stats"):
            check(list(ds.data_vars) == STATS, f"{name}: variables {list(ds.data_vars)}")
            for stat, dtype in STAT_DTYPES.items():
                check(ds[stat].dtype == dtype, f"{name}.{stat}: dtype {ds[stat].dtype}, expected {dtype.__name__}")
        else:
            names = {}
            for p in order:
                base, index = split_name(p)
                names.setdefault(base, []).append(index)
            check(list(ds.data_vars) == list(names), f"{name}: variables {list(ds.data_vars)} != {list(names)}")
            for base, indices in names.items():
                var = ds[base]
                shape = tuple(max(i[k] for i in indices) + 1 for k in range(len(indices[0])))
                check(var.shape[2:] == shape, f"{name}.{base}: shape {var.shape[2:]} != {shape}")
                expected = MODEL_DIMS.get(model, {}).get(base)
                if expected is not None:
                    check(var.dims[2:] == expected, f"{name}.{base}: dims {var.dims[2:]} != {expected}")

    post, stats = group(idata, "posterior"), group(idata, "sample_stats")

    # The statistics of summary.json, recomputed by ArviZ from draws.nc.
    diag_particles = summary["diagnostics"]["particles_used"]  # below particles: /diagnostics/max_draws cut in
    s = az.summary(idata, round_to="none")
    if diag_particles == particles:
        mcse_q5 = az.mcse(idata, method="quantile", prob=0.05)
        mcse_q95 = az.mcse(idata, method="quantile", prob=0.95)
        tail = None if MAJOR >= 1 else az.ess(idata, method="tail", prob=TAIL_PROB)
    for name in order:
        base, index = split_name(name)
        row = s.loc[base + (f"[{', '.join(str(i) for i in index)}]" if index else "")]
        hmc = summary["parameters"][name]
        check(abs(row["mean"] - hmc["mean"]) <= 1e-9 * max(1.0, abs(hmc["mean"])),
              f"{name}: mean {row['mean']} vs {hmc['mean']}")
        if diag_particles != particles:
            continue
        agree(row["r_hat"], hmc["rhat"], name, "rhat")
        agree(row["ess_bulk"], hmc["ess_bulk"], name, "ess_bulk")
        agree(row["mcse_mean"], hmc["mcse_mean"], name, "mcse_mean")
        x = post[base].values[(slice(None), slice(None)) + index]
        # The other major's function where both roundings of the thresholds select the same draws.
        for key, value, probs, native in [
                ("ess_tail", row["ess_tail"] if MAJOR >= 1 else tail[base].values[index], (1 - TAIL_PROB, TAIL_PROB),
                 MAJOR >= 1),
                ("mcse_q5", mcse_q5[base].values[index], (0.05,), MAJOR < 1),
                ("mcse_q95", mcse_q95[base].values[index], (0.95,), MAJOR < 1)]:
            if native or thresholds_agree(x, probs):
                agree(value, hmc[key], name, key)
            else:
                left_out[key] = left_out.get(key, 0) + 1

    if (out / "draws.csv").exists():
        d = pd.read_csv(out / "draws.csv")
        check(list(d.columns) == ["particle", "draw"] + STATS + order, f"draws.csv columns {list(d.columns)}")
        check(len(d) == particles * draws, f"draws.csv has {len(d)} rows, expected {particles * draws}")
        check((d["particle"].to_numpy() == np.repeat(np.arange(particles), draws)).all(), "draws.csv particle column")
        check((d["draw"].to_numpy() == np.tile(np.arange(draws), particles)).all(), "draws.csv draw column")
        if config["output"]["precision"] == 0:  # shortest round-trip text: the same doubles
            for name in order:
                base, index = split_name(name)
                nc = post[base].values[(slice(None), slice(None)) + index].ravel()
                check(d[name].dtype == np.float64 and (d[name].to_numpy() == nc).all(),
                      f"draws.csv {name} differs from draws.nc {base}{list(index)}")
            for name in STATS:
                check((d[name].to_numpy() == stats[name].values.ravel().astype(d[name].dtype)).all(),
                      f"draws.csv {name} differs from draws.nc sample_stats")
    what = f"{len(order)} parameters, {particles} chains x {draws} draws"
    note = "; ".join(f"{k} of {v} parameter(s) not compared with ArviZ {az.__version__}'s (a quantile between tied "
                     f"draws, where its rounding selects other draws)" for k, v in left_out.items())
    return failures, worst, what, note


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--doc", help="a Markdown file whose python blocks to run after the checks")
    parser.add_argument("out", nargs="+", type=Path)
    args = parser.parse_args()
    kind = "DataTree" if MAJOR >= 1 else "InferenceData"
    print(f"check_output.py: ArviZ {az.__version__} ({kind}) on Python {platform.python_version()}")
    failed = 0
    for out in args.out:
        try:
            failures, worst, what, note = check_dir(out)
        except Exception:  # one broken directory must not hide the others
            traceback.print_exc()
            failures, worst, what, note = ["raised (traceback above)"], {}, "", ""
        for f in failures:
            print(f"FAIL: {out}: {f}")
        if failures:
            failed += 1
            continue
        deviation = ", ".join(f"{k} {v:.2g}" for k, v in worst.items())
        print(f"ok: {out}: {what}: dims, names, values and diagnostics agree "
              f"(largest relative deviation: {deviation or 'none compared'}){'; ' + note if note else ''}")
    if args.doc:
        problem = run_doc_snippets.run(args.doc)
        if problem:
            print(f"FAIL: {args.doc} snippets: {problem}")
            failed += 1
        else:
            print(f"ok: {args.doc} snippets")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
