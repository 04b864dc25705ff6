"""Per-point loss differences of two learners evaluated on the same CV splits.

Re-exported by :mod:`bayescv.losses`. The difference table is a loss table of its own, so
every interval method applies to it: :func:`bayescv.paired_comparison` (closed form) and
:func:`bayescv.bayes.paired_comparison` (hierarchical model) both start here.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr

from bayescv.losses._range import effective_range
from bayescv.losses._schema import validate

__all__ = ["loss_differences"]


def loss_differences(losses_a: xr.Dataset, losses_b: xr.Dataset) -> xr.Dataset:
    """Build the loss table of h = e^A − e^B, checking that both used the same splits.

    Parameters
    ----------
    losses_a, losses_b : xarray.Dataset
        Loss tables of learners A and B on the same data and folds (same ``block`` and
        ``index`` for every point, same replicates). The points may come in another order
        in B (tables read from files or frames sorted otherwise): B's losses are matched to
        A's by (block, index), when each such pair occurs once per replicate.

    Returns
    -------
    xarray.Dataset
        A's table with ``loss`` replaced by the differences; attrs record both learners.

    Raises
    ------
    TypeError
        If either input is not a loss table.
    ValueError
        If the tables hold different losses (``loss_name``), differ in scheme, kind of
        replicates, shape, blocks, rows or sources, or the differences overflow float64.

    Examples
    --------
    Two learners' 0-1 losses on the same four points, in the same two folds:

    >>> from bayescv.losses import from_arrays
    >>> a = from_arrays([1.0, 0.0, 1.0, 1.0], [0, 0, 1, 1])
    >>> b = from_arrays([0.0, 0.0, 1.0, 0.0], [0, 0, 1, 1])
    >>> loss_differences(a, b)["loss"].values.tolist()
    [1.0, 0.0, 0.0, 1.0]
    """
    for name, table in {"losses_a": losses_a, "losses_b": losses_b}.items():
        if not isinstance(table, xr.Dataset) or "loss" not in table:
            raise TypeError(f"{name} must be a loss table (an xarray.Dataset with 'loss')")
    name_a, name_b = (t.attrs.get("loss_name") for t in (losses_a, losses_b))
    if name_a is not None and name_b is not None and name_a != name_b:
        raise ValueError(
            f"the two tables hold different losses ({name_a!r} and {name_b!r}): compare "
            "learners on the same loss"
        )
    for attr, what in (("scheme", "CV scheme"), ("replicate_kind", "kind of replicates")):
        value_a, value_b = (t.attrs.get(attr) for t in (losses_a, losses_b))
        if value_a != value_b:
            raise ValueError(
                f"the two tables differ in their {what} ({attr} {value_a!r} and {value_b!r}): "
                "not the same splits; build both the same way (or set the attribute that "
                "was given wrongly)"
            )
    if losses_a["loss"].shape != losses_b["loss"].shape:
        raise ValueError(
            "the two tables differ in shape "
            f"{losses_a['loss'].shape} vs {losses_b['loss'].shape}: not the same splits"
        )
    if "block" not in losses_a.coords or "block" not in losses_b.coords:
        raise ValueError("both tables need a 'block' coordinate")
    loss_b = losses_b["loss"].values
    same = {
        coord: np.array_equal(losses_a[coord].values, losses_b[coord].values)
        for coord in ("block", "index")
        if coord in losses_a.coords and coord in losses_b.coords
    }
    order = None  # B's points in A's order, when B lists them otherwise
    if not all(same.values()):
        order = _matching_rows(losses_a, losses_b)
        if order is None:
            coord = next(c for c, equal in same.items() if not equal)
            raise ValueError(
                f"the two tables differ in {coord!r}: compare learners on the same "
                "splits (same cv splitter and random_state, or cv=list of folds)"
            )
        loss_b = np.take_along_axis(np.atleast_2d(loss_b), order, axis=-1).reshape(loss_b.shape)
    if "source" in losses_a.coords and "source" in losses_b.coords:
        source_b = np.atleast_2d(losses_b["source"].values)
        if order is not None:
            source_b = np.take_along_axis(source_b, order, axis=-1)
        if not np.array_equal(np.atleast_2d(losses_a["source"].values), source_b):
            raise ValueError(
                "the two tables give the same points different source labels: not the same "
                "data; compare learners on the same data and splits"
            )
    diff = losses_a.copy()
    with np.errstate(over="ignore", invalid="ignore"):
        diff["loss"] = losses_a["loss"] - loss_b
    overflow = ~np.isfinite(diff["loss"].values) & np.isfinite(losses_a["loss"].values)
    if (overflow & np.isfinite(loss_b)).any():
        raise ValueError(
            "the loss differences A - B overflow float64 (losses near ±1.8e308); rescale both "
            "tables by the same factor"
        )
    diff.attrs = {
        **losses_a.attrs,
        "estimator": f"A: {losses_a.attrs.get('estimator', '?')}; "
        f"B: {losses_b.attrs.get('estimator', '?')}",
        "loss_name": f"difference of {losses_a.attrs.get('loss_name', 'loss')} (A - B)",
    }
    # e^A in [a, b] and e^B in [c, d] give e^A - e^B in [a - d, b - c]. The effective range,
    # so that two plain 0-1 tables (no declared range) give differences in [-1, 1].
    low_a, high_a = effective_range(losses_a)
    low_b, high_b = effective_range(losses_b)
    diff.attrs["loss_range"] = [low_a - high_b, high_a - low_b]
    return validate(diff)


def _matching_rows(losses_a: xr.Dataset, losses_b: xr.Dataset) -> np.ndarray | None:
    """Positions in B of A's points, per replicate, when both hold the same points.

    Tables built from frames or files whose rows come in another order hold the same
    (block, index) points in another order within each block. Returns an int array of shape
    (n_replicates, n_obs), or None when the points differ or a (block, index) pair repeats
    (bootstrap replicates), which leaves the matching ambiguous.
    """
    if "index" not in losses_a.coords or "index" not in losses_b.coords:
        return None
    blocks_a, blocks_b = (np.atleast_2d(t["block"].values) for t in (losses_a, losses_b))
    rows_a, rows_b = (np.atleast_2d(t["index"].values) for t in (losses_a, losses_b))
    if blocks_a.dtype.kind != blocks_b.dtype.kind:
        return None
    orders = []
    for r in range(blocks_a.shape[0]):
        keys_a = pd.MultiIndex.from_arrays([blocks_a[r], rows_a[r]])
        keys_b = pd.MultiIndex.from_arrays([blocks_b[r], rows_b[r]])
        if not (keys_a.is_unique and keys_b.is_unique):
            return None
        where = keys_b.get_indexer(keys_a)
        if (where < 0).any():
            return None
        orders.append(where)
    return np.stack(orders)


def check_bootstrap_of(losses: xr.Dataset, bootstrap: xr.Dataset) -> None:
    """Refuse bootstrap replicates of another loss or another CV scheme than `losses`.

    One rule for every consumer of a bootstrap table (the closed-form ``bootstrap`` interval,
    the Bayesian model). A table that names no loss (``loss_name="unknown"``, the default of
    :func:`from_arrays`) is compared on its scheme only.

    Parameters
    ----------
    losses : xarray.Dataset
        The observed loss table.
    bootstrap : xarray.Dataset
        Its bootstrap replicates.

    Raises
    ------
    ValueError
        Naming the attribute that differs, and the way out.
    """
    for name, what in (("loss_name", "loss"), ("scheme", "CV scheme")):
        mine = losses.attrs.get(name) if isinstance(losses, xr.Dataset) else None
        theirs = bootstrap.attrs.get(name) if isinstance(bootstrap, xr.Dataset) else None
        if "unknown" in (mine, theirs):
            continue
        if mine is not None and theirs is not None and mine != theirs:
            raise ValueError(
                f"the bootstrap table is of another {what} ({theirs!r}) than the observed "
                f"table ({mine!r}): bootstrap the same CV of the same loss (for two learners, "
                "the table of their differences)"
                + (
                    "; if it is the same loss under another name (a plain CSV's loss is named "
                    "after its column), set table.attrs['loss_name'] to match"
                    if name == "loss_name"
                    else ""
                )
            )
