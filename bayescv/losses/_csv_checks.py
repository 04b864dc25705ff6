"""Checks of a CSV loss file's text: each refusal names the file, the column and the row.

Used by :mod:`bayescv.losses._io`; every message starts with the file's path.
"""

from __future__ import annotations

import re
from os import PathLike

import numpy as np
import pandas as pd

from bayescv.losses._errors import TableFormatError

__all__ = [
    "check_columns",
    "check_labels",
    "check_merged_labels",
    "encoding_error",
    "parse_losses",
]


def encoding_error(path: str | PathLike[str], error: UnicodeDecodeError) -> ValueError:
    bad = error.object[error.start : error.start + 1]
    return ValueError(
        f"{path}: not UTF-8 text (byte 0x{bad.hex()} at offset {error.start}); re-encode the "
        "file as UTF-8 (for example `iconv -f latin1 -t utf-8`, or save as 'CSV UTF-8')"
    )


def check_columns(path: str | PathLike[str], header: list[str], named: dict[str, str]) -> None:
    for role, column in named.items():
        count = header.count(column)
        if count > 1:
            raise ValueError(
                f"{path}: duplicate column {column!r}: the header names it {count} times (the "
                f"{role} column must be unique); drop or rename the others"
            )
        if count == 0:
            hint = ""
            if column in (h.strip() for h in header):
                hint = (
                    "; the header has spaces around its commas: remove them, or read the file "
                    "with pandas.read_csv(path, skipinitialspace=True) and pass the frame to "
                    "bayescv.losses.from_frame"
                )
            elif header and header[0].lower().startswith("sep="):
                hint = (
                    "; the file starts with a spreadsheet's delimiter line (sep=...): delete "
                    "that line"
                )
            elif len(header) == 1 and "\t" in header[0]:
                hint = (
                    "; the file looks tab-delimited: save it with commas, or read it with "
                    "pandas.read_csv(path, sep='\\t') and pass the frame to "
                    "bayescv.losses.from_frame"
                )
            elif len(header) == 1 and ";" in header[0]:
                hint = (
                    "; the file looks semicolon-delimited (as spreadsheets that write decimal "
                    "commas save CSV): save it with commas, or read it with pandas.read_csv("
                    "path, sep=';', decimal=',') and pass the frame to bayescv.losses.from_frame"
                )
            raise TableFormatError(
                f"{path}: no {role} column {column!r}; the columns are {header}{hint}",
                missing_column=(role, column),
                advice=hint.removeprefix("; "),
            )


def check_labels(path: str | PathLike[str], frame: pd.DataFrame, named: dict[str, str]) -> None:
    """Refuse a missing label (an empty field) of a plain CSV, rather than read it as ''."""
    for role in ("block", "source", "index", "replicate"):
        column = named.get(role)
        if column is None or frame[column].dtype.kind != "O":
            continue
        empty = np.flatnonzero(frame[column].astype(str).str.strip().to_numpy() == "")
        if empty.size:
            rows = ", ".join(str(r + 1) for r in empty[:10]) + (", ..." if empty.size > 10 else "")
            raise ValueError(
                f"{path}: missing {role} label (empty field in column {column!r}) in "
                f"{empty.size} data row(s): {rows}"
            )


def check_merged_labels(
    path: str | PathLike[str], frame: pd.DataFrame, named: dict[str, str], read_text
) -> None:
    """Refuse integer labels whose different texts pandas reads as one number ('01', '1').

    Zero-padded IDs (patients ``007`` and ``7``) would otherwise be merged into one block or
    source without a word. `read_text(columns)` reads those columns of the file as text.
    """
    roles = [r for r in ("block", "source", "index", "replicate") if named.get(r)]
    ints = {named[r]: r for r in roles if frame[named[r]].dtype.kind in "iu"}
    if not ints:
        return
    text = read_text(list(ints))
    for column, role in ints.items():
        pairs = pd.DataFrame({"value": frame[column].to_numpy(), "text": text[column].str.strip()})
        spellings = pairs.groupby("value")["text"].unique()
        merged = spellings[spellings.map(len) > 1]
        if merged.size:
            words = sorted(merged.iloc[0])[:3]
            raise ValueError(
                f"{path}: {role} labels {words} in column {column!r} are written differently "
                f"but read as the same number {merged.index[0]}: if they are different "
                f"{role}s, make the labels non-numeric (such as 'p{words[0]}'); if not, write "
                "them alike"
            )


def parse_losses(path: str | PathLike[str], text: pd.Series) -> np.ndarray:
    values = text.to_numpy()
    words = pd.Series(values).astype(str).str.strip().str.lower()
    if words.isin(["true", "false"]).all():
        # A bool column as pandas writes it (0-1 losses kept as bools), or as a spreadsheet
        # saves it (TRUE, FALSE): 1 for True, as from_arrays reads bool losses. Only a whole
        # column of them: a stray "True" among numbers is more likely a mistake, refused below.
        return (words == "true").to_numpy(dtype=float)
    try:
        parsed = np.asarray(values, dtype=float)
    except ValueError:
        for row, value in enumerate(values):
            try:
                float(value)
            except ValueError:
                what = (
                    "missing loss (empty field)"
                    if not str(value).strip()
                    else (f"non-numeric loss {value!r}")
                )
                hint = (
                    "; it has a decimal comma: write decimal points, or read the file with "
                    "pandas.read_csv(path, decimal=',') and pass the frame to "
                    "bayescv.losses.from_frame"
                    if re.fullmatch(r"\s*[-+]?\d*,\d+\s*", str(value))
                    else ""
                )
                raise ValueError(
                    f"{path}: {what} in column {text.name!r}, data row {row + 1}{hint}"
                ) from None
        raise  # pragma: no cover - numpy and float() disagree
    bad = np.flatnonzero(~np.isfinite(parsed))
    if bad.size:  # named here by its row in the file, not by its place in the table
        raise ValueError(
            f"{path}: NaN or infinite loss {values[bad[0]]!r} in column {text.name!r}, data "
            f"row {bad[0] + 1} ({bad.size} such row(s))"
        )
    return parsed
