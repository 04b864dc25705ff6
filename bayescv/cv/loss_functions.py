"""Per-point loss functions, and which prediction method each one needs.

The built-in losses agree with scikit-learn's metrics: their mean over the test points is
:func:`sklearn.metrics.zero_one_loss`, :func:`~sklearn.metrics.mean_squared_error`,
:func:`~sklearn.metrics.mean_absolute_error`, :func:`~sklearn.metrics.log_loss` and
:func:`~sklearn.metrics.brier_score_loss` (tested). ``"log_loss"`` clips nothing: a true
class probability of 0 gives an infinite loss, which the loss table refuses. The scorer name
``"neg_log_loss"`` clips to [eps, 1 − eps] as :func:`sklearn.metrics.log_loss` does (a loss of
−log(eps) ≈ 36.04, :data:`LOG_LOSS_CAP`); the runners warn and record ``n_clipped``.
:func:`check_target` refuses class-label work (a classifier, or a loss that compares
labels) on a continuous target before any fit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from sklearn.base import is_classifier
from sklearn.utils.multiclass import type_of_target

from bayescv.cv._checks import _EPS, LOG_LOSS_CAP, _check_finite_target, _warn_clipped

__all__ = [
    "LOG_LOSS_CAP",
    "LOSSES",
    "SCORER_LOSSES",
    "Loss",
    "check_target",
    "get_loss",
    "loss_range_for",
    "make_loss",
]


@dataclass(frozen=True)
class Loss:
    """A per-point loss and the estimator method that produces its input.

    Parameters
    ----------
    name : str
        Name recorded in the loss table's ``loss_name`` attribute.
    func : callable
        ``func(y_true, y_pred) -> ndarray of shape (n,)``; for losses with
        ``needs_classes``, ``func(y_true, y_pred, classes)``.
    response_method : {"predict", "predict_proba"}
        Which estimator method gives ``y_pred``.
    needs_classes : bool
        Whether `func` takes the fitted estimator's ``classes_`` (the column order of
        ``predict_proba``).
    range : tuple of float, default (-inf, inf)
        The values the loss can take, ``(low, high)``: recorded in the loss table
        (``loss_range``), where every interval method keeps its bounds inside it.

    Examples
    --------
    A loss is called like its `func` and always returns floats, one per point:

    >>> import numpy as np
    >>> def absolute(y_true, y_pred):
    ...     return np.abs(y_true - y_pred)
    >>> loss = Loss("absolute", absolute, range=(0.0, np.inf))
    >>> loss(np.array([1, -2]), np.array([0, 0])).tolist()
    [1.0, 2.0]
    """

    name: str
    func: Callable[..., Any]
    response_method: str = "predict"
    needs_classes: bool = False
    range: tuple[float, float] = (-np.inf, np.inf)

    def __call__(self, y_true: Any, y_pred: Any, classes: Any = None) -> np.ndarray:
        """Return per-point losses as a float64 array of shape (n_samples,).

        Parameters
        ----------
        y_true : array-like of shape (n_samples,)
            True targets.
        y_pred : array-like
            Output of the estimator's `response_method`.
        classes : array-like, optional
            The estimator's ``classes_``, for losses that need it.

        Returns
        -------
        ndarray of shape (n_samples,)
            Per-point losses.
        """
        y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)  # a list has no arithmetic
        out = (
            self.func(y_true, y_pred, classes) if self.needs_classes else self.func(y_true, y_pred)
        )
        out = np.asarray(out, dtype=float)
        n = len(y_true)
        if out.shape != (n,):
            raise ValueError(
                f"loss {self.name!r} returned shape {out.shape}; a per-point loss must return "
                f"one value per test point, shape ({n},)"
            )
        return out

    def for_targets(self, y: Any) -> Loss:
        """Return the loss as it applies to a problem with targets `y`.

        The built-in Brier loss is binary, (1 − p_true)², or a sum over classes, by the
        number of classes of the *problem*: a fold's model trained without some class (a
        source holding a whole class, a rare class) still gets the problem's formula and
        range. Every other loss is returned unchanged.

        Parameters
        ----------
        y : array-like or None
            All the targets of the problem.

        Returns
        -------
        Loss
        """
        if self.func is not _brier or y is None:
            return self
        if np.unique(np.asarray(y)).size > 2:
            return replace(self, func=_brier_multiclass, range=(0.0, 2.0))
        return replace(self, func=_brier_binary, range=_UNIT)


def _one_column(y_true: np.ndarray, y_pred: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Targets and predictions of the same shape: a one-column y with 1-d predictions is 1-d.

    Some estimators return 1-d predictions for a target of shape (n, 1); broadcasting the
    two would give an (n, n) difference, whose row means have the right shape and wrong values.
    """
    if y_true.ndim == 2 and y_true.shape[1] == 1 and y_pred.ndim == 1:
        y_true = y_true[:, 0]
    elif y_pred.ndim == 2 and y_pred.shape[1] == 1 and y_true.ndim == 1:
        y_pred = y_pred[:, 0]
    if y_true.shape != y_pred.shape:
        raise ValueError(
            f"targets of shape {y_true.shape} and predictions of shape {y_pred.shape} do not "
            "match: the loss needs one prediction per target"
        )
    return y_true, y_pred


