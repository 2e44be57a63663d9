#!/usr/bin/env python3
"""Check an hmc run of a posteriordb example against posteriordb's reference posterior.

For every parameter of the example's reference.json (made by scripts/make_posteriordb_reference.py from
posteriordb's reference draws): hmc's mean within Z combined Monte Carlo standard errors of the reference mean,
|mean_hmc - mean_ref| <= Z sqrt(mcse_hmc^2 + mcse_ref^2), and hmc's sd within a relative SD_TOL of the
reference sd. hmc's figures come from the run's summary.json (mean, sd, mcse_mean). Python 3 alone.

Usage: check.py OUTPUT_DIR [--z 4] [--sd-tol 0.05] [--reference reference.json]
Prints one line per parameter; exit 0 if all pass, 1 if any fails, 2 on a usage or file error.
"""
import argparse
import json
import math
import os
import sys


def check(output_dir, reference, z_max=4.0, sd_tol=0.05, out=sys.stdout):
    """Returns the number of failing parameters (printing a line for each parameter)."""
    with open(os.path.join(output_dir, "summary.json")) as f:
        summary = json.load(f)["parameters"]
    with open(reference) as f:
        ref = json.load(f)
    failures = 0
    print(f"{'parameter':<14} {'hmc mean':>11} {'ref mean':>11} {'z':>6} {'hmc sd':>10} {'ref sd':>10} {'sd err':>7}",
          file=out)
    for name in ref["parameter_order"]:
        r = ref["parameters"][name]
        if name not in summary:
            print(f"{name:<14} missing from {output_dir}/summary.json", file=out)
            failures += 1
            continue
        h = summary[name]
        z = (h["mean"] - r["mean"]) / math.sqrt(h["mcse_mean"] ** 2 + r["mcse_mean"] ** 2)
        sd_err = h["sd"] / r["sd"] - 1.0
        ok = abs(z) <= z_max and abs(sd_err) <= sd_tol
        failures += not ok
        print(f"{name:<14} {h['mean']:>11.5g} {r['mean']:>11.5g} {z:>6.2f} {h['sd']:>10.4g} {r['sd']:>10.4g} "
              f"{sd_err:>+7.1%}{'' if ok else '  FAIL'}", file=out)
    verdict = "passed" if failures == 0 else f"FAILED ({failures} parameter(s))"
    print(f"{ref['posterior']}: {verdict} (|z| <= {z_max:g} combined MCSE, sd within {sd_tol:.0%})", file=out)
    return failures


def main(example_dir=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("output_dir", help="the run's /output/dir (holds summary.json)")
    p.add_argument("--z", type=float, default=4.0, help="largest |z| of a mean, in combined MCSE (default 4)")
    p.add_argument("--sd-tol", type=float, default=0.05, help="largest relative error of an sd (default 0.05)")
    p.add_argument("--reference", help="reference.json (default: the one next to check.py)")
    a = p.parse_args()
    reference = a.reference or os.path.join(example_dir or os.path.dirname(os.path.abspath(__file__)), "reference.json")
    try:
        sys.exit(1 if check(a.output_dir, reference, a.z, a.sd_tol) else 0)
    except (OSError, ValueError, KeyError) as e:
        print(f"check.py: {e}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
