#!/usr/bin/env python3
"""hmc/distributions against SciPy: the log densities and gradients that hmc_dist_points prints.

Reads JSON lines {"dist", "args", "value", "propto", "grad"} (from a file or stdin) and checks
for each point:
  - value: equals SciPy's logpdf/logpmf to 1e-12 relative (absolute 1e-12 near 0); -infinity
    where SciPy gives -infinity (or refuses the point as outside the support);
  - grad: equals an analytic gradient written here with numpy and scipy.special (digamma,
    expit, ...) to 1e-12 relative (absolute 1e-12 near 0); that reference gradient is itself
    checked against central finite differences of SciPy's logpdf (one-sided at a support
    boundary) at 1e-6 relative, so a wrong formula here cannot hide a wrong one there;
  - propto: value - propto equals the documented dropped constant (docs/distributions.md).
Prints one line per mismatch and a one-line summary; exits 1 on any mismatch.

Usage: check_dist.py [POINTS.jsonl | -] or check_dist.py --run PATH/TO/hmc_dist_points
"""
import json
import math
import subprocess
import sys

import numpy as np
from scipy import special, stats
from scipy.linalg import solve_triangular

LOG_2PI = math.log(2 * math.pi)
TOL = 1e-12
FD_TOL = 1e-6


def expit_logpmf(k, n, a):
    """log C(n,k) + k log σ(a) + (n-k) log σ(-a); SciPy's binom with p = expit(a) where that is
    accurate (|a| <= 10), else with scipy.special.log_expit."""
    if abs(a) <= 10:
        return float(stats.binom.logpmf(k, n, special.expit(a)))
    lc = special.gammaln(n + 1) - special.gammaln(k + 1) - special.gammaln(n - k + 1)
    return float(lc + k * special.log_expit(a) + (n - k) * special.log_expit(-a))


def mvn_value(y, mu, L):
    L = np.array(L, dtype=float)
    if np.any(np.diag(L) <= 0):
        return -math.inf
    cov = L @ L.T
    return float(stats.multivariate_normal.logpdf(np.array(y), mean=np.array(mu), cov=cov))


def mvn_grad(y, mu, L):
    L = np.tril(np.array(L, dtype=float))
    z = solve_triangular(L, np.array(y) - np.array(mu), lower=True)
    w = solve_triangular(L.T, z, lower=False)
    K = len(y)
    dL = np.outer(w, z) - np.diag(1.0 / np.diag(L))
    return list(-w) + list(w) + [dL[i, j] for i in range(K) for j in range(i + 1)]


def dirichlet_value(theta, alpha):
    try:
        return float(stats.dirichlet.logpdf(np.array(theta), np.array(alpha)))
    except ValueError:
        return -math.inf


def dirichlet_grad(theta, alpha):
    t, a = np.array(theta), np.array(alpha)
    return list((a - 1) / t) + list(special.digamma(a.sum()) - special.digamma(a) + np.log(t))


def categorical_value(k, theta):
    if not 0 <= k < len(theta):
        return -math.inf
    x = np.zeros(len(theta))
    x[k] = 1
    return float(stats.multinomial.logpmf(x, 1, np.array(theta)))


def categorical_unconstrained(k, theta):
    """log θ_k without the simplex constraint, for finite differences (equal to SciPy's value at
    the point: checked)."""
    return math.log(theta[int(k)])


def dirichlet_unconstrained(theta, alpha):
    t, a = np.array(theta), np.array(alpha)
    return float(special.gammaln(a.sum()) - special.gammaln(a).sum() + ((a - 1) * np.log(t)).sum())


def categorical_grad(k, theta):
    g = [0.0] * len(theta)
    g[k] = 1.0 / theta[k]
    return g


def binom_grad(k, n, p):
    return (k / p if k > 0 else 0.0) - ((n - k) / (1 - p) if n - k > 0 else 0.0)


