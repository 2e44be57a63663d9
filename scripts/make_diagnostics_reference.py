#!/usr/bin/env python3
"""Reference values for the convergence diagnostics (src/hmc/diagnostics/convergence.*).

Writes tests/data/diagnostics_reference.json, read by tests/unit/test_convergence.cpp.

How to run (from the repository root; ArviZ is not a dependency of hmc itself). It
needs both ArviZ majors in one process: ArviZ 0.23 as `arviz` and the statistics of
ArviZ 1.x, arviz-stats (with arviz-base for its rcParams), as `arviz_stats`, which is
what the set "reference" of scripts/python_env.sh holds (a Python >= 3.12):

    py=$(scripts/python_env.sh reference) && "$py" scripts/make_diagnostics_reference.py

The versions are recorded inside the JSON under "generator".

Every case is a fixed array (numpy Generator, fixed seeds), stored in the JSON as
draws[chain][draw] together with

  * ArviZ's values: rhat (method="rank"), ess bulk / mean, mcse mean and quantile
    (prob 0.05 and 0.95) from ArviZ 0.23, and, for the energy cases, bfmi (one per
    chain). These are the same operations in ArviZ 1.x (arviz_stats'
    base/diagnostics.py); the script computes them there too and records the largest
    relative deviation between the two majors under "generator" ("arviz1_agreement");
  * ess_tail from ArviZ 1.x, as its summary computes it: arviz_stats.ess(method="tail")
    with the default prob, arviz_base's rcParams["stats.ci_prob"] (0.89), i.e. the
    quantile indicators at 1 - 0.89 and 0.89, numpy's quantile. ArviZ 0.23's default
    (quantiles 0.05 and 0.95, scipy's mquantiles) is kept beside it as
    "ess_tail_arviz0", for the tests to check that the two differ;
  * nested R-hat, which ArviZ does not provide: computed here by `nested_rhat`
    below, a direct numpy transcription of Margossian, Hoffman, Sountsov,
    Riou-Durand, Vehtari & Gelman (2024), "Nested R-hat: assessing the convergence
    of Markov chain Monte Carlo when running many short chains", Bayesian Analysis
    (arXiv:2110.13017): the definition of nested R-hat, Eqs. (15)-(19) in the
    numbering the posterior R package's rhat_nested cites; on the raw (unsplit,
    not rank-normalised) draws, superchains made of consecutive chain indices;
  * scipy's norm.ppf and beta.ppf at a few points (the special functions behind
    rank normalisation and the quantile MCSE).

Values ArviZ reports as NaN are written as null.
"""

import json
import math
import sys
import warnings

import numpy as np
import scipy
import xarray as xr
from scipy import stats

warnings.filterwarnings("ignore")
import arviz as az  # noqa: E402  (imported after silencing its FutureWarning)
import arviz_base  # noqa: E402
import arviz_stats  # noqa: E402
from arviz_stats.base import array_stats  # noqa: E402

if not az.__version__.startswith("0.23.") or not arviz_stats.__version__.startswith("1."):
    sys.exit(f"needs ArviZ 0.23 and arviz-stats 1.x (scripts/python_env.sh reference), got arviz "
             f"{az.__version__} and arviz-stats {arviz_stats.__version__}")


def nested_rhat(x, superchains):
    """Nested R-hat, Margossian et al. (2024) Eqs. (15)-(19) (numbering as in the module docstring).

    x: array [chain][draw]; chain c belongs to superchain c // (chains / superchains).
    With K superchains of M chains of N draws:
      superchain mean   mu_k   = mean of all N*M draws of superchain k           (15)
      overall mean      mu     = (1/K) sum_k mu_k                                 (16)
      between-superchain B_nu  = 1/(K-1) sum_k (mu_k - mu)^2                      (17)
      between-chain      B_k   = 1/(M-1) sum_m (chain mean - mu_k)^2, 0 if M = 1
      within-chain       W_k   = (1/M) sum_m (chain variance, ddof 1), 0 if N = 1
      within-superchain  W_nu  = (1/K) sum_k (B_k + W_k)                          (18)
      nested R-hat             = sqrt(1 + B_nu / W_nu)                            (19)
    """
    x = np.asarray(x, dtype=float)
    chains, draws = x.shape
    k = superchains
    if k < 2 or chains % k != 0:
        return float("nan")
    m = chains // k
    groups = x.reshape(k, m, draws)
    chain_mean = groups.mean(axis=2)  # [k][m]
    super_mean = groups.reshape(k, m * draws).mean(axis=1)  # [k]
    overall = super_mean.mean()
    b_nu = np.sum((super_mean - overall) ** 2) / (k - 1)
    b_k = chain_mean.var(axis=1, ddof=1) if m > 1 else np.zeros(k)
    w_k = groups.var(axis=2, ddof=1).mean(axis=1) if draws > 1 else np.zeros(k)
    w_nu = np.mean(b_k + w_k)
    return float(np.sqrt(1.0 + b_nu / w_nu))


