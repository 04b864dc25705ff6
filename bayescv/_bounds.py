"""Helpers of the interval bounds of :mod:`bayescv.intervals`: quantiles and flags."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from scipy import stats

__all__ = ["KINDS", "first_cause", "two_sided_quantile"]

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
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
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
