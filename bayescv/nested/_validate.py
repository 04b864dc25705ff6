"""Checks of :func:`bayescv.nested.nested_cv`'s options and data, made before any fit.

Private to :mod:`bayescv.nested`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["positive_int", "resolve_inflation_bounds"]


def positive_int(value: Any, name: str, *, minimum: int) -> int:
    """Return `value` as an int, or raise a ValueError unless it is an integer >= `minimum`.

    Parameters
    ----------
    value : Any
        The option's value.
    name : str
        The option's name, for the message.
    minimum : int
        The smallest value allowed.

    Returns
    -------
    int
        The value.

    Raises
    ------
    ValueError
        For a non-integer (a bool included) or a value below `minimum`.
    """
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def resolve_inflation_bounds(bounds: Any, k: int) -> tuple[float, float] | None:
    """Resolve ``inflation_bounds``: ``"code"`` is (1, √K), None no clipping, else (lo, hi).

    Parameters
    ----------
    bounds : "code", None or (float, float)
        The option's value.
    k : int
        The number of folds K.

    Returns
    -------
    (float, float) or None
        The bounds on the inflation factor.

    Raises
    ------
    ValueError
        For anything else, or unless ``0 <= lo <= hi``.
    """
    if bounds is None:
        return None
    if isinstance(bounds, str):
        if bounds != "code":
            raise ValueError(f'inflation_bounds must be "code", None or (lo, hi), got {bounds!r}')
        return (1.0, math.sqrt(k))
    try:
        lo, hi = (float(v) for v in bounds)
    except (TypeError, ValueError):
        raise ValueError(
            f'inflation_bounds must be "code", None or (lo, hi), got {bounds!r}'
        ) from None
    if not 0 <= lo <= hi:
        raise ValueError(f"inflation_bounds need 0 <= lo <= hi, got {bounds!r}")
    return (lo, hi)
