"""Column options for reading a loss file, and the checks of a self-describing one against them.

Used by :mod:`bayescv.losses._io`: :func:`~bayescv.losses.read_table` takes column names for a
plain CSV; a NetCDF file or a CSV with bayescv's header line names its own columns.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from os import PathLike

import xarray as xr

from bayescv.losses._errors import TableFormatError, with_path
from bayescv.losses._frame import from_frame, to_frame

__all__ = ["Columns", "check_fixed", "with_scheme"]


@dataclass(frozen=True)
class Columns:
    """Column names and options for reading a plain CSV (None: the default name if present)."""

    loss: str = "loss"
    block: str = "block"
    source: str | None = None
    index: str | None = None
    replicate: str | None = None
    scheme: str | None = None
    replicate_kind: str | None = None

    def named(self, present: Sequence[str]) -> dict[str, str]:
        """Role → column: the given names, or the default names found in `present`."""
        out = {"loss": self.loss, "block": self.block}
        for role in ("source", "index", "replicate"):
            name = getattr(self, role)
            if name is not None or role in present:
                out[role] = role if name is None else name
        return out


def check_fixed(path: str | PathLike[str], columns: Columns, table: xr.Dataset, what: str) -> None:
    """Self-describing files: a column name other than the file's own is an error."""
    wanted = {"loss": columns.loss, "block": columns.block, "source": columns.source}
    wanted |= {"index": columns.index, "replicate": columns.replicate}
    for role, name in wanted.items():
        if name is None or (name == role and role in table.variables):
            continue
        has = [
            v for v in ("loss", "block", "source", "index", "replicate") if v in table.variables
        ]
        raise ValueError(
            f"{path} is {what}, with columns {has}; the {role} column {name!r} is not "
            "one of them (column names apply to plain CSV files)"
        )
    if columns.replicate_kind is not None and "replicate" not in table.dims:
        raise TableFormatError(
            f"{path} is {what} of one CV run (no 'replicate' dimension, replicate_kind "
            f"{table.attrs.get('replicate_kind')!r}); it cannot be read as "
            f"{columns.replicate_kind!r}: leave replicate_kind out",
            extra_attribute="replicate_kind",
        )
    if columns.replicate_kind is not None and columns.replicate_kind != table.attrs.get(
        "replicate_kind"
    ):
        raise ValueError(
            f"{path} is {what} with replicate_kind {table.attrs.get('replicate_kind')!r}; "
            f"it cannot be read as {columns.replicate_kind!r}"
        )


def with_scheme(path: str | PathLike[str], table: xr.Dataset, scheme: str | None) -> xr.Dataset:
    """Return the table, rebuilt under `scheme` when that differs from the stored one."""
    if scheme is None or scheme == table.attrs.get("scheme"):
        return table
    frame = to_frame(table)
    has = lambda c: c if c in frame.columns else None  # noqa: E731
    # one run taken out of several (table.isel(replicate=0)) keeps the attribute: not its kind
    kind = table.attrs.get("replicate_kind") if "replicate" in table.dims else None
    try:
        rebuilt = from_frame(
            frame, source=has("source"), index=has("index"), replicate=has("replicate"),
            scheme=scheme, replicate_kind=kind,
            loss_name=table.attrs.get("loss_name"),
        )  # fmt: skip
    except ValueError as error:
        raise with_path(path, error) from None
    rebuilt.attrs = {**table.attrs, "scheme": scheme}
    return rebuilt
