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

from bayescv.losses._columns import Columns, check_fixed, with_scheme
from bayescv.losses._csv_checks import (
    check_columns,
    check_labels,
    check_merged_labels,
    encoding_error,
    parse_losses,
)
from bayescv.losses._errors import with_path
from bayescv.losses._frame import from_frame, to_frame
from bayescv.losses._json_attrs import (
    decode_nonfinite,
    encode_nonfinite,
    has_nonfinite,
    json_value,
)
from bayescv.losses._schema import _LABEL_COORDS, validate

__all__ = ["read_csv", "read_netcdf", "read_table", "to_csv", "to_netcdf"]

_CSV_HEADER = "# bayescv loss table "
_PANDAS = tuple(int(part) for part in pd.__version__.split(".")[:2])
_EXACT_FLOATS = {"float_precision": "round_trip"} if _PANDAS < (3, 1) else {}
_META_KEYS = ("attrs", "dtypes")


def to_csv(table: xr.Dataset, path: str | PathLike[str]) -> None:
    """Write a loss table to CSV without losing anything.

    The first line is a comment holding the attributes and label dtypes as standard JSON
    (infinite and NaN attributes as the strings ``"inf"``, ``"-inf"``, ``"nan"``); floats
    are written with full round-trip precision, so :func:`read_csv` returns an identical table.

    Parameters
    ----------
    table : xarray.Dataset
        A loss table.
    path : str or path-like
        Destination file.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from bayescv.losses import from_arrays
    >>> table = from_arrays([0.1, 0.4, 0.2, 0.3], [0, 0, 1, 1])
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "losses.csv"
    >>> to_csv(table, path)
    >>> read_csv(path).identical(table)
    True
    """
    _refuse_models(table)
    frame = to_frame(table)
    attrs = {k: json_value(v) for k, v in table.attrs.items()}
    meta: dict[str, Any] = {
        "attrs": {k: encode_nonfinite(v) for k, v in attrs.items()},
        "dtypes": {c: table[c].dtype.str for c in frame.columns if c != "loss"},
    }
    nonfinite = [k for k, v in attrs.items() if has_nonfinite(v)]
    if nonfinite:  # which attrs to decode: a string attribute "inf" stays a string
        meta["nonfinite"] = nonfinite
    header = _CSV_HEADER + json.dumps(meta) + "\r\n"  # before opening: no empty file on error
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write(header)
        # CRLF line ends (RFC 4180): the csv writer then quotes labels holding a bare "\r",
        # which with "\n" line ends it leaves unquoted and the reader splits as a new row.
        frame.to_csv(fh, index=False, float_format="%.17g", lineterminator="\r\n")


def read_csv(path: str | PathLike[str]) -> xr.Dataset:
    """Read a loss table written by :func:`to_csv`, or any long-format loss CSV.

    A file without the bayescv header line is read as a plain long-format CSV with columns
    ``block``, ``loss`` and optionally ``source``, ``index`` and ``replicate``; use
    :func:`read_table` or :func:`from_frame` for other column names. A loss column of
    ``True``/``False`` only (a bool column as pandas writes it; ``TRUE``/``FALSE`` as a
    spreadsheet saves it) is read as 1/0.

    Parameters
    ----------
    path : str or path-like
        CSV file (UTF-8; a byte-order mark and CRLF line ends are fine).

    Returns
    -------
    xarray.Dataset
        The loss table.

    Raises
    ------
    ValueError
        Naming the file: not UTF-8, empty, a NetCDF file, a header line altered (by a
        spreadsheet that saved the file), a duplicated or missing column (or semicolons
        between the fields), a missing label or a non-numeric loss in a plain CSV, or a bad
        table (:func:`validate`). String labels are read as written, even edited longer.

    Examples
    --------
    A plain CSV, as pandas or a spreadsheet writes it; the scheme is inferred:

    >>> import pathlib, tempfile
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"block": ["A", "A", "B", "B"], "loss": [0.1, 0.4, 0.2, 0.3]})
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     frame.to_csv(pathlib.Path(folder) / "losses.csv", index=False)
    ...     table = read_csv(pathlib.Path(folder) / "losses.csv")
    >>> table["loss"].values.tolist(), table["block"].values.tolist(), table.attrs["scheme"]
    ([0.1, 0.4, 0.2, 0.3], ['A', 'A', 'B', 'B'], 'random')
    """
    if _sniff(path) != "csv":
        raise ValueError(
            f"{path}: a NetCDF file, not a CSV; read it with read_table or read_netcdf"
        )
    return _read_csv(path, Columns())


