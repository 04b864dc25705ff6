"""The numerical core of nested CV: fold draws, the fits of a block of repetitions, summaries.

Private to :mod:`bayescv.nested`. Everything but :func:`run_block` (which fits) works on
NumPy arrays; the public module adds validation, parallel dispatch and the xarray layer.

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
from sklearn.utils.validation import _num_samples

from bayescv.cv import Loss, losses_on_folds
from bayescv.intervals import move_into_range, normal_bounds, score_bounds

__all__ = [
    "Repetition",
    "cluster_se",
    "combine_moments",
    "draw_folds",
    "error_free",
    "nested_bounds",
    "nested_folds",
    "nested_repetition",
    "plain_folds",
    "run_block",
    "summarise",
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
    outer_losses: np.ndarray | None = None  # the K outer folds' losses, fold order, if kept


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


def _point_folds(units: np.ndarray | None, n_units: int, n_splits: int, seed: int) -> np.ndarray:
    """Fold of each point: a partition of the units (:func:`draw_folds`), spread to points."""
    unit_fold = draw_folds(n_units, n_splits, seed)
    return unit_fold if units is None else unit_fold[units]


def nested_folds(
    units: np.ndarray | None, n_units: int, n_splits: int, seed: int
) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray]]]:
    """One repetition's partition and its fits: K(K−1)/2 pairs of folds, then K outer fits.

    Parameters
    ----------
    units : ndarray of int or None
        Source code ``0 … n_units−1`` of each point, or None when every point is a unit.
    n_units : int
        Number of units.
    n_splits : int
        K.
    seed : int
        Seed of this repetition's partition.

    Returns
    -------
    fold : ndarray of int64, shape (n_samples,)
        The fold of each point.
    fits : list of (train, test)
        For each pair i < j (in row order): trained without folds i and j, tested on fold
        i then fold j; then for each j: trained without fold j, tested on it.
    """
    k = n_splits
    fold = _point_folds(units, n_units, k, seed)
    rows = [np.flatnonzero(fold == j) for j in range(k)]
    fits = [
        (np.flatnonzero((fold != i) & (fold != j)), np.concatenate((rows[i], rows[j])))
        for i in range(k - 1)
        for j in range(i + 1, k)
    ]
    fits += [(np.flatnonzero(fold != j), rows[j]) for j in range(k)]
    return fold, fits


def plain_folds(
    units: np.ndarray | None, n_units: int, n_splits: int, seed: int
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Draw a fresh partition; return the K (train, test) pairs of its plain K-fold CV.

    Parameters
    ----------
    units, n_units, n_splits, seed
        As in :func:`nested_folds`.

    Returns
    -------
    list of (train, test)
        Fold j trained without fold j and tested on it.
    """
    fold = _point_folds(units, n_units, n_splits, seed)
    return [(np.flatnonzero(fold != j), np.flatnonzero(fold == j)) for j in range(n_splits)]


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
    fold: np.ndarray,
    fits: list[tuple[np.ndarray, np.ndarray]],
    losses: list[np.ndarray],
    units: np.ndarray | None,
    n_units: int,
    n_splits: int,
    keep_losses: bool = False,
) -> Repetition:
    """Summarise one repetition of nested CV from the test losses of its fits.

    Parameters
    ----------
    fold, fits : as returned by :func:`nested_folds`
        The repetition's partition and its K(K−1)/2 + K (train, test) pairs.
    losses : list of ndarray
        The per-point test losses of each pair, in the order of `fits`.
    units : ndarray of int or None
        Source code of each point, or None when every point is a unit.
    n_units : int
        Number of units.
    n_splits : int
        K.
    keep_losses : bool, default False
        Keep the outer folds' per-point losses (a complete K-fold CV) in ``outer_losses``.

    Returns
    -------
    Repetition
        The repetition's a, b, inner and outer errors and bookkeeping.
    """
    k = n_splits
    n_pairs = k * (k - 1) // 2
    size = np.bincount(fold, minlength=k)
    n = fold.size
    pair_sum = np.zeros((k, k))  # [i, j]: loss sum on fold i of the model without {i, j}
    pairs = ((i, j) for i in range(k - 1) for j in range(i + 1, k))
    for (i, j), pair_losses in zip(pairs, losses[:n_pairs], strict=True):
        pair_sum[i, j] = pair_losses[: size[i]].sum()
        pair_sum[j, i] = pair_losses[size[i] :].sum()
    inner = pair_sum.sum(axis=0) / (n - size)  # column j: folds i ≠ j, pooled over points
    outer = np.empty(k)
    b = np.empty(k)
    for j, e_out in enumerate(losses[n_pairs:]):
        outer[j] = e_out.mean()
        test = fits[n_pairs + j][1]
        b[j] = _held_out_variance(e_out, None if units is None else units[test], n_units)
    every = np.concatenate(losses[:n_pairs])
    mean = every.mean()
    moments = (float(every.size), float(mean), float(np.sum((every - mean) ** 2)))
    unit_sum = unit_count = None
    if units is not None:
        tested = units[np.concatenate([test for _, test in fits[:n_pairs]])]
        unit_sum = np.bincount(tested, weights=every, minlength=n_units)
        unit_count = np.bincount(tested, minlength=n_units).astype(float)
    return Repetition(
        a=(inner - outer) ** 2,
        b=b,
        inner=inner,
        outer=outer,
        size=size,
        plain_cv=float(sum(e_out.sum() for e_out in losses[n_pairs:]) / n),
        inner_moments=moments,
        unit_sum=unit_sum,
        unit_count=unit_count,
        n_fits=n_pairs + k,
        outer_losses=np.concatenate(losses[n_pairs:]) if keep_losses else None,
    )