def _residual(y_true: Any, y_pred: Any) -> np.ndarray:
    try:
        y_true, y_pred = np.asarray(y_true, dtype=float), np.asarray(y_pred, dtype=float)
    except (TypeError, ValueError):
        kinds = [np.asarray(v).dtype for v in (y_true, y_pred)]
        raise ValueError(
            f"a squared or absolute error needs numbers, got targets and predictions of "
            f"dtype {kinds[0]} and {kinds[1]}; for class labels use loss='zero_one', "
            "'log_loss' or 'brier'"
        ) from None
    diff = np.subtract(*_one_column(y_true, y_pred))
    return diff if diff.ndim == 1 else diff.reshape(len(diff), -1)


def _squared(y_true: Any, y_pred: Any) -> np.ndarray:
    r = _residual(y_true, y_pred)
    return r**2 if r.ndim == 1 else (r**2).mean(axis=1)


def _absolute(y_true: Any, y_pred: Any) -> np.ndarray:
    r = _residual(y_true, y_pred)
    return np.abs(r) if r.ndim == 1 else np.abs(r).mean(axis=1)


def _zero_one(y_true: Any, y_pred: Any) -> np.ndarray:
    # Several outputs (multilabel, multi-output): a point is an error where any output is
    # wrong, as sklearn.metrics.zero_one_loss (subset accuracy) counts it.
    wrong = np.not_equal(*_one_column(np.asarray(y_true), np.asarray(y_pred)))
    return (wrong if wrong.ndim == 1 else wrong.reshape(len(wrong), -1).any(axis=1)).astype(float)


def _true_class_columns(y_true: Any, classes: Any) -> tuple[np.ndarray, np.ndarray]:
    """Column of each point's true class in ``predict_proba``; a mask of classes the model saw.

    `classes` is the column order (the estimator's ``classes_``), sorted or not.
    """
    if classes is None:
        raise ValueError(
            "a probability loss needs the classes of the predict_proba columns: the "
            "estimator has no classes_ (give it one, or pass classes= with the predictions)"
        )
    classes = np.asarray(classes)
    y_true = np.asarray(y_true)
    if y_true.ndim == 2 and y_true.shape[1] == 1:
        y_true = y_true[:, 0]
    if y_true.ndim != 1:
        raise ValueError(
            f"a probability loss needs one class label per point, got targets of shape "
            f"{y_true.shape} (multilabel or multi-output targets: use loss='zero_one')"
        )
    order = np.argsort(classes, kind="stable")
    at = np.searchsorted(classes[order], y_true).clip(0, classes.size - 1)
    pos = order[at]
    seen = classes[pos] == y_true
    return pos, seen


