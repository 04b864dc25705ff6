"""Helpers of the interval bounds of :mod:`bayescv.intervals`: quantiles and flags."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from scipy import stats

from bayescv._names import did_you_mean

__all__ = ["KINDS", "first_cause", "truncate_to_range", "two_sided_quantile"]

#: Distributions of :func:`two_sided_quantile`.
KINDS = ("normal", "t")


def two_sided_quantile(level: float, kind: str, df: Any) -> Any:
    """Return the upper quantile ``0.5 + level / 2`` of the standard normal or of Student's t.

    Parameters
    ----------
    level : float
        Nominal coverage, in (0, 1).
    kind : {"normal", "t"}
        The distribution.
    df : array-like or None
        Degrees of freedom, required when ``kind="t"``.

    Returns
    -------
    float or ndarray
        The quantile (an array for array-like `df`).
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}{did_you_mean(kind, KINDS)}")
    upper_tail = 0.5 + level / 2
    if kind == "normal":
        return stats.norm.ppf(upper_tail)
    if df is None:
        raise ValueError('kind="t" needs the degrees of freedom df')
    df = np.asarray(df, dtype=float)
    if np.any(df <= 0):
        raise ValueError(f"degrees of freedom must be positive, got {df}")
    return stats.t.ppf(upper_tail, df)


def first_cause(causes: Mapping[str, np.ndarray], shape: tuple[int, ...]) -> np.ndarray:
    """Flag each element with the first of `causes` (name → boolean array) that applies.

    Parameters
    ----------
    causes : mapping of str to ndarray of bool
        Flag names, in order of precedence, and where each applies.
    shape : tuple of int
        Shape of the flags.

    Returns
    -------
    ndarray of str
        The name of the first cause that applies, ``""`` where none does.
    """
    flag = np.full(shape, "", dtype="<U18")
    for name, where in reversed(causes.items()):
        flag = np.where(where, name, flag)
    return flag


def truncate_to_range(
    lower: Any, upper: Any, flag: Any, bounds: tuple[float, float]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Move interval bounds past `bounds` onto them and flag the rows moved.

    Both bounds are clipped into ``[low, high]``: with an estimate outside the range (an
    extrapolated or control-variate one, or a posterior beyond it) the whole interval can
    lie past one end. ``"truncated_to_range"`` is appended to the flag of every row moved;
    NaN bounds are left as they are.

    Parameters
    ----------
    lower, upper : array-like of float
        The bounds.
    flag : array-like of str
        The rows' flags so far, ``""`` for none.
    bounds : (float, float)
        The range ``(low, high)``; an infinite end moves nothing.

    Returns
    -------
    lower, upper : ndarray of float
    flag : ndarray of str

    Examples
    --------
    >>> lower, upper, flag = truncate_to_range([-0.2, 0.1], [0.5, 1.3], ["", "zero_variance"], (0, 1))
    >>> lower.tolist(), upper.tolist(), flag.tolist()
    ([0.0, 0.1], [0.5, 1.0], ['truncated_to_range', 'zero_variance,truncated_to_range'])
    """
    lower, upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    flag = np.asarray(flag, dtype=str)
    low, high = float(bounds[0]), float(bounds[1])
    outside = (lower < low) | (upper > high)  # NaN compares False: left alone
    joined = np.char.add(np.char.add(flag, np.where(flag == "", "", ",")), "truncated_to_range")
    flag = np.where(outside, joined, flag)
    return np.clip(lower, low, high), np.clip(upper, low, high), flag
