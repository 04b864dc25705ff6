"""``bayescv variance``: closed-form variance estimates and intervals from a loss CSV."""

from __future__ import annotations

import argparse
import json
import math
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayescv.classical import RANDOM_KFOLD_ONLY
from bayescv.cli._checks import (
    add_loss_range,
    add_replicate_kind,
    comma_list,
    target_legend,
    unknown_methods,
)
from bayescv.tails import HeavyTailWarning

__all__ = ["register"]

# The estimators reported under their own key, in the order printed. The JSON has every
# one (null where it needs equal block sizes and the blocks differ, and θ_1…θ_5 on a source
# table); the table shows those that apply: the weighted θ_A, θ_B only for unequal sizes
# (for equal sizes they are θ_A, θ_B), θ_1…θ_5 only for random K-fold CV.
_JSON_THETAS = (
    "theta_1", "theta_2", "theta_3", "theta_4", "theta_5",
    "theta_A", "theta_B", "theta_A_weighted", "theta_B_weighted", "theta_omega", "theta_gamma",
)  # fmt: skip
_WEIGHTED = ("theta_A_weighted", "theta_B_weighted")
#: The θ's that assume random K-fold CV (bayescv.classical.RANDOM_KFOLD_ONLY): left out of a
#: source table's estimates, as cv_intervals leaves them out of its intervals (null in JSON).
_RANDOM_ONLY = tuple(name for name in _JSON_THETAS if name in RANDOM_KFOLD_ONLY)
#: How to ask for the θ_A, θ_B that allow unequal block sizes.
_WEIGHTED_OPTION = "--methods theta_A_weighted,theta_B_weighted"
#: The quantities that read blocks as folds: left out on a table of point pairs.
_BLOCK_LEVEL = (*_JSON_THETAS, "se_folds", "sigma2_within")
#: Said instead of the block-level quantities on a table whose blocks are pairs of points.
_PAIRS_NOTE = (
    "the blocks are consecutive pairs of points (pointwise elpd of PSIS-LOO or WAIC), not "
    "folds: the block-level quantities (theta_1 ... theta_gamma, se_folds, sigma2_within) are "
    "left out and only naive_points applies"
)
#: Interval kinds of ``--kind``; ``log`` only for one table (differences can be negative).
_KINDS = ("auto", "score", "normal", "t", "log")


def register(sub: Any) -> None:
    """Add the ``variance`` subcommand to the ``bayescv`` parser.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The subparsers of the ``bayescv`` command.
    """
    parser = sub.add_parser(
        "variance",
        help="closed-form variance estimates and intervals of a CV estimate",
        description=(
            "Read a long-format CSV of CV losses (one row per test point, with a block "
            "label column and a loss column) and print every closed-form estimate of the "
            "variance of the CV estimate, and the intervals built on them. With --paired "
            "A.csv B.csv, compare two learners evaluated on the same splits. A file of "
            "several CV runs (a 'replicate' column) is read as bayescv.cv_intervals reads it: "
            "repeated CV averages the runs, independent data sets get one report each."
        ),
    )
    parser.add_argument("files", nargs="+", type=Path, metavar="LOSSES.csv")
    parser.add_argument("--block-col", default="block", help="block label column (block)")
    parser.add_argument("--loss-col", default="loss", help="loss column (loss)")
    parser.add_argument("--source-col", help="optional source label column")
    parser.add_argument(
        "--scheme", choices=("random", "source"), help="CV scheme (default: inferred)"
    )
    add_loss_range(parser, also=", and --kind log needs LOW >= 0")
    add_replicate_kind(
        parser, also=" (repeat: runs of repeated CV; independent: one data set each)"
    )
    parser.add_argument("--level", type=float, default=0.95, help="coverage (0.95)")
    parser.add_argument(
        "--kind",
        choices=_KINDS,
        default="auto",
        help=(
            "score: Wilson-type, for 0-1 losses; log: log-scale, for losses >= 0 with heavy "
            "tails (not with --paired); default auto (score for 0-1 losses, else t)"
        ),
    )
    parser.add_argument("--methods", help="comma-separated interval methods, or 'all'")
    parser.add_argument("--format", choices=("table", "json"), default="table")
    parser.add_argument(
        "--paired", action="store_true", help="compare two learners: A.csv B.csv (A − B)"
    )
    parser.add_argument(
        "--alternative",
        choices=("two-sided", "less", "greater"),
        default=None,
        help="paired test (default two-sided): 'less' means A has the lower error",
    )
    parser.set_defaults(func=_run)


