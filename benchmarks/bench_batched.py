"""Fits per second: the batched engine against scikit-learn's per-fit loop (issue 19).

For ridge (``Ridge(alpha=1)``) and logistic regression (``LogisticRegression(C=1)``, binary)
at (n, p) = (100, 20), (1000, 20), (10000, 50): the training sets of repeated 10-fold CV are
fitted and their test rows predicted, once by :func:`bayescv.cv._batched.batched_predictions`
(all folds of a batch together) and once by a Python loop of ``clone(est).fit`` /
``predict`` (what the per-fit path of :func:`bayescv.cross_val_losses` does, without its
bookkeeping). Same folds, best of seven timings each. The loop's logistic regression is
scikit-learn's default lbfgs (tol 1e-4); the batched fit is the exact optimum.

Second table, the study workloads the issue names, each timed once per engine on one data
set: nested CV on Bates et al.'s design (``BatesLogistic``: n = 100, p = 20, unpenalised
logistic regression, 200 repetitions: 11,400 fits) and the bootstrap refits of
``benchmarks/calibrate_bayes.py`` (``MultiSourceLogistic``: 10 sources of 50 points, its
default ``LogisticRegression(C=1)``, B = 50 bootstrap-replicated leave-one-source-out CV
runs: 500 fits), and one cell of the Geras-Sutton reproduction (``MultiSourceLogistic``, CVR
with 10 random folds, θ_1 … θ_5, 300 of its replicates through :func:`run_study`, one
process), with ``batched=False`` (before) and ``batched=True`` (after).

Each (learner, n, p) cell is measured ``--runs`` times (three by default), each a best of
seven, and the speed-up is reported as the median with the range: the batched engine's time
moves by ±10 % between runs on the same machine, mostly with the state of the memory
allocator. On Linux, glibc returns freed memory at the top of the heap to the system and
page-faults it back on the next batch; ``GLIBC_TUNABLES=glibc.malloc.top_pad=67108864``
(keep 64 MiB of slack) removes most of that cost. It is a setting of the process, not of
bayescv; the report says whether it was set.

Run by hand::

    python benchmarks/bench_batched.py
    GLIBC_TUNABLES=glibc.malloc.top_pad=67108864 python benchmarks/bench_batched.py \\
        --name bench_batched_top_pad

Results: ``benchmarks/results/bench_batched.{json,md}`` (or ``--name``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.base import clone
from sklearn.datasets import make_classification, make_regression
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.model_selection import RepeatedKFold

from bayescv.compare import BatesLogistic, MultiSourceLogistic, run_study
from bayescv.cv import bootstrap_cv_losses
from bayescv.cv._batched import batched_predictions
from bayescv.nested import nested_cv

RESULTS = Path(__file__).resolve().parent / "results"
CELLS = [(100, 20, 50), (1000, 20, 5), (10000, 50, 1)]  # n, p, CV repetitions


def _best(func, repeat=7):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return min(times)


def _loop(est, X, y, folds, method) -> None:
    for tr, te in folds:
        getattr(clone(est).fit(X[tr], y[tr]), method)(X[te])


def _batch(est, X, y, folds, method) -> int:
    """Batched fits, and scikit-learn for those the engine leaves (as the runner does)."""
    out = batched_predictions(est, X, y, folds, method)
    missing = [k for k, o in enumerate(out) if o is None]
    _loop(est, X, y, [folds[k] for k in missing], method)
    return len(missing)


def _once(func) -> float:
    start = time.perf_counter()
    func()
    return time.perf_counter() - start


def workloads() -> list[dict]:
    """Nested CV (Bates et al.) and bootstrap refits (calibrate_bayes), before and after."""
    rng = np.random.default_rng(0)
    X, y, _ = BatesLogistic().sample(rng)
    bates = LogisticRegression(C=np.inf, max_iter=1000, solver="newton-cholesky")
    Xs, ys, groups = MultiSourceLogistic().sample(rng)
    source_learner = MultiSourceLogistic().default_learner()
    gs = MultiSourceLogistic(10, 50, scheme="random", n_splits=10, source_seed=0)
    cvr = ["theta_1", "theta_2", "theta_3", "theta_4", "theta_5"]
    rows = []
    for name, run, fits in [
        (
            "Geras-Sutton CVR study cell (10 sources x 50, C=1, theta_1..5), 300 replicates",
            lambda b: run_study(gs, None, cvr, 300, truths=[], random_state=0, batched=b),
            300 * 10,
        ),
        (
            "nested CV, Bates et al. (n=100, p=20, C=inf, 200 repetitions)",
            lambda b: nested_cv(bates, X, y, n_repeats=200, level=0.9, random_state=0, batched=b),
            200 * 55 + 40 * 10,
        ),
        (
            "bootstrap refits, calibrate_bayes (10 sources x 50, C=1, B=50, LOSO)",
            lambda b: bootstrap_cv_losses(
                source_learner, Xs, ys, groups=groups, n_bootstrap=50, random_state=0, batched=b
            ),
            50 * 10,
        ),
    ]:
        before, after = _once(lambda r=run: r(False)), _once(lambda r=run: r(True))
        rows.append({"workload": name, "fits": fits, "per_fit_s": before, "batched_s": after,
                     "speedup": before / after})  # fmt: skip
        print(rows[-1])
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="measurements of each cell")
    parser.add_argument("--name", default="bench_batched", help="results file name")
    opts = parser.parse_args()
    tunables = os.environ.get("GLIBC_TUNABLES", "")
    command = " ".join(
        ([f"GLIBC_TUNABLES={tunables}"] if tunables else [])
        + ["python benchmarks/bench_batched.py", *sys.argv[1:]]
    )
    rows = []
    for name, est, method in [
        ("ridge", Ridge(alpha=1.0), "predict"),
        ("logistic", LogisticRegression(C=1.0), "predict_proba"),
    ]:
        for n, p, reps in CELLS:
            if name == "ridge":
                X, y = make_regression(n, p, noise=5.0, random_state=0)
            else:
                X, y = make_classification(n, p, flip_y=0.1, random_state=0)
            folds = list(RepeatedKFold(n_splits=10, n_repeats=reps, random_state=0).split(X))

            args = (est, X, y, folds, method)
            fallbacks = _batch(*args)
            t_loop, t_batch = np.array([
                (_best(lambda a=args: _loop(*a)), _best(lambda a=args: _batch(*a)))
                for _ in range(opts.runs)
            ]).T  # fmt: skip
            speedup = t_loop / t_batch
            rows.append({
                "learner": name, "n": n, "p": p, "fits": len(folds),
                "per_fit_fits_per_s": len(folds) / float(np.median(t_loop)),
                "batched_fits_per_s": len(folds) / float(np.median(t_batch)),
                "speedup": float(np.median(speedup)),
                "speedup_runs": speedup.tolist(), "fallback_fits": fallbacks,
            })  # fmt: skip
            print(rows[-1])
    work = workloads()
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{opts.name}.json").write_text(
        json.dumps(
            {"command": command, "glibc_tunables": tunables, "runs": opts.runs,
             "fits_per_second": rows, "workloads": work},
            indent=2,
        )
    )  # fmt: skip
    allocator = (
        f"glibc allocator settings: `{tunables}`."
        if tunables
        else "glibc allocator settings: the defaults (GLIBC_TUNABLES not set)."
    )
    lines = [
        f"# {opts.name}", "",
        f"Command: `{command}` ({os.cpu_count()} cores). Training sets of repeated 10-fold CV; "
        f"fit and predict the test rows; each cell measured {opts.runs} times (each a best of "
        f"7): medians, and the speed-up's range. {allocator}", "",
        "| learner | n | p | fits | per-fit loop (fits/s) | batched (fits/s) | speed-up (median) "
        "| speed-up (range) | fits left to scikit-learn |",
        "|---|---|---|---|---|---|---|---|---|",
    ]  # fmt: skip
    for r in rows:
        lines.append(
            f"| {r['learner']} | {r['n']} | {r['p']} | {r['fits']} | {r['per_fit_fits_per_s']:.0f} "
            f"| {r['batched_fits_per_s']:.0f} | {r['speedup']:.1f}x "
            f"| {min(r['speedup_runs']):.1f}–{max(r['speedup_runs']):.1f}x | {r['fallback_fits']} |"
        )
    lines += [
        "", "Study workloads, one data set, timed once per engine (seconds):", "",
        "| workload | fits | per-fit (s) | batched (s) | speed-up |", "|---|---|---|---|---|",
    ]  # fmt: skip
    for r in work:
        lines.append(
            f"| {r['workload']} | {r['fits']} | {r['per_fit_s']:.2f} | {r['batched_s']:.2f} "
            f"| {r['speedup']:.1f}x |"
        )
    (RESULTS / f"{opts.name}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
