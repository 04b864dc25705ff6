"""Shared plumbing of :mod:`bayescv.shift`: input checks, weight adjustments, result layout."""

from __future__ import annotations

import functools
import numbers
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import xarray as xr

from bayescv._extras import user_stacklevel
from bayescv.intervals import interval_dataset, move_into_range, normal_bounds, score_bounds
from bayescv.losses import effective_range, validate
from bayescv.moments import largest_loss
from bayescv.shift._inputs import real_array, weights_at
from bayescv.shift.weights import LowEffectiveSampleSizeWarning, effective_sample_size

#: The ways the control variate chooses β (besides a fixed float).
BETAS = ("optimal", "plugin")

TARGET = "target_risk"
_SKIP_WEIGHT_ATTRS = ("bayescv_version", "created", "long_name")


#: Unclipped, unnormalised weights whose mean is off 1 by this factor or more (above 2 or
#: below 1/2) and by more than MEAN_WEIGHT_Z standard errors sd(w)/√n are flagged
#: ``"mean_weight_not_1"``, with a warning: density ratios scaled by a constant (such as
#: n_T/n_S). Both conditions, since the mean of correct but skewed weights (log-normal ones
#: of a Gaussian shift) falls several estimated standard errors below 1 in about 0.3% of
#: samples of 200 points (measured in tests/test_shift_risk.py), never by a factor of 2 there.
MEAN_WEIGHT_FACTOR = 2.0
MEAN_WEIGHT_Z = 4.0


@dataclass
class Prepared:
    """Losses and the weights actually used, as (replicate, n) arrays, with diagnostics."""

    loss: np.ndarray
    w: np.ndarray
    dims: tuple[str, ...]
    coords: dict[str, Any]
    normalize: bool
    clipping: str
    clip_value: np.ndarray
    n_clipped: np.ndarray
    mean_weight: np.ndarray
    ess: np.ndarray
    min_ess_fraction: float
    weight_attrs: dict[str, Any] = field(default_factory=dict)
    bounds: tuple[float, float] = (-np.inf, np.inf)

    @property
    def n(self) -> int:
        return self.loss.shape[-1]

    @property
    def ess_fraction(self) -> np.ndarray:
        return self.ess / self.n

    @functools.cached_property
    def low_ess(self) -> np.ndarray:
        return self.ess_fraction < self.min_ess_fraction

    @functools.cached_property  # flags() reads it once per row
    def mean_weight_not_1(self) -> np.ndarray:
        """Rows whose unclipped, unnormalised weights average far from 1 (see prepare)."""
        if self.normalize:
            return np.zeros(self.loss.shape[0], dtype=bool)
        with np.errstate(over="ignore", invalid="ignore"):  # huge weights: refused later
            se = self.w.std(axis=-1, ddof=1) / np.sqrt(self.n)
        far = np.abs(np.log(self.mean_weight)) >= np.log(MEAN_WEIGHT_FACTOR)
        return (self.n_clipped == 0) & far & (np.abs(self.mean_weight - 1) > MEAN_WEIGHT_Z * se)

    def flags(self) -> list[list[str]]:
        causes = {
            "weights_clipped": self.n_clipped > 0,
            "weights_normalized": np.full(self.loss.shape[0], self.normalize),
            "low_effective_sample_size": self.low_ess,
            "mean_weight_not_1": self.mean_weight_not_1,
        }
        return [[name for name, hit in causes.items() if hit[r]] for r in range(len(self.loss))]


