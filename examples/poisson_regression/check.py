#!/usr/bin/env python3
"""Checks a run of this example against the posterior computed independently, by quadrature.

Usage: check.py RUN_DIR   (RUN_DIR: the run's /output/dir; config.json and data.json are read
from this script's folder). The posterior of (alpha, beta) is evaluated on a 401 x 401 grid
spanning 9 standard deviations each way of a Laplace approximation; its means and standard
deviations are compared with summary.json's, in units of their Monte Carlo standard errors
(mcse_mean, mcse_sd). Exit 1 if any differs by more than 4 MCSE. Needs numpy.
"""
import json
import math
import os
import sys

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
config = json.load(open(os.path.join(here, "config.json")))
data = json.load(open(os.path.join(here, "data.json")))
priors = config["model"]["priors"]
sa, sb = priors["alpha_scale"], priors["beta_scale"]
x, y = np.array(data["x"], float), np.array(data["y"], float)
log_fact = np.array([math.lgamma(k + 1) for k in y])


def log_post(a, b):
    """log p(alpha, beta | y) + const, on arrays of alpha and beta of one shape."""
    eta = a[..., None] + b[..., None] * x
    lik = (y * eta - np.exp(eta) - log_fact).sum(axis=-1)
    return lik - 0.5 * (a / sa) ** 2 - 0.5 * (b / sb) ** 2


# Laplace approximation: Newton's method to the mode, then the inverse Hessian.
theta = np.zeros(2)
for _ in range(50):
    mu = np.exp(theta[0] + theta[1] * x)
    g = np.array([(y - mu).sum() - theta[0] / sa**2, ((y - mu) * x).sum() - theta[1] / sb**2])
    h = -np.array([[mu.sum() + 1 / sa**2, (mu * x).sum()], [(mu * x).sum(), (mu * x * x).sum() + 1 / sb**2]])
    theta = theta - np.linalg.solve(h, g)
sd = np.sqrt(np.diag(np.linalg.inv(-h)))

grid_a = np.linspace(theta[0] - 9 * sd[0], theta[0] + 9 * sd[0], 401)
grid_b = np.linspace(theta[1] - 9 * sd[1], theta[1] + 9 * sd[1], 401)
A, B = np.meshgrid(grid_a, grid_b, indexing="ij")
lp = log_post(A, B)
w = np.exp(lp - lp.max())
w /= w.sum()
reference = {}
for name, v in (("alpha", A), ("beta", B)):
    m = (w * v).sum()
    reference[name] = (m, math.sqrt((w * (v - m) ** 2).sum()))

summary = json.load(open(os.path.join(sys.argv[1], "summary.json")))["parameters"]
failures = 0
for name, (mean, sd_ref) in reference.items():
    s = summary[name]
    z_mean = (s["mean"] - mean) / s["mcse_mean"]
    z_sd = (s["sd"] - sd_ref) / s["mcse_sd"]
    ok = abs(z_mean) <= 4 and abs(z_sd) <= 4
    failures += not ok
    print(f"{'ok' if ok else 'FAIL'}: {name}: mean {s['mean']:.5f} vs {mean:.5f} ({z_mean:+.2f} MCSE), "
          f"sd {s['sd']:.5f} vs {sd_ref:.5f} ({z_sd:+.2f} MCSE)")
sys.exit(1 if failures else 0)
