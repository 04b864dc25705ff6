"""Benchmark of nested CV (:func:`bayescv.nested_cv`) in Bates et al.'s low-dimensional setting.

Run by hand, from the repository root::

    python benchmarks/bench_nested.py

The setting is Bates, Hastie & Tibshirani's low-dimensional logistic regression (their
Table 1): n = 100 points, p = 20 standard normal features, P(y = 1 | x) = σ(xᵀθ) with
θ = c·(1, 1, 1, 0, …, 0) and c chosen so that the Bayes error is 33%; an unpenalised
logistic regression (``C=np.inf``), zero-one loss, K = 10 folds, 200 nested repetitions
(as in the paper's experiments) and the default ⌈200/5⌉ = 40 extra plain-CV repetitions:
200 · 55 + 40 · 10 = 11 400 fits.

Measured with BLAS limited to one thread and ``n_jobs=1`` (so that the overhead is
measured, not hidden by parallelism), both wall time (``time.perf_counter``) and the
process's CPU time (``time.process_time``, much less sensitive to other processes on a
shared machine):

1. **The full run**: ``nested_cv`` with 200 repetitions, and a plain loop over the same
   11 400 fits (same folds, same training sets: clone, fit, predict, ``pred != y``; no
   bookkeeping). The script checks that both give the same plain-CV error in every
   repetition and make the same number of fits, so the comparison is between equal work.
   Reported: wall time and fits per second of each.
2. **Overhead**: the same two contenders at 20 repetitions (1 140 fits, a few seconds),
   run as 9 interleaved pairs (a, b, a, b, ...) after an untimed warm-up, so that drifts in
   machine load hit both alike. Reported: medians, the ratio of medians and the median of
   the per-pair ratios, for wall and CPU time. Target: ratio at most 1.1.

Also reported, for the one data set: the interval, its parts, the running inflation
factor (is 200 repetitions enough?), the naive CV interval of one 10-fold CV for
comparison, and the true Err_XY of the model fitted on all 100 points (exact formula
averaged over 10⁶ fresh points).

One BLAS thread: with small matrices and a loaded machine, OpenBLAS threads cost far more
than they give (a 4 ms fit took 130 ms with two threads on two busy cores).

Results go to ``benchmarks/results/bench_nested.json`` and ``bench_nested.md``.
"""

from __future__ import annotations

import datetime as dt
import gc
import math
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from scipy import integrate, optimize, special, stats
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import load_average, machine_info, write_results  # house helpers
from bench_cv import MACHINE_PACKAGES, summary

from bayescv._provenance import child_seeds
from bayescv.nested import nested_cv
from bayescv.nested._core import draw_folds

N, P, K = 100, 20, 10
BAYES_ERROR = 0.33
N_REPEATS = 200
SEED = 0
OVERHEAD_REPEATS = 20
OVERHEAD_PAIRS = 9
TARGET_RATIO = 1.1
LEVEL = 0.90
N_TEST = 10**6


def bayes_error(c: float) -> float:
    """E[σ(−|xᵀθ|)]: xᵀθ ~ N(0, 3c²) for θ = c·(1, 1, 1, 0, …)."""
    s = c * math.sqrt(3)
    f = lambda z: special.expit(-s * abs(z)) * stats.norm.pdf(z)  # noqa: E731
    return 2 * integrate.quad(f, 0, np.inf)[0]


def scenario() -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    c = optimize.brentq(lambda v: bayes_error(v) - BAYES_ERROR, 0.01, 10)
    theta = np.r_[np.full(3, c), np.zeros(P - 3)]
    rng = np.random.default_rng(SEED)
    X = rng.standard_normal((N, P))
    y = (rng.random(N) < special.expit(X @ theta)).astype(int)
    return X, y, theta, c


def err_xy(model: Any, theta: np.ndarray) -> float:
    """Zero-one error of a fitted model on fresh points: E[P(y ≠ ŷ(x) | x)] over 10⁶ x."""
    x = np.random.default_rng(SEED + 1).standard_normal((N_TEST, P))
    p1 = special.expit(x @ theta)
    pred = model.predict(x)
    return float(np.mean(np.where(pred == 1, 1 - p1, p1)))


def run_nested(estimator: Any, X: np.ndarray, y: np.ndarray, n_repeats: int) -> Any:
    return nested_cv(
        estimator, X, y, n_splits=K, n_repeats=n_repeats, level=LEVEL, random_state=SEED, n_jobs=1
    )


