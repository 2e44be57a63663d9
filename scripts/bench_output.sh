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

# json FILE EXPR: a value of summary.json (python3's json module).
json() { python3 -c 'import json, sys; s = json.load(open(sys.argv[1])); print(eval(sys.argv[2], {"s": s}))' "$@"; }

# 1. coin_toss, 4,096 particles x 1,000 draws, netCDF (the default), 1 rank x all threads.
out="$work/coin_toss_4096"
rm -rf "$out" "$out.partial"
/usr/bin/time -f '%e %M' -o "$work/time1" "$HMC" --config "$ROOT/configs/coin_toss.json" \
  --set sampler.particles=4096 --set sampler.thin=1 --set "output.dir=$out" --set log.level=warn >/dev/null
read -r wall rss <"$work/time1"
s="$out/summary.json"
echo "coin_toss 4096 x 1000 (netCDF): wall $wall s (time -v), peak RSS $((rss / 1024)) MiB;" \
  "$(json "$s" '"sampling %.2f s, store %.2f s, diagnostics %.2f s, write %.2f s" % tuple(s["timings_s"][k] for k in ("sampling", "store", "diagnostics", "write")))';" \
  "store + diagnostics + write = $(json "$s" '"%.1f %%" % (100 * (s["timings_s"]["store"] + s["timings_s"]["diagnostics"] + s["timings_s"]["write"]) / '"$wall"'))') of the wall time;" \
  "draws.nc $(du -m "$out/draws.nc" | cut -f1) MB"
if py=$("$ROOT/scripts/python_env.sh" 2>/dev/null); then
  "$py" - "$out/draws.nc" <<'EOF'
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
print(f"arviz.from_netcdf: {t_open:.2f} s (import arviz {t_import:.2f} s; reading p and its mean {t_read:.2f} s)")
EOF
fi

# 2. The same with CSV as well (formats both), for comparison.
out="$work/coin_toss_4096_csv"
rm -rf "$out" "$out.partial"
/usr/bin/time -f '%e %M' -o "$work/time2" "$HMC" --config "$ROOT/configs/coin_toss.json" \
  --set sampler.particles=4096 --set sampler.thin=1 --set output.formats=both --set "output.dir=$out" \
  --set log.level=warn >/dev/null
read -r wall rss <"$work/time2"
echo "coin_toss 4096 x 1000 (netCDF + CSV): wall $wall s, $(json "$out/summary.json" '"write %.2f s" % s["timings_s"]["write"]'), draws.csv $(du -m "$out/draws.csv" | cut -f1) MB"

# 3. Many particles on 2 ranks: peak RSS of each process.
P=${HMC_BIG_PARTICLES:-65536} D=${HMC_BIG_DRAWS:-2000}
out="$work/coin_toss_big"
rm -rf "$out" "$out.partial"
mpiexec -n 2 /usr/bin/time -f 'rank process: wall %e s, peak RSS %M KiB' "$HMC" --config "$ROOT/configs/coin_toss.json" \
  --set sampler.particles="$P" --set sampler.draws="$D" --set sampler.thin=1 --set "output.dir=$out" \
  --set log.level=warn >/dev/null 2>"$work/time3"
grep 'rank process' "$work/time3" | sed 's/^/  /'
echo "coin_toss $P x $D on 2 ranks: $(json "$out/summary.json" '"memory %s; timings %s" % (s["memory"], {k: round(v, 2) for k, v in s["timings_s"].items()})');" \
  "values recorded: $(json "$out/summary.json" '"%.1f GB" % ('"$P"' * '"$D"' * (len(s["parameter_order"]) + 6) * 8 / 1e9)')"
rm -rf "$out"  # 4+ GB
