"""Cross-validation runners that keep every per-point loss.

:func:`cross_val_losses` runs random K-fold CV (CVR) or, with ``groups``, multiple-source
CV (CVS: leave-one-source-out by default), once or repeated; :func:`bootstrap_cv_losses`
reruns the same CV on bootstrap resamples. Both return a loss table
(:mod:`bayescv.losses`). Fits run in parallel over (replicate, fold) with joblib; every
random choice comes from the one ``random_state`` through independent child seeds, so the
table does not depend on ``n_jobs``.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import xarray as xr
from joblib import Parallel, delayed
from sklearn import get_config
from sklearn.base import clone
from sklearn.model_selection import GroupKFold, KFold, LeaveOneGroupOut
from sklearn.utils import _safe_indexing, indexable
from sklearn.utils.metadata_routing import get_routing_for_object
from sklearn.utils.validation import _num_samples
from tqdm.auto import tqdm

from bayescv._defaults import DEFAULT_N_BOOTSTRAP
from bayescv._provenance import child_seeds, resolve_seed
from bayescv.cv.loss_functions import Loss, get_loss
from bayescv.losses import from_arrays

__all__ = ["balanced_group_folds", "bootstrap_cv_losses", "cross_val_losses"]

DEFAULT_N_SPLITS = 10


@dataclass
class _Plan:
    """The folds of one replicate, as rows of the original data."""

    folds: list[tuple[np.ndarray, np.ndarray]]
    splitter: str


def cross_val_losses(
    estimator: Any,
    X: Any,
    y: Any,
    *,
    groups: Any = None,
    cv: int | Any | Iterable[tuple[Any, Any]] | None = None,
    loss: str | Loss | Any = None,
    n_repeats: int = 1,
    random_state: int | np.random.Generator | None = None,
    n_jobs: int | None = None,
    fit_params: Mapping[str, Any] | None = None,
    progress: bool = False,
) -> xr.Dataset:
    """Run CV and return the loss of every test point.

    Parameters
    ----------
    estimator : scikit-learn estimator
        Cloned for every fit; its own ``random_state`` is left as given (set it for
        reproducible fits of randomised models).
    X : array-like of shape (n_samples, n_features)
        Features.
    y : array-like of shape (n_samples,)
        Targets.
    groups : array-like of shape (n_samples,), optional
        Source label of each point. With ``cv=None`` this runs leave-one-source-out (CVS);
        with an int, shuffled :class:`~sklearn.model_selection.GroupKFold`.
    cv : int, splitter or iterable of (train, test), optional
        As in :func:`sklearn.model_selection.check_cv`, except that an int means a
        *shuffled* K-fold (random partition, seeded from `random_state`). Default: 10-fold
        without `groups`, leave-one-group-out with them. The test sets must partition the
        data: every point tested exactly once per replicate.
    loss : str, Loss or callable, optional
        ``"zero_one"``, ``"squared"``, ``"absolute"``, ``"log_loss"``, ``"brier"``, or
        ``loss(y_true, y_pred) -> per-point array``. Default: zero-one for classifiers,
        squared otherwise. The estimator's ``predict`` or ``predict_proba`` is called as the
        loss needs.
    n_repeats : int, default 1
        Number of independent random partitions. With more than one, the table gains a
        ``replicate`` dimension with ``replicate_kind="repeat"``; a shuffling splitter's
        ``random_state`` is then replaced by an independent child seed per repeat.
    random_state : None, int or numpy.random.Generator
        Seeds every partition; the resolved integer seed is stored in the table's ``seed``
        attribute.
    n_jobs : int, optional
        Parallel fits (joblib); the result is identical for any value.
    fit_params : mapping, optional
        Extra keyword arguments for ``fit``.
    progress : bool, default False
        Show a progress bar over fits.

    Returns
    -------
    xarray.Dataset
        A loss table (:mod:`bayescv.losses`). ``block`` is the held-out source's label when
        every test fold is exactly one source, else the fold number; ``scheme`` is
        ``"source"`` when no source is split across folds, else ``"random"``.

    Raises
    ------
    ValueError
        On mismatched lengths, infinite features or ones that overflow float64, folds that
        do not partition the data, a fold whose training and test sets overlap,
        ``n_repeats > 1`` with a deterministic splitter, a NaN or infinite loss (naming its
        cause), or a bad loss table (see :func:`bayescv.losses.validate`). A fit that fails
        on features beyond about 1.3e154, whose squares overflow float64, says so.

    Examples
    --------
    >>> from sklearn.datasets import make_regression
    >>> from sklearn.linear_model import Ridge
    >>> X, y = make_regression(n_samples=60, n_features=3, noise=1.0, random_state=0)
    >>> table = cross_val_losses(Ridge(), X, y, cv=5, random_state=0)
    >>> table.sizes["obs"], int(table["block"].max()) + 1
    (60, 5)
    """
    X, y, groups = indexable(X, y, groups)
    _check_features(X)
    _check_repeats(n_repeats)
    loss_fn = get_loss(loss, estimator)
    seed = resolve_seed(random_state)
    n = len(y)
    plans = []
    for rep_seed in child_seeds(seed, n_repeats):
        splitter = _splitter(cv, groups, rep_seed, replicated=n_repeats > 1)
        folds = _materialise(splitter, X, y, groups)
        _check_partition(folds, n)
        plans.append(_Plan(folds, _describe(splitter)))
    return _run(
        estimator, X, y, groups, plans, loss_fn, seed=seed,
        replicate_kind="repeat" if n_repeats > 1 else None,
        n_jobs=n_jobs, fit_params=fit_params, progress=progress,
    )  # fmt: skip


def bootstrap_cv_losses(
    estimator: Any,
    X: Any,
    y: Any,
    *,
    groups: Any = None,
    cv: int | Any | None = None,
    loss: str | Loss | Any = None,
    n_bootstrap: int = DEFAULT_N_BOOTSTRAP,
    random_state: int | np.random.Generator | None = None,
    n_jobs: int | None = None,
    fit_params: Mapping[str, Any] | None = None,
    progress: bool = False,
) -> xr.Dataset:
    """Rerun the same CV on bootstrap resamples of the data.

    Each replicate resamples points with replacement within each source (within the whole
    data set when `groups` is None), keeping every source's size, and reruns the CV. For
    random K-fold, all copies of one original point go to the same fold, so no point is
    trained and tested on. Bootstrap replicates measure sampling variability of one data
    set: they are *not* independent realisations (``replicate_kind="bootstrap"``).

    Parameters
    ----------
    estimator : scikit-learn estimator
        Cloned for every fit.
    X : array-like of shape (n_samples, n_features)
        Features.
    y : array-like of shape (n_samples,)
        Targets.
    groups : array-like of shape (n_samples,), optional
        Source labels; resampling is within sources and the CV is as in
        :func:`cross_val_losses` (leave-one-source-out by default).
    cv : int or splitter, optional
        Without `groups`: an int (default 10) gives random folds balanced in size that keep
        copies together (:func:`balanced_group_folds`); a splitter must use its ``groups``
        argument, which receives the original row of each resampled point (for example
        :class:`~sklearn.model_selection.GroupKFold`). With `groups`, as in
        :func:`cross_val_losses`. Explicit (train, test) lists are refused: they index the
        original data, not a resample.
    loss : str, Loss or callable, optional
        As in :func:`cross_val_losses`.
    n_bootstrap : int, default 50
        Number of bootstrap replicates (:data:`bayescv.classical.DEFAULT_N_BOOTSTRAP`, the
        same B as the ``bootstrap`` interval method and ``bayes_hier`` of the comparison
        module).
    random_state : None, int or numpy.random.Generator
        Seeds every resample and partition; stored as the ``seed`` attribute.
    n_jobs : int, optional
        Parallel fits; the result is identical for any value.
    fit_params : mapping, optional
        Extra keyword arguments for ``fit``.
    progress : bool, default False
        Show a progress bar over fits.

    Returns
    -------
    xarray.Dataset
        A loss table with dims ``(replicate, obs)``; ``index`` holds the original row of
        each resampled point.

    Raises
    ------
    ValueError
        As :func:`cross_val_losses`, and when a splitter puts copies of one point in both
        the training and the test set of a fold.
    """
    X, y, groups = indexable(X, y, groups)
    _check_features(X)
    _check_repeats(n_bootstrap, name="n_bootstrap")
    if cv is not None and not isinstance(cv, int | np.integer) and not hasattr(cv, "split"):
        raise ValueError(
            "bootstrap_cv_losses needs an int or a splitter for cv, not explicit (train, test) lists"
        )
    loss_fn = get_loss(loss, estimator)
    seed = resolve_seed(random_state)
    n = len(y)
    source = None if groups is None else np.asarray(groups)
    plans = []
    for rep_seed in child_seeds(seed, n_bootstrap):
        sample_seed, split_seed = child_seeds(rep_seed, 2)
        rows = _resample(n, source, np.random.default_rng(sample_seed))
        if source is not None:
            splitter = _splitter(cv, source, split_seed, replicated=True, bootstrap=True)
            folds = _materialise(splitter, rows, _safe_indexing(y, rows), source[rows])
            desc = _describe(splitter)
        elif cv is None or isinstance(cv, int | np.integer):
            k = DEFAULT_N_SPLITS if cv is None else int(cv)
            folds = balanced_group_folds(rows, k, random_state=split_seed)
            desc = f"balanced_group_folds(n_splits={k})"
        else:
            splitter = _reseeded(cv, split_seed, replace=True, require_shuffle=False)
            folds = _materialise(splitter, rows, _safe_indexing(y, rows), rows)
            desc = _describe(splitter)
        _check_partition(folds, n)
        for train, test in folds:
            if np.intersect1d(rows[train], rows[test]).size:
                raise ValueError(
                    f"the splitter {desc} put copies of one point in both the training and the test "
                    "set; pass an int or a group-aware splitter such as GroupKFold"
                )
        plans.append(_Plan([(rows[tr], rows[te]) for tr, te in folds], desc))
    return _run(
        estimator, X, y, groups, plans, loss_fn, seed=seed, replicate_kind="bootstrap",
        n_jobs=n_jobs, fit_params=fit_params, progress=progress,
    )  # fmt: skip


def balanced_group_folds(
    groups: Any, n_splits: int, *, random_state: int | np.random.Generator | None = None
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Random folds that keep each group whole and are as equal in size as possible.

    Groups are shuffled, then placed largest first into the currently smallest fold
    (ties broken by fold number). Used for bootstrap CVR, where the copies of one original
    point form a group.

    Parameters
    ----------
    groups : array-like of shape (n_samples,)
        Group label of each position.
    n_splits : int
        Number of folds, at least 2 and at most the number of groups.
    random_state : None, int or numpy.random.Generator
        Seed for the shuffle.

    Returns
    -------
    list of (train, test) tuples of int arrays
        Positions of each fold.
    """
    groups = np.asarray(groups)
    labels, codes, counts = np.unique(groups, return_inverse=True, return_counts=True)
    if not 2 <= n_splits <= labels.size:
        raise ValueError(
            f"n_splits must be between 2 and the number of groups ({labels.size}), got {n_splits}"
        )
    rng = np.random.default_rng(resolve_seed(random_state))
    shuffled = rng.permutation(labels.size)
    order = shuffled[np.argsort(-counts[shuffled], kind="stable")]
    fold_of_group = np.empty(labels.size, dtype=np.int64)
    load = np.zeros(n_splits, dtype=np.int64)
    for g in order:  # greedy longest-processing-time placement
        k = int(np.argmin(load))
        fold_of_group[g] = k
        load[k] += counts[g]
    fold = fold_of_group[codes]
    positions = np.arange(groups.size)
    return [(positions[fold != k], positions[fold == k]) for k in range(n_splits)]


