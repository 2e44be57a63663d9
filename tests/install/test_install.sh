#!/usr/bin/env bash
# tests/install/test_install.sh prefix | example DIR   (run by ctest; see CMakeLists.txt)
# Environment: HMC (the build's hmc), HMC_SOURCE_DIR, HMC_BUILD_DIR, HMC_PREFIX.
set -uo pipefail
: "${HMC:?}" "${HMC_SOURCE_DIR:?}" "${HMC_BUILD_DIR:?}" "${HMC_PREFIX:?}"
work=$(mktemp -d "${TMPDIR:-/tmp}/hmc-install-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }
if ((EUID == 0)); then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
export OMP_PROC_BIND=${OMP_PROC_BIND:-false}

# build_model DIR NAME HEADER...: hmc-build-model in DIR; its stderr in DIR/NAME.log
build_model() {
  local dir=$1 name=$2; shift 2
  (cd "$dir" && "$HMC_PREFIX/bin/hmc-build-model" "$@" -o "$name") 2>"$dir/$name.log"
}

case ${1:-} in
prefix)
  rm -rf "$HMC_PREFIX"
  if ! cmake --install "$HMC_BUILD_DIR" --prefix "$HMC_PREFIX" >"$work/install.log" 2>&1; then
    fail "cmake --install: $(tail -3 "$work/install.log")"; exit 1
  fi
  for f in bin/hmc bin/hmc-build-model lib/cmake/hmc/hmcConfig.cmake lib/cmake/hmc/hmcConfigVersion.cmake \
    lib/cmake/hmc/hmcTargets.cmake lib/cmake/hmc/hmcAddExecutable.cmake lib/libhmc_core.a lib/libhmc_app.a \
    lib/libhmc_models.a include/hmc/core/types.hpp include/hmc/model/concept.hpp include/hmc/keys/key.hpp \
    include/hmc/distributions/dist.hpp include/hmc/app/register.hpp include/hmc/models/coin_toss.hpp \
    share/hmc/scripts/scaling share/hmc/scripts/slurm/hmc-cpu.sbatch share/hmc/configs/coin_toss.json \
    share/doc/hmc/adding-a-model.md; do
    [[ -e "$HMC_PREFIX/$f" ]] || fail "install: $f missing"
  done
  # DESTDIR: the files land under it, the prefix stays what it says.
  if DESTDIR="$work/stage" cmake --install "$HMC_BUILD_DIR" --prefix /opt/hmc-destdir-test >/dev/null 2>&1 &&
    [[ -x "$work/stage/opt/hmc-destdir-test/bin/hmc" && ! -e /opt/hmc-destdir-test ]]; then
    ok "DESTDIR honoured"
  else
    fail "DESTDIR: bin/hmc not under \$DESTDIR/opt/hmc-destdir-test"
  fi
  if "$HMC_PREFIX/bin/hmc" --list-models | cmp -s - <("$HMC" --list-models); then
    ok "installed hmc lists the shipped models"
  else
    fail "installed hmc --list-models differs from the build's"
  fi
  # A model that lacks a member: the concept's one message reaches the user's build.
  mkdir -p "$work/bad"
  cat >"$work/bad/no_keys.hpp" <<'HPP'
#pragma once
#include "hmc/app/register.hpp"
#include "hmc/core/types.hpp"
#include <nlohmann/json.hpp>
#include <string>
#include <vector>
struct NoKeys {
  int dim() const { return 1; }
  int num_params() const { return 1; }
  std::vector<std::string> parameter_names() const { return {"x"}; }
  KOKKOS_INLINE_FUNCTION double log_density(const hmc::Row& q) const { return -0.5 * q(0) * q(0); }
  KOKKOS_INLINE_FUNCTION double log_density_gradient(const hmc::Row& q, const hmc::Row& g) const {
    g(0) = -q(0);
    return -0.5 * q(0) * q(0);
  }
  KOKKOS_INLINE_FUNCTION void constrain(const hmc::Row& q, const hmc::Row& out) const { out(0) = q(0); }
  static NoKeys from_config(const nlohmann::json&, const nlohmann::json&) { return {}; }
};
HMC_REGISTER_MODEL(NoKeys, "no_keys", "lacks config_keys");
HPP
  build_model "$work/bad" hmc-bad no_keys.hpp
  rc=$?
  msg=$(grep -c 'error: static assertion failed: hmc model: missing `static keys::Keys config_keys()`' "$work/bad/hmc-bad.log")
  errors=$(grep -c 'error:' "$work/bad/hmc-bad.log")
  if ((rc == 1 && msg == 1 && errors == 1)); then
    ok "a model without config_keys: exit 1 and the concept's one message"
  else
    fail "model without config_keys: exit $rc, $errors error lines: $(head -5 "$work/bad/hmc-bad.log")"
  fi
  # A model that takes a shipped model's name: the executable says so and ends.
  sed -e 's/static NoKeys from_config/static hmc::keys::Keys config_keys() { return {}; }\n  static NoKeys from_config/' \
    -e 's/"no_keys", "lacks config_keys"/"coin_toss", "takes a shipped name"/' -e 's/#include <string>/#include "hmc\/keys\/key.hpp"\n#include <string>/' \
    "$work/bad/no_keys.hpp" >"$work/bad/clash.hpp"
  # refused NAME HEADER REGEX WHAT: hmc-build-model exits 2 with a line matching REGEX and writes no NAME.
  refused() {
    local name=$1 header=$2 pattern=$3 what=$4 rc
    build_model "$work/bad" "$name" "$header"
    rc=$?
    if ((rc == 2)) && grep -q -- "$pattern" "$work/bad/$name.log" && [[ ! -e "$work/bad/$name" ]]; then
      ok "$what: exit 2, '$(tail -1 "$work/bad/$name.log")'"
    else
      fail "$what: exit $rc, output: $(tail -3 "$work/bad/$name.log")"
    fi
  }
  refused hmc-clash clash.hpp 'hmc-clash does not start: .*two models are named "coin_toss"' "a clash with a shipped name"
  # A header without its HMC_REGISTER_MODEL line: refused, nothing written.
  grep -v HMC_REGISTER_MODEL "$work/bad/clash.hpp" >"$work/bad/unregistered.hpp"
  refused hmc-unregistered unregistered.hpp '^hmc-build-model: no model registered by unregistered.hpp' \
    "a header without HMC_REGISTER_MODEL"
  # -o naming a directory, or a place that cannot be written: one line, exit 2, nothing left.
  mkdir -p "$work/bad/outdir"
  for target in "$work/bad/outdir" /proc/hmc-x; do
    out=$("$HMC_PREFIX/bin/hmc-build-model" "$work/bad/clash.hpp" -o "$target" 2>&1)
    rc=$?
    if ((rc == 2)) && [[ $(grep -c . <<<"$out") -eq 1 && "$out" == "hmc-build-model: "* ]] &&
      [[ -z $(ls -A "$work/bad/outdir") ]]; then
      ok "-o $target: exit 2, '$out'"
    else
      fail "-o $target: exit $rc, output: $out; left: $(ls -A "$work/bad/outdir")"
    fi
  done
  ;;
