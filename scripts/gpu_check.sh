#!/usr/bin/env bash
# scripts/gpu_check.sh - the one-command check of a GPU build (docs/gpu.md): runs its unit
# and statistical test binaries, checks that 1 and 2 ranks on one GPU give the same draws,
# and measures throughput with scripts/bench at 1,024 and 65,536 particles against
# NumPyro's GPU side by side (the HMM with /model/forward sequential and parallel too),
# writing one report.
#
# Usage: scripts/gpu_check.sh BUILD_DIR [--out DIR] [--quick]
#   BUILD_DIR  a build against a CUDA Kokkos (cmake --preset cuda): BUILD_DIR/bin/hmc and
#              the test binaries (hmc_unit_tests, hmc_io_tests, hmc_dist_tests,
#              hmc_stats_tests); a binary that is missing is reported, not fatal
#   --out DIR  where report.md and the logs go (default output/gpu_check/<UTC time>)
#   --quick    the benchmark at small sizes only (checks that the script runs end to end)
# Each step has a time limit, so that the whole check stays under 10 minutes on one H200.
# Exits 0 when every step that ran passed, 1 otherwise. NumPyro (with JAX for the GPU) is
# taken from python3 where it imports, else from scripts/python_env.sh bench.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
if [[ $# -lt 1 || "$1" == -h || "$1" == --help ]]; then
  sed -n '2,/^set -uo/{/^set -uo/d;s/^# \{0,1\}//;p}' "$0"
  [[ $# -lt 1 ]] && exit 2 || exit 0
fi
BUILD=$(cd "$1" && pwd -P) || { echo "gpu_check: no build directory $1" >&2; exit 2; }
shift
OUT="" QUICK=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --out) OUT=$2; shift 2 ;;
    --quick) QUICK=1; shift ;;
    *) echo "gpu_check: unknown option $1" >&2; exit 2 ;;
  esac
done
OUT=${OUT:-$ROOT/output/gpu_check/$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd -P)
REPORT=$OUT/report.md
HMC=$BUILD/bin/hmc
export OMP_PROC_BIND=${OMP_PROC_BIND:-false}
if ((EUID == 0)); then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
export OMPI_MCA_rmaps_base_oversubscribe=1
failures=0
start=$(date +%s)

say() { printf '%s\n' "$*" | tee -a "$REPORT"; }
# step NAME LIMIT_S COMMAND...: runs it with a time limit, its output into OUT/NAME.log, and
# one line in the report.
step() {
  local name=$1 limit=$2
  shift 2
  local t0 rc
  t0=$(date +%s)
  timeout "$limit" "$@" >"$OUT/$name.log" 2>&1
  rc=$?
  local took=$(($(date +%s) - t0))
  if ((rc == 0)); then
    say "| $name | passed | ${took} s | |"
  else
    failures=$((failures + 1))
    local why="exit $rc"
    ((rc == 124)) && why="over its ${limit} s limit"
    say "| $name | FAILED ($why) | ${took} s | \`$(tail -n 1 "$OUT/$name.log" | tr '|`' '/ ' | cut -c1-120)\` |"
  fi
  return $rc
}

: >"$REPORT"
say "# hmc GPU check"
say ""
say "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
say "- build: $BUILD ($("$HMC" --version 2>/dev/null | head -n 1 || echo 'no hmc binary'))"
if command -v nvidia-smi >/dev/null; then
  say "- device: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | head -n 1)"
else
  say "- device: nvidia-smi not found"
fi
say "- host: $(nproc) cores, $(uname -m)"
say "- command: scripts/gpu_check.sh $BUILD$([[ $QUICK == 1 ]] && echo ' --quick')"
say ""
say "## Tests"
say ""
say "| step | result | time | last line |"
say "|---|---|---|---|"

# 1. The unit and statistical test binaries (GoogleTest; a GPU build skips the host-only ones).
for t in hmc_unit_tests hmc_io_tests hmc_dist_tests hmc_stats_tests; do
  if [[ -x $BUILD/bin/$t ]]; then
    step "$t" 240 "$BUILD/bin/$t" --gtest_brief=1
  else
    say "| $t | missing ($BUILD/bin/$t) | | |"
    failures=$((failures + 1))
  fi
done

# 2. Reproducibility: the same seed on 1 and 2 ranks sharing the GPU gives the same draws.
repro() {
  local dir=$OUT/repro n
  rm -rf "$dir"
  for n in 1 2; do
    mpirun -np "$n" "$HMC" --config "$ROOT/configs/hmm_categorical.json" --set sampler.particles=256 \
      --set sampler.warmup=40 --set sampler.draws=20 --set output.formats=csv \
      --set output.dir="$dir/np$n" --set log.level=warn || return 1
  done
  for f in draws.csv particles.csv; do
    cmp "$dir/np1/$f" "$dir/np2/$f" || { echo "$f differs between 1 and 2 ranks"; return 1; }
  done
  echo "draws.csv and particles.csv identical on 1 and 2 ranks"
}
if command -v mpirun >/dev/null; then
  export -f repro
  export OUT HMC ROOT
  step reproducibility_np1_np2 180 bash -c repro
else
  say "| reproducibility_np1_np2 | skipped: no mpirun | | |"
fi

# 3. Throughput against NumPyro: the four workloads at 1,024 and 65,536 particles, and the
# HMM with each forward pass.
numpyro=(--peer-platform gpu)
if python3 -c 'import numpyro, jax' 2>/dev/null; then
  numpyro+=(--peer-python "$(command -v python3)")
elif ! "$ROOT/scripts/python_env.sh" bench >/dev/null 2>&1; then
  say "NumPyro: not found (neither python3 nor scripts/python_env.sh bench has it); hmc alone"
  numpyro=(--no-numpyro)
fi
sizes=(1024 65536)
((QUICK)) && sizes=(64)
say ""
say "## Throughput"
say ""
say "| step | result | time | last line |"
say "|---|---|---|---|"
for n in "${sizes[@]}"; do
  step "bench_$n" 200 "$ROOT/scripts/bench" --hmc "$HMC" --sections throughput --no-blackjax "${numpyro[@]}" \
    --particles "$n" --repeats 1 --out "$OUT/bench_$n"
  for mode in sequential parallel; do
    step "bench_hmm_${mode}_$n" 60 "$ROOT/scripts/bench" --hmc "$HMC" --sections throughput --no-blackjax \
      --no-numpyro --workloads hmm_k3_t2000 --particles "$n" --repeats 1 --set model.forward=$mode \
      --out "$OUT/bench_hmm_${mode}_$n"
  done
done
for f in "$OUT"/bench_*/bench.md; do
  [[ -f $f ]] || continue
  say ""
  say "### $(basename "$(dirname "$f")")"
  say ""
  sed -n '/^|/p' "$f" | tee -a "$REPORT"
done

say ""
say "Total: $(($(date +%s) - start)) s; $failures step(s) failed. Logs: $OUT"
exit $((failures > 0))
