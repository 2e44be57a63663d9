#!/usr/bin/env python3
"""Stan (PyStan 3) on one posteriordb example of examples/posteriordb: the peer of the section stan of scripts/bench.

Runs in the virtual environment of `scripts/python_env.sh stan` (PyStan 3.14.0, httpstan 4.17, Stan 2.39;
ArviZ 0.23.4). For the example folder EXAMPLE (EXAMPLE/<name>.stan, EXAMPLE/data.json as posteriordb ships
them, EXAMPLE/reference.json):

  compile   stan.build(program, data, random_seed): stanc and the system's g++ (about a minute per program the
            first time, cached by httpstan under ~/.cache/httpstan afterwards); not timed, reported as compile_s.
  sample    Stan's default sampler as a Stan user gets it: NUTS with the diagonal metric adapted (Stan's
            defaults: max tree depth 10, adapt delta 0.8, Stan's random inits in (-2, 2)), CHAINS chains of
            WARMUP warmup + DRAWS draws (default 4 x (1,000 + 1,000)), the seed fixed. httpstan runs the chains
            in worker processes, as many at a time as the machine has cores (os.cpu_count()).
  seconds   the wall time of the sampling call, fit = posterior.sample(...): warmup and sampling of all chains,
            with httpstan's start of the chains, the transfer of the draws and their parsing into the Fit (small).
            httpstan caches a fit by its arguments (seed included), so this script deletes the model's cached
            fits before the call: a repeat samples again, it does not load the old fit. Stan's own timing of each
            chain (its "Elapsed Time" lines, warmup + sampling) is reported too, as stan_chain_s.
  grad_evals  the sum of n_leapfrog__ over every warmup and post-warmup iteration of all chains (save_warmup=True;
            one gradient per leapfrog step). Not counted: the few evaluations of Stan's initialisation and of its
            step-size heuristic at the start of each adaptation window (hmc does not count its initialisation
            either).
  ESS       per parameter of reference.json: ArviZ 0.23's bulk ESS (az.ess, method "bulk") of the post-warmup
            draws, chains x draws; mean, sd (ddof 1) and mcse_mean (az.mcse, method "mean").
  check     as examples/posteriordb/reference_check.py: |mean - ref mean| <= Z sqrt(mcse^2 + ref mcse^2)
            and |sd / ref sd - 1| <= SD_TOL for every reference parameter (default Z 4, SD_TOL 0.05).

Reference names such as beta[1] or f[3] are PyStan's beta.1 and f.3; transformed parameters (gp_pois_regr's
f) are among PyStan's draws. lotka_volterra's integrate_ode_rk45 is deprecated (to be removed in Stan 3.0) but
Stan 2.39's stanc still compiles it, with a warning: the program runs as posteriordb has it.

usage: stan_bench.py EXAMPLE_DIR [--chains 4] [--warmup 1000] [--draws 1000] [--seed 20261207]
                     [--z 4] [--sd-tol 0.05] [--out FILE]
       stan_bench.py --versions
Prints one JSON object on stdout (or writes it to FILE); PyStan's progress goes to stderr. Exit code 0 when
it sampled (whether or not the check passed: see "check"), 1 on an error.
"""
import argparse, contextlib, json, math, os, re, shutil, subprocess, sys, tempfile, time


def versions():
    import arviz, httpstan, numpy, stan
    stan_version = None
    header = os.path.join(os.path.dirname(httpstan.__file__), "include", "stan", "version.hpp")
    try:
        with open(header) as f:
            v = dict(re.findall(r"#define STAN_(MAJOR|MINOR|PATCH) (\d+)", f.read()))
        stan_version = f"{v['MAJOR']}.{v['MINOR']}.{v['PATCH']}"
    except (OSError, KeyError):
        pass
    cxx = os.environ.get("CXX", "g++")
    try:
        compiler = subprocess.run([cxx, "--version"], capture_output=True, text=True, timeout=30).stdout.splitlines()[0]
    except (OSError, IndexError, subprocess.SubprocessError):
        compiler = None
    return dict(pystan=stan.__version__, httpstan=httpstan.__version__, stan=stan_version, arviz=arviz.__version__,
                numpy=numpy.__version__, compiler=compiler, cpu_count=os.cpu_count(),
                python_version=sys.version.split()[0])


