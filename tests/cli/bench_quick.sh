#!/usr/bin/env bash
# scripts/bench --quick end to end (docs/performance.md): hmc, NumPyro and BlackJAX (the cached
# venv of scripts/python_env.sh bench) on every workload of every section (throughput, ess,
# nuts, chees), then bench.json's keys and bench.md. Also two hmc binaries in one run (hmc
# alone: throughput, nuts and chees sections), which adds the ratios of the second to the first.
# Then the stan section on one posteriordb example (ark) when PyStan can be installed.
# hmc's NUTS is required: a nuts run that failed (e.g. sampler.algorithm rejected) fails the test.
# No timing is checked: --quick sizes measure nothing.
# Environment (set by ctest): HMC (the binary), HMC_SOURCE_DIR.
set -uo pipefail
: "${HMC:?}" "${HMC_SOURCE_DIR:?}"
work=$(mktemp -d)
# NumPyro's and BlackJAX's compiled functions persist between runs (scripts/numpyro_bench.py,
# scripts/blackjax_bench.py): the second run of this test skips most of JAX's compilation.
export HMC_JAX_CACHE=${HMC_JAX_CACHE:-${HMC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hmc}/jax-cache}
trap 'rm -rf "$work"' EXIT
failures=0

if ! HMC="$HMC" "$HMC_SOURCE_DIR/scripts/bench" --quick --out "$work/full" >"$work/full.out" 2>"$work/full.err"; then
  echo "FAIL: scripts/bench --quick exited non-zero"; tail -20 "$work/full.err"; failures=$((failures + 1))
fi
if ! "$HMC_SOURCE_DIR/scripts/bench" --quick --hmc "old=$HMC" --hmc "new=$HMC" --no-numpyro --no-blackjax \
    --sections throughput,nuts,chees --workloads coin_toss,hmm_k3_t2000 --out "$work/pair" \
    >"$work/pair.out" 2>"$work/pair.err"; then
  echo "FAIL: scripts/bench --quick --hmc old=... --hmc new=... exited non-zero"; tail -20 "$work/pair.err"
  failures=$((failures + 1))
fi

# The stan section on one example: Stan (the cached venv of scripts/python_env.sh stan, a
# Python >= 3.12; the Stan program compiled once, cached by httpstan) and hmc-posteriordb.
stan_run=0
if [[ -n ${HMC_POSTERIORDB:-} ]] && "$HMC_SOURCE_DIR/scripts/python_env.sh" stan >/dev/null 2>"$work/stan-env.err"; then
  stan_run=1
  if ! "$HMC_SOURCE_DIR/scripts/bench" --quick --sections stan --stan-examples ark --posteriordb "$HMC_POSTERIORDB" \
      --out "$work/stan" >"$work/stan.out" 2>"$work/stan.err"; then
    echo "FAIL: scripts/bench --quick --sections stan exited non-zero"; tail -20 "$work/stan.err"
    failures=$((failures + 1))
  fi
  python3 - "$work/stan/bench.json" <<'PY' || failures=$((failures + 1))
import json, math, sys
r = json.load(open(sys.argv[1]))
runs = r.get("stan", {}).get("ark", {}).get("runs", {})
bad = [l for l in ("stan", "hmc nuts", "hmc chees")
       if not (runs.get(l) and math.isfinite(runs[l][0].get("ess_per_s", float("nan"))) and runs[l][0]["ess_per_s"] > 0
               and runs[l][0].get("grad_evals", 0) > 0 and "check" in runs[l][0])]
print("FAIL: stan section, ark: no figures for " + ", ".join(bad) if bad else "ok: stan section (ark)")
sys.exit(1 if bad or r.get("errors") else 0)
PY
else
  echo "skipped: the stan section (no HMC_POSTERIORDB, or no Python >= 3.12 for PyStan: $(tail -1 "$work/stan-env.err" 2>/dev/null))"
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

