"""The interval result shared by every method of the package.

Every interval method (closed-form variance estimators, nested CV, the Bayesian model,
importance weighting) returns the same :class:`xarray.Dataset`:

* variables ``estimate``, ``lower``, ``upper`` and ``se`` (float), and ``flag`` (str, empty
  when nothing is wrong: for example ``"negative_variance"`` when a variance estimate was
  below zero and no interval could be formed), all with dim ``method_name`` last, after any
  leading dims such as ``replicate``;
* coord ``target`` along ``method_name``: the estimand each interval is for, one of
  :data:`ESTIMANDS`:

  - ``expected_cv``: E[μ̂] with the sources fixed and the data within them resampled;
  - ``ose``: the out-of-source error, the mean error over the population of sources
    (Geras & Sutton 2013, eq. 3): a fixed number;
  - ``new_source``: the error level of one new source, a random draw from that population
    (a predictive target: it carries the between-source spread τ² itself);
  - ``err``: the expected error over training sets of size n (Bates et al.'s Err);
  - ``err_xy``: the error of the model fitted on this data set (Bates et al.'s Err_XY);
  - ``kfold_test_error``: the mean conditional error of the K fold models (Bayle et al.);
  - ``target_risk``: the risk on a covariate-shifted target domain;
* attrs ``level`` (the nominal coverage), ``target`` (the common target, or the distinct
  targets joined by ``", "``), ``kind``, and provenance (``bayescv_version``, ``created``,
  ``seed`` when randomness was involved).

Nothing is clipped silently: a bound that cannot be formed is NaN and its row is flagged.

Select a method with ``ds.sel(method_name="theta_B")``. The dim is not called ``method``
because that is a keyword argument of :meth:`xarray.Dataset.sel` (inexact matching), which
``ds.sel(method="theta_B")`` would silently fill instead of indexing.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import xarray as xr
from scipy import stats

from bayescv._bounds import first_cause, truncate_to_range, two_sided_quantile
from bayescv._provenance import created_now, package_version

__all__ = [
    "ESTIMANDS",
    "check_level",
    "combine_intervals",
    "interval_dataset",
    "log_bounds",
    "move_into_range",
    "normal_bounds",
    "score_bounds",
]

#: Estimands an interval can target (see the design's estimands table).
ESTIMANDS = (
    "expected_cv",
    "ose",
    "new_source",
    "err",
    "err_xy",
    "kfold_test_error",
    "target_risk",
)


def normal_bounds(
    estimate: Any,
    variance: Any,
    *,
    level: float = 0.95,
    kind: str = "normal",
    df: Any = None,
    bounds: tuple[float, float] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Two-sided interval ``estimate ± q · sqrt(variance)`` with its flags.

    Parameters
    ----------
    estimate : array-like
        Point estimates.
    variance : array-like
        Estimated variances of the estimates, broadcastable against `estimate`. Negative
        values are not clipped: their interval is NaN and flagged ``"negative_variance"``.
    level : float, default 0.95
        Nominal coverage, in (0, 1).
    kind : {"normal", "t"}, default "normal"
        Quantile of the standard normal or of Student's t with `df` degrees of freedom.
    df : array-like, optional
        Degrees of freedom, required when ``kind="t"``.
    bounds : (float, float), optional
        The range of the losses (:func:`bayescv.losses.loss_range`): a bound outside it is
        moved onto it and its row flagged ``"truncated_to_range"``.

    Returns
    -------
    se, lower, upper : ndarray
        Standard errors and bounds (NaN where the variance is negative or NaN).
    flag : ndarray of str
        ``""``, ``"negative_variance"``, ``"undefined_variance"`` (NaN variance),
        ``"infinite_variance"`` or ``"undefined_estimate"`` (NaN or infinite estimate); the
        bounds of a flagged row are NaN, never infinite. (Finite inputs give finite bounds:
        ``q · sqrt(variance)`` is far below the float64 maximum.) A zero variance gives the
        degenerate interval [estimate, estimate], flagged ``"zero_variance"``; a row
        truncated to `bounds` is flagged ``"truncated_to_range"``.

    Examples
    --------
    >>> se, lower, upper, flag = normal_bounds([1.0, 1.0], [0.04, -0.01], level=0.95)
    >>> np.round(lower, 3), flag
    (array([0.608,   nan]), array(['', 'negative_variance'], dtype='<U18'))
    """
    check_level(level)
    level = float(level)  # a float32 level would make the quantile float32
    estimate, variance = np.broadcast_arrays(
        np.asarray(estimate, dtype=float), np.asarray(variance, dtype=float)
    )
    quantile = two_sided_quantile(level, kind, df)
    negative = variance < 0
    with np.errstate(invalid="ignore"):
        se = np.where(negative, np.nan, np.sqrt(np.where(negative, 0.0, variance)))
        half = quantile * se
        lower, upper = estimate - half, estimate + half
    causes = {
        "negative_variance": negative,
        "undefined_variance": np.isnan(variance),
        "infinite_variance": np.isposinf(variance),
        "undefined_estimate": ~np.isfinite(estimate),
    }
    flag = first_cause(causes, estimate.shape)
    bad = flag != ""
    lower, upper = np.where(bad, np.nan, lower), np.where(bad, np.nan, upper)
    flag = np.where(~bad & (variance == 0), "zero_variance", flag)
    if bounds is not None:  # flagged rows have NaN bounds: truncation leaves them alone
        lower, upper, flag = truncate_to_range(lower, upper, flag, bounds)
    return se, lower, upper, flag.astype(str)


