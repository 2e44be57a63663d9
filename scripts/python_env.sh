#!/usr/bin/env bash
# scripts/python_env.sh - a cached Python virtual environment with the tools hmc's users
# read its output with (ArviZ, xarray, pandas, netCDF4), for the Python tests and the
# examples in docs/output.md. Prints the path of its python on stdout.
#
# Usage: py=$(scripts/python_env.sh) && "$py" -c 'import arviz'
#        py=$(scripts/python_env.sh bench)     the same packages plus NumPyro and JAX (CPU), for scripts/bench
# Installs python3-venv with apt-get if it is missing (as root), then the pinned packages
# from PyPI into $HMC_CACHE/python-venv-<hash of the pins>; the second call only checks
# that the environment imports. Environment: HMC_CACHE (default ~/.cache/hmc).
# Progress and errors go to stderr; the exit code is non-zero on failure.
set -euo pipefail

# ArviZ 0.23.4: the diagnostics of hmc were transcribed from it and are checked against it
# (scripts/make_diagnostics_reference.py). ArviZ 1.x has another API (DataTree).
PINS=(arviz==0.23.4 netCDF4 xarray pandas numpy scipy)
IMPORTS="arviz, netCDF4, xarray, pandas"
# The set "bench" adds the peer that scripts/bench measures hmc against: NumPyro 0.22 (the
# version of the figures in issue 9) on JAX's CPU wheels. It is a venv of its own (another
# hash), so the default one of the python tests is not rebuilt for it.
case ${1:-default} in
  default) ;;
  bench) PINS+=(numpyro==0.22.0 "jax[cpu]"); IMPORTS+=", jax, numpyro" ;;
  *) echo "python_env: unknown package set '$1' (default, bench)" >&2; exit 2 ;;
esac

CACHE=${HMC_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/hmc}
tag=$(printf '%s\n' "${PINS[@]}" | sha256sum | cut -c1-12)
venv="$CACHE/python-venv-$tag"
log="$CACHE/logs/python-venv.log"
mkdir -p "$CACHE/logs"

say() { echo "python_env: $*" >&2; }

# .complete is written last: an environment whose install was cut off is made anew.
if [[ -e "$venv/.complete" ]] && "$venv/bin/python" -c "import $IMPORTS" 2>/dev/null; then
  echo "$venv/bin/python"
  exit 0
fi

if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
  if ((EUID != 0)); then
    say "python3-venv is missing; install it (apt-get install python3-venv) and run again"; exit 1
  fi
  say "installing python3-venv (log: $log)"
  { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3-venv; } \
    >>"$log" 2>&1 || { tail -20 "$log" >&2; say "apt-get install python3-venv failed"; exit 1; }
fi

start=$SECONDS
say "creating $venv with ${PINS[*]} (log: $log)"
rm -rf "$venv"
if ! { python3 -m venv "$venv" && "$venv/bin/pip" install --disable-pip-version-check -q "${PINS[@]}"; } \
  >>"$log" 2>&1; then
  tail -20 "$log" >&2
  rm -rf "$venv"
  say "pip install failed"; exit 1
fi
"$venv/bin/python" -c "import $IMPORTS" || { say "the new environment does not import"; exit 1; }
"$venv/bin/pip" freeze --disable-pip-version-check >"$venv/.complete"
say "ready in $((SECONDS - start)) s"
echo "$venv/bin/python"
