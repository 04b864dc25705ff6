"""Which interval kind applies to a loss table."""

from __future__ import annotations

import xarray as xr

from bayescv.losses import effective_range, is_binary, loss_range

__all__ = ["KINDS", "resolve_kind"]

KINDS = ("auto", "score", "normal", "t", "log")


def resolve_kind(kind: str, losses: xr.Dataset) -> str:
    """Return the interval kind to use for `losses`.

    ``"auto"`` is ``"score"`` for 0-1 tables, else ``"normal"``.

    Parameters
    ----------
    kind : str
        One of :data:`KINDS`.
    losses : xarray.Dataset
        A loss table or its block moments.

    Returns
    -------
    str

    Raises
    ------
    ValueError
        For an unknown kind, ``"log"`` on losses that can be negative, ``"score"`` on losses
        outside [0, 1].
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if kind == "auto":
        return "score" if is_binary(losses) else "normal"
    # A 0-1 table is in [0, 1] whether or not it declares a range (effective_range).
    if kind == "log" and effective_range(losses)[0] < 0:
        raise ValueError(
            "kind='log' is for losses that are at least 0; this table's loss range starts at "
            f"{loss_range(losses)[0]} (declare it with loss_range= if the losses are positive)"
        )
    if kind == "score":
        low, high = loss_range(losses)
        if not (low >= 0 and high <= 1) and not is_binary(losses):
            raise ValueError(
                "kind='score' is for losses in [0, 1] (0-1 or Brier losses); this table's "
                f"loss range is [{low}, {high}]"
            )
    return kind
