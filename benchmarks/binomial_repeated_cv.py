"""Coverage of the 0-1 likelihood on repeated random K-fold CV (issue 15, repeated runs).

The binomial model reads R repeated CV runs of the same data through their mean counts per
fold, fold k of every run sharing one block logit (:mod:`bayescv.bayes.binomial_model`). Under
random K-fold, fold k of two runs holds different points, so that is an approximation. This
script measures it: data sets of the logistic setting of Bates et al. (2024;
:class:`bayescv.compare.BatesLogistic`, x ~ N(0, I_5), n points), 10-fold CV of a logistic
regression (C = 1) repeated R times, and four 95 % intervals for ``expected_cv``:

* ``binomial_repeated``: :func:`bayescv.bayes.fit` with its defaults on the repeated table
  (``likelihood="auto"`` picks the binomial model, ``sampler="auto"`` nutpie);
* ``binomial_one_run``: the same on the first run alone;
* ``gaussian_repeated``: the Gaussian model on the repeated table (what ``"auto"`` chose
  before); a fit it refuses (no error in some fold of every run) counts as a miss on neither
  side and is reported;
* ``naive_points``: :func:`bayescv.cv_intervals`' default for 0-1 tables (Wilson-type score
  bounds) on the repeated table;
* with ``--bootstrap B``, ``binomial_one_run_bootstrap``: the default fit on the first run
  with ``bootstrap=bootstrap_cv_losses(..., cv=10, n_bootstrap=B)`` of the same data, the
  documented way to let the data rather than the prior on Γ set the fold effects; and
  ``bootstrap``, :func:`bayescv.cv_intervals`' bootstrap interval from the same replicates
  (μ̂ ± z · their sd), to tell what the replicates themselves say.

Target: ``expected_cv`` = E[μ̂], the mean CV error rate over data sets of the same population
(every run has the same expectation, so the single-run and the repeated estimates share it),
estimated as the mean of μ̂ over the study's data sets, as :mod:`bayescv.compare` does.

``--gamma-sd`` sets :class:`bayescv.bayes.Priors`' ``gamma_sd`` of every Bayesian row (the
prior scale of the fold effects; default 1): a sensitivity check, not a tuned default.

Run by hand::

    python benchmarks/binomial_repeated_cv.py --data-sets 200 --n-jobs 2
    python benchmarks/binomial_repeated_cv.py --data-sets 200 --n-jobs 2 --gamma-sd 0.5 \
        --name binomial_repeated_cv_gamma0p5
    python benchmarks/binomial_repeated_cv.py --data-sets 200 --n-jobs 2 --bootstrap 50 \
        --name binomial_repeated_cv_bootstrap

Results: ``benchmarks/results/binomial_repeated_cv*.{json,md}`` (``--name``).
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from _report import load_average, machine_info, write_results
from joblib import Parallel, delayed
from sklearn.linear_model import LogisticRegression

from bayescv import bootstrap_cv_losses, cross_val_losses, cv_intervals
from bayescv.bayes import Priors, SamplingWarning, fit, posterior_intervals
from bayescv.compare import BatesLogistic

LEVEL = 0.95
ROWS = ("binomial_repeated", "binomial_one_run", "gaussian_repeated", "naive_points")
#: (Bayes error, points per data set): a few errors per fold, and about ten times more.
CELLS = ((0.04, 300), (0.15, 300))


def _bayes(table, **kwargs) -> tuple[float, float, bool]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SamplingWarning)
        idata = fit(table, random_state=0, **kwargs)
    ci = posterior_intervals(idata, level=LEVEL).sel(method_name="bayes_expected_cv")
    converged = not any(issubclass(w.category, SamplingWarning) for w in caught)
    return float(ci["lower"]), float(ci["upper"]), converged


def one_data_set(
    bayes_error: float, n: int, repeats: int, seed: int, gamma_sd: float, n_bootstrap: int = 0
) -> dict:
    """μ̂ and the intervals of one data set."""
    priors = Priors(gamma_sd=gamma_sd)
    rng = np.random.default_rng(seed)
    X, y, _ = BatesLogistic(n=n, p=5, bayes_error=bayes_error).sample(rng)
    table = cross_val_losses(
        LogisticRegression(), X, y, loss="zero_one", cv=10, n_repeats=repeats, random_state=seed
    )
    out = {"mu_hat": float(table["loss"].mean()), "errors": float(table["loss"].sum() / repeats)}
    out["binomial_repeated"] = _bayes(table, priors=priors)
    out["binomial_one_run"] = _bayes(table.isel(replicate=0).drop_vars("replicate"), priors=priors)
    try:
        out["gaussian_repeated"] = _bayes(table, likelihood="gaussian", priors=priors)
    except ValueError:  # a fold without an error in every run: nothing to model
        out["gaussian_repeated"] = (np.nan, np.nan, False)
    row = cv_intervals(table, ["naive_points"], level=LEVEL).sel(method_name="naive_points")
    out["naive_points"] = (float(row["lower"]), float(row["upper"]), True)
    if n_bootstrap:
        boot = bootstrap_cv_losses(
            LogisticRegression(), X, y, loss="zero_one", cv=10, n_bootstrap=n_bootstrap,
            random_state=seed + 1,
        )  # fmt: skip
        first = table.isel(replicate=0).drop_vars("replicate")
        out["binomial_one_run_bootstrap"] = _bayes(first, bootstrap=boot, priors=priors)
        row = cv_intervals(first, ["bootstrap"], bootstrap=boot, level=LEVEL)
        out["bootstrap"] = (float(row["lower"][0]), float(row["upper"][0]), True)
    return out


def summarise(records: list[dict]) -> dict:
    """Coverage of the mean μ̂ by each row, with its Monte Carlo standard error."""
    truth = float(np.mean([r["mu_hat"] for r in records]))
    out = {
        "data_sets": len(records),
        "truth_expected_cv": truth,
        "truth_mc_se": float(np.std([r["mu_hat"] for r in records], ddof=1) / len(records) ** 0.5),
        "mean_errors_per_run": float(np.mean([r["errors"] for r in records])),
        "rows": {},
    }
    for name in [n for n in (*ROWS, "binomial_one_run_bootstrap", "bootstrap") if n in records[0]]:
        lo = np.array([r[name][0] for r in records])
        hi = np.array([r[name][1] for r in records])
        ok = np.array([r[name][2] for r in records])
        fitted = np.isfinite(lo)
        m = int(fitted.sum())
        cover = (lo[fitted] <= truth) & (truth <= hi[fitted])
        p = float(cover.mean()) if m else float("nan")
        out["rows"][name] = {
            "fitted": m,
            "coverage": p,
            "coverage_se": float(np.sqrt(p * (1 - p) / m)) if m else float("nan"),
            "miss_low": float((hi[fitted] < truth).mean()) if m else float("nan"),
            "miss_high": float((lo[fitted] > truth).mean()) if m else float("nan"),
            "mean_width": float((hi[fitted] - lo[fitted]).mean()) if m else float("nan"),
            "outside_0_1": int(((lo[fitted] < 0) | (hi[fitted] > 1)).sum()),
            "not_converged": int((fitted & ~ok).sum()),
        }
    return out


def markdown(results: dict) -> str:
    """The results as a markdown report."""
    lines = [
        "# binomial_repeated_cv",
        "",
        f"Command: `{results['command']}`. Wall time {results['total_runtime_s']:.0f} s; "
        f"git {results['machine']['git_commit']}; load average {results['load_before']:.2f} "
        "before.",
        "",
        "BatesLogistic (x ~ N(0, I_5)), 10-fold CV of a logistic regression repeated "
        f"R = {results['repeats']} times; prior `gamma_sd` = {results['gamma_sd']:g}; 95 % intervals for `expected_cv` (the mean of μ̂ "
        "over the data sets). Coverage ± its Monte Carlo standard error; misses on each side; "
        "'not converged': fits with a SamplingWarning (kept in the coverage); 'fitted': data "
        "sets the model accepted.",
        "",
    ]
    for cell in results["cells"]:
        s = cell["summary"]
        lines += [
            f"## Bayes error {cell['bayes_error']}, n = {cell['n']}",
            "",
            f"{s['data_sets']} data sets; truth {s['truth_expected_cv']:.4f} "
            f"(± {s['truth_mc_se']:.4f}); {s['mean_errors_per_run']:.1f} errors per run on "
            "average.",
            "",
            "| interval | fitted | coverage % | miss low % | miss high % | mean width | "
            "bounds outside [0, 1] | not converged |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for name, r in s["rows"].items():
            lines.append(
                f"| {name} | {r['fitted']} | {100 * r['coverage']:.1f} ± "
                f"{100 * r['coverage_se']:.1f} | {100 * r['miss_low']:.1f} | "
                f"{100 * r['miss_high']:.1f} | {r['mean_width']:.4f} | {r['outside_0_1']} | "
                f"{r['not_converged']} |"
            )
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-sets", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--gamma-sd", type=float, default=1.0)
    parser.add_argument("--bootstrap", type=int, default=0, help="B; 0: no bootstrap row")
    parser.add_argument("--name", default="binomial_repeated_cv")
    args = parser.parse_args()
    started = time.perf_counter()
    results = {
        "command": "python benchmarks/binomial_repeated_cv.py "
        f"--data-sets {args.data_sets} --repeats {args.repeats} --n-jobs {args.n_jobs}"
        + (f" --seed {args.seed}" if args.seed else "")
        + (f" --gamma-sd {args.gamma_sd:g}" if args.gamma_sd != 1.0 else "")
        + (f" --bootstrap {args.bootstrap}" if args.bootstrap else "")
        + (f" --name {args.name}" if args.name != "binomial_repeated_cv" else ""),
        "machine": machine_info(["numpy", "scikit-learn", "nutpie", "pymc", "bayescv"]),
        "load_before": load_average(),
        "repeats": args.repeats,
        "gamma_sd": args.gamma_sd,
        "cells": [],
    }
    seeds = np.random.SeedSequence(args.seed).generate_state(args.data_sets * len(CELLS))
    for c, (bayes_error, n) in enumerate(CELLS):
        cell_seeds = seeds[c * args.data_sets : (c + 1) * args.data_sets]
        records = Parallel(n_jobs=args.n_jobs)(
            delayed(one_data_set)(
                bayes_error, n, args.repeats, int(s), args.gamma_sd, args.bootstrap
            )
            for s in cell_seeds
        )
        summary = summarise(records)
        results["cells"].append({"bayes_error": bayes_error, "n": n, "summary": summary})
        print(bayes_error, n, {k: round(v["coverage"], 3) for k, v in summary["rows"].items()})
    write_results(args.name, results, markdown, started)


if __name__ == "__main__":
    main()