def stan_name(name):
    """reference.json's beta[1] (z[2,1]) as PyStan names it: beta.1 (z.2.1)."""
    return re.sub(r"\[(.*)\]", lambda m: "." + m.group(1).replace(",", ".").replace(" ", ""), name)


def chain_seconds(fit):
    """Stan's own "Elapsed Time" of each chain: [(warmup, sampling)], from the fit's logger messages."""
    out = []
    for raw in fit.stan_outputs:
        text = []
        for line in raw.splitlines():
            if b'"logger"' in line:
                text.append(json.loads(line)["values"][0])
        warm = re.findall(r"([0-9.eE+-]+) seconds \(Warm-up\)", "\n".join(text))
        smp = re.findall(r"([0-9.eE+-]+) seconds \(Sampling\)", "\n".join(text))
        out.append((float(warm[-1]), float(smp[-1])) if warm and smp else None)
    return out


def run(a):
    import numpy as np
    import arviz as az
    import httpstan.cache
    import stan

    folder = os.path.abspath(a.example_dir)
    name = os.path.basename(folder)
    with open(os.path.join(folder, f"{name}.stan")) as f:
        program = f.read()
    with open(os.path.join(folder, "data.json")) as f:
        data = json.load(f)
    with open(os.path.join(folder, "reference.json")) as f:
        ref = json.load(f)

    # PyStan writes its progress to stdout and stderr: keep stdout for the JSON answer. httpstan's compilation
    # writes its objects under ./build: in a folder of its own, not in the caller's.
    scratch = tempfile.mkdtemp(prefix="stan_bench.")
    cwd = os.getcwd()
    try:
        os.chdir(scratch)
        with contextlib.redirect_stdout(sys.stderr):
            t0 = time.perf_counter()
            posterior = stan.build(program, data=data, random_seed=a.seed)
            compile_s = time.perf_counter() - t0
    finally:
        os.chdir(cwd)
        shutil.rmtree(scratch, ignore_errors=True)
    with contextlib.redirect_stdout(sys.stderr):
        fits = httpstan.cache.model_directory(posterior.model_name) / "fits"
        shutil.rmtree(fits, ignore_errors=True)  # a cached fit would be loaded, not sampled
        t0 = time.perf_counter()
        fit = posterior.sample(num_chains=a.chains, num_warmup=a.warmup, num_samples=a.draws, save_warmup=True)
        seconds = time.perf_counter() - t0
        shutil.rmtree(fits, ignore_errors=True)

    # fit._draws: (sampler and model columns, warmup + draws, chains), the warmup first (save_warmup).
    columns = list(fit.sample_and_sampler_param_names) + list(fit.constrained_param_names)
    draws = fit._draws
    if draws.shape != (len(columns), a.warmup + a.draws, a.chains):
        raise RuntimeError(f"unexpected shape of the draws {draws.shape} (columns {len(columns)}, "
                           f"{a.warmup} + {a.draws} iterations, {a.chains} chains)")

    def col(c, warmup=False):
        x = draws[columns.index(c)]
        return (x[:a.warmup] if warmup else x[a.warmup:]).T  # chains x iterations

    leap_warm, leap_smp = col("n_leapfrog__", True).sum(), col("n_leapfrog__").sum()
    params, failures = {}, 0
    # The lines of reference_check.py, "stan" for "hmc".
    report = [f"{'parameter':<14} {'stan mean':>11} {'ref mean':>11} {'z':>6} {'stan sd':>10} {'ref sd':>10} "
              f"{'sd err':>7}"]
    for pname in ref["parameter_order"]:
        r = ref["parameters"][pname]
        c = stan_name(pname)
        if c not in columns:
            params[pname] = dict(error=f"not among PyStan's draws ({c})")
            report.append(f"{pname:<14} missing from PyStan's draws ({c})")
            failures += 1
            continue
        x = np.ascontiguousarray(col(c))
        mean, sd = float(x.mean()), float(x.std(ddof=1))
        mcse = float(az.mcse(x, method="mean"))
        ess = float(az.ess(x, method="bulk"))
        z = (mean - r["mean"]) / math.sqrt(mcse ** 2 + r["mcse_mean"] ** 2)
        sd_err = sd / r["sd"] - 1.0
        ok = abs(z) <= a.z and abs(sd_err) <= a.sd_tol
        failures += not ok
        report.append(f"{pname:<14} {mean:>11.5g} {r['mean']:>11.5g} {z:>6.2f} {sd:>10.4g} {r['sd']:>10.4g} "
                      f"{sd_err:>+7.1%}{'' if ok else '  FAIL'}")
        params[pname] = dict(mean=mean, sd=sd, mcse_mean=mcse, ess_bulk=ess, ref_mean=r["mean"], ref_sd=r["sd"],
                             z=z, sd_err=sd_err, ok=ok)
    ess = [p["ess_bulk"] for p in params.values() if "ess_bulk" in p]
    ess_min = min(ess) if ess and len(ess) == len(params) else None
    grads = int(leap_warm + leap_smp)
    per_chain = chain_seconds(fit)
    return dict(example=name, posterior=ref["posterior"], versions=versions(), chains=a.chains, warmup=a.warmup,
                draws=a.draws, seed=a.seed, compile_s=compile_s, seconds=seconds,
                stan_chain_s=[sum(c) if c else None for c in per_chain],
                stan_chain_warmup_s=[c[0] if c else None for c in per_chain],
                grad_evals=grads, grad_evals_warmup=int(leap_warm), grad_evals_sampling=int(leap_smp),
                ess_bulk_min=ess_min, ess_per_s=ess_min / seconds if ess_min is not None else None,
                ess_per_1k_grads=1000.0 * ess_min / grads if ess_min is not None and grads else None,
                divergences=int(col("divergent__").sum()),
                mean_leapfrog_steps=float(col("n_leapfrog__").mean()),
                max_treedepth_hits=int((col("treedepth__") >= 10).sum()),
                step_size=[float(s) for s in col("stepsize__")[:, -1]],
                check=dict(passed=failures == 0, failures=failures, z_max=a.z, sd_tol=a.sd_tol,
                           report="\n".join(report + [
                               f"{ref['posterior']}: " + ("passed" if failures == 0 else
                                                          f"FAILED ({failures} parameter(s))")
                               + f" (|z| <= {a.z:g} combined MCSE, sd within {a.sd_tol:.0%})"]) + "\n"),
                parameters=params)


def main():
    p = argparse.ArgumentParser(prog="stan_bench.py", description=__doc__.split("\n")[0])
    p.add_argument("example_dir", nargs="?")
    p.add_argument("--versions", action="store_true", help="print the versions only")
    p.add_argument("--chains", type=int, default=4)
    p.add_argument("--warmup", type=int, default=1000)
    p.add_argument("--draws", type=int, default=1000)
    p.add_argument("--seed", type=int, default=20261207)
    p.add_argument("--z", type=float, default=4.0)
    p.add_argument("--sd-tol", type=float, default=0.05)
    p.add_argument("--out")
    a = p.parse_args()
    if a.out:
        a.out = os.path.abspath(a.out)
    if not a.versions and not a.example_dir:
        p.error("EXAMPLE_DIR is required (or --versions)")
    try:
        ans = versions() if a.versions else run(a)
    except Exception as e:  # one line for scripts/bench
        print(f"stan_bench.py: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    text = json.dumps(ans, indent=1)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
