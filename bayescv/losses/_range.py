"""The range of a loss table's losses, and whether they are 0-1 losses.

A loss table records the values its loss can take in the attribute ``loss_range``,
``[low, high]`` (the CV runner writes the :class:`bayescv.cv.Loss`' range; a table built by
hand may declare one). Every interval method keeps its bounds inside it, by construction or
truncated with a flag (:func:`bayescv.intervals.normal_bounds`). A table without the
attribute whose ``loss_name`` is a built-in loss takes that loss' range; any other is
unbounded.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

__all__ = ["check_range", "effective_range", "is_binary", "loss_range"]

#: Ranges of the built-in losses by name, for tables that declare none. The Brier loss lies
#: in [0, 1] for two classes and in [0, 2] for more (a sum over the classes); the CV runner
#: records the problem's, but a table that declares none does not say how many classes there
#: were, so it takes the range that holds both.
_BUILT_IN = {
    "zero_one": (0.0, 1.0),
    "brier": (0.0, 2.0),
    "squared": (0.0, np.inf),
    "absolute": (0.0, np.inf),
    "log_loss": (0.0, np.inf),
}


def as_range(value: Any, name: str = "loss_range") -> tuple[float, float]:
    """``(low, high)`` from a declared range, or a ValueError naming `name`."""
    try:
        low, high = (float(v) for v in np.asarray(value, dtype=float).ravel())
    except (TypeError, ValueError) as err:
        raise ValueError(f"{name} must be [low, high], got {value!r}") from err
    if np.isnan(low) or np.isnan(high) or not low < high:
        raise ValueError(f"{name} must be [low, high] with low < high, got {value!r}")
    return low, high


def loss_range(table: xr.Dataset) -> tuple[float, float]:
    """Return the range ``(low, high)`` of a loss table's losses.

    Parameters
    ----------
    table : xarray.Dataset
        A loss table.

    Returns
    -------
    tuple of float
        The declared ``loss_range``; else the range of a built-in ``loss_name``; else
        ``(-inf, inf)``. Loss differences (:func:`bayescv.loss_differences`) of a loss in
        [a, b] lie in [a − b, b − a].

    Examples
    --------
    >>> from bayescv.losses import from_arrays
    >>> loss_range(from_arrays([0, 1, 1, 0], [0, 0, 1, 1], loss_name="zero_one"))
    (0.0, 1.0)
    """
    if "loss_range" in table.attrs:
        return as_range(table.attrs["loss_range"])
    return _BUILT_IN.get(str(table.attrs.get("loss_name")), (-np.inf, np.inf))


def is_binary(table: xr.Dataset) -> bool:
    """Return whether every loss of the table is exactly 0 or 1 (a 0-1 loss table).

    A table whose range (:func:`loss_range`) is declared and reaches outside [0, 1] is not
    one, whatever its values: the differences of two learners' 0-1 losses lie in [−1, 1] and
    may happen to be all 0 or 1.

    Parameters
    ----------
    table : xarray.Dataset
        A loss table, or its block moments (:func:`bayescv.moments.block_moments`): losses
        in [0, 1] (the declared ``loss_range``) have Σx² ≤ Σx, with equality exactly when
        every loss is 0 or 1, so the moments' ``Q`` equals their ``S``.

    Returns
    -------
    bool

    Examples
    --------
    >>> from bayescv.losses import from_arrays
    >>> is_binary(from_arrays([0, 1, 1, 0], [0, 0, 1, 1])), is_binary(from_arrays([0, 0.5, 1, 0], [0, 0, 1, 1]))
    (True, False)
    >>> is_binary(from_arrays([0, 1, 1, 0], [0, 0, 1, 1], loss_range=(-1, 1)))
    False
    """
    low, high = loss_range(table)
    within = low >= 0 and high <= 1
    if "loss" not in table.data_vars:
        if not within or "Q" not in table.data_vars:
            return False
        s_sum, q_sum = np.asarray(table["S"].values), np.asarray(table["Q"].values)
        return bool(np.allclose(q_sum, s_sum, rtol=1e-12, atol=1e-9))
    declared = np.isfinite(low) or np.isfinite(high) or "loss_range" in table.attrs
    if declared and not within:
        return False
    values = np.asarray(table["loss"].values).ravel()
    # Most tables that are not 0-1 show it in their first values: skip the pass over all.
    return (
        bool(values.size)
        and _zero_one(values[:_HEAD])
        and (values.size <= _HEAD or _zero_one(values))
    )


#: Values :func:`is_binary` looks at before it reads the whole table.
_HEAD = 4096


def _zero_one(values: np.ndarray) -> bool:
    return bool(np.isin(values, (0.0, 1.0)).all())


def effective_range(table: xr.Dataset) -> tuple[float, float]:
    """Return the range that intervals of the table's mean are kept in.

    The declared range (:func:`loss_range`), or [0, 1] for a table of 0-1 losses that declares
    none (read from a plain CSV, say), which :func:`is_binary` already reads as 0-1 losses.

    Parameters
    ----------
    table : xarray.Dataset
        A loss table, or its block moments.

    Returns
    -------
    tuple of float

    Examples
    --------
    >>> from bayescv.losses import from_arrays
    >>> effective_range(from_arrays([0, 1, 0, 0], [0, 0, 1, 1]))
    (0.0, 1.0)
    >>> effective_range(from_arrays([0.2, 1.5, 0, 0], [0, 0, 1, 1]))
    (-inf, inf)
    """
    if "loss" in table.data_vars and is_binary(table):
        return (0.0, 1.0)
    return loss_range(table)


def check_range(table: xr.Dataset, values: np.ndarray) -> None:
    """Raise a ValueError naming the first loss outside the table's range.

    The range is the declared ``loss_range``, or else that of a built-in ``loss_name``
    (:func:`loss_range`): losses named ``"squared"`` that hold signed residuals would
    otherwise give intervals cut at 0 around a negative estimate.

    Parameters
    ----------
    table : xarray.Dataset
        The loss table (its attrs).
    values : ndarray
        Its finite losses.
    """
    if "loss_range" in table.attrs:
        check_within(values, as_range(table.attrs["loss_range"]))
        return
    name = str(table.attrs.get("loss_name"))
    if name in _BUILT_IN:
        low, high = _BUILT_IN[name]
        check_within(
            values,
            (low, high),
            described=f"the range [{low:g}, {high:g}] of the built-in loss {name!r}",
            hint=(
                "; pass the per-point losses (for squared errors, (y - prediction)**2), or "
                "another loss_name, or declare the range with loss_range="
            ),
        )


def check_within(
    values: np.ndarray,
    bounds: tuple[float, float],
    name: str = "loss_range",
    what: str = "loss(es)",
    where: str = "position",
    *,
    tolerance: float = 0.0,
    described: str | None = None,
    hint: str = "",
) -> None:
    """Raise a ValueError naming the count and the first of `values` outside `bounds`.

    `tolerance` lets values that far past an end through (rounding); `described` replaces
    "the declared `name` [low, high]" in the message, and `hint` ends it.
    """
    low, high = bounds
    outside = (values < low - tolerance) | (values > high + tolerance)
    if outside.any():
        first = np.argwhere(outside)[0].tolist()
        described = described or f"the declared {name} [{low}, {high}]"
        raise ValueError(
            f"{int(outside.sum())} {what} lie outside {described}, "
            f"the first {float(values[tuple(first)])!r} at {where} {first}{hint}"
        )
