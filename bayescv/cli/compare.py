"""``bayescv compare``: compare learners from their loss tables, every applicable test.

Rows say which way "better" points (the first learner having the lower expected loss, or with
``--greater-is-better`` the higher expected score: the scores are negated into losses) and
the target of each method; ``--format json`` gives ``{"rows": [...], "best": {...}}``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import warnings
from pathlib import Path
from typing import Any

from bayescv.cli._checks import add_loss_range, add_replicate_kind

__all__ = ["register"]


def register(sub: Any) -> None:
    """Add the ``compare`` subcommand to the ``bayescv`` parser.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The subparsers of the ``bayescv`` command.
    """
    parser = sub.add_parser(
        "compare",
        help="compare learners from their loss tables (correlated t, Nadeau-Bengio, Bayle, ...)",
        description=(
            "Read the loss tables (CSV, one row per test point, as `bayescv variance` does) "
            "of two or more learners evaluated on the same splits and compare the first with "
            "each of the others: the Bayesian correlated t-test (P(better), P(equivalent), "
            "P(worse) with --rope), the Nadeau-Bengio and naive tests, Bayle et al.'s "
            "one-sided test, and with --methods all the hierarchical model over sources. "
            "'Better' means the lower expected loss. With three or more learners it also "
            "prints the probability that each is the best."
        ),
    )
    parser.add_argument("files", nargs="+", type=Path, metavar="LOSSES.csv")
    parser.add_argument(
        "--rope", type=float, default=0.0, help="ROPE half-width in loss units (0)"
    )
    parser.add_argument("--names", help="comma-separated learner names (default: file stems)")
    parser.add_argument("--block-col", default="block", help="block label column (block)")
    parser.add_argument("--loss-col", default="loss", help="loss column (loss)")
    parser.add_argument("--source-col", help="optional source label column")
    parser.add_argument(
        "--scheme", choices=("random", "source"), help="CV scheme (default: inferred)"
    )
    add_replicate_kind(parser, also=" (repeated CV: repeat)")
    parser.add_argument(
        "--greater-is-better",
        action="store_true",
        help="the tables hold scores (accuracy, log-likelihood per point): higher is better; "
        "they are negated into losses, and --rope is in score units",
    )
    parser.add_argument("--level", type=float, default=0.95, help="interval mass (0.95)")
    add_loss_range(parser, "; 0-1 losses need none")
    parser.add_argument("--methods", help="comma-separated methods, or 'all'")
    parser.add_argument("--random-state", type=int, default=0, help="seed of sampled parts (0)")
    parser.add_argument("--format", choices=("table", "json"), default="table")
    parser.set_defaults(func=_run)


#: Why tables of pointwise elpd get no table of which learner is best.
_NO_BEST = (
    "note: no table of which learner is best: the tables' blocks are pairs of points "
    "(pointwise elpd of PSIS-LOO or WAIC), not folds, and it needs folds"
)


def _fail(message: str) -> int:
    print(f"bayescv compare: error: {message}", file=sys.stderr)
    return 2


def _number(value: Any) -> Any:
    if isinstance(value, str):
        return value
    value = float(value)
    return value if math.isfinite(value) else None


def _negated(table: Any, offset: float = 0.0) -> Any:
    """Turn a table of scores (higher is better) into one of losses, ``offset - score``.

    Differences between learners are those of the negated scores whatever `offset`; 0/1
    scores (a correct prediction per point) take ``offset=1``, so that they become the 0-1
    losses they are, with the intervals and likelihood made for 0-1 losses.
    """
    from bayescv.losses import loss_range

    low, high = loss_range(table)
    out = table.assign(loss=offset - table["loss"])
    name = table.attrs.get("loss_name", "score")
    out.attrs["loss_name"] = f"1 - {name}" if offset == 1 else f"negated {name}"
    # 0/1 scores' declared range may be wider (unbounded): their losses are 0-1 losses
    out.attrs["loss_range"] = [0.0, 1.0] if offset == 1 else [offset - high, offset - low]
    return out


def _score_offset(tables: dict[str, Any]) -> float:
    """1 when every table holds 0/1 scores (read as 0-1 losses: ``1 - score``), else 0."""
    from bayescv.losses import is_binary

    return 1.0 if all(is_binary(t) for t in tables.values()) else 0.0


def _check_direction(tables: dict[str, Any], args: argparse.Namespace) -> None:
    """Refuse tables whose ``loss_name`` says they point the other way than the options say.

    A scikit-learn scorer's values (accuracy) read as losses, or a known loss (zero_one,
    pointwise elpd negated by ``from_elpd``) negated by ``--greater-is-better``, would turn
    "better" around without a word.
    """
    from bayescv.cv import LOSSES
    from bayescv.fold_scores._scorers import is_scorer_name

    for path, table in zip(args.files, tables.values(), strict=True):
        name = table.attrs.get("loss_name")
        if not args.greater_is_better and is_scorer_name(name):
            raise ValueError(
                f"{path}: holds {name!r}, a scikit-learn scorer's values (higher is better), "
                "not losses: pass --greater-is-better to compare them as scores"
            )
        if args.greater_is_better and (name in LOSSES or str(name).startswith("neg_elpd")):
            raise ValueError(
                f"{path}: holds {name!r} losses (lower is better), which --greater-is-better "
                "would turn around: leave it out"
            )


def _run(args: argparse.Namespace) -> int:
    from bayescv.cli._checks import comma_list, read_losses, target_legend
    from bayescv.fold_scores import from_loss_tables
    from bayescv.learner_comparison import compare_learners, compare_several
    from bayescv.losses import has_pair_blocks
    from bayescv.tails import HeavyTailWarning

    if len(args.files) < 2:
        return _fail(f"expected at least two loss tables, got {len(args.files)}")
    names = comma_list(args.names) if args.names else [p.stem for p in args.files]
    if not all(names):
        return _fail(f"--names has an empty name: {args.names!r}")
    if len(names) != len(args.files):
        return _fail(f"{len(names)} names for {len(args.files)} files")
    if len(set(names)) != len(names):
        return _fail(f"learner names must differ, got {names} (use --names)")
    if not (math.isfinite(args.rope) and args.rope >= 0):
        return _fail(f"--rope must be a number >= 0, got {args.rope}")
    methods = None if args.methods is None else comma_list(args.methods)
    methods = "all" if methods == ["all"] else methods
    try:
        tables = {
            name: read_losses(path, args) for name, path in zip(names, args.files, strict=True)
        }
        _check_direction(tables, args)
        offset = _score_offset(tables) if args.greater_is_better else 0.0
        if args.greater_is_better:
            tables = {name: _negated(t, offset) for name, t in tables.items()}
        with warnings.catch_warnings(record=True) as caught:  # said below, one line each
            warnings.simplefilter("always", HeavyTailWarning)
            warnings.filterwarnings("ignore", ".* left out because ", UserWarning)
            rows = compare_learners(
                tables, methods=methods, rope=args.rope, level=args.level,
                random_state=args.random_state,
            )  # fmt: skip
        for message in dict.fromkeys(str(w.message) for w in caught):
            print(f"warning: {message}", file=sys.stderr)
        best = None
        if len(tables) > 2 and any(has_pair_blocks(t) for t in tables.values()):
            print(_NO_BEST, file=sys.stderr)
        elif len(tables) > 2:
            best = compare_several(
                from_loss_tables(tables), rope=args.rope, level=args.level,
                random_state=args.random_state,
            )  # fmt: skip
    except (ValueError, TypeError, OSError, ImportError) as error:
        return _fail(str(error).splitlines()[0])
    if rows.attrs["methods_left_out"]:
        print(f"warning: {rows.attrs['methods_left_out']}", file=sys.stderr)
    better = rows.attrs["better"]
    if args.greater_is_better:
        better = "'better' means a higher expected score; the scores were negated into losses"
    frame = rows.drop_vars("row").to_dataframe()
    if best is not None and args.greater_is_better:  # each learner's expected score, not loss
        best = best.assign(
            mean=offset - best["mean"], lower=offset - best["upper"], upper=offset - best["lower"]
        )
    if args.format == "json":
        out: dict[str, Any] = {
            "difference": "a - b",
            "better": better,
            "greater_is_better": bool(args.greater_is_better),
            "rope": rows.attrs["rope"],
            "level": rows.attrs["level"],
            "rows": [{k: _number(v) for k, v in rec.items()} for rec in frame.to_dict("records")],
        }
        if best is not None:
            b = best.isel(dataset=0)
            out["best"] = {
                str(n): {
                    "p_best": _number(b["p_best"].sel(learner=n)),
                    "p_equivalent_to_best": _number(b["p_equivalent_to_best"].sel(learner=n)),
                    "mean": _number(b["mean"].sel(learner=n)),
                    # the interval of the mean, as the table shows it
                    "lower": _number(b["lower"].sel(learner=n)),
                    "upper": _number(b["upper"].sel(learner=n)),
                    "flag": str(b["flag"].sel(learner=n).item()),
                }
                for n in b["learner"].values
            }
        print(json.dumps(out, indent=2))
        return 0
    cols = ["method", "a", "b", "target", "estimate", "lower", "upper", "p_better",
            "p_equivalent", "p_worse", "p_value", "alternative", "flag"]  # fmt: skip
    shown = frame[cols].copy()
    # Bayle's test is one-sided, the others two-sided: say which each p-value is.
    shown["alternative"] = shown["alternative"].replace("", "-")
    if len(set(frame["dataset"]) - {""}) > 1:  # one data set needs no column
        shown.insert(1, "dataset", frame["dataset"])
    what = "negated scores" if args.greater_is_better else "losses"
    level = f"{100 * rows.attrs['level']:g}%"
    print(f"difference a - b of expected {what}, {level} intervals; {better}; ROPE ±{args.rope:g}")
    print(shown.to_string(index=False, float_format=lambda v: f"{v:.4g}", na_rep="-"))
    print(target_legend(frame["target"]))
    if best is not None:
        shown_best = ["mean", "lower", "upper", "p_best", "p_equivalent_to_best", "flag"]
        b = best.isel(dataset=0)[shown_best]
        print()
        print(
            "which learner is best ("
            + ("highest expected score" if args.greater_is_better else "lowest expected loss")
            + f"; mean with its {level} interval):"
        )
        print(
            b.to_dataframe().drop(columns="dataset").to_string(float_format=lambda v: f"{v:.4g}")
        )
    return 0
