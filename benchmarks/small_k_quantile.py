"""Normal or t quantiles for the block-level intervals at small K? Measured before changing.

Until these results, ``cv_intervals`` used the normal quantile for every closed-form method
under the default ``kind="auto"`` (``"normal"`` for losses that are not all 0 or 1), except
``nadeau_bengio``, a t procedure; since them, ``"auto"`` is ``"t"`` for such losses. The block-level estimators (``naive_folds``, θ_1…θ_5, θ_A, θ_B, …) rest on K
block means, so with K = 3 or 5 a t quantile on K − 1 d.f. (``kind="t"``) may be the honest
one. This script runs the same data sets through both kinds (two studies of one
``random_state``) and reports each method's coverage of its own target, at K = 3, 5 and 10, for the methods
:func:`bayescv.classical.default_methods` offers on the scheme:

* ``random``: :class:`bayescv.compare.GaussianLinear` (n = 100 points, K-fold CV, OLS);
* ``source``: :class:`bayescv.compare.MultiSourceLinear` (K sources of 40 points, sources
  fixed, leave one source out, OLS).

Squared error, nominal 95 %, R data sets per cell. A last table reruns the closed-form rows
of ``heavy_tail_intervals.py`` (same scenario, seed and 200 data sets, so its normal column
must reproduce that file) with both quantiles, for the docs' table that quotes them; and a
0-1 section asks whether the score interval, which keeps the normal quantile, falls short at
small K too. Run from the repository root::

    python benchmarks/small_k_quantile.py --replicates 1000

Writes ``benchmarks/results/small_k_quantile.{md,json}``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import time
from pathlib import Path

import numpy as np
from sklearn.linear_model import LinearRegression

from bayescv.classical import default_methods
from bayescv.compare import (
    BatesLogistic,
    GaussianLinear,
    MultiSourceErrorRate,
    MultiSourceLinear,
    run_study,
    summarize,
)
from bayescv.intervals import score_bounds

RESULTS = Path(__file__).resolve().parent / "results"
KS = (3, 5, 10)
KINDS = ("normal", "t")


def scenario(scheme: str, k: int):
    """The cell's scenario (see the module docstring)."""
    if scheme == "random":
        return GaussianLinear(n=100, n_splits=k)
    return MultiSourceLinear(n_sources=k, points_per_source=40, design="sources_fixed")


def cell(scheme: str, k: int, replicates: int, seed: int) -> list[dict]:
    """Coverage of each method's target under both kinds, on the same data sets."""
    coverage = {}
    for kind in KINDS:
        study = run_study(
            scenario(scheme, k),
            LinearRegression(),
            methods="closed_form",
            n_replicates=replicates,
            random_state=seed,
            method_options={"closed_form": {"kind": kind}},
        )
        summary = summarize(study)
        coverage[kind] = summary
    rows = []
    normal = coverage["normal"]
    # The scheme's own methods (a source table flags the random-K-fold-only ones).
    for name in default_methods(scheme):
        target = str(normal["method_target"].sel(method_name=name).values)
        row = {"scheme": scheme, "K": k, "method": name, "target": target}
        for kind in KINDS:
            picked = coverage[kind].sel(method_name=name, target=target)
            row[kind] = float(picked["coverage"])
            row[f"{kind}_se"] = float(picked["coverage_se"])
            row[f"{kind}_miss_low"] = float(picked["miss_low"])
            row[f"{kind}_miss_high"] = float(picked["miss_high"])
        rows.append(row)
    return rows


#: Methods reported for the 0-1 section (random K-fold CV of a logistic regression).
BINARY_METHODS = ("naive_points", "naive_folds", "theta_2", "theta_4", "theta_5", "nadeau_bengio")


def score_t_coverage(study, summary, name: str, target: str, df: float) -> float:
    """Coverage of the score interval with a t quantile on `df` d.f., from the stored θ̂.

    Post hoc (the package offers no such kind): the score bounds of
    :func:`bayescv.intervals.score_bounds` on each replicate's stored estimate and θ̂.
    """
    picked = study.sel(method_name=name)
    n_points = study["block_n"].sum("block").values
    _, lower, upper, _ = score_bounds(
        picked["estimate"].values, picked["theta_hat"].values, n_points, level=0.95, df=df
    )
    truth = json.loads(summary.attrs["truths"])[target]
    defined = np.isfinite(lower) & np.isfinite(upper)
    return float(((lower <= truth) & (truth <= upper))[defined].mean())


