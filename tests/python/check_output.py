"""Checks one hmc result directory as a Python user reads it (ArviZ, xarray, pandas).

Usage: python check_output.py OUT

- draws.nc opens with arviz.from_netcdf: groups posterior and sample_stats (and the
  warmup groups exactly when /output/save_warmup), every variable with dims (chain, draw)
  first, chain = particles and draw = ceil(draws / thin), vector and matrix parameters as
  one variable with named dims, sample_stats under ArviZ's names and dtypes, the
  attributes (config, seed, versions).
- az.summary on draws.nc gives the mean, R-hat and bulk ESS of summary.json to 1e-6.
- With draws.csv: plain pandas.read_csv gives the documented columns, and every
  parameter and statistic equals the netCDF value of the same particle and draw, bit for
  bit.
Exits non-zero with one line per failed check.
"""
import json
import math
import re
import sys
from pathlib import Path

import arviz as az
import numpy as np
import pandas as pd

STATS = ["lp", "acceptance_rate", "step_size", "n_steps", "diverging", "energy"]
STAT_DTYPES = {"lp": np.float64, "acceptance_rate": np.float64, "step_size": np.float64, "n_steps": np.int64,
               "diverging": np.bool_, "energy": np.float64}
# The dims each shipped model gives its vector and matrix parameters (docs/output.md).
MODEL_DIMS = {"hmm": {"transition": ("from_state", "to_state"), "emission": ("state", "word"), "mu": ("state",),
                      "initial": ("state",), "sigma": ()},
              "coin_toss": {"p": ("p_dim_0",)}, "harmonic_oscillator": {"q": ("q_dim_0",)}}

out = Path(sys.argv[1])
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
    return ok


summary = json.load(open(out / "summary.json"))
config = json.load(open(out / "run.json"))["config"]
model = config["model"]["name"]
particles = config["sampler"]["particles"]
thin = config["sampler"]["thin"]
draws = -(-config["sampler"]["draws"] // thin)
warmup_draws = -(-config["sampler"]["warmup"] // thin)
order = summary["parameter_order"]


def split_name(name):
    """'transition[1,2]' -> ('transition', (0, 1)); 'sigma' -> ('sigma', ())."""
    m = re.fullmatch(r"([^\[]+)(?:\[([0-9,]+)\])?", name)
    index = tuple(int(i) - 1 for i in m.group(2).split(",")) if m.group(2) else ()
    return m.group(1), index


idata = az.from_netcdf(out / "draws.nc")
groups = {"posterior", "sample_stats"}
if config["output"]["save_warmup"]:
    groups |= {"warmup_posterior", "warmup_sample_stats"}
check(set(idata.groups()) == groups, f"groups {idata.groups()} != {sorted(groups)}")

for group, n_draw in [("posterior", draws), ("sample_stats", draws), ("warmup_posterior", warmup_draws),
                      ("warmup_sample_stats", warmup_draws)]:
    if group not in idata.groups():
        continue
    ds = idata[group]
    check(ds.sizes["chain"] == particles and ds.sizes["draw"] == n_draw,
          f"{group}: sizes {dict(ds.sizes)}, expected chain={particles}, draw={n_draw}")
    check((ds["chain"].values == np.arange(particles)).all(), f"{group}: chain coordinate")
    check((ds["draw"].values == np.arange(n_draw)).all(), f"{group}: draw coordinate")
    for name, var in ds.data_vars.items():
        check(var.dims[:2] == ("chain", "draw"), f"{group}.{name}: dims {var.dims}")
    attrs = ds.attrs
    check(attrs.get("inference_library") == "hmc", f"{group}: inference_library {attrs.get('inference_library')}")
    check(json.loads(attrs["config"])["sampler"] == config["sampler"], f"{group}: config attribute")
    check(str(attrs.get("seed")) == str(config["seed"]), f"{group}: seed {attrs.get('seed')} != {config['seed']}")
    check("hmc_version" in attrs and "kokkos_version" in attrs, f"{group}: version attributes")
    if group.endswith("sample_stats"):
        check(list(ds.data_vars) == STATS, f"{group}: variables {list(ds.data_vars)}")
        for name, dtype in STAT_DTYPES.items():
            check(ds[name].dtype == dtype, f"{group}.{name}: dtype {ds[name].dtype}, expected {dtype.__name__}")
    else:
        names = {}
        for p in order:
            base, index = split_name(p)
            names.setdefault(base, []).append(index)
        check(list(ds.data_vars) == list(names), f"{group}: variables {list(ds.data_vars)} != {list(names)}")
        for base, indices in names.items():
            var = ds[base]
            shape = tuple(max(i[k] for i in indices) + 1 for k in range(len(indices[0])))
            check(var.shape[2:] == shape, f"{group}.{base}: shape {var.shape[2:]} != {shape}")
            expected = MODEL_DIMS.get(model, {}).get(base)
            if expected is not None:
                check(var.dims[2:] == expected, f"{group}.{base}: dims {var.dims[2:]} != {expected}")

post, stats = idata.posterior, idata.sample_stats

# The statistics of summary.json, recomputed by ArviZ from draws.nc.
diag_particles = summary["diagnostics"]["particles_used"]  # below particles: /diagnostics/max_draws cut in
s = az.summary(idata, round_to="none")
for name in order:
    base, index = split_name(name)
    row = s.loc[base + (f"[{', '.join(str(i) for i in index)}]" if index else "")]
    hmc = summary["parameters"][name]
    check(abs(row["mean"] - hmc["mean"]) <= 1e-9 * max(1.0, abs(hmc["mean"])),
          f"{name}: mean {row['mean']} vs {hmc['mean']}")
    if diag_particles != particles:
        continue
    for az_key, hmc_key in [("r_hat", "rhat"), ("ess_bulk", "ess_bulk")]:
        a, b = row[az_key], hmc[hmc_key]
        if b is None or (isinstance(a, float) and math.isnan(a)):
            check(b is None and math.isnan(a), f"{name}: {az_key} {a} vs {hmc_key} {b}")
            continue
        check(abs(a - b) <= 1e-6 * max(1.0, abs(b)), f"{name}: ArviZ {az_key} {a!r} vs summary.json {hmc_key} {b!r}")

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

if failures:
    for f in failures:
        print(f"FAIL: {out}: {f}")
    sys.exit(1)
print(f"{out}: {len(order)} parameters, {particles} chains x {draws} draws: dims, names, values and "
      f"diagnostics agree")
