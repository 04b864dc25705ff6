"""Benchmarks of the CV runner's overhead and of the speed of the block moments.

Run by hand, from the repository root::

    python benchmarks/bench_cv.py

Two things are measured, each with ``time.perf_counter``, one untimed warm-up per
contender and then interleaved repeats (a, b, a, b, ...) so that drifts in machine load hit
every contender alike; medians are reported, with ratios of medians.

1. **CV runner overhead.** :func:`bayescv.cross_val_losses` validates the partition,
   dispatches the fits through joblib and assembles a validated xarray loss table. None of
   that should cost noticeably more than the fits themselves, so it is timed against a
   plain scikit-learn loop over the same splitter (clone, fit, predict, ``pred != y``) on
   20 000 points, ``LogisticRegression()`` and 10 shuffled folds. Target: a ratio of at
   most 1.05. The script first asserts that both give the same loss for every point, so
   the comparison is between equal work.
2. **Block moments.** :func:`bayescv.block_moments` reduces a loss table to per-block
   n, S, Q and W in O(N). It is timed on 10^7 losses in 10 contiguous blocks against a
   single ``np.sum`` over the same losses (one pass over memory, the floor for any O(N)
   reduction); so is the raw :func:`bayescv.moments.block_sums` (n, S, Q only). Aim: at
   most 5 times ``np.sum`` for ``block_moments``. Building the table is not timed. A table
   whose points are shuffled (blocks no longer contiguous) exercises the ``np.bincount``
   fallback and is timed too, as is a table with a ``source`` coordinate (one source per
   block, as leave-one-source-out CV makes), which adds the lookup of each block's source.

Results go to ``benchmarks/results/bench_cv.json`` and ``benchmarks/results/bench_cv.md``.
The whole run takes well under a minute on two cores.
"""

from __future__ import annotations

import datetime as dt
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import KFold

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import interleaved, load_average, machine_info, write_results  # house helpers

import bayescv
from bayescv.losses import from_arrays
from bayescv.moments import block_sums

#: Packages whose versions the results record (bench_nested.py records the same).
MACHINE_PACKAGES = ["numpy", "scipy", "scikit-learn", "xarray", "bayescv"]

CV_SAMPLES = 20_000
CV_FEATURES = 20
CV_FOLDS = 10
CV_REPEATS = 31
CV_TARGET = 1.05

N_LOSSES = 10**7
N_BLOCKS = 10
MOMENT_REPEATS = 21
SHUFFLED_REPEATS = 7
MOMENT_AIM = 5.0


def summary(times: list[float]) -> dict[str, Any]:
    return {
        "median_s": statistics.median(times),
        "min_s": min(times),
        "max_s": max(times),
        "runs_s": times,
    }


def bench_cv() -> dict[str, Any]:
    X, y = make_classification(n_samples=CV_SAMPLES, n_features=CV_FEATURES, random_state=0)
    estimator = LogisticRegression()
    splitter = KFold(CV_FOLDS, shuffle=True, random_state=0)

    def package() -> xr.Dataset:
        return bayescv.cross_val_losses(
            estimator, X, y, cv=splitter, loss="zero_one", random_state=0
        )

    def plain_loop() -> list[tuple[np.ndarray, np.ndarray]]:
        out = []
        for train, test in splitter.split(X, y):
            pred = clone(estimator).fit(X[train], y[train]).predict(X[test])
            out.append((test, pred != y[test]))
        return out

    with warnings.catch_warnings():
        # A convergence warning would mean max_iter must be raised (in both contenders).
        warnings.simplefilter("error", ConvergenceWarning)
        table = package()
        folds = plain_loop()

        loss = np.full(len(y), np.nan)
        fold = np.full(len(y), -1)
        for k, (test, err) in enumerate(folds):
            loss[test], fold[test] = err, k
        index = table["index"].values
        assert np.array_equal(np.sort(index), np.arange(len(y))), "not every point tested once"
        assert np.array_equal(table["loss"].values, loss[index]), "losses differ from the loop"
        assert np.array_equal(table["block"].values, fold[index]), "folds differ from the loop"

        times = interleaved({"cross_val_losses": package, "plain_loop": plain_loop}, CV_REPEATS)

    a, b = summary(times["cross_val_losses"]), summary(times["plain_loop"])
    ratio = a["median_s"] / b["median_s"]
    # Each a-run and the b-run right after it share the machine's state: a second,
    # drift-robust view of the overhead.
    paired = [
        ta - tb for ta, tb in zip(times["cross_val_losses"], times["plain_loop"], strict=True)
    ]
    return {
        "data": f"make_classification(n_samples={CV_SAMPLES}, n_features={CV_FEATURES}, random_state=0)",
        "estimator": repr(estimator),
        "max_iter": estimator.get_params()["max_iter"],
        "cv": repr(splitter),
        "n_jobs": None,
        "repeats": CV_REPEATS,
        "losses_equal": True,
        "error_rate": float(table["loss"].values.mean()),
        "cross_val_losses": a,
        "plain_loop": b,
        "overhead_ms": (a["median_s"] - b["median_s"]) * 1e3,
        "paired_overhead_median_ms": statistics.median(paired) * 1e3,
        "ratio": ratio,
        "target_ratio": CV_TARGET,
        "target_met": ratio <= CV_TARGET,
    }


