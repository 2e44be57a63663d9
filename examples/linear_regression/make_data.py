#!/usr/bin/env python3
"""data.json of the example: 200 rows of 5 standard-normal predictors, y = 0.5 + x beta + Normal(0, 1.5), beta ~
Normal(0, 1), seed 20261206 (scripts/bench --sections ad makes 5,000 x 24 the same way)."""
import json, random

rnd = random.Random(20261206)
beta = [rnd.gauss(0.0, 1.0) for _ in range(5)]
xs = [[round(rnd.gauss(0.0, 1.0), 6) for _ in range(5)] for _ in range(200)]
ys = [round(0.5 + sum(a * b for a, b in zip(r, beta)) + rnd.gauss(0.0, 1.5), 6) for r in xs]
with open("data.json", "w") as f:
    json.dump({"x": xs, "y": ys}, f)