def num(v):
    v = float(v)
    return None if math.isnan(v) else v


def ess_tail_arviz1(x):
    """ArviZ 1.x's ess_tail column: the DataArray interface with no prob, as its summary calls it."""
    return arviz_stats.ess(xr.DataArray(x, dims=("chain", "draw")), method="tail").item()


def diagnostics(x, superchains):
    x = np.asarray(x, dtype=float)
    return {
        "rhat": num(az.rhat(x, method="rank")),
        "ess_bulk": num(az.ess(x, method="bulk")),
        "ess_tail": num(ess_tail_arviz1(x)),
        "ess_tail_arviz0": num(az.ess(x, method="tail")),
        "ess_mean": num(az.ess(x, method="mean")),
        "mcse_mean": num(az.mcse(x, method="mean")),
        "mcse_q05": num(az.mcse(x, method="quantile", prob=0.05)),
        "mcse_q95": num(az.mcse(x, method="quantile", prob=0.95)),
        "rhat_nested": num(nested_rhat(x, superchains)),
    }


def arviz1(x):
    """The other statistics as ArviZ 1.x computes them (array interface), to compare."""
    x = np.asarray(x, dtype=float)
    return {
        "rhat": num(array_stats.rhat(x, method="rank")),
        "ess_bulk": num(array_stats.ess(x, method="bulk")),
        "ess_mean": num(array_stats.ess(x, method="mean")),
        "mcse_mean": num(array_stats.mcse(x, method="mean")),
        "mcse_q05": num(array_stats.mcse(x, method="quantile", prob=0.05)),
        "mcse_q95": num(array_stats.mcse(x, method="quantile", prob=0.95)),
        "ess_tail_arviz0_prob089": num(az.ess(x, method="tail", prob=arviz_base.rcParams["stats.ci_prob"])),
    }


def relative(a, b):
    if a is None or b is None:
        return 0.0 if a is None and b is None else math.inf
    return abs(a - b) / abs(b) if b != 0 else abs(a)


def ar1(rng, chains, draws, rho):
    x = np.empty((chains, draws))
    x[:, 0] = rng.standard_normal(chains)
    scale = math.sqrt(1.0 - rho * rho)
    for t in range(1, draws):
        x[:, t] = rho * x[:, t - 1] + scale * rng.standard_normal(chains)
    return x


def as_lists(a):
    # json writes repr(float): the shortest text that reads back as the same double.
    return [[float(v) for v in row] for row in a]


