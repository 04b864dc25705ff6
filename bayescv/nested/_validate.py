"""Checks of :func:`bayescv.nested.nested_cv`'s options and data, made before any fit.

Private to :mod:`bayescv.nested`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from bayescv._extras import check_n_jobs

__all__ = [
    "check_jobs_and_estimator",
    "check_response",
    "n_model_fits",
    "positive_int",
    "repetitions",
    "resolve_inflation_bounds",
]


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


def repetitions(n_splits: Any, n_repeats: Any, n_bias_repeats: Any) -> tuple[int, int, int]:
    """Return K, the nested repetitions and the plain-CV ones, checked.

    Parameters
    ----------
    n_splits, n_repeats, n_bias_repeats : int
        The options of :func:`bayescv.nested.nested_cv` (`n_bias_repeats` None: ⌈n_repeats/5⌉).

    Returns
    -------
    (int, int, int)
        ``(K, n_repeats, n_bias_repeats)``.

    Raises
    ------
    ValueError
        For K below 3, no nested repetition, or a negative number of plain-CV ones.

    Examples
    --------
    >>> repetitions(10, 50, None)
    (10, 50, 10)
    """
    k = positive_int(n_splits, "n_splits", minimum=3)
    n_reps = positive_int(n_repeats, "n_repeats", minimum=1)
    n_bias = (
        math.ceil(n_reps / 5)
        if n_bias_repeats is None
        else positive_int(n_bias_repeats, "n_bias_repeats", minimum=0)
    )
    return k, n_reps, n_bias


def n_model_fits(k: int, n_repeats: int, n_bias_repeats: int) -> int:
    """Return the models nested CV fits: K + K(K−1)/2 per nested repetition, K per plain one.

    A model trained without folds {i, j} serves both outer folds i and j (Bates, Hastie &
    Tibshirani 2024, Algorithm 1), hence K(K−1)/2 inner fits, and K outer ones.

    Parameters
    ----------
    k, n_repeats, n_bias_repeats : int
        As :func:`repetitions` returns them.

    Returns
    -------
    int

    Examples
    --------
    >>> n_model_fits(10, 50, 10)  # 50 * (10 + 45) + 10 * 10
    2850
    """
    return n_repeats * (k + k * (k - 1) // 2) + n_bias_repeats * k


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


def check_jobs_and_estimator(n_jobs: Any, estimator: Any) -> None:
    """Refuse an `n_jobs` joblib gives no meaning (0, a bool) and an estimator that is none.

    Examples
    --------
    >>> check_jobs_and_estimator(1, None)
    Traceback (most recent call last):
    ...
    TypeError: estimator must be a scikit-learn estimator (with fit), got None
    """
    check_n_jobs(n_jobs)
    if estimator is None or not hasattr(estimator, "fit"):
        raise TypeError(
            f"estimator must be a scikit-learn estimator (with fit), got {estimator!r}"
        )


def check_response(estimator: Any, loss_fn: Any) -> None:
    """Refuse an estimator without the prediction method the loss reads."""
    if not hasattr(estimator, loss_fn.response_method):
        raise ValueError(
            f"loss {loss_fn.name!r} needs {type(estimator).__name__}.{loss_fn.response_method}, "
            "which it lacks"
        )
