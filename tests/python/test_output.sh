#!/usr/bin/env bash
# The output as Python users read it: runs hmc on coin_toss and both HMMs (netCDF and
# CSV), then checks every result directory with check_output.py (ArviZ, xarray, pandas
# from a cached virtual environment: scripts/python_env.sh) and runs the Python
# snippets of docs/output.md verbatim.
# Environment (set by ctest): HMC (the binary), HMC_SOURCE_DIR.
set -uo pipefail
: "${HMC:?}" "${HMC_SOURCE_DIR:?}"

py=$("$HMC_SOURCE_DIR/scripts/python_env.sh") || { echo "FAIL: scripts/python_env.sh"; exit 1; }
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

for d in output/*/; do
  if "$py" "$HMC_SOURCE_DIR/tests/python/check_output.py" "$d"; then
    echo "ok: check_output.py $d"
  else
    echo "FAIL: check_output.py $d"; failures=$((failures + 1))
  fi
done

# The loader snippets of docs/output.md, verbatim, in the order they appear.
if "$py" "$HMC_SOURCE_DIR/tests/python/run_doc_snippets.py" "$HMC_SOURCE_DIR/docs/output.md"; then
  echo "ok: docs/output.md snippets"
else
  echo "FAIL: docs/output.md snippets"; failures=$((failures + 1))
fi

echo "$failures failure(s)"
[[ $failures -eq 0 ]]