def _p_true(y_true: Any, proba: Any, classes: Any) -> np.ndarray:
    """Each point's probability of its true class; 0 for a class the model never saw."""
    proba = np.asarray(proba, dtype=float)
    pos, seen = _true_class_columns(y_true, classes)
    return np.where(seen, proba[np.arange(len(pos)), pos], 0.0)


def _log_loss(y_true: Any, proba: Any, classes: Any) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return -np.log(_p_true(y_true, proba, classes))


def _log_loss_clipped(y_true: Any, proba: Any, classes: Any) -> np.ndarray:
    # sklearn.metrics.log_loss: probabilities clipped to [eps, 1 - eps], eps of float64.
    return -np.log(np.clip(_p_true(y_true, proba, classes), _EPS, 1.0 - _EPS))


def _sklearn_log_loss(y_true: Any, proba: Any, classes: Any) -> np.ndarray:
    _warn_clipped([values := _log_loss_clipped(y_true, proba, classes)])  # clipped, says so
    return values


def _brier_binary(y_true: Any, proba: Any, classes: Any) -> np.ndarray:
    # scikit-learn's binary Brier score (p_positive − y)² is (1 − p_true)²; a model that saw
    # one class only gives the other probability 0.
    return (1.0 - _p_true(y_true, proba, classes)) ** 2


def _brier_multiclass(y_true: Any, proba: Any, classes: Any) -> np.ndarray:
    # The sum over every class of the problem; a class the model never saw has p = 0, and
    # adds 1 where it is the true class.
    proba = np.asarray(proba, dtype=float)
    pos, seen = _true_class_columns(y_true, classes)
    onehot = np.zeros_like(proba)
    onehot[np.flatnonzero(seen), pos[seen]] = 1.0
    return ((proba - onehot) ** 2).sum(axis=1) + (~seen)


def _brier(y_true: Any, proba: Any, classes: Any) -> np.ndarray:
    # Binary or multiclass by the classes the model saw; a CV runner pins the choice to the
    # problem's classes instead (Loss.for_targets), since a fold's model may miss some.
    multiclass = np.asarray(classes).size > 2
    return (_brier_multiclass if multiclass else _brier_binary)(y_true, proba, classes)


_UNIT, _POSITIVE = (0.0, 1.0), (0.0, np.inf)

#: The built-in losses. The Brier loss of a binary problem lies in [0, 1]; with more classes
#: the sum over classes lies in [0, 2], which the CV runner records (:func:`loss_range_for`).
LOSSES: dict[str, Loss] = {
    "zero_one": Loss("zero_one", _zero_one, range=_UNIT),
    "squared": Loss("squared", _squared, range=_POSITIVE),
    "absolute": Loss("absolute", _absolute, range=_POSITIVE),
    "log_loss": Loss("log_loss", _log_loss, "predict_proba", needs_classes=True, range=_POSITIVE),
    "brier": Loss("brier", _brier, "predict_proba", needs_classes=True, range=_UNIT),
}
#: The loss of the scorer ``"neg_log_loss"``: the log loss clipped as scikit-learn clips it.
_SKLEARN_LOG_LOSS = replace(LOSSES["log_loss"], func=_sklearn_log_loss)


def clips(loss: Loss) -> bool:
    """Return whether `loss` is the clipped log loss of the scorer ``"neg_log_loss"``."""
    return loss.func is _sklearn_log_loss


def loss_range_for(loss: Loss, y: Any = None) -> tuple[float, float]:
    """Return the range a loss table of `loss` on targets `y` records.

    Parameters
    ----------
    loss : Loss
        The loss.
    y : array-like, optional
        The targets; with more than two classes the Brier loss lies in [0, 2].

    Returns
    -------
    tuple of float
    """
    low, high = loss.for_targets(y).range
    return (float(low), float(high))


