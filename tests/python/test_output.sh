#!/usr/bin/env bash
# The output as Python users read it: runs hmc on coin_toss and both HMMs (netCDF and
# CSV), then, once per ArviZ major, one Python process (check_output.py) checks every
# result directory and runs the Python snippets of docs/output.md verbatim:
#  - ArviZ 0.23.4 (InferenceData) from the cached virtual environment of
#    scripts/python_env.sh (python3);
#  - ArviZ 1.x (DataTree) from scripts/python_env.sh arviz1, on the first Python >= 3.12
#    found (HMC_PYTHON312, PATH, pyenv); skipped, with a line that says so, where there is
#    none.
# Environment (set by ctest): HMC (the binary), HMC_SOURCE_DIR.
set -uo pipefail
: "${HMC:?}" "${HMC_SOURCE_DIR:?}"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
failures=0

run() { # run NAME CONFIG [--set ...]: output/NAME
  local name=$1 cfg=$2; shift 2
  if ! "$HMC" --config "$HMC_SOURCE_DIR/configs/$cfg.json" --set "output.dir=output/$name" --set output.formats=both \
      --set log.level=warn "$@" >/dev/null 2>"$name.err"; then
    echo "FAIL: run $name: $(tail -3 "$name.err")"; failures=$((failures + 1)); return 1
  fi
}

run coin_toss coin_toss --set sampler.particles=1024 --set sampler.thin=1 --set sampler.draws=400 \
  --set output.save_warmup=true
run hmm_gaussian hmm_gaussian --set sampler.particles=64 --set sampler.warmup=150 --set sampler.draws=100
run hmm_categorical hmm_categorical --set sampler.particles=32 --set sampler.warmup=100 --set sampler.draws=60

check() { # check PYTHON LABEL: every result directory, then the snippets of docs/output.md
  local start=$SECONDS
  if "$1" "$HMC_SOURCE_DIR/tests/python/check_output.py" --doc "$HMC_SOURCE_DIR/docs/output.md" output/*/; then
    echo "ok: $2 ($((SECONDS - start)) s)"
  else
    echo "FAIL: $2"; failures=$((failures + 1))
  fi
}

if py=$("$HMC_SOURCE_DIR/scripts/python_env.sh"); then
  check "$py" "ArviZ 0.23"
else
  echo "FAIL: scripts/python_env.sh"; failures=$((failures + 1))
fi

py=$("$HMC_SOURCE_DIR/scripts/python_env.sh" arviz1)
case $? in
  0) check "$py" "ArviZ 1.x" ;;
  3) echo "skipped: the ArviZ 1.x checks: no Python >= 3.12 on this machine (set HMC_PYTHON312 to one)" ;;
  *) echo "FAIL: scripts/python_env.sh arviz1"; failures=$((failures + 1)) ;;
esac

echo "$failures failure(s)"
[[ $failures -eq 0 ]]