# Features beyond sqrt(max float64) overflow when squared (by scalers, solvers, distances):
# scikit-learn then reports the NaN it made ("Input X contains NaN"), not the cause.
_SQUARE_LIMIT = float(np.sqrt(np.finfo(np.float64).max))


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
    """Name the cause of NaN or infinite losses of a fold, where it can be told."""
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
        cause = "the model gave the true class probability 0, where the log loss is infinite"
    else:
        cause = f"loss {loss.name!r} returned them for finite predictions (an overflow?)"
    raise ValueError(f"{int(bad.sum())} test point(s) have a NaN or infinite loss: {cause}")


def _check_repeats(value: int, name: str = "n_repeats") -> None:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")


def _resample(n: int, source: np.ndarray | None, rng: np.random.Generator) -> np.ndarray:
    """Bootstrap rows: within each source (sizes kept), or over all rows."""
    if source is None:
        return np.sort(rng.integers(n, size=n))
    order = np.argsort(source, kind="stable")
    _, starts, sizes = np.unique(source[order], return_index=True, return_counts=True)
    offsets = np.repeat(starts, sizes) + (rng.random(n) * np.repeat(sizes, sizes)).astype(np.int64)
    return order[offsets]


def _splitter(
    cv: Any, groups: Any, seed: int, *, replicated: bool, bootstrap: bool = False
) -> Any:
    """Return the splitter for one replicate, seeded with `seed` where it shuffles.

    Repeated CV (`replicated`) needs a shuffling splitter and replaces its seed; bootstrap
    replicates also get a fresh seed, but a deterministic splitter is fine there since each
    replicate partitions different data.
    """
    if cv is None:
        return (
            LeaveOneGroupOut()
            if groups is not None
            else KFold(DEFAULT_N_SPLITS, shuffle=True, random_state=seed)
        )
    if isinstance(cv, int | np.integer) and not isinstance(cv, bool):
        if groups is not None:
            return GroupKFold(int(cv), shuffle=True, random_state=seed)
        return KFold(int(cv), shuffle=True, random_state=seed)
    if isinstance(cv, str):
        raise ValueError(
            f"cv must be an int, a splitter or an iterable of (train, test), got {cv!r}"
        )
    if hasattr(cv, "split"):
        return _reseeded(
            cv, seed, replace=replicated, require_shuffle=replicated and not bootstrap
        )
    if isinstance(cv, Iterable):
        if replicated:
            raise ValueError(
                "n_repeats > 1 needs an int or a shuffling splitter, not fixed (train, test) lists"
            )
        return list(cv)
    raise ValueError(f"cv must be an int, a splitter or an iterable of (train, test), got {cv!r}")


