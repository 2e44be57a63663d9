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
  # Every shipped config runs through the real CLI and publishes its four files.
  local cfg name out
  for cfg in "$HMC_SOURCE_DIR"/configs/*.json; do
    name=$(basename "$cfg" .json)
    out="$work/$name"
    if ! "$HMC" --config "$cfg" --set "output.dir=$out" >"$work/$name.stdout" 2>"$work/$name.stderr"; then
      fail "$name: exit $?: $(tail -3 "$work/$name.stderr")"; continue
    fi
    for f in draws.nc particles.csv summary.json run.json; do
      [[ -s "$out/$f" ]] || fail "$name: $f missing"
    done
    [[ $(ls -A "$out" | wc -l) -eq 4 ]] || fail "$name: unexpected files: $(ls -A "$out")"
    [[ -e "$out.partial" ]] && fail "$name: staging directory left behind"
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
  local small=(--config "$HMC_SOURCE_DIR/configs/coin_toss.json" --set sampler.particles=64 --set sampler.draws=50
    --set sampler.thin=1 --set sampler.warmup=50 --set output.formats=both)
  "$HMC" "${small[@]}" --set "output.dir=$work/run" >/dev/null 2>&1 || fail "small run failed"
  for key in '"mcse_mean"' '"acceptance_rate"' '"grad_evals_per_s"' '"timings_s"' '"divergences"'; do
    grep -q "$key" "$work/run/summary.json" || fail "summary.json lacks $key"
  done
  grep -q '"git"' "$work/run/run.json" && grep -q '"backends"' "$work/run/run.json" || fail "run.json incomplete"
  [[ $(wc -l <"$work/run/draws.csv") -eq $((64 * 50 + 1)) ]] && pass "draws.csv rows" || fail "draws.csv rows"
  head -1 "$work/run/draws.csv" | grep -q '^particle,draw,lp,acceptance_rate,step_size,n_steps,diverging,energy,p\[1\],p\[2\]$' \
    && pass "draws.csv header" || fail "draws.csv header: $(head -1 "$work/run/draws.csv")"
  # Results are not replaced silently: a second run into the same directory needs --overwrite.
  expect_exit 2 "/output/dir .*already holds files; pass --overwrite" -- "$HMC" "${small[@]}" --set "output.dir=$work/run"
  [[ -s "$work/run/draws.csv" && ! -e "$work/run.partial" ]] && pass "refused run left the results alone" \
    || fail "refused run changed $work/run"
  "$HMC" "${small[@]}" --set "output.dir=$work/run" --set output.formats=netcdf --overwrite >/dev/null 2>&1 \
    && [[ -s "$work/run/draws.nc" && ! -e "$work/run/draws.csv" && ! -e "$work/run.partial" ]] \
    && pass "--overwrite replaces the whole result set" || fail "--overwrite: $(ls -A "$work/run")"
  # A run that fails after its directory was prepared leaves nothing behind.
  expect_exit 4 'found no finite log density' -- "$HMC" --config "$HMC_SOURCE_DIR/configs/harmonic_oscillator.json" \
    --set "output.dir=$work/failed" --set sampler.init.radius=1e300 --set log.level=warn
  [[ -e "$work/failed" || -e "$work/failed.partial" ]] && fail "failed run left a directory" || pass "failed run left nothing"
  [[ $(wc -l <"$work/run/particles.csv") -eq $((64 + 1)) ]] && head -1 "$work/run/particles.csv" | grep -q '^particle,accept_rate,divergences,mean_n_leapfrog,e_bfmi$' \
    && pass "particles.csv" || fail "particles.csv"
}

case_diagnose() {
  # `hmc diagnose` on every shipped config (models added later are covered too): exit 0,
  # a table with a row per coordinate and the counts of points, at the default init
  # radius and at 0.5 and 4 (50 points): a correct gradient is never called wrong.
  local cfg name out radius bad="$HMC_SOURCE_DIR/tests/cli/bad"
  cd "$work" || exit 1
  for cfg in "$HMC_SOURCE_DIR"/configs/*.json; do
    name=$(basename "$cfg" .json)
    if ! out=$("$HMC" diagnose --config "$cfg" --set output.dir=SHOULD_NOT_EXIST 2>"$work/$name.diag.err"); then
      fail "diagnose $name: exit $?: $(tail -3 "$work/$name.diag.err") $(tail -5 <<<"$out")"; continue
    fi
    if grep -qE '^coordinate +particle +analytic +(finite_diff|reference) +rel_error +noise +resolved$' <<<"$out" \
        && grep -q '^theta\[1\]' <<<"$out" && grep -qE '^points: 10 checked, 10 passed, 0 wrong, 0 inconclusive' <<<"$out" \
        && grep -q '^largest relative error .*: passed$' <<<"$out"; then
      pass "diagnose $name"
    else
      fail "diagnose $name: no table: $out"
    fi
    for radius in 0.5 4; do
      if out=$("$HMC" diagnose --config "$cfg" --points 50 --set sampler.init.radius=$radius 2>"$work/$name.diag.err"); then
        grep -qE '^points: 50 checked, [0-9]+ passed, 0 wrong' <<<"$out" && pass "diagnose $name at radius $radius" \
          || fail "diagnose $name at radius $radius: $out"
      else
        fail "diagnose $name at radius $radius: exit $?: $(tail -3 "$work/$name.diag.err") $(tail -3 <<<"$out")"
      fi
    done
  done
  # The method: exact for a model with log_density_t (eight_schools), finite differences
  # for the others, and for any model with --method fd.
  out=$("$HMC" diagnose --config "$HMC_SOURCE_DIR/configs/eight_schools.json") || fail "diagnose eight_schools exited $?"
  grep -q '^method: exact' <<<"$out" && grep -q '; method exact$' <<<"$out" && pass "eight_schools: exact" \
    || fail "eight_schools is not checked exactly: $out"
  out=$("$HMC" diagnose --config "$HMC_SOURCE_DIR/configs/eight_schools.json" --method fd) || fail "--method fd exited $?"
  grep -q '^method: finite differences:' <<<"$out" && grep -q ': passed$' <<<"$out" && pass "eight_schools: --method fd" \
    || fail "eight_schools --method fd: $out"
  out=$("$HMC" diagnose --config "$HMC_SOURCE_DIR/configs/coin_toss.json") || fail "diagnose coin_toss exited $?"
  grep -q '^method: finite differences (the model has no log_density_t' <<<"$out" && pass "coin_toss: finite differences" \
    || fail "coin_toss: $out"
  expect_exit 2 '^hmc: config error: --method exact: the model has no .*log_density_t' \
    -- "$HMC" diagnose --config "$HMC_SOURCE_DIR/configs/coin_toss.json" --method exact
  expect_exit 2 '--method' -- "$HMC" diagnose --config "$HMC_SOURCE_DIR/configs/coin_toss.json" --method newton
  # Options reach the check: points, --set, every point with --all.
  out=$("$HMC" diagnose --config "$HMC_SOURCE_DIR/configs/harmonic_oscillator.json" --points 3 --all \
        --set sampler.init.radius=0.5) || fail "diagnose --all exited $?"
  [[ $(grep -c '^theta\[' <<<"$out") -eq 12 ]] && grep -q 'at 3 points' <<<"$out" && grep -q 'init radius 0.5' <<<"$out" \
    && pass "diagnose --points 3 --all --set" || fail "diagnose --points 3 --all --set: $out"
  # A tolerance no finite difference can resolve: nothing is shown wrong, no point could
  # be checked: exit 6, one line saying why.
  expect_exit 6 'gradient check inconclusive: no point could be checked \(10 points: log density not finite at 0, \|log density\| > 1e\+12 at 0, an entry unresolved at 10\); e\.g\. theta\[[0-9]+\] \(p\[[0-9]\]\) at the start of particle [0-9]+: the finite differences cannot resolve it \(noise .* > 10 \* tolerance 1e-300\)' \
    -- "$HMC" diagnose --config "$HMC_SOURCE_DIR/configs/coin_toss.json" --tolerance 1e-300
  # A step so small that it rounds to 0 (fd is 0 / 0): inconclusive too.
  expect_exit 6 'gradient check inconclusive: .*cannot resolve it \(noise inf' \
    -- "$HMC" diagnose --config "$HMC_SOURCE_DIR/configs/coin_toss.json" --step 1e-300
  # --tolerance, --exact-tolerance and --step must be finite numbers > 0.
  local opt value
  for opt in --tolerance --exact-tolerance --step; do
    for value in nan inf abc; do
      expect_exit 2 "^hmc: $opt: must be a finite number > 0 \(got \"$value\"\)" \
        -- "$HMC" diagnose --config "$HMC_SOURCE_DIR/configs/coin_toss.json" "$opt" "$value"
    done
  done
  # At scale: a categorical HMM with K = 5, V = 20, T = 10,000 (115 coordinates, log p
  # about -3e4) passes with the default options, in seconds. The data come from the
  # project's shared make_hmm_data.py (../shared/data) where it is there, else from the
  # same kind of simulation inline.
  local gen="$HMC_SOURCE_DIR/../shared/data/make_hmm_data.py"
  if [[ -f $gen ]]; then
    python3 "$gen" 7 5 20 10000 "$work/hmm_k5_v20.json"
  else
    python3 - "$work/hmm_k5_v20.json" <<'PY'
import json, random, sys
rng, K, V, T = random.Random(7), 5, 20, 10000
def simplex(n, a):
    g = [rng.gammavariate(a, 1.0) for _ in range(n)]
    return [x / sum(g) for x in g]
trans, emit = [simplex(K, 1.0) for _ in range(K)], [simplex(V, 0.1) for _ in range(K)]
z, words = 0, []
for _ in range(T):
    z = rng.choices(range(K), trans[z])[0]
    words.append(rng.choices(range(V), emit[z])[0])
json.dump({"num_states": K, "num_words": V, "words": words}, open(sys.argv[1], "w"))
PY
  fi
  if [[ -s $work/hmm_k5_v20.json ]]; then
    printf '{"model": {"name": "hmm", "data": "hmm_k5_v20.json", "emission": "categorical"}, "seed": 31}\n' \
      >"$work/hmm_k5_v20_cfg.json"
    if out=$("$HMC" diagnose --config "$work/hmm_k5_v20_cfg.json" 2>"$work/hmm_k5.diag.err"); then
      grep -q '^gradient check of hmm: 115 unconstrained coordinates at 10 points' <<<"$out" \
        && grep -q '^largest relative error .*: passed$' <<<"$out" && pass "diagnose hmm K=5 V=20 T=10000" \
        || fail "diagnose hmm K=5 V=20 T=10000: $out"
    else
      fail "diagnose hmm K=5 V=20 T=10000: exit $?: $(tail -3 "$work/hmm_k5.diag.err")"
    fi
  else
    fail "diagnose hmm K=5 V=20 T=10000: no data written"
  fi
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
  # warmup adaptation on (the configs' diag metric + ChEES, and a dense metric), for
  # /sampler/algorithm hmc and nuts; eight_schools is a route-(a) model (reverse-mode
  # gradients in the lanes, and one particle per thread with HMC_SCALAR_TRANSITION=1), also
  # with its log_likelihood, posterior_predictive and generated_quantities groups.
  local nuts="sampler.algorithm=nuts sampler.adapt.trajectory=fixed"
  reproducible_runs "coin_toss" "harmonic_oscillator" "harmonic_oscillator sampler.adapt.metric=dense" \
    "coin_toss $nuts" "harmonic_oscillator $nuts sampler.adapt.metric=dense" "eight_schools" \
    "eight_schools $nuts" "eight_schools HMC_SCALAR_TRANSITION=1" \
    "eight_schools $nuts output.log_likelihood=true output.posterior_predictive=true output.generated_quantities=true"
}

case_reproducible_mams() {
  # The same for /sampler/algorithm mams and the metrics from gradients (fisher_diag's window
  # sums, low_rank's eigen-decomposition on every rank), in the lanes and one particle per thread.
  local mams="sampler.algorithm=mams sampler.adapt.trajectory=fixed"
  local nuts="sampler.algorithm=nuts sampler.adapt.trajectory=fixed"
  reproducible_runs "coin_toss $mams sampler.adapt.metric=fisher_diag" \
    "harmonic_oscillator $mams sampler.adapt.metric=low_rank" "eight_schools $mams" \
    "eight_schools $mams HMC_SCALAR_TRANSITION=1" "harmonic_oscillator $nuts sampler.adapt.metric=low_rank"
}

# reproducible_runs VARIANT...: each VARIANT ("config [set|HMC_ENV=value]...") on 1, 2, 4
# ranks and 1, 2 threads, byte-identical draws.
reproducible_runs() {
  local variant cfg extra ref h np threads tag sets s
  for variant in "$@"; do
    read -r cfg extra <<<"$variant"
    tag=$cfg${extra:+-$(tr -c 'a-z0-9\n' - <<<"$extra")}
    sets=()
    local envs=()
    for s in $extra; do
      if [[ $s == HMC_* ]]; then envs+=("$s"); else sets+=(--set "$s"); fi
    done
    ref=""
    for run in "1 1" "1 2" "2 1" "4 1" "2 2"; do
      read -r np threads <<<"$run"
      out="$work/$tag-np$np-t$threads"
      if ! env "${envs[@]}" OMP_NUM_THREADS=$threads "$MPIEXEC" -n "$np" $MPIEXEC_FLAGS "$HMC" \
          --config "$HMC_SOURCE_DIR/configs/$cfg.json" --set "output.dir=$out" --set sampler.particles=37 \
          --set sampler.warmup=60 --set sampler.draws=40 --set sampler.thin=2 --set log.level=warn \
          --set output.formats=both --set output.flush_every=7 \
          "${sets[@]}" >/dev/null 2>"$out.err"; then
        fail "$tag np=$np threads=$threads: $(tail -3 "$out.err")"; continue
      fi
      h=$(cat "$out/draws.csv" "$out/draws.nc" | sha256sum | cut -d' ' -f1)
      [[ -z $ref ]] && ref=$h
      [[ $h == "$ref" ]] && pass "$tag np=$np threads=$threads $h" || fail "$tag np=$np threads=$threads: $h != $ref"
      grep -q "\"ranks\": $np" "$out/summary.json" || fail "$tag np=$np: summary.json ranks"
    done
    if [[ $extra == *mams* ]]; then
      grep -q '"algorithm": "mams"' "$out/summary.json" || fail "$tag: not sampled with MAMS"
    elif [[ $extra == *nuts* ]]; then
      grep -q '"algorithm": "nuts"' "$out/summary.json" || fail "$tag: not sampled with NUTS"
    elif [[ $cfg == eight_schools ]]; then
      grep -q '"algorithm": "hmc"' "$out/summary.json" || fail "$tag: not sampled with HMC"
    else
      grep -q '"trajectory": "chees"' "$out/summary.json" || fail "$tag: not adapted with ChEES"
    fi
  done
}

# Files of two result sets that must agree byte for byte; summary.json and run.json
# apart from wall-clock times (and the start time), memory use, rank and thread counts,
# run.json's per-rank timings and MPI counters (its whole /per_rank array, which ends at
# the first line indented like the key) and the output directory's name.
strip_volatile() {
  sed -e '/^  "per_rank": \[/,/^  \],\{0,1\}$/d' -e '/"timings_s"/,/}/d' -e '/"memory"/,/}/d' -e '/grad_evals_per_s/d' -e '/"ranks"/d' -e '/"dir": /d' \
    -e '/"output.dir=/d' -e '/"started_utc"/d' -e '/"concurrency"/d' \
    -e '/"host_threads"/,/}/d' "$1"
}
same_results() {
  local a=$1 b=$2 f ok=0
  for f in draws.nc draws.csv particles.csv; do
    [[ -e "$a/$f" ]] || continue
    cmp -s "$a/$f" "$b/$f" || { echo "  $f differs"; ok=1; }
  done
  for f in summary.json run.json; do
    diff <(strip_volatile "$a/$f") <(strip_volatile "$b/$f") >/dev/null || { echo "  $f differs"; ok=1; }
  done
  return $ok
}

run_np() { # run_np NP command...: NP ranks (1: no mpiexec)
  local np=$1; shift
  if [[ $np -eq 1 ]]; then "$@"; else "$MPIEXEC" -n "$np" $MPIEXEC_FLAGS "$@"; fi
}

# resume_runs SET...: the stop-and-resume scenarios of case_resume for the coin-toss
# config with the extra --set assignments SET (e.g. /sampler/algorithm nuts); sets
# `common` (the run's arguments) for the caller.
resume_runs() {
  # A run stopped by SIGTERM at a random iteration (warmup or sampling; 1 or 2 ranks; the
  # signal reaching one rank only) exits 75 with a checkpoint, and `hmc resume` (on the same
  # or another rank count) ends with the files of an uninterrupted run, byte for byte.
  local cfg="${RESUME_CONFIG:-$HMC_SOURCE_DIR/configs/coin_toss.json}" scenario np_run np_resume phase it out rc err s
  common=(--config "$cfg" --set sampler.particles=45 --set sampler.warmup=80 --set sampler.draws=120
    --set sampler.thin=1 --set output.formats=both --set output.save_warmup=true --set output.flush_every=16
    --set output.checkpoint_every=25 --set log.level=info)
  for s in "$@"; do common+=(--set "$s"); done
  if ! "$HMC" "${common[@]}" --set "output.dir=$work/ref" >/dev/null 2>"$work/ref.err"; then
    fail "reference run: $(tail -3 "$work/ref.err")"; return
  fi
  RANDOM=${HMC_TEST_SEED:-$$}
  echo "iterations drawn with HMC_TEST_SEED=${HMC_TEST_SEED:-$$}"
  for scenario in "1 1 warmup" "1 1 sampling" "2 2 warmup" "2 1 sampling" "1 2 sampling" "2 2 sampling"; do
    read -r np_run np_resume phase <<<"$scenario"
    if [[ $phase == warmup ]]; then it=$((1 + RANDOM % 79)); else it=$((81 + RANDOM % 119)); fi
    out="$work/stop-$np_run-$np_resume-$it"
    HMC_TEST_SIGNAL="$it:$((np_run - 1))" run_np "$np_run" "$HMC" "${common[@]}" --set "output.dir=$out" \
      >/dev/null 2>"$out.err"
    rc=$?
    if [[ $rc -ne 75 || ! -s "$out.partial/checkpoint.bin" || -e "$out" ]]; then
      fail "SIGTERM at $it on $np_run rank(s): exit $rc, $(ls -A "$out.partial" 2>&1 | tr '\n' ' ') $(tail -2 "$out.err")"
      continue
    fi
    grep -q "SIGTERM: stopped after iteration $it of 200" "$out.err" || fail "no stop message: $(tail -2 "$out.err")"
    if ! err=$(run_np "$np_resume" "$HMC" resume "$out" 2>&1 >/dev/null); then
      fail "resume of $out on $np_resume rank(s): $err"; continue
    fi
    grep -q "resuming at iteration $it of 200" <<<"$err" || fail "resume did not start at $it: $err"
    if same_results "$work/ref" "$out" && [[ ! -e "$out.partial" ]]; then
      pass "SIGTERM at iteration $it ($phase) on $np_run rank(s), resumed on $np_resume: identical results"
    else
      fail "SIGTERM at iteration $it ($phase) on $np_run rank(s), resumed on $np_resume: results differ"
    fi
  done
  # SIGKILL between checkpoints loses at most the iterations since the last checkpoint.
  # (The first checkpoint is written after the first block, at iteration 16.)
  for it in $((81 + RANDOM % 119)) $((17 + RANDOM % 63)); do
    out="$work/kill-$it"
    HMC_TEST_SIGNAL="$it:0:KILL" "$HMC" "${common[@]}" --set "output.dir=$out" >/dev/null 2>"$out.err"
    rc=$?
    [[ $rc -eq 137 && -s "$out.partial/checkpoint.bin" ]] || { fail "SIGKILL at $it: exit $rc"; continue; }
    err=$("$HMC" resume "$out" 2>&1 >/dev/null) || { fail "resume after SIGKILL at $it: $err"; continue; }
    local from
    from=$(sed -n 's/.*resuming at iteration \([0-9]*\) of.*/\1/p' <<<"$err")
    if [[ -n $from && $from -le $it && $((it - from)) -lt 25 ]] && same_results "$work/ref" "$out"; then
      pass "SIGKILL at iteration $it: resumed from $from, identical results"
    else
      fail "SIGKILL at iteration $it: resumed from '${from}': $err"
    fi
  done
}

