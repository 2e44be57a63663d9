#!/usr/bin/env python3
"""data.json of the example: 8 groups of 10 observations, theta_j ~ Normal(1, 2), y ~ Normal(theta_j, 1), seed 20261206
(scripts/bench --sections ad makes larger sets the same way)."""
import json, random

rnd = random.Random(20261206)
ys = []
for _ in range(8):
    theta = rnd.gauss(1.0, 2.0)
    ys.append([round(rnd.gauss(theta, 1.0), 6) for _ in range(10)])
with open("data.json", "w") as f:
    json.dump({"y": ys}, f)
