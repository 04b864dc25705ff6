"""How heavy the tail of the losses is: the generalized Pareto shape k̂, per block and pooled.

A CV estimate is a mean of losses, and every normal interval for it assumes a finite variance
of those losses. When their upper tail decays like a power, P(loss > x) ~ x^(−1/k), the
variance is infinite for k > 1/2 (squared errors of Student-t noise with 3 degrees of
freedom have k = 2/3): the mean converges slowly, its sampling distribution is skewed to the
right, and on a typical data set μ̂ falls below its expectation while the variance estimate
is small, so normal intervals miss on the low side far more often than their level says.

:func:`tail_shape` estimates k with ArviZ's implementation of the Pareto k̂ diagnostic of
PSIS (Vehtari et al. 2024; :func:`arviz.psislw`): a generalized Pareto distribution fitted,
by Zhang & Stephens' (2009) empirical-Bayes estimator, to the exceedances of the largest
min(S/5, 3√S) of S values over the next one. The fit sees only exceedances, so shifting the
losses does not change k̂; the losses are passed as log(loss − min + δ), δ the smallest
positive float, which keeps every value finite. Thresholds, as for PSIS:
:data:`KHAT_INFINITE_VARIANCE` = 0.5 (above it the variance of the losses is not finite)
and :data:`KHAT_UNRELIABLE` = 0.7 (above it even the mean converges too slowly for a CV
estimate from a few hundred points to be trusted). The interval functions flag and warn on
the pooled k̂ alone, which :func:`pooled_tail_shape` computes without fitting any block.

Losses bounded on both sides (0-1 and Brier losses: their declared ``loss_range`` is
finite; a column of 0s and 1s that declares none, as :func:`bayescv.losses.effective_range`
reads it) have no heavy tail; they get no k̂. ArviZ is a dependency of bayescv (not of an
extra); if it cannot be found, the diagnostic reports itself unavailable rather than guessing.

References
----------
Vehtari, A., Simpson, D., Gelman, A., Yao, Y. & Gabry, J. (2024). Pareto smoothed importance
sampling. Journal of Machine Learning Research 25(72), 1–58.

Zhang, J. & Stephens, M. A. (2009). A new and efficient estimation method for the generalized
Pareto distribution. Technometrics 51(3), 316–325. doi:10.1198/tech.2009.08017

Smith, R. L. (1987). Estimating tails of probability distributions. Annals of Statistics
15(3), 1174–1207. doi:10.1214/aos/1176350499
"""

from __future__ import annotations

import warnings

import numpy as np
import xarray as xr

from bayescv._extras import import_quietly, missing_extra
from bayescv.losses import is_binary, loss_range, validate
from bayescv.losses._runs import run_starts

__all__ = [
    "KHAT_INFINITE_VARIANCE",
    "KHAT_UNRELIABLE",
    "MIN_TAIL_POINTS",
    "HeavyTailWarning",
    "add_tail_flags",
    "pooled_tail_shape",
    "tail_flag",
    "tail_shape",
    "warn_heavy_tail",
]

#: Above this k̂ the variance of the losses is not finite.
KHAT_INFINITE_VARIANCE = 0.5
#: Above this k̂ the tail is too heavy for the mean of a few hundred losses to be trusted
#: (Vehtari et al. 2024's threshold for PSIS).
KHAT_UNRELIABLE = 0.7
#: Fewest values a k̂ is computed from. Below it k̂ is too noisy to act on: for squared
#: errors of Gaussian noise (a light tail, k = 0) ArviZ's k̂ exceeded 0.5 in 8 % of samples of
#: 80 or 100 points, 1.7 % of 200 and 0.3 % of 300 (300 samples each; docs/estimators.md,
#: "When normal intervals fail").
MIN_TAIL_POINTS = 200


class HeavyTailWarning(UserWarning):
    """The losses have a heavy upper tail: normal intervals for their mean under-cover.

    Examples
    --------
    A :class:`UserWarning`, so the usual filters select it by class:

    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always", HeavyTailWarning)
    ...     warn_heavy_tail(0.8)
    >>> issubclass(caught[0].category, UserWarning)
    True
    """


