#!/usr/bin/env bash
# The bad-input corpus: every line of tests/cli/bad/cases.tsv runs hmc on one malformed or
# absurd input and checks the contract of docs/cli.md#exit-codes:
#   - the exit code is the one expected (2 config/command line, 3 data, 4 run);
#   - stderr has exactly one line starting "hmc: ", it matches the case's regex (the key as
#     a JSON pointer, the file's basename or the option) and is at most 4096 bytes long;
#   - nothing is left behind: no OUT, no OUT.partial, no new file or directory at all in the
#     case's directory (the working directory of the run).
# Usage: bad_corpus.sh [NAME_REGEX]   (run only the cases whose name matches)
# Environment (set by ctest): HMC (the binary), HMC_SOURCE_DIR, MPIEXEC, MPIEXEC_FLAGS.
# HMC_BAD_CORPUS_TIMEOUT: seconds per case (default 60); HMC_BAD_CORPUS_JOBS: cases run at
# the same time (default 6; most of a case's time is MPI start-up, not CPU);
# HMC_BAD_CORPUS_EVERY=N: only every N-th case (of those the filter leaves), for the
# sanitizer leg (ctest cli_bad_corpus_sample).
# The format of cases.tsv and how to add a case: docs/testing.md#the-bad-input-corpus.
set -uo pipefail

: "${HMC:?}" "${HMC_SOURCE_DIR:?}"
MPIEXEC=${MPIEXEC:-mpiexec}
MPIEXEC_FLAGS=${MPIEXEC_FLAGS:-}
if [[ $(id -u) -eq 0 ]]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
filter=${1:-}
per_case_timeout=${HMC_BAD_CORPUS_TIMEOUT:-60}
BAD="$HMC_SOURCE_DIR/tests/cli/bad"
SRC="$HMC_SOURCE_DIR"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
cases=0
declare -A seen=()

# Helpers for the arguments column (evaluated with the case's directory as working directory).
# rep N TEXT: TEXT repeated N times.
rep() {
  local n=$1 s=$2 out=""
  while [[ $n -gt 0 ]]; do
    if ((n & 1)); then out+=$s; fi
    s+=$s; n=$((n >> 1))
  done
  printf '%s' "$out"
}
# gen NAME TEXT...: writes the words TEXT (joined by spaces) to NAME, prints its absolute path.
gen() { local f=$1; shift; printf '%s' "$*" >"$f"; printf '%s' "$PWD/$f"; }
# genb NAME TEXT...: as gen, with printf %b escapes (\xHH, \0NNN, \n) for bytes that text cannot hold.
genb() { local f=$1; shift; printf '%b' "$*" >"$f"; printf '%s' "$PWD/$f"; }
# conf NAME [TEXT]: a small coin_toss config (8 particles, 5 + 5 iterations, /output/dir OUT) with the
# top-level members TEXT (JSON text, no braces) added; prints its absolute path.
conf() {
  local f=$1; shift
  printf '{"model": {"name": "coin_toss", "data": "%s/configs/data/coin_toss.json"}, "sampler": {"particles": 8,
 "warmup": 5, "draws": 5}, "output": {"dir": "%s"}%s}' "$SRC" "$out" "${1:+, $1}" >"$f"
  printf '%s' "$PWD/$f"
}
# mkd NAME [FILE...]: makes directory NAME (holding the empty FILEs), prints its absolute path.
mkd() { local d=$1; shift; mkdir -p "$d"; local f; for f in "$@"; do : >"$d/$f"; done; printf '%s' "$PWD/$d"; }