def _fail(message: str) -> int:
    print(f"bayescv variance: error: {message}", file=sys.stderr)
    return 2


def _run(args: argparse.Namespace) -> int:
    from bayescv.classical import block_stats, cv_intervals, variance_estimates
    from bayescv.classical.paired import paired_comparison
    from bayescv.classical.quadratic import gs_moments
    from bayescv.losses import effective_range

    expected = 2 if args.paired else 1
    if len(args.files) != expected:
        way_out = (
            "; to compare more than two learners use `bayescv compare`"
            if args.paired
            else "; to compare two learners give --paired A.csv B.csv (or `bayescv compare`)"
        )
        return _fail(
            f"expected {expected} CSV file(s){' with --paired' if args.paired else ''}, "
            f"got {len(args.files)}" + (way_out if len(args.files) > expected else "")
        )
    if args.alternative is not None and not args.paired:
        return _fail(
            f"--alternative {args.alternative} is for the paired test: give --paired A.csv "
            "B.csv, or leave --alternative out (one table's intervals are two-sided)"
        )
    if args.paired and args.kind == "log":
        return _fail(
            "--kind log is not available with --paired: the differences A - B can be "
            "negative and have no log scale; use --kind normal or t"
        )
    methods = None if args.methods is None else comma_list(args.methods)
    methods = "all" if methods == ["all"] else methods
    problem = unknown_methods(methods, paired=args.paired)
    if problem:
        return _fail(problem)
    try:
        tables = [_read(path, args) for path in args.files]
        if args.paired:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", HeavyTailWarning)
                result = paired_comparison(
                    *tables, methods, level=args.level, kind=args.kind,
                    alternative=args.alternative or "two-sided",
                )  # fmt: skip
            said = [*_unequal_note(result, block_stats(tables[0])), *_tail_lines(caught)]
        else:
            table = tables[0]
            if args.kind == "log" and effective_range(table)[0] < 0:
                declared = table.attrs.get("loss_range")
                said = (
                    "declares no such range"
                    if declared is None
                    else f"has the loss range [{declared[0]:g}, {declared[1]:g}]"
                )
                return _fail(
                    f"--kind log is for losses that are at least 0, and {args.files[0]} "
                    f"{said}; give --loss-range 0,inf if its losses are never negative"
                )
            stats = block_stats(table)
            estimates = variance_estimates(table)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", HeavyTailWarning)
                intervals = cv_intervals(table, methods, level=args.level, kind=args.kind)
            moments = gs_moments(stats)
    except (ValueError, TypeError, OSError) as error:
        return _fail(str(error).splitlines()[0])
    # Printed outside the try: a reader that goes away (`| head`) raises BrokenPipeError, an
    # OSError that main() handles, not a failure to read the tables.
    if args.paired:
        show = _paired_json if args.format == "json" else _paired_table
        out = (
            {
                str(label): show(result.isel(replicate=i, drop=True), said)
                for i, label in enumerate(result["replicate"].values)
            }
            if "replicate" in result.dims  # independent data sets: one comparison each
            else show(result, said)
        )
        print(_replicated(out, tables[0], args.format))
        return 0
    tails = _tail_lines(caught)
    if "replicate" not in table.dims:
        out = _report(table, estimates, moments, intervals, stats, tails, args.format)
    elif table.attrs.get("replicate_kind") == "repeat":
        # As cv_intervals reads repeated CV: the runs' mu_hat and theta averaged.
        runs = _run_means(estimates, moments)
        out = _report(table, *runs, intervals, stats, tails, args.format)
    else:  # independent data sets: one report each, from the one cv_intervals call
        out = {
            str(label): _report(
                table.isel(replicate=i, drop=True),
                *(x.isel(replicate=i, drop=True) for x in (estimates, moments, intervals)),
                stats, tails, args.format,
            )
            for i, label in enumerate(table["replicate"].values)
        }  # fmt: skip
    print(_replicated(out, table, args.format))
    return 0