def _reseeded(splitter: Any, seed: int, *, replace: bool, require_shuffle: bool) -> Any:
    """Copy of a shuffling `splitter` seeded with `seed` if it has no seed (or to `replace` it)."""
    shuffles = hasattr(splitter, "random_state") and getattr(splitter, "shuffle", True)
    if not shuffles:
        if require_shuffle:
            raise ValueError(
                f"{splitter!r} does not shuffle, so every replicate would repeat the same partition; "
                "pass a shuffling splitter (e.g. KFold(shuffle=True)) or n_repeats=1"
            )
        return splitter
    if splitter.random_state is not None and not replace:
        return splitter
    out = copy.deepcopy(splitter)
    out.random_state = seed
    return out


def _materialise(
    splitter: Any, X: Any, y: Any, groups: Any
) -> list[tuple[np.ndarray, np.ndarray]]:
    if isinstance(splitter, list):
        splits = splitter
    else:
        # Sources are always recorded, but only splitters that use groups are given them
        # (scikit-learn warns when a splitter that ignores groups receives them).
        consumes = not hasattr(splitter, "get_metadata_routing") or get_routing_for_object(
            splitter
        ).consumes("split", ["groups"])
        splits = splitter.split(X, y, groups if consumes else None)
    return [
        (np.asarray(train, dtype=np.int64), np.asarray(test, dtype=np.int64))
        for train, test in splits
    ]


