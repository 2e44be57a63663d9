#!/usr/bin/env python3
"""Writes data.json: 40 counts y_i ~ Poisson(exp(alpha + beta x_i)), alpha = 0.6, beta = 0.9,
x_i uniform on [-1.5, 1.5] (Python's own generator, seed 20261204; no packages needed)."""
import json
import math
import random

rng = random.Random(20261204)
alpha, beta, n = 0.6, 0.9, 40


def poisson(lam):
    # Knuth's method: fine for the small rates here
    limit, k, p = math.exp(-lam), 0, 1.0
    while True:
        p *= rng.random()
        if p <= limit:
            return k
        k += 1


x = [round(rng.uniform(-1.5, 1.5), 3) for _ in range(n)]
y = [poisson(math.exp(alpha + beta * xi)) for xi in x]
with open("data.json", "w") as f:
    json.dump({"x": x, "y": y}, f)
    f.write("\n")
