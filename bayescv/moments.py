"""Sufficient statistics of a loss table, per block (and per replicate).

Every closed-form variance estimator and the collapsed Bayesian likelihood need only, per
block k,

* ``n``: the number of points n_k,
* ``S``: the sum of losses S_k = Σ_i e_ki,
* ``Q``: the sum of squared losses Q_k = Σ_i e_ki²,
* ``W``: the within-block sum of squares W_k = Σ_i (e_ki − ē_k)², computed from centred
  values (not as Q_k − S_k²/n_k, which cancels badly when the mean is large), with the
  correction of the two-pass algorithm for the rounding of ē_k (Chan, Golub & LeVeque
  1983),

so their cost is O(N) time and O(K) memory: no N×N matrix is ever formed. This module knows
nothing else of the package but the loss table's layout.

Magnitude: the variance estimates built on these sums are of the order of the squared losses
and sum up to about 12·N of them, so losses beyond :func:`largest_loss` (about
3.4e153/√N for N points per run) would overflow float64 into silent infinities. Both
functions refuse them with a ValueError asking to rescale the losses: the variance of μ̂ is
itself of the order of the squared losses, so no rescaling inside could return it in float64.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from bayescv.losses import is_binary
from bayescv.losses._runs import run_starts

__all__ = ["block_moments", "block_sums", "check_magnitude", "largest_loss"]

_FLOAT_MAX = float(np.finfo(np.float64).max)


def largest_loss(n_points: int) -> float:
    """Largest absolute loss whose sums of squares and variance estimates stay finite in float64.

    The closed-form estimators add up to about 12·N squared losses (for example N times the
    spread of the block means); with a factor 16 of headroom the limit is
    ``sqrt(max_float64 / (16 N))``.

    Parameters
    ----------
    n_points : int
        Number of losses N in one CV run.

    Returns
    -------
    float
        The limit, about 3.4e153 / sqrt(N).

    Examples
    --------
    >>> f"{largest_loss(100):.2e}"
    '3.35e+152'
    """
    return float(np.sqrt(_FLOAT_MAX / (16 * max(int(n_points), 1))))


def check_magnitude(values: np.ndarray, n_points: int) -> None:
    """Raise a ValueError if some absolute value exceeds :func:`largest_loss` of `n_points`.

    Parameters
    ----------
    values : ndarray
        Losses.
    n_points : int
        Number of losses in one CV run.

    Raises
    ------
    ValueError
        Also for NaN or infinite values, which no rescaling mends.

    Examples
    --------
    With 2 points the limit is sqrt(max float / 32), about 2.4e153:

    >>> import numpy as np
    >>> check_magnitude(np.array([0.5, 2.0]), 2)
    >>> check_magnitude(np.array([0.5, 1e200]), 2)
    Traceback (most recent call last):
    ...
    ValueError: losses up to 1e+200 overflow float64 in their sums of squares and variance estimates (with 2 points per run the limit is about 2.4e+153); rescale them, e.g. divide them by 1e200
    """
    if values.size == 0:
        return
    bad = ~np.isfinite(values)
    if bad.any():
        first = np.argwhere(bad)[0].tolist()
        raise ValueError(
            f"losses contain {int(bad.sum())} NaN or infinite value(s), the first at position "
            f"{first[0] if len(first) == 1 else first}: every loss must be finite; fix those "
            "points (bayescv.losses.validate(table) names them by their index)"
        )
    peak = max(float(values.max()), -float(values.min()))  # no |values| temporary
    limit = largest_loss(n_points)
    if peak > limit:
        exponent = int(np.ceil(np.log10(peak)))
        raise ValueError(
            f"losses up to {peak:.3g} overflow float64 in their sums of squares and variance "
            f"estimates (with {int(n_points)} points per run the limit is about {limit:.2g}); "
            f"rescale them, e.g. divide them by 1e{exponent}"
        )


def block_sums(
    values: np.ndarray, starts: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Count, sum and sum of squares of contiguous runs of a 1-D array.

    Parameters
    ----------
    values : ndarray of shape (n,)
        Values, each block one contiguous run.
    starts : ndarray of int, shape (n_blocks,)
        Increasing start offsets of the runs; the first must be 0.

    Returns
    -------
    n, S, Q : ndarray of shape (n_blocks,)
        Counts (int64), sums and sums of squares (float64).

    Raises
    ------
    ValueError
        If some value is NaN or infinite, or its absolute value exceeds :func:`largest_loss`
        of ``n`` (the squares would overflow).

    Examples
    --------
    >>> import numpy as np
    >>> block_sums(np.array([1.0, 2.0, 3.0, 4.0]), np.array([0, 1]))
    (array([1, 3]), array([1., 9.]), array([ 1., 29.]))
    """
    values = np.asarray(values, dtype=float)
    with np.errstate(over="ignore", invalid="ignore"):  # checked below, by name
        if _regular_runs(values, starts):
            n, sums, squares, _ = _run_moments(
                values, np.asarray(starts, dtype=np.int64), within=False
            )
        else:
            n = np.diff(np.append(starts, values.size)).astype(np.int64)
            sums = np.add.reduceat(values, starts)
            squares = np.add.reduceat(values * values, starts)
    _check_sums(values, values.size, squares)
    return n, sums, squares


