"""Checks of the CV runners that say what to do.

A missing prediction method, missing targets, and log losses clipped as scikit-learn clips
them.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

_EPS = float(np.finfo(np.float64).eps)
#: The largest value of the clipped log loss of ``"neg_log_loss"``: −log(eps), eps of float64.
LOG_LOSS_CAP = float(-np.log(_EPS))


def _check_response(estimator: Any, loss: Any) -> None:
    """Refuse a loss whose prediction method the estimator lacks, saying how to get it.

    An estimator with a ``probability`` parameter that is off (``SVC``, ``NuSVC``, alone or
    inside a pipeline or meta-estimator; False, or scikit-learn 1.9's ``"deprecated"``
    default) has no ``predict_proba`` until it is True; scikit-learn 1.9 deprecates the
    parameter for :class:`~sklearn.calibration.CalibratedClassifierCV`, which gives any
    classifier one.
    """
    if loss.response_method not in ("predict", "predict_proba"):
        raise ValueError(f"unknown response method {loss.response_method!r}")
    if hasattr(estimator, loss.response_method):
        return
    hint = ""
    if loss.response_method == "predict_proba" and hasattr(estimator, "get_params"):
        off = [
            name
            for name, value in estimator.get_params(deep=True).items()
            if (name == "probability" or name.endswith("__probability"))
            and (value is False or (isinstance(value, str) and value == "deprecated"))
        ]
        if off:
            hint = (
                f": set {off[0]}=True (estimator.set_params({off[0]}=True)), or, as "
                "scikit-learn >= 1.9 advises, wrap the estimator in "
                "sklearn.calibration.CalibratedClassifierCV(..., ensemble=False)"
            )
    raise ValueError(
        f"loss {loss.name!r} needs {type(estimator).__name__}.{loss.response_method}, "
        f"which it lacks{hint}"
    )


def _check_finite_target(y: Any) -> None:
    """Refuse missing or infinite targets by row, before any fit.

    scikit-learn refuses them only at the first fit ("Input y contains NaN"), and for a
    classifier :func:`~sklearn.utils.multiclass.type_of_target` first warns about casting
    NaN to int.
    """
    values = np.asarray(y)
    if values.dtype.kind == "O":
        bad = np.asarray(pd.isna(values))
    elif values.dtype.kind in "fc":
        bad = ~np.isfinite(values)
    else:
        return
    if bad.any():
        rows = np.flatnonzero(bad.reshape(len(values), -1).any(axis=1))
        raise ValueError(
            f"y has {rows.size} point(s) with a missing (NaN, None) or infinite target, the "
            f"first at row {int(rows[0])}: every point needs a target; drop those rows first"
        )


def clipped_count(values: Any) -> int:
    """Count the losses that the clipped log loss of ``"neg_log_loss"`` capped at −log(eps)."""
    return int((np.asarray(values) >= LOG_LOSS_CAP).sum())


def _warn_clipped(losses: Sequence[np.ndarray]) -> None:
    """Warn with the number of points whose log loss ``"neg_log_loss"`` clipped.

    Their true class probability was below eps (2.2e-16, hard 0/1 probabilities or a class
    absent from a training fold), and their loss is −log(eps) ≈ 36.04 in place of infinity.
    """
    values = np.concatenate([np.ravel(v) for v in losses]) if losses else np.empty(0)
    clipped = clipped_count(values)
    if clipped:
        warnings.warn(
            f"loss 'neg_log_loss': {clipped} of {values.size} test point(s) had a true class "
            "probability below eps (2.2e-16) and were clipped to it, as scikit-learn's "
            f"log_loss clips: their loss is -log(eps) = {LOG_LOSS_CAP:.2f}, not infinite; "
            "loss='log_loss' refuses them instead",
            UserWarning,
            stacklevel=3,
        )
