"""Benchmarks of the study runner: its overhead, and its speed-up from 1 to 2 workers.

Run by hand, from the repository root::

    python benchmarks/bench_study.py [overhead] [speedup]

(both parts by default; naming one reruns it and keeps the other's stored result).

1. **Runner overhead.** :func:`bayescv.compare.run_study` seeds each replicate, records
   warnings, times every step, assembles the results into an xarray Dataset, writes them to
   a store (parts, then the final NetCDF file) and dispatches through joblib. It is timed
   against a plain loop doing the same work on the same seeds: draw the data, fit the K
   fold models, compute the losses and block moments, one ``cv_intervals`` call for the 16
   closed-form methods, the exact truths (full-data fit, err_xy, kfold_test_error). The
   script first asserts that both give the same intervals and truths. Target: at most 10%
   more time. The runner's own accounting is reported too: wall time minus the sum of the
   replicates' measured work (sampling, CV, truths, methods).
2. **Speed-up.** A study dominated by model fits (the logistic setting of Bates et al. 2024, with a
   10-replicate bootstrap: 111 fits per replicate) with ``n_jobs=1`` and ``n_jobs=2``,
   interleaved; results are asserted identical. Target: at least 1.7. On a machine shared
   with other work two workers may not get two cores: a calibration (eight identical
   CPU-bound joblib tasks, 1 and 2 workers, interleaved with the studies) measures what
   two workers could gain at the time, and the study's share of that is reported.

Each contender gets one untimed warm-up, then interleaved repeats (a, b, a, b, ...) so that
drifts in machine load hit both alike; medians are reported. Results go to
``benchmarks/results/bench_study.json`` and ``.md``. About five minutes on two cores.
"""

from __future__ import annotations

import datetime as dt
import gc
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr
from sklearn.base import clone
from threadpoolctl import ThreadpoolController

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import load_average, machine_info  # house helpers

from bayescv._provenance import child_seeds
from bayescv.classical import INTERVAL_METHODS, cv_intervals
from bayescv.compare import TIMING_VARIABLES, BatesLogistic, run_study
from bayescv.cv.loss_functions import get_loss

RESULTS = Path(__file__).resolve().parent / "results"
OVERHEAD_REPLICATES = 100
OVERHEAD_REPEATS = 5
SPEEDUP_REPLICATES = 40
SPEEDUP_REPEATS = 3
N_BOOTSTRAP = 10


def timed(fn) -> tuple[float, Any]:
    gc.collect()
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def plain_loop(scenario, n: int, seed: int) -> dict[str, np.ndarray]:
    """The same work as the runner, written directly (one thread, as the runner uses)."""
    learner, loss = scenario.default_learner(), get_loss("zero_one")
    estimates, truths = [], []
    with ThreadpoolController().limit(limits=1):
        for rep_seed in child_seeds(seed, n):
            data_seed, cv_seed, truth_seed, _, learner_seed = child_seeds(rep_seed, 5)
            draw = scenario.draw(np.random.default_rng(data_seed))
            model0 = clone(learner).set_params(random_state=learner_seed)
            folds = scenario.folds(draw, cv_seed)
            stats, models = [], []
            for train, test in folds:
                model = clone(model0).fit(draw.X[train], draw.y[train])
                e = loss(draw.y[test], model.predict(draw.X[test]), model.classes_)
                stats.append((test.size, e.sum(), e @ e, ((e - e.mean()) ** 2).sum()))
                models.append(model)
            s = np.array(stats)
            moments = xr.Dataset(
                {k: ("block", s[:, j]) for j, k in enumerate("nSQW")},
                coords={"block": np.arange(len(folds))},
                attrs={"scheme": "random"},
            )
            ci = cv_intervals(moments, list(INTERVAL_METHODS), level=0.95)  # run_study's default
            rng = np.random.default_rng(truth_seed)
            pop = draw.population
            full = clone(model0).fit(draw.X, draw.y)
            err_xy = float(pop.weights @ pop.source_errors(full, loss, rng))
            kfold = sum(
                pop.source_errors(m, loss, rng)[pop.source_index[te]].sum()
                for m, (_, te) in zip(models, folds, strict=True)
            ) / len(draw.y)
            estimates.append(np.stack([ci["lower"].values, ci["upper"].values]))
            truths.append([err_xy, kfold])
    return {"bounds": np.array(estimates), "truth": np.array(truths)}