case_resume_nuts() {
  # The same with /sampler/algorithm nuts; and a checkpoint of one algorithm is refused by
  # a run of the other.
  local common=()
  resume_runs sampler.algorithm=nuts sampler.adapt.trajectory=fixed
  local nuts_out="$work/nuts-stopped" hmc_out="$work/hmc-stopped"
  HMC_TEST_SIGNAL=50 "$HMC" "${common[@]}" --set "output.dir=$nuts_out" >/dev/null 2>&1
  HMC_TEST_SIGNAL=50 "$HMC" --config "$HMC_SOURCE_DIR/configs/coin_toss.json" --set sampler.particles=45 \
    --set sampler.warmup=80 --set sampler.draws=120 --set "output.dir=$hmc_out" >/dev/null 2>&1
  cp "$nuts_out.partial/checkpoint.bin" "$hmc_out.partial/checkpoint.bin"
  expect_exit 4 'was written by /sampler/algorithm nuts, but .*run-config.json says hmc' -- "$HMC" resume "$hmc_out"
}

case_resume_mams() {
  # The same with /sampler/algorithm mams and the fisher_diag metric (its window sums of the
  # gradients are per-particle state in the checkpoint).
  local common=()
  resume_runs sampler.algorithm=mams sampler.adapt.trajectory=fixed sampler.adapt.metric=fisher_diag
}