def prepare(
    losses: Any,
    weights: Any,
    clip: float | None,
    clip_quantile: float | None,
    normalize: bool,
    min_ess_fraction: float,
    min_points: int,
    *,
    warn: bool = True,
) -> Prepared:
    """Validate losses and weights, look weights up by index, clip and normalise them.

    Raises a ValueError naming the problem: bad options, shapes, non-finite losses,
    negative, NaN, infinite or all-zero weights, or fewer than `min_points` points. The
    range of a loss table's losses is kept as ``bounds``, read as :func:`bayescv.cv_intervals`
    reads it ([0, 1] for 0-1 losses without a declared range); array losses have none.
    Unnormalised-looking weights are warned about unless `warn` is False (a check of the
    weights alone, before the same weights are prepared again with the losses).
    """
    _check_options(clip, clip_quantile, normalize, min_ess_fraction)
    weight_attrs = {}
    bounds = (-np.inf, np.inf)
    if isinstance(weights, xr.DataArray):
        weight_attrs = {
            f"weights_{k}": v for k, v in weights.attrs.items() if k not in _SKIP_WEIGHT_ATTRS
        }
    if isinstance(losses, xr.Dataset):
        validate(losses)
        loss = np.atleast_2d(np.asarray(losses["loss"].values, dtype=float))
        w = weights_at(weights, np.atleast_2d(losses["index"].values))
        dims: tuple[str, ...] = ("replicate",) if "replicate" in losses.dims else ()
        coords = {"replicate": losses["replicate"].values} if dims else {}
        bounds = effective_range(losses)
    else:
        raw = real_array(losses.values if isinstance(losses, xr.DataArray) else losses, "losses")
        if raw.ndim not in (1, 2):
            raise ValueError(
                f"losses must be 1-D (n_samples,) or 2-D (n_replicates, n_samples), got {raw.ndim}-D"
            )
        if not np.isfinite(raw).all():
            raise ValueError("losses contain NaN or infinite values")
        w = real_array(weights.values if isinstance(weights, xr.DataArray) else weights, "weights")
        if w.ndim not in (1, 2) or w.shape[-1] != raw.shape[-1] or w.ndim > raw.ndim:
            raise ValueError(
                f"mismatched lengths: losses have shape {raw.shape} and weights {w.shape}; "
                "weights need one value per loss (1-D weights are shared by all replicates)"
            )
        if w.ndim == 2 and w.shape != raw.shape:
            raise ValueError(f"mismatched shapes: losses {raw.shape}, weights {w.shape}")
        dims = ("replicate",) if raw.ndim == 2 else ()
        coords = {"replicate": np.arange(raw.shape[0])} if dims else {}
        loss = np.atleast_2d(raw)
        w = np.broadcast_to(np.atleast_2d(w), loss.shape)
    n = loss.shape[-1]
    if n < min_points:
        raise ValueError(f"need at least {min_points} points, got {n}")
    _check_weights(w)
    w, clipping, clip_value, n_clipped = _clip(w, clip, clip_quantile)
    if (w.sum(axis=-1) == 0).any():
        raise ValueError("after clipping every weight is zero")
    mean_weight = w.mean(axis=-1)
    if normalize:
        w = w / mean_weight[:, None]
    prep = Prepared(
        loss=loss,
        w=np.ascontiguousarray(w),
        dims=dims,
        coords=coords,
        normalize=bool(normalize),
        clipping=clipping,
        clip_value=clip_value,
        n_clipped=n_clipped,
        mean_weight=mean_weight,
        ess=effective_sample_size(w),
        min_ess_fraction=float(min_ess_fraction),
        weight_attrs=weight_attrs,
        bounds=bounds,
    )
    off = prep.mean_weight_not_1
    if warn and off.any():
        rows = f"in {int(off.sum())} of {off.size} replicates" if off.size > 1 else ""
        warn_mean_weight(prep.mean_weight[off][0], rows)
    return prep


def warn_mean_weight(mean_weight: float, rows: str = "") -> None:
    """Warn that weights (of `rows`, such as ``"in 2 of 5 replicates"``) average `mean_weight`."""
    warnings.warn(
        f"the weights average {mean_weight:.4g}, off 1 by a factor of {MEAN_WEIGHT_FACTOR:g} "
        f"or more and by more than {MEAN_WEIGHT_Z:g} standard errors"
        + (f" ({rows})" if rows else "")
        + ": density ratios p_T/p_S average 1 over the source points, so these look "
        "unnormalised (a constant factor scales the 'iw' estimate but not its control "
        "variate); pass normalize=True or rescale them (flag 'mean_weight_not_1')",
        UserWarning,
        stacklevel=user_stacklevel(),
    )


