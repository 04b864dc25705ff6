"""The ``bayescv nested`` subcommand: a nested-CV interval for a model on a CSV file.

``bayescv nested DATA.csv --target y [--source-col school] [--learner ridge] ...`` reads the
CSV with pandas, uses every other column as a feature (all must be numeric), fits the named
learner (:mod:`bayescv.cv.learners`) with :func:`bayescv.nested.nested_cv`, and prints the interval
with its diagnostics as a table or JSON. Bad input (unreadable file, missing column,
non-numeric features, missing values, options that do not fit the data, a target that does
not fit the task or the loss, an ``--out`` that cannot be written) ends with exit status 2
and a one-line message on standard error, before any model is fitted.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import math
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sklearn.utils.multiclass import type_of_target

from bayescv.cli._checks import bad_n_jobs, show_progress, unwritable_file
from bayescv.cv.learners import LEARNERS, learner_task, make_learner
from bayescv.cv.loss_functions import LOSSES

__all__ = ["register"]

_PROG = "bayescv nested"


def register(subparsers: Any) -> None:
    """Add the ``nested`` subcommand to the ``bayescv`` parser.

    Parameters
    ----------
    subparsers : argparse subparsers action
        What :meth:`argparse.ArgumentParser.add_subparsers` returned.
    """
    p = subparsers.add_parser(
        "nested",
        help="nested-CV interval (Bates, Hastie & Tibshirani) for a model on a CSV file",
        description=(
            "Estimate the prediction error of a scikit-learn model fitted on a CSV file, with "
            "the nested cross-validation interval of Bates, Hastie & Tibshirani. Every column "
            "other than the target and the source is a feature and must be numeric. With "
            "--source-col, folds hold whole sources and the interval is for new sources."
        ),
    )
    p.add_argument("data", type=Path, metavar="DATA.csv", help="CSV file with a header row")
    p.add_argument("--target", required=True, help="name of the target column")
    p.add_argument("--source-col", help="name of the source column (patients, sites, schools)")
    p.add_argument(
        "--learner",
        choices=("auto", *LEARNERS),
        default="auto",
        help="learner (default: logistic for classification, ridge for regression)",
    )
    p.add_argument(
        "--task",
        choices=("auto", "classification", "regression"),
        default="auto",
        help="default: the learner's only task, else classification for a non-numeric or "
        "two-valued target, regression otherwise",
    )
    p.add_argument("--n-splits", type=int, default=10, help="folds K (default: 10)")
    p.add_argument("--n-repeats", type=int, default=50, help="nested repetitions (default: 50)")
    p.add_argument(
        "--n-bias-repeats",
        type=int,
        default=None,
        help="extra plain-CV repetitions (default: ⌈n-repeats/5⌉)",
    )
    p.add_argument("--level", type=float, default=0.95, help="nominal coverage (default: 0.95)")
    p.add_argument(
        "--loss",
        choices=sorted(LOSSES),
        default=None,
        help="per-point loss (default: zero_one for classification, squared for regression)",
    )
    p.add_argument(
        "--bias-correction",
        choices=("code", "paper", "none"),
        default="code",
        help="bias constant: authors' code 1+((K-2)/K)^1.5 (default), paper 1+(K-2)/K, none",
    )
    p.add_argument(
        "--no-clip",
        action="store_true",
        help="do not clip the SE inflation factor to [1, sqrt(K)]",
    )
    p.add_argument(
        "--engine",
        choices=("auto", "batched", "per-fit"),
        default="auto",
        help="fit the training sets together (batched: linear, ridge and binary logistic "
        "regression, the exact optimum) or one scikit-learn call each; auto (default) batches "
        "linear and ridge regression",
    )
    p.add_argument("--random-state", type=int, default=0, help="random seed (default: 0)")
    p.add_argument("--n-jobs", type=int, default=None, help="parallel repetitions (default: 1)")
    p.add_argument(
        "--format", choices=("table", "json"), default="table", help="output (default: table)"
    )
    p.add_argument("--out", type=Path, help="also write the full result here (NetCDF)")
    p.add_argument(
        "--no-progress",
        action="store_true",
        help="hide the progress bar (hidden anyway when stderr is not a terminal)",
    )
    p.set_defaults(func=_run)


#: nested_cv's parameters that this command sets from an option of another spelling.
_OPTIONS = ("n_splits", "n_repeats", "n_bias_repeats", "random_state", "n_jobs")


def _as_options(message: str) -> str:
    """Name the command's options where `message` names nested_cv's parameters.

    Examples
    --------
    >>> _as_options("n_splits must be an integer >= 3, got 1; pass n_splits=30")
    '--n-splits must be an integer >= 3, got 1; pass --n-splits=30'
    """
    for name in _OPTIONS:
        message = re.sub(rf"\b{name}\b", "--" + name.replace("_", "-"), message)
    return message


#: Said before a default run of binary logistic regression, which fits one model at a time.
_BATCHED_NOTE = (
    f"{_PROG}: note: --engine batched fits binary logistic regression in batches, about 13 "
    "times faster on Bates et al.'s design (to the solver's tolerance: why it is not the "
    "default)"
)


class _InputError(ValueError):
    """Bad input: reported in one line with exit status 2."""


def _run(args: argparse.Namespace) -> int:
    from bayescv.nested import nested_cv

    try:
        problem = bad_n_jobs(args.n_jobs)
        if problem:
            raise _InputError(problem)
        X, y, groups, frame_info = _read(args)
        task = _task(args, y)
        name = args.learner if args.learner != "auto" else (
            "logistic" if task == "classification" else "ridge"
        )  # fmt: skip
        model = make_learner(name, task=task, random_state=args.random_state)
        # after the cheap checks (no directory made for bad input), before the fits
        problem = "" if args.out is None else unwritable_file(args.out)
        if problem:
            raise _InputError(f"--out {args.out}: {problem}")
        batchable = args.engine == "auto" and name == "logistic" and np.unique(y).size == 2
        bar = show_progress(args)
        # without a bar a long run must not look hung
        with _fits_line(not bar, _BATCHED_NOTE if batchable else ""):
            result = nested_cv(
                model, X, y, groups=groups, n_splits=args.n_splits, n_repeats=args.n_repeats,
                n_bias_repeats=args.n_bias_repeats, loss=args.loss, level=args.level,
                bias_correction=None if args.bias_correction == "none" else args.bias_correction,
                inflation_bounds=None if args.no_clip else "code", random_state=args.random_state,
                n_jobs=args.n_jobs, progress=bar,
                batched={"auto": None, "batched": True, "per-fit": False}[args.engine],
            )  # fmt: skip
    except _InputError as exc:
        print(f"{_PROG}: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    except ValueError as exc:  # from nested_cv, in its parameters' names
        print(f"{_PROG}: error: {_as_options(' '.join(str(exc).split()))}", file=sys.stderr)
        return 2
    summary = _summary(result, {**frame_info, "learner": name, "task": task})
    if args.format == "json":
        print(json.dumps(summary, indent=2, allow_nan=False))
    else:
        print(_table(summary))
    if args.out is not None:
        result.to_netcdf(args.out, engine="h5netcdf")
        if args.format == "table":
            print(f"wrote {args.out}")
    return 0


@contextlib.contextmanager
def _fits_line(show: bool, note: str = "") -> Iterator[None]:
    """Print on stderr the line nested_cv logs before its fits, if `show`, and `note`.

    The line says how many models it fits; `note` follows it. nested_cv logs it (logger
    ``bayescv.nested``, level INFO) after its checks of the options and data, so that bad
    input still ends in one line, the error.
    """
    if not (show or note):
        yield
        return

    class Said(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if show:
                print(f"{_PROG}: {record.getMessage()}...", file=sys.stderr, flush=True)
            if note:
                print(note, file=sys.stderr, flush=True)

    logger = logging.getLogger("bayescv.nested")
    handler = Said()
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def _read(args: argparse.Namespace) -> tuple[np.ndarray, np.ndarray, Any, dict[str, Any]]:
    try:
        # Source labels are IDs, read as written: as numbers, '007' and '7' would be merged.
        text = {} if args.source_col is None else {args.source_col: str}
        frame = pd.read_csv(args.data, dtype=text)
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise _InputError(f"cannot read {args.data}: {exc}") from None
    if frame.empty:
        raise _InputError(f"{args.data} has no data rows")
    _check_header(args.data)
    columns = [str(c) for c in frame.columns]
    frame.columns = columns
    if len(columns) == 1 and ";" in columns[0]:
        raise _InputError(
            f"{args.data} has one column, {columns[0]!r}: it looks semicolon-delimited (as "
            "spreadsheets that write decimal commas save CSV); save it with commas"
        )
    for role, col in (("target", args.target), ("source", args.source_col)):
        if col is not None and col not in columns:
            raise _InputError(
                f"{role} column {col!r} is not in {args.data} (columns: {', '.join(columns)})"
            )
    if args.source_col is not None and args.source_col == args.target:
        raise _InputError("the target and the source must be different columns")
    features = [c for c in columns if c not in (args.target, args.source_col)]
    if not features:
        raise _InputError(f"{args.data} has no feature columns besides the target and source")
    bad = [c for c in features if not pd.api.types.is_numeric_dtype(frame[c])]
    if bad:
        raise _InputError(
            f"non-numeric feature column(s): {', '.join(bad)}; encode them as numbers first"
        )
    used = [*features, args.target] + ([args.source_col] if args.source_col else [])
    missing = [c for c in used if frame[c].isna().any()]
    if missing:
        raise _InputError(f"missing values in column(s): {', '.join(missing)}")
    X = frame[features].to_numpy(dtype=float)
    y = frame[args.target].to_numpy()
    groups = None if args.source_col is None else frame[args.source_col].str.strip().to_numpy()
    if groups is not None and np.unique(groups).size == groups.size:
        # a measurement, such as a feature, rather than labels of patients, sites or schools
        raise _InputError(
            f"source column {args.source_col!r} has {groups.size} distinct values in "
            f"{groups.size} rows: every source has a single row, and a source needs at least "
            "two; folds of one-row sources are folds of points, with no source to generalise "
            "to. Name the column that labels the sources, or leave --source-col out"
        )
    info = {
        "data": str(args.data),
        "n_rows": len(frame),
        "n_features": len(features),
        "target_column": args.target,
        "source_column": args.source_col,
    }
    return X, y, groups, info


def _check_header(path: Path) -> None:
    """Refuse a header that pandas would quietly turn into extra features.

    Every column but the target and the source is a feature, so a column with no name (the
    row index that :meth:`pandas.DataFrame.to_csv` writes unless ``index=False``), read as
    ``Unnamed: 0``, or a repeated name, read as ``y.1``, would be fitted as one.
    """
    row = pd.read_csv(path, header=None, nrows=1, dtype=str, keep_default_na=False)
    names = [str(name).strip() for name in row.iloc[0].tolist()] if len(row) else []
    unnamed = [str(i + 1) for i, name in enumerate(names) if not name]
    if unnamed:
        raise _InputError(
            f"column(s) {', '.join(unnamed)} of {path} have no name in the header row (a row "
            "index, as pandas' to_csv writes unless index=False?); every column but the "
            "target and the source is a feature: name the column, or delete it"
        )
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise _InputError(
            f"{path} names column(s) {', '.join(map(repr, repeated))} more than once; every "
            "column but the target and the source is a feature: rename or delete the copies"
        )


def _task(args: argparse.Namespace, y: np.ndarray) -> str:
    """Return the task; refuse a target that does not fit it, or a loss that does not fit it.

    A classification needs class labels: not a continuous target
    (:func:`sklearn.utils.multiclass.type_of_target`), nor, unless ``--task classification``
    says so, numbers with fewer rows per distinct value than folds (a score such as the
    diabetes progression, 214 integers in 442 rows, which a classifier would fit as 214
    classes). A regression cannot use a loss that compares class labels.
    """
    implied = None if args.learner == "auto" else learner_task(args.learner)
    numeric = pd.api.types.is_numeric_dtype(y) and not pd.api.types.is_bool_dtype(y)
    if args.task != "auto":
        task = args.task
    elif implied is not None:
        task = implied
    else:
        task = "classification" if not numeric or np.unique(y).size <= 2 else "regression"
    if task == "regression" and not numeric:
        raise _InputError(f"target {args.target!r} is not numeric: regression is impossible")
    if task == "classification" and type_of_target(y).startswith("continuous"):
        raise _InputError(
            f"target {args.target!r} has non-integer values, not class labels: use --task "
            "regression with a regression learner"
        )
    n_values = np.unique(y).size
    if task == "classification" and n_values < 2:
        raise _InputError(
            f"target {args.target!r} has one value ({np.unique(y)[0]!s}) in all {y.size} rows: "
            "a classifier needs at least two classes"
        )
    # more than two values (two are labels by any reading), fewer rows per value than folds
    few_rows = n_values > 2 and n_values * args.n_splits > y.size
    if task == "classification" and numeric and args.task == "auto" and few_rows:
        raise _InputError(
            f"target {args.target!r} has {n_values} distinct values in {y.size} rows, "
            f"fewer rows per value than the {args.n_splits} folds: a measurement, not "
            f"class labels; use a regression learner, or --task classification to fit "
            f"{n_values} classes"
        )
    loss = None if args.loss is None else LOSSES[args.loss]
    if (
        task == "regression"
        and loss is not None
        and (loss.needs_classes or loss.name == "zero_one")
    ):
        raise _InputError(
            f"--loss {args.loss} compares class labels, and {args.target!r} is a regression "
            "target: use --loss squared or absolute"
        )
    return task


def _float(value: Any) -> float | None:
    """Return the number, or None (JSON null) for NaN and ±inf, which JSON cannot hold."""
    value = float(value)
    return value if math.isfinite(value) else None


def _summary(result: Any, info: dict[str, Any]) -> dict[str, Any]:
    a = result.attrs
    bounds = a["inflation_bounds"]
    return {
        **info,
        "estimator": " ".join(a["estimator"].split()),
        "loss": a["loss_name"],
        "level": a["level"],
        "target": a["target"],
        "target_detail": a["target_detail"],
        "estimate": _float(result["estimate"].item()),
        "lower": _float(result["lower"].item()),
        "upper": _float(result["upper"].item()),
        "se": _float(result["se"].item()),
        "flag": result["flag"].item(),
        "err_ncv": _float(result["err_ncv"]),
        "err_cv": _float(result["err_cv"]),
        "bias": _float(result["bias"]),
        "bias_correction": a["bias_correction"],
        "bias_constant": a["bias_constant"],
        "mse": _float(result["mse"]),
        "naive_se": _float(result["naive_se"]),
        "inflation": _float(result["inflation"]),
        "inflation_raw": _float(result["inflation_raw"]),
        "inflation_bounds": None if isinstance(bounds, str) else [float(b) for b in bounds],
        "inflation_running": [_float(v) for v in result["inflation_running"].values],
        "n_splits": int(a["n_splits"]),
        "n_repeats": int(a["n_repeats"]),
        "n_bias_repeats": int(a["n_bias_repeats"]),
        "n_sources": int(a["n_sources"]),
        "n_fits": int(a["n_fits"]),
        "fit_engine": a["fit_engine"],
        "wall_time_s": float(a["wall_time_s"]),
        "seed": int(a["seed"]),
    }


def _table(s: dict[str, Any]) -> str:
    def num(v: float | None) -> str:
        return "n/a" if v is None else f"{v:.4g}"

    running = [v for v in s["inflation_running"] if v is not None]
    tail = running[-max(2, len(running) // 2) :]
    bounds = s["inflation_bounds"]
    clip = "not clipped" if bounds is None else f"clipped to [{bounds[0]:g}, {bounds[1]:.3g}]"
    sources = f", {s['n_sources']} sources ({s['source_column']!r})" if s["n_sources"] else ""
    rate = s["n_fits"] / s["wall_time_s"] if s["wall_time_s"] > 0 else float("nan")
    lines = [
        f"Nested CV (Bates, Hastie & Tibshirani): {100 * s['level']:g}% interval for "
        f"{s['target']}",
        f"  data       {s['data']}: {s['n_rows']} rows, {s['n_features']} features, "
        f"target {s['target_column']!r} ({s['task']}){sources}",
        f"  learner    {s['learner']}: {s['estimator']}",
        f"  loss       {s['loss']}",
        f"  estimate   {num(s['estimate'])}   [{num(s['lower'])}, {num(s['upper'])}]   "
        f"se {num(s['se'])}" + (f"   flag: {s['flag']}" if s["flag"] else ""),
        f"  CV error   plain {num(s['err_cv'])}, nested {num(s['err_ncv'])}, "
        f"bias {num(s['bias'])} ({s['bias_correction']}, c = {s['bias_constant']:.4g})",
        f"  inflation  {num(s['inflation'])} x naive SE {num(s['naive_se'])} "
        f"(raw {num(s['inflation_raw'])}, {clip}); "
        + (
            f"running over the last {len(tail)} repetitions: {min(tail):.3g} to {max(tail):.3g}"
            if len(tail) > 1
            else "one running value: too few repetitions to judge it by"
            if tail
            else "no running value (every loss is the same: the naive SE is 0)"
            if s["naive_se"] == 0
            else "no running value (negative MSE estimates)"
        ),
        f"  fits       {s['n_fits']} in {s['wall_time_s']:.1f} s ({rate:.0f} fits/s, "
        f"{s['fit_engine']}): "
        f"{s['n_splits']} folds, nested repetitions {s['n_repeats']}, "
        f"extra plain-CV repetitions {s['n_bias_repeats']}; seed {s['seed']}",
        f"  target     {s['target_detail']}",
    ]
    return "\n".join(lines)
