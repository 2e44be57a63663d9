#!/usr/bin/env python3
"""Writes configs/data/hmm_gaussian.json: one sequence simulated from a 2-state HMM
with Gaussian emissions (fixed seed, standard library only).

The file holds `y` (the observations, which the hmm model reads) and
`true_parameters` (the values used to simulate them, which the model ignores).

Usage: scripts/make_hmm_gaussian_data.py [OUTPUT]   (default: configs/data/hmm_gaussian.json)
"""
import json
import os
import random
import sys

SEED = 20260601
T = 300
TRANSITION = [[0.9, 0.1], [0.2, 0.8]]
MU = [-1.0, 2.0]
SIGMA = 0.7
INITIAL = [0.5, 0.5]


def draw(rng, probs):
    u, acc = rng.random(), 0.0
    for k, p in enumerate(probs):
        acc += p
        if u < acc:
            return k
    return len(probs) - 1


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.normpath(os.path.join(here, "..", "configs", "data", "hmm_gaussian.json"))
    rng = random.Random(SEED)
    states, y = [], []
    s = draw(rng, INITIAL)
    for t in range(T):
        if t > 0:
            s = draw(rng, TRANSITION[s])
        states.append(s)
        y.append(round(rng.gauss(MU[s], SIGMA), 6))
    data = {
        "y": y,
        "true_parameters": {
            "num_states": len(MU),
            "transition": TRANSITION,
            "mu": MU,
            "sigma": SIGMA,
            "initial": INITIAL,
            "states": states,
            "seed": SEED,
            "generator": "scripts/make_hmm_gaussian_data.py",
        },
    }
    with open(out, "w") as f:
        json.dump(data, f)
        f.write("\n")
    print(f"wrote {out}: T = {T}, time in state 1: {states.count(0)}, state 2: {states.count(1)}")


if __name__ == "__main__":
    main()