def _report(table, estimates, moments, intervals, stats, tails, fmt) -> dict | str:
    """Summarise one table (or the mean over repeated runs), as a JSON object or text."""
    from bayescv.classical._block_stats import unequal_sizes_note
    from bayescv.classical._kinds import few_blocks_note
    from bayescv.losses import has_pair_blocks

    summary = _summary(table, estimates, moments, intervals)
    notes = estimates["note"].to_series()
    unequal = [str(name) for name, note in notes.items() if note]
    if summary["scheme"] == "source":  # θ_1…θ_5 do not apply: left out, not "unequal"
        summary.update(dict.fromkeys(_RANDOM_ONLY))
        unequal = [name for name in unequal if name not in _RANDOM_ONLY]
        needs = tuple(f"{name} needs equal block sizes" for name in _RANDOM_ONLY)
        summary["warnings"] = [w for w in summary["warnings"] if not w.startswith(needs)]
    # One line naming them all, the sizes and the way out (the JSON also keeps one per θ).
    note = unequal_sizes_note(unequal, stats, _WEIGHTED_OPTION)
    if has_pair_blocks(table):  # pairs of points are no folds: no block-level quantity
        unequal = list(_BLOCK_LEVEL)
        summary.update(dict.fromkeys(_BLOCK_LEVEL))
        note = _PAIRS_NOTE
    summary["warnings"] += tails
    few = few_blocks_note(intervals.attrs.get("kind", ""), int(np.min(stats.K)),
                          intervals["method_name"].values, summary["scheme"])  # fmt: skip
    summary["warnings"] += [few] if few else []
    if fmt == "json":
        summary["warnings"] = [note, *summary["warnings"]] if note else summary["warnings"]
        return summary
    return _table(summary, intervals, unequal, note)


def _run_means(estimates: xr.Dataset, moments: xr.Dataset) -> tuple[xr.Dataset, xr.Dataset]:
    """Average θ̂, μ̂ and the moments over the runs, as cv_intervals does for repeated CV."""
    mean = estimates.assign(
        theta=estimates["theta"].mean("replicate", skipna=False),
        mu_hat=estimates["mu_hat"].mean("replicate", skipna=False),
    ).drop_vars("replicate")
    runs = estimates.sizes["replicate"]
    mean.attrs["runs"] = runs
    return mean, moments[["s1", "s2", "s3"]].mean("replicate", skipna=False)


def _replicated(out: dict | str, table: xr.Dataset, fmt: str) -> str:
    """Print one report, or one per independent data set, saying what the runs are."""
    kind = table.attrs.get("replicate_kind") if "replicate" in table.dims else None
    if fmt == "json":
        if kind == "independent":
            out = {"replicate_kind": kind, "replicates": out}
        return json.dumps(out, indent=2)
    if kind == "independent":
        return "\n\n".join(f"replicate {label}:\n{text}" for label, text in out.items())
    return out


def _tail_lines(caught: list) -> list[str]:
    """Turn heavy-tail warnings into lines of the output, with the CLI's options as advice.

    Every interval row is flagged; said once here rather than once per row.
    """
    from bayescv.tails import LOG_INTERVAL_ADVICE

    advice = "Use --methods theta_B_weighted --kind log (docs, 'When normal intervals fail')"
    return [
        str(w.message).replace(LOG_INTERVAL_ADVICE, advice)
        for w in caught
        if issubclass(w.category, HeavyTailWarning)
    ]


def _unequal_note(result: xr.Dataset, stats: Any) -> list[str]:
    """Say in one line which paired rows unequal block sizes left without an interval."""
    from bayescv.classical._block_stats import unequal_sizes_note

    methods = result["method_name"].values
    flags = result["flag"].transpose("method_name", ...).values.reshape(methods.size, -1)
    names = [
        str(m)
        for m, row in zip(methods, flags, strict=True)
        if any("unequal_block_sizes" in str(f) for f in row)  # of any independent data set
    ]
    note = unequal_sizes_note(names, stats, _WEIGHTED_OPTION)
    return [note] if note else []


