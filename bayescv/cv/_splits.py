"""The folds of the CV runners: splitter choice, bootstrap resamples and partition checks.

:func:`_splitter` turns the ``cv`` argument into the splitter of one replicate, following
:func:`sklearn.model_selection.check_cv` (an int is stratified for a classifier with a
binary or multiclass target) except that every int splitter is shuffled and seeded, since
random K-fold theory needs a random partition. :func:`balanced_group_folds` keeps the copies
of a bootstrap resample together.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
from sklearn.base import is_classifier
from sklearn.model_selection import GroupKFold, KFold, LeaveOneGroupOut, StratifiedKFold
from sklearn.utils.metadata_routing import get_routing_for_object
from sklearn.utils.multiclass import type_of_target

from bayescv._provenance import resolve_seed

__all__ = ["balanced_group_folds"]

#: K of random K-fold CV when ``cv`` is None and there are no sources.
DEFAULT_N_SPLITS = 10


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
    else a shuffled KFold. Repeated CV (`replicated`) needs a shuffling splitter and replaces
    its seed; bootstrap replicates also get a fresh seed, but a deterministic splitter is fine
    there since each replicate partitions different data.
    """
    if cv is None:
        if groups is not None:
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
    return [
        (np.asarray(train, dtype=np.int64), np.asarray(test, dtype=np.int64))
        for train, test in splits
    ]


def _check_partition(folds: list[tuple[np.ndarray, np.ndarray]], n: int) -> None:
    """Refuse folds whose test sets do not partition ``range(n)`` or overlap their training set."""
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
