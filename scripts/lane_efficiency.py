#!/usr/bin/env python3
"""scripts/lane_efficiency.py - how busy NUTS keeps the host's vector lanes, from a run's draws.

usage: scripts/lane_efficiency.py RUN_DIR [--lanes 8] [--task 64]

RUN_DIR is the output of an `hmc` run with /sampler/algorithm nuts and draws.csv among its
/output/formats, recorded with thin 1 (every transition; with thin > 1 the figures are of the
recorded transitions only). The lane kernel (src/hmc/sampler/nuts_kernel.hpp) gives a thread
tasks of 64 consecutive particles; its 8 lanes take the task's particles in order, a lane
starting the next particle as soon as its tree is done, and every lane takes a leapfrog step at
every lock step (a finished lane with nothing left to start takes steps of size 0). A tree of
n_steps steps keeps its lane busy for n_steps lock steps, so the schedule, and with it the lane
efficiency (useful lane-steps / all lane-steps), follows from the recorded n_steps alone:

  efficiency = sum of n_steps / (lanes x lock steps of the task), over all tasks and draws

It also prints the efficiency without refilling (blocks of 8 particles, each block as long as
its longest tree), the scheme before the refill. Standard library only.
"""
import argparse
import csv
import heapq
import os
import sys


def schedule_steps(steps, lanes):
    """Lock steps of one task whose trees (in order) take `steps` leapfrog steps each."""
    free = [0] * lanes  # the lock step at which each lane is free
    heapq.heapify(free)
    for n in steps:
        t = heapq.heappop(free)
        heapq.heappush(free, t + n)
    return max(free) if steps else 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run_dir")
    p.add_argument("--lanes", type=int, default=8)
    p.add_argument("--task", type=int, default=64)
    a = p.parse_args()
    path = os.path.join(a.run_dir, "draws.csv")
    if not os.path.exists(path):
        sys.exit(f"lane_efficiency: no {path} (run with --set output.formats=both)")
    by_draw = {}
    with open(path, newline="") as f:
        r = csv.DictReader(f)
        if "n_steps" not in r.fieldnames or "tree_depth" not in r.fieldnames:
            sys.exit(f"lane_efficiency: {path} has no NUTS statistics (n_steps, tree_depth)")
        for row in r:
            by_draw.setdefault(int(row["draw"]), {})[int(row["particle"])] = int(row["n_steps"])
    useful = refill = blocks = 0
    for draw in sorted(by_draw):
        steps = by_draw[draw]
        n = len(steps)
        ordered = [steps[i] for i in range(n)]
        useful += sum(ordered)
        for t0 in range(0, n, a.task):
            refill += a.lanes * schedule_steps(ordered[t0:t0 + a.task], a.lanes)
        for b0 in range(0, n, a.lanes):
            blocks += a.lanes * max(ordered[b0:b0 + a.lanes])
    if useful == 0:
        sys.exit("lane_efficiency: no steps recorded")
    particles = len(next(iter(by_draw.values())))
    print(f"{particles} particles x {len(by_draw)} draws, mean n_steps {useful / (particles * len(by_draw)):.2f}")
    print(f"lane efficiency with refill (tasks of {a.task}, {a.lanes} lanes): {useful / refill:.3f}")
    print(f"lane efficiency in blocks of {a.lanes} (no refill): {useful / blocks:.3f}")


if __name__ == "__main__":
    main()
