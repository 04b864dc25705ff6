"""The fold-score table: its schema, the array builder, checks and the Nadeau–Bengio ratio.

:func:`check_rope` is the one check of the ROPE half-width for every comparison of fold scores
(:mod:`bayescv.learner_comparison`, :func:`bayescv.bayes.compare_datasets`).
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayescv.fold_scores._inputs import as_numbers, series_in_one_order
from bayescv.fold_scores._scorers import (
    check_scorer_range,
    direction,
    given_range,
    is_scorer_name,
    scorer_range,
)

__all__ = [
    "check_rope",
    "fold_differences",
    "fold_table",
    "is_fold_table",
    "nb_ratio",
    "validate_fold_table",
]

_DIMS = ("dataset", "learner", "repetition", "fold")


def is_fold_table(table: Any) -> bool:
    """Whether `table` is a fold-score table (``attrs["kind"] == "fold_scores"``).

    Parameters
    ----------
    table : object
        Anything.

    Returns
    -------
    bool

    Examples
    --------
    >>> from bayescv.losses import from_arrays
    >>> is_fold_table(fold_table([[0.9, 0.8], [0.7, 0.75]], greater_is_better=True))
    True
    >>> is_fold_table(from_arrays([0.1, 0.4, 0.3, 0.2], [0, 0, 1, 1]))
    False
    """
    return isinstance(table, xr.Dataset) and table.attrs.get("kind") == "fold_scores"


def fold_table(
    scores: Any,
    *,
    runs: int = 1,
    learners: Sequence[str] | None = None,
    datasets: Sequence[str] | None = None,
    n_test: Any = None,
    n_train: Any = None,
    greater_is_better: bool | None = None,
    metric: str | None = None,
    score_range: Sequence[float] | None = None,
    scheme: str = "random",
) -> xr.Dataset:
    """Build a fold-score table from an array of per-fold scores or losses.

    Parameters
    ----------
    scores : array-like or mapping
        Shape (J,) for one learner on one data set, (L, J) for L learners, or (D, L, J) for D
        data sets; J = runs · K values per learner, run after run (as scikit-learn's repeated
        splitters yield them). A mapping ``{learner: array of shape (J,) or (D, J)}`` names the
        learners (pandas Series in it are matched by their index labels), and so does a
        :class:`pandas.DataFrame` of shape (J, L): a column per learner, a row per fold (not
        the (L, J) of an array). Strings of numbers are read as numbers.
    runs : int, default 1
        Number of CV repetitions in the J values.
    learners, datasets : sequence of str, optional
        Names (default ``"A"``, ``"B"``, … and ``"0"``, ``"1"``, …).
    n_test, n_train : array-like, optional
        Test and training set sizes: shape (J,) or (D, J) (run after run, as the scores), or
        anything broadcastable to (D, runs, K), such as (runs, K) or (K,); unknown sizes are
        taken as equal (Nadeau–Bengio ratio 1/(K − 1)).
    greater_is_better : bool, optional
        Direction of `scores`. True negates them into losses. Required unless `metric` is a
        scikit-learn scorer name (those are all greater-is-better).
    metric : str, optional
        Name of the score (stored in the attrs).
    score_range : (float, float), optional
        The values `scores` can take, as given (before any negation), for a metric whose
        range bayescv does not know: a custom score in [0, 1], say. Intervals then stay
        inside it (:func:`bayescv.compare_several` truncates and flags a bound beyond it).
        Default: a scikit-learn scorer's range, else unbounded.
    scheme : {"random", "source"}, default "random"
        What the folds are, recorded as ``attrs["scheme"]``: random K-fold CV, or held-out
        sources (leave-one-group-out, ``GroupKFold``). On ``"source"`` tables
        :func:`bayescv.compare_learners` runs ``correlated_t`` and ``nadeau_bengio`` only
        when named, flagged ``random_kfold_only``, with target ``expected_cv``.

    Returns
    -------
    xarray.Dataset
        The fold-score table (see the module docs). Its attribute ``loss_range`` is the
        range of its losses: `score_range`, or for the scores of a bounded scikit-learn
        scorer (accuracy in [0, 1], say) that range, negated with the scores; else
        unbounded.

    Raises
    ------
    ValueError
        For NaN, infinite, complex, ragged or non-numeric scores, pandas Series whose index
        labels differ between learners, no learner or data set, fewer than two
        folds per run, `runs` not a positive integer dividing J, mismatched shapes, sizes
        below 1, `n_test` without `n_train` (or the reverse), an unknown direction (or a
        `greater_is_better` that is not a bool, or False for a scikit-learn scorer's `metric`,
        whose values are greater-is-better), or positive scores under the name of a
        scikit-learn ``neg_*`` scorer (whose values are <= 0), a `score_range` that is not
        ``(low, high)`` with low < high, or scores outside it (without it, outside the
        range of the scikit-learn scorer named by `metric`: accuracy in percent, say).

    Examples
    --------
    >>> t = fold_table([[0.90, 0.80, 0.85], [0.70, 0.75, 0.72]], greater_is_better=True)
    >>> t["loss"].sizes["learner"], round(float(t["loss"].sel(learner="A").mean()), 3)
    (2, -0.85)
    """
    if greater_is_better is not None and not isinstance(greater_is_better, bool | np.bool_):
        # bool("False") is True: a string would turn the scores around silently.
        raise ValueError(f"greater_is_better must be True or False, got {greater_is_better!r}")
    metric, greater = direction(metric, greater_is_better)
    if scheme not in ("random", "source"):
        raise ValueError(f"scheme must be 'random' or 'source', got {scheme!r}")
    if isinstance(runs, bool) or not isinstance(runs, numbers.Integral) or runs < 1:
        raise ValueError(f"runs must be a positive integer, got {runs!r}")
    if (n_test is None) != (n_train is None):
        raise ValueError(
            "give n_test and n_train together (the Nadeau–Bengio ratio needs both), or neither "
            "for equal folds"
        )
    if isinstance(scores, pd.DataFrame):  # a column per learner, a row per fold
        scores = {c: scores[c].to_numpy() for c in scores.columns}
    if isinstance(scores, Mapping):
        scores = series_in_one_order(scores)  # pandas Series: folds matched by their labels
        learners = [str(k) for k in scores] if learners is None else learners
        arrays = [_real(v) for v in scores.values()]
        shapes = {a.shape for a in arrays}
        if len(shapes) != 1:
            each = ", ".join(f"{n!r} {a.shape}" for n, a in zip(scores, arrays, strict=True))
            raise ValueError(
                f"the learners' scores differ in shape ({each}): every learner needs a score "
                "on the same folds; run them on the same splits (the same cv object with a "
                "fixed random_state, or a list of folds)"
            )
        values = np.stack([np.atleast_2d(a) for a in arrays], axis=1)
    else:
        values = _real(scores)
        if values.ndim == 1:
            values = values[None, None, :]
        elif values.ndim == 2:
            values = values[None, :, :]
        elif values.ndim != 3:
            raise ValueError(f"scores must have 1, 2 or 3 dimensions, got shape {values.shape}")
    if not np.isfinite(values).all():
        raise ValueError("scores contain NaN or infinite values")
    if greater_is_better is None and metric.startswith("neg_") and (values > 0).any():
        # The scorer negates an error, so its values are <= 0: positive ones are the error
        # itself, and reading them as greater-is-better would turn "better" around.
        raise ValueError(
            f"scores named {metric!r} are negated errors (<= 0), but some are positive: for "
            f"the error itself pass greater_is_better=False (and metric={metric[4:]!r})"
        )
    n_data, n_learners, J = values.shape
    if n_data == 0 or n_learners == 0:
        raise ValueError(f"empty input: scores of shape {values.shape} hold no learner's scores")
    runs = int(runs)
    if J % runs:
        raise ValueError(f"{J} values per learner are not {runs} runs of equal length")
    K = J // runs
    if K < 2:
        raise ValueError(f"need at least 2 folds per run, got {K}")
    loss = (-values if greater else values).reshape(n_data, n_learners, runs, K)
    scorer = greater and is_scorer_name(metric)  # a score named as scikit-learn names it
    low, high = scorer_range(metric) if scorer else (-np.inf, np.inf)
    if score_range is not None:
        low, high = given_range(score_range, values)
    else:
        check_scorer_range(values, metric, (low, high))
    learners = _names(learners, n_learners, "learners", alphabetic=True)
    datasets = _names(datasets, n_data, "datasets", alphabetic=False)
    sizes = {}
    for name, given in (("n_test", n_test), ("n_train", n_train)):
        if given is None:
            sizes[name] = np.full((n_data, runs, K), np.nan)
            continue
        arr = np.asarray(given, dtype=float)
        try:
            if arr.ndim in (1, 2) and arr.shape[-1] == J:  # run after run: (J,) or (D, J)
                arr = arr.reshape((*arr.shape[:-1], runs, K))
            arr = np.broadcast_to(arr, (n_data, runs, K))
        except ValueError:
            raise ValueError(
                f"{name} of shape {np.shape(given)} does not fit {n_data} data set(s) × {runs} "
                f"run(s) × {K} folds: give shape (J,) = ({J},), (D, J), (runs, K) or "
                "(D, runs, K)"
            ) from None
        if not (np.isfinite(arr).all() and (arr >= 1).all()):
            raise ValueError(f"{name} must be finite sizes of at least 1")
        sizes[name] = arr.reshape(n_data, runs, K).copy()
    known = np.isfinite(sizes["n_test"]).all() and np.isfinite(sizes["n_train"]).all()
    return xr.Dataset(
        {
            "loss": (_DIMS, loss),
            "n_test": (("dataset", "repetition", "fold"), sizes["n_test"]),
            "n_train": (("dataset", "repetition", "fold"), sizes["n_train"]),
        },
        coords={
            "dataset": datasets,
            "learner": learners,
            "repetition": np.arange(runs),
            "fold": np.arange(K),
        },
        attrs={
            "kind": "fold_scores",
            "metric": metric,
            "greater_is_better": int(greater),
            "sizes": "known" if known else "assumed equal",
            "scheme": scheme,
            # the losses' range: a scorer's, negated with its scores, or none
            "loss_range": [0.0 - high, 0.0 - low] if greater else [low, high],
        },
    )


def _real(scores: Any) -> np.ndarray:
    """Scores as a float array; ragged or complex ones are refused, not cast."""
    try:
        arr = np.asarray(scores)
    except ValueError:
        raise ValueError(
            "the scores are ragged (learners or data sets with different numbers of folds): "
            "every learner needs a score on every fold of every data set"
        ) from None
    if arr.dtype.kind == "c":
        raise ValueError(f"scores must be real, got complex values of dtype {arr.dtype}")
    if arr.dtype.kind == "O" and any(isinstance(v, list | tuple | np.ndarray) for v in arr.flat):
        raise ValueError(
            "the scores are ragged (learners or data sets with different numbers of folds): "
            "every learner needs a score on every fold of every data set"
        )
    return as_numbers(arr)


def _names(given: Sequence[str] | None, n: int, what: str, *, alphabetic: bool) -> list[str]:
    if given is None:
        if alphabetic and n <= 26:
            return [chr(ord("A") + i) for i in range(n)]
        return [str(i) for i in range(n)]
    names = [str(g) for g in given]
    if len(names) != n:
        raise ValueError(f"{len(names)} {what} named for {n} in the scores")
    if len(set(names)) != n:
        raise ValueError(f"duplicated {what} names: {names}")
    return names


def validate_fold_table(table: xr.Dataset) -> xr.Dataset:
    """Check that `table` is a well-formed fold-score table and return it.

    Parameters
    ----------
    table : xarray.Dataset
        A fold-score table.

    Returns
    -------
    xarray.Dataset
        `table`, unchanged.

    Raises
    ------
    ValueError
        When it is not one, its losses are not finite, or its blocks are pairs of points
        (``attrs["block_kind"] == "point_pairs"``), not folds.

    Examples
    --------
    >>> table = fold_table([[0.9, 0.8], [0.7, 0.75]], greater_is_better=True)
    >>> validate_fold_table(table) is table
    True
    """
    if not is_fold_table(table):
        hint = ""
        if isinstance(table, xr.Dataset) and "loss" in table and "block" in table.coords:
            hint = (
                "; this is a per-point loss table: reduce the learners' tables to one with "
                "bayescv.fold_scores.from_loss_tables({name: table, ...})"
            )
        elif isinstance(table, Mapping):
            hint = (
                "; reduce a mapping of per-point loss tables to one with "
                "bayescv.fold_scores.from_loss_tables(tables)"
            )
        raise ValueError(f"not a fold-score table (build one with bayescv.fold_scores){hint}")
    loss = table.variables["loss"]
    if tuple(loss.dims) != _DIMS:
        raise ValueError(f"a fold-score table's loss has dims {_DIMS}, got {loss.dims}")
    if not np.isfinite(loss.values).all():
        raise ValueError("the fold-score table has NaN or infinite losses")
    if table.attrs.get("block_kind") == "point_pairs":  # from_loss_tables of from_elpd pairs
        raise ValueError(
            "the table's 'folds' are pairs of points (pointwise elpd of PSIS-LOO or WAIC), not "
            "CV folds: fold-level methods do not apply; compare such tables with "
            "bayescv.compare_learners (naive_points)"
        )
    return table


def fold_differences(table: xr.Dataset, a: str, b: str) -> xr.DataArray:
    """Return the per-fold loss differences, learner `a` minus learner `b` (negative: `a` better).

    Parameters
    ----------
    table : xarray.Dataset
        A fold-score table.
    a, b : str
        Learner names.

    Returns
    -------
    xarray.DataArray
        Dims (``dataset``, ``repetition``, ``fold``).

    Raises
    ------
    ValueError
        For unknown or equal learner names.

    Examples
    --------
    Accuracies are negated into losses, so A's higher accuracy gives negative differences:

    >>> table = fold_table([[0.90, 0.80, 0.85], [0.70, 0.75, 0.72]], greater_is_better=True)
    >>> diff = fold_differences(table, "A", "B")
    >>> diff.dims, diff.round(4).values.ravel().tolist()
    (('dataset', 'repetition', 'fold'), [-0.2, -0.05, -0.13])
    """
    validate_fold_table(table)
    names = table["learner"].values.tolist()
    for x in (a, b):
        if x not in names:
            raise ValueError(f"unknown learner {x!r}; the table has {names}")
    if a == b:
        raise ValueError(f"compare two different learners, got {a!r} twice")
    # Plain numpy: xarray's alignment would cost a millisecond per call, more than the tests.
    loss = table["loss"].values
    diff = loss[:, names.index(a)] - loss[:, names.index(b)]
    return xr.DataArray(
        diff,
        dims=("dataset", "repetition", "fold"),
        coords={d: table[d].values for d in ("dataset", "repetition", "fold")},
    )


def nb_ratio(table: xr.Dataset) -> np.ndarray:
    """Return the Nadeau–Bengio ratio n_test/n_train of each data set (mean over its folds).

    With unknown sizes it is 1/(K − 1), equal folds (baycomp's ρ/(1 − ρ) with ρ = 1/K).

    Parameters
    ----------
    table : xarray.Dataset
        A fold-score table.

    Returns
    -------
    ndarray of shape (n_datasets,)

    Examples
    --------
    Four folds of unknown size give 1/(K − 1) = 1/3; 20 test and 60 training points the same:

    >>> scores = [[0.9, 0.8, 0.85, 0.8], [0.7, 0.75, 0.72, 0.7]]
    >>> nb_ratio(fold_table(scores, greater_is_better=True)).round(4).tolist()
    [0.3333]
    >>> table = fold_table(scores, greater_is_better=True, n_test=[20] * 4, n_train=[60] * 4)
    >>> nb_ratio(table).round(4).tolist()
    [0.3333]
    """
    K = table.sizes["fold"]
    n_test, n_train = table.variables["n_test"].values, table.variables["n_train"].values
    ratio = (n_test / n_train).reshape(n_test.shape[0], -1).mean(axis=1)
    return np.where(np.isfinite(ratio), ratio, 1.0 / (K - 1))


def check_rope(rope: float) -> float:
    """Return `rope`, the half-width of a region of practical equivalence, as a float.

    Parameters
    ----------
    rope : float
        A finite real number, at least 0; booleans (NumPy's too) and strings are refused.

    Returns
    -------
    float
        `rope` as a Python float.

    Raises
    ------
    ValueError
        Unless `rope` is a finite real number >= 0.
    """
    if isinstance(rope, bool | np.bool_) or not isinstance(rope, numbers.Real):
        raise ValueError(f"rope must be a finite number >= 0, got {rope!r}")
    if not (np.isfinite(rope) and rope >= 0):
        raise ValueError(f"rope must be a finite number >= 0, got {rope!r}")
    return float(rope)
