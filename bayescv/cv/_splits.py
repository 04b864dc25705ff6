"""The folds of the CV runners: splitter choice, bootstrap resamples and partition checks.

:func:`_splitter` turns the ``cv`` argument into the splitter of one replicate, following
:func:`sklearn.model_selection.check_cv` (an int is stratified for a classifier with a
binary or multiclass target) except that every int splitter is shuffled and seeded, since
random K-fold theory needs a random partition; a user's KFold or StratifiedKFold that
does not shuffle is kept, with an :class:`UnshuffledFoldsWarning` (:func:`_warn_unshuffled`).
:func:`_runs` cuts what a splitter (or an explicit list) yields into repetitions whose test
sets each partition the data, so that repeated splitters
(:class:`~sklearn.model_selection.RepeatedKFold`) and lists of runs give one replicate per
repetition. :func:`balanced_group_folds` keeps the copies of a bootstrap resample together.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import is_classifier
from sklearn.model_selection import GroupKFold, KFold, LeaveOneGroupOut, StratifiedKFold
from sklearn.utils.metadata_routing import get_routing_for_object
from sklearn.utils.multiclass import type_of_target

from bayescv._extras import user_stacklevel
from bayescv._provenance import resolve_seed, seeded_splitter, shuffles
from bayescv.losses._builders import _depth

__all__ = ["UnshuffledFoldsWarning", "balanced_group_folds"]

#: K of random K-fold CV when ``cv`` is None and there are no sources.
DEFAULT_N_SPLITS = 10


class UnshuffledFoldsWarning(UserWarning):
    """A K-fold splitter that does not shuffle: its folds follow the stored order of the rows.

    Raised by :func:`~bayescv.cv.cross_val_losses`, :func:`~bayescv.cv.bootstrap_cv_losses`
    and :func:`~bayescv.cv.losses_from_predictions` when `cv` (its `folds`) is a :class:`~sklearn.model_selection.KFold` or
    :class:`~sklearn.model_selection.StratifiedKFold` with ``shuffle=False`` (scikit-learn's
    default). Its folds are a random partition only if the rows are in random order; on data
    sorted by class, source or time they are not, while random K-fold CV and its variance
    estimators assume a random partition.

    Examples
    --------
    >>> import warnings
    >>> from sklearn.linear_model import Ridge
    >>> from sklearn.model_selection import KFold
    >>> from bayescv.cv import cross_val_losses
    >>> X, y = [[float(i)] for i in range(8)], [float(i % 3) for i in range(8)]
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always", UnshuffledFoldsWarning)
    ...     table = cross_val_losses(Ridge(), X, y, cv=KFold(4))
    >>> caught[0].category.__name__, issubclass(caught[0].category, UserWarning)
    ('UnshuffledFoldsWarning', True)
    """


def _warn_unshuffled(cv: Any, *, bootstrap: bool = False, predictions: bool = False) -> None:
    """Warn when `cv` is a KFold or StratifiedKFold that does not shuffle.

    The warning is an :class:`UnshuffledFoldsWarning`, pointed at the first caller outside
    the package. Group splitters, repeated splitters, shuffling splitters and lists of
    (train, test) pairs pass silently: a list cannot be told from a random partition, and a
    group splitter's folds are meant to follow the groups.

    Parameters
    ----------
    cv : object
        The `cv` argument as the user gave it.
    bootstrap : bool, default False
        Advise as for :func:`~bayescv.cv.bootstrap_cv_losses`, where a shuffled KFold would
        put copies of one point in both the training and the test set.
    predictions : bool, default False
        Advise as for :func:`~bayescv.cv.losses_from_predictions`, whose predictions were
        made with `cv` already.
    """
    if not isinstance(cv, KFold | StratifiedKFold) or shuffles(cv):
        return
    if predictions:
        instead = (
            f"to make them random, run cross_val_predict again with {type(cv).__name__}("
            f"n_splits={cv.n_splits}, shuffle=True, random_state=...) and pass that splitter"
        )
    elif bootstrap:
        instead = (
            "pass an int cv, whose random folds keep the copies of each point together "
            "(a shuffled KFold would split them)"
        )
    else:
        instead = (
            f"pass {type(cv).__name__}(n_splits={cv.n_splits}, shuffle=True), seeded from "
            "random_state, or an int cv, which is shuffled"
        )
    warnings.warn(
        f"{cv!r} does not shuffle: it splits the rows in their stored order, so its folds are "
        "a random partition only if the rows are in random order (on data sorted by class, "
        "source or time they are not, and the intervals of random K-fold CV assume a random "
        f"partition); {instead}",
        UnshuffledFoldsWarning,
        stacklevel=user_stacklevel(),
    )


def balanced_group_folds(
    groups: Any,
    n_splits: int,
    *,
    y: Any = None,
    random_state: int | np.random.Generator | None = None,
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Random folds that keep each group whole and are as equal in size as possible.

    Groups are shuffled, then placed largest first into the currently smallest fold (ties
    broken by fold number). With `y`, the folds are also stratified: a group goes to the fold
    holding the fewest points of its class, ties broken by the fold's size and then its
    number. Used for bootstrap CVR, where the copies of one original point form a group.

    Parameters
    ----------
    groups : array-like of shape (n_samples,)
        Group label of each position.
    n_splits : int
        Number of folds, at least 2 and at most the number of groups.
    y : array-like of shape (n_samples,), optional
        Class label of each position, the same within a group; stratify on it.
    random_state : None, int or numpy.random.Generator
        Seed for the shuffle.

    Returns
    -------
    list of (train, test) tuples of int arrays
        Positions of each fold.

    Raises
    ------
    ValueError
        When `n_splits` is out of range, or a group holds more than one class of `y`.

    Examples
    --------
    >>> folds = balanced_group_folds([0, 0, 1, 2, 3, 3], 2, random_state=0)
    >>> sorted(test.size for _, test in folds)
    [3, 3]
    """
    groups = np.asarray(groups)
    labels, codes, counts = np.unique(groups, return_inverse=True, return_counts=True)
    if not 2 <= n_splits <= labels.size:
        raise ValueError(
            f"n_splits must be between 2 and the number of groups ({labels.size}), got {n_splits}"
        )
    group_class = np.zeros(labels.size, dtype=np.int64)  # one class when not stratifying
    if y is not None:
        _, y_codes = np.unique(np.asarray(y), return_inverse=True)
        group_class[codes] = y_codes
        if (group_class[codes] != y_codes).any():
            raise ValueError("every group of balanced_group_folds must hold one class of y")
    rng = np.random.default_rng(resolve_seed(random_state))
    shuffled = rng.permutation(labels.size)
    order = shuffled[np.argsort(-counts[shuffled], kind="stable")]
    fold_of_group = np.empty(labels.size, dtype=np.int64)
    load = np.zeros(n_splits, dtype=np.int64)
    class_load = np.zeros((n_splits, group_class.max() + 1), dtype=np.int64)
    numbers = np.arange(n_splits)
    for g in order:  # greedy longest-processing-time placement
        c = group_class[g]
        k = int(np.lexsort((numbers, load, class_load[:, c]))[0])
        fold_of_group[g] = k
        load[k] += counts[g]
        class_load[k, c] += counts[g]
    fold = fold_of_group[codes]
    positions = np.arange(groups.size)
    return [(positions[fold != k], positions[fold == k]) for k in range(n_splits)]