# name: (value(*args), grad(*args), dropped constant(*args), which args are real (their partials, in
# order; None: all)); FD_FUNCTIONS: for a simplex argument, the density without the constraint, whose
# finite differences check the reference gradient (SciPy refuses or renormalises a point off the simplex).
DISTS = {
    "normal": (lambda x, m, s: stats.norm.logpdf(x, m, s),
               lambda x, m, s: [-(x - m) / s**2, (x - m) / s**2, (((x - m) / s)**2 - 1) / s],
               lambda *a: -0.5 * LOG_2PI, None),
    "lognormal": (lambda x, m, s: stats.lognorm.logpdf(x, s, scale=math.exp(m)),
                  lambda x, m, s: [-((math.log(x) - m) / s**2 + 1) / x, (math.log(x) - m) / s**2,
                                   (((math.log(x) - m) / s)**2 - 1) / s],
                  lambda *a: -0.5 * LOG_2PI, None),
    "student_t": (lambda x, nu, m, s: stats.t.logpdf(x, nu, m, s),
                  lambda x, nu, m, s: [
                      -(nu + 1) * (x - m) / (nu * s**2 + (x - m)**2),
                      0.5 * (special.digamma((nu + 1) / 2) - special.digamma(nu / 2)) - 0.5 / nu
                      - 0.5 * math.log1p(((x - m) / s)**2 / nu)
                      + 0.5 * (nu + 1) * ((x - m) / s)**2 / (nu * (nu + ((x - m) / s)**2)),
                      (nu + 1) * (x - m) / (nu * s**2 + (x - m)**2),
                      ((nu + 1) * ((x - m) / s)**2 / (nu + ((x - m) / s)**2) - 1) / s],
                  lambda *a: -0.5 * math.log(math.pi), None),
    "cauchy": (lambda x, m, s: stats.cauchy.logpdf(x, m, s),
               lambda x, m, s: [-2 * (x - m) / (s**2 + (x - m)**2), 2 * (x - m) / (s**2 + (x - m)**2),
                                (2 * (x - m)**2 / (s**2 + (x - m)**2) - 1) / s],
               lambda *a: -math.log(math.pi), None),
    "half_cauchy": (lambda x, s: stats.halfcauchy.logpdf(x, scale=s),
                    lambda x, s: [-2 * x / (s**2 + x**2), (2 * x**2 / (s**2 + x**2) - 1) / s],
                    lambda *a: math.log(2) - math.log(math.pi), None),
    "half_normal": (lambda x, s: stats.halfnorm.logpdf(x, scale=s),
                    lambda x, s: [-x / s**2, ((x / s)**2 - 1) / s],
                    lambda *a: 0.5 * math.log(2 / math.pi), None),
    "exponential": (lambda x, lam: stats.expon.logpdf(x, scale=1 / lam),
                    lambda x, lam: [-lam, 1 / lam - x], lambda *a: 0.0, None),
    "gamma": (lambda x, a, b: stats.gamma.logpdf(x, a, scale=1 / b),
              lambda x, a, b: [(a - 1) / x - b, math.log(b) - special.digamma(a) + math.log(x), a / b - x],
              lambda *a: 0.0, None),
    "inv_gamma": (lambda x, a, b: stats.invgamma.logpdf(x, a, scale=b),
                  lambda x, a, b: [(b / x - (a + 1)) / x, math.log(b) - special.digamma(a) - math.log(x),
                                   a / b - 1 / x],
                  lambda *a: 0.0, None),
    "beta": (lambda x, a, b: stats.beta.logpdf(x, a, b),
             lambda x, a, b: [(a - 1) / x - (b - 1) / (1 - x),
                              special.digamma(a + b) - special.digamma(a) + math.log(x),
                              special.digamma(a + b) - special.digamma(b) + math.log1p(-x)],
             lambda *a: 0.0, None),
    "uniform": (lambda x, lo, hi: stats.uniform.logpdf(x, lo, hi - lo),
                lambda x, lo, hi: [0.0, 1 / (hi - lo), -1 / (hi - lo)], lambda *a: 0.0, None),
    "bernoulli": (lambda k, p: stats.bernoulli.logpmf(int(k), p),
                  lambda k, p: [binom_grad(k, 1, p)], lambda *a: 0.0, [1]),
    "bernoulli_logit": (lambda k, a: expit_logpmf(int(k), 1, a) if k in (0, 1) else -math.inf,
                        lambda k, a: [k - special.expit(a)], lambda *a: 0.0, [1]),
    "binomial": (lambda k, n, p: stats.binom.logpmf(int(k), int(n), p),
                 lambda k, n, p: [binom_grad(k, n, p)],
                 lambda k, n, p: special.gammaln(n + 1) - special.gammaln(k + 1) - special.gammaln(n - k + 1),
                 [2]),
    "binomial_logit": (lambda k, n, a: expit_logpmf(int(k), int(n), a) if 0 <= k <= n else -math.inf,
                       lambda k, n, a: [k - n * special.expit(a)],
                       lambda k, n, a: special.gammaln(n + 1) - special.gammaln(k + 1) - special.gammaln(n - k + 1),
                       [2]),
    "poisson": (lambda k, lam: stats.poisson.logpmf(int(k), lam),
                lambda k, lam: [(k / lam if k > 0 else 0.0) - 1], lambda k, lam: -special.gammaln(k + 1), [1]),
    "poisson_log": (lambda k, a: stats.poisson.logpmf(int(k), math.exp(a)),
                    lambda k, a: [k - math.exp(a)], lambda k, a: -special.gammaln(k + 1), [1]),
    "categorical": (lambda k, theta: categorical_value(int(k), theta), lambda k, theta: categorical_grad(int(k), theta),
                    lambda *a: 0.0, [1]),
    "dirichlet": (dirichlet_value, dirichlet_grad, lambda *a: 0.0, [0, 1]),
    "multi_normal_cholesky": (mvn_value, mvn_grad, lambda y, mu, L: -0.5 * len(y) * LOG_2PI, [0, 1, 2]),
}