def overhead() -> dict[str, Any]:
    scenario = BatesLogistic()
    tmp = Path(tempfile.mkdtemp(prefix="bench_study_"))
    counter = iter(range(10**6))

    def runner():
        return run_study(scenario, None, "closed_form", OVERHEAD_REPLICATES, random_state=1,
                         n_jobs=1, store=tmp / f"s{next(counter)}.nc")  # fmt: skip

    def plain():
        return plain_loop(scenario, OVERHEAD_REPLICATES, 1)

    _, study = timed(runner)
    _, reference = timed(plain)
    ours = np.stack([study["lower"].values, study["upper"].values], axis=1)
    equal = bool(
        np.allclose(ours, reference["bounds"], equal_nan=True, rtol=1e-12)
        and np.allclose(study["truth"].values, reference["truth"], rtol=1e-12)
    )
    assert equal, "the runner and the plain loop disagree"
    runs = {"run_study": [], "plain loop": []}
    accounted = []
    for _ in range(OVERHEAD_REPEATS):
        t, study = timed(runner)
        runs["run_study"].append(t)
        accounted.append(float(study["time_total"].sum()))
        runs["plain loop"].append(timed(plain)[0])
    med = {k: statistics.median(v) for k, v in runs.items()}
    inside = [r - a for r, a in zip(runs["run_study"], accounted, strict=True)]
    return {
        "scenario": repr(scenario),
        "methods": "16 closed-form methods (one cv_intervals call), truths err_xy and kfold_test_error",
        "replicates": OVERHEAD_REPLICATES,
        "repeats": OVERHEAD_REPEATS,
        "store": "NetCDF store (parts every 2 s, then the final file)",
        "results_equal": equal,
        "runs_s": runs,
        "median_s": med,
        "ratio": med["run_study"] / med["plain loop"],
        "overhead_pct": 100 * (med["run_study"] / med["plain loop"] - 1),
        "per_replicate_overhead_ms": 1000
        * (med["run_study"] - med["plain loop"])
        / OVERHEAD_REPLICATES,
        "outside_replicates_pct": 100
        * statistics.median([i / a for i, a in zip(inside, accounted, strict=True)]),
        "mean_replicate_ms": 1000 * statistics.median(accounted) / OVERHEAD_REPLICATES,
    }


def _calibration_task(X, y) -> None:
    from sklearn.linear_model import LogisticRegression

    with ThreadpoolController().limit(limits=1):
        for _ in range(100):
            LogisticRegression(C=np.inf, solver="newton-cholesky", max_iter=1000).fit(X, y)


def calibration(n_jobs: int, X, y) -> None:
    """Eight identical CPU-bound tasks through joblib: the best 2 workers can do right now."""
    from joblib import Parallel, delayed

    Parallel(n_jobs=n_jobs)(delayed(_calibration_task)(X, y) for _ in range(8))


def speedup() -> dict[str, Any]:
    scenario = BatesLogistic()
    X, y, _ = scenario.sample(np.random.default_rng(0))
    kwargs = {
        "methods": ["naive_points", "bootstrap"],
        "n_replicates": SPEEDUP_REPLICATES,
        "random_state": 2,
        "method_options": {"bootstrap": {"n_bootstrap": N_BOOTSTRAP}},
    }

    def run(n_jobs):
        return lambda: run_study(scenario, n_jobs=n_jobs, **kwargs)

    _, one = timed(run(1))
    _, two = timed(run(2))  # also starts the worker processes
    calibration(2, X, y)
    drop = list(TIMING_VARIABLES)
    xr.testing.assert_equal(one.drop_vars(drop), two.drop_vars(drop))
    runs = {"n_jobs=1": [], "n_jobs=2": [], "calibration n_jobs=1": [], "calibration n_jobs=2": []}
    work = {"n_jobs=1": [], "n_jobs=2": []}  # sum over replicates of their own wall time
    loads = []
    for _ in range(SPEEDUP_REPEATS):
        loads.append(os.getloadavg()[0])
        runs["calibration n_jobs=1"].append(timed(lambda: calibration(1, X, y))[0])
        runs["calibration n_jobs=2"].append(timed(lambda: calibration(2, X, y))[0])
        for n_jobs in (1, 2):
            t, study = timed(run(n_jobs))
            runs[f"n_jobs={n_jobs}"].append(t)
            work[f"n_jobs={n_jobs}"].append(float(study["time_total"].sum()))
    med = {k: statistics.median(v) for k, v in runs.items()}
    # share of the time the two workers spent inside replicates (1: never idle)
    occupancy = statistics.median(
        w / (2 * t) for w, t in zip(work["n_jobs=2"], runs["n_jobs=2"], strict=True)
    )
    slowdown = statistics.median(work["n_jobs=2"]) / statistics.median(work["n_jobs=1"])
    capacity = med["calibration n_jobs=1"] / med["calibration n_jobs=2"]
    fit_share = float(
        (one["time_cv"] + one["time_truth"] + one["runtime"].sum("method_name")).sum()
    )
    return {
        "scenario": repr(scenario),
        "methods": f"naive_points + bootstrap (n_bootstrap={N_BOOTSTRAP}): {10 + 10 * N_BOOTSTRAP + 1} fits per replicate",
        "replicates": SPEEDUP_REPLICATES,
        "repeats": SPEEDUP_REPEATS,
        "results_equal": True,
        "runs_s": runs,
        "median_s": med,
        "speedup": med["n_jobs=1"] / med["n_jobs=2"],
        "capacity": capacity,
        "efficiency": med["n_jobs=1"] / med["n_jobs=2"] / capacity,
        "load_during": loads,
        "work_s": work,
        "occupancy": occupancy,
        "per_replicate_slowdown": slowdown,
        "speedup_without_contention": 2 * occupancy,
        "fit_work_share_pct": 100 * fit_share / float(one["time_total"].sum()),
    }


