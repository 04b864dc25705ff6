"""Cross-validation runners that keep every per-point loss.

:func:`cross_val_losses` runs random K-fold CV (CVR) or, with ``groups``, multiple-source
CV (CVS: leave-one-source-out by default), once or repeated (``n_repeats``, or a repeated
splitter or list of runs of the user's own); :func:`bootstrap_cv_losses`
reruns the same CV on bootstrap resamples. Both return a loss table
(:mod:`bayescv.losses`). Fits run in parallel over (replicate, fold) with joblib; every
random choice comes from the one ``random_state`` through independent child seeds, so the
table does not depend on ``n_jobs``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import xarray as xr
from sklearn.utils import _safe_indexing, indexable

from bayescv._defaults import DEFAULT_N_BOOTSTRAP
from bayescv._provenance import child_seeds, named_seed, resolve_seed, seed_unset
from bayescv.cv._checks import clipped_count
from bayescv.cv._fit import _check_features, _check_response, _fold_losses, _route_params
from bayescv.cv._splits import (
    DEFAULT_N_SPLITS,
    _check_groups,
    _check_partition,
    _describe,
    _is_int,
    _materialise,
    _repeats_itself,
    _resample,
    _reseeded,
    _runs,
    _splitter,
    _stratifies,
    _warn_unshuffled,
    balanced_group_folds,
)
from bayescv.cv.loss_functions import (
    Loss,
    check_target,
    clips,
    get_loss,
    loss_range_for,
)
from bayescv.losses import from_arrays

__all__ = ["bootstrap_cv_losses", "cross_val_losses"]


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
    params: Mapping[str, Any] | None = None,
    return_estimator: bool = False,
    progress: bool = False,
    batched: bool | None = None,
) -> xr.Dataset:
    """Run CV and return the loss of every test point.

    Parameters
    ----------
    estimator : scikit-learn estimator
        Cloned for every fit. Its ``random_state`` parameters left None (its own, a pipeline
        step's) are set from `random_state`, so that one seed reproduces randomised models
        such as forests too (the seed used is the table's attribute ``estimator_seed``);
        those you set are kept, as scikit-learn keeps them.
    X : array-like of shape (n_samples, n_features)
        Features.
    y : array-like of shape (n_samples,)
        Targets.
    groups : array-like of shape (n_samples,), optional
        Source label of each point. With ``cv=None`` this runs leave-one-source-out (CVS);
        with an int, shuffled :class:`~sklearn.model_selection.GroupKFold` (for classifiers
        too: sources stay whole). Given to a splitter only if it uses groups. With metadata
        routing enabled it may be passed in `params` instead, as scikit-learn asks.
    cv : int, splitter, iterable of (train, test) or list of runs, optional
        As in :func:`sklearn.model_selection.check_cv`: without `groups`, an int means
        :class:`~sklearn.model_selection.StratifiedKFold` when `estimator` is a classifier
        and `y` binary or multiclass, else :class:`~sklearn.model_selection.KFold`. Unlike
        scikit-learn, these are *shuffled*, seeded from `random_state`: the theory of random
        K-fold CV needs a random partition. A splitter is used as given: a ``KFold`` or
        ``StratifiedKFold`` with scikit-learn's default ``shuffle=False`` cuts the rows in
        their stored order, so its folds are random only if the rows are, and it raises an
        :class:`~bayescv.cv.UnshuffledFoldsWarning` (pass it ``shuffle=True``, seeded from
        `random_state`, or an int). ``None`` means leave-one-group-out with `groups`,
        else ``cv=10``. The test sets must partition the data: every point tested exactly
        once per repetition. Repeated CV on your own splits: a repeated splitter
        (:class:`~sklearn.model_selection.RepeatedKFold`,
        :class:`~sklearn.model_selection.RepeatedStratifiedKFold`, or any splitter with an
        ``n_repeats`` attribute whose splits come repetition after repetition), a splitter
        or list of (train, test) pairs whose consecutive test sets partition the data again
        and again, or an explicit list of runs, each a list of (train, test) pairs. Each
        repetition becomes one ``replicate`` (``replicate_kind="repeat"``), exactly as
        stacking one single-run table per repetition with
        :func:`bayescv.losses.stack_replicates` would.
    loss : str, Loss or callable, optional
        ``"zero_one"``, ``"squared"``, ``"absolute"``, ``"log_loss"``, ``"brier"``, or
        ``loss(y_true, y_pred) -> per-point array``. Default: zero-one for classifiers,
        squared otherwise. The estimator's ``predict`` or ``predict_proba`` is called as the
        loss needs.
    n_repeats : int, default 1
        Number of independent random partitions. With more than one, the table gains a
        ``replicate`` dimension with ``replicate_kind="repeat"``; a shuffling splitter's
        ``random_state`` is then replaced by an independent child seed per repeat. Must be 1
        when `cv` repeats itself (a repeated splitter or a list of runs) or does not shuffle
        (leave-one-source-out, the default with `groups`: pass an int `cv` to repeat
        shuffled GroupKFold).
    random_state : None, int or numpy.random.Generator
        Seeds every partition; the resolved integer seed is stored in the table's ``seed``
        attribute.
    n_jobs : int, optional
        Parallel fits (joblib); the result is identical for any value.
    params : mapping, optional
        Metadata, as in :func:`sklearn.model_selection.cross_validate`. With metadata routing
        disabled (scikit-learn's default) every entry goes to the estimator's ``fit``;
        per-sample values (length ``n_samples``, e.g. ``sample_weight``) are indexed by each
        fold's training rows. With ``sklearn.set_config(enable_metadata_routing=True)`` they
        are routed with :func:`~sklearn.utils.metadata_routing.process_routing`: to ``fit``
        what the estimator requests (``set_fit_request``), to the splitter what it requests;
        an entry the estimator accepts but was not told to request raises
        :class:`~sklearn.exceptions.UnsetMetadataPassedError`, one that nothing accepts a
        TypeError.
    return_estimator : bool, default False
        Also keep the fitted model of every fold, as the object-dtype variable
        ``estimator`` on a new dim ``fold`` (dims ``(replicate, fold)`` with replicates),
        in the order of the blocks (``estimator[k]`` was tested on the k-th block of the
        table; a replicate with fewer folds has None at the end). The return type does not
        change. A table holding models cannot be written to a file:
        ``table.drop_vars("estimator")`` first.
    progress : bool, default False
        Show a progress bar over fits.
    batched : bool or None, default None
        Fit the folds together in numpy instead of one scikit-learn call each
        (:mod:`bayescv.cv._batched`): by default for ``LinearRegression`` and ``Ridge``, alone
        or after a ``StandardScaler`` in a pipeline (direct solvers: the same solutions to
        rounding), with True also for binary L2
        ``LogisticRegression``, ``C=inf`` included (the exact optimum, where scikit-learn's
        solvers stop at their ``tol``), False never. Other learners, options, fit
        parameters, data other than numeric arrays and DataFrames, and fits without a unique
        solution (ill-conditioned, separable, not converged) take the per-fit path. The
        table's ``fit_engine`` attribute says which ran. With `return_estimator` the batched
        folds' models are clones of the learner carrying the batched solution in the
        attributes its ``fit`` sets (:mod:`bayescv.cv._batched_models`; ``n_iter_`` of a
        logistic regression counts Newton steps); ``LinearRegression`` is then fitted per
        fold, for its ``rank_`` and ``singular_``.

    Returns
    -------
    xarray.Dataset
        A loss table (:mod:`bayescv.losses`). ``block`` is the held-out source's label when
        every test fold is exactly one source, else the fold number; ``scheme`` is
        ``"source"`` when no source is split across folds, else ``"random"``. With
        `return_estimator`, also the variable ``estimator``.

    Raises
    ------
    ValueError
        On mismatched lengths, infinite features or ones that overflow float64, folds that
        do not partition the data in some repetition (naming the splitter, the repetition
        and the first point tested twice or never), a fold whose training and test sets
        overlap, ``n_repeats > 1`` with a deterministic or a repeated splitter or a list of
        runs, a continuous `y` (:func:`sklearn.utils.multiclass.type_of_target`) with a
        classifier or a loss that compares class labels (zero-one, log, Brier), a NaN or
        infinite loss (naming its cause), or a bad loss table (see
        :func:`bayescv.losses.validate`). A fit that fails on features beyond about 1.3e154,
        whose squares overflow float64, says so.

    Warns
    -----
    UnshuffledFoldsWarning
        When `cv` is a ``KFold`` or ``StratifiedKFold`` that does not shuffle.

    Examples
    --------
    >>> from sklearn.datasets import make_regression
    >>> from sklearn.linear_model import Ridge
    >>> X, y = make_regression(n_samples=60, n_features=3, noise=1.0, random_state=0)
    >>> table = cross_val_losses(Ridge(), X, y, cv=5, random_state=0)
    >>> table.sizes["obs"], int(table["block"].max()) + 1
    (60, 5)

    A classifier gets stratified folds; the fitted models come with ``return_estimator``:

    >>> from sklearn.datasets import make_classification
    >>> from sklearn.linear_model import LogisticRegression
    >>> X, y = make_classification(n_samples=60, random_state=0)
    >>> table = cross_val_losses(LogisticRegression(), X, y, cv=3, random_state=0,
    ...                          return_estimator=True)
    >>> table.attrs["cv"].startswith("StratifiedKFold"), table["estimator"].sizes
    (True, Frozen({'fold': 3}))

    Each repetition of a repeated splitter is one replicate:

    >>> from sklearn.model_selection import RepeatedStratifiedKFold
    >>> cv = RepeatedStratifiedKFold(n_splits=3, n_repeats=4, random_state=0)
    >>> table = cross_val_losses(LogisticRegression(), X, y, cv=cv)
    >>> table.sizes["replicate"], table.attrs["replicate_kind"]
    (4, 'repeat')
    """
    fit_params, split_params, groups = _route_params(
        "cross_val_losses", estimator, cv if hasattr(cv, "split") else None, params, groups
    )
    X, y, groups = indexable(X, y, groups)
    _check_features(X)
    _check_groups(groups)
    _check_repeats(n_repeats)
    if n_repeats > 1 and hasattr(cv, "split") and _repeats_itself(cv):
        _refuse_double_repeats(n_repeats, _describe(cv))
    loss_fn = get_loss(loss, estimator)
    _check_response(estimator, loss_fn)  # a missing predict_proba first, as nested_cv
    check_target(estimator, y, loss_fn)
    seed = resolve_seed(random_state)
    stratify = (cv is None or _is_int(cv)) and _stratifies(estimator, y)
    n = len(y)
    plans = []
    for rep_seed in child_seeds(seed, n_repeats):
        splitter = _splitter(cv, groups, rep_seed, stratify=stratify, replicated=n_repeats > 1)
        runs = _runs(splitter, X, y, groups, split_params, n)
        if n_repeats > 1 and len(runs) > 1:
            _refuse_double_repeats(n_repeats, _describe(splitter))
        plans += [_Plan(folds, _describe(splitter)) for folds in runs]
    _warn_unshuffled(cv)  # once the folds are known to be usable, before any fit
    return _run(
        estimator, X, y, groups, plans, loss_fn, seed=seed,
        replicate_kind="repeat" if len(plans) > 1 else None, n_jobs=n_jobs,
        fit_params=fit_params, progress=progress, return_estimator=return_estimator,
        batched=batched,
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
    params: Mapping[str, Any] | None = None,
    progress: bool = False,
    batched: bool | None = None,
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
        Cloned for every fit; a ``random_state`` left None is seeded as in
        :func:`cross_val_losses` (every replicate's fits share that seed).
    X : array-like of shape (n_samples, n_features)
        Features.
    y : array-like of shape (n_samples,)
        Targets.
    groups : array-like of shape (n_samples,), optional
        Source labels; resampling is within sources and the CV is as in
        :func:`cross_val_losses` (leave-one-source-out by default).
    cv : int or splitter, optional
        Without `groups`: an int (default 10) gives random folds balanced in size that keep
        copies together (:func:`balanced_group_folds`), also stratified by class when
        `estimator` is a classifier and `y` binary or multiclass (scikit-learn's
        ``check_cv`` rule, shuffled and seeded as in :func:`cross_val_losses`); a splitter
        must use its ``groups`` argument, which receives the original row of each resampled
        point (for example :class:`~sklearn.model_selection.GroupKFold`). With `groups`, as
        in :func:`cross_val_losses`. Explicit (train, test) lists are refused: they index
        the original data, not a resample. An unshuffled ``KFold`` or ``StratifiedKFold``
        raises an :class:`~bayescv.cv.UnshuffledFoldsWarning` when its folds keep copies
        together, an error when they do not.
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
    params : mapping, optional
        Metadata for ``fit`` (and the splitter), as in :func:`cross_val_losses`; per-sample
        values follow the resampled training rows.
    progress : bool, default False
        Show a progress bar over fits.
    batched : bool or None, default None
        As in :func:`cross_val_losses`; the table's ``fit_engine`` attribute says which ran.

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

    Warns
    -----
    UnshuffledFoldsWarning
        As :func:`cross_val_losses`.

    Examples
    --------
    Every replicate keeps the data's size, and ``index`` points back to the original rows:

    >>> from sklearn.datasets import make_regression
    >>> from sklearn.linear_model import Ridge
    >>> X, y = make_regression(n_samples=60, n_features=3, noise=1.0, random_state=0)
    >>> table = bootstrap_cv_losses(Ridge(), X, y, cv=5, n_bootstrap=3, random_state=0)
    >>> dict(table.sizes), table.attrs["replicate_kind"], int(table["index"].max()) < 60
    ({'replicate': 3, 'obs': 60}, 'bootstrap', True)
    """
    fit_params, split_params, groups = _route_params(
        "bootstrap_cv_losses", estimator, cv if hasattr(cv, "split") else None, params, groups
    )
    X, y, groups = indexable(X, y, groups)
    _check_features(X)
    _check_groups(groups)
    _check_repeats(n_bootstrap, name="n_bootstrap")
    if cv is not None and not _is_int(cv) and not hasattr(cv, "split"):
        raise ValueError(
            "bootstrap_cv_losses needs an int or a splitter for cv, not explicit (train, test) lists"
        )
    if _repeats_itself(cv):
        raise ValueError(
            f"bootstrap_cv_losses runs one partition per resample, not the repeated splitter "
            f"{_describe(cv)}; pass its single-run splitter (e.g. KFold instead of RepeatedKFold)"
        )
    loss_fn = get_loss(loss, estimator)
    _check_response(estimator, loss_fn)  # a missing predict_proba first, as nested_cv
    check_target(estimator, y, loss_fn)
    stratify = (cv is None or _is_int(cv)) and _stratifies(estimator, y)
    seed = resolve_seed(random_state)
    n = len(y)
    source = None if groups is None else np.asarray(groups)
    plans = []
    for rep_seed in child_seeds(seed, n_bootstrap):
        sample_seed, split_seed = child_seeds(rep_seed, 2)
        rows = _resample(n, source, np.random.default_rng(sample_seed))
        y_rows = _safe_indexing(y, rows)
        if source is not None:
            splitter = _splitter(
                cv, source, split_seed, stratify=stratify, replicated=True, bootstrap=True
            )
            folds = _materialise(splitter, rows, y_rows, source[rows], split_params)
            desc = _describe(splitter)
        elif cv is None or _is_int(cv):
            k = DEFAULT_N_SPLITS if cv is None else int(cv)
            strata = y_rows if stratify else None
            folds = balanced_group_folds(rows, k, y=strata, random_state=split_seed)
            desc = f"balanced_group_folds(n_splits={k}{', stratified' if stratify else ''})"
        else:
            splitter = _reseeded(cv, split_seed, replace=True, require_shuffle=False)
            folds = _materialise(splitter, rows, y_rows, rows, split_params)
            desc = _describe(splitter)
        _check_partition(folds, n)
        for train, test in folds:
            if np.intersect1d(rows[train], rows[test]).size:
                # The user's splitter, not its reseeded copy: its seed is theirs to recognise.
                given = desc if source is not None or cv is None or _is_int(cv) else _describe(cv)
                raise ValueError(
                    f"the splitter {given} put copies of one point in both the training and the "
                    "test set of a bootstrap replicate (each is resampled with replacement); pass "
                    "an int or a group-aware splitter such as GroupKFold"
                )
        plans.append(_Plan([(rows[tr], rows[te]) for tr, te in folds], desc))
    _warn_unshuffled(cv, bootstrap=True)
    return _run(
        estimator, X, y, groups, plans, loss_fn, seed=seed, replicate_kind="bootstrap",
        n_jobs=n_jobs, fit_params=fit_params, progress=progress, batched=batched,
    )  # fmt: skip


def _refuse_double_repeats(n_repeats: int, desc: str) -> None:
    raise ValueError(
        f"n_repeats={n_repeats} with {desc}, which repeats the CV itself: its repetitions "
        "already become the replicates; pass n_repeats=1, or a single-run splitter with n_repeats"
    )


def _check_repeats(value: int, name: str = "n_repeats") -> None:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")


def _run(
    estimator: Any, X: Any, y: Any, groups: Any, plans: list[_Plan], loss_fn: Loss, *,
    seed: int, replicate_kind: str | None, n_jobs: int | None,
    fit_params: Mapping[str, Any], progress: bool, return_estimator: bool = False,
    batched: bool | None = None,
) -> xr.Dataset:  # fmt: skip
    """Fit every fold of every plan in parallel and assemble the loss table."""
    tasks = [fold for plan in plans for fold in plan.folds]
    estimator_seed = named_seed(seed, "estimator")
    fitted, seeded = seed_unset(estimator, estimator_seed)
    values, models, engine = _fold_losses(
        fitted, X, y, tasks, loss_fn.for_targets(y), fit_params=fit_params, n_jobs=n_jobs,
        return_estimator=return_estimator, progress=progress, batched=batched,
    )  # fmt: skip

    source = None if groups is None else np.asarray(groups)
    # Blocks are labelled by source only where each test fold is one whole source: one source
    # per fold and no source in two folds of a run (a plain KFold on data sorted by source
    # can test a large source in two folds, each trained on the other's half).
    by_fold_labels = source is not None and all(
        all(np.unique(source[test]).size == 1 for _, test in plan.folds)
        and len({source[test[0]] for _, test in plan.folds}) == len(plan.folds)
        for plan in plans
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
    table = from_arrays(
        loss_arr,
        block_arr,
        source=None if source is None else source[index_arr],
        index=index_arr,
        scheme=None,  # inferred by from_arrays: "source" unless a source spans several folds
        replicate_kind=replicate_kind,
        loss_name=loss_fn.name,
        attrs={
            "estimator": repr(estimator),
            **({"estimator_seed": estimator_seed} if seeded else {}),
            "cv": plans[0].splitter,
            "n_splits": len(plans[0].folds),
            "seed": seed,
            "loss_range": list(loss_range_for(loss_fn, y)),
            "fit_engine": engine,
            # "neg_log_loss" clips as scikit-learn does; the result says how often
            **({"n_clipped": clipped_count(loss_arr)} if clips(loss_fn) else {}),
        },
    )
    if models is None:
        return table
    return table.assign(estimator=_estimator_array(models, plans, squeeze=squeeze))


def _estimator_array(models: list[Any], plans: list[_Plan], *, squeeze: bool) -> xr.DataArray:
    """Return the fitted fold models as an object array on ``fold`` (``replicate`` first if any)."""
    width = max(len(plan.folds) for plan in plans)
    grid = np.full((len(plans), width), None, dtype=object)  # None where a replicate has fewer
    start = 0
    for r, plan in enumerate(plans):
        for k in range(len(plan.folds)):
            grid[r, k] = models[start + k]
        start += len(plan.folds)
    if squeeze:
        return xr.DataArray(grid[0], dims=("fold",), attrs={"long_name": "fitted fold model"})
    return xr.DataArray(grid, dims=("replicate", "fold"), attrs={"long_name": "fitted fold model"})
