#!/usr/bin/env bash
# scripts/run.sh - build hmc if needed (scripts/setup.sh), then run it.
#
# Usage: scripts/run.sh CONFIG [hmc options...]
#        HMC_RANKS=N scripts/run.sh CONFIG [hmc options...]   # mpirun -np N
#   e.g. scripts/run.sh configs/coin_toss.json --set seed=3
# Runs build/bin/hmc --config CONFIG [hmc options...] in the current
# directory (so relative paths are relative to where you are) and exits with
# hmc's exit code. If the first argument starts with '-' (e.g. --help), all
# arguments go to hmc unchanged. Setup messages go to stderr. The environment
# of scripts/setup.sh applies (HMC_BUILD_DIR, HMC_CACHE, Kokkos_ROOT, ...).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)

usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0" >&2; }
if (($# == 0)); then usage; exit 2; fi
if [[ "$1" == -h && $# == 1 ]]; then usage; exit 0; fi

if [[ "$1" == -* ]]; then
  args=("$@")
else
  [[ -f "$1" ]] || { echo "run: config file '$1' not found" >&2; exit 2; }
  args=(--config "$1" "${@:2}")
fi

"$ROOT/scripts/setup.sh"

BUILD_DIR=${HMC_BUILD_DIR:-build}
[[ "$BUILD_DIR" == /* ]] || BUILD_DIR=$ROOT/$BUILD_DIR
HMC=$BUILD_DIR/bin/hmc

if ((EUID == 0)); then # Open MPI refuses to run as root without these
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

if [[ -n "${HMC_RANKS:-}" ]]; then
  [[ "$HMC_RANKS" =~ ^[1-9][0-9]*$ ]] || { echo "run: HMC_RANKS must be a positive integer, got '$HMC_RANKS'" >&2; exit 2; }
  # --bind-to none: each rank runs OpenMP threads, which a one-core binding would serialise.
  exec mpirun -np "$HMC_RANKS" --oversubscribe --bind-to none "$HMC" "${args[@]}"
fi
exec "$HMC" "${args[@]}"
