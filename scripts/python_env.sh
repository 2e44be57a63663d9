#!/usr/bin/env bash
# scripts/python_env.sh - a cached Python virtual environment with the tools hmc's users
# read its output with (ArviZ, xarray, pandas, netCDF4), for the Python tests and the
# examples in docs/output.md. Prints the path of its python on stdout.
#
# Usage: py=$(scripts/python_env.sh) && "$py" -c 'import arviz'
#        py=$(scripts/python_env.sh arviz1)     ArviZ 1.x instead of 0.23 (needs a Python >= 3.12)
#        py=$(scripts/python_env.sh bench)      the default packages plus NumPyro, BlackJAX, optax and JAX (CPU),
#                                               for scripts/bench
#        py=$(scripts/python_env.sh methods)    the bench set plus nutpie, for scripts/methods_bench.py (the
#                                               section methods of scripts/bench)
#        py=$(scripts/python_env.sh reference)  ArviZ 0.23 and arviz-stats 1.x side by side, for
#                                               scripts/make_diagnostics_reference.py (needs a Python >= 3.12)
#        py=$(scripts/python_env.sh stan)       PyStan 3.14 (Stan through httpstan) with ArviZ 0.23, for
#                                               scripts/stan_bench.py, the section stan of scripts/bench
#                                               (needs a Python >= 3.12 and a C++ compiler, g++)
# The default and bench sets use python3; it installs python3-venv with apt-get if that is
# missing (as root). arviz1, reference and stan use the first Python >= 3.12 among $HMC_PYTHON312,
# python3.12, python3.13, python3.14 and python3 on PATH and ~/.pyenv/versions/3.1[2-9]*;
# with none, they exit with code 3 (a caller may skip). The pinned packages come from PyPI
# into $HMC_CACHE/python-venv-<hash of the pins (and of the Python for arviz1, reference, stan)>;
# the second call only checks that the environment imports. Environment: HMC_CACHE
# (default ~/.cache/hmc), HMC_PYTHON312 (the Python for arviz1, reference and stan).
# Progress and errors go to stderr; the exit code is non-zero on failure.
set -euo pipefail

# ArviZ 0.23.4: the diagnostics of hmc were transcribed from it and are checked against it
# (scripts/make_diagnostics_reference.py), tail ESS excepted, which follows ArviZ 1.x.
PINS=(arviz==0.23.4 netCDF4 xarray pandas numpy scipy)
IMPORTS="arviz, netCDF4, xarray, pandas"
BASE=python3
# ArviZ 1.x (arviz-base, arviz-stats, arviz-plots; draws.nc opens as an xarray DataTree),
# the version the tail ESS of summary.json follows and the python tests check it against.
ARVIZ1=(arviz==1.3.0 arviz-base==1.3.1 arviz-stats==1.3.3 arviz-plots==1.3.2)
# The set "bench" adds the peers that scripts/bench measures hmc against: NumPyro 0.22 (the
# version of the figures in issue 9) and BlackJAX 1.7.1 with optax 0.2.8 (ChEES-HMC, the
# version of the project's shared benchmark notes; its warmup's optimiser is optax's Adam) on
# JAX's CPU wheels (jax 0.10.2 on Python 3.11: blackjax 1.7.1 needs jax >= 0.9, numpyro 0.22
# jax >= 0.7). It is a venv of its own (another hash), so the default one of the python tests
# is not rebuilt for it.
# The set "methods" is the set "bench" plus nutpie 0.16.8 (its Rust NUTS with the Fisher-divergence
# diagonal and low-rank mass matrix adaptation, fed a Python log density and gradient through
# nutpie.compiled_pyfunc.from_pyfunc, so neither Stan nor PyMC is needed), for scripts/methods_bench.py.
# A venv of its own, so the set "bench" is not rebuilt for it.
# The set "stan" is Stan as a peer (scripts/stan_bench.py): PyStan 3.14.0 (httpstan 4.17, which
# compiles each Stan program with the system's g++ and caches it under ~/.cache/httpstan) and
# ArviZ 0.23.4 for the ESS, as in the default set. PyStan 3.14 is published for Python >= 3.12
# only (on 3.11 pip finds 3.10.0 at most), hence BASE=3.12.
case ${1:-default} in
  default) ;;
  bench) PINS+=(numpyro==0.22.0 blackjax==1.7.1 optax==0.2.8 "jax[cpu]"); IMPORTS+=", jax, numpyro, blackjax, optax" ;;
  methods) PINS+=(numpyro==0.22.0 blackjax==1.7.1 optax==0.2.8 "jax[cpu]" nutpie==0.16.8)
    IMPORTS+=", jax, numpyro, blackjax, optax, nutpie" ;;
  arviz1) PINS=("${ARVIZ1[@]}" matplotlib netCDF4 xarray pandas numpy scipy); IMPORTS+=", arviz_base, arviz_stats, matplotlib"
    BASE=3.12 ;;
  reference)
    # arviz-stats without the arviz 1.x package: its module arviz_stats sits beside arviz 0.23.
    PINS=(arviz==0.23.4 arviz-base==1.3.1 arviz-stats==1.3.3 numpy scipy)
    IMPORTS="arviz, arviz_base, arviz_stats, scipy"; BASE=3.12 ;;
  stan) PINS=(pystan==3.14.0 arviz==0.23.4 numpy); IMPORTS="stan, arviz, numpy"; BASE=3.12 ;;
  *) echo "python_env: unknown package set '$1' (default, arviz1, bench, methods, reference, stan)" >&2; exit 2 ;;