FD_FUNCTIONS = {"categorical": categorical_unconstrained, "dirichlet": dirichlet_unconstrained}


def flatten_real(args, real):
    """The real-valued scalars of args (the differentiated ones), with a way to put them back."""
    slots = []  # (arg index, element index or (i, j) or None)
    for a in range(len(args)) if real is None else real:
        v = args[a]
        if isinstance(v, list) and v and isinstance(v[0], list):
            slots += [(a, (i, j)) for i in range(len(v)) for j in range(i + 1)]
        elif isinstance(v, list):
            slots += [(a, i) for i in range(len(v))]
        else:
            slots.append((a, None))
    return slots


def with_value(args, slot, x):
    out = json.loads(json.dumps(args))
    a, where = slot
    if where is None:
        out[a] = x
    elif isinstance(where, tuple):
        out[a][where[0]][where[1]] = x
    else:
        out[a][where] = x
    return out


def get(args, slot):
    a, where = slot
    if where is None:
        return args[a]
    if isinstance(where, tuple):
        return args[a][where[0]][where[1]]
    return args[a][where]


def finite_difference(f, args, slot):
    """∂f/∂(the scalar at slot): central differences with Richardson extrapolation (one-sided
    at a support boundary), over steps h0, h0/10, ..., taking the estimate that agrees best
    with the next smaller step (the distance to a singularity is not known beforehand)."""
    x = get(args, slot)
    h0 = 1e-2 * max(abs(x), 1e-2)

    def at(t):
        try:
            return float(f(*with_value(args, slot, t)))
        except ValueError:
            return math.nan

    f0 = at(x)

    def d(h):
        fp, fm = at(x + h), at(x - h)
        if math.isfinite(fp) and math.isfinite(fm):
            return (fp - fm) / (2 * h)
        if math.isfinite(fp):  # forward, second order
            return (-3 * f0 + 4 * fp - at(x + 2 * h)) / (2 * h)
        return (3 * f0 - 4 * fm + at(x - 2 * h)) / (2 * h)

    # From the largest step down: the first Richardson estimate that agrees with the next
    # (smaller) one; without any, the pair that agrees best.
    estimates = [(4 * d(h0 * 10.0**-m / 2) - d(h0 * 10.0**-m)) / 3 for m in range(10)]
    for m in range(len(estimates) - 1):
        e, e_next = estimates[m], estimates[m + 1]
        if math.isfinite(e) and abs(e - e_next) <= 1e-8 * max(abs(e), 1.0):
            return e
    best = min(range(len(estimates) - 1),
               key=lambda m: abs(estimates[m] - estimates[m + 1]) if math.isfinite(estimates[m]) else math.inf)
    return estimates[best]