def read_table(
    path: str | PathLike[str],
    *,
    loss: str = "loss",
    block: str = "block",
    source: str | None = None,
    index: str | None = None,
    replicate: str | None = None,
    scheme: str | None = None,
    replicate_kind: str | None = None,
) -> xr.Dataset:
    """Read a loss table from any file format the package writes, detected from its content.

    * NetCDF (:func:`to_netcdf`, ``bayescv demo --out``), recognised by its first bytes
      (an HDF5 signature for NetCDF-4, ``CDF`` for classic NetCDF);
    * CSV written by :func:`to_csv`, whose first line is the ``# bayescv loss table`` header
      holding the attributes and label dtypes (read back identical);
    * plain long-format CSV, one row per test point, with the columns named below.

    NetCDF and bayescv CSV files name their own columns (``loss``, ``block``, ``source``,
    ``index``, ``replicate``): other column names are refused for them, rather than ignored.

    Parameters
    ----------
    path : str or path-like
        The file (CSV as UTF-8; a byte-order mark and CRLF line ends are fine).
    loss, block : str, default "loss", "block"
        Loss and block-label columns of a plain CSV.
    source, index, replicate : str, optional
        Source-label, original-row and run columns of a plain CSV; by default the columns
        named ``source``, ``index`` and ``replicate`` when the file has them.
    scheme : {"random", "source"}, optional
        CV scheme. For a plain CSV as in :func:`bayescv.losses._schema.from_arrays` (inferred by
        default); for a self-describing file it replaces the scheme stored there.
    replicate_kind : {"repeat", "bootstrap", "independent"}, optional
        What the runs of a plain CSV with a `replicate` column are (required then), or of a
        NetCDF file of runs written without the attribute; refused for a file of one run.

    Returns
    -------
    xarray.Dataset
        The validated loss table.

    Raises
    ------
    ValueError
        Naming the file and the problem: not UTF-8, empty, unreadable NetCDF, duplicated
        or missing columns, column names that a self-describing file does not have, missing
        labels or non-numeric losses in a plain CSV, or a bad table (:func:`validate`).
        A missing column, runs without `replicate_kind` and `replicate_kind` for one run
        raise a :class:`~bayescv.losses.TableFormatError` saying which.
    OSError
        If the file cannot be opened.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from bayescv.losses import from_arrays, to_csv, to_netcdf
    >>> table = from_arrays([0.1, 0.4, 0.2, 0.3], ["a", "a", "b", "b"], scheme="source")
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> to_csv(table, folder / "t.csv"); to_netcdf(table, folder / "t.nc")
    >>> read_table(folder / "t.csv").identical(read_table(folder / "t.nc"))
    True
    """
    columns = Columns(loss, block, source, index, replicate, scheme, replicate_kind)
    kind = _sniff(path)
    if kind == "csv":
        return _read_csv(path, columns)
    engine = "h5netcdf" if kind == "netcdf4" else "scipy"
    table = _read_netcdf(path, engine=engine, replicate_kind=replicate_kind)
    check_fixed(path, columns, table, "a NetCDF loss table")
    return with_scheme(path, table, scheme)


# First bytes of NetCDF-4 (an HDF5 file) and of classic NetCDF (versions 1, 2 and 5).
_MAGIC = {b"\x89HDF\r\n\x1a\n": "netcdf4", b"CDF\x01": "netcdf3", b"CDF\x02": "netcdf3"}
_MAGIC[b"CDF\x05"] = "netcdf3"


def _sniff(path: str | PathLike[str]) -> str:
    """``"netcdf4"``, ``"netcdf3"`` or ``"csv"``, from the first bytes of the file."""
    with open(path, "rb") as fh:
        head = fh.read(8)
    for magic, kind in _MAGIC.items():
        if head.startswith(magic):
            return kind
    return "csv"


def _headed(first_line: str) -> bool:
    """Whether a CSV's first line is bayescv's header line (quoted, if a spreadsheet saved it)."""
    return first_line.lstrip(' "').startswith(_CSV_HEADER.strip())


def self_describing(path: str | PathLike[str]) -> bool:
    """Whether a loss file names its own columns and loss: NetCDF, or a :func:`to_csv` CSV.

    A plain CSV does not: :func:`read_table` takes its column options, and its loss name is
    that of its loss column.
    """
    if _sniff(path) != "csv":
        return True
    with open(path, encoding="utf-8-sig", errors="replace", newline="") as fh:
        return _headed(fh.readline())


