"""Reading and writing loss tables: long-format frames, CSV and NetCDF, all lossless.

Re-exported by :mod:`bayescv.losses`; see there for the table's layout.
"""

from __future__ import annotations

import json
from os import PathLike
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayescv.losses import _LABEL_COORDS, from_frame, validate

__all__ = ["read_csv", "read_netcdf", "to_csv", "to_frame", "to_netcdf"]

_CSV_HEADER = "# bayescv loss table "


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


def to_csv(table: xr.Dataset, path: str | PathLike[str]) -> None:
    """Write a loss table to CSV without losing anything.

    The first line is a comment holding the attributes and label dtypes as JSON; floats
    are written with full round-trip precision, so :func:`read_csv` returns an identical table.

    Parameters
    ----------
    table : xarray.Dataset
        A loss table.
    path : str or path-like
        Destination file.
    """
    frame = to_frame(table)
    meta = {
        "attrs": {k: _json_value(v) for k, v in table.attrs.items()},
        "dtypes": {c: table[c].dtype.str for c in frame.columns if c != "loss"},
    }
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write(_CSV_HEADER + json.dumps(meta) + "\r\n")
        # CRLF line ends (RFC 4180): the csv writer then quotes labels holding a bare "\r",
        # which with "\n" line ends it leaves unquoted and the reader splits as a new row.
        frame.to_csv(fh, index=False, float_format="%.17g", lineterminator="\r\n")


def read_csv(path: str | PathLike[str]) -> xr.Dataset:
    """Read a loss table written by :func:`to_csv`, or any long-format loss CSV.

    A file without the bayescv header line is read as a plain long-format CSV with columns
    ``block``, ``loss`` and optionally ``source``, ``index`` and ``replicate``; use
    :func:`from_frame` for other column names.

    Parameters
    ----------
    path : str or path-like
        CSV file.

    Returns
    -------
    xarray.Dataset
        The loss table.
    """
    with open(path, encoding="utf-8") as fh:
        first = fh.readline()
    meta: dict[str, Any] = {"attrs": {}, "dtypes": {}}
    skip = 0
    if first.startswith(_CSV_HEADER):
        meta = json.loads(first[len(_CSV_HEADER) :])
        skip = 1
    dtypes = {
        c: np.dtype(d) if np.dtype(d).kind != "U" else str for c, d in meta["dtypes"].items()
    }
    # Losses are parsed by numpy from text: correctly rounded on every pandas version.
    frame = pd.read_csv(path, skiprows=skip, dtype={**dtypes, "loss": str}, keep_default_na=False)
    if "loss" in frame.columns:
        frame["loss"] = np.asarray(frame["loss"].to_numpy(), dtype=float)
    attrs = meta["attrs"]
    has = lambda c: c if c in frame.columns else None  # noqa: E731
    table = from_frame(
        frame,
        loss="loss",
        block="block",
        source=has("source"),
        index=has("index"),
        replicate=has("replicate"),
        scheme=attrs.get("scheme"),
        replicate_kind=attrs.get("replicate_kind"),
        loss_name=attrs.get("loss_name", "loss"),
    )
    for c, d in meta["dtypes"].items():
        if c in table.coords and c != "replicate":
            table[c] = table[c].astype(np.dtype(d))
    table["loss"].attrs = {"long_name": f"per-point loss ({attrs.get('loss_name', 'loss')})"}
    if attrs:
        table.attrs = attrs
    return validate(table)


def to_netcdf(table: xr.Dataset, path: str | PathLike[str]) -> None:
    """Write a loss table to NetCDF-4 (through h5netcdf); :func:`read_netcdf` reads it back identical.

    Parameters
    ----------
    table : xarray.Dataset
        A loss table.
    path : str or path-like
        Destination file.
    """
    validate(table)
    table.to_netcdf(path, engine="h5netcdf")


def read_netcdf(path: str | PathLike[str]) -> xr.Dataset:
    """Read a loss table from NetCDF into memory and validate it.

    Parameters
    ----------
    path : str or path-like
        NetCDF file written by :func:`to_netcdf`.

    Returns
    -------
    xarray.Dataset
        The loss table.
    """
    with xr.open_dataset(path, engine="h5netcdf") as ds:
        table = ds.load()
    for name in _LABEL_COORDS:
        if name in table.coords and table[name].dtype.kind == "O":
            table[name] = table[name].astype(str)
    return validate(table)


def _json_value(value: Any) -> Any:
    """Attribute value in a JSON-serialisable form (numpy scalars to Python)."""
    return value.item() if isinstance(value, np.generic) else value