def plain_loop(estimator: Any, X: np.ndarray, y: np.ndarray, n_repeats: int) -> dict[str, Any]:
    """The same fits as nested_cv (same seeds, same training sets), in a bare loop."""
    n_bias = math.ceil(n_repeats / 5)
    nested_root, bias_root = child_seeds(SEED, 2)
    plain, first_outer, fits = [], None, 0
    for seed in child_seeds(nested_root, n_repeats):
        fold = draw_folds(N, K, seed)
        for i in range(K - 1):
            for j in range(i + 1, K):
                train = np.flatnonzero((fold != i) & (fold != j))
                test = np.flatnonzero((fold == i) | (fold == j))
                _ = clone(estimator).fit(X[train], y[train]).predict(X[test]) != y[test]
                fits += 1
        outer = np.empty(N)
        for j in range(K):
            test = fold == j
            outer[test] = clone(estimator).fit(X[~test], y[~test]).predict(X[test]) != y[test]
            fits += 1
        plain.append(outer.mean())
        first_outer = outer if first_outer is None else first_outer
    extra = []
    for seed in child_seeds(bias_root, n_bias):
        fold = draw_folds(N, K, seed)
        outer = np.empty(N)
        for j in range(K):
            test = fold == j
            outer[test] = clone(estimator).fit(X[~test], y[~test]).predict(X[test]) != y[test]
            fits += 1
        extra.append(outer.mean())
    return {"plain": plain, "extra": extra, "first_outer": first_outer, "fits": fits}


def clocked(fn: Any) -> tuple[float, float, Any]:
    """Wall and CPU seconds of ``fn()``, and its value."""
    gc.collect()  # the same starting state for every run; the collector stays on while timed
    wall, cpu = time.perf_counter(), time.process_time()
    value = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, value


def bench() -> dict[str, Any]:
    X, y, theta, c = scenario()
    estimator = LogisticRegression(C=np.inf, max_iter=1000)
    nested = lambda reps: run_nested(estimator, X, y, reps)  # noqa: E731
    loop_of = lambda reps: plain_loop(estimator, X, y, reps)  # noqa: E731
    with warnings.catch_warnings(), threadpool_limits(1):
        # a convergence warning would mean max_iter must be raised (in both contenders)
        warnings.simplefilter("error", ConvergenceWarning)
        nested(2), loop_of(2)  # warm-up (imports, caches), not recorded
        full_wall, full_cpu, result = clocked(lambda: nested(N_REPEATS))
        loop_wall, loop_cpu, loop = clocked(lambda: loop_of(N_REPEATS))
        assert loop["fits"] == result.attrs["n_fits"], "different numbers of fits"
        np.testing.assert_allclose(result["err_cv_replicate"].values, loop["plain"], rtol=1e-12)
        np.testing.assert_allclose(result["err_cv_bias"].values, loop["extra"], rtol=1e-12)
        small_fits = int(nested(OVERHEAD_REPEATS).attrs["n_fits"])  # also the warm-up
        assert loop_of(OVERHEAD_REPEATS)["fits"] == small_fits
        times: dict[str, list[float]] = {
            k: [] for k in ("nested_wall", "nested_cpu", "loop_wall", "loop_cpu")
        }
        for _ in range(OVERHEAD_PAIRS):
            wall, cpu, _ = clocked(lambda: nested(OVERHEAD_REPEATS))
            times["nested_wall"].append(wall)
            times["nested_cpu"].append(cpu)
            wall, cpu, _ = clocked(lambda: loop_of(OVERHEAD_REPEATS))
            times["loop_wall"].append(wall)
            times["loop_cpu"].append(cpu)
        full_model = clone(estimator).fit(X, y)
    n_fits = int(result.attrs["n_fits"])
    overhead: dict[str, Any] = {
        "n_repeats": OVERHEAD_REPEATS, "n_fits": small_fits, "pairs": OVERHEAD_PAIRS,
    }  # fmt: skip
    for clock in ("wall", "cpu"):
        a, b = times[f"nested_{clock}"], times[f"loop_{clock}"]
        overhead[clock] = {
            "nested_cv": summary(a),
            "plain_loop": summary(b),
            "ratio_of_medians": statistics.median(a) / statistics.median(b),
            "median_paired_ratio": statistics.median(x / y for x, y in zip(a, b, strict=True)),
        }
    ratio = overhead["wall"]["ratio_of_medians"]
    truth = err_xy(full_model, theta)
    outer = loop["first_outer"]
    z = stats.norm.ppf(0.5 + LEVEL / 2)
    naive_half = z * outer.std(ddof=1) / math.sqrt(N)
    lower, upper = result["lower"].item(), result["upper"].item()
    running = result["inflation_running"].values
    return {
        "setting": {
            "n": N,
            "p": P,
            "n_splits": K,
            "n_repeats": N_REPEATS,
            "n_bias_repeats": int(result.attrs["n_bias_repeats"]),
            "bayes_error": BAYES_ERROR,
            "c": c,
            "theta": "c * (1, 1, 1, 0, ..., 0)",
            "estimator": repr(estimator),
            "loss": "zero_one",
            "level": LEVEL,
            "seed": SEED,
            "n_jobs": 1,
            "blas_threads": 1,
        },
        "n_fits": n_fits,
        "fits_per_replicate": int(result.attrs["fits_per_replicate"]),
        "full_run": {
            "nested_cv_wall_s": full_wall,
            "nested_cv_cpu_s": full_cpu,
            "plain_loop_wall_s": loop_wall,
            "plain_loop_cpu_s": loop_cpu,
            "fits_per_s_nested_cv": n_fits / full_wall,
            "fits_per_s_plain_loop": n_fits / loop_wall,
            "fits_per_cpu_s_nested_cv": n_fits / full_cpu,
            "fits_per_cpu_s_plain_loop": n_fits / loop_cpu,
            "ratio_wall": full_wall / loop_wall,
            "ratio_cpu": full_cpu / loop_cpu,
        },
        "overhead": overhead,
        "ratio": ratio,
        "target_ratio": TARGET_RATIO,
        "target_met": ratio <= TARGET_RATIO,
        "equal_work_checked": True,
        "interval": {
            "estimate": result["estimate"].item(),
            "lower": lower,
            "upper": upper,
            "se": result["se"].item(),
            "err_ncv": float(result["err_ncv"]),
            "err_cv": float(result["err_cv"]),
            "bias": float(result["bias"]),
            "mse": float(result["mse"]),
            "naive_se": float(result["naive_se"]),
            "inflation": float(result["inflation"]),
            "inflation_raw": float(result["inflation_raw"]),
            "inflation_running_at": {
                str(r): float(running[r - 1])
                for r in (10, 25, 50, 100, 150, 200)
                if r <= len(running)
            },
        },
        "naive_cv_first_repetition": {
            "estimate": float(outer.mean()),
            "lower": float(outer.mean() - naive_half),
            "upper": float(outer.mean() + naive_half),
        },
        "width_ratio_nested_to_naive": (upper - lower) / (2 * naive_half),
        "err_xy_full_model": truth,
        "err_xy_covered": bool(lower <= truth <= upper),
    }