def make_loss(
    func: Callable[[Any, Any], Any],
    *,
    response_method: str = "predict",
    name: str | None = None,
    range: tuple[float, float] = (-np.inf, np.inf),
) -> Loss:
    """Wrap a callable ``func(y_true, y_pred) -> per-point array`` as a :class:`Loss`.

    Parameters
    ----------
    func : callable
        Returns one loss per test point.
    response_method : {"predict", "predict_proba"}, default "predict"
        Estimator method whose output is passed as ``y_pred``.
    name : str, optional
        Defaults to ``func.__name__``.
    range : tuple of float, default (-inf, inf)
        The values the loss can take (unbounded unless declared); intervals stay inside it.

    Returns
    -------
    Loss
        The wrapped loss.

    Examples
    --------
    >>> import numpy as np
    >>> def absolute(y_true, y_pred):
    ...     return np.abs(y_true - y_pred)
    >>> loss = make_loss(absolute, range=(0, np.inf))
    >>> loss.name, loss.range, loss.response_method
    ('absolute', (0.0, inf), 'predict')
    """
    if response_method not in ("predict", "predict_proba"):
        raise ValueError(
            f"response_method must be 'predict' or 'predict_proba', got {response_method!r}"
        )
    low, high = (float(v) for v in range)
    if not low < high:
        raise ValueError(f"range must be (low, high) with low < high, got {range!r}")
    return Loss(
        name or getattr(func, "__name__", "custom"), func, response_method, range=(low, high)
    )


#: scikit-learn scorer names that are means of a per-point loss, and that loss. A scorer
#: returns greater-is-better values (accuracy, negated errors); the loss table holds the loss,
#: lower is better: "accuracy" gives the 0-1 loss 1 − accuracy, "neg_mean_squared_error" the
#: squared error, "neg_log_loss" the log loss clipped as scikit-learn clips it.
SCORER_LOSSES = {
    "accuracy": "zero_one",
    "neg_mean_squared_error": "squared",
    "neg_mean_absolute_error": "absolute",
    "neg_log_loss": "log_loss",
    "neg_brier_score": "brier",
}


def _unknown_loss_message(loss: str) -> str:
    from sklearn.metrics import get_scorer_names

    if loss in get_scorer_names():
        return (
            f"{loss!r} is a scikit-learn scorer but not a mean of per-point losses, so it has "
            "no per-point loss table; compare its fold scores instead "
            "(cross_validate(..., return_indices=True) and bayescv.from_cross_validate), or "
            f"use a per-point loss: {sorted(LOSSES)} or the scorers {sorted(SCORER_LOSSES)}"
        )
    return f"unknown loss {loss!r}; expected one of {sorted(LOSSES)}, {sorted(SCORER_LOSSES)} or a callable"


def get_loss(loss: str | Loss | Callable[[Any, Any], Any] | None, estimator: Any = None) -> Loss:
    """Resolve a loss given by name, as a :class:`Loss`, or as a callable.

    Parameters
    ----------
    loss : str, Loss, callable or None
        One of ``"zero_one"``, ``"squared"``, ``"absolute"``, ``"log_loss"``, ``"brier"``, or
        a scikit-learn scorer name that is a mean of one of them (:data:`SCORER_LOSSES`:
        ``"accuracy"`` gives the 0-1 loss, ``"neg_mean_squared_error"`` the squared error,
        ``"neg_log_loss"`` the log loss with probabilities clipped to [eps, 1 − eps] as
        scikit-learn's scorer clips them; the table holds the loss, lower is better); a
        :class:`Loss`; a callable ``loss(y_true, y_pred)`` (given ``predict`` output); or
        None for ``"zero_one"`` with classifiers and ``"squared"`` otherwise.
    estimator : estimator, optional
        Used only to choose the default.

    Returns
    -------
    Loss
        The resolved loss.

    Raises
    ------
    ValueError
        For an unknown loss name, or a scorer that is not a mean of per-point losses
        (``"roc_auc"``, ``"f1"``, ``"r2"``: compare fold scores instead).

    Examples
    --------
    The scorer ``"accuracy"`` is the mean of the 0-1 loss (lower is better), and the default
    loss follows the estimator:

    >>> from sklearn.linear_model import LogisticRegression, Ridge
    >>> get_loss("accuracy").name
    'zero_one'
    >>> get_loss(None, Ridge()).name, get_loss(None, LogisticRegression()).name
    ('squared', 'zero_one')
    >>> get_loss("log_loss").response_method
    'predict_proba'
    """
    if loss is None:
        classifier = estimator is not None and is_classifier(estimator)
        return LOSSES["zero_one" if classifier else "squared"]
    if isinstance(loss, Loss):
        return loss
    if isinstance(loss, str):
        if loss == "neg_log_loss":
            return _SKLEARN_LOG_LOSS
        if loss in SCORER_LOSSES:
            return LOSSES[SCORER_LOSSES[loss]]
        if loss not in LOSSES:
            raise ValueError(_unknown_loss_message(loss))
        return LOSSES[loss]
    if callable(loss):
        return make_loss(loss)
    raise TypeError(f"loss must be a name, a Loss or a callable, not {type(loss).__name__}")


