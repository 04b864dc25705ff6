"""Benchmark of the closed-form variance estimators against one pass over the losses.

Run by hand, from the repository root::

    python benchmarks/bench_estimators.py

Every estimator of :mod:`bayescv.classical.estimators` is computed from per-block statistics in O(N),
so evaluating all of them should cost a small multiple of reading the losses once. On
10^7 float64 losses in 100 contiguous blocks of equal size, this times

1. :func:`bayescv.classical.variance_estimates` on the loss table: the block moments, the
   centred block statistics, every estimator and the result Dataset; against a single
   ``np.sum`` over the same losses (one pass over memory, the floor of any O(N) reduction).
   Aim: a ratio of at most 10;
2. its parts: :func:`bayescv.block_moments` on the table, :func:`bayescv.classical.block_stats`
   on the moments, all estimators from the :class:`~bayescv.classical.BlockStats`, and
   :func:`bayescv.classical.cv_intervals` with its default methods on the table;
3. each estimator alone given the BlockStats (microseconds per call: K = 100 numbers).

``time.perf_counter``, one untimed warm-up per contender, then interleaved repeats (a, b, a,
b, ...) so that drifts in machine load hit every contender alike; medians are reported, with
ratios of medians. Building the loss table (``from_arrays``: validation and the stable sort
by block) is not part of the estimator work: it is timed once and reported separately.
Before timing, the estimates are checked against direct numpy computations of the formulas.

Results go to ``benchmarks/results/bench_estimators.json`` and ``bench_estimators.md``.
"""

from __future__ import annotations

import datetime as dt
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import interleaved, load_average, machine_info, write_results  # house helpers

import bayescv
import bayescv.classical.estimators as est
from bayescv.classical import cv_intervals, variance_estimates
from bayescv.classical.estimators import ESTIMATORS, block_stats
from bayescv.losses import from_arrays

N_LOSSES = 10**7
N_BLOCKS = 100
REPEATS = 21
PER_CALL_REPEATS = 7
PER_CALL_NUMBER = 200
AIM = 10.0


def per_call(fn: Callable[[], Any]) -> list[float]:
    """Seconds per call, from PER_CALL_REPEATS loops of PER_CALL_NUMBER calls."""
    fn()
    out = []
    for _ in range(PER_CALL_REPEATS):
        start = time.perf_counter()
        for _ in range(PER_CALL_NUMBER):
            fn()
        out.append((time.perf_counter() - start) / PER_CALL_NUMBER)
    return out


def summary(times: list[float]) -> dict[str, Any]:
    return {
        "median_s": statistics.median(times),
        "min_s": min(times),
        "max_s": max(times),
        "runs_s": times,
    }


def public(name: str) -> Callable[[Any], Any]:
    """The public function that computes estimator `name` (a variance, not a standard error)."""
    special = {
        "naive_points": lambda s: est.naive_se_points(s) ** 2,
        "naive_folds": lambda s: est.naive_se_folds(s) ** 2,
        "bayle_within": lambda s: est.sigma2_within(s) / block_stats(s).N[0],
        "bayle_all_pairs": lambda s: est.sigma2_all_pairs(s) / block_stats(s).N[0],
    }
    return special[name] if name in special else getattr(est, name)