esac

say() { echo "python_env: $*" >&2; }

# The first Python >= 3.12 that runs and has venv (a pyenv shim for a version that is
# not selected exits non-zero, so every candidate is tried, not just looked up).
find_python312() {
  local c
  local -a candidates=()
  [[ -n ${HMC_PYTHON312:-} ]] && candidates+=("$HMC_PYTHON312")
  candidates+=(python3.12 python3.13 python3.14 python3)
  local pyenv=${PYENV_ROOT:-${HOME:-/root}/.pyenv}/versions
  for c in "$pyenv"/3.1[2-9]*/bin/python3; do [[ -x $c ]] && candidates+=("$c"); done
  for c in "${candidates[@]}"; do
    if "$c" -c 'import sys, ensurepip, venv; sys.exit(sys.version_info < (3, 12))' >/dev/null 2>&1; then
      "$c" -c 'import sys; print(sys.executable)'
      return 0
    fi
  done
  return 1
}

extra=""
if [[ $BASE == 3.12 ]]; then
  if ! BASE=$(find_python312); then
    say "no Python >= 3.12 found (tried \$HMC_PYTHON312, python3.12, python3.13, python3.14, python3 and" \
      "${PYENV_ROOT:-~/.pyenv}/versions/3.1[2-9]*); set HMC_PYTHON312 to one"
    exit 3
  fi
  extra=$("$BASE" -c 'import platform; print("python", platform.python_version())')
fi

CACHE=${HMC_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/hmc}
tag=$({ printf '%s\n' "${PINS[@]}"; [[ -z $extra ]] || printf '%s\n' "$extra"; } | sha256sum | cut -c1-12)
venv="$CACHE/python-venv-$tag"
log="$CACHE/logs/python-venv.log"
mkdir -p "$CACHE/logs"

# .complete is written last: an environment whose install was cut off is made anew.
if [[ -e "$venv/.complete" ]] && "$venv/bin/python" -W ignore -c "import $IMPORTS" 2>/dev/null; then
  echo "$venv/bin/python"
  exit 0
fi

if [[ $BASE == python3 ]] && ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
  if ((EUID != 0)); then
    say "python3-venv is missing; install it (apt-get install python3-venv) and run again"; exit 1
  fi
  say "installing python3-venv (log: $log)"
  { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3-venv; } \
    >>"$log" 2>&1 || { tail -20 "$log" >&2; say "apt-get install python3-venv failed"; exit 1; }
fi

start=$SECONDS
say "creating $venv with ${PINS[*]}${extra:+ on $extra} (log: $log)"
rm -rf "$venv"
if ! { "$BASE" -m venv "$venv" && "$venv/bin/pip" install --disable-pip-version-check -q "${PINS[@]}"; } \
  >>"$log" 2>&1; then
  tail -20 "$log" >&2
  rm -rf "$venv"
  say "pip install failed"; exit 1
fi
"$venv/bin/python" -W ignore -c "import $IMPORTS" || { say "the new environment does not import"; exit 1; }
"$venv/bin/pip" freeze --disable-pip-version-check >"$venv/.complete"
say "ready in $((SECONDS - start)) s"
echo "$venv/bin/python"