def close(a, b, tol):
    if a == b:
        return True
    return abs(a - b) <= tol * max(abs(b), 1.0) if abs(b) < 1 else abs(a - b) <= tol * abs(b)


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--run":
        text = subprocess.run([sys.argv[2]], check=True, capture_output=True, text=True).stdout
    elif len(sys.argv) > 1 and sys.argv[1] != "-":
        text = open(sys.argv[1], encoding="utf-8").read()
    else:
        text = sys.stdin.read()
    points = [json.loads(line) for line in text.splitlines() if line.strip()]
    checks = failures = 0
    per_dist = {}

    def fail(p, what):
        nonlocal failures
        failures += 1
        print(f"MISMATCH {p['dist']}{json.dumps(p['args'])}: {what}")

    for p in points:
        name, args = p["dist"], p["args"]
        if name not in DISTS:
            fail(p, "unknown distribution")
            continue
        value_f, grad_f, const_f, real = DISTS[name]
        per_dist[name] = per_dist.get(name, 0) + 1
        try:
            ref = float(value_f(*args))
        except ValueError:
            ref = -math.inf
        if math.isnan(ref):  # SciPy: NaN for a parameter outside its range; hmc/distributions: -infinity
            ref = -math.inf
        checks += 1
        if ref == -math.inf or p["value"] == -math.inf:
            if ref != p["value"]:
                fail(p, f"value {p['value']!r}, SciPy {ref!r}")
            checks += 1
            if p["propto"] != -math.inf:
                fail(p, f"propto {p['propto']!r} outside the support (want -inf)")
            continue
        if not close(p["value"], ref, TOL):
            fail(p, f"value {p['value']!r}, SciPy {ref!r} (rel {abs(p['value'] - ref) / max(abs(ref), 1e-300):.2e})")
        checks += 1
        const = float(const_f(*args))
        # value - propto cancels: its rounding error is relative to the value, not the constant
        if abs((p["value"] - p["propto"]) - const) > TOL * max(abs(p["value"]), abs(const), 1.0):
            fail(p, f"value - propto = {p['value'] - p['propto']!r}, documented constant {const!r}")
        slots = flatten_real(args, real)
        ref_grad = [float(g) for g in grad_f(*args)]
        if len(ref_grad) != len(p["grad"]) or len(slots) != len(ref_grad):
            fail(p, f"{len(p['grad'])} partials, want {len(ref_grad)}")
            continue
        fd_f = FD_FUNCTIONS.get(name, value_f)
        if fd_f is not value_f:
            checks += 1
            if not close(float(fd_f(*args)), ref, TOL):
                fail(p, f"the unconstrained density {fd_f(*args)!r} differs from SciPy's {ref!r}")
        for j, slot in enumerate(slots):
            checks += 2
            fd = finite_difference(fd_f, args, slot)
            if not (abs(fd - ref_grad[j]) <= FD_TOL * max(abs(ref_grad[j]), 1.0)):
                fail(p, f"reference partial {j} = {ref_grad[j]!r} disagrees with SciPy's finite difference {fd!r}")
            if not close(p["grad"][j], ref_grad[j], TOL):
                fail(p, f"partial {j} = {p['grad'][j]!r}, reference {ref_grad[j]!r} "
                        f"(rel {abs(p['grad'][j] - ref_grad[j]) / max(abs(ref_grad[j]), 1e-300):.2e})")
    missing = sorted(set(DISTS) - set(per_dist))
    for name in missing:
        failures += 1
        print(f"MISMATCH {name}: no points")
    print(f"check_dist: {checks - failures} of {checks} checks passed ({len(points)} points, "
          f"{len(per_dist)} distributions); {failures} mismatch(es)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
