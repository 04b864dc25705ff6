"""What :func:`bayescv.compare_learners` takes: its tables and its pairs, checked."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import xarray as xr

from bayescv.fold_scores import from_loss_tables, is_fold_table
from bayescv.losses import validate

__all__ = ["as_fold_table", "as_inputs", "checked_pairs"]


def as_inputs(data: Any, learners: Sequence[str] | None):
    """(fold table, point tables or None) from whatever the user passed."""
    if is_fold_table(data):
        if learners is not None:  # it would be ignored: the table names its learners
            raise ValueError(
                "learners= names the tables of a list or mapping; a fold-score table carries "
                "its learners' names (choose some with table.sel(learner=[...]))"
            )
        return data, None
    if isinstance(data, Mapping):
        if learners is not None:  # the keys name the tables: a second set of names would rename
            raise ValueError(
                f"learners= names the tables of a list; a mapping's keys {list(data)} already "
                "name its learners (rename them in the mapping)"
            )
        names, tables = [str(k) for k in data], list(data.values())
    elif isinstance(data, Sequence) and not isinstance(data, str):
        tables = list(data)
        names = (
            list(learners) if learners is not None else [chr(65 + i) for i in range(len(tables))]
        )
    else:
        raise TypeError(
            "expected a fold-score table, or a mapping {learner: loss table} / a list of loss "
            f"tables, got {type(data).__name__}; build a fold-score table from arrays or a "
            "DataFrame of fold scores with bayescv.fold_table or bayescv.from_long_frame"
        )
    if len(tables) < 2:
        raise ValueError("a comparison needs at least two learners")
    if len(names) != len(tables):
        raise ValueError(f"{len(names)} learner names for {len(tables)} tables")
    for name, t in zip(names, tables, strict=True):
        if not isinstance(t, xr.Dataset):
            raise TypeError(_not_a_table(name, t))
        validate(t)
    points = dict(zip(names, tables, strict=True))
    return from_loss_tables(points), points


def as_fold_table(data: Any) -> Any:
    """Return `data` as a fold-score table: per-point loss tables are reduced to one.

    A mapping ``{learner: loss table}`` or a list of loss tables (learners A, B, …) goes
    through :func:`bayescv.fold_scores.from_loss_tables`, as in :func:`as_inputs`; anything
    else is returned unchanged, for ``validate_fold_table`` to accept or refuse.
    """
    if isinstance(data, Mapping) or (isinstance(data, list | tuple) and data):
        return as_inputs(data, None)[0]
    return data


def _not_a_table(name: str, value: Any) -> str:
    """Return the way to a table, for a learner's value that is not one."""
    keys = value if isinstance(value, Mapping) else getattr(value, "columns", ())
    if any(str(k).startswith("test_") for k in keys):
        build = "bayescv.from_cross_validate(results) turns cross_validate results into one"
    elif type(value).__name__ == "ELPDData":  # az.loo / az.waic: pointwise elpd, no folds
        build = (
            "bayescv.from_elpd(elpd, blocks='pairs') turns an ArviZ loo or waic result "
            "(pointwise=True) into one"
        )
    else:
        build = "bayescv.fold_table builds one from arrays of fold scores"
    return (
        f"learner {name!r} is a {type(value).__name__}, not a loss table: compare_learners "
        f"takes a fold-score table or per-point loss tables, and {build}"
    )


def checked_pairs(pairs: Any, names: list[str]) -> list[tuple[str, str]]:
    """Return the checked (a, b) pairs; default: the first learner against the others."""
    if pairs is None:
        return [(names[0], other) for other in names[1:]]
    if isinstance(pairs, str) or (
        isinstance(pairs, Sequence) and len(pairs) == 2 and all(isinstance(x, str) for x in pairs)
    ):
        raise ValueError(
            f"pairs takes a list of (a, b) pairs, got {pairs!r}; for one pair write "
            "pairs=[(a, b)]"
        )  # fmt: skip
    checked = []
    for pair in pairs:
        if isinstance(pair, str) or not isinstance(pair, Sequence) or len(pair) != 2:
            raise ValueError(f"each pair must be two learner names (a, b), got {pair!r}")
        for x in pair:
            if x not in names:
                raise ValueError(f"unknown learner {x!r}; the learners are {names}")
        if pair[0] == pair[1]:
            raise ValueError(f"a pair must name two different learners, got {tuple(pair)!r}")
        checked.append((pair[0], pair[1]))
    if not checked:
        raise ValueError("pairs is empty: nothing to compare")
    return checked
