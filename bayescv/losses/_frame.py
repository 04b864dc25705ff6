"""Loss tables to and from long-format pandas DataFrames, one row per test point.

Re-exported by :mod:`bayescv.losses`; see there for the table's layout.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayescv.losses._errors import TableFormatError
from bayescv.losses._schema import from_arrays, validate

__all__ = ["from_frame", "to_frame"]

#: Table attributes that from_frame takes as arguments (read from frame.attrs by default).
_ARGUMENT_ATTRS = ("scheme", "replicate_kind", "loss_name", "loss_range")


def from_frame(
    frame: pd.DataFrame,
    *,
    loss: str = "loss",
    block: str = "block",
    source: str | None = None,
    index: str | None = None,
    replicate: str | None = None,
    scheme: str | None = None,
    replicate_kind: str | None = None,
    loss_name: str | None = None,
    loss_range: Any = None,
) -> xr.Dataset:
    """Build a loss table from a long-format DataFrame, one row per test point.

    The attributes :func:`to_frame` keeps in ``frame.attrs`` are read back: ``scheme``,
    ``replicate_kind``, ``loss_name`` and ``loss_range`` are the defaults of the arguments
    of those names, and the others are copied onto the table, so that
    ``from_frame(to_frame(table))`` returns the table.

    Parameters
    ----------
    frame : pandas.DataFrame
        The losses.
    loss, block : str
        Names of the loss and block-label columns.
    source, index : str, optional
        Names of the source-label and original-row columns; by default the columns named
        ``source`` and ``index`` when the frame has them (as :func:`to_frame` writes them).
        Without an index column, the frame's own index gives the rows when it holds
        distinct integers ≥ 0 in each run (a frame filtered from your data keeps its row
        labels); else the rows are numbered 0, 1, ..., in each run (concatenated per-fold
        frames, whose labels repeat, included).
    replicate : str, optional
        Name of a column numbering CV runs; each run must have the same number of rows.
        Its sorted distinct values become the ``replicate`` coordinate. By default the
        column named ``replicate`` when the frame has one.
    scheme : {"random", "source"}, optional
        As in :func:`from_arrays`; defaults to ``frame.attrs["scheme"]``.
    replicate_kind : {"repeat", "bootstrap", "independent"}, optional
        Required with `replicate`, and refused without it (one run); defaults to
        ``frame.attrs["replicate_kind"]``.
    loss_name : str, optional
        Defaults to ``frame.attrs["loss_name"]``, else the name of the loss column.
    loss_range : (float, float), optional
        As in :func:`from_arrays`; defaults to ``frame.attrs["loss_range"]``.

    Returns
    -------
    xarray.Dataset
        The loss table.

    Raises
    ------
    ValueError
        If a named column is missing, runs differ in length, or the losses fail
        :func:`validate`; a :class:`~bayescv.losses.TableFormatError` for runs without
        `replicate_kind`, or `replicate_kind` without runs.

    Examples
    --------
    >>> import pandas as pd
    >>> from bayescv.losses import from_frame
    >>> df = pd.DataFrame({"err": [0, 1, 0, 0, 1, 1], "school": [1, 1, 2, 2, 3, 3]})
    >>> table = from_frame(df, loss="err", block="school", scheme="source")
    >>> float(table["loss"].mean())
    0.5
    """
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"frame must be a pandas DataFrame, got {type(frame).__name__}")
    # The columns to_frame writes are read by default, as read_table reads them from a CSV:
    # ignoring them would turn a source table into a random one, and runs into one run.
    found = lambda role, given: role if given is None and role in frame.columns else given  # noqa: E731
    source, index, replicate = (
        found("source", source),
        found("index", index),
        found("replicate", replicate),
    )
    named = {
        "loss": loss,
        "block": block,
        "source": source,
        "index": index,
        "replicate": replicate,
    }
    missing = [c for c in named.values() if c is not None and c not in frame.columns]
    if missing:
        raise ValueError(f"column(s) {missing} not in the frame; it has {list(frame.columns)}")
    for role, column in named.items():
        count = int((frame.columns == column).sum()) if column is not None else 0
        if count > 1:
            raise ValueError(
                f"duplicate column {column!r}: the frame has {count} columns of that name (the "
                f"{role} column must be unique); drop or rename the others"
            )
    if frame.empty:
        raise ValueError("empty input: the frame has no rows")
    # What to_frame wrote in frame.attrs: defaults of the arguments of those names (explicit
    # arguments win), the other attributes copied. One run taken out keeps no replicate kind.
    written = frame.attrs
    if replicate_kind is not None and replicate is None:
        raise TableFormatError(
            f"replicate_kind {replicate_kind!r} says what the runs of a table of several CV "
            "runs are, and this one has no 'replicate' column (one run): leave replicate_kind "
            "out, or name the column that numbers the runs with replicate=",
            extra_attribute="replicate_kind",
        )
    scheme = scheme if scheme is not None else written.get("scheme")
    if replicate_kind is None and replicate is not None:
        replicate_kind = written.get("replicate_kind")
    loss_name = loss_name or written.get("loss_name")
    loss_range = loss_range if loss_range is not None else written.get("loss_range")
    kept = {k: v for k, v in written.items() if k not in _ARGUMENT_ATTRS}
    rows = _own_rows(frame) if index is None else None
    if replicate is None:
        get = lambda c: None if c is None else frame[c].to_numpy()  # noqa: E731
    else:
        frame = frame.reset_index(drop=True).sort_values(replicate, kind="stable")
        rows = None if rows is None else rows[frame.index.to_numpy()]  # the same order
        counts = frame[replicate].value_counts(sort=False)
        if counts.nunique() != 1:
            raise ValueError(f"mismatched lengths: replicates have {sorted(set(counts))} rows")
        n_rep = counts.size
        get = lambda c: None if c is None else frame[c].to_numpy().reshape(n_rep, -1)  # noqa: E731
        rows = None if rows is None else rows.reshape(n_rep, -1)
    if rows is not None and any(np.unique(r).size < r.size for r in np.atleast_2d(rows)):
        rows = None  # concatenated per-fold frames repeat their labels: not row numbers
    table = from_arrays(
        get(loss),
        get(block),
        source=get(source),
        index=get(index) if index is not None else rows,
        scheme=scheme,
        replicate_kind=replicate_kind,
        loss_name=loss_name or loss,
        loss_range=loss_range,
        attrs=kept,
    )
    if replicate is not None:
        # Keep the run labels of the frame (sorted), not 0..R-1: to_frame/from_frame is lossless.
        table = table.assign_coords(replicate=pd.unique(frame[replicate].to_numpy()))
    return table


def _own_rows(frame: pd.DataFrame) -> np.ndarray | None:
    """Return the frame's index as row numbers when it holds integers, else None."""
    own = frame.index
    if own.nlevels > 1 or own.dtype.kind not in "iu" or own.equals(pd.RangeIndex(len(own))):
        return None  # a default index is the positions already; labels are not row numbers
    rows = own.to_numpy()
    return rows if rows.min() >= 0 else None


def to_frame(table: xr.Dataset) -> pd.DataFrame:
    """Return the loss table in long format, one row per (replicate, point).

    Parameters
    ----------
    table : xarray.Dataset
        A loss table.

    Returns
    -------
    pandas.DataFrame
        Columns ``replicate`` (if any), ``block``, ``source`` (if any), ``index``, ``loss``;
        the table's attributes in ``DataFrame.attrs``.

    Examples
    --------
    >>> from bayescv.losses import from_arrays
    >>> frame = to_frame(from_arrays([0.1, 0.4, 0.3, 0.2], [0, 0, 1, 1]))
    >>> frame.columns.tolist(), frame["block"].tolist()
    (['block', 'index', 'loss'], [0, 0, 1, 1])
    """
    validate(table)
    cols = {}
    if "replicate" in table.dims:
        cols["replicate"] = np.repeat(table["replicate"].values, table.sizes["obs"])
    for name in ("block", "source", "index", "loss"):
        if name in table.variables:
            cols[name] = table[name].values.ravel()
    frame = pd.DataFrame(cols)
    frame.attrs = dict(table.attrs)
    return frame
