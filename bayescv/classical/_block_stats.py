"""Centred per-block statistics that every closed-form estimator reads, and shared helpers.

:func:`block_stats` reduces a loss table (or its :func:`bayescv.moments.block_moments`) to
the block sizes n_k, sums S_k and centred within-block sums of squares W_k, plus the
centred quantities built from them (block means minus their mean), so that no estimator
cancels catastrophically when the losses share a large mean. Notation as in
:mod:`bayescv.classical.estimators` (Geras & Sutton 2013).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import xarray as xr

from bayescv.moments import block_moments

__all__ = ["BlockStats", "block_stats"]


@dataclass(frozen=True)
class BlockStats:
    """Centred per-block statistics of one or several CV runs (leading axis: replicate).

    Absent blocks (``n = 0`` in a replicate that lacks them) are masked out of every sum.

    Attributes
    ----------
    n, S, W : ndarray of shape (R, K)
        Block sizes (float), sums and centred within-block sums of squares.
    present : ndarray of bool, shape (R, K)
        Which blocks each replicate has.
    K, N : ndarray of shape (R,)
        Number of blocks and of points per replicate.
    means : ndarray of shape (R, K)
        Block means ē_k (0 where absent).
    m : ndarray of shape (R,)
        Unweighted mean of the block means (equals μ̂ when sizes are equal).
    mu_hat : ndarray of shape (R,)
        The CV estimate, the mean of all losses.
    d : ndarray of shape (R, K)
        ē_k − m (0 where absent).
    D : ndarray of shape (R,)
        Σ_k (ē_k − m)².
    M : ndarray of shape (R,)
        The common block size, NaN where sizes differ.
    labels : ndarray of shape (K,)
        Block labels.
    replicated : bool
        Whether the input had a ``replicate`` dimension.

    Examples
    --------
    Built by :func:`block_stats`; arrays keep a leading replicate axis even for one run:

    >>> from bayescv.losses import from_arrays
    >>> stats = block_stats(from_arrays([0.1, 0.4, 0.3, 0.2, 0.9, 0.5], [0, 0, 1, 1, 2, 2]))
    >>> stats.n.shape, stats.replicated, stats.equal_sizes.tolist()
    ((1, 3), False, [True])
    """

    n: np.ndarray
    S: np.ndarray
    W: np.ndarray
    present: np.ndarray
    K: np.ndarray
    N: np.ndarray
    means: np.ndarray
    m: np.ndarray
    mu_hat: np.ndarray
    d: np.ndarray
    D: np.ndarray
    M: np.ndarray
    labels: np.ndarray
    replicated: bool

    @property
    def equal_sizes(self) -> np.ndarray:
        """Whether each replicate's blocks all have the same size."""
        return ~np.isnan(self.M)


def block_stats(losses: xr.Dataset | BlockStats) -> BlockStats:
    """Reduce a loss table (or its block moments) to centred block statistics.

    Parameters
    ----------
    losses : xarray.Dataset or BlockStats
        A loss table (see :mod:`bayescv.losses`) or the output of
        :func:`bayescv.moments.block_moments` (returned as is if already a BlockStats).

    Returns
    -------
    BlockStats
        The statistics every estimator reads.

    Examples
    --------
    Blocks {0.1, 0.4}, {0.3, 0.2}, {0.9, 0.5} have means 0.25, 0.25, 0.7, whose mean is
    m = 0.4, and D = 0.15² + 0.15² + 0.3² = 0.135:

    >>> from bayescv.losses import from_arrays
    >>> stats = block_stats(from_arrays([0.1, 0.4, 0.3, 0.2, 0.9, 0.5], [0, 0, 1, 1, 2, 2]))
    >>> stats.means.round(4).tolist(), stats.m.round(4).tolist(), stats.D.round(4).tolist()
    ([[0.25, 0.25, 0.7]], [0.4], [0.135])
    """
    if isinstance(losses, BlockStats):
        return losses
    if not isinstance(losses, xr.Dataset):
        raise TypeError(f"expected a loss table or block moments Dataset, got {type(losses)}")
    moments = block_moments(losses) if "loss" in losses else losses
    missing = {"n", "S", "W"} - set(moments.data_vars)
    if missing:
        raise ValueError(
            f"expected a loss table or block moments; the Dataset lacks {sorted(missing)}"
        )
    replicated = "replicate" in moments.dims
    n = np.atleast_2d(moments["n"].values).astype(float)
    S = np.atleast_2d(moments["S"].values).astype(float)
    W = np.atleast_2d(moments["W"].values).astype(float)
    present = n > 0
    if np.any(n == 1):
        single = np.asarray(moments["block"].values)[np.any(n == 1, axis=0)]
        raise ValueError(
            f"block(s) {single[:5].tolist()} have 1 point; every block needs at least 2 points "
            "to estimate a within-block variance: merge small blocks, or use fewer folds"
        )
    K = present.sum(axis=1).astype(float)
    if np.any(K < 2):
        raise ValueError(
            f"found {int(K.min())} block(s); the variance estimates need at least 2 blocks "
            "(folds or sources) in every replicate"
        )
    N = n.sum(axis=1)
    means = np.divide(S, n, out=np.zeros_like(S), where=present)
    m = means.sum(axis=1) / K
    mu_hat = S.sum(axis=1) / N
    d = np.where(present, means - m[:, None], 0.0)
    D = (d * d).sum(axis=1)
    big = np.where(present, n, -np.inf).max(axis=1)
    small = np.where(present, n, np.inf).min(axis=1)
    M = np.where(big == small, big, np.nan)
    return BlockStats(
        n=n, S=S, W=W, present=present, K=K, N=N, means=means, m=m, mu_hat=mu_hat,
        d=d, D=D, M=M, labels=np.asarray(moments["block"].values), replicated=replicated,
    )  # fmt: skip


