#!/usr/bin/env bash
# tests/posteriordb/check_example.sh NAME [--kernels] [KEY=VALUE ...]
# Runs examples/posteriordb/NAME with its config.json (and the overrides KEY=VALUE) on 1 rank
# with 2 threads and on 2 ranks with 1 thread each; the draws must be byte-identical, and the
# run must pass the example's check.py against posteriordb's reference. --kernels: once with
# sampler.algorithm=nuts, once with hmc (ChEES) and once with mams, each run and checked as above.
# Environment (set by tests/posteriordb/CMakeLists.txt): HMC (an hmc with the example models),
# MPIEXEC, MPIEXEC_FLAGS, HMC_SOURCE_DIR, PYTHON.
set -uo pipefail
name=$1
shift
kernels=("")
if [[ ${1:-} == --kernels ]]; then kernels=(nuts hmc mams); shift; fi
sets=()
for s in "$@"; do sets+=(--set "$s"); done
dir=$HMC_SOURCE_DIR/examples/posteriordb/$name
work=$(mktemp -d "${TMPDIR:-/tmp}/hmc-posteriordb-$name.XXXXXX")
trap 'rm -rf "$work"' EXIT
export OMP_PROC_BIND=${OMP_PROC_BIND:-false}
PYTHON=${PYTHON:-python3}
failed=0
fail() { echo "FAIL: $*"; failed=1; }

for kernel in "${kernels[@]}"; do
  ksets=("${sets[@]}")
  [[ -n $kernel ]] && ksets+=(--set "sampler.algorithm=$kernel")
  tag=$name${kernel:+-$kernel}
  ref=""
  for run in "1 2" "2 1"; do
    read -r np threads <<<"$run"
    out=$work/$tag-np$np
    start=$SECONDS
    # shellcheck disable=SC2086  # MPIEXEC_FLAGS is a list of flags
    if ! (cd "$dir" && OMP_NUM_THREADS=$threads "$MPIEXEC" -n "$np" $MPIEXEC_FLAGS "$HMC" --config config.json \
        --set "output.dir=$out" --set log.level=warn "${ksets[@]}" >"$out.log" 2>&1); then
      fail "$tag on $np rank(s): $(grep -v "^ *$" "$out.log" | tail -12)"
      continue
    fi
    h=$(sha256sum <"$out/draws.nc" | cut -d' ' -f1)
    echo "$tag: $np rank(s) x $threads thread(s): $((SECONDS - start)) s, draws.nc $h"
    if [[ -z $ref ]]; then
      ref=$h
      "$PYTHON" "$dir/check.py" "$out" || fail "$tag: the reference check"
    elif [[ $h != "$ref" ]]; then
      fail "$tag: draws on 2 ranks differ from 1 rank ($h != $ref)"
    fi
  done
  if [[ -n $kernel ]] && ! grep -q "\"algorithm\": \"$kernel\"" "$out/summary.json"; then
    fail "$tag: summary.json does not say algorithm $kernel"
  fi
done
exit $failed