case_resume_autodiff() {
  # The same for a route-(a) model: eight schools, its gradient by reverse mode (the tapes
  # are scratch, not state: a resumed run records them afresh).
  local common=()
  RESUME_CONFIG="$HMC_SOURCE_DIR/configs/eight_schools.json" resume_runs
}

case_resume() {
  local common=()
  resume_runs
  # What cannot be resumed is refused with one line.
  expect_exit 4 'no checkpointed run' -- "$HMC" resume "$work/nothing-here"
  expect_exit 4 'has finished' -- "$HMC" resume "$work/ref"
  out="$work/corrupt"
  HMC_TEST_SIGNAL=50 "$HMC" "${common[@]}" --set "output.dir=$out" >/dev/null 2>&1
  printf 'x' | dd of="$out.partial/checkpoint.bin" bs=1 seek=100 conv=notrunc status=none
  expect_exit 4 'checkpoint .* is corrupt' -- "$HMC" resume "$out"
  # A stopped run is not silently discarded by a new run.
  expect_exit 2 'a stopped run waits in .*hmc resume' -- "$HMC" "${common[@]}" --set "output.dir=$out"
  # `hmc summary` reads the stored draws of a checkpointed and of a finished run.
  out="$work/summ"
  HMC_TEST_SIGNAL=150 "$HMC" "${common[@]}" --set "output.dir=$out" >/dev/null 2>&1
  if "$HMC" summary "$out" | grep -q "checkpointed run in .*: 45 particles x 70 of 120 draws"; then
    pass "hmc summary of a checkpointed run"
  else
    fail "hmc summary of a checkpointed run: $("$HMC" summary "$out" 2>&1)"
  fi
  "$HMC" summary "$work/ref" --format json | grep -q '"state": "finished"' && pass "hmc summary --format json" \
    || fail "hmc summary --format json: $("$HMC" summary "$work/ref" --format json 2>&1 | tail -3)"
}

case_kill() {
  # A real SIGTERM from outside, at a random moment of a longer run, ends it within 10 s
  # with exit 75; resuming gives the uninterrupted run's results.
  local cfg="$HMC_SOURCE_DIR/configs/harmonic_oscillator.json" pid rc t0 delay
  local common=(--config "$cfg" --set sampler.particles=2048 --set sampler.warmup=300 --set sampler.draws=600
    --set output.formats=both --set log.level=warn)
  "$HMC" "${common[@]}" --set "output.dir=$work/ref" >/dev/null 2>&1 || { fail "reference run"; return; }
  for delay in 0.3 1.2; do
    "$HMC" "${common[@]}" --set "output.dir=$work/k$delay" >/dev/null 2>"$work/k$delay.err" &
    pid=$!
    sleep "$delay"
    t0=$EPOCHREALTIME
    kill -TERM "$pid"
    wait "$pid"; rc=$?
    local took; took=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')
    if [[ $rc -eq 0 ]]; then pass "run finished before the signal at $delay s"; continue; fi
    [[ $rc -eq 75 ]] || { fail "SIGTERM after $delay s: exit $rc: $(tail -2 "$work/k$delay.err")"; continue; }
    awk -v t="$took" 'BEGIN { exit !(t < 10) }' || fail "SIGTERM after $delay s: took $took s to stop"
    # (a signal before the config was read ends hmc at once: nothing to resume)
    grep -q 'while reading' "$work/k$delay.err" && { pass "SIGTERM after $delay s: stopped while reading the input"; continue; }
    "$HMC" resume "$work/k$delay" >/dev/null 2>&1 && same_results "$work/ref" "$work/k$delay" \
      && pass "SIGTERM after $delay s: stopped in $took s, resumed to identical results" \
      || fail "SIGTERM after $delay s: resume or comparison failed"
  done
}

case_slurm() {
  # The sbatch templates' requeue loop, with stand-ins for srun and scontrol: a run stopped by
  # SIGTERM exits 75 and is requeued; the next start resumes it to the uninterrupted results.
  local bin="$work/bin" tpl out rc pid
  mkdir -p "$bin"
  printf '#!/bin/bash\nwhile [[ $1 == --* ]]; do shift; done\nexec "$@"\n' >"$bin/srun"
  printf '#!/bin/bash\necho "$*" >>"$SCONTROL_LOG"\n' >"$bin/scontrol"
  chmod +x "$bin/srun" "$bin/scontrol"
  "$HMC" --config "$HMC_SOURCE_DIR/configs/harmonic_oscillator.json" --set sampler.particles=2048 \
    --set sampler.warmup=300 --set sampler.draws=600 --set log.level=warn --validate >"$work/slurm.json" \
    || { fail "--validate"; return; }
  "$HMC" --config "$work/slurm.json" --set "output.dir=$work/ref" >/dev/null 2>&1 || { fail "reference run"; return; }
  cd "$work" || return
  for tpl in cpu gpu; do
    out="$work/slurm-$tpl"
    local env=(env "PATH=$bin:$PATH" "CONFIG=$work/slurm.json" "OUT=$out" "HMC=$HMC" SLURM_JOB_ID=4$$
      SLURM_CPUS_PER_TASK=2 "SCONTROL_LOG=$work/scontrol-$tpl.log")
    # 1: the job is stopped at iteration 500 (as by the time limit) and requeues itself.
    HMC_TEST_SIGNAL=500 "${env[@]}" bash "$HMC_SOURCE_DIR/scripts/slurm/hmc-$tpl.sbatch" >"$out.log1" 2>&1
    rc=$?
    [[ $rc -eq 75 ]] && grep -q "^requeue 4$$" "$work/scontrol-$tpl.log" \
      || { fail "$tpl template, stopped job: exit $rc, $(cat "$work/scontrol-$tpl.log" 2>&1) $(tail -3 "$out.log1")"; continue; }
    # 2: SIGTERM to the batch script itself (what --signal=B:TERM sends) is passed on to hmc.
    "${env[@]}" bash "$HMC_SOURCE_DIR/scripts/slurm/hmc-$tpl.sbatch" >"$out.log2" 2>&1 &
    pid=$!
    sleep 1
    kill -TERM "$pid"
    wait "$pid"; rc=$?
    [[ $rc -eq 75 || $rc -eq 0 ]] || { fail "$tpl template, SIGTERM to the script: exit $rc: $(tail -3 "$out.log2")"; continue; }
    # 3: the requeued job resumes and finishes.
    if [[ $rc -eq 75 ]]; then
      "${env[@]}" bash "$HMC_SOURCE_DIR/scripts/slurm/hmc-$tpl.sbatch" >"$out.log3" 2>&1
      rc=$?
    fi
    if [[ $rc -eq 0 ]] && grep -q "resuming" "$out.log2" && same_results "$work/ref" "$out"; then
      pass "$tpl template: stopped, requeued, resumed to identical results"
    else
      fail "$tpl template: exit $rc: $(tail -3 "$out.log3" 2>/dev/null)"
    fi
  done
}

case_memory() {
  # Memory does not grow with the run: 16x the draws (420 MB of values if they were held)
  # leave the peak RSS (summary.json memory.peak_rss_mib, the largest over the ranks) within
  # 96 MiB of the short run's (the writers work in slices of about 32 MiB, which the short
  # run does not fill), and below half of the 420 MB, on 1 and on 2 ranks. The rank-based diagnostics hold up to
  # /diagnostics/max_draws draws of one parameter (about 48 bytes each); the cap is set
  # below both runs' draws so that only the streaming is measured.
  local np short long
  for np in 1 2; do
    for draws in 100 1600; do
      OMP_NUM_THREADS=1 run_np "$np" "$HMC" --config "$HMC_SOURCE_DIR/configs/coin_toss.json" \
        --set "output.dir=$work/mem-$np-$draws" --set sampler.particles=4096 --set sampler.warmup=50 \
        --set sampler.draws=$draws --set sampler.thin=1 --set output.flush_every=25 --set log.level=warn \
        --set diagnostics.max_draws=200000 >/dev/null 2>"$work/mem.err" || { fail "np $np draws $draws: $(tail -2 "$work/mem.err")"; return; }
    done
    short=$(sed -n 's/.*"peak_rss_mib": \([0-9.]*\).*/\1/p' "$work/mem-$np-100/summary.json")
    long=$(sed -n 's/.*"peak_rss_mib": \([0-9.]*\).*/\1/p' "$work/mem-$np-1600/summary.json")
    if [[ -n $short && -n $long ]] && awk -v a="$short" -v b="$long" 'BEGIN { exit !(b < a + 96 && b < 200) }'; then
      pass "np $np: peak RSS $short MiB (100 draws) vs $long MiB (1600 draws)"
    else
      fail "np $np: peak RSS '$short' MiB (100 draws) vs '$long' MiB (1600 draws)"
    fi
  done
}

