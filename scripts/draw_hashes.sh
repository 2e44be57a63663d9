#!/usr/bin/env bash
# The draws of every shipped config (configs/*.json), as SHA-256 hashes: a refactor that must
# not change draws prints the same lines before and after (docs/testing.md#draws-unchanged).
# Each config runs small (64 particles, 50 warmup + 50 draws, one thread, draws.csv only);
# the hash covers draws.csv and particles.csv. Hashes depend on the compiler and the CPU
# (-march=native), and in a portable build on the level (HMC_ARCH): compare two builds on one
# machine, level by level, not across machines.
# Usage: scripts/draw_hashes.sh [HMC_BINARY]   (default build/bin/hmc)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
hmc=${1:-$root/build/bin/hmc}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMP_NUM_THREADS=1 OMP_PROC_BIND=false
for config in "$root"/configs/*.json; do
  name=$(basename "$config" .json)
  "$hmc" --config "$config" --set sampler.particles=64 --set sampler.warmup=50 --set sampler.draws=50 \
    --set output.formats=csv --set output.dir="$work/$name" --set log.level=error >/dev/null
  printf '%s  %s\n' "$(cat "$work/$name/draws.csv" "$work/$name/particles.csv" | sha256sum | cut -c1-16)" "$name"
done