def _read(path: Path, args: argparse.Namespace) -> xr.Dataset:
    """Read a loss table in any format the package writes: one run, or runs of CV.

    Repeated CV and independent data sets are read as :func:`bayescv.cv_intervals` reads
    them; bootstrap replicates, which need the observed run beside them, are refused.
    """
    from bayescv.cli._checks import read_losses

    table = read_losses(path, args)
    if "replicate" in table.dims and table.attrs.get("replicate_kind") == "bootstrap":
        raise ValueError(
            f"{path}: the runs are bootstrap replicates of one CV, which only the 'bootstrap' "
            "method reads, beside the observed run: `bayescv variance` has no such method; "
            "use bayescv.cv_intervals(observed, ['bootstrap'], bootstrap=replicates)"
        )
    return table


def _number(value: Any) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


def _summary(table, estimates, moments, intervals) -> dict:
    theta = estimates["theta"]
    stats = {name: theta.sel(estimator=name).item() for name in estimates["estimator"].values}
    names = intervals["method_name"].values
    summary: dict[str, Any]
    if "runs" in estimates.attrs:  # repeated CV: each run's N, K, M (null where they differ)
        summary = {key: estimates.attrs.get(key) for key in ("N", "K", "M")}
        summary.update(replicate_kind="repeat", runs=int(estimates.attrs["runs"]))
    else:
        n_sizes = np.unique(_sizes(table))
        summary = {
            "N": int(table.sizes["obs"]),
            "K": int(np.unique(table["block"].values).size),
            "M": int(n_sizes[0]) if n_sizes.size == 1 else None,
        }
    summary.update(
        {
            "scheme": table.attrs.get("scheme"),
            "mu_hat": _number(estimates["mu_hat"]),
            "s1": _number(moments["s1"]),
            "s2": _number(moments["s2"]),
            "s3": _number(moments["s3"]),
        }
    )
    summary.update({name: _number(stats[name]) for name in _JSON_THETAS})
    summary.update(
        {
            "se_points": _number(np.sqrt(stats["naive_points"])),
            "se_folds": _number(np.sqrt(stats["naive_folds"])),
            "sigma2_within": _number(stats["bayle_within"] * (summary["N"] or np.nan)),
            "sigma2_all_pairs": _number(stats["bayle_all_pairs"] * (summary["N"] or np.nan)),
            "level": intervals.attrs["level"],
            "interval_kind": intervals.attrs.get("kind"),
            "flags": {
                str(m): str(f)
                for m, f in zip(
                    intervals["method_name"].values, intervals["flag"].values, strict=True
                )
            },
            # each interval's point estimate: mu_hat, except naive_folds and nadeau_bengio (a
            # mean of fold means, which differs from mu_hat for unequal block sizes)
            "estimates": {
                str(m): _number(v)
                for m, v in zip(names, intervals["estimate"].values, strict=True)
            },
            "intervals": {
                str(m): [
                    _number(intervals["lower"].sel(method_name=m)),
                    _number(intervals["upper"].sel(method_name=m)),
                ]
                for m in intervals["method_name"].values
            },
            # what each interval is for (err, kfold_test_error, ...) and its SE, as the table
            "targets": {
                str(m): str(t) for m, t in zip(names, intervals["target"].values, strict=True)
            },
            "se": {str(m): _number(v) for m, v in zip(names, intervals["se"].values, strict=True)},
        }
    )
    said = [str(note) for note in estimates["note"].values if note]
    said += _row_warnings(intervals)
    summary["warnings"] = said
    return summary


#: Flags said once for the whole table (the unequal-sizes note, the heavy-tail line), not per row.
_SAID_ONCE = {"unequal_block_sizes", "heavy_tail", "very_heavy_tail"}


def _row_warnings(intervals: xr.Dataset) -> list[str]:
    """One line per flag that says more than what is said once for the whole table.

    Rows with the same flag share a line (ten rows of an error-free table are one line).
    """
    said: dict[str, list[str]] = {}
    for m, flag, lower in zip(
        intervals["method_name"].values,
        intervals["flag"].values,
        intervals["lower"].values,
        strict=True,
    ):
        rest = [f.replace("_", " ") for f in str(flag).split(",") if f and f not in _SAID_ONCE]
        if rest:
            text = ", ".join(rest) + ("" if np.isfinite(lower) else ", no interval")
            said.setdefault(text, []).append(str(m))
    return [f"{', '.join(methods)}: {text}" for text, methods in said.items()]


