#!/usr/bin/env bash
# hmc/distributions against SciPy: hmc_dist_points prints the log densities and gradients at fixed points,
# check_dist.py compares them (one line per mismatch, a summary line; exit 1 on a mismatch).
# Environment (set by ctest): HMC_DIST_POINTS (the binary), HMC_SOURCE_DIR.
set -euo pipefail
: "${HMC_DIST_POINTS:?}" "${HMC_SOURCE_DIR:?}"
py=$("$HMC_SOURCE_DIR/scripts/python_env.sh") || { echo "FAIL: scripts/python_env.sh"; exit 1; }
"$py" -W ignore::RuntimeWarning -W ignore::FutureWarning "$HMC_SOURCE_DIR/tests/python/check_dist.py" --run "$HMC_DIST_POINTS"