def check_label_predictions(y_pred: Any, loss: Loss, estimator: Any) -> None:
    """Refuse 0-1 losses of predictions that cannot be class labels (a regressor's).

    :func:`check_target` lets integer targets through, which a regressor fits happily; its
    predictions are then continuous, never equal a label, and every 0-1 loss would be 1.
    scikit-learn's ``accuracy`` scorer refuses the same fold ("Classification metrics can't
    handle a mix of ... and continuous targets"). A classifier predicts labels of its
    training targets, which :func:`check_target` has found not continuous, so a non-integer
    float prediction is never a label.

    Parameters
    ----------
    y_pred : array-like
        The output of the estimator's ``predict`` on one test set.
    loss : Loss
        The resolved loss; only the built-in 0-1 loss is checked.
    estimator : scikit-learn estimator
        Named in the message.

    Raises
    ------
    ValueError
        When `loss` is the 0-1 loss and `y_pred` holds finite non-integer values.
    """
    if loss.func is not _zero_one:
        return
    pred = np.asarray(y_pred)
    if pred.dtype.kind != "f":
        return
    fractional = np.isfinite(pred) & (pred != np.round(pred))
    if fractional.any():
        raise ValueError(
            f"loss 'zero_one' compares predicted class labels with y, but "
            f"{type(estimator).__name__}.predict returned {int(fractional.sum())} non-integer "
            f"value(s), the first {float(pred[fractional][0]):.6g}: continuous predictions (a regressor's) "
            "are not labels and every 0-1 loss would be 1; use a classifier, or loss='squared' "
            "or 'absolute' with a regressor"
        )


def check_target(estimator: Any, y: Any, loss: Loss) -> None:
    """Refuse class-label work on a continuous target, before anything is fitted.

    A classifier cannot be fitted to a continuous target (scikit-learn refuses it only at the
    first fit), and the zero-one, log and Brier losses compare class labels: on a
    continuous target every zero-one loss of a regressor is 1 (its predictions never equal
    the targets exactly), an interval "1 [1, 1]" that looks like a result. A target is
    continuous when :func:`sklearn.utils.multiclass.type_of_target` says so (floats that are
    not all integers); integer-valued targets pass, as scikit-learn reads them as classes.

    Parameters
    ----------
    estimator : scikit-learn estimator
        The learner.
    y : array-like
        The targets.
    loss : Loss
        The resolved loss.

    Raises
    ------
    ValueError
        When `y` has a missing (NaN, None) or infinite target, or is continuous and
        `estimator` is a classifier or `loss` compares labels.
    """
    _check_finite_target(y)
    classifier = is_classifier(estimator)
    labels_loss = loss.needs_classes or loss == LOSSES["zero_one"]
    if not (classifier or labels_loss):
        return
    kind = type_of_target(y, input_name="y")
    if not kind.startswith("continuous"):
        return
    what = (
        f"the estimator ({type(estimator).__name__}) is a classifier"
        if classifier
        else f"loss {loss.name!r} compares class labels"
    )
    raise ValueError(
        f"y is a continuous target (type_of_target: {kind!r}), not class labels, and {what}; "
        "use a regressor with loss 'squared' or 'absolute'"
    )
