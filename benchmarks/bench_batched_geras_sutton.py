"""The Geras-Sutton reproduction's 14,000-replicate CVR studies, timed with batched fits.

Issue 19 asks for these runs timed before and after the batched engine. They are the CVR
cells of ``benchmarks/reproduce_geras_sutton.py`` for ``multi-source-logistic``
(:class:`~bayescv.compare.MultiSourceLogistic`, 10 sources fixed, 10 random folds,
θ_1 … θ_5, its default ``LogisticRegression(C=1)``), one per M in {10, 20, 50, 100, 200}.
Here every cell runs through :func:`~bayescv.compare.run_study` with ``batched=True``
("after"), and one cell (``--control-m``) also with ``batched=False``, on the same machine
in the same run, as the "before" control. The "before" of every cell is also read from the
stored reproduction (``results/reproduce_geras_sutton.json``, per-fit, another day, cores
shared with other work). No store is kept: the studies are computed, timed and dropped.

Run by hand::

    python benchmarks/bench_batched_geras_sutton.py --replicates 14000 --n-jobs 2

Results: ``benchmarks/results/bench_batched_geras_sutton.{json,md}``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import usable_cores  # house helpers

from bayescv.compare import MultiSourceLogistic, run_study

RESULTS = Path(__file__).resolve().parent / "results"
CVR = ["theta_1", "theta_2", "theta_3", "theta_4", "theta_5"]


def timed(m: int, args: argparse.Namespace, batched: bool) -> tuple[float, float]:
    """Wall time of one CVR cell and the mean θ_2 (a check that both engines agree)."""
    scenario = MultiSourceLogistic(
        10, m, scheme="random", n_splits=10, design="sources_fixed", source_seed=0
    )
    start = time.perf_counter()
    study = run_study(
        scenario, None, CVR, args.replicates, random_state=args.random_state, truths=[],
        n_jobs=args.n_jobs, batched=batched,
    )  # fmt: skip
    elapsed = time.perf_counter() - start
    return elapsed, float(study["theta_hat"].sel(method_name="theta_2").mean())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=14000)
    parser.add_argument("--m", type=int, nargs="+", default=[10, 20, 50, 100, 200])
    parser.add_argument("--control-m", type=int, default=50)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--random-state", type=int, default=0)
    args = parser.parse_args(argv)
    command = "python benchmarks/bench_batched_geras_sutton.py " + " ".join(
        argv if argv is not None else sys.argv[1:]
    )
    stored = json.loads((RESULTS / "reproduce_geras_sutton.json").read_text(encoding="utf-8"))
    record = stored["results"]["multi-source-logistic"]["random"]
    rows = []
    for m in args.m:
        after, theta_after = timed(m, args, True)
        row = {"m": m, "batched_s": after, "theta_2_mean_batched": theta_after}
        old = record.get(str(m))
        if old is not None and old["replicates"] == args.replicates:
            row["stored_per_fit_s"] = old["compute_s"]
        if m == args.control_m:
            before, theta_before = timed(m, args, False)
            row["per_fit_s"] = before
            row["theta_2_mean_per_fit"] = theta_before
        rows.append(row)
        print(row, flush=True)
    out = {
        "date": dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat(),
        "command": command,
        "cores": usable_cores(),
        "replicates": args.replicates,
        "stored_run": stored["command"],
        "rows": rows,
    }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "bench_batched_geras_sutton.json").write_text(
        json.dumps(out, indent=2) + "\n", encoding="utf-8"
    )
    total_after = sum(r["batched_s"] for r in rows)
    stored_total = sum(r.get("stored_per_fit_s", np.nan) for r in rows)
    lines = [
        "# Geras-Sutton CVR studies (multi-source-logistic) with batched fits",
        "",
        f"Run on {out['date']} with `{command}` on {out['cores']} cores. Each cell: "
        f"{args.replicates} replicates, θ_1 … θ_5, 10 random folds, "
        "`LogisticRegression(C=1, max_iter=5000)`.",
        "",
        "| M | batched (s) | per-fit, this run (s) | per-fit, stored reproduction (s) |",
        "|---|---|---|---|",
    ]
    for r in rows:
        here = f"{r['per_fit_s']:.0f}" if "per_fit_s" in r else ""
        old = f"{r['stored_per_fit_s']:.0f}" if "stored_per_fit_s" in r else ""
        lines.append(f"| {r['m']} | {r['batched_s']:.0f} | {here} | {old} |")
    lines += [
        "",
        f"All cells: {total_after / 60:.1f} min batched; the stored per-fit run took "
        f"{stored_total / 60:.1f} min (`{stored['command']}`, cores shared with other work).",
    ]
    for r in rows:
        if "per_fit_s" in r:
            lines.append(
                f"Control at M = {r['m']}: per-fit {r['per_fit_s']:.0f} s against batched "
                f"{r['batched_s']:.0f} s ({r['per_fit_s'] / r['batched_s']:.1f}x); mean θ_2 "
                f"{r['theta_2_mean_per_fit']:.6g} per-fit, {r['theta_2_mean_batched']:.6g} "
                "batched (zero-one losses: equal unless a prediction flips)."
            )
    (RESULTS / "bench_batched_geras_sutton.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
