#!/usr/bin/env bash
# scripts/test.sh - build hmc with its tests (scripts/setup.sh --tests), then
# run them with ctest.
#
# Usage: scripts/test.sh [ctest options...]
#   e.g. scripts/test.sh -R sampler -j 2
# Without a label or name selection (-L, -LE, -R, -E) it leaves out the tests labelled
# `precise` (the posteriordb examples with their shipped configs, a few minutes:
# scripts/test.sh -L precise runs them; docs/testing.md).
# Exits with ctest's exit code. The environment of scripts/setup.sh applies
# (HMC_BUILD_DIR, HMC_CACHE, Kokkos_ROOT, ...).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
cd "$ROOT"

if [[ "${1:-}" == -h || "${1:-}" == --help ]]; then
  sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"
  exit 0
fi

scripts/setup.sh --tests

if ((EUID == 0)); then # Open MPI refuses to run as root without these
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
# MPI tests may ask for more ranks than this machine has cores
export OMPI_MCA_rmaps_base_oversubscribe=1
# keeps Kokkos' OpenMP backend from warning that OMP_PROC_BIND is unset
export OMP_PROC_BIND=${OMP_PROC_BIND:-false}

select=()
for arg in "$@"; do
  case $arg in -L | -LE | -R | -E | --label-regex* | --label-exclude* | --tests-regex* | --exclude-regex*) select=(x) ;; esac
done
((${#select[@]})) || set -- "$@" -LE precise
exec ctest --test-dir "${HMC_BUILD_DIR:-build}" --output-on-failure "$@"
