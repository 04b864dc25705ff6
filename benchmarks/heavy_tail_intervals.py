"""Coverage of intervals for heavy-tailed squared errors, and the heavy-tail flag (issue 15).

Runs :func:`bayescv.compare.run_study` on ``MultiSourceLinear`` with Student-t noise of 3 and
5 degrees of freedom (squared errors with Pareto shape 2/3 and 2/5: infinite variance at 3)
and with Gaussian noise: K = 10 sources fixed, of unequal sizes 20, 30, ..., 110 points,
leave one source out, ordinary least squares, 95 % intervals, target ``expected_cv`` (the mean
of μ̂ over the study's replicates). One bootstrap-replicated table per data set (B = 100) is
shared by ``bootstrap`` (normal bounds) and ``bayes_hier``; ``theta_B_weighted_log`` is
θ_B (weighted for the unequal sizes) with the transformed-scale bounds
μ̂ · exp(± z sqrt(θ̂)/μ̂) (``cv_intervals(..., kind="log")``, registered here).
Reported: coverage with its Monte Carlo error and misses per side, mean width, and the share
of data sets whose rows carry the ``heavy_tail`` flag (pooled Pareto k̂ > 0.5,
:mod:`bayescv.tails`).

Run by hand::

    python benchmarks/heavy_tail_intervals.py --replicates 200

Results: ``benchmarks/results/heavy_tail_intervals.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
import xarray as xr
from sklearn.linear_model import LinearRegression

from bayescv.classical import cv_intervals
from bayescv.compare import Method, MultiSourceLinear, register_method, run_study, summarize
from bayescv.tails import add_tail_flags, tail_shape

RESULTS = Path(__file__).resolve().parent / "results"
SIZES = list(range(20, 120, 10))
B = 50


def _log(context, names):
    out = cv_intervals(context.losses, ["theta_B_weighted"], level=context.level, kind="log")
    out = out.assign_coords(method_name=["theta_B_weighted_log"])
    return add_tail_flags(out, tail_shape(context.losses)["khat_pooled"].values)


def register() -> None:
    """Register ``theta_B_weighted_log``: θ_B (weighted) with log-scale bounds."""
    register_method(
        Method("theta_B_weighted_log", _log, lambda s: "expected_cv" if s == "source"
               else "err", "losses", description="theta_B_weighted, kind='log'"),
        replace=True,
    )  # fmt: skip


def cell(args, noise_df: float | None) -> dict:
    sc = MultiSourceLinear(10, SIZES, noise_df=noise_df, n_test=1000, source_seed=0)
    path = Path(args.store) / f"df{noise_df}.nc"
    methods = [
        "naive_points", "theta_A_weighted", "theta_B_weighted", "theta_B_weighted_log",
        "bootstrap", "bayes_hier",
    ]  # fmt: skip
    start = time.perf_counter()
    if path.exists():
        st = xr.load_dataset(path)
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            st = run_study(
                sc, LinearRegression(), methods, args.replicates, random_state=args.seed,
                method_options={m: {"n_bootstrap": B} for m in ("bootstrap", "bayes_hier")},
                n_jobs=args.n_jobs,
            )  # fmt: skip
        st.to_netcdf(path)
    seconds = time.perf_counter() - start
    summary = summarize(st, targets=["expected_cv"])
    truth = json.loads(summary.attrs["truths"])["expected_cv"]
    rows = {}
    for name in summary["method_name"].values:
        if str(summary["method_target"].sel(method_name=name).item()) != "expected_cv":
            continue
        s = summary.sel(method_name=name, target="expected_cv")
        flags = st["flag"].sel(method_name=name).values.astype(str)
        width = (st["upper"] - st["lower"]).sel(method_name=name)
        rows[str(name)] = {
            "coverage": float(s["coverage"]), "coverage_se": float(s["coverage_se"]),
            "miss_low": float(s["miss_low"]), "miss_high": float(s["miss_high"]),
            "mean_width": float(width.mean()),
            "flagged_heavy_tail": float(np.char.find(flags, "heavy_tail").__ge__(0).mean()),
            "below_zero": int((st["lower"].sel(method_name=name) < 0).sum()),
        }  # fmt: skip
    return {
        "noise_df": noise_df, "replicates": int(st.sizes["replicate"]), "truth": truth,
        "seconds": seconds, "rows": rows,
    }  # fmt: skip


def report(results: list[dict], command: str) -> None:
    lines = ["# heavy_tail_intervals", "", f"Command: `{command}`", "",
             f"K = 10 sources of sizes {SIZES}, sources fixed, OLS, squared error, B = {B}.", ""]  # fmt: skip
    for r in results:
        noise = "Gaussian" if r["noise_df"] is None else f"Student-t, {r['noise_df']:g} d.f."
        lines += [
            f"## {noise} noise", "",
            f"{r['replicates']} data sets; truth expected_cv {r['truth']:.4f}; {r['seconds']:.0f} s.",
            "",
            "| interval | coverage % | miss low % | miss high % | mean width | flagged heavy_tail % | lower < 0 |",
            "|---|---|---|---|---|---|---|",
        ]  # fmt: skip
        for name, v in r["rows"].items():
            lines.append(
                f"| {name} | {100 * v['coverage']:.1f} ± {100 * v['coverage_se']:.1f} | "
                f"{100 * v['miss_low']:.1f} | {100 * v['miss_high']:.1f} | {v['mean_width']:.3f} | "
                f"{100 * v['flagged_heavy_tail']:.1f} | {v['below_zero']} |"
            )
        lines.append("")
    out = RESULTS / "heavy_tail_intervals"
    out.with_suffix(".md").write_text("\n".join(lines))
    out.with_suffix(".json").write_text(json.dumps(results, indent=2))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=200)
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--store", default="/tmp/heavy_tail_intervals")
    args = parser.parse_args()
    Path(args.store).mkdir(parents=True, exist_ok=True)
    register()
    results = []
    for noise_df in (3.0, 5.0, None):
        results.append(cell(args, noise_df))
        print(json.dumps({k: v for k, v in results[-1].items() if k != "rows"}), flush=True)
    command = (
        f"python benchmarks/heavy_tail_intervals.py --replicates {args.replicates} "
        f"--n-jobs {args.n_jobs} --seed {args.seed} --store {args.store}"
    )
    report(results, command)


if __name__ == "__main__":
    main()