def direct(values: np.ndarray) -> dict[str, float]:
    """The estimators from their formulas in plain numpy, centred first (equal sizes)."""
    e = values.reshape(N_BLOCKS, -1)
    K, M = e.shape
    N = K * M
    mu = e.mean()
    c = e - mu
    means = c.mean(axis=1)
    t1 = (c * c).mean()  # s1 − μ̂² (Geras & Sutton 2013, §5 moments, centred)
    t2 = ((c.sum(axis=1) ** 2 - (c * c).sum(axis=1)) / (M * (M - 1))).mean()  # s2 − μ̂²
    t3 = -(means**2).sum() / (K * (K - 1))  # s3 − μ̂², as Σ_k c̄_k = 0
    within = e.var(axis=1, ddof=1).mean()
    out = {
        "theta_1": mu**2,  # seeds README: θ_1 = μ̂²
        "theta_2": (t1 - (N + 1 - M) * t2 + (N - M) * t3) / N,  # Geras & Sutton (2013, Table 2)
        "theta_3": means.var(ddof=1) / K,  # θ_3 = se² of the block means
        "theta_4": within / N,  # θ_4 = σ²_in/N
        "theta_5": (t1 + (N + M - 1) * t2 - (N + M) * t3) / N,  # Geras & Sutton (2013, §5)
        "naive_points": e.var(ddof=1) / N,  # Bates eq. 5, squared
        "bayle_all_pairs": e.var() / N,  # σ²_out/N
    }
    out.update(
        theta_omega=out["theta_2"],
        theta_gamma=out["theta_3"],
        naive_folds=out["theta_3"],
        theta_A=out["theta_4"],
        theta_A_weighted=out["theta_4"],
        bayle_within=out["theta_4"],
        theta_B=2 * out["theta_4"],
        theta_B_weighted=2 * out["theta_4"],
    )
    return out


