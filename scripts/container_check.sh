#!/usr/bin/env bash
# scripts/container_check.sh - builds the image of the Dockerfile with podman or docker and
# runs its usage lines (the comment at the top of the Dockerfile) as written, `docker` read as
# the engine found, in a scratch folder: the run into the bind-mounted out/, the run under
# mpirun, hmc-build-model on a model header (examples/poisson_regression's, as my_model.hpp)
# and the executable it built. Then it checks what the lines left (out/'s files, run.json's
# instruction-set level, hmc-mine) and what the image holds: hmc's install and Kokkos', no
# sources, build tree or .git.
#
# Usage: scripts/container_check.sh            (exit 0: passed; 1: a check failed;
#                                               77: no working podman or docker here, skipped)
# Environment: HMC_CONTAINER_ENGINE=podman|docker picks the engine.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

engine="" found=""
for e in ${HMC_CONTAINER_ENGINE:-podman docker}; do
  command -v "$e" >/dev/null 2>&1 || continue
  found=${found:-$e}
  if "$e" info >/dev/null 2>&1; then engine=$e; break; fi
done
if [[ -z $engine ]]; then
  if [[ -n $found ]]; then
    echo "container_check: '$found info' fails here (no daemon or service); skipped"
  else
    echo "container_check: no podman or docker here; skipped"
  fi
  exit 77
fi

failures=0
fail() { echo "container_check: FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "container_check: ok: $*"; }

# The usage lines: "# Usage: LINE" and the "#        LINE" lines after it.
mapfile -t lines < <(awk '/^# Usage: / { on = 1; sub(/^# Usage: /, ""); print; next }
  on && /^#        / { sub(/^#        /, ""); print; next } { on = 0 }' "$root/Dockerfile")
((${#lines[@]} >= 4)) || { fail "found ${#lines[@]} usage lines in the Dockerfile"; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$root/examples/poisson_regression/poisson_regression.hpp" "$work/my_model.hpp"
hash=$(git -C "$root" describe --always --dirty --abbrev=12 2>/dev/null || echo unknown)

for line in "${lines[@]}"; do
  cmd=${line//docker /$engine }
  if [[ $line == *" build "* ]]; then
    # The build, in the source tree, told the commit (the context has no .git).
    cmd="$cmd --build-arg HMC_GIT_HASH=$hash"
    dir=$root
  else
    dir=$work
  fi
  echo "container_check: \$ $cmd"
  t0=$SECONDS
  if (cd "$dir" && eval "$cmd") >"$work/log" 2>&1; then
    pass "${line:0:60}... ($((SECONDS - t0)) s)"
  else
    fail "$line: exit $?: $(tail -5 "$work/log")"
    [[ $line == *" build "* ]] && exit 1
  fi
done

# What the lines left behind.
for f in draws.nc particles.csv summary.json run.json; do
  [[ -s "$work/out/$f" ]] || fail "out/$f missing after the bind-mounted run"
done
level=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["arch"]["level"])' "$work/out/run.json" 2>/dev/null)
[[ $level == x86-64* ]] && pass "run.json: instruction set $level" || fail "run.json's arch level: '$level'"
[[ -x "$work/hmc-mine" ]] || fail "hmc-build-model left no hmc-mine"
grep -q '^poisson_regression' "$work/log" && pass "hmc-mine --list-models lists the user's model" \
  || fail "hmc-mine --list-models: $(tail -3 "$work/log")"

# What the image holds.
if $engine run --rm --entrypoint sh hmc -c '
    set -e
    test -x /usr/local/bin/hmc && test -x /usr/local/bin/hmc-build-model
    ls /usr/local/libexec/hmc/hmc-x86-64 /usr/local/libexec/hmc/hmc-x86-64-v3 /usr/local/libexec/hmc/hmc-x86-64-v4
    test -f /usr/local/lib/cmake/hmc/hmcConfig.cmake && test -f /usr/local/include/hmc/core/arch.hpp
    test -f /opt/hmc-cache/kokkos-3.4.1/lib/cmake/Kokkos/KokkosConfig.cmake
    test -f configs/coin_toss.json
    test ! -e /src && test ! -e /stage
    test -z "$(find / -xdev \( -name .git -o -name CMakeCache.txt \) -print -quit)"
    HMC_ARCH=x86-64 hmc --version | grep "instruction set x86-64 "' >"$work/log" 2>&1; then
  pass "the image: the install, Kokkos, the configs; no sources, build tree or .git; HMC_ARCH"
else
  fail "the image's contents: $(tail -5 "$work/log")"
fi

echo "container_check: $failures failure(s) ($engine)"
[[ $failures -eq 0 ]]
