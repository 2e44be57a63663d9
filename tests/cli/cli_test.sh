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
  # `hmc diagnose` on every shipped config (models added later are covered too): exit 0
  # and a table with a row per coordinate.
  local cfg name out bad="$HMC_SOURCE_DIR/tests/cli/bad"
  cd "$work" || exit 1
  for cfg in "$HMC_SOURCE_DIR"/configs/*.json; do
    name=$(basename "$cfg" .json)
    if ! out=$("$HMC" diagnose --config "$cfg" --set output.dir=SHOULD_NOT_EXIST 2>"$work/$name.diag.err"); then
      fail "diagnose $name: exit $?: $(tail -3 "$work/$name.diag.err") $(tail -5 <<<"$out")"; continue
    fi
    if grep -qE '^coordinate +particle +analytic +finite_diff +rel_error +noise$' <<<"$out" && grep -q '^theta\[1\]' <<<"$out" \
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
  # A tolerance no finite difference can resolve: exit 5, one error line naming the place.
  expect_exit 5 'gradient check failed: theta\[[0-9]+\] \(p\[[0-9]\]\) at the start of particle [0-9]+: the finite differences cannot resolve it \(noise .* > 10 \* tolerance 1e-300\)' \
    -- "$HMC" diagnose --config "$HMC_SOURCE_DIR/configs/coin_toss.json" --tolerance 1e-300
  # A step so small that fd is 0 / 0: the error is not finite, exit 5.
  expect_exit 5 'gradient check failed: theta\[[0-9]+\] \(p\[[0-9]\]\) at the start of particle [0-9]+: relative error inf' \
    -- "$HMC" diagnose --config "$HMC_SOURCE_DIR/configs/coin_toss.json" --step 1e-300
  # --tolerance and --step must be finite numbers > 0.
  local opt value
  for opt in --tolerance --step; do
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
  # /sampler/algorithm hmc and nuts.
  local variant cfg extra ref h np threads tag sets s
  local nuts="sampler.algorithm=nuts sampler.adapt.trajectory=fixed"
  for variant in "coin_toss" "harmonic_oscillator" "harmonic_oscillator sampler.adapt.metric=dense" \
      "coin_toss $nuts" "harmonic_oscillator $nuts sampler.adapt.metric=dense"; do
    read -r cfg extra <<<"$variant"
    tag=$cfg${extra:+-$(tr -c 'a-z0-9\n' - <<<"$extra")}
    sets=()
    for s in $extra; do sets+=(--set "$s"); done
    ref=""
    for run in "1 1" "1 2" "2 1" "4 1" "2 2"; do
      read -r np threads <<<"$run"
      out="$work/$tag-np$np-t$threads"
      if ! OMP_NUM_THREADS=$threads "$MPIEXEC" -n "$np" $MPIEXEC_FLAGS "$HMC" \
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
    if [[ $extra == *nuts* ]]; then
      grep -q '"algorithm": "nuts"' "$out/summary.json" || fail "$tag: not sampled with NUTS"
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
    -e '/"output.dir=/d' -e '/"started_utc"/d' -e '/"concurrency"/d' "$1"
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
  local cfg="$HMC_SOURCE_DIR/configs/coin_toss.json" scenario np_run np_resume phase it out rc err s
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
  expect_exit 4 'is of /sampler/algorithm nuts; this run.s is hmc' -- "$HMC" resume "$hmc_out"
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