def _check_sums(values: np.ndarray, n_points: int, squares: np.ndarray) -> None:
    """:func:`check_magnitude`, scanning `values` only when the sums of squares allow a doubt.

    The largest squared loss is at most the largest sum of squares, so when that is within
    ``largest_loss(n_points)²`` (always, for ordinary losses) no loss is too large; an
    overflowed (inf) or NaN sum leads to the exact scan.
    """
    limit = largest_loss(n_points)
    if not np.max(squares, initial=0.0) <= limit * limit:
        check_magnitude(values, n_points)


# Runs are reduced in groups of whole runs spanning about this many values, so the scratch
# arrays for squares and centred values stay in cache and are reused, not allocated anew.
_GROUP_SIZE = 1 << 18


def _regular_runs(values: np.ndarray, starts: object) -> bool:
    """Whether `starts` are valid strictly increasing run offsets into the 1-D `values`."""
    starts = np.asarray(starts)
    return (
        values.ndim == 1
        and starts.ndim == 1
        and starts.size > 0
        and starts.dtype.kind in "iu"
        and np.can_cast(starts.dtype, np.intp)
        and starts[0] == 0
        and starts[-1] < values.size
        and bool((starts[1:] > starts[:-1]).all())
    )


def _run_moments(
    values: np.ndarray, starts: np.ndarray, *, within: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """n, S, Q and, if `within`, W of the runs of `values` starting at `starts` (regular).

    Bit-for-bit equal to the whole-array expressions ``np.add.reduceat(values, starts)``,
    ``np.add.reduceat(values * values, starts)`` and, for W, :func:`_corrected` of the
    ``reduceat`` sums of ``centred * centred`` and ``centred``: ``reduceat`` sums each run on
    its own, so running it over groups of whole runs with the same element-wise inputs gives
    the same sums, in one pass over memory.
    """
    n = np.diff(np.append(starts, values.size)).astype(np.int64)
    sums = np.empty(starts.size)
    squares = np.empty(starts.size)
    wss = np.empty(starts.size) if within else None
    first = np.flatnonzero(np.diff(starts // _GROUP_SIZE, prepend=-1))
    last = np.append(first[1:], starts.size)
    lo = starts[first]
    hi = np.append(starts[first[1:]], values.size)
    scratch = np.empty(int((hi - lo).max()))
    for i, j, a, b in zip(first.tolist(), last.tolist(), lo.tolist(), hi.tolist(), strict=True):
        chunk, buf, offsets = values[a:b], scratch[: b - a], starts[i:j] - a
        sums[i:j] = np.add.reduceat(chunk, offsets)
        np.multiply(chunk, chunk, out=buf)
        squares[i:j] = np.add.reduceat(buf, offsets)
        if wss is not None:
            means = sums[i:j] / n[i:j]
            np.subtract(chunk, means[0] if j - i == 1 else np.repeat(means, n[i:j]), out=buf)
            resid = np.add.reduceat(buf, offsets)
            np.multiply(buf, buf, out=buf)
            wss[i:j] = _corrected(np.add.reduceat(buf, offsets), resid, n[i:j])
    return n, sums, squares, wss


def _corrected(centred_squares: np.ndarray, resid: np.ndarray, n: np.ndarray) -> np.ndarray:
    """W = Σ(e − m)² − (Σ(e − m))²/n, the corrected two-pass sum of squares.

    m = S/n carries the rounding of S (about √n ulps of the mean), which adds n(m − ē)² to
    Σ(e − m)²; the residual sum Σ(e − m) = n(ē − m) measures it and the second term removes
    it (Chan, Golub & LeVeque 1983, eq. 1.7). It matters when the spread is within about
    1e-6 of the mean (losses 1e8 + noise 1e-6: a relative error 1e-4 in W without it) and
    is below rounding otherwise. Clipped at 0, which it can cross only by rounding.
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.maximum(centred_squares - resid * resid / np.maximum(n, 1), 0.0)


def block_moments(losses: xr.Dataset) -> xr.Dataset:
    """Per-block sufficient statistics n, S, Q and W of a loss table.

    Parameters
    ----------
    losses : xarray.Dataset
        A loss table (see :mod:`bayescv.losses`), with or without a ``replicate`` dimension.

    Returns
    -------
    xarray.Dataset
        Variables ``n`` (int64), ``S``, ``Q``, ``W`` (float64) with dims ``(block,)`` or
        ``(replicate, block)``. Blocks are the sorted union of labels over replicates; a block
        absent from a replicate has ``n = 0`` and zero sums there. Where every block holds a
        single source, a ``source`` coordinate along ``block`` names it. Attributes are the
        table's.

    Raises
    ------
    TypeError
        If `losses` is not an xarray.Dataset.
    ValueError
        If it has no ``loss`` or ``block``, no losses, a NaN or infinite loss, or some
        absolute loss exceeds :func:`largest_loss` for the points of one run (the sums of
        squares would overflow float64).

    Notes
    -----
    One vectorised pass per statistic. Tables built by :mod:`bayescv.losses` store each block
    as one contiguous run, which this function uses (``np.add.reduceat``); other layouts fall
    back to ``np.bincount`` over block codes.

    Examples
    --------
    >>> from bayescv.losses import from_arrays
    >>> table = from_arrays([1.0, 3.0, 2.0, 6.0], [0, 0, 1, 1])
    >>> m = block_moments(table)
    >>> m["S"].values.tolist(), m["W"].values.tolist()
    ([4.0, 8.0], [2.0, 8.0])
    """
    if not isinstance(losses, xr.Dataset):
        raise TypeError(
            f"losses must be a loss table (xarray.Dataset), got {type(losses).__name__}; "
            "build one with bayescv.from_arrays(loss, block) or bayescv.from_frame"
        )
    missing = [name for name in ("loss", "block") if name not in losses.variables]
    if missing:
        raise ValueError(
            f"not a loss table: the Dataset has no {' or '.join(map(repr, missing))}; build "
            "one with bayescv.from_arrays(loss, block) or bayescv.from_frame"
        )
    loss = np.atleast_2d(np.asarray(losses["loss"].values, dtype=float))
    if loss.size == 0:
        raise ValueError("empty input: the loss table has no losses")
    block = np.atleast_2d(losses["block"].values)
    runs = []
    for row_labels in block:
        starts = run_starts(row_labels)
        runs.append((starts, row_labels[starts]))
    # Every label starts a run, so the labels of the runs are the labels of the points.
    labels = np.unique(np.concatenate([run_labels for _, run_labels in runs]))
    n_rep, n_blocks = loss.shape[0], labels.size
    n = np.zeros((n_rep, n_blocks), dtype=np.int64)
    sums = np.zeros((n_rep, n_blocks))
    squares = np.zeros((n_rep, n_blocks))
    within = np.zeros((n_rep, n_blocks))
    # Overflow is ignored here and refused below, by name, with the loss that caused it.
    with np.errstate(over="ignore", invalid="ignore"):
        for r in range(n_rep):
            row_labels = block[r]
            starts, run_labels = runs[r]
            # More runs than labels means some label has two runs: skip the costly unique.
            contiguous = (
                run_labels.size <= n_blocks and np.unique(run_labels).size == run_labels.size
            )
            if contiguous:
                cols = np.searchsorted(labels, run_labels)
                n[r, cols], sums[r, cols], squares[r, cols], within[r, cols] = _run_moments(
                    loss[r], starts, within=True
                )
            else:
                codes = np.searchsorted(labels, row_labels)
                n[r] = np.bincount(codes, minlength=n_blocks)
                sums[r] = np.bincount(codes, weights=loss[r], minlength=n_blocks)
                squares[r] = np.bincount(codes, weights=loss[r] ** 2, minlength=n_blocks)
                with np.errstate(invalid="ignore", divide="ignore"):
                    means = np.where(n[r] > 0, sums[r] / n[r], 0.0)
                centred = loss[r] - means[codes]
                within[r] = _corrected(
                    np.bincount(codes, weights=centred**2, minlength=n_blocks),
                    np.bincount(codes, weights=centred, minlength=n_blocks),
                    n[r],
                )
    _check_sums(loss.reshape(losses["loss"].shape), loss.shape[-1], squares)

    attrs = dict(losses.attrs)
    if "loss_range" not in attrs and is_binary(losses):
        # Moments show 0-1 losses (Q = S) only within a declared range [0, 1]: without it,
        # intervals from them would lose the score interval and the bounds at 0 and 1.
        attrs["loss_range"] = [0.0, 1.0]
    dims = ("replicate", "block")
    out = xr.Dataset(
        {
            "n": (dims, n, {"long_name": "points in block, n_k"}),
            "S": (dims, sums, {"long_name": "sum of losses, S_k"}),
            "Q": (dims, squares, {"long_name": "sum of squared losses, Q_k"}),
            "W": (dims, within, {"long_name": "within-block sum of squares, W_k"}),
        },
        coords={"block": labels},
        attrs=attrs,
    )
    source = _block_sources(losses, labels)
    if source is not None:
        out = out.assign_coords(source=("block", source))
    if "replicate" in losses.dims:
        return out.assign_coords(replicate=losses["replicate"].values)
    return out.isel(replicate=0, drop=True)


def _block_sources(table: xr.Dataset, labels: np.ndarray) -> np.ndarray | None:
    """Source of each block when every block holds exactly one source throughout, else None."""
    if "source" not in table.coords:
        return None
    # Every distinct (block, source) pair starts a run of equal pairs: read the pairs there,
    # one comparison of neighbours, and sort only the runs' pairs (not the N points' labels).
    block = np.atleast_2d(table["block"].values)
    source = np.atleast_2d(table["source"].values)
    change = (block[:, 1:] != block[:, :-1]) | (source[:, 1:] != source[:, :-1])
    first = np.concatenate([np.ones((block.shape[0], 1), dtype=bool), change], axis=1)
    block_codes = np.searchsorted(labels, block[first])
    sources, source_codes = np.unique(source[first], return_inverse=True)
    # Distinct (block, source) pairs, each coded as one integer (a 1-D unique is far faster
    # than np.unique(axis=1)); sorted by block, then source, as the pairs themselves would be.
    pairs = np.unique(block_codes * sources.size + source_codes)
    if pairs.size != labels.size:
        return None
    return sources[pairs % sources.size]
