# shellcheck shell=bash
# scripts/lib.sh - shell helpers shared by the scripts (sourced, not run).
# Before sourcing, set LOG_PREFIX (e.g. "setup"); HMC_VERBOSE=1 echoes the logs.

log() { printf '%s: %s\n' "$LOG_PREFIX" "$*" >&2; }
die() { printf '%s: error: %s\n' "$LOG_PREFIX" "$*" >&2; exit 1; }

# run_logged LOGFILE CMD...: run CMD with its output in LOGFILE (appended);
# on failure show the log's tail and stop.
run_logged() {
  local logfile=$1 rc=0
  shift
  mkdir -p "$(dirname "$logfile")"
  printf '\n$ %s\n' "$*" >>"$logfile"
  if [[ "${HMC_VERBOSE:-0}" == 1 ]]; then
    "$@" 2>&1 | tee -a "$logfile" >&2 || rc=$?
  else
    "$@" >>"$logfile" 2>&1 || rc=$?
  fi
  if ((rc != 0)); then
    printf '%s: error: "%s" failed (exit %d); last lines of %s:\n' "$LOG_PREFIX" "$*" "$rc" "$logfile" >&2
    tail -n 40 "$logfile" | sed 's/^/  | /' >&2
    exit "$rc"
  fi
}