def main() -> None:
    parts = sys.argv[1:] or ["overhead", "speedup"]
    previous = {}
    if len(parts) < 2 and (RESULTS / "bench_study.json").exists():
        previous = json.loads((RESULTS / "bench_study.json").read_text(encoding="utf-8"))
    started = time.perf_counter()
    load_before = load_average()
    out = {
        "date": dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat(),
        "command": "python benchmarks/bench_study.py",
        "machine": machine_info(["numpy", "scikit-learn", "xarray", "bayescv"]),
        "load_before": load_before,
        "overhead": overhead() if "overhead" in parts else previous["overhead"],
        "speedup": speedup() if "speedup" in parts else previous["speedup"],
        "load_after": load_average(),
    }
    out["run_time_s"] = time.perf_counter() - started
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "bench_study.json").write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    (RESULTS / "bench_study.md").write_text(markdown(out), encoding="utf-8")
    print(markdown(out))


def markdown(out: dict[str, Any]) -> str:
    o, s, m = out["overhead"], out["speedup"], out["machine"]
    return f"""# bench_study

Run on {out["date"]} with `{out["command"]}` ({out["run_time_s"]:.0f} s).

Machine: {m["cores"]} cores ({m["usable_cores"]} usable); Python {m["python"]}, numpy {m["numpy"]}, scikit-learn {m["scikit-learn"]}, xarray {m["xarray"]}, bayescv {m["bayescv"]} (git {m["git_commit"]}). Load average (1 min) before / after: {out["load_before"]:.2f} / {out["load_after"]:.2f}; other processes on the machine skew the timings.

## 1. Runner overhead

{o["scenario"]}, {o["methods"]}; {o["replicates"]} replicates, n_jobs=1, {o["store"]}; one warm-up, then {o["repeats"]} interleaved runs each. Same intervals and truths as the plain loop: {o["results_equal"]}.

| contender | median | runs |
|---|---|---|
| `run_study` | {o["median_s"]["run_study"]:.2f} s | {", ".join(f"{v:.2f}" for v in o["runs_s"]["run_study"])} |
| plain loop | {o["median_s"]["plain loop"]:.2f} s | {", ".join(f"{v:.2f}" for v in o["runs_s"]["plain loop"])} |

Overhead: **{o["overhead_pct"]:.1f}%** (target < 10%), {o["per_replicate_overhead_ms"]:.2f} ms per replicate of {o["mean_replicate_ms"]:.1f} ms. Time outside the replicates' own measured work (dispatch, Dataset assembly, store): {o["outside_replicates_pct"]:.1f}%.

## 2. Speed-up from 1 to 2 workers

{s["scenario"]}, {s["methods"]}; {s["replicates"]} replicates; {s["fit_work_share_pct"]:.0f}% of the replicates' time is CV, truth and method work (model fits); one warm-up each, then {s["repeats"]} interleaved runs each. Results identical: {s["results_equal"]}.

| contender | median | runs |
|---|---|---|
| n_jobs=1 | {s["median_s"]["n_jobs=1"]:.2f} s | {", ".join(f"{v:.2f}" for v in s["runs_s"]["n_jobs=1"])} |
| n_jobs=2 | {s["median_s"]["n_jobs=2"]:.2f} s | {", ".join(f"{v:.2f}" for v in s["runs_s"]["n_jobs=2"])} |
| calibration, n_jobs=1 | {s["median_s"]["calibration n_jobs=1"]:.2f} s | {", ".join(f"{v:.2f}" for v in s["runs_s"]["calibration n_jobs=1"])} |
| calibration, n_jobs=2 | {s["median_s"]["calibration n_jobs=2"]:.2f} s | {", ".join(f"{v:.2f}" for v in s["runs_s"]["calibration n_jobs=2"])} |

Speed-up: **{s["speedup"]:.2f}** (target ≥ 1.7). The calibration (eight identical batches of 100 logistic fits through joblib, interleaved with the studies; load average {", ".join(f"{v:.1f}" for v in s["load_during"])}) shows what two workers could gain on this machine at the time: {s["capacity"]:.2f}; the study reached {100 * s["efficiency"]:.0f}% of it. With two workers each replicate took {s["per_replicate_slowdown"]:.2f} times as long as with one (the two workers competing for the cores with other processes), while the workers were busy with replicates {100 * s["occupancy"]:.0f}% of the time: without that contention the speed-up would be about 2 × {s["occupancy"]:.2f} = **{s["speedup_without_contention"]:.2f}** (an estimate, not a measurement).
"""


if __name__ == "__main__":
    sys.exit(main())
