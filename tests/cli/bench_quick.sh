#!/usr/bin/env bash
# scripts/bench --quick end to end (docs/performance.md): hmc and NumPyro (the cached venv of
# scripts/python_env.sh bench) on every workload, then bench.json's keys and bench.md. Also
# two hmc binaries in one run (hmc alone), which adds the ratio of the second to the first.
# No timing is checked: --quick sizes measure nothing.
# Environment (set by ctest): HMC (the binary), HMC_SOURCE_DIR.
set -uo pipefail
: "${HMC:?}" "${HMC_SOURCE_DIR:?}"
work=$(mktemp -d)
# NumPyro's compiled loops persist between runs (scripts/numpyro_bench.py): the second run
# of this test skips most of JAX's compilation.
export HMC_JAX_CACHE=${HMC_JAX_CACHE:-${HMC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hmc}/jax-cache}
trap 'rm -rf "$work"' EXIT
failures=0

if ! HMC="$HMC" "$HMC_SOURCE_DIR/scripts/bench" --quick --out "$work/full" >"$work/full.out" 2>"$work/full.err"; then
  echo "FAIL: scripts/bench --quick exited non-zero"; tail -20 "$work/full.err"; failures=$((failures + 1))
fi
if ! "$HMC_SOURCE_DIR/scripts/bench" --quick --hmc "old=$HMC" --hmc "new=$HMC" --no-numpyro --no-ess \
    --workloads coin_toss,hmm_k3_t2000 --out "$work/pair" >"$work/pair.out" 2>"$work/pair.err"; then
  echo "FAIL: scripts/bench --quick --hmc old=... --hmc new=... exited non-zero"; tail -20 "$work/pair.err"
  failures=$((failures + 1))
fi

python3 - "$work" <<'PY' || failures=$((failures + 1))
import json, math, os, sys
work = sys.argv[1]
bad = []
def check(cond, what):
    if not cond:
        bad.append(what)
def positive(x):
    return isinstance(x, (int, float)) and math.isfinite(x) and x > 0

for name, labels, ratios, sections in (
        ("full", ["hmc", "numpyro"], ["hmc / numpyro"],
         {"throughput": ["coin_toss", "harmonic_d100", "linear_accel", "hmm_k3_t2000"],
          "ess": ["coin_toss", "harmonic_d100", "linear_accel"]}),
        ("pair", ["old", "new"], ["new / old"], {"throughput": ["coin_toss", "hmm_k3_t2000"], "ess": []})):
    path = os.path.join(work, name, "bench.json")
    try:
        r = json.load(open(path))
    except Exception as e:
        bad.append(f"{name}: cannot read bench.json: {e}")
        continue
    for k in ("schema", "date", "quick", "command", "machine", "settings", "contestants", "throughput", "ess",
              "table_markdown", "errors"):
        check(k in r, f"{name}: no key {k}")
    check(r.get("schema") == "hmc-bench/1" and r.get("quick") is True, f"{name}: schema/quick")
    check(r.get("errors") == [], f"{name}: errors {r.get('errors')}")
    check([c.get("label") for c in r.get("contestants", [])] == labels, f"{name}: contestants")
    for k in ("cpu", "cores", "load_avg_start", "load_avg_end", "copy_gbps_one_core"):
        check(k in r.get("machine", {}), f"{name}: no machine.{k}")
    for section, workloads in sections.items():
        sec = r.get(section, {})
        check(sorted(sec) == sorted(workloads), f"{name}: {section} workloads {sorted(sec)}")
        for w in workloads:
            rec = sec.get(w, {})
            for l in labels:
                check(positive(rec.get("median", {}).get(l)), f"{name}: {section}.{w}.median.{l}")
                if section == "throughput" and l != "numpyro":
                    check(positive(rec.get("gbps_estimate", {}).get(l)), f"{name}: {section}.{w}.gbps_estimate.{l}")
                runs = rec.get("runs", {}).get(l, [])
                check(len(runs) == 1 and positive(runs[0].get("seconds")), f"{name}: {section}.{w}.runs.{l}")
            for q in ratios:
                check(positive(rec.get("ratios", {}).get(q)), f"{name}: {section}.{w}.ratios[{q}]")
    md = open(os.path.join(work, name, "bench.md")).read()
    check(md == r.get("table_markdown"), f"{name}: bench.md differs from table_markdown")
    out = open(os.path.join(work, name + ".out")).read()
    check(md.strip() in out, f"{name}: the table is not printed")
    check("| workload |" in md and "--quick" in md, f"{name}: bench.md has no table or no --quick label")
    for q in ratios:
        check(q in md, f"{name}: bench.md has no column {q}")
for b in bad:
    print("FAIL:", b)
if not bad:
    print("ok: bench.json keys, medians, ratios and bench.md")
sys.exit(1 if bad else 0)
PY

if ((failures)); then echo "bench_quick: $failures failure(s)"; exit 1; fi
echo "bench_quick: passed"