def _sizes(table: xr.Dataset) -> np.ndarray:
    return pd.Series(table["block"].values).value_counts().to_numpy()


def _table(summary: dict, intervals: xr.Dataset, unequal: list[str], note: str = "") -> str:
    """Format the summary as text; `unequal` names the θ's that need equal block sizes.

    When it is not empty (the blocks differ in size), those θ's are left out of the rows and
    named in one warning, `note` (the JSON keeps them as null, with a warning each); the
    weighted θ_A and θ_B are shown only then (for equal sizes they equal θ_A and θ_B). A
    source table leaves out θ_1…θ_5 (null in the JSON), which assume random K-fold CV.
    """
    absent = _RANDOM_ONLY if summary["scheme"] == "source" else ()
    head = (
        f"N = {summary['N']} losses in K = {summary['K']} blocks"
        + (f" of M = {summary['M']}" if summary["M"] else " of unequal sizes")
        + f" (scheme: {summary['scheme']}); CV estimate mu_hat = {summary['mu_hat']:.6g}"
    )
    if summary.get("runs"):
        head = f"R = {summary['runs']} runs of repeated CV, each: {head}"
        head += (
            "\nmu_hat and every theta are means over the runs: each interval is for one run's "
            "variance (conservative for their mean); nadeau_bengio uses all R*K folds"
        )
    thetas = [
        name
        for name in _JSON_THETAS
        if name not in (*unequal, *absent) and (unequal or name not in _WEIGHTED)
    ]
    rows = [
        (name, summary[name])
        for name in (*thetas, "se_points", "se_folds", "sigma2_within", "sigma2_all_pairs")
        if name not in unequal
    ]
    theta = pd.DataFrame(rows, columns=["quantity", "value"]).set_index("quantity")
    frame = intervals[["estimate", "lower", "upper", "se", "flag"]].to_dataframe()
    level = f"{100 * summary['level']:g}%"
    parts = [head, "", theta.to_string(float_format=lambda v: f"{v:.6g}", na_rep="null")]
    kind = intervals.attrs.get("kind", "")
    parts += [
        "",
        f"{level} intervals ({kind})",
        frame.to_string(float_format=lambda v: f"{v:.6g}"),
        target_legend(intervals["target"].values),
    ]
    notes = [f"{name} needs equal block sizes" for name in unequal]
    warnings = [w for w in summary["warnings"] if not w.startswith(tuple(notes))]
    if note:
        warnings.insert(0, note)
    if warnings:
        parts += ["", "warnings:", *(f"  - {w}" for w in warnings)]
    return "\n".join(parts)


def _paired_json(result: xr.Dataset, said: list[str]) -> dict:
    methods = result["method_name"].values
    out = {
        "difference": "A - B",
        "alternative": result.attrs["alternative"],
        "level": result.attrs["level"],
        "methods": {
            str(m): {
                "target": str(result["target"].sel(method_name=m).item()),
                "estimate": _number(result["estimate"].sel(method_name=m)),
                "interval": [
                    _number(result["lower"].sel(method_name=m)),
                    _number(result["upper"].sel(method_name=m)),
                ],
                "statistic": _number(result["statistic"].sel(method_name=m)),
                "p_value": _number(result["p_value"].sel(method_name=m)),
                "flag": str(result["flag"].sel(method_name=m).item()),
            }
            for m in methods
        },
        "warnings": [*said, *_row_warnings(result)],
    }
    return out


def _paired_table(result: xr.Dataset, said: list[str]) -> str:
    frame = result[["estimate", "lower", "upper", "statistic", "p_value", "flag"]].to_dataframe()
    parts = [
        f"paired comparison, loss difference A - B ({result.attrs['alternative']} test; "
        f"{100 * result.attrs['level']:g}% {result.attrs.get('kind', '')} intervals)",
        frame.to_string(float_format=lambda v: f"{v:.6g}"),
        target_legend(result["target"].values),
    ]
    said = [*said, *_row_warnings(result)]
    if said:
        parts += ["", "warnings:", *(f"  - {w}" for w in said)]
    return "\n".join(parts)
