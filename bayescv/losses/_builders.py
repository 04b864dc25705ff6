"""Loss tables from CV predictions users already have.

:func:`from_predictions` turns :func:`sklearn.model_selection.cross_val_predict`-style
predictions (one per sample) and the splits that made them into the table
:func:`bayescv.cv.cross_val_losses` would have built. Re-exported by :mod:`bayescv.losses`
(as is :func:`bayescv.losses.from_elpd`, for pointwise ELPD).

This module sits below :mod:`bayescv.cv` and knows none of its losses: :func:`from_predictions`
takes any callable ``loss(y_true, y_pred) -> per-point array``, and
:func:`bayescv.cv.losses_from_predictions` is the same function with losses chosen by name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr
from sklearn.utils.metadata_routing import get_routing_for_object

from bayescv._provenance import shuffles
from bayescv.losses._schema import from_arrays

__all__ = ["from_predictions"]

#: ArviZ's ``scale`` of an ELPDData and the factor from the log scale to it.


def from_predictions(
    y_true: Any,
    y_pred: Any,
    folds: Any,
    *,
    loss: Callable[..., Any],
    groups: Any = None,
    X: Any = None,
    classes: Any = None,
    loss_name: str | None = None,
    loss_range: Any = None,
    attrs: Mapping[str, Any] | None = None,
) -> xr.Dataset:
    """Build a loss table from out-of-fold predictions and the splits that produced them.

    The table is the one :func:`bayescv.cv.cross_val_losses` builds when it runs the same
    folds: the same losses, ``block`` labels (the fold number in the order of `folds`, or the
    held-out source when every test fold holds exactly one source), ``index`` and
    ``source``. For losses chosen by name (``"squared"``, ``"log_loss"``, ...) use
    :func:`bayescv.cv.losses_from_predictions`, which calls this function.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,) or (n_samples, n_outputs)
        True targets.
    y_pred : array-like of shape (n_samples,) or (n_samples, n_columns)
        One out-of-fold prediction per sample, in the rows of `y_true`, as
        :func:`~sklearn.model_selection.cross_val_predict` returns them: class labels,
        values, probabilities of shape (n_samples, n_classes) or decision values, whatever
        `loss` needs.
    folds : splitter, list of (train, test) or array-like of shape (n_samples,)
        The splits that produced `y_pred`, whose test sets must partition the samples (one
        run of CV, as ``cross_val_predict`` requires): a scikit-learn splitter (called as
        ``folds.split(X, y_true, groups)``, `groups` given only if it uses them; set its
        ``random_state`` to get the folds ``cross_val_predict`` used), an explicit list of
        (train, test) index pairs, or the fold label of every sample (which become the
        ``block`` labels).
    loss : callable
        ``loss(y_true, y_pred) -> ndarray of shape (n_samples,)``, the loss of each point.
        A :class:`bayescv.cv.Loss` works too (its name, range and, for losses of
        probabilities, `classes` are used).
    groups : array-like of shape (n_samples,), optional
        Source label of each sample, recorded as the ``source`` coordinate and given to a
        splitter that uses groups.
    X : array-like of shape (n_samples, n_features), optional
        Features, only for a splitter that looks at them (none of scikit-learn's does);
        otherwise a placeholder of the right length is passed.
    classes : array-like, optional
        The class of each column of a probability `y_pred`, for a :class:`bayescv.cv.Loss`
        that needs them. Default ``np.unique(y_true)``: ``cross_val_predict`` orders the
        columns so. A DataFrame `y_pred` whose columns are named by the classes is read by
        name, whatever the order of its columns.
    loss_name : str, optional
        Recorded as ``loss_name``. Default: the loss's ``name`` or ``__name__``.
    loss_range : (float, float), optional
        The values the loss can take (:func:`bayescv.losses.loss_range`). Default: the
        loss's ``range`` if it has one, else the range of a built-in `loss_name`.
    attrs : mapping, optional
        Further attributes, for example ``{"estimator": repr(model)}``.

    Returns
    -------
    xarray.Dataset
        A loss table (:mod:`bayescv.losses`) with dim ``obs``; attributes ``cv`` (the
        splits) and ``n_splits`` as :func:`bayescv.cv.cross_val_losses` records them.

    Raises
    ------
    ValueError
        On mismatched lengths, NaN or infinite predictions or targets, a loss name (use
        :func:`bayescv.cv.losses_from_predictions`), a loss of the wrong shape or a NaN or
        infinite loss, test folds that do not partition the samples (a sample in no test
        fold or in two), a fold whose training and test sets overlap, or a bad loss table
        (:func:`bayescv.losses.validate`).
    TypeError
        If `loss` is not callable.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_regression
    >>> from sklearn.linear_model import Ridge
    >>> from sklearn.model_selection import KFold, cross_val_predict
    >>> X, y = make_regression(n_samples=40, n_features=3, noise=1.0, random_state=0)
    >>> cv = KFold(4, shuffle=True, random_state=0)
    >>> pred = cross_val_predict(Ridge(), X, y, cv=cv)
    >>> def squared(y_true, y_pred):
    ...     return (y_true - y_pred) ** 2
    >>> table = from_predictions(y, pred, cv, loss=squared, loss_range=(0, np.inf))
    >>> table.sizes["obs"], np.unique(table["block"]).tolist()
    (40, [0, 1, 2, 3])
    """
    y_true = np.asarray(y_true)
    if getattr(loss, "needs_classes", False):
        y_pred = _columns_by_class(y_pred, np.unique(y_true) if classes is None else classes)
    y_pred = np.asarray(y_pred)
    if y_true.ndim == 0 or y_true.size == 0:
        raise ValueError("empty input: y_true needs one target per sample")
    n = len(y_true)
    if y_pred.ndim == 0 or len(y_pred) != n:
        raise ValueError(
            f"mismatched lengths: y_true has {n} samples but y_pred has shape {y_pred.shape}; "
            "give one out-of-fold prediction per sample"
        )
    _check_finite(y_pred, "y_pred")
    _check_finite(y_true, "y_true")
    source = None if groups is None else np.asarray(groups)
    if source is not None and (source.ndim != 1 or len(source) != n):
        raise ValueError(
            f"mismatched lengths: y_true has {n} samples but groups has shape {source.shape}"
        )
    values = _pointwise(loss, y_true, y_pred, classes)

    if hasattr(folds, "split"):
        splits = _split(folds, X, y_true, source, n)
        desc = repr(folds)
    else:
        labels, splits = _explicit(folds, n)
        desc = "fold labels" if labels is not None else "explicit (train, test) list"
        if labels is not None:
            _check_finite(labels, "folds (one fold label per sample)")
    if splits is None:  # fold labels: the blocks as given
        order, block = np.arange(n), labels
        n_splits = int(np.unique(labels).size)
    else:
        tests = _check_partition(splits, n, desc)
        order = np.concatenate(tests)
        by_source = source is not None and all(np.unique(source[t]).size == 1 for t in tests)
        block = np.concatenate([
            np.full(t.size, source[t[0]] if by_source else k) for k, t in enumerate(tests)
        ])  # fmt: skip
        n_splits = len(tests)
    if loss_range is None and hasattr(loss, "range"):
        loss_range = loss.range
    return from_arrays(
        values[order],
        block,
        source=None if source is None else source[order],
        index=order,
        loss_name=loss_name or getattr(loss, "name", None) or getattr(loss, "__name__", "custom"),
        loss_range=loss_range,
        attrs={"cv": desc, "n_splits": n_splits, **(attrs or {})},
    )


def _columns_by_class(y_pred: Any, classes: Any) -> Any:
    """Put the columns of a DataFrame of probabilities named by class in the order of `classes`.

    Its column names say which class each column is; read by position, a frame whose columns
    are the classes in another order would give each point the probability of a wrong class.
    """
    if not isinstance(y_pred, pd.DataFrame):
        return y_pred
    order = np.asarray(classes).tolist()
    names = y_pred.columns.tolist()
    if len(set(names)) != len(names) or set(names) != set(order) or names == order:
        return y_pred  # not named by class (or already in order): read by position
    return y_pred[order]


def _check_finite(values: np.ndarray, name: str) -> None:
    """Refuse NaN or infinite numbers, naming the first row that holds one."""
    if values.dtype.kind not in "fc":
        return
    bad = ~np.isfinite(values.reshape(len(values), -1)).all(axis=1)
    if bad.any():
        raise ValueError(
            f"{name} contains NaN or infinite values in {int(bad.sum())} sample(s), the first "
            f"at row {int(np.flatnonzero(bad)[0])}"
        )


def _pointwise(loss: Any, y_true: np.ndarray, y_pred: np.ndarray, classes: Any) -> np.ndarray:
    """Return the loss of every sample, checked for shape and finiteness."""
    if isinstance(loss, str):
        raise ValueError(
            f"loss {loss!r} is a name: bayescv.losses.from_predictions takes a callable "
            "loss(y_true, y_pred); bayescv.cv.losses_from_predictions takes the names"
        )
    if not callable(loss):
        raise TypeError(f"loss must be a callable loss(y_true, y_pred), not {type(loss).__name__}")
    if getattr(loss, "needs_classes", False):
        values = loss(y_true, y_pred, np.unique(y_true) if classes is None else classes)
    else:
        values = loss(y_true, y_pred)
    values = np.asarray(values, dtype=float)
    n = len(y_true)
    name = getattr(loss, "name", None) or getattr(loss, "__name__", "custom")
    if values.shape != (n,):
        raise ValueError(
            f"loss {name!r} returned shape {values.shape}; a per-point loss returns one value "
            f"per sample, shape ({n},)"
        )
    bad = ~np.isfinite(values)
    if bad.any():
        hint = (
            " (a log loss is infinite where the true class got probability 0)"
            if np.isposinf(values).any()
            else ""
        )
        raise ValueError(
            f"loss {name!r} is NaN or infinite for {int(bad.sum())} sample(s), the first at row "
            f"{int(np.flatnonzero(bad)[0])}{hint}"
        )
    return values


def _split(splitter: Any, X: Any, y: np.ndarray, groups: Any, n: int) -> list[tuple[Any, Any]]:
    """Call ``splitter.split``, giving `groups` only if it uses them (scikit-learn warns otherwise).

    A splitter that draws its folds without an integer seed would draw other folds here than
    the ones the predictions came from, and the table would pair each loss with a wrong fold.
    """
    seed = getattr(splitter, "random_state", None)
    if shuffles(splitter) and not isinstance(seed, int | np.integer):
        raise ValueError(
            f"folds {splitter!r} draws its folds at random with random_state={seed!r}, so it "
            "would not give again the folds cross_val_predict used: pass the splitter with an "
            "integer random_state (the one given to cross_val_predict), or the (train, test) "
            "index pairs, or the fold label of every sample"
        )
    consumes = not hasattr(splitter, "get_metadata_routing") or get_routing_for_object(
        splitter
    ).consumes("split", ["groups"])
    features = np.zeros((n, 1)) if X is None else X
    return list(splitter.split(features, y, groups if consumes else None))


def _depth(value: Any) -> int:
    """Nesting depth along first elements: 1 for a list of labels, 3 for (train, test) pairs."""
    depth = 0
    while isinstance(value, np.ndarray | Sequence) and not isinstance(value, str | bytes):
        if isinstance(value, np.ndarray) and value.ndim == 0:
            break
        depth += 1
        if len(value) == 0:
            break
        value = value[0]
    return depth


def _explicit(folds: Any, n: int) -> tuple[np.ndarray | None, list[tuple[Any, Any]] | None]:
    """(fold labels, None) for an array of labels; (None, pairs) for a list of (train, test)."""
    if not isinstance(folds, np.ndarray | Sequence) or isinstance(folds, str | bytes):
        if hasattr(folds, "__iter__") and not isinstance(folds, str | bytes):
            folds = list(folds)  # a generator of (train, test), or a pandas Series of labels
        else:
            raise ValueError(
                "folds must be a splitter, a list of (train, test) index pairs or the fold "
                f"label of every sample, got {type(folds).__name__}"
            )
    depth = _depth(folds)
    if depth == 1:
        labels = np.asarray(folds)
        if labels.ndim != 1 or len(labels) != n:
            raise ValueError(
                f"mismatched lengths: y_true has {n} samples but the fold labels have shape "
                f"{labels.shape}"
            )
        return labels, None
    if depth == 3:
        return None, list(folds)
    if depth >= 4:
        raise ValueError(
            "folds looks like a list of runs (each a list of (train, test)); out-of-fold "
            "predictions come from one run, whose test sets partition the samples: build one "
            "table per run and stack them with bayescv.losses.stack_replicates"
        )
    raise ValueError(
        "folds must be a splitter, a list of (train, test) index pairs or the fold label of "
        "every sample"
    )


def _check_partition(splits: list[tuple[Any, Any]], n: int, desc: str) -> list[np.ndarray]:
    """Return the test sets as int arrays; refuse ones that do not partition ``range(n)``."""
    tests, trains = [], []
    for k, pair in enumerate(splits):
        try:
            train, test = pair
            trains.append(np.asarray(train, dtype=np.int64).ravel())
            tests.append(np.asarray(test, dtype=np.int64).ravel())
        except (TypeError, ValueError) as error:
            raise ValueError(
                f"fold {k} of {desc} is not a (train, test) pair of index arrays ({error})"
            ) from None
    if len(tests) < 2:
        raise ValueError(f"CV needs at least two folds, got {len(tests)} from {desc}")
    tested = np.concatenate(tests)
    if tested.size and (tested.min() < 0 or tested.max() >= n):
        raise ValueError(f"test indices of {desc} out of range for {n} samples")
    counts = np.bincount(tested, minlength=n)
    never, twice = np.flatnonzero(counts == 0), np.flatnonzero(counts > 1)
    if never.size or twice.size:
        parts = []
        if never.size:
            parts.append(f"{never.size} sample(s) in no test fold (the first, row {never[0]})")
        if twice.size:
            parts.append(f"{twice.size} in several test folds (the first, row {twice[0]})")
        raise ValueError(
            f"the test folds of {desc} do not partition the samples: {' and '.join(parts)}; "
            "out-of-fold predictions need each sample tested exactly once"
        )
    for k, (train, test) in enumerate(zip(trains, tests, strict=True)):
        if np.isin(test, train).any():
            raise ValueError(f"fold {k} of {desc}: training and test sets overlap")
    return tests