def markdown(results: dict[str, Any]) -> str:
    m, r = results["machine"], results["nested"]
    s, iv, nv = r["setting"], r["interval"], r["naive_cv_first_repetition"]
    f, o = r["full_run"], r["overhead"]
    secs = lambda v: f"{v:.2f} s"  # noqa: E731
    running = ", ".join(f"{k}: {v:.3f}" for k, v in iv["inflation_running_at"].items())
    return "\n".join(
        [
            "# bench_nested",
            "",
            f"Run on {results['date']} with `python benchmarks/bench_nested.py`.",
            "",
            f"Machine: {m['cpu']}, {m['cores']} cores ({m['usable_cores']} usable); "
            f"Python {m['python']}, numpy {m['numpy']}, scikit-learn {m['scikit-learn']}, "
            f"bayescv {m['bayescv']} (git {m['git_commit']}). Load average (1 min) before / "
            f"after: {results['load_before']:.2f} / {results['load_after']:.2f}; other "
            "processes on the machine skew the timings.",
            "",
            "## Setting (Bates, Hastie & Tibshirani, low-dimensional logistic, Table 1)",
            "",
            f"n = {s['n']}, p = {s['p']}, x ~ N(0, I), P(y = 1 | x) = σ(xᵀθ), θ = "
            f"{s['theta']} with c = {s['c']:.4f} (Bayes error {s['bayes_error']:.0%}); "
            f"`{s['estimator']}`, zero-one loss, K = {s['n_splits']}, {s['n_repeats']} nested "
            f"repetitions + {s['n_bias_repeats']} plain-CV repetitions = **{r['n_fits']:,} fits** "
            f"({r['fits_per_replicate']} per nested repetition); seed {s['seed']}, "
            f"n_jobs = {s['n_jobs']}, BLAS threads = {s['blas_threads']}.",
            "",
            "## Speed",
            "",
            "The plain loop does the same fits (same folds and training sets; clone, fit, "
            "predict, `pred != y`) with no bookkeeping; both give the same plain-CV error in "
            f"every repetition and make the same number of fits (checked: {r['equal_work_checked']}).",
            "",
            f"**Full run** ({s['n_repeats']} repetitions, {r['n_fits']:,} fits, one run each):",
            "",
            "| contender | wall time | fits / s (wall) | CPU time | fits / s (CPU) |",
            "|---|---|---|---|---|",
            f"| `nested_cv` | {secs(f['nested_cv_wall_s'])} | {f['fits_per_s_nested_cv']:.0f} | "
            f"{secs(f['nested_cv_cpu_s'])} | {f['fits_per_cpu_s_nested_cv']:.0f} |",
            f"| plain loop | {secs(f['plain_loop_wall_s'])} | {f['fits_per_s_plain_loop']:.0f} | "
            f"{secs(f['plain_loop_cpu_s'])} | {f['fits_per_cpu_s_plain_loop']:.0f} |",
            "",
            f"Ratio `nested_cv` / loop: wall {f['ratio_wall']:.3f}, CPU {f['ratio_cpu']:.3f} "
            "(one run each: load drifts over a minute move the wall ratio).",
            "",
            f"**Overhead** ({o['n_repeats']} repetitions, {o['n_fits']:,} fits per run; untimed "
            f"warm-up, then {o['pairs']} interleaved pairs):",
            "",
            "| clock | contender | median | min | max |",
            "|---|---|---|---|---|",
            *[
                f"| {clock} | {name} | {secs(t['median_s'])} | {secs(t['min_s'])} | {secs(t['max_s'])} |"
                for clock in ("wall", "cpu")
                for name, t in (
                    ("`nested_cv`", o[clock]["nested_cv"]),
                    ("plain loop", o[clock]["plain_loop"]),
                )
            ],
            "",
            f"- wall time: ratio of medians **{o['wall']['ratio_of_medians']:.3f}**, median of "
            f"paired ratios {o['wall']['median_paired_ratio']:.3f} (target ≤ {r['target_ratio']}: "
            f"{'met' if r['target_met'] else 'NOT met'})",
            f"- CPU time: ratio of medians **{o['cpu']['ratio_of_medians']:.3f}**, median of "
            f"paired ratios {o['cpu']['median_paired_ratio']:.3f}",
            "",
            "## The interval on this data set",
            "",
            f"- nested CV, {s['level']:.0%}: **{iv['estimate']:.3f} [{iv['lower']:.3f}, "
            f"{iv['upper']:.3f}]**, se {iv['se']:.4f}",
            f"- err_ncv {iv['err_ncv']:.4f}, err_cv {iv['err_cv']:.4f}, bias {iv['bias']:.4f}; "
            f"mse {iv['mse']:.5f}, naive se {iv['naive_se']:.4f}",
            f"- inflation factor {iv['inflation']:.3f} (raw {iv['inflation_raw']:.3f}); running "
            f"value after r repetitions: {running}",
            f"- naive CV interval of one 10-fold CV (first repetition): {nv['estimate']:.3f} "
            f"[{nv['lower']:.3f}, {nv['upper']:.3f}]; nested / naive width: "
            f"**{r['width_ratio_nested_to_naive']:.2f}** (Bates et al.: about 1.2 to 1.5)",
            f"- Err_XY of the model fitted on all {s['n']} points (10⁶ fresh points): "
            f"{r['err_xy_full_model']:.4f}, covered: {r['err_xy_covered']}",
            "",
        ]
    )


def main() -> None:
    started = time.perf_counter()
    results: dict[str, Any] = {
        "date": dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat(),
        "machine": machine_info(MACHINE_PACKAGES, cpu=True, with_blas=True),
        "load_before": load_average(),
    }
    print(
        f"nested CV, {N_REPEATS} repetitions, then {OVERHEAD_PAIRS} overhead pairs ...", flush=True
    )
    results["nested"] = r = bench()
    f, o = r["full_run"], r["overhead"]
    print(
        f"  full run: nested_cv {f['nested_cv_wall_s']:.1f} s ({f['fits_per_s_nested_cv']:.0f} fits/s), "
        f"plain loop {f['plain_loop_wall_s']:.1f} s ({f['fits_per_s_plain_loop']:.0f} fits/s)\n"
        f"  overhead ratio: wall {o['wall']['ratio_of_medians']:.3f}, cpu {o['cpu']['ratio_of_medians']:.3f}"
    )
    write_results("bench_nested", results, markdown, started)


if __name__ == "__main__":
    main()