def run_block(
    estimator: Any,
    X: Any,
    y: Any,
    design: tuple[np.ndarray | None, int, int],
    seeds: list[tuple[str, int]],
    loss: Loss,
    batched: bool | None,
    keep_first: bool = False,
) -> list:
    """Fit a block of repetitions together (one call of :func:`bayescv.cv.losses_on_folds`).

    Parameters
    ----------
    estimator : scikit-learn estimator
        Cloned for every fit.
    X, y : array-like
        Features and targets.
    design : (units, n_units, n_splits)
        As in :func:`nested_folds`.
    seeds : list of ("nested" or "plain", seed)
        The repetitions of the block, in order.
    loss : Loss
        Per-point loss.
    batched : bool or None
        Passed to :func:`bayescv.cv.losses_on_folds`.
    keep_first : bool, default False
        Keep the outer losses of the block's first repetition (for the tail diagnostic).

    Returns
    -------
    list
        Per repetition: a :class:`Repetition` (nested) or the CV error (plain).
    """
    units, n_units, k = design
    plans, fits = [], []
    for kind, seed in seeds:
        if kind == "nested":
            fold, rep_fits = nested_folds(units, n_units, k, seed)
        else:
            fold, rep_fits = None, plain_folds(units, n_units, k, seed)
        plans.append((fold, len(fits), len(rep_fits)))
        fits += rep_fits
    losses, _ = losses_on_folds(estimator, X, y, fits, loss, batched=batched)
    out: list = []
    for fold, start, count in plans:
        mine = losses[start : start + count]
        if fold is None:
            out.append(float(sum(e.sum() for e in mine) / _num_samples(y)))
        else:
            out.append(
                nested_repetition(
                    fold,
                    fits[start : start + count],
                    mine,
                    units,
                    n_units,
                    k,
                    keep_losses=keep_first and start == 0,
                )
            )
    return out


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


def error_free(loss_range: tuple[float, float], err_ncv: float, err_cv: float) -> str:
    """Say whether a 0-1 loss was 0 (or 1) in every fit: ``"no_errors"``, ``"all_errors"``.

    Every loss of every fit enters err_ncv (the pair fits) or err_cv (the outer and extra
    plain-CV fits); for losses in [0, 1] a mean of 0 (of 1) means that every loss was 0 (1).

    Parameters
    ----------
    loss_range : (float, float)
        The declared range of the loss.
    err_ncv, err_cv : float
        The nested and plain CV errors.

    Returns
    -------
    str
        ``"no_errors"``, ``"all_errors"``, or ``""`` (other values, or a range other than
        [0, 1]: not a 0-1 loss).
    """
    if tuple(float(v) for v in loss_range) != (0.0, 1.0):
        return ""
    if err_ncv == 0 and err_cv == 0:
        return "no_errors"
    if err_ncv == 1 and err_cv == 1:
        return "all_errors"
    return ""