def _check_partition(folds: list[tuple[np.ndarray, np.ndarray]], n: int) -> None:
    if len(folds) < 2:
        raise ValueError(f"CV needs at least two folds, got {len(folds)}")
    tested = np.concatenate([test for _, test in folds])
    if tested.size and (tested.min() < 0 or tested.max() >= n):
        raise ValueError(f"test indices out of range for {n} samples")
    counts = np.bincount(tested, minlength=n)
    if (counts != 1).any():
        never, twice = int((counts == 0).sum()), int((counts > 1).sum())
        raise ValueError(
            f"the test sets do not partition the data: {never} point(s) never tested and {twice} "
            "tested more than once; use a K-fold or group splitter (for repeated CV use n_repeats, "
            "not RepeatedKFold)"
        )
    for k, (train, test) in enumerate(folds):
        if np.isin(test, train).any():
            raise ValueError(f"fold {k}: training and test sets overlap")


def _describe(splitter: Any) -> str:
    return "explicit (train, test) list" if isinstance(splitter, list) else repr(splitter)


def _fit_and_loss(
    estimator: Any,
    X: Any,
    y: Any,
    train: np.ndarray,
    test: np.ndarray,
    loss: Loss,
    fit_params: Mapping[str, Any],
) -> np.ndarray:
    n = _num_samples(X)
    # Per-sample fit parameters (e.g. sample_weight) follow the training rows.
    params = {
        k: _safe_indexing(v, train) if _is_per_sample(v, n) else v for k, v in fit_params.items()
    }
    try:
        estimator.fit(_rows(X, train), _rows(y, train), **params)
    except Exception as error:  # re-raised as is, or with the overflow named
        hinted = _with_feature_hint(error, X, estimator)
        if hinted is error:
            raise
        raise hinted from error
    y_pred = getattr(estimator, loss.response_method)(_rows(X, test))
    values = loss(_rows(y, test), y_pred, getattr(estimator, "classes_", None))
    _check_losses(values, y_pred, loss, estimator)
    return values


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