example)
  src=${2:?example DIR}
  name=$(basename "$src")
  [[ -x "$HMC_PREFIX/bin/hmc-build-model" ]] || { fail "no install at $HMC_PREFIX (test install_prefix)"; exit 1; }
  # The user's folder: the example's files only, outside the clone.
  dir=$work/$name
  cp -r "$src" "$dir"
  rm -rf "$dir/output" "$dir/.hmc-build" "$dir/build"
  mapfile -t headers < <(cd "$dir" && ls ./*.hpp)
  models=$(sed -nE 's/^HMC_REGISTER_MODEL\([^,]+, *"([^"]+)".*/\1/p' "$dir"/*.hpp)
  [[ -n "$models" ]] || { fail "$name: no HMC_REGISTER_MODEL line in its headers"; exit 1; }
  t0=$SECONDS
  if build_model "$dir" hmc-mine "${headers[@]}"; then
    ok "$name: hmc-build-model ${headers[*]} -o hmc-mine ($((SECONDS - t0)) s)"
  else
    fail "$name: hmc-build-model: $(grep 'error:' "$dir/hmc-mine.log" | head -5)"; exit 1
  fi
  listed=$("$dir/hmc-mine" --list-models | cut -f1)
  for m in $models $("$HMC" --list-models | cut -f1); do
    grep -qx "$m" <<<"$listed" || fail "$name: hmc-mine --list-models lacks $m"
  done
  ok "$name: hmc-mine --list-models: $(echo $listed)"
  if [[ -f "$dir/CMakeLists.txt" ]]; then  # the find_package(hmc) path, as the README shows it
    t0=$SECONDS
    if cmake -S "$dir" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$HMC_PREFIX" >"$work/cmake.log" 2>&1 &&
      cmake --build "$work/cmake-build" -j 2 >>"$work/cmake.log" 2>&1 &&
      "$work/cmake-build/hmc-mine" --list-models | cut -f1 | cmp -s - <(echo "$listed"); then
      ok "$name: cmake with find_package(hmc) + hmc_add_executable ($((SECONDS - t0)) s)"
    else
      fail "$name: the CMakeLists.txt build: $(grep -E 'error|Error' "$work/cmake.log" | head -5)"
    fi
  fi
  (cd "$dir" && ./hmc-mine diagnose --config config.json >"$work/diagnose.log" 2>&1) &&
    ok "$name: hmc-mine diagnose: $(tail -1 "$work/diagnose.log")" ||
    fail "$name: hmc-mine diagnose: $(tail -3 "$work/diagnose.log")"
  if (cd "$dir" && ./hmc-mine --config config.json --set output.dir=out --set log.level=warn >"$work/run.log" 2>&1); then
    ok "$name: run"
  else
    fail "$name: run: $(tail -3 "$work/run.log")"; exit 1
  fi
  py=$("$HMC_SOURCE_DIR/scripts/python_env.sh") || { fail "scripts/python_env.sh"; exit 1; }
  if "$py" "$dir/check.py" "$dir/out"; then ok "$name: posterior against its reference"; else fail "$name: check.py"; fi
  ;;
*) echo "usage: test_install.sh prefix | example DIR" >&2; exit 2 ;;
esac
if ((failures)); then echo "$failures failure(s)"; exit 1; fi
echo "all passed"