def move_into_range(estimate: Any, bounds: tuple[float, float]) -> tuple[np.ndarray, np.ndarray]:
    """Move estimates outside the range of the losses onto its nearer end, with a flag.

    An extrapolated, bias-corrected or control-variate estimate can leave the range of the
    losses (:func:`bayescv.losses.loss_range`); as :func:`normal_bounds` keeps the bounds in
    `bounds`, this keeps the estimate there too, so that lower ≤ estimate ≤ upper. Callers
    keep the estimate before the move (``estimate_unbounded``).

    Parameters
    ----------
    estimate : array-like
        Point estimates.
    bounds : (float, float)
        The range ``(low, high)``; an infinite end moves nothing.

    Returns
    -------
    moved : ndarray of float
        `estimate` clipped to ``[low, high]``; NaN stays NaN.
    flag : ndarray of str
        ``"estimate_outside_range"`` where an estimate was moved, else ``""`` (also for NaN).

    Examples
    --------
    >>> moved, flag = move_into_range([-0.1, 0.5, np.nan], (0.0, 1.0))
    >>> moved, flag
    (array([0. , 0.5, nan]), array(['estimate_outside_range', '', ''], dtype='<U22'))
    """
    estimate = np.asarray(estimate, dtype=float)
    low, high = float(bounds[0]), float(bounds[1])
    outside = (estimate < low) | (estimate > high)  # False for NaN
    moved = np.asarray(np.clip(estimate, low, high))
    return moved, np.where(outside, "estimate_outside_range", "")