def binary_rows(replicates: int) -> list[dict]:
    """Score intervals (the default for 0-1 losses, normal quantile) at K = 3, 5, 10.

    ``BatesLogistic(n=200, n_splits=K)``: whether the score interval shares the normal
    quantile's shortfall at small K (it has no t variant; ``nadeau_bengio`` uses t), and what
    a t quantile on K − 1 d.f. in it would give (post hoc, :func:`score_t_coverage`); then the
    same two at K = 10 sources in the 18.5 % cell of ``loss_shapes_binary.py`` (M = 50,
    sources fixed, ``expected_cv``), where the score intervals were calibrated.
    """
    rows = []
    cells = [(k, BatesLogistic(n=200, n_splits=k), BINARY_METHODS) for k in KS]
    cells.append(
        (
            "10 sources",
            MultiSourceErrorRate(0.18, 10, 50, design="sources_fixed", source_seed=0),
            ("naive_points", "naive_folds", "theta_A", "theta_B"),
        )
    )
    for k, scenario, methods in cells:
        study = run_study(
            scenario,
            methods="closed_form",
            n_replicates=replicates,
            random_state=10 if k == "10 sources" else k,
        )
        summary = summarize(study)
        n_blocks = study.sizes["block"]
        for name in methods:
            target = str(summary["method_target"].sel(method_name=name).values)
            picked = summary.sel(method_name=name, target=target)
            df = float(n_blocks - 1)
            if name == "naive_points":
                df = float(study["block_n"].sum("block").values[0] - 1)
            if name == "nadeau_bengio":
                df = np.nan  # already a t procedure: no post-hoc variant
            rows.append(
                {"K": k, "method": name, "target": target}
                | {key: float(picked[key]) for key in ("coverage", "miss_low", "miss_high")}
                | {
                    "score_t": np.nan
                    if np.isnan(df)
                    else score_t_coverage(study, summary, name, target, df)
                }
            )
    return rows


#: The scenario of ``heavy_tail_intervals.py``: K = 10 fixed sources of 20, 30, …, 110 points.
HEAVY_SIZES = list(range(20, 120, 10))
HEAVY_METHODS = ("naive_points", "theta_A_weighted", "theta_B_weighted")