def _check_groups(groups: Any) -> None:
    """Refuse source labels that are missing or of types that cannot be sorted together.

    scikit-learn's group splitters fail on them deep inside (``Input contains NaN``, or
    ``'<' not supported between instances of 'int' and 'str'``), and a splitter that
    ignores groups would run every fit before the table refused the labels.
    """
    if groups is None:
        return
    labels = np.asarray(groups)
    missing = np.asarray(pd.isna(labels)) if labels.dtype.kind in "Of" else None
    if missing is not None and missing.any():
        raise ValueError(
            f"groups has {int(missing.sum())} missing label(s) (None or NaN), the first at row "
            f"{int(np.flatnonzero(missing)[0])}: every point needs the label of its source; "
            "drop those rows or give them a label"
        )
    if labels.dtype.kind == "O":
        kinds = sorted({type(v).__name__ for v in labels.ravel()})
        try:
            np.unique(labels)
        except TypeError:
            raise ValueError(
                f"groups mixes label types that cannot be sorted together ({', '.join(kinds)}): "
                "give every source a label of one type (all strings, or all integers)"
            ) from None


def _stratifies(estimator: Any, y: Any) -> bool:
    """Whether an int ``cv`` means stratified folds (scikit-learn's ``check_cv`` rule)."""
    return is_classifier(estimator) and type_of_target(y) in ("binary", "multiclass")


def _resample(n: int, source: np.ndarray | None, rng: np.random.Generator) -> np.ndarray:
    """Bootstrap rows: within each source (sizes kept), or over all rows."""
    if source is None:
        return np.sort(rng.integers(n, size=n))
    order = np.argsort(source, kind="stable")
    _, starts, sizes = np.unique(source[order], return_index=True, return_counts=True)
    offsets = np.repeat(starts, sizes) + (rng.random(n) * np.repeat(sizes, sizes)).astype(np.int64)
    return order[offsets]