def require_equal(stats: BlockStats, name: str) -> None:
    """Raise a ValueError naming `name` unless every replicate's blocks have one size."""
    if not stats.equal_sizes.all():
        sizes = np.unique(stats.n[stats.present]).astype(int)
        raise ValueError(
            f"{name} needs equal block sizes, got sizes {sizes.tolist()[:8]}; use "
            "theta_A_weighted / theta_B_weighted, the naive or Bayle estimators instead"
        )


def size_range(stats: BlockStats) -> str:
    """Say the block sizes in words for a message: ``"7 to 9 points"`` (or ``"7 points"``)."""
    present = stats.n[stats.present]
    low, high = int(present.min()), int(present.max())
    return f"{low} points" if low == high else f"{low} to {high} points"


def unequal_sizes_note(names: list[str], stats: BlockStats, how: str) -> str:
    """One line: which equal-size estimators gave nothing, why, and the way out.

    Parameters
    ----------
    names : list of str
        The estimators that need equal block sizes and got none (empty: no note).
    stats : BlockStats
        The table's statistics, for the sizes.
    how : str
        How to ask for the weighted extensions, e.g. ``"cv_intervals(losses, [...])"``.

    Returns
    -------
    str
        The note, or ``""`` when `names` is empty.
    """
    if not names:
        return ""
    verb = "needs" if len(names) == 1 else "need"
    return (
        f"{', '.join(names)} {verb} equal block sizes and the blocks hold "
        f"{size_range(stats)}, so they give no variance estimate and no interval (flag "
        "'unequal_block_sizes'); "
        f"theta_A_weighted and theta_B_weighted allow any sizes ({how}), as do the naive "
        "and Bayle methods"
    )


def centred_moments(stats: BlockStats) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """s1 − m², s2 − m², s3 − m² (equal sizes), exact in centred form."""
    M, K = stats.M, stats.K
    wbar = stats.W.sum(axis=1) / K
    t1 = wbar / M + stats.D / K
    t2 = stats.D / K - wbar / (M * (M - 1))
    t3 = -stats.D / (K * (K - 1))
    return t1, t2, t3


def sizes(stats: BlockStats) -> np.ndarray:
    """Block sizes n_k with absent blocks set to 2, safe to divide W_k (0 there) by n_k − 1."""
    return np.where(stats.present, stats.n, 2.0)


def pair_mask(stats: BlockStats) -> np.ndarray:
    """(R, K, K) mask of the pairs of distinct blocks that a replicate has."""
    mask = stats.present[:, :, None] & stats.present[:, None, :]
    return mask & ~np.eye(stats.labels.size, dtype=bool)


def as_result(
    values: np.ndarray,
    stats: BlockStats,
    name: str,
    attrs: dict[str, Any] | None = None,
    dims: tuple[str, ...] = (),
) -> xr.DataArray:
    """Label per-replicate `values` (leading axis R): along ``replicate`` only if the input had one.

    `dims` name the axes after the first; ``block`` and ``block_other`` get the block labels.
    """
    coords = {dim: stats.labels for dim in dims if dim in ("block", "block_other")}
    if stats.replicated:
        return xr.DataArray(
            values, dims=("replicate", *dims), coords=coords, name=name, attrs=attrs or {}
        )
    return xr.DataArray(values[0], dims=dims, coords=coords, name=name, attrs=attrs or {})
