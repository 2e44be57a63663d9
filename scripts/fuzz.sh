#!/usr/bin/env bash
# scripts/fuzz.sh - build the libFuzzer harness (tests/fuzz) with clang, ASan and
# UBSan in a build dir of its own, and fuzz config + data parsing and --set handling.
#
# Usage: scripts/fuzz.sh [SECONDS] [libFuzzer options...]
#   SECONDS   how long to fuzz (default 60); 0: build, and run the seeds once
#   e.g. scripts/fuzz.sh 600 -jobs=2 -workers=2
#        build-fuzz/bin/hmc_fuzz_config CRASH_FILE   (replay one input)
#
# Seeds, rebuilt at every call into $HMC_FUZZ_BUILD_DIR/fuzz/seeds: every
# tests/cli/bad/**/*.json and configs/*.json, each with the data file it names
# as its data section (tests/fuzz/framing.hpp), plus a few --set variants, plus
# the past findings in tests/fuzz/regressions/ (add each fixed finding there).
# The corpus the fuzzer grows stays in $HMC_FUZZ_BUILD_DIR/fuzz/corpus between
# calls. A finding (crash, sanitizer report, exception other than hmc's
# ConfigError/DataError/RunError, timeout, out-of-memory) is saved in
# $HMC_FUZZ_BUILD_DIR/fuzz/findings/ and the script exits 1.
#
# Environment:
#   HMC_FUZZ_BUILD_DIR  build directory, relative to the repo root (default build-fuzz)
#   HMC_FUZZ_MAX_LEN    largest input in bytes (default 65536)
#   HMC_JOBS            parallel build jobs (default: nproc)
#   Kokkos_ROOT, HMC_CACHE, HMC_VERBOSE  as for scripts/setup.sh
# Installs clang, its runtimes (libFuzzer, ASan, UBSan) and libomp when missing
# (apt-get, as scripts/setup.sh does); idempotent otherwise.
set -euo pipefail
shopt -s inherit_errexit

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
cd "$ROOT"

if [[ "${1:-}" == -h || "${1:-}" == --help ]]; then
  sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"
  exit 0
fi
SECONDS_TO_FUZZ=60
if [[ "${1:-}" =~ ^[0-9]+$ ]]; then
  SECONDS_TO_FUZZ=$1
  shift
fi

# clang: the compiler; libclang-rt-dev: libFuzzer and the sanitizer runtimes;
# libomp-dev: clang's omp.h and OpenMP runtime, for Kokkos' OpenMP backend.
FUZZ_PACKAGES=(clang libclang-rt-dev libomp-dev)
CACHE=${HMC_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/hmc}
BUILD_DIR=${HMC_FUZZ_BUILD_DIR:-build-fuzz}
JOBS=${HMC_JOBS:-$(nproc 2>/dev/null || echo 2)}
MAX_LEN=${HMC_FUZZ_MAX_LEN:-65536}
FUZZ_DIR=$BUILD_DIR/fuzz

LOG_PREFIX=fuzz
# shellcheck source=scripts/lib.sh
source "$ROOT/scripts/lib.sh"  # log, die, run_logged

# ------------------------------------------------------------- packages ---
# What hmc itself needs, and Kokkos (built by g++; clang links against it).
scripts/setup.sh --deps-only

