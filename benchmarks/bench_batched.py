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

Run by hand::

    python benchmarks/bench_batched.py

Results: ``benchmarks/results/bench_batched.{json,md}``.
"""

from __future__ import annotations

import json
import os
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
            t_loop, t_batch = _best(lambda a=args: _loop(*a)), _best(lambda a=args: _batch(*a))
            rows.append({
                "learner": name, "n": n, "p": p, "fits": len(folds),
                "per_fit_fits_per_s": len(folds) / t_loop,
                "batched_fits_per_s": len(folds) / t_batch,
                "speedup": t_loop / t_batch, "fallback_fits": fallbacks,
            })  # fmt: skip
            print(rows[-1])
    work = workloads()
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "bench_batched.json").write_text(
        json.dumps({"fits_per_second": rows, "workloads": work}, indent=2)
    )
    lines = [
        "# bench_batched", "",
        f"Command: `python benchmarks/bench_batched.py` ({os.cpu_count()} cores). Training sets of "
        "repeated 10-fold CV; fit and predict the test rows; best of 7.", "",
        "| learner | n | p | fits | per-fit loop (fits/s) | batched (fits/s) | speed-up | fits left to scikit-learn |",
        "|---|---|---|---|---|---|---|---|",
    ]  # fmt: skip
    for r in rows:
        lines.append(
            f"| {r['learner']} | {r['n']} | {r['p']} | {r['fits']} | {r['per_fit_fits_per_s']:.0f} "
            f"| {r['batched_fits_per_s']:.0f} | {r['speedup']:.1f}x | {r['fallback_fits']} |"
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
    (RESULTS / "bench_batched.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
