#!/usr/bin/env bash
# End-to-end checks of the hmc executable. Usage: cli_test.sh CASE
# Environment (set by ctest): HMC (the binary), HMC_SOURCE_DIR, MPIEXEC, MPIEXEC_FLAGS.
set -uo pipefail

: "${HMC:?}" "${HMC_SOURCE_DIR:?}"
MPIEXEC=${MPIEXEC:-mpiexec}
MPIEXEC_FLAGS=${MPIEXEC_FLAGS:-}
if [[ $(id -u) -eq 0 ]]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }

# expect_exit CODE PATTERN -- command...: exit code and a stderr line matching PATTERN.
expect_exit() {
  local want=$1 pattern=$2; shift 3
  local err rc
  err=$("$@" 2>&1 >/dev/null); rc=$?
  if [[ $rc -ne $want ]]; then fail "'$*' exited $rc, expected $want: $err"; return; fi
  if ! grep -qE -- "$pattern" <<<"$err"; then fail "'$*': message '$err' does not match '$pattern'"; return; fi
  # One line from hmc (mpiexec may add its own notice about the exit code).
  if [[ $(grep -c '^hmc: ' <<<"$err") -ne 1 ]]; then fail "'$*': not exactly one error line: $err"; return; fi
  if [[ $1 != "$MPIEXEC" && $(grep -c . <<<"$err") -ne 1 ]]; then fail "'$*': error is not one line: $err"; return; fi
  pass "$* -> $rc: $(grep '^hmc: ' <<<"$err")"
}