# name: contestants, then per section: workloads, labels, {median key: ratio key}, ratio names.
PER_S, PER_GRAD = {"median": "ratios"}, {"median": "ratios", "median_per_1k_grads": "ratios_per_1k_grads"}
runs = {
    "full": (["hmc", "numpyro", "blackjax"], {
        "throughput": (["coin_toss", "harmonic_d100", "linear_accel", "hmm_k3_t2000"], ["hmc", "numpyro"], PER_S,
                       ["hmc / numpyro"]),
        "ess": (["coin_toss", "harmonic_d100", "linear_accel"], ["hmc", "numpyro"], PER_S, ["hmc / numpyro"]),
        "nuts": (["coin_toss", "harmonic_d100", "linear_accel", "hmm_gaussian"], ["hmc nuts", "hmc chees", "numpyro"],
                 PER_GRAD, ["hmc nuts / numpyro", "hmc nuts / hmc chees"]),
        "chees": (["coin_toss", "linear_accel"], ["hmc", "blackjax"], PER_GRAD, ["hmc / blackjax"])}),
    "pair": (["old", "new"], {
        "throughput": (["coin_toss", "hmm_k3_t2000"], ["old", "new"], PER_S, ["new / old"]),
        "ess": ([], [], PER_S, []),
        "nuts": (["coin_toss"], ["old nuts", "old chees", "new nuts", "new chees"], PER_GRAD,
                 ["old nuts / old chees", "new nuts / new chees", "new nuts / old nuts"]),
        "chees": (["coin_toss"], ["old", "new"], PER_GRAD, ["new / old"])}),
}
for name, (contestants, sections) in runs.items():
    path = os.path.join(work, name, "bench.json")
    try:
        r = json.load(open(path))
    except Exception as e:
        bad.append(f"{name}: cannot read bench.json: {e}")
        continue
    for k in ("schema", "date", "quick", "command", "machine", "settings", "contestants", "throughput", "ess",
              "nuts", "chees", "table_markdown", "errors"):
        check(k in r, f"{name}: no key {k}")
    check(r.get("schema") == "hmc-bench/1" and r.get("quick") is True, f"{name}: schema/quick")
    # hmc's NUTS must run: its failures (a binary that rejects sampler.algorithm) fail the test.
    nuts_errors = [e for e in r.get("errors", []) if e.startswith("nuts ")]
    check(not nuts_errors, f"{name}: hmc NUTS runs failed: {nuts_errors[:2]}")
    check(r.get("errors") == [], f"{name}: errors {r.get('errors')}")
    check([c.get("label") for c in r.get("contestants", [])] == contestants, f"{name}: contestants")
    for k in ("cpu", "cores", "load_avg_start", "load_avg_end", "copy_gbps_one_core"):
        check(k in r.get("machine", {}), f"{name}: no machine.{k}")
    for section, (workloads, labels, keys, ratios) in sections.items():
        sec = r.get(section, {})
        check(sorted(sec) == sorted(workloads), f"{name}: {section} workloads {sorted(sec)}")
        for w in workloads:
            rec = sec.get(w, {})
            for l in labels:
                for mk in keys:
                    check(positive(rec.get(mk, {}).get(l)), f"{name}: {section}.{w}.{mk}.{l}")
                if section == "throughput" and l != "numpyro":
                    check(positive(rec.get("gbps_estimate", {}).get(l)), f"{name}: {section}.{w}.gbps_estimate.{l}")
                runs_l = rec.get("runs", {}).get(l, [])
                check(len(runs_l) == 1 and positive(runs_l[0].get("seconds")), f"{name}: {section}.{w}.runs.{l}")
                if section in ("nuts", "chees"):
                    check(runs_l and positive(runs_l[0].get("grad_evals")), f"{name}: {section}.{w}.runs.{l} grad_evals")
            for rk in keys.values():
                for q in ratios:
                    check(positive(rec.get(rk, {}).get(q)), f"{name}: {section}.{w}.{rk}[{q}]")
            if section == "nuts":
                check("sampler.algorithm=nuts" in rec.get("hmc_sets_nuts", []), f"{name}: nuts.{w}.hmc_sets_nuts")
            if section == "chees" and "blackjax" in labels:
                check(rec.get("blackjax", {}).get("chains") == rec["runs"]["hmc"][0].get("particles"),
                      f"{name}: chees.{w}: BlackJAX's chains are not hmc's particles")
    md = open(os.path.join(work, name, "bench.md")).read()
    check(md == r.get("table_markdown"), f"{name}: bench.md differs from table_markdown")
    out = open(os.path.join(work, name + ".out")).read()
    check(md.strip() in out, f"{name}: the table is not printed")
    check("| workload |" in md and "--quick" in md, f"{name}: bench.md has no table or no --quick label")
    for section, (workloads, labels, keys, ratios) in sections.items():
        for q in ratios:
            check(q in md, f"{name}: bench.md has no column {q}")
for b in bad[:20]:
    print("FAIL:", b)
if len(bad) > 20:
    print(f"FAIL: ... and {len(bad) - 20} more")
if not bad:
    print("ok: bench.json keys, medians, ratios and bench.md")
sys.exit(1 if bad else 0)
PY

if ((failures)); then echo "bench_quick: $failures failure(s)"; exit 1; fi
echo "bench_quick: passed"
