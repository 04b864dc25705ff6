"""Target-domain risk from weighted source losses: importance weighting and a control variate.

Under covariate shift (``p(y | x)`` the same in both domains) the risk on the target domain
is the importance-weighted source risk (Kouw & Loog, "A control variate for evaluation
under covariate shift")::

    R_T = E_T[l] = E_S[l · w],            w(x) = p_T(x) / p_S(x),

estimated from ``n`` labelled source points by ``R_W = mean(l_i w_i)``. Because
``E_S[w] = 1``, ``w - 1`` has mean zero and is a control variate: for any fixed ``β``,
``R_β = mean(l_i w_i - β (w_i - 1))`` is unbiased too, with variance
``(Var(l w) - 2 β Cov(l w, w) + β² Var(w)) / n``, smallest at
``β* = Cov(l w, w) / Var(w)`` where it is ``Var(R_W) · (1 - ρ²)``, ρ the correlation of
``l w`` and ``w``: never larger than ``Var(R_W)``.

Estimating β from the same points makes ``R_β`` biased (by ``-Cov(β̂, mean(w))``, of order
1/n); :func:`control_variate_risk` therefore *cross-fits* β by default: the β used for
point ``i`` is the plug-in estimate on the other ``n - 1`` points (leave-one-out, computed
in closed form in O(n)), independent of point ``i``, so ``E[β_{-i} (w_i - 1)] = 0`` and
``R_β`` stays exactly unbiased when the losses are a fixed function of the point (a model
evaluated on held-out data) and the weights are exact.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import xarray as xr

from bayescv.intervals import check_level
from bayescv.shift._common import (
    BETAS,
    Estimates,
    Prepared,
    check_beta,
    check_scale,
    prepare,
    real_array,
    settings_attrs,
    to_dataset,
    warn_low_ess,
    weighted_moments,
)

__all__ = [
    "BETAS",
    "METHODS",
    "control_variate_risk",
    "importance_weighted_risk",
    "loo_betas",
    "optimal_beta",
    "target_risk_intervals",
]

#: The methods :func:`target_risk_intervals` computes.
METHODS = ("iw", "iw_control_variate")

# A (leave-one-out) sum of squared deviations of the weights below this fraction of Σ w² is
# rounding noise (errors are of order eps · Σ w²): the weights are then treated as constant.
_RELATIVE_ZERO = 1e-10


def importance_weighted_risk(
    losses: Any,
    weights: Any,
    *,
    clip: float | None = None,
    clip_quantile: float | None = None,
    normalize: bool = False,
    level: float = 0.95,
    min_ess_fraction: float = 0.1,
) -> xr.Dataset:
    """Importance-weighted estimate of the target risk, ``R_W = mean(l_i w_i)``, with an interval.

    Parameters
    ----------
    losses : array-like of shape (n_samples,) or (n_replicates, n_samples), or loss table
        Per-point losses of labelled source points (for example held-out CV losses). For a
        loss table (:mod:`bayescv.losses`), weights are looked up by its ``index`` coord.
    weights : array-like or xarray.DataArray
        Density ratios ``p_T(x) / p_S(x)`` (non-negative, finite, not all zero), for
        example from :func:`density_ratio_weights`. With array losses: the same shape, or
        1-D and shared by every replicate. With a loss table: one weight per row of the
        original data, ``weights[index]`` being the weight of a point (a DataArray with an
        ``index`` coord is matched by label); its attrs are carried over as ``weights_*``.
    clip : float, optional
        Cap every weight at this value (``min(w, clip)``). Biased (towards the risk of the
        points with moderate weights) but less variable; reported and flagged.
    clip_quantile : float in (0, 1), optional
        Cap the weights at this quantile of the weights of each replicate. Exclusive with
        `clip`.
    normalize : bool, default False
        Self-normalised importance weighting, ``Σ l_i w_i / Σ w_i``: weights divided by
        their mean. Biased by O(1/n) but often less variable; the standard error is then the
        delta-method one, ``sd(w_i (l_i - R)) / (mean(w) √n)``. Reported and flagged.
    level : float, default 0.95
        Nominal coverage of the normal interval ``R ± z · se``.
    min_ess_fraction : float, default 0.1
        Warn (:class:`LowEffectiveSampleSizeWarning`) and flag
        ``"low_effective_sample_size"`` when the effective sample size of the weights used
        is below this fraction of the points; 0 turns the check off.

    Returns
    -------
    xarray.Dataset
        The interval Dataset (:func:`bayescv.intervals.interval_dataset`) with method
        ``"iw"`` and target ``"target_risk"`` (leading dim ``replicate`` for 2-D input), plus
        per-interval diagnostics ``n_points``, ``ess``, ``ess_fraction``, ``mean_weight``
        (of the weights after clipping, before normalising; about 1 for good weights),
        ``n_clipped``, ``clip_value``, ``beta`` (NaN here) and ``estimate_unbounded``.
        ``se = sd(l_i w_i) / √n``. Attrs record the settings (``weight_clipping``,
        ``weight_normalization``, ``min_ess_fraction``, ``loss_range``), the smallest
        ``ess`` and ``ess_fraction``, and the attrs of DataArray weights as ``weights_*``.
        ``flag`` lists, comma-separated, ``weights_clipped``, ``weights_normalized``,
        ``low_effective_sample_size``, ``truncated_to_range``, ``estimate_outside_range``,
        ``mean_weight_not_1`` (unnormalised weights whose mean is off 1 by a factor of 2 or
        more and by more than 4 standard errors: a constant factor such as n_T/n_S; warned).
        A loss table's range (:func:`bayescv.losses.loss_range`; [0, 1] for 0-1 losses)
        bounds the results, as in :func:`bayescv.cv_intervals`: a bound outside it is moved
        onto it (``truncated_to_range``), and so is an estimate (``estimate_outside_range``;
        ``estimate_unbounded`` keeps the value before). A weighted mean of losses in the
        range can leave it only when the weights are far from mean 1: an estimate moved
        onto the boundary is a warning sign, not a result. Losses in [0, 1] that are all 0
        give Wilson's interval for 0 errors in N = ``ess`` points, ``se`` NaN, flagged
        ``no_errors`` (``all_errors`` for all 1, where that leaves no variance). Array
        losses have no range and are not bounded.

    Raises
    ------
    ValueError
        On negative, NaN or infinite weights, non-finite losses, mismatched lengths,
        weights that are all zero, fewer than 2 points, or bad options.

    See Also
    --------
    control_variate_risk : the same estimate with a control variate, less variable at the
        optimal β (an estimated β can miss it on few points).
    density_ratio_weights : weights estimated with a domain classifier.

    Notes
    -----
    ``R_W`` is unbiased for ``R_T = E_S[l w]`` when the weights are the true density ratio
    and the losses are a fixed function of the point; its variance is
    ``Var_S(l w) / n`` (Kouw & Loog), which grows quickly with the shift between domains.

    Examples
    --------
    >>> ds = importance_weighted_risk([0.0, 1.0, 0.0, 1.0], [0.5, 1.5, 0.5, 1.5])
    >>> float(ds["estimate"].sel(method_name="iw")), ds.attrs["target"]
    (0.75, 'target_risk')
    """
    return target_risk_intervals(
        losses, weights, methods=("iw",), clip=clip, clip_quantile=clip_quantile,
        normalize=normalize, level=level, min_ess_fraction=min_ess_fraction,
    )  # fmt: skip


def control_variate_risk(
    losses: Any,
    weights: Any,
    *,
    beta: str | float = "optimal",
    clip: float | None = None,
    clip_quantile: float | None = None,
    normalize: bool = False,
    level: float = 0.95,
    min_ess_fraction: float = 0.1,
) -> xr.Dataset:
    """Control-variate estimate of the target risk, ``R_β = mean(l_i w_i - β (w_i - 1))``.

    Parameters
    ----------
    losses : array-like of shape (n_samples,) or (n_replicates, n_samples), or loss table
        As in :func:`importance_weighted_risk`.
    weights : array-like or xarray.DataArray
        As in :func:`importance_weighted_risk`.
    beta : {"optimal", "plugin"} or float, default "optimal"
        ``"optimal"``: the variance-minimising ``β̂ = Cov(l w, w) / Var(w)``, cross-fitted
        leave-one-out (the β of point ``i`` is estimated on the other ``n - 1`` points, so
        ``n`` folds), which keeps ``R_β`` unbiased. ``"plugin"``: the same β̂ from all
        points (bias of order 1/n, and a standard error that ignores the fit of β and is too
        small). A float: that fixed β (``0`` gives ``R_W``).
    clip, clip_quantile, normalize, level, min_ess_fraction
        As in :func:`importance_weighted_risk`. With ``normalize=True`` the weights have
        mean exactly 1, so a constant β changes nothing: self-normalised weighting is itself
        a control-variate estimator (with ``β = R``).

    Returns
    -------
    xarray.Dataset
        As :func:`importance_weighted_risk`, with method ``"iw_control_variate"``;
        ``beta`` holds the full-sample plug-in β̂ (or the given float); attrs
        ``beta_method``. ``se = sd(ψ_i) / √n`` with ``ψ_i = l_i w_i - β_i (w_i - 1)``
        (delta method with ``normalize``). Where the other points' weights are all equal, β
        is undefined: 0 is used and the interval is flagged ``"constant_weights"``. An
        estimate outside the loss range, moved onto it and flagged
        ``"estimate_outside_range"``, means the control variate failed (β̂ fit to a few
        extreme weights): do not use it.

    Raises
    ------
    ValueError
        As :func:`importance_weighted_risk`; also for an unknown `beta` and for fewer than
        3 points with ``beta="optimal"``.

    See Also
    --------
    importance_weighted_risk, optimal_beta

    Notes
    -----
    With the optimal β the variance is ``Var(R_W) (1 - ρ²)``, ρ the correlation of
    ``l w`` and ``w`` (Kouw & Loog's control variate). Cross-fitting adds no bias; the
    variance due to estimating β is of order 1/n² but noticeable at small ``n`` when the
    weights are heavy-tailed (the benchmark ``benchmarks/shift_variance.py`` measures it).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=500)
    >>> w = np.exp(x - 0.5)  # p_T / p_S for N(1, 1) against N(0, 1)
    >>> loss = (x + rng.normal(size=500)) ** 2
    >>> cv = control_variate_risk(loss, w)
    >>> iw = importance_weighted_risk(loss, w)
    >>> bool(cv["se"].item() < iw["se"].item())
    True
    """
    return target_risk_intervals(
        losses, weights, methods=("iw_control_variate",), beta=beta, clip=clip,
        clip_quantile=clip_quantile, normalize=normalize, level=level,
        min_ess_fraction=min_ess_fraction,
    )  # fmt: skip


def target_risk_intervals(
    losses: Any,
    weights: Any,
    *,
    methods: tuple[str, ...] | list[str] = METHODS,
    beta: str | float = "optimal",
    clip: float | None = None,
    clip_quantile: float | None = None,
    normalize: bool = False,
    level: float = 0.95,
    min_ess_fraction: float = 0.1,
) -> xr.Dataset:
    """Intervals for the target risk by several weighted estimators, from one set of weights.

    :func:`importance_weighted_risk` and :func:`control_variate_risk` in one Dataset (and
    one effective-sample-size warning): the same weights, clipping and normalisation for
    both, so their standard errors compare directly.

    Parameters
    ----------
    losses, weights
        As in :func:`importance_weighted_risk`.
    methods : sequence of {"iw", "iw_control_variate"}, default both
        The estimators, in this order along ``method_name``.
    beta, clip, clip_quantile, normalize, level, min_ess_fraction
        As in :func:`control_variate_risk` (`beta` is used by ``"iw_control_variate"``).

    Returns
    -------
    xarray.Dataset
        The interval Dataset with one row per method (see :func:`importance_weighted_risk`
        for the variables, attrs and flags).

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> x = rng.normal(size=400)
    >>> ds = target_risk_intervals((x + rng.normal(size=400)) ** 2, np.exp(x - 0.5))
    >>> ds["method_name"].values.tolist(), ds.attrs["target"]
    (['iw', 'iw_control_variate'], 'target_risk')
    """
    methods = check_request(methods, beta, level)
    min_points = 3 if "iw_control_variate" in methods and beta == "optimal" else 2
    prep = prepare(losses, weights, clip, clip_quantile, normalize, min_ess_fraction, min_points)
    est = estimates(prep, methods, beta)
    warn_low_ess(prep.ess, prep.n, prep.min_ess_fraction, where="replicates" if prep.dims else "")
    return to_dataset(
        est,
        level=level,
        dims=prep.dims,
        coords=prep.coords,
        attrs={**settings_attrs(prep), **beta_attrs(methods, beta), **prep.weight_attrs},
        bounds=prep.bounds,
    )


def check_request(methods: Sequence[str], beta: Any, level: float) -> list[str]:
    """Validate the method names, β and the level shared by every interval function here.

    Parameters
    ----------
    methods : str or sequence of str
        A name, or distinct names, from :data:`METHODS`.
    beta : {"optimal", "plugin"} or float
        The control variate's coefficient.
    level : float
        Nominal coverage, in (0, 1).

    Returns
    -------
    list of str
        The method names, as a list.
    """
    methods = [methods] if isinstance(methods, str) else list(methods)
    if not methods or len(set(methods)) != len(methods) or set(methods) - set(METHODS):
        raise ValueError(f"methods must be distinct names from {METHODS}, got {methods}")
    check_beta(beta)
    check_level(level)
    return methods


def optimal_beta(losses: Any, weights: Any, *, axis: int = -1) -> np.ndarray:
    """Plug-in variance-minimising coefficient ``β̂ = Cov(l w, w) / Var(w)``.

    It is the least-squares slope of ``l_i w_i`` on ``w_i``, and minimises the sample
    variance of ``l_i w_i - β w_i`` over β.

    Parameters
    ----------
    losses : array-like of shape (..., n_samples)
        Per-point losses.
    weights : array-like, broadcastable against `losses`
        Importance weights.
    axis : int, default -1
        Axis of the points.

    Returns
    -------
    ndarray
        β̂ (0-d for 1-D input); NaN where all weights are equal (their squared deviations
        below ``1e-10 · Σ w²``, the level of rounding errors): no control variate.

    Raises
    ------
    ValueError
        For mismatched shapes, fewer than 2 points, non-finite values or negative weights.

    Examples
    --------
    >>> float(optimal_beta([1.0, 1.0, 1.0], [0.5, 1.0, 1.5]))  # l w = w: slope 1
    1.0
    """
    loss, w = _pair(losses, weights, minimum=2, axis=axis)
    a = loss * w
    da = a - a.mean(axis=axis, keepdims=True)
    dw = w - w.mean(axis=axis, keepdims=True)
    c_aw, c_ww = (da * dw).sum(axis=axis), (dw**2).sum(axis=axis)
    constant = c_ww <= _RELATIVE_ZERO * (w**2).sum(axis=axis)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(constant, np.nan, c_aw / c_ww)


def loo_betas(losses: Any, weights: Any) -> tuple[np.ndarray, np.ndarray]:
    """Leave-one-out plug-in β̂ for every point, in O(n).

    Point ``i`` gets ``Cov_{-i}(l w, w) / Var_{-i}(w)`` computed without it, from the
    downdated co-moments ``C_{-i} = C - n / (n - 1) (a_i - ā)(b_i - b̄)``.

    Parameters
    ----------
    losses, weights : array-like of shape (..., n_samples)
        Per-point losses and weights, points along the last axis (n ≥ 3).

    Raises
    ------
    ValueError
        For mismatched shapes, fewer than 3 points, non-finite values or negative weights.

    Returns
    -------
    betas : ndarray of shape (..., n_samples)
        β̂_{-i}; 0 where the other points' weights are all equal (their squared deviations
        below ``1e-10 · Σ w²``, the level of rounding errors).
    undefined : ndarray of bool, shape (..., n_samples)
        Where β̂_{-i} was undefined.

    Examples
    --------
    >>> betas, undefined = loo_betas([1.0, 1.0, 1.0, 1.0], [0.5, 1.0, 1.5, 1.0])
    >>> betas.tolist(), bool(undefined.any())
    ([1.0, 1.0, 1.0, 1.0], False)
    """
    loss, w = _pair(losses, weights, minimum=3, axis=-1)
    n = loss.shape[-1]
    a = loss * w
    da = a - a.mean(axis=-1, keepdims=True)
    dw = w - w.mean(axis=-1, keepdims=True)
    c_ww = (dw**2).sum(axis=-1, keepdims=True)
    factor = n / (n - 1)
    c_aw_i = (da * dw).sum(axis=-1, keepdims=True) - factor * da * dw
    c_ww_i = c_ww - factor * dw**2
    # Centred sums carry rounding errors of order eps · Σ w²: below this, Var_{-i}(w) is 0.
    undefined = c_ww_i <= _RELATIVE_ZERO * (w**2).sum(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        betas = np.where(undefined, 0.0, c_aw_i / c_ww_i)
    return betas, undefined


def _pair(losses: Any, weights: Any, *, minimum: int, axis: int) -> tuple[np.ndarray, ...]:
    """Losses and weights broadcast together, checked: finite, weights ≥ 0, enough points."""
    loss, w = real_array(losses, "losses"), real_array(weights, "weights")
    try:
        loss, w = np.broadcast_arrays(loss, w)
    except ValueError:
        raise ValueError(
            f"mismatched lengths: losses have shape {loss.shape} and weights {w.shape}"
        ) from None
    if loss.ndim == 0 or loss.shape[axis] < minimum:
        raise ValueError(f"β needs at least {minimum} points, got shape {loss.shape}")
    if not (np.isfinite(loss).all() and np.isfinite(w).all()):
        raise ValueError("losses and weights must be finite (no NaN or infinite values)")
    if (w < 0).any():
        raise ValueError(f"weights must be non-negative; {int((w < 0).sum())} are negative")
    return loss, w


# --- estimates -----------------------------------------------------------------------


def estimates(prep: Prepared, methods: list[str], beta: str | float) -> Estimates:
    """Estimates, variances, β and flags of `methods` for every row of `prep`."""
    check_scale(prep.loss, prep.w, beta if "iw_control_variate" in methods else 0.0)
    base = prep.flags()
    rows = prep.loss.shape[0]
    columns = []
    for method in methods:
        if method == "iw":
            zeros = np.zeros_like(prep.w)
            estimate, variance = weighted_moments(prep.loss, prep.w, zeros, prep.normalize)
            summary, undefined = np.full(rows, np.nan), np.zeros(rows, dtype=bool)
        else:
            betas, undefined = _point_betas(prep.loss, prep.w, beta)
            estimate, variance = weighted_moments(prep.loss, prep.w, betas, prep.normalize)
            if isinstance(beta, str):
                summary = np.nan_to_num(optimal_beta(prep.loss, prep.w), nan=0.0)
            else:
                summary = np.full(rows, float(beta))
        flags = [
            ",".join([*base[r], *(["constant_weights"] if undefined[r] else [])])
            for r in range(rows)
        ]
        columns.append((estimate, variance, summary, flags))
    stack = lambda i: np.stack([c[i] for c in columns], axis=-1)  # noqa: E731
    return Estimates(
        methods=list(methods),
        estimate=stack(0),
        variance=stack(1),
        beta=stack(2),
        flags=np.array([[c[3][r] for c in columns] for r in range(rows)], dtype=object),
        n_points=np.full(rows, prep.n),
        ess=prep.ess,
        mean_weight=prep.mean_weight,
        n_clipped=prep.n_clipped,
        clip_value=prep.clip_value,
    )


def beta_attrs(methods: list[str], beta: str | float) -> dict[str, str]:
    """How β was chosen, for the attrs (empty without the control variate)."""
    if "iw_control_variate" not in methods:
        return {}
    if beta == "optimal":
        return {"beta_method": "optimal, cross-fitted leave-one-out (n folds)"}
    if beta == "plugin":
        return {"beta_method": "optimal, plug-in from all points"}
    return {"beta_method": f"fixed {float(beta):g}"}


def _point_betas(
    loss: np.ndarray, w: np.ndarray, beta: str | float
) -> tuple[np.ndarray, np.ndarray]:
    """β of every point, and per row whether some β was undefined (set to 0)."""
    if beta == "optimal":
        betas, undefined = loo_betas(loss, w)
        return betas, undefined.any(axis=-1)
    if beta == "plugin":
        full = optimal_beta(loss, w)
        undefined = np.isnan(full)
        return np.broadcast_to(np.where(undefined, 0.0, full)[..., None], w.shape), undefined
    return np.full(w.shape, float(beta)), np.zeros(w.shape[0], dtype=bool)