case_readme() {
  # The README's example is configs/coin_toss.json, and its table is what that config prints.
  local readme="$HMC_SOURCE_DIR/README.md" cfg="$HMC_SOURCE_DIR/configs/coin_toss.json"
  python3 - "$readme" "$cfg" <<'PY' && pass "README config is configs/coin_toss.json" || fail "README config differs from configs/coin_toss.json"
import json, re, sys
text = open(sys.argv[1]).read()
block = re.search(r"## A run.*?```json\n(.*?)```", text, re.S).group(1)
sys.exit(0 if json.loads(block) == json.load(open(sys.argv[2])) else 1)
PY
  "$HMC" --config "$cfg" --set "output.dir=$work/readme" 2>/dev/null | grep -v '^time ' >"$work/readme.out"
  python3 - "$readme" "$work/readme.out" <<'PY' && pass "README table is the run's" || fail "README table differs from the run: $(cat "$work/readme.out")"
import re, sys
text = open(sys.argv[1]).read()
table = re.search(r"```\n(parameter .*?)```", text, re.S).group(1)
want = [l for l in table.splitlines() if not l.startswith("time ")]
got = open(sys.argv[2]).read().splitlines()
sys.exit(0 if want == got else 1)
PY
}

case_watchdog() {
  # /run/rank_timeout_s under MPI: a rank stopped by SIGSTOP, or whose main thread hangs,
  # ends the whole job with exit code 4 well within 30 s of a 3 s timeout, with one line
  # naming it. A run with a checkpoint keeps OUT.partial and resumes; one without leaves
  # nothing. Rank 0 busy alone at the end for longer than the timeout is no fault.
  local cfg="$HMC_SOURCE_DIR/configs/coin_toss.json" scenario rank kind it pattern out rc took t0 n
  local common=(--config "$cfg" --set sampler.particles=64 --set sampler.warmup=100 --set sampler.draws=400
    --set output.checkpoint_every=50 --set run.rank_timeout_s=3 --set log.level=warn)
  # Whatever happens, no stopped rank outlives the test.
  trap 'for p in $(pgrep -f -- "$work/"); do kill -CONT "$p"; kill -KILL "$p"; done 2>/dev/null; rm -rf "$work"' EXIT
  for scenario in "1 STOP 300 its process does not respond" "0 STOP 300 its process does not respond" "1 HANG 20 busy without"; do
    read -r rank kind it pattern <<<"$scenario"
    out="$work/wd-$rank-$kind"
    t0=$EPOCHREALTIME
    HMC_TEST_SIGNAL="$it:$rank:$kind" timeout -k 10 60 "$MPIEXEC" -n 2 $MPIEXEC_FLAGS "$HMC" "${common[@]}" \
      --set "output.dir=$out" >/dev/null 2>"$out.err"
    rc=$?
    took=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
    n=$(grep -c "^hmc: run error: rank $rank made no progress for [0-9]* s (/run/rank_timeout_s): $pattern" "$out.err")
    if [[ $rc -ne 4 || $n -ne 1 || $(grep -c '^hmc: ' "$out.err") -ne 1 ]]; then
      fail "$kind rank $rank at iteration $it: exit $rc after $took s: $(grep -v '^ *$' "$out.err" | head -5)"; continue
    fi
    awk -v t="$took" 'BEGIN { exit !(t < 30) }' || { fail "$kind rank $rank: the job took $took s to end"; continue; }
    [[ -e "$out" ]] && { fail "$kind rank $rank: $out exists"; continue; }
    if [[ $it -gt 50 ]]; then
      # Checkpointed (every 50 iterations): resumable to the end.
      [[ -s "$out.partial/checkpoint.bin" ]] || { fail "$kind rank $rank: no checkpoint kept"; continue; }
      "$HMC" resume "$out" >/dev/null 2>"$out.resume.err" && [[ -s "$out/summary.json" && ! -e "$out.partial" ]] \
        || { fail "$kind rank $rank: resume: $(tail -2 "$out.resume.err")"; continue; }
    elif [[ -e "$out.partial" ]]; then
      fail "$kind rank $rank before the first checkpoint: $out.partial left behind"; continue
    fi
    pass "$kind rank $rank at iteration $it: exit 4 after $took s: $(grep '^hmc: ' "$out.err")"
  done
  # The end phase (diagnostics, draws.csv and a deflate-9 draws.nc for 4096 x 1000 draws,
  # over 1 s here) on rank 0 alone outlasts a 0.5 s timeout while rank 1 waits: the run
  # succeeds. (Its timings in summary.json show that the end phase did outlast it.)
  out="$work/wd-end"
  if ! timeout -k 10 300 "$MPIEXEC" -n 2 $MPIEXEC_FLAGS "$HMC" --config "$cfg" --set sampler.particles=4096 \
      --set sampler.warmup=50 --set sampler.draws=1000 --set sampler.adapt.trajectory=fixed \
      --set sampler.leapfrog_steps=1 --set output.formats=both --set output.compression=9 --set run.rank_timeout_s=0.5 \
      --set log.level=warn \
      --set "output.dir=$out" >/dev/null 2>"$out.err"; then
    fail "long end phase with a 0.5 s timeout: $(grep -v '^ *$' "$out.err" | head -3)"; return
  fi
  local end_s
  end_s=$(sed -n -e 's/.*"diagnostics": \([0-9.]*\).*/\1/p' -e 's/.*"write": \([0-9.]*\).*/\1/p' "$out/summary.json" \
    | awk '{ s += $1 } END { print s }')
  if awk -v s="$end_s" 'BEGIN { exit !(s > 0.5) }'; then
    pass "rank 0 alone for $end_s s at the end with a 0.5 s timeout: exit 0"
  else
    fail "the end phase took only $end_s s, not more than the 0.5 s timeout: make the test's run larger"
  fi
}

case_bytes() {
  # Paths are bytes: an output directory and a data file whose names are not UTF-8 work,
  # through a stop and a resume, and JSON output (summary --format json) replaces the bytes.
  local cfg="$HMC_SOURCE_DIR/configs/coin_toss.json" data out rc
  data="$work/"$'d\xff'; out="$work/"$'o\xfe'
  mkdir -p "$data" && cp "$HMC_SOURCE_DIR/configs/data/coin_toss.json" "$data/t.json"
  HMC_TEST_SIGNAL=100 "$HMC" --config "$cfg" --set "model.data=$data/t.json" --set "output.dir=$out" \
    --set sampler.particles=16 --set log.level=warn >/dev/null 2>"$work/bytes.err"
  rc=$?
  [[ $rc -eq 75 ]] && pass "non-UTF-8 paths: stopped with 75" || fail "non-UTF-8 paths: exit $rc: $(cat "$work/bytes.err")"
  "$HMC" resume "$out" >/dev/null 2>"$work/bytes.err" && [[ -s "$out/draws.nc" ]] \
    && pass "non-UTF-8 paths: resumed" || fail "non-UTF-8 paths: resume: $(cat "$work/bytes.err")"
  "$HMC" summary --format json "$out" >"$work/bytes.json" 2>"$work/bytes.err" \
    && python3 -c 'import json, sys; json.load(open(sys.argv[1], encoding="utf-8"))' "$work/bytes.json" \
    && pass "summary --format json of a non-UTF-8 path is UTF-8 JSON" || fail "summary --format json: $(cat "$work/bytes.err")"
  grep -q $'\xef\xbf\xbd' "$out/run.json" && pass "run.json replaces the bytes" || fail "run.json: no U+FFFD"
}