def bench() -> dict[str, Any]:
    rng = np.random.default_rng(0)
    loss = rng.random(N_LOSSES)
    block = np.repeat(np.arange(N_BLOCKS), N_LOSSES // N_BLOCKS)

    start = time.perf_counter()
    table = from_arrays(loss, block)
    build_s = time.perf_counter() - start
    values = table["loss"].values
    moments = bayescv.block_moments(table)
    stats = block_stats(moments)

    # Correctness before speed.
    ds = variance_estimates(table)
    reference = direct(values)
    assert list(ds["estimator"].values) == list(ESTIMATORS)
    for name, expected in reference.items():
        got = float(ds["theta"].sel(estimator=name))
        assert np.isclose(got, expected, rtol=1e-8, atol=0), (name, got, expected)
        assert np.isclose(float(public(name)(stats)), got, rtol=1e-12, atol=0), name

    def all_from_stats() -> list:
        return [public(name)(stats) for name in ESTIMATORS]

    times = interleaved(
        {
            "np.sum": lambda: np.sum(values),
            "variance_estimates": lambda: variance_estimates(table),
            "block_moments": lambda: bayescv.block_moments(table),
            "block_stats": lambda: block_stats(moments),
            "all_estimators_from_stats": all_from_stats,
            "cv_intervals": lambda: cv_intervals(table),
        },
        REPEATS,
    )
    alone = {}
    for name in ESTIMATORS:
        func = public(name)
        alone[name] = summary(per_call(lambda func=func: func(stats)))

    base = statistics.median(times["np.sum"])
    out: dict[str, Any] = {
        "n_losses": N_LOSSES,
        "n_blocks": N_BLOCKS,
        "block_size": N_LOSSES // N_BLOCKS,
        "losses": "np.random.default_rng(0).random(n), float64, blocks contiguous",
        "repeats": REPEATS,
        "per_call_repeats": PER_CALL_REPEATS,
        "per_call_number": PER_CALL_NUMBER,
        "untimed_from_arrays_s": build_s,
        "checked_against_numpy": sorted(reference),
        "timings": {name: summary(t) for name, t in times.items()},
        "each_estimator_from_stats": alone,
    }
    out["ratios"] = {
        name: statistics.median(t) / base for name, t in times.items() if name != "np.sum"
    }
    out["ratio"] = out["ratios"]["variance_estimates"]
    # Ratio of the fastest runs: less sensitive to other processes on a shared machine.
    out["ratio_of_minima"] = min(times["variance_estimates"]) / min(times["np.sum"])
    out["aim_ratio"] = AIM
    out["aim_met"] = out["ratio"] <= AIM
    return out


def markdown(results: dict[str, Any]) -> str:
    m, b = results["machine"], results["estimators"]
    t = b["timings"]
    ms = lambda s: f"{s * 1e3:.2f} ms"  # noqa: E731
    us = lambda s: f"{s * 1e6:.1f} µs"  # noqa: E731
    header = ["| contender | median | min | max | / `np.sum` |", "|---|---|---|---|---|"]

    def row(label: str, key: str) -> str:
        s = t[key]
        ratio = "1" if key == "np.sum" else f"{b['ratios'][key]:.2f}"
        return f"| {label} | {ms(s['median_s'])} | {ms(s['min_s'])} | {ms(s['max_s'])} | {ratio} |"

    alone = [
        f"| `{name}` | {us(s['median_s'])} | {us(s['min_s'])} | {us(s['max_s'])} |"
        for name, s in b["each_estimator_from_stats"].items()
    ]
    return "\n".join(
        [
            "# bench_estimators",
            "",
            f"Run on {results['date']} with `{results['command']}`.",
            "",
            f"Machine: {m['cpu']}, {m['cores']} cores ({m['usable_cores']} usable); "
            f"Python {m['python']}, numpy {m['numpy']}, scipy {m['scipy']}, "
            f"xarray {m['xarray']}, bayescv {m['bayescv']} (git {m['git_commit']}); "
            f"BLAS: {', '.join(m['blas']) or 'unknown'}. "
            f"Load average (1 min) before / after: {results['load_before']:.2f} / "
            f"{results['load_after']:.2f}; other processes on the machine skew the timings.",
            "",
            f"{b['n_losses']:,} float64 losses in {b['n_blocks']} contiguous blocks of "
            f"{b['block_size']:,}; one warm-up, then {b['repeats']} interleaved runs each. "
            f"Building the table (`from_arrays`: validation and the stable sort by block, "
            f"{b['untimed_from_arrays_s']:.2f} s) is not timed with the estimators. Every "
            "estimate was first checked against a direct numpy computation (rtol 1e-8).",
            "",
            "## All estimators on the loss table",
            "",
            *header,
            row("`np.sum(loss)`", "np.sum"),
            row("`variance_estimates(table)` (moments + every estimator)", "variance_estimates"),
            row("`block_moments(table)`", "block_moments"),
            row("`block_stats(moments)`", "block_stats"),
            row("all 15 estimators from `BlockStats`", "all_estimators_from_stats"),
            row("`cv_intervals(table)` (default methods)", "cv_intervals"),
            "",
            f"`variance_estimates` / `np.sum`, ratio of medians: **{b['ratio']:.1f}** "
            f"(aim ≤ {b['aim_ratio']:g}: {'met' if b['aim_met'] else 'NOT met'}); ratio of the "
            f"fastest runs: {b['ratio_of_minima']:.1f}.",
            "",
            "## Each estimator alone, given the BlockStats",
            "",
            f"Per call; median, min and max of {b['per_call_repeats']} loops of "
            f"{b['per_call_number']} calls.",
            "",
            "| estimator | median | min | max |",
            "|---|---|---|---|",
            *alone,
            "",
        ]
    )


def main() -> None:
    started = time.perf_counter()
    results: dict[str, Any] = {
        "date": dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat(),
        "command": " ".join(["python", *sys.argv]),
        "machine": machine_info(["numpy", "scipy", "xarray", "bayescv"], cpu=True, with_blas=True),
        "load_before": load_average(),
    }
    print("variance estimators ...", flush=True)
    results["estimators"] = b = bench()
    t = b["timings"]
    print(
        f"  np.sum {t['np.sum']['median_s'] * 1e3:.2f} ms, "
        f"variance_estimates {t['variance_estimates']['median_s'] * 1e3:.2f} ms "
        f"(x{b['ratio']:.1f}; fastest runs x{b['ratio_of_minima']:.1f}), block_moments {t['block_moments']['median_s'] * 1e3:.2f} ms, "
        f"block_stats {t['block_stats']['median_s'] * 1e6:.0f} µs, all estimators from stats "
        f"{t['all_estimators_from_stats']['median_s'] * 1e3:.2f} ms; "
        f"from_arrays (untimed) {b['untimed_from_arrays_s']:.2f} s"
    )
    write_results("bench_estimators", results, markdown, started)


if __name__ == "__main__":
    main()