def _is_int(cv: Any) -> bool:
    return isinstance(cv, int | np.integer) and not isinstance(cv, bool)


def _splitter(
    cv: Any,
    groups: Any,
    seed: int,
    *,
    stratify: bool,
    replicated: bool,
    bootstrap: bool = False,
) -> Any:
    """Return the splitter for one replicate, seeded with `seed` where it shuffles.

    ``cv=None`` is leave-one-group-out with `groups`, else ``cv=DEFAULT_N_SPLITS``. An int is
    a shuffled GroupKFold with `groups`, else a shuffled StratifiedKFold where `stratify`,
    else a shuffled KFold. Repeated CV (`replicated`) needs a shuffling splitter (so not the
    default leave-one-group-out) and replaces its seed; bootstrap replicates also get a fresh
    seed, but a deterministic splitter is fine there since each replicate partitions different
    data.
    """
    if cv is None:
        if groups is not None:
            if replicated and not bootstrap:
                raise ValueError(
                    "n_repeats > 1 with groups and cv=None: leave-one-source-out has a single "
                    "partition, so every replicate would repeat it; pass n_repeats=1, or an int "
                    "cv for repeated shuffled GroupKFold"
                )
            return LeaveOneGroupOut()
        cv = DEFAULT_N_SPLITS
    if _is_int(cv):
        if groups is not None:
            return GroupKFold(int(cv), shuffle=True, random_state=seed)
        folds = StratifiedKFold if stratify else KFold
        return folds(int(cv), shuffle=True, random_state=seed)
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
    if require_shuffle and not shuffles(splitter):
        raise ValueError(
            f"{splitter!r} does not shuffle, so every replicate would repeat the same partition; "
            "pass a shuffling splitter (e.g. KFold(shuffle=True)) or n_repeats=1"
        )
    return seeded_splitter(splitter, seed, replace=replace)


