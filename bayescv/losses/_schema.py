"""Building and validating loss tables; :mod:`bayescv.losses` describes the layout."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayescv._provenance import created_now, package_version
from bayescv.losses._errors import TableFormatError
from bayescv.losses._range import as_range, check_range
from bayescv.losses._runs import _label_counts

__all__ = [
    "REPLICATE_KINDS",
    "SCHEMES",
    "from_arrays",
    "pivot",
    "stack_replicates",
    "validate",
]

SCHEMES = ("random", "source")
REPLICATE_KINDS = ("repeat", "bootstrap", "independent")
_LABEL_COORDS = ("block", "source", "index")


def from_arrays(
    loss: Any,
    block: Any,
    *,
    source: Any = None,
    index: Any = None,
    scheme: str | None = None,
    replicate_kind: str | None = None,
    loss_name: str | None = "unknown",
    loss_range: Any = None,
    attrs: Mapping[str, Any] | None = None,
) -> xr.Dataset:
    """Build a validated loss table from arrays.

    Parameters
    ----------
    loss : array-like of shape (n_obs,) or (n_replicates, n_obs)
        Per-point losses. A 2-D array adds a ``replicate`` dimension.
    block : array-like of the same shape as `loss`
        Block (fold or held-out source) label of each point.
    source : array-like of shape (n_obs,) or like `loss`, optional
        Source label of each point. With ``scheme="source"`` and no `source`, the block
        labels are taken as the sources (leave-one-source-out).
    index : array-like of int, shape (n_obs,) or like `loss`, optional
        Row of each point in the original data; defaults to ``0, 1, ..., n_obs - 1``.
    scheme : {"random", "source"}, optional
        CV scheme. By default ``"source"`` when `source` is given and no source is split
        across blocks, else ``"random"``.
    replicate_kind : {"repeat", "bootstrap", "independent"}, optional
        Required when `loss` is 2-D, and refused when it is 1-D: what the replicates are.
        Repeated CV re-partitions the same data, bootstrap replicates resample it,
        independent replicates are new data.
    loss_name : str, default "unknown"
        Name of the loss function; None means no name, as ``"unknown"`` does.
    loss_range : (float, float), optional
        The values the loss can take, recorded as the attribute ``loss_range``; a loss
        outside it is refused, and every interval stays inside it. Default: the range of a
        built-in `loss_name` (:func:`bayescv.losses.loss_range`), else unbounded.
    attrs : mapping, optional
        Further attributes (strings or numbers) to record.

    Returns
    -------
    xarray.Dataset
        The loss table described in the module docstring.

    Raises
    ------
    ValueError
        On empty input, mismatched shapes, non-finite or complex losses, missing labels,
        fewer than two blocks, a block with fewer than two points, or unknown `scheme` or
        `replicate_kind`; a :class:`~bayescv.losses.TableFormatError` for 2-D losses without
        `replicate_kind` or 1-D losses with one.

    Examples
    --------
    >>> from bayescv.losses import from_arrays
    >>> table = from_arrays([0.1, 0.4, 0.2, 0.3], ["a", "a", "b", "b"], scheme="source")
    >>> table.sizes["obs"], table.attrs["scheme"]
    (4, 'source')
    """
    if replicate_kind is not None and replicate_kind not in REPLICATE_KINDS:
        raise ValueError(
            f"unknown replicate kind {replicate_kind!r}; expected one of {REPLICATE_KINDS}"
        )
    loss_name = "unknown" if loss_name is None else str(loss_name)  # None: no name, as default
    loss_arr = _real(loss)
    if loss_arr.size == 0:
        raise ValueError("empty input: the loss table needs at least one loss")
    if loss_arr.ndim not in (1, 2):
        raise ValueError(f"loss must be 1-D or 2-D (replicate, obs), got {loss_arr.ndim}-D")
    if replicate_kind is not None and loss_arr.ndim == 1:
        raise TableFormatError(
            f"replicate_kind {replicate_kind!r} says what the runs of a table of several CV "
            "runs are (2-D losses, replicate by point), and these losses are 1-D (one run): "
            "leave replicate_kind out",
            extra_attribute="replicate_kind",
        )
    shape = loss_arr.shape
    block_arr = _labels(block, shape, "block")
    if block_arr is None:
        raise ValueError("block labels are required")
    source_arr = _labels(source, shape, "source")
    if index is None:
        index_arr = np.broadcast_to(np.arange(shape[-1], dtype=np.int64), shape).copy()
    else:
        index_arr = _labels(index, shape, "index").astype(np.int64)
    if scheme == "source" and source_arr is None:
        source_arr = block_arr.copy()
    if scheme is None:
        scheme = (
            "source"
            if source_arr is not None and not _splits_sources(block_arr, source_arr)
            else "random"
        )

    order = _block_order(block_arr)
    take = lambda a: None if a is None else np.take_along_axis(a, order, axis=-1)  # noqa: E731
    loss_arr, block_arr, source_arr, index_arr = map(
        take, (loss_arr, block_arr, source_arr, index_arr)
    )

    dims = ("obs",) if loss_arr.ndim == 1 else ("replicate", "obs")
    coords: dict[str, Any] = {"block": (dims, block_arr), "index": (dims, index_arr)}
    if source_arr is not None:
        coords["source"] = (dims, source_arr)
    if loss_arr.ndim == 2:
        coords["replicate"] = ("replicate", np.arange(shape[0]))
    table = xr.Dataset({"loss": (dims, loss_arr)}, coords=coords)
    table["loss"].attrs["long_name"] = f"per-point loss ({loss_name})"
    table.attrs.update(
        {
            "scheme": scheme,
            "loss_name": loss_name,
            "estimator": "unknown",
            "bayescv_version": package_version(),
            "created": created_now(),
        }
    )
    if replicate_kind is not None:
        table.attrs["replicate_kind"] = replicate_kind
    if loss_range is not None:  # as_range names the argument when it is no [low, high]
        table.attrs["loss_range"] = list(as_range(loss_range))
    table.attrs.update(attrs or {})
    return validate(table)


def validate(table: xr.Dataset) -> xr.Dataset:
    """Check that a Dataset is a well-formed loss table and return it unchanged.

    Parameters
    ----------
    table : xarray.Dataset
        Candidate loss table.

    Returns
    -------
    xarray.Dataset
        `table` itself.

    Raises
    ------
    ValueError
        Naming the first problem found: missing variables or coordinates, wrong
        dimensions, empty input, NaN or infinite losses, a loss outside the declared
        ``loss_range``, fewer than two blocks in a
        replicate, a block with fewer than two points, an unknown scheme, or a
        ``replicate`` dimension without a known ``replicate_kind``.

    Examples
    --------
    >>> import numpy as np
    >>> table = from_arrays([0.1, 0.4, 0.3, 0.2], [0, 0, 1, 1])
    >>> validate(table) is table
    True
    >>> bad = table.copy(deep=True)
    >>> bad["loss"][0] = np.nan
    >>> validate(bad)
    Traceback (most recent call last):
    ...
    ValueError: losses contain 1 NaN or infinite value(s), the first at index 0 (the table's position 0)
    """
    if not isinstance(table, xr.Dataset):
        raise TypeError(f"a loss table is an xarray.Dataset, got {type(table).__name__}")
    if "loss" not in table.data_vars:
        intervals = {"estimate", "lower", "upper"} <= set(table.data_vars)
        # (a coverage study is named as such by its own readers: bayescv study --summary)
        hint = (
            ": it holds intervals (estimate, lower, upper), not losses; write such a result "
            "with result.to_netcdf(path) and read it with xarray.load_dataset(path)"
            if intervals and table.attrs.get("title") != "bayescv coverage study"
            else ""
        )
        raise ValueError(f"loss table has no 'loss' variable{hint}")
    loss = table["loss"]
    if loss.dims not in (("obs",), ("replicate", "obs")):
        raise ValueError(
            f"'loss' must have dims ('obs',) or ('replicate', 'obs'), got {loss.dims}"
        )
    if loss.size == 0:
        raise ValueError("empty input: the loss table has no losses")
    for name in ("block", "index"):
        if name not in table.coords:
            raise ValueError(f"loss table has no '{name}' coordinate")
    for name in _LABEL_COORDS:
        if name in table.coords and table[name].dims != loss.dims:
            raise ValueError(
                f"coordinate '{name}' must have dims {loss.dims}, got {table[name].dims}"
            )
    values = _real(loss.values)
    bad = ~np.isfinite(values)
    if bad.any():
        first = np.argwhere(bad)[0].tolist()
        hint = (
            "; a log loss is infinite where the model gave the true class probability 0"
            if table.attrs.get("loss_name") == "log_loss" and np.isposinf(values).any()
            else ""
        )
        # The index is the point's row in the user's data; the position is in the table,
        # whose points are sorted by block.
        run = f" in replicate {first[0]}" if len(first) > 1 else ""
        raise ValueError(
            f"losses contain {int(bad.sum())} NaN or infinite value(s), the first{run} at "
            f"index {int(table['index'].values[tuple(first)])} (the table's position "
            f"{first[-1] if len(first) == 1 else first}){hint}"
        )
    check_range(table, values)
    if table.attrs.get("scheme") not in SCHEMES:
        raise ValueError(
            f"attribute 'scheme' must be one of {SCHEMES}, got {table.attrs.get('scheme')!r}"
        )
    kind = table.attrs.get("replicate_kind")
    if "replicate" in loss.dims and kind not in REPLICATE_KINDS:
        raise TableFormatError(
            "a table with a 'replicate' dimension needs attribute 'replicate_kind' in "
            f"{REPLICATE_KINDS}, got {kind!r}; consumers treat "
            "repeated CV, bootstrap replicates and independent data sets differently",
            missing_attribute="replicate_kind" if kind is None else None,
        )
    blocks = np.atleast_2d(table["block"].values)
    for r, row in enumerate(blocks):
        labels, counts = _label_counts(row)
        where = f" in replicate {r}" if blocks.shape[0] > 1 else ""
        if labels.size < 2:
            raise ValueError(
                f"fewer than two blocks{where}: found {labels.size} ({labels.tolist()}); a "
                "table needs the losses of two or more CV folds or held-out sources, labelled "
                "in its 'block' column (is the block column the right one?)"
            )
        small = labels[counts < 2]
        if small.size:
            shown = small[:5].tolist()
            more = f" and {small.size - 5} more" if small.size > 5 else ""
            hint = (
                "; every block has one point (leave-one-out CV, or more folds than half the "
                "points): use fewer folds, as in K-fold CV with cv=10 on 20 or more points"
                if small.size == labels.size
                else "; merge the smallest sources, or use random K-fold CV"
                if table.attrs.get("scheme") == "source"
                else "; use fewer folds, so that each holds two points or more"
            )
            raise ValueError(
                f"block(s) {shown}{more}{where} have fewer than two points; "
                "every block (fold or source) needs at least two to estimate a within-block "
                f"variance{hint}"
            )
    return table


def _real(values: Any) -> np.ndarray:
    """Losses as float64; complex ones are refused, not cast (which drops the imaginary part)."""
    arr = np.asarray(values)
    if arr.dtype.kind == "c" or (
        arr.dtype.kind == "O"
        and any(isinstance(v, complex | np.complexfloating) for v in arr.flat)
    ):
        raise ValueError(f"losses must be real, got complex values of dtype {arr.dtype}")
    return np.asarray(arr, dtype=float)


def _labels(values: Any, shape: tuple[int, ...], name: str) -> np.ndarray | None:
    """Return label array broadcast to `shape`, or None; check its length."""
    if values is None:
        return None
    arr = np.asarray(values)
    if arr.dtype.kind == "O":
        missing = np.asarray(pd.isna(arr))
        if np.any(missing):
            where = [p[0] if len(p) == 1 else p for p in np.argwhere(missing)[:5].tolist()]
            raise ValueError(
                f"'{name}' labels are missing (None or NaN) at {int(np.sum(missing))} "
                f"position(s), the first {where}; every point needs a {name} label"
            )
    if (
        arr.ndim == 0
        or arr.ndim > len(shape)
        or arr.shape[-1] != shape[-1]
        or (arr.ndim == 2 and arr.shape[0] not in (1, shape[0]))
    ):
        raise ValueError(
            f"mismatched lengths: '{name}' has shape {arr.shape} but the losses have shape {shape}"
        )
    if arr.dtype.kind in "fc" and not np.isfinite(arr).all():
        bad = ~np.isfinite(arr)
        where = [p[0] if len(p) == 1 else p for p in np.argwhere(bad)[:5].tolist()]
        raise ValueError(
            f"'{name}' labels contain NaN or infinite values at {int(bad.sum())} position(s), "
            f"the first {where}; every point needs a {name} label"
        )
    if arr.dtype.kind == "O" and name == "index" and _all_integers(arr):
        arr = arr.astype(np.int64)  # row numbers in an object column: numbers, not text
    if arr.dtype.kind == "O":
        arr = _as_text(arr, name)
    if name == "index" and arr.dtype.kind not in "iu":  # before the label rule: no strings
        raise ValueError(
            f"'index' must hold integer row numbers, got dtype {arr.dtype}"
            + (" (whole numbers stored as floats: pass index.astype(int))"
               if arr.dtype.kind == "f" else "")
        )  # fmt: skip
    if arr.dtype.kind not in "iuU" and arr.dtype.kind != "f":
        raise ValueError(f"'{name}' labels must be integers or strings, got dtype {arr.dtype}")
    return np.broadcast_to(arr, shape).copy()


def _all_integers(arr: np.ndarray) -> bool:
    """Whether every item is an integer that int64 holds (bools are not row numbers)."""
    return all(
        isinstance(v, int | np.integer) and not isinstance(v, bool) and -(2**63) <= v < 2**63
        for v in arr.flat
    )


def _as_text(arr: np.ndarray, name: str) -> np.ndarray:
    """Object labels as text, refusing labels that text would merge (1, "1") or split (1, 1.0)."""
    text = arr.astype(str)
    values = pd.Series(arr.ravel())
    pairs = pd.DataFrame({"value": values, "text": text.ravel()}).drop_duplicates()
    if values.nunique() != pairs["text"].nunique():
        shared = pairs["text"].duplicated(keep=False) | pairs["value"].duplicated(keep=False)
        shown = ", ".join(f"{v!r} ({type(v).__name__})" for v in pairs["value"][shared][:4])
        raise ValueError(
            f"'{name}' labels mix types that do not match as text: {shown}; labels are stored "
            "as text, so these would merge into one label or split into two; give every label "
            "one type (all strings, or all integers) first"
        )
    return text


def _splits_sources(block: np.ndarray, source: np.ndarray) -> bool:
    """Whether any source appears in more than one block of a replicate."""
    for b_row, s_row in zip(np.atleast_2d(block), np.atleast_2d(source), strict=True):
        pairs = pd.DataFrame({"s": s_row, "b": b_row}).drop_duplicates()
        if pairs["s"].duplicated().any():
            return True
    return False


def _block_order(block: np.ndarray) -> np.ndarray:
    """Per-row stable permutation that sorts points by block label."""
    return np.argsort(block, axis=-1, kind="stable")


def pivot(table: xr.Dataset) -> xr.DataArray:
    """View a balanced loss table as a (block, point) array.

    Parameters
    ----------
    table : xarray.Dataset
        A loss table whose blocks all have the same number of points.

    Returns
    -------
    xarray.DataArray
        Losses with dims ``(block, point)`` or ``(replicate, block, point)``; coordinate
        ``index`` carries the original rows.

    Raises
    ------
    ValueError
        If the block sizes differ (or differ between replicates).

    Examples
    --------
    >>> table = from_arrays([0.1, 0.4, 0.3, 0.2, 0.9, 0.5], [0, 0, 1, 1, 2, 2])
    >>> losses = pivot(table)
    >>> losses.dims, losses.values.tolist()
    (('block', 'point'), [[0.1, 0.4], [0.3, 0.2], [0.9, 0.5]])
    """
    validate(table)
    loss = np.atleast_2d(table["loss"].values)
    block = np.atleast_2d(table["block"].values)
    index = np.atleast_2d(table["index"].values)
    labels = np.unique(block[0])
    n_blocks = labels.size
    if loss.shape[1] % n_blocks:
        raise ValueError(
            f"unequal block sizes: {loss.shape[1]} points do not split evenly into {n_blocks} blocks"
        )
    per = loss.shape[1] // n_blocks
    shape = (loss.shape[0], n_blocks, per)
    block3 = block.reshape(shape)
    if not (block3 == block3[..., :1]).all() or not (block3[:, :, 0] == labels).all():
        sizes = dict(zip(*np.unique(block[0], return_counts=True), strict=True))
        raise ValueError(f"unequal block sizes, pivot needs equal ones: {sizes}")
    dims = ("replicate", "block", "point")
    out = xr.DataArray(
        loss.reshape(shape),
        dims=dims,
        coords={"block": labels, "point": np.arange(per), "index": (dims, index.reshape(shape))},
        name="loss",
        attrs=dict(table.attrs),
    )
    if "replicate" in table.dims:
        return out.assign_coords(replicate=table["replicate"].values)
    return out.isel(replicate=0, drop=True)


def stack_replicates(tables: Sequence[xr.Dataset], *, replicate_kind: str) -> xr.Dataset:
    """Stack loss tables from separate CV runs along a new ``replicate`` dimension.

    Parameters
    ----------
    tables : sequence of xarray.Dataset
        Loss tables without a ``replicate`` dimension, each with the same number of points.
    replicate_kind : {"repeat", "bootstrap", "independent"}
        What the replicates are; use ``"independent"`` for tables from independently drawn
        data sets (simulations).

    Returns
    -------
    xarray.Dataset
        A loss table with dims ``(replicate, obs)``; attributes from the first table.

    Raises
    ------
    ValueError
        If `replicate_kind` is unknown, `tables` is empty, or the tables differ in size, scheme,
        loss (``loss_name``) or presence of sources.

    Examples
    --------
    >>> run_1 = from_arrays([0.1, 0.4, 0.3, 0.2], [0, 0, 1, 1])
    >>> run_2 = from_arrays([0.2, 0.3, 0.1, 0.4], [0, 1, 0, 1])
    >>> table = stack_replicates([run_1, run_2], replicate_kind="repeat")
    >>> dict(table.sizes), table.attrs["replicate_kind"]
    ({'replicate': 2, 'obs': 4}, 'repeat')
    """
    if replicate_kind not in REPLICATE_KINDS:
        raise ValueError(
            f"unknown replicate kind {replicate_kind!r}; expected one of {REPLICATE_KINDS}"
        )
    tables = list(tables)
    if not tables:
        raise ValueError("empty input: no tables to stack")
    for t in tables:
        validate(t)
        if "replicate" in t.dims:
            raise ValueError("tables to stack must not have a 'replicate' dimension already")
    first = tables[0]
    if any(t.sizes["obs"] != first.sizes["obs"] for t in tables):
        raise ValueError(
            f"mismatched lengths: tables have {sorted({t.sizes['obs'] for t in tables})} points"
        )
    if any(t.attrs["scheme"] != first.attrs["scheme"] for t in tables):
        raise ValueError("tables mix CV schemes ('random' and 'source')")
    if any(("source" in t.coords) != ("source" in first.coords) for t in tables):
        raise ValueError("some tables have sources and others do not")
    names = list(dict.fromkeys(t.attrs.get("loss_name") for t in tables))
    if len(names) > 1:
        raise ValueError(
            f"the tables hold different losses ({names}): the replicates of one table are "
            "runs of the same loss; stack the tables of each loss separately"
        )
    attrs = {k: v for k, v in first.attrs.items() if k not in ("created", "replicate_kind")}
    return from_arrays(
        np.stack([t["loss"].values for t in tables]),
        np.stack([t["block"].values for t in tables]),
        source=np.stack([t["source"].values for t in tables])
        if "source" in first.coords
        else None,
        index=np.stack([t["index"].values for t in tables]),
        scheme=first.attrs["scheme"],
        replicate_kind=replicate_kind,
        loss_name=first.attrs["loss_name"],
        attrs=attrs,
    )
