"""The range of a difference of two learners' losses, and comparison rows kept inside it.

Every interval of the package stays inside the range of what it estimates, or is moved onto
it and flagged ``truncated_to_range``. For a comparison that range is the one of a
difference of two learners' losses in [low, high]: [low − high, high − low].
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from bayescv._bounds import truncate_to_range

__all__ = ["cut_to_range", "difference_bounds"]


def difference_bounds(table: xr.Dataset) -> tuple[float, float]:
    """Return the range of a difference of two learners' losses in a fold-score table.

    Losses in [low, high] (the table's ``loss_range``) differ by at most high − low either
    way; unbounded losses give an unbounded range.

    Parameters
    ----------
    table : xarray.Dataset
        A fold-score table.

    Returns
    -------
    tuple of float

    Examples
    --------
    >>> from bayescv.fold_scores import fold_table
    >>> difference_bounds(fold_table([[0.9, 0.8], [0.7, 0.6]], metric="accuracy"))
    (-1.0, 1.0)
    """
    low, high = (float(v) for v in table.attrs.get("loss_range", (-np.inf, np.inf)))
    return low - high, high - low


def cut_to_range(rows: list[dict[str, Any]], bounds: tuple[float, float]) -> None:
    """Move each row's bounds that lie past `bounds` onto them, flagging the row.

    The fold-level rows are formed inside the range already
    (:func:`bayescv.intervals.normal_bounds`); the rows of the MCMC methods are quantiles of
    posteriors on the real line, which can reach past it (an accuracy difference's interval
    up to 1.11, say). Their probabilities are left as the posterior gives them.

    Parameters
    ----------
    rows : list of dict
        Comparison rows with ``lower``, ``upper`` and ``flag``; changed in place.
    bounds : (float, float)
        The range of the difference (:func:`difference_bounds`).

    Examples
    --------
    >>> rows = [{"lower": -0.4, "upper": 1.1, "flag": ""}, {"lower": 0.1, "upper": 0.2, "flag": ""}]
    >>> cut_to_range(rows, (-1.0, 1.0))
    >>> [(r["upper"], r["flag"]) for r in rows]
    [(1.0, 'truncated_to_range'), (0.2, '')]
    """
    lower, upper, flag = truncate_to_range(
        [row["lower"] for row in rows], [row["upper"] for row in rows],
        [row["flag"] for row in rows], bounds,
    )  # fmt: skip
    for row, lo, hi, f in zip(rows, lower, upper, flag, strict=True):
        row.update(lower=float(lo), upper=float(hi), flag=str(f))