def _materialise(
    splitter: Any, X: Any, y: Any, groups: Any, split_params: Mapping[str, Any] | None = None
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Return the (train, test) arrays of `splitter`, given `groups` only if it uses them."""
    if isinstance(splitter, list):
        splits = splitter
    else:
        # Sources are always recorded, but only splitters that use groups are given them
        # (scikit-learn warns when a splitter that ignores groups receives them).
        consumes = not hasattr(splitter, "get_metadata_routing") or get_routing_for_object(
            splitter
        ).consumes("split", ["groups"])
        splits = splitter.split(X, y, groups if consumes else None, **(split_params or {}))
    return [(_indices(train), _indices(test)) for train, test in splits]


def _indices(rows: Any) -> np.ndarray:
    """Row indices as int64; a boolean mask (which scikit-learn also accepts) becomes its rows."""
    rows = np.asarray(rows)
    return np.flatnonzero(rows) if rows.dtype == bool else np.asarray(rows, dtype=np.int64)


def _repeats_itself(cv: Any) -> bool:
    """Whether `cv` is a repeated splitter (one with ``n_repeats``) or an explicit list of runs."""
    if hasattr(cv, "split"):
        return hasattr(cv, "n_repeats")
    return isinstance(cv, Sequence) and not isinstance(cv, str) and _is_list_of_runs(cv)


def _is_list_of_runs(cv: Sequence[Any]) -> bool:
    """Whether an explicit `cv` is a list of runs, each a list of (train, test) pairs."""
    return _depth(cv) >= 4


def _runs(
    splitter: Any,
    X: Any,
    y: Any,
    groups: Any,
    split_params: Mapping[str, Any] | None,
    n: int,
) -> list[list[tuple[np.ndarray, np.ndarray]]]:
    """Return the repetitions of `splitter`, each a list of folds whose test sets partition the data.

    An explicit list of runs gives its runs. A splitter with an ``n_repeats`` attribute
    (scikit-learn's :class:`~sklearn.model_selection.RepeatedKFold` and
    :class:`~sklearn.model_selection.RepeatedStratifiedKFold`, or one built like them) is cut
    into ``n_repeats`` consecutive runs of equal length (its ``get_n_splits() / n_repeats``
    folds). Any other splitter or list of (train, test) pairs is cut where the test sets seen
    so far first cover every point exactly once: one run for a K-fold splitter, several for
    one that yields complete partitions in turn.

    Raises
    ------
    ValueError
        Naming the splitter, when a repetition's test sets do not partition ``range(n)``
        (a point tested twice in one repetition, or never), indices are out of range, the
        folds do not divide into ``n_repeats`` runs, a run has fewer than two folds, or a
        fold's training and test sets overlap.
    """
    desc = _name(splitter)
    if isinstance(splitter, list) and _is_list_of_runs(splitter):
        runs = [_as_folds(run, f"run {r} of cv") for r, run in enumerate(splitter)]
        where = [f"run {r} of the explicit list of runs" for r in range(len(runs))]
    else:
        folds = _materialise(splitter, X, y, groups, split_params)
        repeats = getattr(splitter, "n_repeats", None)
        if _is_int(repeats) and repeats >= 1:
            if not folds or len(folds) % repeats:
                raise ValueError(
                    f"{desc} gave {len(folds)} splits, which do not divide into its "
                    f"n_repeats={repeats} repetitions"
                )
            size = len(folds) // repeats
            runs = [folds[start : start + size] for start in range(0, len(folds), size)]
        else:
            runs = _consecutive_runs(folds, n, desc)
        where = [f"repetition {r} of {desc}" if len(runs) > 1 else desc for r in range(len(runs))]
    for folds, place in zip(runs, where, strict=True):
        _check_partition(folds, n, where=place)
    return runs


def _as_folds(run: Any, where: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """One run of an explicit list of runs as (train, test) int arrays."""
    try:
        return [(_indices(train), _indices(test)) for train, test in run]
    except (TypeError, ValueError) as error:
        raise ValueError(
            f"{where} must be a list of (train, test) index arrays ({error})"
        ) from None


def _consecutive_runs(
    folds: list[tuple[np.ndarray, np.ndarray]], n: int, desc: str
) -> list[list[tuple[np.ndarray, np.ndarray]]]:
    """Cut `folds` where the test sets since the last cut first cover each point exactly once."""
    if len(folds) < 2:
        raise ValueError(f"CV needs at least two folds, got {len(folds)} from {desc}")
    runs, start = [], 0
    covered = np.zeros(n, dtype=bool)
    for k, (_, test) in enumerate(folds):
        _check_indices(test, n, desc)
        counts = np.bincount(test, minlength=n)
        again = (counts > 1) | (covered & (counts > 0))
        if again.any():
            earlier = f" ({_span(start, k - 1)})" if k > start else ""
            raise ValueError(
                f"the test sets of {desc} do not partition the data: test set {k} tests "
                f"{int(again.sum())} point(s), the first row {int(np.flatnonzero(again)[0])}, "
                f"that are already tested in the same repetition{earlier}; every point must be "
                "tested exactly once per repetition, as K-fold, group and repeated K-fold "
                "splitters do (ShuffleSplit-like splitters are not CV partitions)"
            )
        covered |= counts > 0
        if covered.all():
            runs.append(folds[start : k + 1])
            start = k + 1
            covered[:] = False
    if start < len(folds):
        where = f"the last repetition ({_span(start, len(folds) - 1)})" if runs else "any fold"
        raise ValueError(
            f"the test sets of {desc} do not partition the data: {n - int(covered.sum())} "
            f"point(s), the first row {int(np.flatnonzero(~covered)[0])}, are never tested in "
            f"{where}; every point must be tested exactly once per repetition, as K-fold, "
            "group and repeated K-fold splitters do (a forward-chaining splitter such as "
            "TimeSeriesSplit never tests its first training window)"
        )
    return runs


def _span(first: int, last: int) -> str:
    return f"test set {first}" if first == last else f"test sets {first}-{last}"


def _check_indices(test: np.ndarray, n: int, desc: str) -> None:
    if test.size and (test.min() < 0 or test.max() >= n):
        raise ValueError(f"test indices of {desc} out of range for {n} samples")


def _check_partition(
    folds: list[tuple[np.ndarray, np.ndarray]], n: int, *, where: str = "the CV"
) -> None:
    """Refuse folds whose test sets do not partition ``range(n)`` or overlap their training set."""
    if len(folds) < 2:
        raise ValueError(f"CV needs at least two folds, got {len(folds)} in {where}")
    tested = np.concatenate([test for _, test in folds])
    _check_indices(tested, n, where)
    counts = np.bincount(tested, minlength=n)
    if (counts != 1).any():
        never, twice = int((counts == 0).sum()), int((counts > 1).sum())
        raise ValueError(
            f"the test sets of {where} do not partition the data: {never} point(s) never tested "
            f"and {twice} tested more than once; use a K-fold, group or repeated K-fold splitter"
        )
    for k, (train, test) in enumerate(folds):
        if np.isin(test, train).any():
            raise ValueError(f"fold {k} of {where}: training and test sets overlap")


def _describe(splitter: Any) -> str:
    return "explicit (train, test) list" if isinstance(splitter, list) else repr(splitter)


def _name(splitter: Any) -> str:
    """Name the splitter as error messages do."""
    return f"the {_describe(splitter)}" if isinstance(splitter, list) else repr(splitter)