def check_scale(loss: np.ndarray, w: np.ndarray, beta: Any = 0.0) -> None:
    """Raise a ValueError if ``l w``, ``w`` or ``β (w - 1)`` could overflow when squared.

    Their variances sum n squares of such terms; the limit is
    :func:`bayescv.moments.largest_loss` of n.

    Parameters
    ----------
    loss, w : ndarray of shape (n_rows, n)
        Losses and the weights used.
    beta : float or str, default 0.0
        A fixed control-variate coefficient (strings: estimated, not checked here).
    """
    top_w = float(w.max())
    top_l = float(np.abs(loss).max())
    fixed = 0.0 if isinstance(beta, str) else abs(float(beta)) * (top_w + 1)
    peak = max(top_l * top_w, top_w, top_l, fixed)
    limit = largest_loss(loss.shape[-1])
    if peak > limit:
        raise ValueError(
            f"losses times weights (or the weights, or beta) up to {peak:.3g} overflow float64 "
            f"in the variance (limit about {limit:.2g} for {loss.shape[-1]} points); rescale "
            "the losses, and check that the weights have a mean near 1"
        )


def _check_options(
    clip: float | None, clip_quantile: float | None, normalize: bool, min_ess_fraction: float
) -> None:
    if clip is not None and clip_quantile is not None:
        raise ValueError("give clip (a maximum weight) or clip_quantile, not both")
    if clip is not None and not (_real(clip) and np.isfinite(clip) and clip > 0):
        raise ValueError(f"clip must be a positive maximum weight, got {clip!r}")
    if clip_quantile is not None and not (_real(clip_quantile) and 0 < clip_quantile < 1):
        raise ValueError(f"clip_quantile must be in (0, 1), got {clip_quantile!r}")
    if not isinstance(normalize, bool | np.bool_):
        raise ValueError(f"normalize must be True or False, got {normalize!r}")
    if not (_real(min_ess_fraction) and 0 <= min_ess_fraction <= 1):
        raise ValueError(f"min_ess_fraction must be in [0, 1], got {min_ess_fraction!r}")