run_case() {
  local name=$1 want=$2 regex=$3 args=$4
  local dir="$work/cases/$name" out q_bad q_src q_out q_tmp
  mkdir -p "$dir"
  out="$dir/out"
  printf -v q_bad '%q' "$BAD"
  printf -v q_src '%q' "$SRC"
  printf -v q_out '%q' "$out"
  printf -v q_tmp '%q' "$dir"
  args=${args//@RUN@/--config @BAD@/base.json --set output.dir=@OUT@}
  args=${args//@SMALL@/--set sampler.particles=8 --set sampler.warmup=5 --set sampler.draws=5 --set output.dir=@OUT@}
  args=${args//@BAD@/$q_bad}
  args=${args//@SRC@/$q_src}
  args=${args//@OUT@/$q_out}
  args=${args//@TMP@/$q_tmp}
  local mpi=0 words=() envs=()
  if [[ $args == *@NP2@* ]]; then mpi=1; args=${args//@NP2@/}; fi
  (cd "$dir" && eval "set -- $args" && for w in "$@"; do printf '%s\0' "$w"; done) >"$dir.args" 2>"$dir.args.err" || {
    echo "FAIL: $name: the arguments do not evaluate: $(head -c 300 "$dir.args.err")"
    failures=$((failures + 1)); return
  }
  mapfile -d '' words <"$dir.args"
  while [[ ${#words[@]} -gt 0 && ${words[0]} =~ ^[A-Z_][A-Z0-9_]*= ]]; do envs+=("${words[0]}"); words=("${words[@]:1}"); done
  local cmd=(env "${envs[@]}")
  if [[ $mpi -eq 1 ]]; then cmd+=("$MPIEXEC" -n 2 $MPIEXEC_FLAGS); fi
  cmd+=("$HMC" "${words[@]}")
  local before after err rc lines line
  before=$(cd "$dir" && find . | LC_ALL=C sort)
  local t_start=$EPOCHREALTIME
  (cd "$dir" && exec timeout -k 5 "$per_case_timeout" "${cmd[@]}" </dev/null >"$dir.stdout" 2>"$dir.stderr")
  rc=$?
  local t_end=$EPOCHREALTIME took
  took=$(( (${t_end/[.,]/} - ${t_start/[.,]/}) / 100000 ))
  took="$((took / 10)).$((took % 10))"
  after=$(cd "$dir" && find . | LC_ALL=C sort)
  err=$(<"$dir.stderr")
  lines=$(grep -ac '^hmc: ' "$dir.stderr")
  line=$(grep -a -m1 '^hmc: ' "$dir.stderr")
  local first=${line:-$(grep -a -m1 . "$dir.stderr")}
  first=${first:0:300}
  local problem=""
  if [[ ! $rc =~ ^($want)$ ]]; then
    problem="exited $rc, expected $want"
    [[ $rc -eq 124 || $rc -eq 137 ]] && problem+=" (timed out after $per_case_timeout s)"
  elif [[ $lines -ne 1 ]]; then
    problem="$lines lines start with 'hmc: ', expected 1"
  elif ! LC_ALL=C grep -qaE -- "$regex" <<<"$line"; then
    problem="the hmc line does not match '$regex'"
  elif [[ ${#line} -gt 4096 ]]; then
    problem="the hmc line is ${#line} bytes long (at most 4096)"
  elif [[ -e $out || -e $out.partial ]]; then
    problem="left $(ls -d "$out" "$out.partial" 2>/dev/null | tr '\n' ' ')behind"
  elif [[ $before != "$after" ]]; then
    problem="changed its directory: new: $(comm -13 <(printf '%s\n' "$before") <(printf '%s\n' "$after") | head -3 | tr '\n' ' ')"
    problem+="gone: $(comm -23 <(printf '%s\n' "$before") <(printf '%s\n' "$after") | head -3 | tr '\n' ' ')"
  fi
  if [[ -n $problem ]]; then
    echo "FAIL: $name ($took s): $problem: ${first:-<no stderr>}"
  else
    echo "ok: $name ($took s) -> $rc: $line"
  fi
  rm -rf "$dir" "$dir".*
}

t0=$SECONDS
jobs=${HMC_BAD_CORPUS_JOBS:-6}
every=${HMC_BAD_CORPUS_EVERY:-1}
listed=0
mkdir -p "$work/results"
while IFS= read -r row || [[ -n $row ]]; do
  [[ -z ${row//[[:space:]]/} || $row == \#* ]] && continue
  IFS=$'\t' read -r name want regex args <<<"$row"
  tabs=${row//[^$'\t']/}
  if [[ ${#tabs} -lt 3 || -z $name || -z $regex || ! $want =~ ^[0-9]+(\|[0-9]+)*$ ]]; then
    echo "FAIL: malformed line in cases.tsv: $row"; failures=$((failures + 1)); continue
  fi
  if [[ -n ${seen[$name]:-} ]]; then echo "FAIL: duplicate case name $name"; failures=$((failures + 1)); continue; fi
  seen[$name]=1
  [[ -n $filter && ! $name =~ $filter ]] && continue
  listed=$((listed + 1))
  (((listed - 1) % every == 0)) || continue
  cases=$((cases + 1))
  # Up to $jobs cases at a time: a run mostly waits (MPI start-up), so this shortens the wall time.
  while [[ $(jobs -rp | wc -l) -ge $jobs ]]; do wait -n; done
  run_case "$name" "$want" "$regex" "$args" >"$work/results/$(printf '%05d' "$cases")" 2>&1 &
done <"$BAD/cases.tsv"
wait
for r in "$work"/results/*; do
  [[ -e $r ]] || continue
  cat "$r"
  grep -q '^FAIL: ' "$r" && failures=$((failures + 1))
done

# The corpus stays large enough to cover issue 8's categories (checked on a full run only).
if [[ -z $filter && $every -eq 1 && ${#seen[@]} -lt 150 ]]; then echo "FAIL: only ${#seen[@]} cases (at least 150 expected)"; failures=$((failures + 1)); fi
echo "$cases case(s) in $((SECONDS - t0)) s, $failures failure(s)"
[[ $failures -eq 0 ]]
