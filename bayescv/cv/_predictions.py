"""Loss tables from ``cross_val_predict``-style predictions, with losses chosen by name.

:func:`losses_from_predictions` resolves the loss as :func:`bayescv.cv.cross_val_losses`
does (:func:`bayescv.cv.get_loss`, :func:`bayescv.cv.loss_functions.loss_range_for`) and
hands the rest to :func:`bayescv.losses.from_predictions`, which knows no loss by name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import xarray as xr

from bayescv.cv._splits import _warn_unshuffled
from bayescv.cv.loss_functions import LOSSES, Loss, get_loss, loss_range_for
from bayescv.losses import from_predictions

__all__ = ["losses_from_predictions"]


def losses_from_predictions(
    y_true: Any,
    y_pred: Any,
    folds: Any,
    *,
    loss: str | Loss | Callable[[Any, Any], Any],
    groups: Any = None,
    X: Any = None,
    classes: Any = None,
    estimator: Any = None,
    attrs: Mapping[str, Any] | None = None,
) -> xr.Dataset:
    """Build a loss table from out-of-fold predictions, with the loss given by name.

    Feed it what :func:`sklearn.model_selection.cross_val_predict` returned and the same
    `folds`: the table equals the one :func:`bayescv.cv.cross_val_losses` builds from the
    same estimator and folds (losses, ``block``, ``index``, ``source``, ``loss_name`` and
    ``loss_range``), without refitting anything.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,) or (n_samples, n_outputs)
        True targets.
    y_pred : array-like of shape (n_samples,) or (n_samples, n_classes)
        One out-of-fold prediction per sample: ``cross_val_predict(est, X, y, cv=folds)``
        for ``"zero_one"``, ``"squared"`` and ``"absolute"``; with
        ``method="predict_proba"`` for ``"log_loss"`` and ``"brier"`` (columns in the order
        of `classes`).
    folds : splitter, list of (train, test) or array-like of shape (n_samples,)
        The splits that produced `y_pred`, as in :func:`bayescv.losses.from_predictions`
        (a splitter is called with `X`, `y_true` and `groups`; give it the ``random_state``
        ``cross_val_predict`` used).
    loss : str, Loss or callable
        ``"zero_one"``, ``"squared"``, ``"absolute"``, ``"log_loss"``, ``"brier"``, a
        :class:`~bayescv.cv.Loss` or ``loss(y_true, y_pred) -> per-point array``
        (:func:`bayescv.cv.get_loss`).
    groups : array-like of shape (n_samples,), optional
        Source label of each sample (the ``source`` coordinate; given to a splitter that
        uses groups).
    X : array-like, optional
        Features, only for a splitter that looks at them.
    classes : array-like, optional
        The class of each column of a probability `y_pred`. Default ``np.unique(y_true)``,
        the order of ``cross_val_predict``'s columns. A DataFrame `y_pred` whose columns are
        named by the classes is read by name, whatever the order of its columns.
    estimator : estimator, optional
        Only recorded, as the ``estimator`` attribute (its repr).
    attrs : mapping, optional
        Further attributes.

    Returns
    -------
    xarray.Dataset
        A loss table (:mod:`bayescv.losses`).

    Raises
    ------
    ValueError
        For an unknown loss name, probabilities whose shape does not match the classes or
        that lie outside [0, 1], `classes` that repeat a label or miss one of `y_true`'s,
        0-1 loss predictions that are not labels of `y_true` (scores), or
        as :func:`bayescv.losses.from_predictions` (mismatched lengths, NaN predictions,
        test folds that do not partition the samples, ...).

    Warns
    -----
    UnshuffledFoldsWarning
        When `folds` is a ``KFold`` or ``StratifiedKFold`` that does not shuffle (the
        splitter ``cross_val_predict`` builds from an int): its folds follow the stored
        order of the rows.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.model_selection import KFold, cross_val_predict
    >>> X, y = make_classification(n_samples=60, random_state=0)
    >>> cv = KFold(5, shuffle=True, random_state=0)
    >>> proba = cross_val_predict(LogisticRegression(), X, y, cv=cv, method="predict_proba")
    >>> table = losses_from_predictions(y, proba, cv, loss="log_loss")
    >>> table.sizes["obs"], table.attrs["loss_name"], table.attrs["loss_range"]
    (60, 'log_loss', [0.0, inf])
    """
    loss_fn = get_loss(loss)
    if loss_fn.needs_classes:
        classes = np.unique(np.asarray(y_true)) if classes is None else np.asarray(classes)
        shape = np.shape(y_pred)
        if len(shape) != 2 or shape[1] != classes.size:
            raise ValueError(
                f"loss {loss_fn.name!r} needs class probabilities of shape (n_samples, "
                f"{classes.size}), one column per class in {classes.tolist()} "
                f"(cross_val_predict(..., method='predict_proba')); got shape {shape}"
            )
        _check_probabilities(loss_fn.name, y_true, y_pred, classes)
    elif loss_fn.response_method == "predict" and np.ndim(y_pred) == 2 and np.ndim(y_true) == 1:
        raise ValueError(
            f"loss {loss_fn.name!r} needs one prediction per point, shape "
            f"({len(y_true)},) (cross_val_predict(..., method='predict')); got shape "
            f"{np.shape(y_pred)}: class probabilities go with loss='log_loss' or 'brier'"
        )
    elif loss_fn == LOSSES["zero_one"]:
        _check_labels(y_true, y_pred, classes)
    extra = {} if estimator is None else {"estimator": repr(estimator)}
    table = from_predictions(
        y_true,
        y_pred,
        folds,
        loss=loss_fn,
        groups=groups,
        X=X,
        classes=classes,
        loss_name=loss_fn.name,
        loss_range=loss_range_for(loss_fn, y_true),
        attrs={**extra, **(attrs or {})},
    )
    _warn_unshuffled(folds, predictions=True)  # once the folds are known to be usable
    return table


def _check_probabilities(name: str, y_true: Any, y_pred: Any, classes: np.ndarray) -> None:
    """Refuse classes that do not name the labels, and columns that are not probabilities.

    Either mistake otherwise reads as a model that gave the true class probability 0 (an
    infinite log loss), or as a plain number (the Brier loss of a score).
    """
    labels = np.unique(np.asarray(y_true))
    if np.unique(classes).size != classes.size:
        raise ValueError(f"classes must not repeat a label, got {classes.tolist()}")
    missing = labels[~np.isin(labels, classes)]
    if missing.size:
        raise ValueError(
            f"y_true has label(s) {missing.tolist()[:5]} that are not in classes "
            f"{classes.tolist()}: classes names the column of each label in y_pred "
            "(the estimator's classes_; default np.unique(y_true))"
        )
    proba = np.asarray(y_pred, dtype=float)
    # Probabilities from predict_proba lie in [0, 1] up to rounding (about 1e-16).
    low, high = np.nanmin(proba, initial=0.0), np.nanmax(proba, initial=1.0)
    if low < -1e-8 or high > 1.0 + 1e-8:
        raise ValueError(
            f"loss {name!r} needs class probabilities in [0, 1]; y_pred has values from "
            f"{low:.3g} to {high:.3g} (decision_function scores or log-probabilities?): use "
            "cross_val_predict(..., method='predict_proba')"
        )


def _check_labels(y_true: Any, y_pred: Any, classes: Any) -> None:
    """Refuse 0-1 loss predictions that are not labels of `y_true` (scores, probabilities).

    ``cross_val_predict(..., method="predict")`` gives labels the folds' models saw, all
    labels of `y_true`; a score never equals a label, and every loss would silently be 1.
    """
    truth, pred = np.asarray(y_true), np.asarray(y_pred)
    if truth.ndim != 1 or pred.ndim != 1:
        return  # multi-output targets: compared output by output
    labels = np.unique(truth) if classes is None else np.union1d(truth, np.asarray(classes))
    foreign = ~np.isin(pred, labels)
    if pred.dtype.kind == "f":
        foreign &= ~np.isnan(pred)  # NaN predictions: from_predictions names them
    if foreign.any():
        raise ValueError(
            f"loss 'zero_one' compares predicted labels with y_true, but {int(foreign.sum())} "
            f"prediction(s), the first {pred[foreign][:1].tolist()[0]!r} at row "
            f"{int(np.flatnonzero(foreign)[0])}, are not labels of y_true "
            f"{labels.tolist()[:10]}: pass cross_val_predict(..., method='predict'), "
            "not scores or probabilities"
        )