def _khat(values: np.ndarray) -> tuple[float, int]:
    """ArviZ's k̂ of the upper tail of `values`, and the number of tail points it used."""
    s = values.size
    if s < MIN_TAIL_POINTS or np.ptp(values) == 0:
        return float("nan"), 0
    az = import_quietly("arviz")  # seconds on a first import: only when k̂ is computed
    tail = int(np.ceil(min(s / 5.0, 3.0 * np.sqrt(s))))
    # psislw's k̂ depends only on its tail length and on the tail + 1 largest values (the
    # cutoff and the exceedances), but it argsorts all s of them: 3 of the 4 s of a fit of
    # 10⁷ losses. Given the m largest, an r_eff with 3 sqrt(m / r_eff) = tail − ½ gives it the
    # same tail length, so the same k̂ (tests/test_tails_speed.py holds them equal).
    m, reff = 5 * (tail + 1), 1.0
    top = values
    if s > 2 * m:
        top = _largest(values, m)
        reff = 9.0 * m / (tail - 0.5) ** 2
    shifted = top - values.min() + np.finfo(float).tiny
    # ArviZ's profile-likelihood weights exp(L_j − L_i) overflow to inf for grid points far
    # from the optimum, whose weights are then 0, as they should be: not an error.
    with np.errstate(over="ignore"):
        _, k = az.psislw(np.log(shifted), reff)
    k = float(k)
    return (k if np.isfinite(k) else float("nan")), tail