def nested_bounds(
    centre: float,
    variance: float,
    *,
    level: float,
    loss_range: tuple[float, float],
    edge: str,
    n_units: int,
) -> tuple[float, float, float, float, str]:
    """Return the estimate and interval of nested CV, inside the loss's range.

    The bias-corrected centre is moved onto the range when it lies outside (flag
    ``"estimate_outside_range"``); the interval is ``estimate ± z·sqrt(variance)`` about the
    moved estimate, cut to the range (flag ``"truncated_to_range"``,
    :func:`bayescv.intervals.normal_bounds`). So lower ≤ estimate ≤ upper whenever they are
    defined. For a 0-1 loss without errors (or with only errors, `edge`), the interval is
    Wilson's for 0 (or N) errors in N = `n_units` independent units
    (:func:`bayescv.intervals.score_bounds`), flagged `edge`.

    Parameters
    ----------
    centre : float
        ``err_ncv − bias``.
    variance : float
        The variance of the estimate, se².
    level : float
        Nominal coverage.
    loss_range : (float, float)
        The range of the loss.
    edge : {"", "no_errors", "all_errors"}
        What :func:`error_free` says.
    n_units : int
        Points, or sources with groups.

    Returns
    -------
    estimate, se, lower, upper : float
        The estimate, its standard error and the bounds.
    flag : str
        Comma-separated flags, ``""`` when none.
    """
    low, high = (float(v) for v in loss_range)
    moved, outside = move_into_range([centre], (low, high))
    estimate = float(moved[0])
    if edge:
        se, lower, upper, flag = score_bounds([estimate], [variance], [n_units], level=level)
    else:
        se, lower, upper, flag = normal_bounds(
            [estimate], [variance], level=level, bounds=(low, high)
        )
    flags = ",".join(f for f in (str(flag[0]), str(outside[0])) if f)
    return estimate, float(se[0]), float(lower[0]), float(upper[0]), flags


def summarise(reps: list, extra: list[float], n: int, k: int, *, grouped: bool) -> dict[str, Any]:
    """Pool the repetitions: mse, err_ncv, err_cv, naive SE, running values.

    Parameters
    ----------
    reps : list of Repetition
        The nested repetitions, in order.
    extra : list of float
        The extra plain-CV errors.
    n : int
        Number of points.
    k : int
        K.
    grouped : bool
        Whether the units are sources (cluster-robust naive SE).

    Returns
    -------
    dict
        The per-fold arrays, the running mse and inflation, and the scalars.
    """
    a = np.stack([r.a for r in reps])
    b = np.stack([r.b for r in reps])
    per_rep = (a - b).mean(axis=1)
    mse_running = np.cumsum(per_rep) / np.arange(1, len(reps) + 1)
    if grouped:
        unit_sum = np.cumsum(np.stack([r.unit_sum for r in reps]), axis=0)
        unit_count = np.cumsum(np.stack([r.unit_count for r in reps]), axis=0)
        naive_running = cluster_se(unit_sum, unit_count)
    else:
        pooled = combine_moments([r.inner_moments for r in reps])
        naive_running = np.sqrt(pooled[:, 2] / (pooled[:, 0] - 1) / n)
    scale = (k - 1) / k
    with np.errstate(divide="ignore", invalid="ignore"):
        # NaN where the MSE estimate is negative (flagged negative_variance), not 0, which
        # would read as "no inflation"
        inflation_running = np.sqrt(np.where(mse_running < 0, np.nan, scale * mse_running))
        inflation_running = inflation_running / naive_running
    plain = np.array([r.plain_cv for r in reps])
    inner = np.stack([r.inner for r in reps])
    return {
        "a": a,
        "b": b,
        "inner": inner,
        "outer": np.stack([r.outer for r in reps]),
        "size": np.stack([r.size for r in reps]),
        "plain": plain,
        "extra": np.asarray(extra, dtype=float),
        "mse_running": mse_running,
        "inflation_running": inflation_running,
        "mse": float(mse_running[-1]),
        "naive_se": float(naive_running[-1]),
        "err_ncv": float(inner.mean()),
        "err_cv": float(np.concatenate([plain, extra]).mean()),
    }