case_scaling() {
  # scripts/scaling --quick: one CSV row per run with the documented columns, per-rank
  # records in run.json that add up, PNGs when matplotlib is there; srun inside a Slurm
  # job (a stand-in that starts the ranks with mpiexec), and a launcher that does not
  # start the ranks asked for is an error. No timing checks.
  local sc="$HMC_SOURCE_DIR/scripts/scaling" out="$work/scaling" bin="$work/bin-scaling" rc
  if ! python3 "$sc" --quick --hmc "$HMC" --mpiexec "$MPIEXEC" --layouts 1x1,1x2,2x1 --out "$out" \
      >"$out.log" 2>&1; then
    fail "scripts/scaling --quick: $(tail -3 "$out.log")"; return
  fi
  python3 - "$out" <<'PY' && pass "scaling CSV and run.json per_rank" || fail "scaling CSV or run.json: see above"
import csv, json, math, sys
from pathlib import Path
out = Path(sys.argv[1])
cols = ("mode,ranks,threads,cores,particles,particles_per_rank_max,repeat,wall_s,sampling_s,sampling_max_s,"
        "sampling_min_s,sampling_mean_s,imbalance,mpi_max_s,reduce_max_s,gather_max_s,control_max_s,reduce_calls,"
        "gather_calls,control_calls,gather_bytes_rank0,store_s,grad_evals,grad_evals_per_s,speedup,ideal_speedup,"
        "efficiency").split(",")
rows = list(csv.DictReader(open(out / "scaling.csv")))
bad = []
def check(ok, what):
    if not ok: bad.append(what)
check(list(rows[0].keys()) == cols if rows else False, "CSV header")
check(len(rows) == 6, f"{len(rows)} rows, not 6")
for r in rows:
    name = f"{r['mode']}-{r['ranks']}x{r['threads']}"
    R = int(r["ranks"])
    check(int(r["particles"]) == (64 if r["mode"] == "strong" else 32 * R), name + " particles")
    for k in ("sampling_max_s", "sampling_mean_s", "grad_evals_per_s", "efficiency", "wall_s"):
        check(math.isfinite(float(r[k])) and float(r[k]) > 0, f"{name} {k}={r[k]}")
    check(float(r["sampling_min_s"]) <= float(r["sampling_mean_s"]) <= float(r["sampling_max_s"]), name + " min/mean/max")
    check(float(r["imbalance"]) >= 1.0, name + " imbalance")
    check(int(r["reduce_calls"]) > 0 and int(r["gather_calls"]) > 0, name + " MPI calls")
    check((int(r["gather_bytes_rank0"]) > 0) == (R > 1), name + " rank 0 gather bytes")
    run = json.load(open(out / "runs" / f"{name}-r1" / "run.json"))
    summary = json.load(open(out / "runs" / f"{name}-r1" / "summary.json"))
    pr = run["per_rank"]
    check([p["rank"] for p in pr] == list(range(R)), name + " per_rank ranks")
    check(sum(p["particles"] for p in pr) == int(r["particles"]), name + " per_rank particles")
    check(sum(p["grad_evals"] for p in pr) == summary["throughput"]["grad_evals"], name + " per_rank grad_evals")
    check(max(p["sampling_s"] for p in pr) == summary["timings_s"]["sampling"], name + " per_rank sampling_s")
    # Collectives are called by every rank alike; with 2 ranks, rank 0 receives what rank 1 sends.
    for kind in ("reduce", "gather"):
        check(len({p["mpi"][kind]["calls"] for p in pr}) == 1, f"{name} {kind} calls differ between ranks")
    check(len({p["mpi"]["gather"]["bytes"] for p in pr}) == 1, name + " gather bytes of rank 0 and 1")
for b in bad: print("  " + b)
sys.exit(1 if bad else 0)
PY
  if grep -q "matplotlib is missing" "$out.log"; then
    [[ ! -e "$out/speedup.png" ]] && pass "no matplotlib: said so, CSV written" || fail "no matplotlib, yet a PNG"
  else
    local png ok=1
    for png in speedup efficiency; do
      [[ $(head -c 4 "$out/$png.png" 2>/dev/null | od -An -c | tr -d ' ') == '211PNG' ]] || ok=0
    done
    [[ $ok -eq 1 ]] && pass "speedup.png and efficiency.png" || fail "PNGs missing: $(tail -3 "$out.log")"
  fi
  # Inside a Slurm job: srun --ntasks=R --cpus-per-task=T, here a stand-in that hands the
  # ranks to mpiexec.
  mkdir -p "$bin"
  printf '#!/bin/bash\nn=1\nwhile [[ $1 == --* ]]; do [[ $1 == --ntasks=* ]] && n=${1#--ntasks=}; shift; done\nexec %q -n "$n" %s "$@"\n' \
    "$MPIEXEC" "$MPIEXEC_FLAGS" >"$bin/srun"
  chmod +x "$bin/srun"
  if env "PATH=$bin:$PATH" SLURM_JOB_ID=5$$ python3 "$sc" --quick --hmc "$HMC" --mode strong --layouts 2x1 \
      --out "$out-srun" >"$out-srun.log" 2>&1 && head -1 "$out-srun/logs/strong-2x1-r1.log" | grep -q '^srun --ntasks=2 --cpus-per-task=1 ' \
      && [[ $(grep -c '^strong,2,1,' "$out-srun/scaling.csv") -eq 1 ]]; then
    pass "under Slurm: srun --ntasks=2"
  else
    fail "under Slurm: $(tail -3 "$out-srun.log")"
  fi
  # The sbatch template, submitted from the source tree, with the same stand-in.
  if (cd "$HMC_SOURCE_DIR" && env "PATH=$bin:$PATH" SLURM_JOB_ID=5$$ SLURM_NTASKS=2 SLURM_CPUS_PER_TASK=1 \
      CONFIG=configs/coin_toss.json MODE=weak LAYOUTS=1x1,2x1 PARTICLES=32 REPEATS=1 OUT="$out-sbatch" HMC="$HMC" \
      SETS="sampler.warmup=10 sampler.draws=10" bash scripts/slurm/sweep.sbatch) >"$out-sbatch.log" 2>&1 \
      && [[ $(grep -c '^weak,' "$out-sbatch/scaling.csv") -eq 2 ]]; then
    pass "scripts/slurm/sweep.sbatch"
  else
    fail "scripts/slurm/sweep.sbatch: $(tail -3 "$out-sbatch.log")"
  fi
  # A launcher that starts one process instead of two: exit 4, naming the mismatch.
  printf '#!/bin/bash\nwhile [[ $1 == --* ]]; do shift; done\nexec "$@"\n' >"$bin/srun"
  env "PATH=$bin:$PATH" python3 "$sc" --quick --hmc "$HMC" --mode strong --layouts 2x1 --launcher srun \
    --out "$out-bad" >"$out-bad.log" 2>&1
  rc=$?
  [[ $rc -eq 4 ]] && grep -q "asked for 2 rank(s), the run had 1" "$out-bad.log" \
    && pass "a launcher that starts too few ranks: exit 4" || fail "too few ranks: exit $rc: $(tail -2 "$out-bad.log")"
}

# full_disk_check NAME RC ERRFILE OUT FILE_RE CHECKPOINTED: the contract of a write that
# failed: exit 4, one line "hmc: ..." naming the file, no result set, no temporary or
# half-written file; the checkpoint kept (CHECKPOINTED 1) and resumed to the reference
# results, or OUT.partial removed (0).
full_disk_check() {
  local name=$1 rc=$2 err=$3 out=$4 file_re=$5 checkpointed=$6 line
  line=$(head -c 600 "$err")
  [[ $rc -eq 4 ]] || { fail "$name: exit $rc, expected 4: $line"; return; }
  [[ $(grep -c . "$err") -eq 1 && $(grep -c '^hmc: cannot write ' "$err") -eq 1 ]] \
    || { fail "$name: not one 'hmc: cannot write' line: $line"; return; }
  grep -qE -- "$file_re" "$err" || { fail "$name: the line does not name $file_re: $line"; return; }
  [[ -e $out ]] && { fail "$name: $out was published"; return; }
  if [[ $checkpointed -eq 0 ]]; then
    [[ -e $out.partial ]] && { fail "$name: $out.partial left without a checkpoint: $(ls -A "$out.partial" | tr '\n' ' ')"; return; }
    pass "$name: exit 4, $(cut -c1-150 "$err"); nothing left"
    return
  fi
  [[ -f $out.partial/checkpoint.bin ]] || { fail "$name: no checkpoint in $out.partial"; return; }
  # the file that failed is gone (but for checkpoint.bin: that is the previous one, whole)
  local named; named=$(grep -oE "$out\.partial/[^:]+" "$err" | head -1)
  [[ -n $named && $named != */checkpoint.bin && -e $named ]] && { fail "$name: the half-written $named is left"; return; }
  if find "$out.partial" -name '*.tmp' | grep -q .; then fail "$name: temporary files left: $(find "$out.partial" -name '*.tmp')"; return; fi
  if "$HMC" resume "$out" >/dev/null 2>"$out.resume.err" && same_results "$work/ref" "$out"; then
    pass "$name: exit 4, $(cut -c1-150 "$err"); resumed to identical results"
  else
    fail "$name: resume: $(tail -2 "$out.resume.err")"
  fi
}