def _read_csv(path: str | PathLike[str], columns: Columns) -> xr.Dataset:
    try:
        with open(path, encoding="utf-8-sig", newline="") as fh:
            first = fh.readline()
    except UnicodeDecodeError as error:
        raise encoding_error(path, error) from None
    if not first:
        raise ValueError(f"{path}: the file is empty; a loss CSV needs a header row and data")
    meta: dict[str, Any] = {"attrs": {}, "dtypes": {}}
    # A spreadsheet that saved the file split the line at its commas and quoted the cells.
    headed = _headed(first)
    if headed:
        meta = _header_meta(path, first)
    skip = int(headed)
    header = _header_row(path, skip)
    named = Columns().named(header) if headed else columns.named(header)
    check_columns(path, header, named)
    dtypes = {
        c: np.dtype(d) if np.dtype(d).kind != "U" else str for c, d in meta["dtypes"].items()
    }
    # Losses are parsed by numpy from text: correctly rounded on every pandas version.
    try:
        frame = _pandas_csv(path, skiprows=skip, dtype={**dtypes, named["loss"]: str})
    except (ValueError, TypeError) as error:  # a label no longer of the type the header records
        if str(error).startswith(f"{path}: "):
            raise
        written = {c: np.dtype(d).name for c, d in meta["dtypes"].items()}
        raise ValueError(
            f"{path}: a label does not have the type its header line records ({written}): "
            f"{error}. The file was edited after bayescv wrote it; delete its first line and "
            "read it with read_table(path, scheme=..., replicate_kind=...)"
        ) from None
    if not headed:
        check_labels(path, frame, named)
        check_merged_labels(
            path, frame, named, lambda cols: _pandas_csv(path, usecols=cols, dtype=str)
        )
    frame[named["loss"]] = parse_losses(path, frame[named["loss"]])
    attrs = meta["attrs"]
    kind = attrs.get("replicate_kind") if "replicate" in named else None
    try:
        table = from_frame(
            frame,
            loss=named["loss"],
            block=named["block"],
            source=named.get("source"),
            index=named.get("index"),
            replicate=named.get("replicate"),
            scheme=attrs.get("scheme", columns.scheme if not headed else None),
            # a header's replicate_kind without the column: one run taken out of several
            replicate_kind=columns.replicate_kind if not headed else kind,
            loss_name=attrs.get("loss_name", named["loss"]),
        )
    except ValueError as error:
        raise with_path(path, error) from None
    for c, d in meta["dtypes"].items():
        if c in table.coords and c != "replicate":
            # Strings: the written width at least (identical round trip), but never less than
            # the labels read need (the file may have been edited): no label is cut.
            kind = np.dtype(d).kind
            table[c] = table[c].astype(np.promote_types(d, table[c].dtype) if kind == "U" else d)
    table["loss"].attrs = {"long_name": f"per-point loss ({attrs.get('loss_name', 'loss')})"}
    if attrs:
        table.attrs = attrs
    table = _validated(path, table)
    if headed:
        check_fixed(path, columns, table, "a bayescv CSV loss table (with its header line)")
        return with_scheme(path, table, columns.scheme)
    return table


def _header_meta(path: str | PathLike[str], first: str) -> dict[str, Any]:
    """Parse the header line (attrs and label dtypes); refuse an altered one clearly."""
    try:
        meta = json.loads(first[len(_CSV_HEADER) :]) if first.startswith(_CSV_HEADER) else None
    except json.JSONDecodeError:
        meta = None
    if not (isinstance(meta, dict) and all(isinstance(meta.get(k), dict) for k in _META_KEYS)):
        raise ValueError(
            f"{path}: the bayescv header line was altered: the first line starts with "
            f"{_CSV_HEADER.strip()!r} but is not the JSON line that to_csv writes, typically "
            "because a spreadsheet opened and saved the file (splitting that line at its commas "
            "and quoting the pieces). Write the file again with bayescv.losses.to_csv; or "
            "delete the first line, read the rest as a plain CSV with read_table(path, "
            "scheme=..., replicate_kind=...) and set the attributes that matter, such as "
            "table.attrs['loss_range'] = [low, high] (check the losses too: spreadsheets "
            "may round them)"
        )
    for key in meta.get("nonfinite", ()):
        if key in meta["attrs"]:
            meta["attrs"][key] = decode_nonfinite(meta["attrs"][key])
    return meta