case_configs() {
  # Every shipped config runs through the real CLI and writes its three files.
  local cfg name out
  for cfg in "$HMC_SOURCE_DIR"/configs/*.json; do
    name=$(basename "$cfg" .json)
    out="$work/$name"
    if ! "$HMC" --config "$cfg" --set "output.dir=$out" >"$work/$name.stdout" 2>"$work/$name.stderr"; then
      fail "$name: exit $?: $(tail -3 "$work/$name.stderr")"; continue
    fi
    for f in draws.csv particles.csv summary.json run.json; do
      [[ -s "$out/$f" ]] || fail "$name: $f missing"
    done
    grep -q '^parameter' "$work/$name.stdout" || fail "$name: no summary table on stdout"
    # Every summary statistic is finite (JSON null marks one that is not).
    grep -q ': null' "$out/summary.json" && fail "$name: summary.json has non-finite statistics"
    ls -a "$out" | grep -q '\.tmp$' && fail "$name: temporary files left"
    pass "config $name"
  done
}

case_bad_configs() {
  local bad="$HMC_SOURCE_DIR/tests/cli/bad"
  cd "$work" || exit 1
  expect_exit 2 'unknown key /sampler/particle .*did you mean /sampler/particles' -- "$HMC" --config "$bad/unknown_key.json"
  expect_exit 2 '/sampler/particles must be an integer' -- "$HMC" --config "$bad/wrong_type.json"
  expect_exit 3 'no_such_tosses\.json' -- "$HMC" --config "$bad/missing_data.json"
  expect_exit 2 'cannot open config file .*nope\.json' -- "$HMC" --config "$work/nope.json"
  expect_exit 2 'unknown key /sampler/leapfrog' -- "$HMC" --config "$HMC_SOURCE_DIR/configs/coin_toss.json" \
    --set sampler.leapfrog=3 --set output.dir=SHOULD_NOT_EXIST
  expect_exit 2 '/sampler/step_size must be > 0' -- "$HMC" --config "$HMC_SOURCE_DIR/configs/coin_toss.json" \
    --set sampler.step_size=-1 --set output.dir=SHOULD_NOT_EXIST
  # Under MPI the same errors come out once, with the same codes.
  expect_exit 2 'unknown key /sampler/particle ' -- "$MPIEXEC" -n 2 $MPIEXEC_FLAGS "$HMC" --config "$bad/unknown_key.json"
  expect_exit 3 'no_such_tosses\.json' -- "$MPIEXEC" -n 2 $MPIEXEC_FLAGS "$HMC" --config "$bad/missing_data.json"
  if [[ -e SHOULD_NOT_EXIST || -e "$bad/SHOULD_NOT_EXIST" ]]; then fail "an output directory was created"; else pass "no output directory"; fi
}

case_options() {
  local out
  out=$("$HMC" --version) && grep -q '^hmc ' <<<"$out" && grep -q 'Kokkos' <<<"$out" && grep -q 'MPI' <<<"$out" \
    && pass "--version" || fail "--version: $out"
  out=$("$HMC" --list-models) && grep -q '^coin_toss' <<<"$out" && grep -q '^harmonic_oscillator' <<<"$out" \
    && pass "--list-models" || fail "--list-models: $out"
  out=$("$HMC" --help) && grep -q -- '--config' <<<"$out" && grep -q -- '--set' <<<"$out" \
    && pass "--help" || fail "--help: $out"
  out=$("$HMC" --config "$HMC_SOURCE_DIR/configs/coin_toss.json" --validate --set sampler.particles=4096 \
        --set output.dir=out/a --set seed=3) || fail "--validate exited $?"
  grep -q '"particles": 4096' <<<"$out" && grep -q '"dir": "out/a"' <<<"$out" && grep -q '"seed": 3' <<<"$out" \
    && pass "--validate with --set" || fail "--validate output: $out"
  [[ -e out/a ]] && fail "--validate created the output directory"
  expect_exit 2 'config error: --config FILE is required' -- "$HMC"
  expect_exit 2 'unknown-option|not expected|extra' -- "$HMC" --bogus
  # Only rank 0 prints.
  out=$("$MPIEXEC" -n 2 $MPIEXEC_FLAGS "$HMC" --version 2>&1)
  [[ $(grep -c '^hmc ' <<<"$out") -eq 1 ]] && pass "one --version under MPI" || fail "under MPI: $out"
  # A finished run: summary.json has the documented fields and sane values.
  "$HMC" --config "$HMC_SOURCE_DIR/configs/coin_toss.json" --set "output.dir=$work/run" --set sampler.particles=64 \
    --set sampler.draws=50 --set sampler.thin=1 --set sampler.warmup=50 >/dev/null 2>&1 || fail "small run failed"
  for key in '"mcse_mean"' '"acceptance_rate"' '"grad_evals_per_s"' '"timings_s"' '"divergences"'; do
    grep -q "$key" "$work/run/summary.json" || fail "summary.json lacks $key"
  done
  grep -q '"git"' "$work/run/run.json" && grep -q '"backends"' "$work/run/run.json" || fail "run.json incomplete"
  [[ $(wc -l <"$work/run/draws.csv") -eq $((64 * 50 + 1)) ]] && pass "draws.csv rows" || fail "draws.csv rows"
  [[ $(wc -l <"$work/run/particles.csv") -eq $((64 + 1)) ]] && head -1 "$work/run/particles.csv" | grep -q '^particle,accept_rate,divergences,mean_n_leapfrog,e_bfmi$' \
    && pass "particles.csv" || fail "particles.csv"
}

case_diagnose() {
  # `hmc diagnose` on every shipped config (models added later are covered too): exit 0
  # and a table with a row per coordinate.
  local cfg name out bad="$HMC_SOURCE_DIR/tests/cli/bad"
  cd "$work" || exit 1
  for cfg in "$HMC_SOURCE_DIR"/configs/*.json; do
    name=$(basename "$cfg" .json)
    if ! out=$("$HMC" diagnose --config "$cfg" --set output.dir=SHOULD_NOT_EXIST 2>"$work/$name.diag.err"); then
      fail "diagnose $name: exit $?: $(tail -3 "$work/$name.diag.err") $(tail -5 <<<"$out")"; continue
    fi
    if grep -qE '^coordinate +particle +analytic +finite_diff +rel_error$' <<<"$out" && grep -q '^theta\[1\]' <<<"$out" \
        && grep -q '^largest relative error .*: passed$' <<<"$out"; then
      pass "diagnose $name"
    else
      fail "diagnose $name: no table: $out"
    fi
  done
  # Options reach the check: points, --set, every point with --all.
  out=$("$HMC" diagnose --config "$HMC_SOURCE_DIR/configs/harmonic_oscillator.json" --points 3 --all \
        --set sampler.init.radius=0.5) || fail "diagnose --all exited $?"
  [[ $(grep -c '^theta\[' <<<"$out") -eq 12 ]] && grep -q 'at 3 points' <<<"$out" && grep -q 'init radius 0.5' <<<"$out" \
    && pass "diagnose --points 3 --all --set" || fail "diagnose --points 3 --all --set: $out"
  # A tolerance no finite difference meets: exit 5, one error line naming the place.
  expect_exit 5 'gradient check failed: theta\[[0-9]+\] \(p\[[0-9]\]\) at the start of particle [0-9]+: relative error' \
    -- "$HMC" diagnose --config "$HMC_SOURCE_DIR/configs/coin_toss.json" --tolerance 1e-300
  # Config and data errors exactly as for a run.
  expect_exit 2 'unknown key /sampler/particle .*did you mean /sampler/particles' -- "$HMC" diagnose --config "$bad/unknown_key.json"
  expect_exit 3 'no_such_tosses\.json' -- "$HMC" diagnose --config "$bad/missing_data.json"
  expect_exit 2 'config error: --config FILE is required' -- "$HMC" diagnose
  expect_exit 2 'points' -- "$HMC" diagnose --config "$HMC_SOURCE_DIR/configs/coin_toss.json" --points 0
  expect_exit 2 'unknown key /sampler/leapfrog' -- "$MPIEXEC" -n 2 $MPIEXEC_FLAGS "$HMC" diagnose \
    --config "$HMC_SOURCE_DIR/configs/coin_toss.json" --set sampler.leapfrog=3
  # Under MPI only rank 0 checks and prints.
  out=$("$MPIEXEC" -n 2 $MPIEXEC_FLAGS "$HMC" diagnose --config "$HMC_SOURCE_DIR/configs/coin_toss.json" 2>&1) \
    || fail "diagnose under MPI exited $?"
  [[ $(grep -c '^coordinate' <<<"$out") -eq 1 ]] && pass "one diagnose table under MPI" || fail "under MPI: $out"
  # A plain run is unchanged by the subcommand.
  "$HMC" --config "$HMC_SOURCE_DIR/configs/coin_toss.json" --validate >/dev/null || fail "--validate after diagnose"
  if [[ -e SHOULD_NOT_EXIST ]]; then fail "diagnose created an output directory"; else pass "no output directory"; fi
}

case_reproducible() {
  # The same seed gives byte-identical draws on 1, 2, 4 ranks and 1, 2 threads, with
  # warmup adaptation on (the configs' diag metric + ChEES, and a dense metric).
  local variant cfg extra ref h np threads tag
  for variant in "coin_toss" "harmonic_oscillator" "harmonic_oscillator sampler.adapt.metric=dense"; do
    read -r cfg extra <<<"$variant"
    tag=$cfg${extra:+-dense}
    ref=""
    for run in "1 1" "1 2" "2 1" "4 1" "2 2"; do
      read -r np threads <<<"$run"
      out="$work/$tag-np$np-t$threads"
      if ! OMP_NUM_THREADS=$threads "$MPIEXEC" -n "$np" $MPIEXEC_FLAGS "$HMC" \
          --config "$HMC_SOURCE_DIR/configs/$cfg.json" --set "output.dir=$out" --set sampler.particles=37 \
          --set sampler.warmup=60 --set sampler.draws=40 --set sampler.thin=2 --set log.level=warn \
          ${extra:+--set "$extra"} >/dev/null 2>"$out.err"; then
        fail "$tag np=$np threads=$threads: $(tail -3 "$out.err")"; continue
      fi
      h=$(sha256sum <"$out/draws.csv" | cut -d' ' -f1)
      [[ -z $ref ]] && ref=$h
      [[ $h == "$ref" ]] && pass "$tag np=$np threads=$threads $h" || fail "$tag np=$np threads=$threads: $h != $ref"
      grep -q "\"ranks\": $np" "$out/summary.json" || fail "$tag np=$np: summary.json ranks"
    done
    grep -q '"trajectory": "chees"' "$out/summary.json" || fail "$tag: not adapted with ChEES"
  done
}

"case_$1"
echo "$failures failure(s)"
[[ $failures -eq 0 ]]