case_full_disk() {
  # A disk that fills up, a quota, an I/O error while hmc writes: in every writer and in the
  # checkpoint, exit 4 and one line naming the file, never a crash; the last checkpoint
  # stays and `hmc resume` finishes to the results of an uninterrupted run. A preloaded
  # shim makes writes under a directory fail after a byte budget (no root needed), at
  # points taken from a traced run: where each file's writing starts, plus an offset.
  local shim=${HMC_FULL_DISK_SHIM:-}
  [[ -n $shim && -f $shim ]] || { fail "no full-disk shim: HMC_FULL_DISK_SHIM='$shim'"; return; }
  local common=(--config "$HMC_SOURCE_DIR/configs/coin_toss.json" --set sampler.particles=64 --set sampler.warmup=50
    --set sampler.draws=100 --set sampler.thin=1 --set output.flush_every=40 --set output.checkpoint_every=0
    --set output.formats=both --set log.level=error)
  "$HMC" "${common[@]}" --set "output.dir=$work/ref" >/dev/null 2>"$work/ref.err" \
    || { fail "reference run: $(tail -2 "$work/ref.err")"; return; }
  local fd="$work/fd"
  mkdir -p "$fd"
  local spec name kind from off name_re checkpointed out rc
  # name, errno, where the budget starts (a path's part[:N], the N-th file opened that has
  # it in its path), the budget, the file the line must name, whether a checkpoint remains
  for spec in \
    "run_config ENOSPC .run-config.json.tmp 10 run-config\.json 0" \
    "first_tile ENOSPC .tile.tmp:1 100 blocks/posterior-0+\.tile 0" \
    "first_checkpoint ENOSPC .checkpoint.bin.tmp:1 100 checkpoint\.bin 0" \
    "tile ENOSPC .tile.tmp:2 100 blocks/posterior-0+40\.tile 1" \
    "checkpoint ENOSPC .checkpoint.bin.tmp:2 100 checkpoint\.bin 1" \
    "draws_nc_create ENOSPC /draws.nc 0 draws\.nc 1" \
    "draws_nc_metadata ENOSPC /draws.nc 3000 draws\.nc 1" \
    "draws_nc ENOSPC /draws.nc 20000 draws\.nc 1" \
    "draws_nc_end ENOSPC /draws.nc 80000 draws\.nc 1" \
    "draws_csv ENOSPC .draws.csv.tmp 5000 draws\.csv 1" \
    "particles_csv ENOSPC .particles.csv.tmp 100 particles\.csv 1" \
    "run_json ENOSPC .run.json.tmp 100 run\.json 1" \
    "summary_json ENOSPC .summary.json.tmp 100 summary\.json 1" \
    "draws_nc_quota EDQUOT /draws.nc 20000 draws\.nc.*quota 1" \
    "checkpoint_quota EDQUOT .checkpoint.bin.tmp:2 100 checkpoint\.bin.*quota 1" \
    "draws_csv_quota EDQUOT .draws.csv.tmp 5000 draws\.csv.*quota 1" \
    "draws_nc_io_error EIO /draws.nc 20000 draws\.nc.*Input/output.error 1" \
    "draws_nc_create_io_error EIO /draws.nc 0 draws\.nc.*Input/output.error 1" \
    "checkpoint_io_error EIO .checkpoint.bin.tmp:2 100 checkpoint\.bin.*Input/output.error 1" \
    "draws_csv_io_error EIO .draws.csv.tmp 5000 draws\.csv.*Input/output.error 1" \
    "summary_json_io_error EIO .summary.json.tmp 100 summary\.json.*Input/output.error 1"; do
    read -r name kind from off name_re checkpointed <<<"$spec"
    out="$fd/$name"
    LD_PRELOAD="$shim" ASAN_OPTIONS=verify_asan_link_order=0 HMC_TEST_ENOSPC_DIR="$fd" HMC_TEST_ENOSPC_ERRNO="$kind" \
      HMC_TEST_ENOSPC_FROM="$from" HMC_TEST_ENOSPC_AFTER="$off" \
      "$HMC" "${common[@]}" --set "output.dir=$out" >/dev/null 2>"$out.err"
    rc=$?
    full_disk_check "$name ($kind $off bytes into $from)" "$rc" "$out.err" "$out" "$name_re" "$checkpointed"
  done
  # The last write of draws.nc failing (nc_close's rewrite of the superblock; netCDF then
  # crashes inside nc_close): the budget is draws.nc's size, from a traced run, less 16 bytes.
  local trace="$fd/trace" size
  LD_PRELOAD="$shim" ASAN_OPTIONS=verify_asan_link_order=0 HMC_TEST_ENOSPC_DIR="$fd" HMC_TEST_ENOSPC_TRACE="$trace" \
    "$HMC" "${common[@]}" --set "output.dir=$fd/traced" >/dev/null 2>&1
  size=$(awk '/\/draws\.nc$/ { start = $1; getline; print $1 - start; exit }' "$trace" 2>/dev/null)
  if [[ $size =~ ^[0-9]+$ ]] && ((size > 16)); then
    out="$fd/draws_nc_close"
    LD_PRELOAD="$shim" ASAN_OPTIONS=verify_asan_link_order=0 HMC_TEST_ENOSPC_DIR="$fd" HMC_TEST_ENOSPC_ERRNO=EIO \
      HMC_TEST_ENOSPC_FROM=/draws.nc HMC_TEST_ENOSPC_AFTER=$((size - 16)) \
      "$HMC" "${common[@]}" --set "output.dir=$out" >/dev/null 2>"$out.err"
    rc=$?
    full_disk_check "draws_nc_close (EIO in the last 16 of draws.nc's $size bytes)" "$rc" "$out.err" "$out" \
      'draws\.nc: netCDF failed while closing it' 1
  else
    fail "draws.nc's size from the traced run: '$size'"
  fi

  # A real full file system: a small tmpfs, where one can be mounted (as root, or in a user
  # namespace); of the sizes, some fill up in the store, some in the results.
  local mnt="$work/tmpfs" userns=()
  mkdir -p "$mnt"
  if unshare -rm true 2>/dev/null; then
    userns=(unshare -rm)
  elif [[ $(id -u) -eq 0 ]] && unshare -m true 2>/dev/null; then
    userns=(unshare -m)
  else
    echo "skipped: a real full tmpfs (neither 'unshare -rm' nor root's 'unshare -m' works here)"
    return
  fi
  export -f full_disk_check strip_volatile same_results pass fail
  export HMC work
  # shellcheck disable=SC2016
  "${userns[@]}" bash -c '
    mnt=$1; shift; failures=0; results=0
    for size in 256k 512k 640k 1024k 1536k; do
      mount -t tmpfs -o "size=$size" tmpfs "$mnt" || { echo "FAIL: mount tmpfs"; exit 1; }
      out="$mnt/out"
      # (the free space hmc checks before sampling taken as ample: the disk fills up later,
      # as when another job writes to it)
      HMC_TEST_FREE_BYTES=1000000000000 "$HMC" "$@" --set "output.dir=$out" >/dev/null 2>"$work/tmpfs.err"; rc=$?
      if [[ $rc -eq 0 ]]; then
        echo "ok: tmpfs of $size: the run fits"
      else
        grep -qE "(draws\.nc|draws\.csv|particles\.csv|run\.json|summary\.json):" "$work/tmpfs.err" && results=$((results + 1))
        mount -o remount,size=16m "$mnt"  # space again, for the resume
        full_disk_check "tmpfs of $size" "$rc" "$work/tmpfs.err" "$out" "$mnt/out\.partial/" \
          "$([[ -e $out.partial ]] && echo 1 || echo 0)"
      fi
      # (a process substitution of same_results may still hold a file there for a moment)
      for t in 1 2 3 4 5 6 7 8 9 10; do umount "$mnt" 2>/dev/null && break; sleep 0.5; done
      mountpoint -q "$mnt" && { echo "FAIL: cannot unmount $mnt"; exit 1; }
    done
    [[ $results -gt 0 ]] && echo "ok: a tmpfs run failed in the results" || { echo "FAIL: no tmpfs size failed in the results"; failures=$((failures + 1)); }
    exit "$failures"' _ "$mnt" "${common[@]}"
  local inner=$?
  failures=$((failures + inner))
}

# blocked_refused NAME CODE REGEX -- COMMAND...: COMMAND ends at once (within 5 s: `timeout -k 2 10`
# turns a hang into a failure) with exit CODE and one line "hmc: ..." matching REGEX.
blocked_refused() {
  local name=$1 want=$2 pattern=$3; shift 4
  local t0=$EPOCHREALTIME err rc took
  err=$(timeout -k 2 10 "$@" 2>&1 >/dev/null); rc=$?
  took=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
  [[ $rc -eq $want ]] || { fail "$name: exit $rc after $took s, expected $want: $(head -c 300 <<<"$err")"; return; }
  awk -v t="$took" 'BEGIN { exit !(t < 5) }' || { fail "$name: took $took s"; return; }
  [[ $(grep -c . <<<"$err") -eq 1 && $err == "hmc: "* ]] || { fail "$name: not one 'hmc: ' line: $err"; return; }
  grep -qE -- "$pattern" <<<"$err" || { fail "$name: '$err' does not match '$pattern'"; return; }
  pass "$name: exit $rc in $took s: $err"
}

# hung NAME SIGNAL CODE REGEX -- COMMAND...: COMMAND under the hung-read shim (its reads of
# HMC_TEST_HUNG_READ never return) gets SIGNAL after 1 s and must end within 2 s more (then
# SIGKILL: exit 137) with exit CODE and, unless REGEX is empty, one line matching REGEX.
hung() {
  local name=$1 sig=$2 want=$3 pattern=$4; shift 5
  local t0=$EPOCHREALTIME err rc took
  err=$(LD_PRELOAD="$HMC_HUNG_READ_SHIM" ASAN_OPTIONS=verify_asan_link_order=0 \
    timeout --preserve-status -s "$sig" -k 2 1 "$@" 2>&1 >/dev/null); rc=$?
  took=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
  [[ $rc -eq $want ]] || { fail "$name: exit $rc after $took s, expected $want: $(head -c 300 <<<"$err")"; return; }
  awk -v t="$took" 'BEGIN { exit !(t < 2.9) }' || { fail "$name: took $took s"; return; }
  if [[ -n $pattern ]]; then
    [[ $(grep -c . <<<"$err") -eq 1 && $err == "hmc: "* ]] || { fail "$name: not one 'hmc: ' line: $err"; return; }
    grep -qE -- "$pattern" <<<"$err" || { fail "$name: '$err' does not match '$pattern'"; return; }
  fi
  pass "$name: $sig after 1 s, exit $rc at $took s${err:+: $err}"
}