def _pandas_csv(path: str | PathLike[str], **kwargs: Any) -> pd.DataFrame:
    """pd.read_csv as UTF-8 text with every field kept as written ("NA" is a label).

    Float labels are parsed exactly: pandas' default parser before 3.1 reads
    0.30000000000000004 as 0.3 (which could merge blocks), so there ``float_precision=
    "round_trip"`` is asked for; pandas 3.1 parses exactly and deprecates the option.
    """
    try:
        return pd.read_csv(
            path, encoding="utf-8-sig", keep_default_na=False, **_EXACT_FLOATS, **kwargs
        )
    except UnicodeDecodeError as error:
        raise encoding_error(path, error) from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as error:
        message = str(error).strip().splitlines()[0] if str(error).strip() else "no data"
        raise ValueError(f"{path}: not a readable CSV ({message})") from None


def _header_row(path: str | PathLike[str], skip: int) -> list[str]:
    """Return the column names as written (pandas itself renames duplicates to 'x.1')."""
    row = _pandas_csv(path, skiprows=skip, header=None, nrows=1, dtype=str)
    return [str(c) for c in row.iloc[0].tolist()] if len(row) else []


def _validated(path: str | PathLike[str], table: xr.Dataset) -> xr.Dataset:
    try:
        return validate(table)
    except ValueError as error:
        raise with_path(path, error) from None


def to_netcdf(table: xr.Dataset, path: str | PathLike[str]) -> None:
    """Write a loss table to NetCDF-4 (through h5netcdf); :func:`read_netcdf` reads it back identical.

    Parameters
    ----------
    table : xarray.Dataset
        A loss table.
    path : str or path-like
        Destination file.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from bayescv.losses import from_arrays
    >>> table = from_arrays([0.1, 0.4, 0.2, 0.3], [0, 0, 1, 1])
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "losses.nc"
    >>> to_netcdf(table, path)
    >>> read_netcdf(path).identical(table)
    True
    """
    _refuse_models(table)
    validate(table)
    table.to_netcdf(path, engine="h5netcdf")


def _refuse_models(table: xr.Dataset) -> None:
    """Refuse a table holding fitted models (``cross_val_losses(return_estimator=True)``)."""
    if "estimator" in table.data_vars:
        raise ValueError(
            "the loss table holds fitted models (variable 'estimator', from "
            "return_estimator=True), which cannot be written to a file; write "
            'table.drop_vars("estimator") instead'
        )


def read_netcdf(path: str | PathLike[str]) -> xr.Dataset:
    """Read a loss table from NetCDF into memory and validate it.

    Parameters
    ----------
    path : str or path-like
        NetCDF file written by :func:`to_netcdf` (NetCDF-4), or a classic NetCDF file
        holding a loss table.

    Returns
    -------
    xarray.Dataset
        The loss table; its attributes are Python lists and numbers (``loss_range`` a list,
        ``seed`` an int), as :func:`read_csv` returns them, not the numpy arrays and scalars
        NetCDF stores.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from bayescv.losses import from_arrays, to_netcdf
    >>> table = from_arrays([0.1, 0.4, 0.2, 0.3], ["a", "a", "b", "b"], scheme="source")
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     to_netcdf(table, pathlib.Path(folder) / "losses.nc")
    ...     back = read_netcdf(pathlib.Path(folder) / "losses.nc")
    >>> back.identical(table), back["source"].values.tolist()
    (True, ['a', 'a', 'b', 'b'])
    """
    kind = _sniff(path)
    if kind == "csv":
        raise ValueError(
            f"{path}: not a NetCDF file (it does not start with a NetCDF signature); read a "
            "CSV with read_table or read_csv"
        )
    return _read_netcdf(path, engine="h5netcdf" if kind == "netcdf4" else "scipy")


def _read_netcdf(path: str | PathLike[str], *, engine: str, replicate_kind=None) -> xr.Dataset:
    try:
        with xr.open_dataset(path, engine=engine) as ds:
            table = ds.load()
    except (OSError, ValueError) as error:
        if isinstance(error, FileNotFoundError):
            raise
        raise ValueError(f"{path}: not a readable NetCDF file ({error})") from None
    for name in _LABEL_COORDS:
        if name in table.coords and table[name].dtype.kind in "OS":
            table[name] = table[name].astype(str)
    # NetCDF hands attributes back as numpy values (loss_range an array, seed an np.int64):
    # as written they were Python lists and numbers, as read_csv returns them.
    table.attrs = {key: json_value(value) for key, value in table.attrs.items()}
    if replicate_kind is not None and "replicate" in table.dims:  # runs written without it
        table.attrs.setdefault("replicate_kind", replicate_kind)
    return _validated(path, table)
