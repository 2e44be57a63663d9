#!/usr/bin/env python3
"""Summarise a posteriordb reference posterior into the small reference.json kept next to an example's data.

posteriordb (github.com/stan-dev/posteriordb, BSD-3-Clause) stores for some posteriors 10 chains x 1,000
thinned Stan draws. hmc keeps only their summary: per parameter the mean, sd, and their Monte Carlo
standard errors (ArviZ 0.23: mcse_mean, mcse_sd) and bulk ESS, which is what an example's check.py needs
(examples/posteriordb/reference_check.py).

Usage: py=$(scripts/python_env.sh) && "$py" scripts/make_posteriordb_reference.py POSTERIORDB POSTERIOR OUT.json
  POSTERIORDB  a clone of posteriordb (a git directory or a work tree)
  POSTERIOR    a posterior name, e.g. arK-arK
e.g. "$py" scripts/make_posteriordb_reference.py ~/posteriordb arK-arK examples/posteriordb/arK/reference.json
"""
import io
import json
import os
import subprocess
import sys
import zipfile

import arviz as az
import numpy as np


def read_zip(repo, path):
    """The one member of posterior_database/PATH (a .zip), from a work tree or, failing that, git HEAD."""
    full = os.path.join(repo, "posterior_database", path)
    if os.path.exists(full):
        blob = open(full, "rb").read()
    else:
        blob = subprocess.run(["git", "-C", repo, "show", "HEAD:posterior_database/" + path],
                              check=True, capture_output=True).stdout
    with zipfile.ZipFile(io.BytesIO(blob)) as z:
        return z.read(z.namelist()[0])


def commit_of(repo):
    try:
        return subprocess.run(["git", "-C", repo, "rev-parse", "HEAD"], check=True, capture_output=True,
                              text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    repo, posterior, out = sys.argv[1:]
    chains = json.loads(read_zip(repo, f"reference_posteriors/draws/draws/{posterior}.json.zip"))
    names = list(chains[0].keys())
    params = {}
    for name in names:
        draws = np.array([c[name] for c in chains], dtype=float)  # chains x draws
        params[name] = {
            "mean": float(draws.mean()),
            "sd": float(draws.std(ddof=1)),
            "mcse_mean": float(az.mcse(draws, method="mean")),
            "mcse_sd": float(az.mcse(draws, method="sd")),
            "ess_bulk": float(az.ess(draws, method="bulk")),
        }
    ref = {
        "posterior": posterior,
        "source": {
            "repository": "https://github.com/stan-dev/posteriordb (BSD-3-Clause)",
            "commit": commit_of(repo),
            "draws": f"posterior_database/reference_posteriors/draws/draws/{posterior}.json.zip",
            "chains": len(chains),
            "draws_per_chain": len(chains[0][names[0]]),
            "summarised_by": "scripts/make_posteriordb_reference.py (ArviZ " + az.__version__ + ")",
        },
        "parameter_order": names,
        "parameters": params,
    }
    with open(out, "w") as f:
        json.dump(ref, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
