"""The numerical core of nested CV: fold draws, one repetition's fits, and the summaries.

Private to :mod:`bayescv.nested`. Everything here works on NumPy arrays; the public module
adds validation, parallel dispatch and the xarray layer.

Notation (Bates, Hastie & Tibshirani, Algorithm 1): a repetition draws a random partition
of the units (points, or sources with ``groups``) into K folds. For outer fold j the inner
estimate ε_j is the (K−1)-fold CV error over the other K−1 folds, the held-out errors
e_out are those of the model trained without fold j, and

    a_j = (ε_j − mean(e_out))²,    b_j = estimated Var(mean(e_out) | training data).

The inner CV of outer fold j tests fold i with the model trained without folds {i, j}:
the same model serves outer fold i (tested on j). So a repetition fits each of the
K(K−1)/2 pairs once, plus the K outer models.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn import get_config
from sklearn.base import clone
from sklearn.utils import _safe_indexing

from bayescv.cv.loss_functions import Loss

__all__ = [
    "Repetition",
    "cluster_se",
    "combine_moments",
    "draw_folds",
    "nested_repetition",
    "plain_repetition",
]


@dataclass(frozen=True)
class Repetition:
    """What one nested-CV repetition returns (arrays of shape (K,) unless said otherwise)."""

    a: np.ndarray  # (ε_j − mean e_out_j)²
    b: np.ndarray  # variance of the held-out mean
    inner: np.ndarray  # ε_j, the inner (K−1)-fold CV error of outer fold j
    outer: np.ndarray  # mean of e_out_j
    size: np.ndarray  # points in fold j
    plain_cv: float  # the repetition's outer folds form a K-fold CV: its error estimate
    inner_moments: tuple[float, float, float]  # count, mean, centred sum of squares
    unit_sum: np.ndarray | None  # (n_units,) sums of inner errors per source (groups only)
    unit_count: np.ndarray | None  # (n_units,) how many inner errors per source
    n_fits: int


def draw_folds(n_units: int, n_splits: int, seed: int) -> np.ndarray:
    """Fold of each unit: a uniformly random partition with sizes differing by at most one.

    Parameters
    ----------
    n_units : int
        Number of units (points, or sources).
    n_splits : int
        Number of folds K.
    seed : int
        Seed of the permutation.

    Returns
    -------
    ndarray of int64, shape (n_units,)
        Fold labels ``0 … K−1``; folds ``0 … (n_units mod K) − 1`` hold one unit more.
    """
    fold = np.empty(n_units, dtype=np.int64)
    fold[np.random.default_rng(seed).permutation(n_units)] = np.arange(n_units) % n_splits
    return fold


def _rows(data: Any, rows: np.ndarray) -> Any:
    """Rows of `data`: plain indexing for an ndarray, scikit-learn's dispatch otherwise."""
    if type(data) is np.ndarray and not get_config()["array_api_dispatch"]:
        return data[rows, ...]
    return _safe_indexing(data, rows)


def _fit_loss(
    estimator: Any, X: Any, y: Any, train: np.ndarray, test: np.ndarray, loss: Loss
) -> np.ndarray:
    """Fit a clone of `estimator` on `train` and return the per-point loss on `test`."""
    model = clone(estimator).fit(_rows(X, train), _rows(y, train))
    y_pred = getattr(model, loss.response_method)(_rows(X, test))
    return loss(_rows(y, test), y_pred, getattr(model, "classes_", None))


def _held_out_variance(errors: np.ndarray, units: np.ndarray | None, n_units: int) -> float:
    """Unbiased estimate of Var(mean(errors) | training data).

    Points: ``var(e, ddof=1) / n`` (the authors' ``var(e_out) / length(test_idx)``).
    Sources: the cluster-robust (CR1) variance ``m/(m−1) · Σ_s (S_s − n_s ē)² / n²`` over
    the m sources of the fold (S_s, n_s: a source's error sum and size), which reduces to
    the former with one point per source.
    """
    n = errors.size
    if units is None:
        return float(np.var(errors, ddof=1) / n)
    present = np.unique(units)
    sums = np.bincount(units, weights=errors, minlength=n_units)[present]
    counts = np.bincount(units, minlength=n_units)[present]
    m = present.size
    mean = errors.mean()
    return float(m / (m - 1) * np.sum((sums - counts * mean) ** 2) / n**2)


