"""`hmc generate` equals the run: the groups computed afterwards over a run's draws.nc are
bitwise those a run that recorded them wrote.

Usage: python check_generate.py RECORDED PLAIN GENERATED...

RECORDED: a run with /output/log_likelihood, posterior_predictive and generated_quantities;
PLAIN: the same run without them; GENERATED: `hmc generate PLAIN` result sets (on any
number of ranks). Checks that PLAIN's posterior equals RECORDED's (the groups do not touch
the sampler's random numbers), and that every variable of every group of RECORDED (and
its posterior) equals GENERATED's bit for bit. Prints a line per check; exits non-zero if
any failed.
"""
import sys

import numpy as np
import xarray as xr

GROUPS = ["posterior", "log_likelihood", "posterior_predictive", "generated_quantities", "observed_data",
          "constant_data"]
failures = 0


def check(ok, what):
    global failures
    print(("ok: " if ok else "FAIL: ") + what)
    failures += 0 if ok else 1


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return a.tobytes() == b.tobytes()


def group(path, name):
    try:
        return xr.open_dataset(f"{path}/draws.nc", group=name).load()
    except OSError:
        return None


recorded, plain, generated = sys.argv[1], sys.argv[2], sys.argv[3:]
rec_post, plain_post = group(recorded, "posterior"), group(plain, "posterior")
check(all(same(rec_post[v], plain_post[v]) for v in rec_post.data_vars),
      f"{plain}: the posterior equals {recorded}'s (the groups leave the sampler's draws alone)")
for out in generated:
    for name in GROUPS:
        want, got = group(recorded, name), group(out, name)
        if want is None:
            continue
        ok = got is not None and set(want.data_vars) == set(got.data_vars) and all(
            same(want[v], got[v]) and want[v].dims == got[v].dims for v in want.data_vars)
        check(ok, f"{out}: {name} ({', '.join(want.data_vars)}) equals {recorded}'s bit for bit")
print(f"{failures} failure(s)")
sys.exit(1 if failures else 0)