def _largest(values: np.ndarray, m: int) -> np.ndarray:
    """Return the `m` largest of `values` (those of ``np.partition(values, s − m)[s − m:]``).

    A cut-off from a strided sample of about 10⁵ values (below at least 4m/s of them) keeps
    the values above it in one comparison pass, and only those are partitioned: 0.15 s of a
    fit of 10⁷ losses went to the full partition. When fewer than `m` pass the cut-off (an
    unlucky sample), the full partition answers.
    """
    s = values.size
    sample = values[:: max(1, s // 100_000)]
    rank = sample.size - int(np.ceil(4.0 * m / s * sample.size)) - 1
    if rank > 0:
        candidates = values[values >= np.partition(sample, rank)[rank]]
        if candidates.size >= m:
            return np.partition(candidates, candidates.size - m)[candidates.size - m :]
    return np.partition(values, s - m)[s - m :]


def _upper_and_lower(values: np.ndarray, two_sided: bool) -> tuple[float, int]:
    """Return the heavier of the two tails when values can be negative (loss differences)."""
    k, n = _khat(values)
    if not two_sided:
        return k, n
    k_low, n_low = _khat(-values)
    if np.isnan(k) or (np.isfinite(k_low) and k_low > k):
        return k_low, n_low
    return k, n


def _block_slices(blocks: np.ndarray) -> tuple[np.ndarray, list[tuple]]:
    """Group the points of every replicate by block label, once, without a mask per block.

    Parameters
    ----------
    blocks : ndarray of shape (n_replicates, n_obs)
        Block labels.

    Returns
    -------
    labels : ndarray of shape (n_blocks,)
        The sorted union of the labels over replicates.
    groups : list of tuple
        Per replicate, ``(order, starts, counts)``: the points of block j are
        ``values[order][starts[j]:starts[j] + counts[j]]``, in their order in the table
        (``order`` is None when every block is one contiguous run, as in tables built by
        :mod:`bayescv.losses`; else a stable argsort of the block codes). A block absent
        from a replicate has count 0 there.

    Notes
    -----
    As :func:`bayescv.moments.block_moments` does: run starts from one comparison of
    neighbours, the labels from the runs' labels; only tables whose blocks are split into
    several runs pay a sort, O(N log N).
    """
    runs = []
    for row in blocks:
        starts = run_starts(row)
        runs.append((starts, row[starts]))
    # Every label starts a run, so the labels of the runs are the labels of the points.
    labels = np.unique(np.concatenate([run_labels for _, run_labels in runs]))
    groups = []
    for row, (starts, run_labels) in zip(blocks, runs, strict=True):
        counts = np.zeros(labels.size, dtype=np.int64)
        first = np.zeros(labels.size, dtype=np.int64)
        # More runs than labels means some label has two runs: skip the costly unique.
        if run_labels.size <= labels.size and np.unique(run_labels).size == run_labels.size:
            cols = np.searchsorted(labels, run_labels)
            counts[cols] = np.diff(np.append(starts, row.size))
            first[cols] = starts
            groups.append((None, first, counts))
        else:
            codes = np.searchsorted(labels, row)
            counts[:] = np.bincount(codes, minlength=labels.size)
            first[1:] = np.cumsum(counts)[:-1]
            groups.append((np.argsort(codes, kind="stable"), first, counts))
    return labels, groups


def _tail_inputs(losses: xr.Dataset) -> tuple[np.ndarray, dict, bool, bool]:
    """Validate `losses`; return its losses (2-D), the attrs, whether to fit, and two-sidedness."""
    validate(losses)
    low, high = loss_range(losses)
    values = np.atleast_2d(np.asarray(losses["loss"].values, dtype=float))
    # A column of 0s and 1s that declares no range is a 0-1 loss (effective_range); one of
    # equal values keeps the more specific note of _why_no_khat.
    if not np.isfinite(high) and np.ptp(values) > 0 and is_binary(losses):
        low, high = 0.0, 1.0
    missing = missing_extra(["arviz"], "bayes", what="k-hat")
    attrs = {"available": int(not missing), "note": missing}
    if np.isfinite(low) and np.isfinite(high):
        attrs["note"] = f"losses bounded in [{low:g}, {high:g}]: no heavy tail"
        return values, attrs, False, False
    if missing:
        return values, attrs, False, False
    two_sided = not np.isfinite(low) and bool((values < 0).any())
    return values, attrs, True, two_sided


def _why_no_khat(values: np.ndarray, pooled: np.ndarray) -> str:
    """Say why the pooled k̂ is NaN (for the first replicate without one), or ``""``."""
    missing = np.flatnonzero(np.isnan(pooled))
    if missing.size == 0:
        return ""
    row = values[missing[0]]
    where = f" (replicate {missing[0]})" if values.shape[0] > 1 else ""
    if row.size < MIN_TAIL_POINTS:
        return f"{row.size} losses{where}, fewer than {MIN_TAIL_POINTS}: no k-hat"
    if np.ptp(row) == 0:
        return f"all losses equal{where}: no tail, no k-hat"
    return f"the largest losses are tied{where}: no k-hat"


def _pooled(
    losses: xr.Dataset, values: np.ndarray, attrs: dict, fit: bool, two_sided: bool
) -> xr.Dataset:
    """Fit the pooled k̂ of every replicate; return it, its standard error and tail size."""
    pooled = np.full(values.shape[0], np.nan)
    n_pooled = np.zeros(values.shape[0], dtype=np.int64)
    if fit:
        for r in range(values.shape[0]):
            pooled[r], n_pooled[r] = _upper_and_lower(values[r], two_sided)
        attrs = {**attrs, "note": _why_no_khat(values, pooled)}
    with np.errstate(invalid="ignore", divide="ignore"):
        se_pooled = (1 + pooled) / np.sqrt(n_pooled)
    replicated = "replicate" in losses["loss"].dims
    pick = (lambda a: a) if replicated else (lambda a: a[0])
    lead = ("replicate",) if replicated else ()
    ds = xr.Dataset(
        {
            "khat_pooled": (lead, pick(pooled)),
            "khat_pooled_se": (lead, pick(se_pooled)),
            "n_tail_pooled": (lead, pick(n_pooled)),
        },
        attrs=dict(attrs),
    )
    if replicated:
        ds = ds.assign_coords(replicate=losses["replicate"].values)
    return ds


def pooled_tail_shape(losses: xr.Dataset) -> xr.Dataset:
    """Estimate the Pareto shape k̂ of the tail of all the losses of each replicate.

    :func:`tail_shape` without the per-block k̂: what the heavy-tail flags and warnings of
    the interval functions use, at the cost of one k̂ per replicate (two for losses that can
    be negative), whatever the number of blocks.

    Parameters
    ----------
    losses : xarray.Dataset
        A loss table, with or without a ``replicate`` dim.

    Returns
    -------
    xarray.Dataset
        ``khat_pooled``, ``khat_pooled_se`` and ``n_tail_pooled`` (dims ``[replicate]``) and
        the attrs ``available`` and ``note``, equal to those of :func:`tail_shape`.

    Raises
    ------
    ValueError
        For a malformed loss table (:func:`bayescv.losses.validate`).

    Examples
    --------
    >>> import numpy as np
    >>> from bayescv.losses import from_arrays
    >>> rng = np.random.default_rng(0)
    >>> table = from_arrays(rng.pareto(1.5, 2000), np.repeat([0, 1], 1000))  # k = 1/1.5
    >>> bool(pooled_tail_shape(table)["khat_pooled"] > KHAT_INFINITE_VARIANCE)
    True
    """
    return _pooled(losses, *_tail_inputs(losses))


def tail_shape(losses: xr.Dataset) -> xr.Dataset:
    """Estimate the Pareto shape k̂ of the losses' tail, per block and pooled.

    Parameters
    ----------
    losses : xarray.Dataset
        A loss table, with or without a ``replicate`` dim.

    Returns
    -------
    xarray.Dataset
        ``khat`` (dims ``[replicate,] block``) and ``khat_pooled`` (dims ``[replicate]``):
        the k̂ of each block's losses and of all of them; ``khat_se`` and ``khat_pooled_se``,
        the asymptotic standard error (1 + k̂)/sqrt(n_tail) of the shape's maximum-likelihood
        estimate (Smith 1987), which Zhang & Stephens' estimator shares; ``n_tail`` and
        ``n_tail_pooled``, the number of tail points fitted. NaN where there are fewer than
        :data:`MIN_TAIL_POINTS` losses, where they are all equal, or where the loss is
        bounded on both sides (attr ``note`` says which for the pooled k̂; a block of fewer
        than :data:`MIN_TAIL_POINTS` losses has NaN without a note). When the losses can be
        negative (loss differences, user losses without a lower bound), the heavier of the
        upper and lower tails is reported: a mean is as fragile to either. Attr ``available``: False
        when ArviZ is not installed (then every k̂ is NaN).

    Raises
    ------
    ValueError
        For a malformed loss table (:func:`bayescv.losses.validate`).

    See Also
    --------
    pooled_tail_shape : The pooled k̂ alone, one fit per replicate whatever the blocks.

    Notes
    -----
    The points are grouped by block once (each block a slice, as in
    :func:`bayescv.moments.block_moments`), and blocks with fewer than
    :data:`MIN_TAIL_POINTS` points are skipped before any fit: the cost is one pass over
    the labels plus one k̂ per block large enough to have one.

    Examples
    --------
    >>> import numpy as np
    >>> from bayescv.losses import from_arrays
    >>> rng = np.random.default_rng(0)
    >>> table = from_arrays(rng.pareto(1.5, 2000), np.repeat([0, 1], 1000))  # k = 1/1.5
    >>> bool(tail_shape(table)["khat_pooled"] > KHAT_INFINITE_VARIANCE)
    True
    """
    values, attrs, fit, two_sided = _tail_inputs(losses)
    labels, groups = _block_slices(np.atleast_2d(np.asarray(losses["block"].values)))
    khat = np.full((values.shape[0], labels.size), np.nan)
    n_tail = np.zeros_like(khat, dtype=np.int64)
    if fit:
        for r, (order, first, counts) in enumerate(groups):
            grouped = values[r] if order is None else values[r][order]
            for j in np.flatnonzero(counts >= MIN_TAIL_POINTS).tolist():
                block_values = grouped[first[j] : first[j] + counts[j]]
                khat[r, j], n_tail[r, j] = _upper_and_lower(block_values, two_sided)
    with np.errstate(invalid="ignore", divide="ignore"):
        se = (1 + khat) / np.sqrt(n_tail)
    pooled = _pooled(losses, values, attrs, fit, two_sided)
    replicated = "replicate" in losses["loss"].dims
    pick = (lambda a: a) if replicated else (lambda a: a[0])
    lead = ("replicate",) if replicated else ()
    return xr.Dataset(
        {
            "khat": ((*lead, "block"), pick(khat)),
            "khat_se": ((*lead, "block"), pick(se)),
            "n_tail": ((*lead, "block"), pick(n_tail)),
            **pooled.data_vars,
        },
        coords={"block": labels, **pooled.coords},
        attrs=pooled.attrs,
    )


def tail_flag(khat: float | np.ndarray) -> np.ndarray:
    """Return the interval flag for pooled k̂ values.

    Parameters
    ----------
    khat : float or array-like
        Pooled k̂ (:func:`tail_shape`'s ``khat_pooled``).

    Returns
    -------
    ndarray of str
        ``""``, ``"heavy_tail"`` (k̂ > :data:`KHAT_INFINITE_VARIANCE`) or
        ``"very_heavy_tail"`` (k̂ > :data:`KHAT_UNRELIABLE`); ``""`` for NaN.

    Examples
    --------
    >>> tail_flag([0.2, 0.6, 0.9, float("nan")]).tolist()
    ['', 'heavy_tail', 'very_heavy_tail', '']
    """
    k = np.asarray(khat, dtype=float)
    out = np.where(k > KHAT_INFINITE_VARIANCE, "heavy_tail", "")
    return np.where(k > KHAT_UNRELIABLE, "very_heavy_tail", out).astype("<U15")


#: What :func:`warn_heavy_tail` recommends by default.
LOG_INTERVAL_ADVICE = (
    "Prefer cv_intervals(losses, ['theta_B_weighted'], kind='log') and see the docs, 'When "
    "normal intervals fail'"
)


def warn_heavy_tail(
    khat: float | np.ndarray, *, stacklevel: int = 3, advice: str = LOG_INTERVAL_ADVICE
) -> None:
    """Warn once (a :class:`HeavyTailWarning`) when any pooled k̂ exceeds 0.5.

    Parameters
    ----------
    khat : float or array-like
        Pooled k̂ values.
    stacklevel : int, default 3
        Passed to :func:`warnings.warn`.
    advice : str, default :data:`LOG_INTERVAL_ADVICE`
        The message's last sentence: what the caller can do instead (a caller that already
        does it says so).

    Examples
    --------
    Silent at k̂ <= 0.5 (finite variance), a warning above:

    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always", HeavyTailWarning)
    ...     warn_heavy_tail([0.2, 0.4])
    ...     warn_heavy_tail([0.2, 0.6])
    >>> [w.category.__name__ for w in caught]
    ['HeavyTailWarning']
    """
    k = np.asarray(khat, dtype=float)
    if not (k > KHAT_INFINITE_VARIANCE).any():
        return
    worst = float(np.nanmax(k))
    warnings.warn(
        f"the losses have a heavy upper tail (Pareto k-hat {worst:.2f} > "
        f"{KHAT_INFINITE_VARIANCE}: their variance is not finite); normal intervals for "
        f"their mean under-cover, missing mostly on the low side. {advice}",
        HeavyTailWarning,
        stacklevel=stacklevel,
    )


def add_tail_flags(intervals: xr.Dataset, khat: float | np.ndarray) -> xr.Dataset:
    """Append ``heavy_tail`` / ``very_heavy_tail`` to every row's flag, as the pooled k̂ says.

    Parameters
    ----------
    intervals : xarray.Dataset
        An interval Dataset (:func:`bayescv.intervals.interval_dataset`).
    khat : float or array-like
        The pooled k̂: one value, or one per ``replicate`` of `intervals`.

    Returns
    -------
    xarray.Dataset
        `intervals` with the flags extended and the attr ``khat`` (the largest pooled k̂,
        NaN when none was computed).

    Examples
    --------
    k̂ above 0.5 flags a heavy tail, above 0.7 a very heavy one:

    >>> from bayescv import cv_intervals, from_arrays
    >>> table = from_arrays([0.1, 0.4, 0.3, 0.2, 0.9, 0.5], [0, 0, 1, 1, 2, 2])
    >>> intervals = cv_intervals(table, ["naive_points", "theta_3"])
    >>> add_tail_flags(intervals, 0.6)["flag"].values.tolist()
    ['heavy_tail', 'heavy_tail']
    >>> add_tail_flags(intervals, 0.8)["flag"].values.tolist()
    ['very_heavy_tail', 'very_heavy_tail']
    """
    if not isinstance(intervals, xr.Dataset) or "flag" not in intervals.data_vars:
        raise TypeError(
            "add_tail_flags takes an interval Dataset (with a 'flag' variable, as "
            f"bayescv.intervals.interval_dataset builds), got {type(intervals).__name__}"
            + (
                f" with variables {list(intervals.data_vars)}"
                if hasattr(intervals, "data_vars")
                else ""
            )
        )
    k = np.atleast_1d(np.asarray(khat, dtype=float))
    tail = tail_flag(k)
    flag = intervals["flag"]
    if "replicate" in flag.dims and k.size == flag.sizes["replicate"]:
        tail_da = xr.DataArray(tail, dims=("replicate",))
    else:
        tail_da = xr.DataArray(tail_flag(np.nanmax(k)) if np.isfinite(k).any() else "")
    tail_b, flag_b = xr.broadcast(tail_da, flag)
    joined = np.where(
        flag_b.values == "",
        tail_b.values,
        np.char.add(np.char.add(flag_b.values.astype(str), ","), tail_b.values.astype(str)),
    )
    values = np.where(tail_b.values == "", flag_b.values, joined).astype(str)
    out = intervals.assign(flag=(flag_b.dims, values))
    out["flag"] = out["flag"].transpose(*flag.dims)
    out.attrs["khat"] = float(np.nanmax(k)) if np.isfinite(k).any() else float("nan")
    return out