case_inputs() {
  # Inputs that could block a read for ever. A FIFO (named pipe) that nobody writes to, as
  # the config, the data, run-config.json or checkpoint.bin for `hmc resume`, and draws.nc
  # or run.json for `hmc summary`, is refused at once (only regular files are read). A read
  # that hangs (a hung network file system; a preloaded shim here) ends within a second of
  # SIGTERM or SIGINT: exit 75, one line, nothing written, a stopped run left as it was.
  local cfg="$HMC_SOURCE_DIR/configs/coin_toss.json" fifo="$work/fifo"
  local small=(--set sampler.particles=8 --set sampler.warmup=20 --set sampler.draws=20 --set log.level=error)
  mkfifo "$fifo" || { fail "mkfifo"; return; }
  cd "$work" || return
  blocked_refused "FIFO as --config" 2 'config file .*fifo is not a regular file \(a FIFO\)' -- \
    "$HMC" --config "$fifo"
  blocked_refused "FIFO as /model/data" 3 'data file .*fifo \(/model/data\) is not a regular file \(a FIFO\)' -- \
    "$HMC" --config "$cfg" --set "model.data=$fifo" --set output.dir="$work/nothing"
  blocked_refused "FIFO as --config of hmc diagnose" 2 'config file .*fifo is not a regular file' -- \
    "$HMC" diagnose --config "$fifo"
  [[ -e $work/nothing || -e $work/nothing.partial ]] && fail "an output directory was created"
  # a finished run, its draws.nc and run.json replaced by FIFOs
  "$HMC" --config "$cfg" "${small[@]}" --set "output.dir=$work/done" >/dev/null 2>&1 || { fail "a finished run"; return; }
  cp -r "$work/done" "$work/done2" && cp -r "$work/done" "$work/done3"
  rm "$work/done/draws.nc" && mkfifo "$work/done/draws.nc"
  blocked_refused "FIFO as draws.nc for hmc summary" 4 'cannot read .*done/draws\.nc: is not a regular file \(a FIFO\)' -- \
    "$HMC" summary "$work/done"
  rm "$work/done2/run.json" && mkfifo "$work/done2/run.json"
  blocked_refused "FIFO as run.json for hmc summary" 4 'done2/run\.json is not a regular file \(a FIFO\)' -- \
    "$HMC" summary "$work/done2"
  # a stopped run (SIGTERM after iteration 10), its checkpoint, then its run-config.json a FIFO
  HMC_TEST_SIGNAL=10 "$HMC" --config "$cfg" "${small[@]}" --set "output.dir=$work/stopped" >/dev/null 2>&1
  [[ -f $work/stopped.partial/checkpoint.bin ]] || { fail "a stopped run"; return; }
  cp -r "$work/stopped.partial" "$work/stopped.keep"
  mv "$work/stopped.partial/checkpoint.bin" "$work/checkpoint.bin" && mkfifo "$work/stopped.partial/checkpoint.bin"
  blocked_refused "FIFO as checkpoint.bin for hmc resume" 4 'checkpoint .*checkpoint\.bin: is not a regular file \(a FIFO\)' -- \
    "$HMC" resume "$work/stopped"
  rm "$work/stopped.partial/checkpoint.bin" && mv "$work/checkpoint.bin" "$work/stopped.partial/checkpoint.bin"
  mv "$work/stopped.partial/run-config.json" "$work/run-config.json" && mkfifo "$work/stopped.partial/run-config.json"
  blocked_refused "FIFO as run-config.json for hmc resume" 4 'run-config\.json is not a regular file \(a FIFO\)' -- \
    "$HMC" resume "$work/stopped"
  rm "$work/stopped.partial/run-config.json" && mv "$work/run-config.json" "$work/stopped.partial/run-config.json"

  # Reads that hang: SIGTERM (SIGINT) ends hmc within a second.
  local shim=${HMC_HUNG_READ_SHIM:-}
  [[ -n $shim && -f $shim ]] || { fail "no hung-read shim: HMC_HUNG_READ_SHIM='$shim'"; return; }
  local line='hmc: SIG(TERM|INT) while reading'
  HMC_TEST_HUNG_READ=coin_toss.json hung "hung config, SIGTERM" TERM 75 "$line the config and the data" -- \
    "$HMC" --config "$cfg" --set "output.dir=$work/hung"
  HMC_TEST_HUNG_READ=data/coin_toss.json hung "hung data, SIGINT" INT 75 "$line the config and the data" -- \
    "$HMC" --config "$cfg" --set "output.dir=$work/hung"
  HMC_TEST_HUNG_READ=coin_toss.json hung "hung config, --validate" TERM 75 "$line the config" -- \
    "$HMC" --config "$cfg" --validate
  [[ -e $work/hung || -e $work/hung.partial ]] && fail "a run stopped while reading its input left $work/hung(.partial)"
  HMC_TEST_HUNG_READ=run-config.json hung "hung run-config.json of hmc resume" TERM 75 "$line the run's config" -- \
    "$HMC" resume "$work/stopped"
  HMC_TEST_HUNG_READ=checkpoint.bin hung "hung checkpoint.bin of hmc resume" TERM 75 "$line the checkpoint" -- \
    "$HMC" resume "$work/stopped"
  # hmc summary reads only: the signal's default action ends it (143: killed by SIGTERM)
  HMC_TEST_HUNG_READ=draws.nc hung "hung draws.nc of hmc summary" TERM 143 "" -- "$HMC" summary "$work/done3"
  # Under MPI the rank watchdog ends a checkpoint read that hangs, once it lasts /run/rank_timeout_s.
  local t0 took rc err
  HMC_TEST_SIGNAL=10 "$HMC" --config "$cfg" "${small[@]}" --set run.rank_timeout_s=2 --set "output.dir=$work/wd" \
    >/dev/null 2>&1
  if [[ -f $work/wd.partial/checkpoint.bin ]]; then
    t0=$EPOCHREALTIME
    err=$(LD_PRELOAD="$shim" HMC_TEST_HUNG_READ=checkpoint.bin timeout -k 2 30 \
      "$MPIEXEC" -n 2 $MPIEXEC_FLAGS "$HMC" resume "$work/wd" 2>&1 >/dev/null)
    rc=$?
    took=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
    if [[ $rc -eq 4 && -f $work/wd.partial/checkpoint.bin ]] &&
      grep -q '^hmc: run error: rank 0 made no progress for [0-9]* s (/run/rank_timeout_s): a read of its input does not return' <<<"$err" &&
      awk -v t="$took" 'BEGIN { exit !(t < 15) }'; then
      pass "hung checkpoint.bin of hmc resume on 2 ranks: the watchdog ends it in $took s, exit 4, checkpoint kept"
    else
      fail "hung checkpoint.bin on 2 ranks, rank_timeout_s 2: exit $rc after $took s: $(grep -m 2 . <<<"$err")"
    fi
  else
    fail "a stopped run with /run/rank_timeout_s 2"
  fi
  if diff -r "$work/stopped.partial" "$work/stopped.keep" >/dev/null; then
    pass "the stopped run is unchanged"
  else
    fail "the stopped run changed: $(diff -r "$work/stopped.partial" "$work/stopped.keep" | head -3)"
  fi
  "$HMC" resume "$work/stopped" >/dev/null 2>&1 && [[ -s $work/stopped/draws.nc ]] \
    && pass "the stopped run resumes" || fail "the stopped run does not resume"
}

# in_mount SOURCE TARGET command...: the command in a mount namespace of its own where
# TARGET is a bind mount of SOURCE (a container's -v SOURCE:TARGET).
in_mount() {
  local source=$1 target=$2; shift 2
  unshare -m bash -c 'mount --bind "$1" "$2" && shift 2 && exec "$@"' _ "$source" "$target" "$@"
}

case_publish() {
  # Publishing into an existing empty OUT (a pre-created scratch folder, a container's bind
  # mount): the run stages inside it (OUT/.hmc.partial) and renames each result file in;
  # OUT itself is never renamed. A publishing that fails after sampling keeps the results
  # and names the command that finishes the job.
  local cfg="$HMC_SOURCE_DIR/configs/coin_toss.json" out rc err pid i
  local common=(--config "$cfg" --set sampler.particles=45 --set sampler.warmup=40 --set sampler.draws=80
    --set output.formats=both --set output.checkpoint_every=10 --set output.flush_every=8 --set log.level=info)
  local files="draws.csv draws.nc particles.csv run.json summary.json "
  "$HMC" "${common[@]}" --set "output.dir=$work/ref" >/dev/null 2>"$work/ref.err" || { fail "reference run: $(tail -2 "$work/ref.err")"; return; }
  out="$work/empty"
  mkdir "$out"
  if "$HMC" "${common[@]}" --set "output.dir=$out" >/dev/null 2>"$out.err" && same_results "$work/ref" "$out" &&
    [[ "$(ls -A "$out" | tr '\n' ' ')" == "$files" && ! -e "$out.partial" ]]; then
    pass "an existing empty OUT: results published into it"
  else
    fail "an existing empty OUT: $(ls -A "$out" | tr '\n' ' ') $(tail -2 "$out.err")"
  fi
  # Stopped by a signal: the checkpoint waits inside OUT, and resume publishes there.
  out="$work/empty-stop"
  mkdir "$out"
  HMC_TEST_SIGNAL=50 "$HMC" "${common[@]}" --set "output.dir=$out" >/dev/null 2>"$out.err"
  rc=$?
  if [[ $rc -eq 75 && -s "$out/.hmc.partial/checkpoint.bin" && ! -e "$out.partial" ]] &&
    grep -q "checkpoint in $out/.hmc.partial; continue with: hmc resume $out" "$out.err"; then
    pass "an existing empty OUT, stopped: checkpoint in OUT/.hmc.partial"
  else
    fail "an existing empty OUT, stopped: exit $rc, $(ls -A "$out" "$out.partial" 2>&1 | tr '\n' ' ') $(tail -1 "$out.err")"
  fi
  expect_exit 2 "a stopped run waits in $out/.hmc.partial" -- "$HMC" "${common[@]}" --set "output.dir=$out"
  if "$HMC" resume "$out" >/dev/null 2>"$out.err" && same_results "$work/ref" "$out" &&
    [[ "$(ls -A "$out" | tr '\n' ' ')" == "$files" ]]; then
    pass "an existing empty OUT, resumed: identical results, published into it"
  else
    fail "an existing empty OUT, resumed: $(ls -A "$out" | tr '\n' ' ') $(tail -2 "$out.err")"
  fi
  # A bind mount as OUT (needs a mount namespace: root, or unprivileged user namespaces).
  if unshare -m true 2>/dev/null; then
    mkdir -p "$work/host" "$work/mnt"
    if in_mount "$work/host" "$work/mnt" "$HMC" "${common[@]}" --set "output.dir=$work/mnt" >/dev/null 2>"$work/mnt.err" &&
      same_results "$work/ref" "$work/host" && [[ ! -e "$work/mnt.partial" ]]; then
      pass "a bind mount as OUT: results in the mounted folder"
    else
      fail "a bind mount as OUT: $(tail -2 "$work/mnt.err")"
    fi
    # --overwrite of the results in a bind mount: replaced whole, inside the mount.
    touch "$work/host/old-notes.txt"
    if in_mount "$work/host" "$work/mnt" "$HMC" "${common[@]}" --set "output.dir=$work/mnt" --set seed=7 --overwrite \
        >/dev/null 2>"$work/mnt.err" && [[ "$(ls -A "$work/host" | tr '\n' ' ')" == "$files" ]] &&
      ! cmp -s "$work/ref/draws.csv" "$work/host/draws.csv"; then
      pass "a bind mount as OUT, --overwrite: the old set replaced"
    else
      fail "a bind mount as OUT, --overwrite: $(ls -A "$work/host" | tr '\n' ' ') $(tail -2 "$work/mnt.err")"
    fi
  else
    echo "skipped: a bind mount as OUT (this machine allows no mount namespace: unshare -m)"
  fi
  # OUT appears, with someone else's file, while the run goes on: publishing is refused, the
  # results stay in OUT.partial, the line says how to finish; resume then publishes.
  out="$work/late"
  HMC_TEST_SIGNAL=60:0:STOP "$HMC" "${common[@]}" --set "output.dir=$out" >/dev/null 2>"$out.err" &
  pid=$!
  for ((i = 0; i < 300; i++)); do [[ $(ps -o stat= -p "$pid" 2>/dev/null) == T* ]] && break; sleep 0.1; done
  mkdir -p "$out" && echo notes >"$out/notes.txt"
  kill -CONT "$pid"
  wait "$pid"
  rc=$?
  err=$(grep '^hmc: ' "$out.err")
  if [[ $rc -eq 4 && $(grep -c . <<<"$err") -eq 1 && -s "$out.partial/summary.json" ]] &&
    [[ "$err" == *"cannot publish the results in $out: "*"the complete results are in $out.partial; once that is fixed, finish with: hmc resume $out" ]]; then
    pass "publishing refused after sampling: exit 4, '$err'"
  else
    fail "publishing refused after sampling: exit $rc, '$err', $(ls -A "$out.partial" 2>&1 | tr '\n' ' ')"
  fi
  rm -f "$out/notes.txt"
  if "$HMC" resume "$out" >/dev/null 2>"$out.err" && same_results "$work/ref" "$out" && [[ ! -e "$out.partial" ]]; then
    pass "publishing refused, then hmc resume: identical results"
  else
    fail "publishing refused, then hmc resume: $(tail -2 "$out.err")"
  fi
}