def _run(
    estimator: Any, X: Any, y: Any, groups: Any, plans: list[_Plan], loss_fn: Loss, *,
    seed: int, replicate_kind: str | None, n_jobs: int | None,
    fit_params: Mapping[str, Any] | None, progress: bool,
) -> xr.Dataset:  # fmt: skip
    """Fit every fold of every plan in parallel and assemble the loss table."""
    if loss_fn.response_method not in ("predict", "predict_proba"):
        raise ValueError(f"unknown response method {loss_fn.response_method!r}")
    if not hasattr(estimator, loss_fn.response_method):
        raise ValueError(
            f"loss {loss_fn.name!r} needs {type(estimator).__name__}.{loss_fn.response_method}, which it lacks"
        )
    tasks = [fold for plan in plans for fold in plan.folds]
    jobs = (
        delayed(_fit_and_loss)(clone(estimator), X, y, tr, te, loss_fn, dict(fit_params or {}))
        for tr, te in tasks
    )
    results = Parallel(n_jobs=n_jobs, return_as="generator")(jobs)
    values = list(
        tqdm(results, total=len(tasks), desc="CV fits", unit="fit", disable=not progress)
    )

    source = None if groups is None else np.asarray(groups)
    by_fold_labels = source is not None and all(
        np.unique(source[test]).size == 1 for plan in plans for _, test in plan.folds
    )
    losses, blocks, rows = [], [], []
    start = 0
    for plan in plans:
        stop = start + len(plan.folds)
        parts = [(values[i], tasks[i][1]) for i in range(start, stop)]
        start = stop
        losses.append(np.concatenate([v for v, _ in parts]))
        rows.append(np.concatenate([te for _, te in parts]))
        blocks.append(np.concatenate([
            np.full(te.size, source[te[0]] if by_fold_labels else k) for k, (_, te) in enumerate(parts)
        ]))  # fmt: skip
    squeeze = replicate_kind is None
    pick = (lambda a: a[0]) if squeeze else np.stack
    loss_arr, block_arr, index_arr = pick(losses), pick(blocks), pick(rows)
    return from_arrays(
        loss_arr,
        block_arr,
        source=None if source is None else source[index_arr],
        index=index_arr,
        scheme=None,  # inferred by from_arrays: "source" unless a source spans several folds
        replicate_kind=replicate_kind,
        loss_name=loss_fn.name,
        attrs={
            "estimator": repr(estimator),
            "cv": plans[0].splitter,
            "n_splits": len(plans[0].folds),
            "seed": seed,
        },
    )