def heavy_tail_rows() -> list[dict]:
    """Coverage of ``expected_cv`` in the heavy-tail study's setting, normal and t."""
    rows = []
    for noise_df in (3.0, 5.0, None):
        summaries, widths = {}, {}
        for kind in KINDS:
            study = run_study(
                MultiSourceLinear(10, HEAVY_SIZES, noise_df=noise_df, n_test=1000, source_seed=0),
                LinearRegression(),
                methods=list(HEAVY_METHODS),
                n_replicates=200,
                random_state=1,
                method_options={"closed_form": {"kind": kind}},
            )
            summaries[kind] = summarize(study, targets=["expected_cv"])
            widths[kind] = (study["upper"] - study["lower"]).mean("replicate")
        for name in HEAVY_METHODS:
            row = {"noise_df": noise_df, "method": name}
            for kind in KINDS:
                picked = summaries[kind].sel(method_name=name, target="expected_cv")
                for key in ("coverage", "coverage_se", "miss_low", "miss_high"):
                    row[f"{kind}_{key}"] = float(picked[key])
                row[f"{kind}_width"] = float(widths[kind].sel(method_name=name))
            rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=20261127)
    args = parser.parse_args()
    started = time.perf_counter()
    rows = [
        row
        for scheme in ("random", "source")
        for k in KS
        for row in cell(scheme, k, args.replicates, args.seed + k)
    ]
    heavy = heavy_tail_rows()
    binary = binary_rows(max(100, args.replicates // 2))
    seconds = time.perf_counter() - started
    mc = 100 * np.sqrt(0.95 * 0.05 / args.replicates)
    lines = [
        "# small_k_quantile",
        "",
        f"Run on {dt.datetime.now(dt.UTC):%Y-%m-%d} with `python benchmarks/small_k_quantile.py "
        f"--replicates {args.replicates}` ({seconds:.0f} s). Coverage (%) of each method's own "
        'target by its nominal 95 % interval with normal quantiles (`kind="normal"`) and with t '
        'quantiles (`kind="t"`: K − 1 d.f. for the block-level estimators, N − 1 for '
        "`naive_points` and `bayle_all_pairs`, N − K for `bayle_within`), the same data sets "
        f"for both; Monte Carlo error about {mc:.1f} points at 95 %. Misses low / high in "
        "brackets. `random`: `GaussianLinear(n=100, n_splits=K)`; `source`: "
        "`MultiSourceLinear(n_sources=K, points_per_source=40)`, sources fixed; OLS, squared "
        "error. θ_1…θ_5 need equal block sizes: NaN at K = 3 (100 points in folds of 34, 33 "
        'and 33). These results made t the default of `kind="auto"` for losses that are not '
        "0-1.",
        "",
        "| scheme | K | method | target | normal | t |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:

        def pct(kind: str, r: dict = r) -> str:
            return (
                f"{100 * r[kind]:.1f} ({100 * r[kind + '_miss_low']:.1f} / "
                f"{100 * r[kind + '_miss_high']:.1f})"
            )

        lines.append(
            f"| {r['scheme']} | {r['K']} | `{r['method']}` | {r['target']} | {pct('normal')} | "
            f"{pct('t')} |"
        )
    lines += [
        "",
        "## The heavy-tail study's closed-form rows",
        "",
        "`heavy_tail_intervals.py`'s setting (`MultiSourceLinear(10, [20, 30, …, 110], "
        "noise_df=…, n_test=1000, source_seed=0)`, `random_state=1`, 200 data sets): coverage "
        "% of `expected_cv` ± Monte Carlo error (misses low / high), mean width.",
        "",
        "| noise | method | normal | t (9 d.f. for θ, N − 1 for naive_points) |",
        "|---|---|---|---|",
    ]
    for r in heavy:
        noise = "Gaussian" if r["noise_df"] is None else f"Student-t, {r['noise_df']:g} d.f."

        def cov(kind: str, r: dict = r) -> str:
            return (
                f"{100 * r[kind + '_coverage']:.1f} ± {100 * r[kind + '_coverage_se']:.1f} "
                f"({100 * r[kind + '_miss_low']:.1f} / {100 * r[kind + '_miss_high']:.1f}), "
                f"{r[kind + '_width']:.2f}"
            )

        lines.append(f"| {noise} | `{r['method']}` | {cov('normal')} | {cov('t')} |")
    lines += [
        "",
        "## 0-1 losses: the score interval (normal quantile)",
        "",
        f"`BatesLogistic(n=200, n_splits=K)`, {max(100, args.replicates // 2)} data sets per K, "
        '`kind="auto"` (the score interval on each method\'s effective sample size; '
        "`nadeau_bengio` with its t quantile); coverage % of `err` (misses low / high). "
        "θ_2…θ_5 need equal block sizes: NaN at K = 3.",
        "",
        "The last column, post hoc and not a kind of the package: the same score bounds with "
        "a t quantile (K − 1 d.f.; N − 1 for `naive_points`) from the stored θ̂. The last "
        "rows: `MultiSourceErrorRate(0.18, 10, 50)`, sources fixed (the 18.5 %, M = 50 cell "
        "of `loss_shapes_binary.py`), target `expected_cv`.",
        "",
        "| K | method | target | score interval | score interval, t quantile (post hoc) |",
        "|---|---|---|---|---|",
    ]
    for r in binary:
        score_t = "—" if np.isnan(r["score_t"]) else f"{100 * r['score_t']:.1f}"
        lines.append(
            f"| {r['K']} | `{r['method']}` | {r['target']} | {100 * r['coverage']:.1f} "
            f"({100 * r['miss_low']:.1f} / {100 * r['miss_high']:.1f}) | {score_t} |"
        )
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "small_k_quantile.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (RESULTS / "small_k_quantile.json").write_text(
        json.dumps(
            {
                "replicates": args.replicates,
                "seconds": seconds,
                "rows": rows,
                "heavy": heavy,
                "binary": binary,
            },
            indent=1,
        ),
        encoding="utf-8",
    )
    print("\n".join(lines))


if __name__ == "__main__":
    main()