case_messages() {
  # Errors that name the real cause: one line, a documented exit code, nothing left behind.
  local cfg="$HMC_SOURCE_DIR/configs/coin_toss.json" out
  local common=(--config "$cfg" --set sampler.particles=16 --set sampler.warmup=40 --set sampler.draws=40
    --set log.level=warn)
  out="$work/csv-only"
  "$HMC" "${common[@]}" --set "output.dir=$out" --set 'output.formats=["csv"]' >/dev/null 2>&1 || fail "csv-only run"
  expect_exit 4 "the run in $out finished without draws.nc .*summary is $out/summary.json" -- "$HMC" summary "$out"
  ln -s loop-b "$work/loop-a" && ln -s loop-a "$work/loop-b"
  expect_exit 4 'cannot read .*loop-a: Too many levels of symbolic links' -- "$HMC" summary "$work/loop-a"
  expect_exit 4 'no checkpointed run at .*loop-a' -- "$HMC" resume "$work/loop-a"
  # The algorithm of a stopped run changed in its run-config.json: named as such, not as a tile.
  out="$work/algorithm"
  HMC_TEST_SIGNAL=50 "$HMC" "${common[@]}" --set "output.dir=$out" --set output.flush_every=8 >/dev/null 2>&1
  sed -i 's/"algorithm": *"hmc"/"algorithm":"nuts"/' "$out.partial/run-config.json"
  expect_exit 4 'checkpoint .* was written by /sampler/algorithm hmc, but .*run-config.json says nuts' -- \
    "$HMC" resume "$out"
  [[ -s "$out.partial/checkpoint.bin" ]] && pass "the stopped run is kept" || fail "the stopped run was removed"
}

case_threads() {
  # More ranks than cores, no thread count given: one thread per rank (logged, in run.json),
  # a warning, and about the time of one rank rather than OpenMP's starved barriers.
  local cfg="$HMC_SOURCE_DIR/configs/coin_toss.json" cores t1 t4 out="$work/np4"
  cores=$(nproc)
  local common=(--config "$cfg" --set log.level=info)
  t1=$EPOCHREALTIME
  (unset OMP_NUM_THREADS; "$HMC" "${common[@]}" --set "output.dir=$work/np1" >/dev/null 2>"$work/np1.err") || fail "1 rank"
  t1=$(awk -v a="$t1" -v b="$EPOCHREALTIME" 'BEGIN { print b - a }')
  t4=$EPOCHREALTIME
  (unset OMP_NUM_THREADS; "$MPIEXEC" -n $((2 * cores)) $MPIEXEC_FLAGS "$HMC" "${common[@]}" --set "output.dir=$out" \
    >/dev/null 2>"$out.err") || fail "$((2 * cores)) ranks: $(tail -2 "$out.err")"
  t4=$(awk -v a="$t4" -v b="$EPOCHREALTIME" 'BEGIN { print b - a }')
  grep -q '1 thread(s) per rank (chosen: ' "$out.err" && pass "the choice is logged" || fail "no thread line: $(head -3 "$out.err")"
  [[ $(grep -c "exceed the $cores core(s) of this node" "$out.err") -eq 1 ]] && pass "one warning" ||
    fail "no single oversubscription warning: $(grep -c exceed "$out.err")"
  grep -A6 '"host_threads"' "$out/run.json" | grep -q '"source": "cores"' &&
    grep -A6 '"host_threads"' "$out/run.json" | grep -q '"threads": 1' && pass "run.json records 1 thread, chosen" ||
    fail "run.json: $(grep -A6 '"host_threads"' "$out/run.json")"
  cmp -s "$work/np1/draws.nc" "$out/draws.nc" && pass "the same draws" || fail "draws differ from 1 rank's"
  # Oversubscribed OpenMP took 100x the 1-rank time; a wide margin keeps this from being flaky.
  awk -v a="$t1" -v b="$t4" 'BEGIN { exit !(b < 5 * a + 3) }' && pass "$((2 * cores)) ranks in ${t4} s, 1 rank in ${t1} s" ||
    fail "$((2 * cores)) ranks took ${t4} s against ${t1} s for 1 rank"
  # A thread count the user set is kept, and a count that oversubscribes is warned about.
  OMP_NUM_THREADS=$cores "$MPIEXEC" -n 2 $MPIEXEC_FLAGS "$HMC" "${common[@]}" --set sampler.draws=50 \
    --set "output.dir=$work/user" >/dev/null 2>"$work/user.err"
  grep -q "$cores thread(s) per rank (set by OMP_NUM_THREADS)" "$work/user.err" &&
    grep -q "lower OMP_NUM_THREADS, or unset it" "$work/user.err" && pass "OMP_NUM_THREADS kept, warned" ||
    fail "OMP_NUM_THREADS: $(head -4 "$work/user.err")"
}

# arch_of RUN_DIR: run.json's "arch" as "level built cpu_level requested" (built: a,b,c).
arch_of() {
  python3 -c 'import json, sys
a = json.load(open(sys.argv[1]))["arch"]
print(a["level"], ",".join(a["built"]), a["cpu_level"], a["requested"] or "-")' "$1/run.json"
}

case_arch() {
  # The instruction set (core/arch.hpp, docs/performance.md#portable-builds): the log line and
  # run.json's "arch"; in a portable build the launcher's choice, HMC_ARCH and its refusals,
  # also under MPI; in a single-level build the refusal of any other level.
  local small=(--config "$HMC_SOURCE_DIR/configs/coin_toss.json" --set sampler.particles=32
               --set sampler.warmup=10 --set sampler.draws=10)
  local level built cpu_level requested l n=0
  if ! "$HMC" "${small[@]}" --set output.dir="$work/arch" >/dev/null 2>"$work/arch.log"; then
    fail "run: $(tail -2 "$work/arch.log")"; return
  fi
  read -r level built cpu_level requested < <(arch_of "$work/arch")
  grep -q "instruction set $level (built: ${built//,/, }; CPU .*: $cpu_level)" "$work/arch.log" \
    && pass "log line: $(grep -o 'instruction set.*' "$work/arch.log")" || fail "no instruction-set line: $(head -3 "$work/arch.log")"
  if [[ $level == native || $level == baseline ]]; then
    [[ $built == "$level" && $requested == - ]] && pass "run.json arch: $level" || fail "run.json arch: $level $built $requested"
    HMC_ARCH=$level "$HMC" --version >/dev/null && pass "HMC_ARCH=$level runs" || fail "HMC_ARCH=$level refused"
    expect_exit 2 "HMC_ARCH=x86-64: this executable is built for $level only" -- env HMC_ARCH=x86-64 "$HMC" "${small[@]}" \
      --set output.dir="$work/arch-refused"
    [[ -e "$work/arch-refused" ]] && fail "a refused run left an output directory"
    echo "(a single-level build: the launcher's cases run in a portable build, -DHMC_NATIVE_ARCH=OFF)"
    return
  fi
  # A portable build: the launcher picked the highest built level this CPU runs.
  local best
  best=$(python3 -c 'import sys
order = ["x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4"]
cpu = order.index(sys.argv[2])
print([b for b in sys.argv[1].split(",") if order.index(b) <= cpu][-1])' "$built" "$cpu_level")
  [[ $level == "$best" && $requested == - ]] && pass "launcher chose $level (CPU: $cpu_level, built: $built)" \
    || fail "launcher chose $level, expected $best (CPU: $cpu_level, built: $built)"
  for l in ${built//,/ }; do
    n=$((n + 1))
    if [[ $(python3 -c 'import sys; o = ["x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4"]
print(o.index(sys.argv[1]) <= o.index(sys.argv[2]))' "$l" "$cpu_level") != True ]]; then
      expect_exit 2 "HMC_ARCH=$l: this CPU runs $cpu_level at most" -- env HMC_ARCH=$l "$HMC" "${small[@]}" \
        --set output.dir="$work/arch-$n"
      continue
    fi
    if HMC_ARCH=$l "$HMC" "${small[@]}" --set output.dir="$work/arch-$n" >/dev/null 2>"$work/arch-$n.log" \
        && [[ $(arch_of "$work/arch-$n") == "$l $built $cpu_level $l" ]]; then
      pass "HMC_ARCH=$l"
    else
      fail "HMC_ARCH=$l: $(arch_of "$work/arch-$n" 2>&1) $(tail -2 "$work/arch-$n.log")"
    fi
  done
  expect_exit 2 'HMC_ARCH=avx512 is not a level of this build \(built: ' -- env HMC_ARCH=avx512 "$HMC" --version
  [[ ,$built, == *,x86-64-v2,* ]] \
    || expect_exit 2 'HMC_ARCH=x86-64-v2 is not built' -- env HMC_ARCH=x86-64-v2 "$HMC" --version
  # Under mpiexec the launcher replaces itself in every rank before MPI starts.
  l=${built%%,*}
  if HMC_ARCH=$l "$MPIEXEC" -n 2 $MPIEXEC_FLAGS "$HMC" "${small[@]}" --set output.dir="$work/arch-mpi" \
      >/dev/null 2>"$work/arch-mpi.log" && [[ $(arch_of "$work/arch-mpi") == "$l $built $cpu_level $l" ]]; then
    pass "HMC_ARCH=$l under $MPIEXEC -n 2"
  else
    fail "under $MPIEXEC -n 2: $(tail -3 "$work/arch-mpi.log")"
  fi
  # A level's executable run directly refuses another level.
  local exe other
  exe="$(dirname "$(readlink -f "$HMC")")/../libexec/hmc/hmc-$level"
  other=$([[ $level == x86-64 ]] && echo x86-64-v4 || echo x86-64)
  expect_exit 2 "HMC_ARCH=$other: this executable is built for $level" -- env HMC_ARCH=$other "$exe" --version
}

"case_$1"
echo "$failures failure(s)"
[[ $failures -eq 0 ]]