def log_bounds(
    estimate: Any,
    variance: Any,
    *,
    level: float = 0.95,
    bounds: tuple[float, float] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Transformed-scale interval for a positive mean: μ̂ · exp(± z · sqrt(θ̂) / μ̂).

    The normal interval of log μ̂, whose standard error is sqrt(θ̂)/μ̂ by the delta method,
    mapped back. It stays above 0 by construction and reaches further up than down, as the
    sampling distribution of a mean of right-skewed, heavy-tailed losses does.

    Parameters
    ----------
    estimate : array-like
        Positive estimates μ̂ (a mean of losses that are at least 0).
    variance : array-like
        Estimated variances θ̂ of μ̂.
    level : float, default 0.95
        Nominal coverage.
    bounds : (float, float), optional
        The range of the losses; a bound outside it is moved onto it, as by :func:`normal_bounds`.

    Returns
    -------
    se, lower, upper : ndarray
        sqrt(θ̂) and the bounds (NaN where θ̂ is negative or NaN, or μ̂ ≤ 0).
    flag : ndarray of str
        As :func:`normal_bounds`; ``"undefined_estimate"`` also for μ̂ ≤ 0 (no log scale).

    Examples
    --------
    >>> se, lower, upper, flag = log_bounds([2.0], [0.04])
    >>> np.round([lower[0], upper[0]], 3).tolist()
    [1.644, 2.433]
    """
    check_level(level)
    mu, theta = np.broadcast_arrays(
        np.asarray(estimate, dtype=float), np.asarray(variance, dtype=float)
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        log_mu = np.log(np.where(mu > 0, mu, np.nan))
        # Truncated on the log scale (log 0 = -inf), as exp is monotone; flagged rows get NaN.
        logs = None if bounds is None else np.log(np.maximum(bounds, 0.0))
        se, lower, upper, flag = normal_bounds(log_mu, theta / mu**2, level=level, bounds=logs)
    flag = np.where(mu <= 0, "undefined_estimate", flag)  # not what θ̂/μ̂² became (inf, 0/0)
    se = np.sqrt(np.where(theta < 0, np.nan, theta))
    return se, np.exp(lower), np.exp(upper), flag


def score_bounds(
    estimate: Any,
    variance: Any,
    n_points: Any,
    *,
    level: float = 0.95,
    df: Any = np.inf,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Score (Wilson-type) interval for a mean of 0-1 losses on an effective sample size.

    The bounds solve ``|p̂ − p| ≤ z sqrt(p (1 − p) / n_eff)`` (Wilson 1927) with
    n_eff = p̂ (1 − p̂) / θ̂, the sample size at which independent 0-1 losses would have the
    estimated variance θ̂ of the CV estimate: θ̂ carries the dependence between folds, the
    score form keeps the bounds inside [0, 1] and keeps their coverage at error rates near 0
    or 1, where a normal interval misses on the low side (Brown, Cai & DasGupta 2001). With
    θ̂ = p̂ (1 − p̂) / N (independent losses) it is the plain Wilson interval.

    Parameters
    ----------
    estimate : array-like
        Error rates p̂ in [0, 1].
    variance : array-like
        Estimated variances θ̂ of p̂.
    n_points : array-like
        The number of losses N, used when p̂ is 0 or 1: then p̂ (1 − p̂) = θ̂ = 0 and no
        effective size can be estimated; the interval is Wilson's for 0 (or N) errors in N
        points, whose upper bound z² / (N + z²) is about 3.84 / N at 95 %, flagged
        ``"no_errors"`` (``"all_errors"``): the CV dependence cannot be seen in such a table,
        so the bound is that of independent points.
    level : float, default 0.95
        Nominal coverage.
    df : array-like, default inf
        Degrees of freedom of the quantile z (Student t; inf: the normal quantile). A method
        defined as a t procedure (Nadeau–Bengio) keeps its t quantile here, so that its score
        interval agrees with its t test; at p̂ = 0 or 1 the quantile is normal.

    Returns
    -------
    se, lower, upper : ndarray
        sqrt(θ̂) (NaN where p̂ is 0 or 1, whose bounds use no θ̂) and the bounds (NaN where θ̂
        is negative or NaN, or p̂ is outside [0, 1];
        [p̂, p̂], flagged ``"zero_variance"`` as by :func:`normal_bounds`, where θ̂ = 0 and
        0 < p̂ < 1).
    flag : ndarray of str
        As :func:`normal_bounds`, plus ``"no_errors"`` and ``"all_errors"``.

    Examples
    --------
    >>> se, lower, upper, flag = score_bounds([0.0, 0.1], [0.0, 0.09 / 100], [100, 100])
    >>> np.round(upper, 4).tolist(), flag.tolist()
    ([0.037, 0.1744], ['no_errors', ''])
    """
    check_level(level)
    p, theta, n, dof = np.broadcast_arrays(
        np.asarray(estimate, dtype=float),
        np.asarray(variance, dtype=float),
        np.asarray(n_points, dtype=float),
        np.asarray(df, dtype=float),
    )
    if np.any(dof <= 0):
        raise ValueError(f"degrees of freedom must be positive, got {df}")
    edge = (p == 0) | (p == 1)
    # At p̂ = 0 or 1 no θ̂ enters (Wilson's bound for N independent points): normal quantile.
    z = stats.t.ppf(0.5 + float(level) / 2, np.where(edge, np.inf, dof))
    with np.errstate(divide="ignore", invalid="ignore"):
        n_eff = np.where(edge, n, p * (1 - p) / theta)
        shrink = 1 + z**2 / n_eff
        centre = (p + z**2 / (2 * n_eff)) / shrink
        half = z / shrink * np.sqrt(p * (1 - p) / n_eff + z**2 / (4 * n_eff**2))
        # At p̂ = 0 or 1 the bounds take no θ̂: no se stands behind them (NaN, not θ̂'s 0).
        se = np.sqrt(np.where((theta < 0) | edge, np.nan, theta))
    causes = {
        "negative_variance": theta < 0,
        "undefined_variance": np.isnan(theta),
        "undefined_estimate": ~np.isfinite(p) | (p < 0) | (p > 1),
        "no_errors": p == 0,
        "all_errors": p == 1,
    }
    flag = first_cause(causes, p.shape)
    # θ̂ = 0 inside (0, 1) (equal fold error rates, say): the degenerate [p̂, p̂], flagged as
    # normal_bounds flags it; Wilson's interval tends to it as n_eff grows without bound.
    flag = np.where((flag == "") & ~edge & (theta == 0), "zero_variance", flag)
    centre, half = (
        np.where(flag == "zero_variance", p, centre),
        np.where(flag == "zero_variance", 0.0, half),
    )
    bad = ~np.isin(flag, ("", "no_errors", "all_errors", "zero_variance"))
    # Analytically the bounds are 0 at p̂ = 0 and 1 at p̂ = 1; the clip removes rounding.
    lower = np.where(bad, np.nan, np.where(p == 0, 0.0, np.clip(centre - half, 0.0, 1.0)))
    upper = np.where(bad, np.nan, np.where(p == 1, 1.0, np.clip(centre + half, 0.0, 1.0)))
    return se, lower, upper, flag


def check_level(level: float) -> None:
    """Raise a ValueError unless `level` is a real number with ``0 < level < 1``.

    Python and NumPy real scalars (``np.float32(0.9)``, 0-d arrays) are accepted; booleans,
    strings and complex numbers are not.

    Parameters
    ----------
    level : float
        Nominal coverage.

    Examples
    --------
    >>> check_level(np.float32(0.9))
    >>> check_level(95)
    Traceback (most recent call last):
    ValueError: level must be a number in (0, 1), got 95
    """
    real = isinstance(level, numbers.Real) or (
        isinstance(level, np.ndarray) and level.ndim == 0 and level.dtype.kind in "fiu"
    )
    if isinstance(level, bool | np.bool_) or not real or not 0 < float(level) < 1:
        raise ValueError(f"level must be a number in (0, 1), got {level!r}")


def interval_dataset(
    method_name: Sequence[str],
    *,
    estimate: Any,
    lower: Any,
    upper: Any,
    se: Any,
    level: float,
    target: str | Sequence[str],
    flag: Any = None,
    kind: str = "normal",
    dims: Sequence[str] = (),
    coords: Mapping[str, Any] | None = None,
    seed: int | None = None,
    attrs: Mapping[str, Any] | None = None,
) -> xr.Dataset:
    """Build the interval Dataset that every method of the package returns.

    Parameters
    ----------
    method_name : sequence of str
        Method names (the ``method_name`` coordinate); the last axis of every array.
    estimate, lower, upper, se : array-like of shape (..., n_methods)
        Point estimates, bounds and standard errors (NaN where undefined).
    level : float
        Nominal coverage of the intervals.
    target : str or sequence of str
        The estimand of every interval, or one per method (see :data:`ESTIMANDS`).
    flag : array-like of str, optional
        Per-interval flags, ``""`` when nothing is wrong; default all ``""``.
    kind : str, default "normal"
        How the bounds were formed (``"normal"``, ``"t"``, ``"posterior_hdi"``, ...).
    dims : sequence of str, default ()
        Names of the leading dims (for example ``("replicate",)``).
    coords : mapping, optional
        Extra coordinates (for example ``{"replicate": [...]}``).
    seed : int, optional
        Seed that reproduces the result, recorded in the attrs.
    attrs : mapping, optional
        Further attrs (settings of the method).

    Returns
    -------
    xarray.Dataset
        Variables ``estimate``, ``lower``, ``upper``, ``se``, ``flag`` with dims
        ``(*dims, "method_name")``; coords ``method_name`` and ``target``; attrs ``level``,
        ``target``, ``kind``, ``bayescv_version``, ``created`` (and ``seed``).

    Examples
    --------
    >>> ds = interval_dataset(
    ...     ["naive"], estimate=[0.3], lower=[0.2], upper=[0.4], se=[0.05],
    ...     level=0.9, target="err",
    ... )
    >>> ds["upper"].sel(method_name="naive").item(), ds.attrs["target"]
    (0.4, 'err')
    """
    check_level(level)
    method_name = [str(m) for m in method_name]
    if len(set(method_name)) != len(method_name):
        raise ValueError(f"method names must be unique, got {method_name}")
    targets = [target] * len(method_name) if isinstance(target, str) else [str(t) for t in target]
    if len(targets) != len(method_name):
        raise ValueError(f"got {len(targets)} targets for {len(method_name)} methods")
    unknown = sorted(set(targets) - set(ESTIMANDS))
    if unknown:
        raise ValueError(f"unknown target(s) {unknown}; known estimands are {list(ESTIMANDS)}")
    all_dims = (*dims, "method_name")
    values = {"estimate": estimate, "lower": lower, "upper": upper, "se": se}
    data_vars = {}
    for name, value in values.items():
        array = np.asarray(value, dtype=float)
        if array.ndim != len(all_dims) or array.shape[-1] != len(method_name):
            raise ValueError(
                f"{name} has shape {array.shape}; expected {len(all_dims)} dims "
                f"{all_dims} with {len(method_name)} methods last"
            )
        data_vars[name] = (all_dims, array)
    shape = data_vars["estimate"][1].shape
    flags = np.full(shape, "", dtype=object) if flag is None else np.asarray(flag, dtype=object)
    data_vars["flag"] = (all_dims, np.broadcast_to(flags, shape).astype(str))
    ds = xr.Dataset(
        data_vars,
        coords={
            "method_name": method_name,
            "target": ("method_name", targets),
            **dict(coords or {}),
        },
    )
    ds.attrs = {
        "level": float(level),
        "target": ", ".join(dict.fromkeys(targets)),
        "kind": kind,
        "bayescv_version": package_version(),
        "created": created_now(),
        **({} if seed is None else {"seed": int(seed)}),
        **dict(attrs or {}),
    }
    return ds


def combine_intervals(*results: xr.Dataset) -> xr.Dataset:
    """Concatenate interval Datasets of the same level along ``method_name``.

    Parameters
    ----------
    *results : xarray.Dataset
        Interval Datasets (from :func:`interval_dataset`) with distinct method names, or one
        list of them. Variables over other dims than the intervals' (nested CV's per-fold
        diagnostics) are left out, as they would repeat every row over those dims.

    Returns
    -------
    xarray.Dataset
        One Dataset; ``attrs["target"]`` lists the distinct targets. Attrs that differ
        between the inputs (method settings) are dropped and ``created`` is set anew.

    Examples
    --------
    >>> same = dict(estimate=[0.3], lower=[0.2], upper=[0.4], se=[0.05], level=0.9)
    >>> ds = combine_intervals(interval_dataset(["naive"], target="err", **same),
    ...                        interval_dataset(["bayle"], target="kfold_test_error", **same))
    >>> ds["method_name"].values.tolist(), ds.attrs["target"]
    (['naive', 'bayle'], 'err, kfold_test_error')
    """
    if len(results) == 1 and isinstance(results[0], list | tuple):
        results = tuple(results[0])  # a list of results, as xarray.concat takes them
    if not results:
        raise ValueError("combine_intervals needs at least one interval Dataset")
    results = [ds.drop_dims(set(ds.dims) - {*ds["estimate"].dims, "ci_bound"}) for ds in results]
    levels = {ds.attrs.get("level") for ds in results}
    if len(levels) != 1:
        raise ValueError(f"cannot combine intervals of different levels {sorted(levels)}")
    # Explicit combine options: variables without a method dim gain one (one value per
    # input), as xarray's current default does, without its FutureWarning.
    combined = xr.concat(
        results,
        dim="method_name",
        data_vars="all",
        coords="different",
        compat="equals",
        join="outer",
        combine_attrs="drop_conflicts",
    )
    names, counts = np.unique(combined["method_name"].values.astype(str), return_counts=True)
    if (counts > 1).any():  # name them: the list of every method hid which one repeats
        raise ValueError(f"method names repeat across results: {', '.join(names[counts > 1])}")
    combined.attrs["target"] = ", ".join(dict.fromkeys(combined["target"].values.tolist()))
    combined.attrs["level"] = levels.pop()
    # Conflicting attrs (settings of different methods) are dropped; provenance is renewed.
    combined.attrs.setdefault("bayescv_version", package_version())
    combined.attrs["created"] = created_now()
    return combined