def bench_moments() -> dict[str, Any]:
    rng = np.random.default_rng(0)
    loss = rng.random(N_LOSSES)
    block = np.repeat(np.arange(N_BLOCKS), N_LOSSES // N_BLOCKS)

    start = time.perf_counter()
    table = from_arrays(loss, block)
    build_s = time.perf_counter() - start
    values = table["loss"].values
    labels = table["block"].values
    starts = np.flatnonzero(np.r_[True, labels[1:] != labels[:-1]])
    assert starts.size == N_BLOCKS, "blocks are not contiguous in the table"

    start = time.perf_counter()
    shuffled = table.isel(obs=rng.permutation(N_LOSSES))
    shuffle_s = time.perf_counter() - start
    # One source per block, as in leave-one-source-out CV: adds the block-source lookup.
    sourced = table.assign_coords(source=("obs", labels * 7 + 100))

    # Correctness before speed: both layouts, the raw sums and a direct computation agree.
    moments, moments_shuffled = bayescv.block_moments(table), bayescv.block_moments(shuffled)
    moments_sourced = bayescv.block_moments(sourced)
    assert np.array_equal(moments_sourced["source"].values, np.arange(N_BLOCKS) * 7 + 100)
    for name in ("n", "S", "Q", "W"):
        np.testing.assert_array_equal(moments_sourced[name].values, moments[name].values)
    n, sums, squares = block_sums(values, starts)
    per_block = values.reshape(N_BLOCKS, -1)
    direct = {
        "n": np.full(N_BLOCKS, N_LOSSES // N_BLOCKS),
        "S": per_block.sum(axis=1),
        "Q": (per_block**2).sum(axis=1),
        "W": ((per_block - per_block.mean(axis=1, keepdims=True)) ** 2).sum(axis=1),
    }
    np.testing.assert_array_equal(moments["n"].values, n)
    np.testing.assert_array_equal(moments["S"].values, sums)
    np.testing.assert_array_equal(moments["Q"].values, squares)
    for name, expected in direct.items():
        np.testing.assert_allclose(moments[name].values, expected, rtol=1e-10)
        np.testing.assert_allclose(moments_shuffled[name].values, expected, rtol=1e-10)

    times = interleaved(
        {
            "np.sum": lambda: np.sum(values),
            "block_moments": lambda: bayescv.block_moments(table),
            "block_sums": lambda: block_sums(values, starts),
        },
        MOMENT_REPEATS,
    )
    shuffled_times = interleaved(
        {
            "np.sum": lambda: np.sum(shuffled["loss"].values),
            "block_moments_shuffled": lambda: bayescv.block_moments(shuffled),
            "block_moments_with_source": lambda: bayescv.block_moments(sourced),
        },
        SHUFFLED_REPEATS,
    )
    base = statistics.median(times["np.sum"])
    base_shuffled = statistics.median(shuffled_times["np.sum"])
    out: dict[str, Any] = {
        "n_losses": N_LOSSES,
        "n_blocks": N_BLOCKS,
        "losses": "np.random.default_rng(0).random(n), float64",
        "repeats": MOMENT_REPEATS,
        "repeats_shuffled": SHUFFLED_REPEATS,
        "untimed_from_arrays_s": build_s,
        "untimed_shuffle_s": shuffle_s,
        "np.sum": summary(times["np.sum"]),
        "block_moments": summary(times["block_moments"]),
        "block_sums": summary(times["block_sums"]),
        "np.sum_shuffled": summary(shuffled_times["np.sum"]),
        "block_moments_shuffled": summary(shuffled_times["block_moments_shuffled"]),
        "block_moments_with_source": summary(shuffled_times["block_moments_with_source"]),
    }
    out["ratio_block_moments"] = out["block_moments"]["median_s"] / base
    out["ratio_block_sums"] = out["block_sums"]["median_s"] / base
    out["ratio_block_moments_shuffled"] = out["block_moments_shuffled"]["median_s"] / base_shuffled
    out["ratio_block_moments_with_source"] = (
        out["block_moments_with_source"]["median_s"] / base_shuffled
    )
    out["aim_ratio"] = MOMENT_AIM
    out["aim_met"] = out["ratio_block_moments"] <= MOMENT_AIM
    return out


def markdown(results: dict[str, Any]) -> str:
    m, cv, mo = results["machine"], results["cv_overhead"], results["moments"]
    ms = lambda s: f"{s * 1e3:.2f} ms"  # noqa: E731
    row = lambda name, s: f"| {name} | {ms(s['median_s'])} | {ms(s['min_s'])} | {ms(s['max_s'])} |"  # noqa: E731
    header = ["| contender | median | min | max |", "|---|---|---|---|"]
    return "\n".join(
        [
            "# bench_cv",
            "",
            f"Run on {results['date']} with `python benchmarks/bench_cv.py`.",
            "",
            f"Machine: {m['cpu']}, {m['cores']} cores ({m['usable_cores']} usable); "
            f"Python {m['python']}, numpy {m['numpy']}, scipy {m['scipy']}, "
            f"scikit-learn {m['scikit-learn']}, xarray {m['xarray']}, bayescv {m['bayescv']} "
            f"(git {m['git_commit']}); BLAS: {', '.join(m['blas']) or 'unknown'}. "
            f"Load average (1 min) before / after: {results['load_before']:.2f} / "
            f"{results['load_after']:.2f}; other processes on the machine skew the timings.",
            "",
            "## 1. CV runner overhead",
            "",
            f"{cv['data']}, `{cv['estimator']}` (max_iter={cv['max_iter']}), `{cv['cv']}`, "
            f"n_jobs=None; one warm-up, then {cv['repeats']} interleaved runs each. "
            f"Losses equal point for point: {cv['losses_equal']} (error rate {cv['error_rate']:.4f}).",
            "",
            *header,
            row("`cross_val_losses`", cv["cross_val_losses"]),
            row("plain loop", cv["plain_loop"]),
            "",
            f"Ratio of medians: **{cv['ratio']:.3f}** (target ≤ {cv['target_ratio']}: "
            f"{'met' if cv['target_met'] else 'NOT met'}); overhead {cv['overhead_ms']:.2f} ms per CV run "
            f"(median of paired differences: {cv['paired_overhead_median_ms']:.2f} ms).",
            "",
            "## 2. Block moments",
            "",
            f"{mo['n_losses']:,} float64 losses in {mo['n_blocks']} contiguous blocks of equal "
            f"size; one warm-up, then {mo['repeats']} interleaved runs each "
            f"({mo['repeats_shuffled']} for the shuffled and source layouts). Building the table "
            f"(`from_arrays`, {mo['untimed_from_arrays_s']:.2f} s) is not timed.",
            "",
            *header,
            row("`np.sum(loss)`", mo["np.sum"]),
            row("`block_moments(table)`", mo["block_moments"]),
            row("`block_sums(values, starts)`", mo["block_sums"]),
            row("`np.sum(loss)` (timed with the two below)", mo["np.sum_shuffled"]),
            row("`block_moments(shuffled)` (bincount fallback)", mo["block_moments_shuffled"]),
            row(
                "`block_moments(table)` with a `source` coordinate",
                mo["block_moments_with_source"],
            ),
            "",
            f"- `block_moments` / `np.sum`: **{mo['ratio_block_moments']:.1f}** "
            f"(aim ≤ {mo['aim_ratio']:g}: {'met' if mo['aim_met'] else 'not met'})",
            f"- `block_sums` / `np.sum`: **{mo['ratio_block_sums']:.1f}**",
            f"- `block_moments` on shuffled obs / `np.sum`: **{mo['ratio_block_moments_shuffled']:.0f}**",
            f"- `block_moments` with a `source` coordinate / `np.sum`: "
            f"**{mo['ratio_block_moments_with_source']:.0f}**",
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
    print("CV runner overhead ...", flush=True)
    results["cv_overhead"] = bench_cv()
    cv = results["cv_overhead"]
    print(
        f"  cross_val_losses {cv['cross_val_losses']['median_s'] * 1e3:.2f} ms, "
        f"plain loop {cv['plain_loop']['median_s'] * 1e3:.2f} ms, ratio {cv['ratio']:.3f}"
    )
    print("block moments ...", flush=True)
    results["moments"] = bench_moments()
    mo = results["moments"]
    print(
        f"  np.sum {mo['np.sum']['median_s'] * 1e3:.2f} ms, "
        f"block_moments {mo['block_moments']['median_s'] * 1e3:.2f} ms "
        f"(x{mo['ratio_block_moments']:.1f}), "
        f"block_sums {mo['block_sums']['median_s'] * 1e3:.2f} ms (x{mo['ratio_block_sums']:.1f}), "
        f"shuffled {mo['block_moments_shuffled']['median_s'] * 1e3:.1f} ms "
        f"(x{mo['ratio_block_moments_shuffled']:.0f}), "
        f"with source {mo['block_moments_with_source']['median_s'] * 1e3:.1f} ms "
        f"(x{mo['ratio_block_moments_with_source']:.0f})"
    )
    write_results("bench_cv", results, markdown, started)


if __name__ == "__main__":
    main()
