#!/usr/bin/env bash
# The output as Python users read it: runs hmc on coin_toss and both HMMs (netCDF and
# CSV), then, once per ArviZ major, one Python process (check_output.py) checks every
# result directory and runs the Python snippets of docs/output.md verbatim; and runs
# eight_schools (two priors) and logistic_regression with /output/log_likelihood and
# /output/posterior_predictive, on which a second process (check_loo.py) runs az.loo,
# az.compare and az.plot_ppc and compares `hmc summary`'s PSIS-LOO with ArviZ's; and
# `hmc generate` over the same eight_schools run without the groups, on 1 and 2 ranks,
# which must give the groups bit for bit (check_generate.py):
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
# With /output/log_likelihood (PSIS-LOO: check_loo.py below; the docs' snippets use the first two)
ll=(--set output.log_likelihood=true --set output.posterior_predictive=true --set sampler.particles=64
  --set sampler.draws=200)
run eight_schools eight_schools "${ll[@]}" --set output.generated_quantities=true
run eight_schools_tight eight_schools "${ll[@]}" --set model.priors.tau_scale=0.5
run logistic_regression logistic_regression "${ll[@]}"
# hmc generate: eight_schools without the groups, then its groups computed afterwards on 1
# and 2 ranks (check_generate.py: bitwise those of output/eight_schools)
gen_run() { # gen_run NAME COMMAND...: one step of the hmc generate check, its stderr in gen-NAME.err
  local name=$1; shift
  if ! "$@" >/dev/null 2>"gen-$name.err"; then
    echo "FAIL: hmc generate check, $name: $(tail -3 "gen-$name.err")"; failures=$((failures + 1)); return 1
  fi
}
gen_run plain "$HMC" --config "$HMC_SOURCE_DIR/configs/eight_schools.json" --set output.dir=gen/plain \
  --set sampler.particles=64 --set sampler.draws=200 --set log.level=warn
gen_run np1 "$HMC" generate gen/plain --output gen/np1
gen_run np2 "${MPIEXEC:-mpiexec}" -n 2 ${MPIEXEC_FLAGS:-} "$HMC" generate gen/plain --output gen/np2

check() { # check PYTHON LABEL: every result directory, then the snippets of docs/output.md; then PSIS-LOO
  local start=$SECONDS
  if "$1" "$HMC_SOURCE_DIR/tests/python/check_output.py" --doc "$HMC_SOURCE_DIR/docs/output.md" output/*/; then
    echo "ok: $2 ($((SECONDS - start)) s)"
  else
    echo "FAIL: $2"; failures=$((failures + 1))
  fi
  start=$SECONDS
  if "$1" "$HMC_SOURCE_DIR/tests/python/check_loo.py" "$HMC" output/eight_schools output/eight_schools_tight \
      output/logistic_regression > loo.log 2>&1; then
    echo "ok: $2, PSIS-LOO ($((SECONDS - start)) s)"
  else
    grep -v '^ok' loo.log | tail -20; echo "FAIL: $2, PSIS-LOO"; failures=$((failures + 1))
  fi
}

if py=$("$HMC_SOURCE_DIR/scripts/python_env.sh"); then
  check "$py" "ArviZ 0.23"
  if "$py" "$HMC_SOURCE_DIR/tests/python/check_generate.py" output/eight_schools gen/plain gen/np1 gen/np2 \
      >gen.log 2>&1; then
    echo "ok: hmc generate over a run equals the run's groups, on 1 and 2 ranks"
  else
    grep -v '^ok' gen.log | tail -20; echo "FAIL: hmc generate"; failures=$((failures + 1))
  fi
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
