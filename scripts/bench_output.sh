#!/usr/bin/env bash
# scripts/bench_output.sh - the output workloads of docs/output.md#measured: how much of a
# run's wall time writing and diagnostics take, how long ArviZ takes to open draws.nc, and
# the peak RSS of every rank of a large run.
#
# Usage: scripts/bench_output.sh [WORKDIR]    (default: a new directory under /tmp; kept)
# Needs build/bin/hmc (scripts/setup.sh), /usr/bin/time (Debian: time) and, for the ArviZ
# timing, scripts/python_env.sh. The large run writes about 13 GB to WORKDIR.
# Environment: HMC (default build/bin/hmc), HMC_BIG_PARTICLES (65536), HMC_BIG_DRAWS (2000).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
HMC=${HMC:-$ROOT/build/bin/hmc}
work=${1:-$(mktemp -d "${TMPDIR:-/tmp}/hmc-bench-output.XXXXXX")}
mkdir -p "$work"
if ((EUID == 0)); then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
export OMPI_MCA_rmaps_base_oversubscribe=1 OMP_PROC_BIND=${OMP_PROC_BIND:-false}
[[ -x /usr/bin/time ]] || { echo "bench_output: /usr/bin/time is missing (apt-get install time)" >&2; exit 1; }
echo "bench_output: $("$HMC" --version | head -1); results in $work"

# report OUT WALL RSS_KIB: one line from summary.json and the process's wall time and RSS.
report() {
  python3 - "$@" <<'PY'
import json, os, sys
out, wall, rss = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
s = json.load(open(os.path.join(out, "summary.json")))
t = s["timings_s"]
io = t["store"] + t["diagnostics"] + t["write"]
files = ", ".join(f"{f} {os.path.getsize(os.path.join(out, f)) / 1e6:.0f} MB" for f in ("draws.nc", "draws.csv")
                  if os.path.exists(os.path.join(out, f)))
end = t["diagnostics"] + t["write"]
print(f"  wall {wall:.2f} s, peak RSS {rss / 1024:.0f} MiB; sampling {t['sampling']:.2f} s, store {t['store']:.2f} s, "
      f"diagnostics {t['diagnostics']:.2f} s, write {t['write']:.2f} s (the draws' writer thread, alongside the "
      f"diagnostics: {t.get('write_draws', 0):.2f} s): diagnostics + write = {100 * end / wall:.1f} %, "
      f"store + diagnostics + write = {100 * io / wall:.1f} % of the wall time; {files}")
PY
}

# 1. coin_toss, 4,096 particles x 1,000 draws, netCDF (the default), 1 rank x all threads.
for formats in netcdf both; do
  out="$work/coin_toss_4096_$formats"
  rm -rf "$out" "$out.partial"
  /usr/bin/time -f '%e %M' -o "$work/time" "$HMC" --config "$ROOT/configs/coin_toss.json" \
    --set sampler.particles=4096 --set sampler.thin=1 --set output.formats=$formats --set "output.dir=$out" \
    --set log.level=warn >/dev/null
  read -r wall rss <"$work/time"
  echo "coin_toss 4096 x 1000, output.formats=$formats:"
  report "$out" "$wall" "$rss"
done
if py=$("$ROOT/scripts/python_env.sh" 2>/dev/null); then
  "$py" - "$work/coin_toss_4096_netcdf/draws.nc" <<'PY'
import sys, time
t = time.perf_counter()
import arviz as az
t_import = time.perf_counter() - t
t = time.perf_counter()
idata = az.from_netcdf(sys.argv[1])
t_open = time.perf_counter() - t
t = time.perf_counter()
mean = float(idata.posterior["p"].mean())
t_read = time.perf_counter() - t
print(f"  arviz.from_netcdf: {t_open:.2f} s (import arviz {t_import:.2f} s; reading p and its mean {t_read:.2f} s)")
PY
fi

# 3. Many particles on 2 ranks: peak RSS of each process.
P=${HMC_BIG_PARTICLES:-65536} D=${HMC_BIG_DRAWS:-2000}
out="$work/coin_toss_big"
rm -rf "$out" "$out.partial"
mpiexec -n 2 /usr/bin/time -f 'rank process: wall %e s, peak RSS %M KiB' "$HMC" --config "$ROOT/configs/coin_toss.json" \
  --set sampler.particles="$P" --set sampler.draws="$D" --set sampler.thin=1 --set "output.dir=$out" \
  --set log.level=warn >/dev/null 2>"$work/time3"
grep 'rank process' "$work/time3" | sed 's/^/  /'
python3 - "$out/summary.json" "$P" "$D" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
P, D = int(sys.argv[2]), int(sys.argv[3])
held = P * D * (len(s["parameter_order"]) + 6) * 8 / 2**30
print(f"coin_toss {P} x {D} on 2 ranks: memory {s['memory']}; timings "
      f"{ {k: round(v, 2) for k, v in s['timings_s'].items()} }; holding every recorded value would take {held:.1f} GiB")
PY
rm -rf "$out"  # 4+ GB