def _real(value: Any) -> bool:
    """Whether `value` is a real number (Python or NumPy), not a bool."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_)


def _check_weights(w: np.ndarray) -> None:
    if np.isnan(w).any():
        raise ValueError(f"weights contain {int(np.isnan(w).sum())} NaN value(s)")
    if np.isinf(w).any():
        raise ValueError(
            "weights contain infinite values: the density ratio is unbounded where the source "
            "density vanishes (no support overlap)"
        )
    if (w < 0).any():
        raise ValueError(
            f"weights must be non-negative; {int((w < 0).sum())} are negative (min {w.min():g})"
        )
    if (w.sum(axis=-1) == 0).any():
        raise ValueError("weights are all zero: no source point resembles the target")


def _clip(
    w: np.ndarray, clip: float | None, clip_quantile: float | None
) -> tuple[np.ndarray, str, np.ndarray, np.ndarray]:
    rows = w.shape[0]
    if clip is None and clip_quantile is None:
        return w, "none", np.full(rows, np.inf), np.zeros(rows, dtype=np.int64)
    if clip is not None:
        cap, label = np.full(rows, float(clip)), f"max={float(clip):g}"
    else:
        cap, label = np.quantile(w, clip_quantile, axis=-1), f"quantile={clip_quantile:g}"
    n_clipped = (w > cap[:, None]).sum(axis=-1)
    return np.minimum(w, cap[:, None]), label, cap, n_clipped


def weighted_moments(
    loss: np.ndarray, w: np.ndarray, betas: np.ndarray, normalize: bool
) -> tuple[np.ndarray, np.ndarray]:
    """``mean(l w - β_i (w - 1))`` and sd²/n of its influence terms, per row.

    With `normalize`, ``w`` is divided by its mean ``w̄``; the estimate is then
    ``ā / w̄ + mean(β)`` with ``a_i = (l_i - β_i) w_i`` and, by the delta method (β held
    fixed), influence terms ``(a_i - (ā / w̄) w_i) / w̄ + β_i - mean(β)``.
    """
    n = loss.shape[-1]
    if normalize:
        w_bar = w.mean(axis=-1, keepdims=True)
        a = (loss - betas) * w
        ratio = a.mean(axis=-1, keepdims=True) / w_bar
        beta_bar = betas.mean(axis=-1, keepdims=True)
        estimate = (ratio + beta_bar)[..., 0]
        influence = (a - ratio * w) / w_bar + betas - beta_bar
    else:
        psi = loss * w - betas * (w - 1)
        estimate = psi.mean(axis=-1)
        influence = psi - estimate[..., None]
    variance = (influence**2).sum(axis=-1) / (n - 1) / n
    return estimate, variance


def check_beta(beta: Any) -> None:
    """Raise a ValueError unless `beta` is ``"optimal"``, ``"plugin"`` or a finite number."""
    if isinstance(beta, str):
        if beta not in BETAS:
            raise ValueError(f"beta must be one of {BETAS} or a float, got {beta!r}")
    elif isinstance(beta, bool) or not isinstance(beta, int | float | np.number):
        raise ValueError(f"beta must be one of {BETAS} or a float, got {beta!r}")
    elif not np.isfinite(beta):
        raise ValueError(f"beta must be finite, got {beta}")


def warn_low_ess(ess: np.ndarray, n: Any, min_fraction: float, *, where: str = "") -> None:
    """Warn once when some effective sample size is below ``min_fraction · n``.

    `ess` and `n` are arrays over rows (replicates or held-out sources); `where` names the
    rows for the message (for example ``"replicates"``).
    """
    ess = np.atleast_1d(np.asarray(ess, dtype=float))
    fraction = ess / np.broadcast_to(np.asarray(n, dtype=float), ess.shape)
    low = fraction < min_fraction
    if not low.any():
        return
    worst = int(np.argmin(fraction))
    count = f" in {int(low.sum())} of {low.size} {where}" if where else ""
    warnings.warn(
        f"effective sample size of the weights is {ess[worst]:.1f} of "
        f"{int(np.broadcast_to(n, ess.shape)[worst])} points ({fraction[worst]:.1%}){count}, "
        f"below min_ess_fraction={min_fraction:g}: the weighted risk rests on a few source "
        "points and its interval may badly under-cover (the domains overlap little)",
        LowEffectiveSampleSizeWarning,
        stacklevel=user_stacklevel(),
    )


@dataclass
class Estimates:
    """Estimates of several methods over rows (replicates or sources), before labelling.

    Arrays ``estimate``, ``variance``, ``beta`` and ``flags`` (str) have shape
    (n_rows, n_methods); the diagnostics have shape (n_rows,).
    """

    methods: list[str]
    estimate: np.ndarray
    variance: np.ndarray
    beta: np.ndarray
    flags: np.ndarray
    n_points: np.ndarray
    ess: np.ndarray
    mean_weight: np.ndarray
    n_clipped: np.ndarray
    clip_value: np.ndarray

    @classmethod
    def stack(cls, parts: list[Estimates]) -> Estimates:
        """Concatenate the rows of several results of the same methods."""
        arrays = {
            name: np.concatenate([getattr(p, name) for p in parts])
            for name in (
                "estimate", "variance", "beta", "flags", "n_points", "ess", "mean_weight",
                "n_clipped", "clip_value",
            )
        }  # fmt: skip
        return cls(methods=parts[0].methods, **arrays)


def settings_attrs(prep: Prepared) -> dict[str, Any]:
    """Return the weight settings, and the loss range when one is known, for the attrs."""
    return {
        "weight_clipping": prep.clipping,
        "weight_normalization": "self_normalized" if prep.normalize else "none",
        "min_ess_fraction": prep.min_ess_fraction,
        **({"loss_range": list(prep.bounds)} if np.isfinite(prep.bounds).any() else {}),
    }


def to_dataset(
    est: Estimates,
    *,
    level: float,
    dims: tuple[str, ...],
    coords: dict[str, Any],
    attrs: dict[str, Any],
    bounds: tuple[float, float] = (-np.inf, np.inf),
) -> xr.Dataset:
    """Label `est` as the interval Dataset, diagnostics as variables along ``method_name``.

    With no `dims` the single row is squeezed out. Bounds and estimates are kept inside
    `bounds`, the range of the losses: a bound moved onto it is flagged
    ``"truncated_to_range"`` (as in :func:`bayescv.cv_intervals`), an estimate moved onto it
    ``"estimate_outside_range"``; ``estimate_unbounded`` keeps the estimate before the move.
    Losses in [0, 1] that are all 0 (or all 1) have no variance to show: Wilson's bound on
    the weights' effective sample size replaces [0, 0], flagged ``"no_errors"``.
    """
    se, lower, upper, bound_flag = normal_bounds(
        est.estimate, est.variance, level=level, bounds=bounds
    )
    if tuple(map(float, bounds)) == (0.0, 1.0):  # no (or only) errors: nothing to vary
        edge = np.isin(est.estimate, (0.0, 1.0)) & (est.variance == 0)
        wilson = score_bounds(est.estimate, est.variance, est.ess[:, None], level=level)
        se, lower, upper, bound_flag = (
            np.where(edge, a, b)
            for a, b in zip(wilson, (se, lower, upper, bound_flag), strict=True)
        )
    estimate, outside = move_into_range(est.estimate, bounds)
    flag = np.array(
        [
            [",".join(x for x in fs if x) for fs in zip(*row, strict=True)]
            for row in zip(est.flags, bound_flag, outside, strict=True)
        ],
        dtype=object,
    )
    squeeze = not dims

    def shaped(values: Any) -> np.ndarray:
        arr = np.asarray(values)
        if arr.ndim == 1:  # a per-row diagnostic: the same for every method
            arr = np.repeat(arr[:, None], len(est.methods), axis=1)
        return arr[0] if squeeze else arr

    ds = interval_dataset(
        est.methods,
        estimate=shaped(estimate),
        lower=shaped(lower),
        upper=shaped(upper),
        se=shaped(se),
        flag=shaped(flag),
        level=level,
        target=TARGET,
        dims=dims,
        coords=coords,
        attrs={
            "ess": float(est.ess.min()),
            "ess_fraction": float((est.ess / est.n_points).min()),
            **attrs,
        },
    )
    all_dims = (*dims, "method_name")
    diagnostics = {
        "estimate_unbounded": est.estimate,
        "n_points": est.n_points,
        "ess": est.ess,
        "ess_fraction": est.ess / est.n_points,
        "mean_weight": est.mean_weight,
        "n_clipped": est.n_clipped,
        "clip_value": est.clip_value,
        "beta": est.beta,
    }
    for name, values in diagnostics.items():
        ds[name] = (all_dims, shaped(values))
    ds["estimate_unbounded"].attrs["long_name"] = "estimate before it was kept in the loss range"
    ds["n_points"].attrs["long_name"] = "number of weighted source points"
    ds["ess"].attrs["long_name"] = "effective sample size (Σw)² / Σw² of the weights used"
    ds["mean_weight"].attrs["long_name"] = "mean weight after clipping, before normalising"
    ds["n_clipped"].attrs["long_name"] = "number of weights capped by clipping"
    ds["clip_value"].attrs["long_name"] = "weight cap (inf: no clipping)"
    ds["beta"].attrs["long_name"] = "control-variate coefficient (full-sample or fixed; NaN: none)"
    return ds