def main():
    cases = []

    def add(name, x, superchains, note):
        cases.append(
            {
                "name": name,
                "note": note,
                "superchains": superchains,
                "draws": as_lists(x),
                "expected": diagnostics(x, superchains),
            }
        )

    rng = np.random.default_rng(20240601)
    add("iid_normal_4x100", rng.standard_normal((4, 100)), 2, "independent N(0,1)")
    add("ar1_rho0.9_8x50", ar1(np.random.default_rng(7), 8, 50, 0.9), 4, "AR(1), rho = 0.9")
    x = np.random.default_rng(11).standard_normal((16, 20))
    x[5] += 3.0
    add("shifted_chain_16x20", x, 4, "chain 5 shifted by +3 (not converged)")
    add("student_t3_4x100", np.random.default_rng(13).standard_t(3, (4, 100)), 2, "heavy tails, Student-t(3)")
    add(
        "ties_rounded_4x100",
        np.round(np.random.default_rng(17).standard_normal((4, 100)), 1),
        2,
        "N(0,1) rounded to one decimal: many ties",
    )
    add(
        "odd_draws_ar1_6x41",
        ar1(np.random.default_rng(19), 6, 41, 0.5),
        3,
        "odd number of draws: the middle draw is dropped when splitting",
    )
    add(
        "antithetic_4x60",
        ar1(np.random.default_rng(23), 4, 60, -0.6),
        2,
        "negatively correlated AR(1): ESS above the draw count",
    )
    add(
        "many_short_chains_64x8",
        ar1(np.random.default_rng(29), 64, 8, 0.3) + np.repeat(np.random.default_rng(31).normal(0, 0.5, 8), 8)[:, None],
        8,
        "64 chains of 8 draws, superchains with offset means",
    )
    add(
        "long_ar1_rho0.95_2x1000",
        ar1(np.random.default_rng(53), 2, 1000, 0.95),
        2,
        "long strongly autocorrelated chains (FFT length 1024, long Geyer sequence); one chain per superchain",
    )
    # numpy's and scipy's roundings of one type-7 quantile disagree here: (n - 1)·0.11 is
    # just below 55, numpy's quantile (ArviZ 1.x) puts the 0.11 threshold an ulp below the
    # draw 165 and scipy's mquantiles (0.23) on it, so the indicators differ in that draw;
    # the lower tail is sticky, so its ESS is the minimum.
    v = np.sort(np.random.default_rng(73).permutation(501).astype(float) * 3.0)
    add(
        "threshold_rounding_3x167",
        np.concatenate([v[:80], np.random.default_rng(73).permutation(v[80:])]).reshape(3, 167),
        3,
        "distinct multiples of 3, the 80 smallest in order at the start of chain 0: the 0.11 quantile's rounding matters",
    )
    add("ar1_4x30_one_chain_per_superchain", ar1(np.random.default_rng(59), 4, 30, 0.4), 4, "nested R-hat with M = 1")
    add("single_draw_8x1", np.random.default_rng(61).standard_normal((8, 1)), 4, "one draw per chain: nested R-hat with W_k = 0")
    add("one_chain_1x100", ar1(np.random.default_rng(37), 1, 100, 0.5), 1, "one chain: R-hat undefined")
    add("constant_3x10", np.full((3, 10), 2.5), 3, "constant draws")
    add("three_draws_4x3", np.random.default_rng(41).standard_normal((4, 3)), 2, "fewer than 4 draws")

    energy_cases = []
    e = ar1(np.random.default_rng(43), 4, 200, 0.8) * 3.0 + 50.0
    energy_cases.append({"name": "energy_ar1_4x200", "energy": as_lists(e), "bfmi": [num(v) for v in az.bfmi(e)]})
    e = np.random.default_rng(47).gamma(5.0, 2.0, (2, 150))
    energy_cases.append({"name": "energy_gamma_2x150", "energy": as_lists(e), "bfmi": [num(v) for v in az.bfmi(e)]})

    # The special functions behind rank normalisation and the quantile MCSE.
    probs = [1e-12, 1e-6, 1.5e-3, 0.02, 0.02425, 0.1, 0.3, 0.4999, 0.5, 0.6, 0.9, 0.97575, 0.999, 1 - 1e-9]
    normal_quantile = [[p, float(stats.norm.ppf(p))] for p in probs]
    beta_quantile = []
    for ess, prob in [(3.0, 0.05), (57.3, 0.05), (400.0, 0.95), (2.5e4, 0.05), (3.0e6, 0.95)]:
        a, b = ess * prob + 1, ess * (1 - prob) + 1
        for p in (0.1586553, 0.8413447):
            beta_quantile.append([p, a, b, float(stats.beta.ppf(p, a, b))])

    # How far ArviZ 1.x is from the 0.23 values above, statistic by statistic (and how far
    # ArviZ 0.23's ess(method="tail", prob=0.89) is from 1.x's tail ESS).
    agreement = {}
    for c in cases:
        e, one = c["expected"], arviz1(c["draws"])
        for k, v in one.items():
            ref = e["ess_tail"] if k == "ess_tail_arviz0_prob089" else e[k]
            agreement[k] = max(agreement.get(k, 0.0), relative(v, ref))

    out = {
        "generator": {
            "script": "scripts/make_diagnostics_reference.py",
            "arviz": az.__version__,
            "arviz_stats": arviz_stats.__version__,
            "arviz_base": arviz_base.__version__,
            "tail_prob": arviz_base.rcParams["stats.ci_prob"],
            "arviz1_agreement": agreement,
            "numpy": np.__version__,
            "scipy": scipy.__version__,
            "python": sys.version.split()[0],
        },
        "cases": cases,
        "energy": energy_cases,
        "normal_quantile": normal_quantile,
        "beta_quantile": beta_quantile,
    }
    path = "tests/data/diagnostics_reference.json"
    with open(path, "w") as f:
        json.dump(out, f, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {path}")
    print("largest relative deviation of ArviZ 1.x from the values of ArviZ 0.23:", agreement)
    for c in cases:
        print(c["name"], c["expected"])
    for c in energy_cases:
        print(c["name"], c["bfmi"])


if __name__ == "__main__":
    main()