pkg_installed() {
  local status
  # shellcheck disable=SC2016  # ${Status} is dpkg-query's format, not bash's
  status=$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null) || return 1
  [[ "$status" == "install ok installed" ]]
}
missing=()
for p in "${FUZZ_PACKAGES[@]}"; do pkg_installed "$p" || missing+=("$p"); done
if ((${#missing[@]} > 0)); then
  sudo=()
  if ((EUID != 0)); then
    command -v sudo >/dev/null 2>&1 || die "missing packages: ${missing[*]}; run as root, or: apt-get install ${missing[*]}"
    sudo=(sudo)
  fi
  log "packages: installing ${missing[*]} (log: $CACHE/logs/apt.log)"
  run_logged "$CACHE/logs/apt.log" "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
  run_logged "$CACHE/logs/apt.log" "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y --no-install-recommends "${missing[@]}"
fi
command -v clang++ >/dev/null 2>&1 || die "clang++ not found after installing ${FUZZ_PACKAGES[*]}"

# ---------------------------------------------------------------- build ---
# The Kokkos scripts/setup.sh uses: Kokkos_ROOT, else its own build in the
# cache, else whatever find_package finds on the system.
kokkos_args=()
if [[ -n "${Kokkos_ROOT:-}" ]]; then
  kokkos_args=(-DKokkos_ROOT="$Kokkos_ROOT")
elif [[ -f "$CACHE/kokkos-3.4.1/.hmc-kokkos-stamp" ]]; then
  kokkos_args=(-DKokkos_ROOT="$CACHE/kokkos-3.4.1")
fi

t0=$SECONDS
mkdir -p "$BUILD_DIR"
# Configuring again with the same arguments is cheap and rebuilds nothing.
run_logged "$BUILD_DIR/fuzz-configure.log" cmake -S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_COMPILER=clang++ -DHMC_BUILD_TESTS=OFF -DHMC_ENABLE_SANITIZERS=ON -DHMC_BUILD_FUZZERS=ON \
  "${kokkos_args[@]}"
: >"$BUILD_DIR/fuzz-build.log"
run_logged "$BUILD_DIR/fuzz-build.log" cmake --build "$BUILD_DIR" -j "$JOBS" --target hmc_fuzz_config hmc_fuzz_seed
log "build: $BUILD_DIR/bin/hmc_fuzz_config ready ($((SECONDS - t0)) s, log: $BUILD_DIR/fuzz-build.log)"

# ---------------------------------------------------------------- seeds ---
seed_tool=$BUILD_DIR/bin/hmc_fuzz_seed
rm -rf "$FUZZ_DIR/seeds"
mkdir -p "$FUZZ_DIR/seeds" "$FUZZ_DIR/corpus" "$FUZZ_DIR/findings"
n=0
while IFS= read -r -d '' f; do
  "$seed_tool" "$f" "$FUZZ_DIR/seeds/$(printf '%04d' "$n")-$(basename "$f")"
  n=$((n + 1))
done < <(find tests/cli/bad configs -name '*.json' -not -path 'configs/data/*' -print0 2>/dev/null | sort -z)
# the same configs through --set: a few overrides the CLI tests use, right and wrong
if [[ -f configs/coin_toss.json ]]; then
  "$seed_tool" configs/coin_toss.json "$FUZZ_DIR/seeds/set-1" sampler.particles=64 'output.dir="x"' sampler.adapt.metric=dense
  "$seed_tool" configs/coin_toss.json "$FUZZ_DIR/seeds/set-2" sampler.init.strategy=values 'sampler.init.values=[0.1,0.2]' model.priors.a=-1
  "$seed_tool" configs/coin_toss.json "$FUZZ_DIR/seeds/set-3" model.data=data.json 'model.data={"tosses":[[1,0],[0]]}' sampler..x=1
  n=$((n + 3))
fi
# inputs that once failed (already framed): they stay fixed
for f in tests/fuzz/regressions/*; do
  [[ -f $f ]] || continue
  cp "$f" "$FUZZ_DIR/seeds/regression-$(basename "$f")"
  n=$((n + 1))
done
((n > 0)) || die "no seeds found (tests/cli/bad, configs)"
log "seeds: $n in $FUZZ_DIR/seeds"

# ------------------------------------------------------------------ run ---
# detect_leaks=0: Open MPI and Kokkos keep allocations alive until exit by design.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
fuzz_args=(-max_len="$MAX_LEN" -timeout=10 -rss_limit_mb=2048 -dict=tests/fuzz/hmc.dict
  -artifact_prefix="$FUZZ_DIR/findings/" -print_final_stats=1)
if ((SECONDS_TO_FUZZ == 0)); then
  fuzz_args+=(-runs=0)
else
  fuzz_args+=(-max_total_time="$SECONDS_TO_FUZZ")
fi
log "running $BUILD_DIR/bin/hmc_fuzz_config for ${SECONDS_TO_FUZZ} s (log: $FUZZ_DIR/fuzz.log)"
rc=0
"$BUILD_DIR/bin/hmc_fuzz_config" "${fuzz_args[@]}" "$@" "$FUZZ_DIR/corpus" "$FUZZ_DIR/seeds" \
  >"$FUZZ_DIR/fuzz.log" 2>&1 || rc=$?
grep -E '^(stat::number_of_executed_units|stat::average_exec_per_sec|stat::new_units_added)' "$FUZZ_DIR/fuzz.log" |
  sed 's/^/fuzz:   /' >&2 || true
if ((rc != 0)); then
  log "FAILED: the fuzzer stopped with exit code $rc; last lines of $FUZZ_DIR/fuzz.log:"
  grep -vE '^#[0-9]+[[:space:]]+(NEW|REDUCE|pulse)' "$FUZZ_DIR/fuzz.log" | tail -n 60 | sed 's/^/  | /' >&2
  log "what it was:"
  grep -E 'what\(\)|ERROR: |runtime error|SUMMARY: ' "$FUZZ_DIR/fuzz.log" | head -n 10 | sed 's/^/  | /' >&2 || true
  log "reproducers in $FUZZ_DIR/findings/: $(find "$FUZZ_DIR/findings" -type f -printf "%f ")"
  log "replay one: $BUILD_DIR/bin/hmc_fuzz_config $FUZZ_DIR/findings/FILE"
  exit 1
fi
log "passed: no findings in ${SECONDS_TO_FUZZ} s; corpus: $(find "$FUZZ_DIR/corpus" -type f | wc -l) inputs in $FUZZ_DIR/corpus"