def nested_repetition(
    estimator: Any,
    X: Any,
    y: Any,
    units: np.ndarray | None,
    n_units: int,
    n_splits: int,
    seed: int,
    loss: Loss,
) -> Repetition:
    """Run one repetition of nested CV: K(K−1)/2 pair fits and K outer fits.

    Parameters
    ----------
    estimator : scikit-learn estimator
        Cloned for every fit.
    X, y : array-like
        Features and targets.
    units : ndarray of int or None
        Source code ``0 … n_units−1`` of each point, or None when every point is a unit.
    n_units : int
        Number of units.
    n_splits : int
        K.
    seed : int
        Seed of this repetition's partition.
    loss : Loss
        Per-point loss.

    Returns
    -------
    Repetition
        The repetition's a, b, inner and outer errors and bookkeeping.
    """
    k = n_splits
    unit_fold = draw_folds(n_units, k, seed)
    fold = unit_fold if units is None else unit_fold[units]
    rows = [np.flatnonzero(fold == j) for j in range(k)]
    size = np.array([r.size for r in rows])
    n = fold.size
    pair_sum = np.zeros((k, k))  # [i, j]: loss sum on fold i of the model without {i, j}
    inner_losses, inner_rows = [], []
    for i in range(k - 1):
        for j in range(i + 1, k):
            train = np.flatnonzero((fold != i) & (fold != j))
            test = np.concatenate((rows[i], rows[j]))
            losses = _fit_loss(estimator, X, y, train, test, loss)
            pair_sum[i, j] = losses[: size[i]].sum()
            pair_sum[j, i] = losses[size[i] :].sum()
            inner_losses.append(losses)
            inner_rows.append(test)
    inner = pair_sum.sum(axis=0) / (n - size)  # column j: folds i ≠ j, pooled over points
    outer = np.empty(k)
    b = np.empty(k)
    plain_sum = 0.0
    for j in range(k):
        e_out = _fit_loss(estimator, X, y, np.flatnonzero(fold != j), rows[j], loss)
        outer[j] = e_out.mean()
        plain_sum += e_out.sum()
        b[j] = _held_out_variance(e_out, None if units is None else units[rows[j]], n_units)
    every = np.concatenate(inner_losses)
    mean = every.mean()
    moments = (float(every.size), float(mean), float(np.sum((every - mean) ** 2)))
    unit_sum = unit_count = None
    if units is not None:
        tested = units[np.concatenate(inner_rows)]
        unit_sum = np.bincount(tested, weights=every, minlength=n_units)
        unit_count = np.bincount(tested, minlength=n_units).astype(float)
    return Repetition(
        a=(inner - outer) ** 2,
        b=b,
        inner=inner,
        outer=outer,
        size=size,
        plain_cv=plain_sum / n,
        inner_moments=moments,
        unit_sum=unit_sum,
        unit_count=unit_count,
        n_fits=k * (k - 1) // 2 + k,
    )


def plain_repetition(
    estimator: Any,
    X: Any,
    y: Any,
    units: np.ndarray | None,
    n_units: int,
    n_splits: int,
    seed: int,
    loss: Loss,
) -> tuple[float, int]:
    """Run one plain K-fold CV on a fresh random partition.

    Parameters
    ----------
    estimator, X, y, units, n_units, n_splits, seed, loss
        As in :func:`nested_repetition`.

    Returns
    -------
    error : float
        The CV error (mean loss over all points).
    n_fits : int
        K.
    """
    unit_fold = draw_folds(n_units, n_splits, seed)
    fold = unit_fold if units is None else unit_fold[units]
    total = 0.0
    for j in range(n_splits):
        test = np.flatnonzero(fold == j)
        total += _fit_loss(estimator, X, y, np.flatnonzero(fold != j), test, loss).sum()
    return total / fold.size, n_splits


def combine_moments(moments: list[tuple[float, float, float]]) -> np.ndarray:
    """Return the running (count, mean, centred sum of squares) of pooled groups, in order.

    Chan, Golub & LeVeque's pairwise update, so no sum of squares is taken about zero.

    Parameters
    ----------
    moments : list of (count, mean, m2)
        One entry per group.

    Returns
    -------
    ndarray of shape (len(moments), 3)
        Row r holds the moments of groups ``0 … r`` pooled.
    """
    out = np.empty((len(moments), 3))
    count, mean, m2 = 0.0, 0.0, 0.0
    for r, (c, m, s) in enumerate(moments):
        total = count + c
        delta = m - mean
        mean += delta * c / total
        m2 += s + delta**2 * count * c / total
        count = total
        out[r] = count, mean, m2
    return out


def cluster_se(unit_sum: np.ndarray, unit_count: np.ndarray) -> np.ndarray:
    """CR1 cluster-robust standard error of the pooled mean, along the last axis.

    Parameters
    ----------
    unit_sum, unit_count : ndarray of shape (..., n_units)
        Sum and number of the values of each cluster.

    Returns
    -------
    ndarray of shape (...)
        ``sqrt(S/(S−1) · Σ_s (T_s − c_s·ē)² / (Σ_s c_s)²)`` with ē the pooled mean.
    """
    n_units = unit_sum.shape[-1]
    total = unit_count.sum(axis=-1, keepdims=True)
    mean = unit_sum.sum(axis=-1, keepdims=True) / total
    ss = np.sum((unit_sum - unit_count * mean) ** 2, axis=-1)
    return np.sqrt(n_units / (n_units - 1) * ss / total[..., 0] ** 2)
