"""The fit-and-loss core of the CV runners: fit a clone per fold, keep every test loss.

:func:`_fold_losses` fits given folds (in parallel with joblib) and returns the per-point
losses of each test set, and the fitted models when asked; :func:`bayescv.cv.cross_val_losses`,
:func:`bayescv.cv.bootstrap_cv_losses` and the comparison study (:mod:`bayescv.compare`) all
run their fits through it. :func:`_route_params` splits ``params`` between the estimator's
``fit`` and the splitter as :func:`sklearn.model_selection.cross_validate` does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
from joblib import Parallel, delayed
from sklearn import get_config
from sklearn.base import clone
from sklearn.exceptions import UnsetMetadataPassedError
from sklearn.linear_model import LogisticRegression
from sklearn.utils import _safe_indexing, check_consistent_length
from sklearn.utils.metadata_routing import MetadataRouter, MethodMapping, process_routing
from sklearn.utils.validation import _num_samples

from bayescv._extras import progress_bar
from bayescv.cv._batched import batched_predictions, batching_reason
from bayescv.cv._batched_models import parts
from bayescv.cv._checks import _check_response, _warn_clipped
from bayescv.cv.loss_functions import (
    Loss,
    _log_loss_clipped,
    check_label_predictions,
    clips,
)

__all__ = ["losses_on_folds"]

# Features beyond sqrt(max float64) overflow when squared (by scalers, solvers, distances):
# scikit-learn then reports the NaN it made ("Input X contains NaN"), not the cause.
_SQUARE_LIMIT = float(np.sqrt(np.finfo(np.float64).max))


def _route_params(
    caller: str, estimator: Any, splitter: Any, params: Mapping[str, Any] | None, groups: Any
) -> tuple[dict[str, Any], dict[str, Any], Any]:
    """Split `params` into the estimator's fit parameters and the splitter's split parameters.

    With metadata routing enabled (``sklearn.set_config(enable_metadata_routing=True)``),
    as :func:`sklearn.model_selection.cross_validate`: :func:`~sklearn.utils.metadata_routing.process_routing`
    sends each parameter where it is requested, and one that an estimator accepts but was
    not told to request raises :class:`~sklearn.exceptions.UnsetMetadataPassedError`, one
    that nothing requests a TypeError.
    ``groups`` may then come in `params` (scikit-learn's way) instead of the ``groups``
    argument; either way it is the source of each point. Without routing every parameter goes
    to ``fit``.

    Returns
    -------
    fit_params, split_params : dict
    groups : array-like or None
    """
    params = dict(params or {})
    if not get_config()["enable_metadata_routing"]:
        return params, {}, groups
    if "groups" in params:
        if groups is not None:
            raise ValueError(f"{caller} got groups twice: as groups= and in params")
        groups = params.pop("groups")
    router = MetadataRouter(owner=caller).add(
        estimator=estimator, method_mapping=MethodMapping().add(caller="fit", callee="fit")
    )
    if hasattr(splitter, "get_metadata_routing"):
        router = router.add(
            splitter=splitter, method_mapping=MethodMapping().add(caller="fit", callee="split")
        )
    try:
        routed = process_routing(router, "fit", **params)
    except UnsetMetadataPassedError as error:
        # process_routing names the caller "<caller>.fit"; the user called <caller>.
        raise UnsetMetadataPassedError(
            message=str(error).replace(f"{caller}.fit", caller),
            unrequested_params=error.unrequested_params,
            routed_params=error.routed_params,
        ) from None
    except TypeError as error:  # a parameter nothing accepts
        if not str(error).startswith(f"{caller}.fit "):
            raise
        raise TypeError(str(error).replace(f"{caller}.fit", caller, 1)) from None
    split = dict(routed.splitter.split) if hasattr(splitter, "get_metadata_routing") else {}
    split.pop("groups", None)  # groups reach the splitter through its groups argument
    return dict(routed.estimator.fit), split, groups


def _fold_losses(
    estimator: Any,
    X: Any,
    y: Any,
    folds: Sequence[tuple[np.ndarray, np.ndarray]],
    loss: Loss,
    *,
    fit_params: Mapping[str, Any] | None = None,
    n_jobs: int | None = None,
    return_estimator: bool = False,
    progress: bool = False,
    batched: bool | None = None,
) -> tuple[list[np.ndarray], list[Any] | None, str]:
    """Fit a clone of `estimator` on each fold's training rows and score its test rows.

    Parameters
    ----------
    estimator : scikit-learn estimator
        Cloned for every fold.
    X, y : indexable
        The data (rows of X and y are points).
    folds : sequence of (train, test) int arrays
        Rows of each fold.
    loss : Loss
        Per-point loss (:func:`bayescv.cv.get_loss`).
    fit_params : mapping, optional
        Keyword arguments for ``fit``; per-sample values (length ``n_samples``) are indexed
        by the training rows.
    n_jobs : int, optional
        Parallel fits (joblib); the result is identical for any value.
    return_estimator : bool, default False
        Also return the fitted models.
    progress : bool, default False
        Show a progress bar over fits.
    batched : bool or None, default None
        Fit all folds together where :func:`fit_engine` allows (:mod:`bayescv.cv._batched`);
        None: for least squares and ridge; True: also logistic regression; False: never.

    Returns
    -------
    losses : list of ndarray
        Per-point losses of each fold's test rows, in fold order.
    estimators : list of estimators or None
        The fitted models in fold order, if `return_estimator`.
    engine : {"batched", "per-fit"}
        What :func:`fit_engine` chose (folds the batched engine cannot solve are refitted
        one by one in either case).

    Raises
    ------
    ValueError
        For a loss the estimator cannot serve, a fit that fails on features whose squares
        overflow float64 (naming it), or a NaN or infinite loss (naming its cause).
    """
    _check_response(estimator, loss)
    clipping = clips(loss)  # "neg_log_loss": warns once, for all folds, below
    loss = replace(loss, func=_log_loss_clipped) if clipping else loss
    params = dict(fit_params or {})
    batch: list = [None] * len(folds)
    engine, _ = fit_engine(estimator, loss, params, return_estimator, batched, X, y)
    if engine == "batched":
        batch = batched_predictions(
            estimator, np.asarray(X), np.asarray(y), folds, loss.response_method,
            models=return_estimator, feature_names=_feature_names(X),
        )  # fmt: skip
    losses: list = [None] * len(folds)
    models: list = [None] * len(folds)
    for i, found in enumerate(batch):
        if found is not None:
            y_pred, classes = found[:2]
            values = loss(_rows(y, folds[i][1]), y_pred, classes)
            _check_losses(values, y_pred, loss, estimator)
            losses[i] = values
            models[i] = found[2] if return_estimator else None
    rest = [i for i, found in enumerate(batch) if found is None]
    jobs = (
        delayed(_fit_and_loss)(
            clone(estimator), X, y, folds[i][0], folds[i][1], loss, params, return_estimator
        )
        for i in rest
    )
    results = Parallel(n_jobs=n_jobs, return_as="generator")(jobs)
    # No bar when the batched engine left nothing to fit ("CV fits: 0fit" otherwise).
    bar = not progress or not rest
    done = list(progress_bar(results, total=len(rest), desc="CV fits", unit="fit", disable=bar))
    for i, (values, model) in zip(rest, done, strict=True):
        losses[i], models[i] = values, model
    if clipping:  # "neg_log_loss" clips as scikit-learn does, and says so
        _warn_clipped(losses)
    return losses, models if return_estimator else None, engine


def _feature_names(X: Any) -> np.ndarray | None:
    """Return a DataFrame's column names when all are strings (its ``feature_names_in_``)."""
    columns = getattr(X, "columns", None)
    if columns is None or not all(isinstance(c, str) for c in columns):
        return None
    return np.asarray(columns, dtype=object)


def losses_on_folds(
    estimator: Any,
    X: Any,
    y: Any,
    folds: Sequence[tuple[Any, Any]],
    loss: Loss,
    *,
    batched: bool | None = None,
    n_jobs: int | None = None,
) -> tuple[list[np.ndarray], str]:
    """Per-point test losses of `estimator` refitted on each given (train, test) pair.

    The fit-and-loss step of :func:`cross_val_losses`, for fold designs it does not draw
    (nested CV's pairs of folds, a study's own partitions): every fit goes through the
    batched engine where the learner qualifies, otherwise one scikit-learn fit per pair.

    Parameters
    ----------
    estimator : scikit-learn estimator
        Cloned for every pair.
    X : array-like of shape (n_samples, n_features)
        Features.
    y : array-like of shape (n_samples,)
        Targets.
    folds : sequence of (train, test)
        Row indices of each pair (or boolean masks; negative indices count from the end);
        training rows may repeat (bootstrap copies), test rows must not be training rows of
        their pair. An empty sequence fits nothing and returns the engine that would be used.
    loss : Loss
        Per-point loss (:func:`bayescv.cv.get_loss`).
    batched : bool or None, default None
        As in :func:`cross_val_losses`: None batches plain least squares and ridge, True
        also binary L2 logistic regression, False never.
    n_jobs : int, optional
        Parallel per-pair fits (joblib); the result is identical for any value.

    Returns
    -------
    losses : list of ndarray
        The test losses of each pair, in order.
    engine : {"batched", "per-fit"}
        How the pairs were fitted (pairs the batched engine cannot solve, such as a
        training set with one class, are refitted one by one in either case).

    Raises
    ------
    ValueError
        For infinite features (as :func:`cross_val_losses`), X and y of different lengths,
        rows that are not indices or masks, out of range, an empty training set or test
        rows among the pair's training rows, and as the fits and losses of
        :func:`cross_val_losses` do.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import Ridge
    >>> from bayescv.cv import get_loss, losses_on_folds
    >>> X = np.arange(20.0).reshape(10, 2); y = X[:, 0] + 1.0
    >>> folds = [(np.arange(5, 10), np.arange(5)), (np.arange(5), np.arange(5, 10))]
    >>> losses, engine = losses_on_folds(Ridge(), X, y, folds, get_loss("squared"))
    >>> [a.shape for a in losses], engine
    ([(5,), (5,)], 'batched')
    """
    _check_features(X)  # before the first fit, as cross_val_losses (nested CV calls this)
    check_consistent_length(X, y)
    n = _num_samples(X)
    folds = [
        (_pair_rows(tr, n, k, "training"), _pair_rows(te, n, k, "test"))
        for k, (tr, te) in enumerate(folds)
    ]
    empty = [k for k, (tr, _) in enumerate(folds) if tr.size == 0]
    if empty:
        raise ValueError(f"pair {empty[0]} of folds has an empty training set: nothing to fit")
    in_train = np.zeros(n, dtype=bool)
    for k, (tr, te) in enumerate(folds):  # training rows may repeat; test rows must be new
        in_train[tr] = True
        shared = np.unique(te[in_train[te]])
        in_train[tr] = False
        if shared.size:
            raise ValueError(
                f"pair {k} of folds tests {shared.size} row(s) it also trains on (rows "
                f"{_some(shared)}): a loss on a training point is no CV loss; give each pair "
                "test rows outside its training rows"
            )
    losses, _, engine = _fold_losses(estimator, X, y, folds, loss, n_jobs=n_jobs, batched=batched)
    return losses, engine


def _pair_rows(rows: Any, n: int, k: int, which: str) -> np.ndarray:
    """One side of a (train, test) pair as int64 rows in ``range(n)``.

    A boolean mask of length `n` becomes its rows and negative indices count from the end,
    as indexing (and the per-fit path) reads them; the batched engine counts rows, so both
    are resolved here, before either path sees them.
    """
    rows = np.asarray(rows)
    where = f"the {which} rows of pair {k} of folds"
    if rows.dtype == bool:
        if rows.shape != (n,):
            raise ValueError(f"{where} are a boolean mask of shape {rows.shape}; expected ({n},)")
        return np.flatnonzero(rows)
    if rows.ndim != 1 or (rows.size and rows.dtype.kind not in "iu"):
        raise ValueError(
            f"{where} must be a 1-d array of integer row indices or a boolean mask, got "
            f"dtype {rows.dtype} and shape {rows.shape}"
        )
    rows = rows.astype(np.int64)
    if rows.size and (rows.min() < -n or rows.max() >= n):
        raise ValueError(f"{where} are out of range for {n} samples: {rows.min()} to {rows.max()}")
    return np.where(rows < 0, rows + n, rows)


def fit_engine(
    estimator: Any,
    loss: Loss,
    fit_params: Mapping[str, Any] | None,
    return_estimator: bool,
    batched: bool | None,
    X: Any,
    y: Any,
) -> tuple[str, str]:
    """Return ``("batched" or "per-fit", reason)``: how :func:`_fold_losses` fits the folds.

    The batched engine (:mod:`bayescv.cv._batched`) serves numeric arrays and all-numeric
    DataFrames without fit parameters (with fitted models built by
    :mod:`bayescv.cv._batched_models` when they are asked for); ``reason`` says why not
    otherwise.
    """
    if batched is False:
        return "per-fit", "batched=False"
    if batched not in (None, True):
        raise ValueError(f"batched must be None, True or False, got {batched!r}")
    if fit_params:
        return "per-fit", "fit parameters given"
    if not _numeric_table(X):
        return "per-fit", "X is not a numeric 2-d numpy array or an all-numeric DataFrame"
    # What scikit-learn refuses goes to it, so that it says why: no columns, or column names
    # that mix strings with other types.
    if X.shape[1] == 0:
        return "per-fit", "X has no features"
    if len({isinstance(c, str) for c in getattr(X, "columns", ())}) > 1:
        return "per-fit", "X's column names mix strings and other types"
    if not (getattr(y, "ndim", 0) == 1 and isinstance(getattr(y, "dtype", None), np.dtype)):
        return (
            "per-fit",
            "y is not a 1-d numpy array or a Series of a numpy dtype (not string or category)",
        )
    reason = batching_reason(
        estimator, loss.response_method, auto=batched is None, models=return_estimator
    )
    if reason:
        return "per-fit", reason
    if type(parts(estimator)[1]) is LogisticRegression:
        n_classes = np.unique(np.asarray(y)).size
        if n_classes != 2:  # every fold would go to scikit-learn: say so in fit_engine
            return "per-fit", f"{n_classes} classes: only binary LogisticRegression is batched"
    # Sums of n squares must stay finite; scikit-learn's path reports NaN, inf and overflow.
    largest = float(np.max(np.abs(np.asarray(X, dtype=float)), initial=0.0))
    if not largest < _SQUARE_LIMIT / 4 / np.sqrt(max(_num_samples(X), 1)):
        return "per-fit", "features too large (or not finite) for sums of their squares"
    return "batched", ""


def _numeric_table(X: Any) -> bool:
    """Whether `X` is a 2-d float or integer ndarray, or a DataFrame of such columns."""
    if isinstance(X, np.ndarray):  # np.matrix, which scikit-learn refuses, is left to it
        return X.ndim == 2 and X.dtype.kind in "fiu" and not isinstance(X, np.matrix)
    dtypes = getattr(X, "dtypes", None)
    return (
        getattr(X, "ndim", 0) == 2
        and dtypes is not None
        and all(isinstance(d, np.dtype) and d.kind in "fiu" for d in dtypes)
    )


def _fit_and_loss(
    estimator: Any,
    X: Any,
    y: Any,
    train: np.ndarray,
    test: np.ndarray,
    loss: Loss,
    fit_params: Mapping[str, Any],
    keep: bool,
) -> tuple[np.ndarray, Any]:
    n = _num_samples(X)
    # Per-sample fit parameters (e.g. sample_weight) follow the training rows.
    params = {
        k: _safe_indexing(v, train) if _is_per_sample(v, n) else v for k, v in fit_params.items()
    }
    try:
        estimator.fit(_rows(X, train), _rows(y, train), **params)
    except Exception as error:  # re-raised as is (saying where), or with the overflow named
        hinted = _with_feature_hint(error, X, estimator)
        if hinted is error:
            error.add_note(
                f"bayescv: raised by {type(estimator).__name__}.fit on a CV training set of "
                f"{train.size} points (its test set: {test.size} points, rows "
                f"{_some(test)})"
            )
            raise
        raise hinted from error
    if test.size == 0:  # nothing to predict: no losses, as on the batched path
        return np.empty(0), estimator if keep else None
    y_pred = getattr(estimator, loss.response_method)(_rows(X, test))
    values = loss(_rows(y, test), y_pred, getattr(estimator, "classes_", None))
    _check_losses(values, y_pred, loss, estimator)
    return values, estimator if keep else None


def _some(rows: np.ndarray) -> str:
    return ", ".join(map(str, rows[:5])) + (", ..." if rows.size > 5 else "")


def _rows(data: Any, rows: np.ndarray) -> Any:
    """``_safe_indexing(data, rows)``, without its type dispatch for plain NumPy arrays.

    The dispatch costs tens of microseconds a call, four calls a fold: a few percent of a
    fast fit. For an ndarray it ends in exactly this indexing.
    """
    if type(data) is np.ndarray and not get_config()["array_api_dispatch"]:
        return data[rows, ...]
    return _safe_indexing(data, rows)


def _is_per_sample(value: Any, n: int) -> bool:
    return hasattr(value, "__len__") and not isinstance(value, str | dict) and len(value) == n


def _check_features(X: Any) -> None:
    """Refuse infinite features, and ones that overflow on conversion to float64, by name.

    Only numeric data are checked (numeric arrays, the numeric columns of a DataFrame, the
    stored values of a sparse matrix, lists of numbers); text and categories are left to
    the estimator. NaN is left to it too: some estimators handle missing values.
    """
    if hasattr(X, "select_dtypes"):
        values = X.select_dtypes("number").to_numpy(dtype=float, na_value=np.nan)
    elif hasattr(X, "tocsr") and hasattr(X, "data"):
        values = np.asarray(X.data)
    else:
        values = np.asarray(X) if not isinstance(X, np.ndarray) else X
    if values.dtype.kind in "OUS":
        try:
            values = np.asarray(values, dtype=float)
        except OverflowError:
            raise ValueError(
                "X holds numbers too large for float64 (above about 1.8e308); rescale the features"
            ) from None
        except (TypeError, ValueError):
            return  # text or categories: the estimator's business
    if values.dtype.kind not in "fc":
        return
    infinite = np.isinf(values)
    if infinite.any():
        raise ValueError(
            f"X contains {int(infinite.sum())} infinite value(s) (or numbers too large for "
            "float64, above about 1.8e308); remove or rescale them before CV"
        )


def _with_feature_hint(error: Exception, X: Any, estimator: Any) -> Exception:
    """Return the fit's own error, or a ValueError adding that the features overflow."""
    try:
        values = np.asarray(X, dtype=float)
        peak = float(np.nanmax(np.abs(values))) if values.size else 0.0
    except (TypeError, ValueError):
        return error
    overflow = ValueError | FloatingPointError | RuntimeWarning  # warnings raised as errors
    if not (isinstance(error, overflow) and peak > _SQUARE_LIMIT):
        return error
    return ValueError(
        f"fitting {type(estimator).__name__} failed ({str(error).strip().splitlines()[0]}): "
        f"X has features up to {peak:.3g}, whose squares overflow float64 (above about "
        f"{_SQUARE_LIMIT:.2g}) and become inf or NaN inside the estimator; rescale the features"
    )


def _check_losses(values: np.ndarray, y_pred: Any, loss: Loss, estimator: Any) -> None:
    """Check a fold's losses: labels for 0-1 losses, and the cause of NaN or infinite ones."""
    check_label_predictions(y_pred, loss, estimator)  # a regressor's 0-1 losses: all 1
    bad = ~np.isfinite(values)
    if not bad.any():
        return
    pred = np.asarray(y_pred)
    if pred.dtype.kind in "fc" and not np.isfinite(pred).all():
        cause = (
            f"{type(estimator).__name__}.{loss.response_method} returned NaN or infinite "
            "values (features or targets too large?)"
        )
    elif loss.name == "log_loss":
        cause = (
            "the model gave the true class probability 0, where the log loss is infinite "
            "(a class absent from a training fold, or a model such as a decision tree that "
            "gives hard 0/1 probabilities); use loss='neg_log_loss' for scikit-learn's log "
            "loss, which clips the probabilities to [eps, 1 - eps] (and warns), or 'brier'"
        )
    else:
        cause = f"loss {loss.name!r} returned them for finite predictions (an overflow?)"
    raise ValueError(f"{int(bad.sum())} test point(s) have a NaN or infinite loss: {cause}")
