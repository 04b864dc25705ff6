"""The studentized bootstrap interval from bootstrap-replicated CV, for skewed, heavy-tailed losses.

A normal interval μ̂ ± z·se assumes that (μ̂ − E μ̂)/se is standard normal. Under a heavy upper
tail (squared errors with outliers: Pareto k̂ > 0.5, :mod:`bayescv.tails`) it is skewed: a data
set whose μ̂ falls below its mean, the common case, also has a small se, so the interval misses
low far more often than high. The studentized bootstrap (bootstrap-t; Efron & Tibshirani 1993,
ch. 12; Hall 1992, §3.10) estimates the distribution of that ratio instead of assuming it: each
bootstrap-replicated CV run b (:func:`bayescv.bootstrap_cv_losses`: points resampled within
sources, every fold refitted) gives t*_b = (μ̂*_b − μ̂)/se*_b, and the interval is

    [μ̂ − t*_(1 − α/2) · se,  μ̂ − t*_(α/2) · se],

se and se*_b from the same variance estimator on the observed and the replicated tables. It
is asymmetric where the ratio is, and reaches further up than down under a heavy upper tail.
With sources fixed it targets what the bootstrap interval targets (``expected_cv`` for CVS,
``err`` for CVR). ``benchmarks/results/heavy_tail_intervals.md`` measures it.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from bayescv.classical._block_stats import block_stats
from bayescv.classical.estimators import ESTIMATORS
from bayescv.classical.intervals import interval_target
from bayescv.intervals import check_level, interval_dataset
from bayescv.losses import loss_range, validate
from bayescv.tails import add_tail_flags, tail_shape

__all__ = ["bootstrap_t_interval"]

#: Fewest bootstrap replicates for quantiles of t* at the usual levels.
MIN_REPLICATES = 20


def bootstrap_t_interval(
    losses: xr.Dataset,
    bootstrap: xr.Dataset,
    *,
    level: float = 0.95,
    studentize: str = "naive_points",
) -> xr.Dataset:
    """Studentized bootstrap interval for the CV error from bootstrap-replicated CV runs.

    Parameters
    ----------
    losses : xarray.Dataset
        The observed loss table (one CV run).
    bootstrap : xarray.Dataset
        Its bootstrap-replicated CV runs (``replicate_kind="bootstrap"``, at least
        :data:`MIN_REPLICATES`; 50–200 is usual), from :func:`bayescv.bootstrap_cv_losses`.
    level : float, default 0.95
        Nominal coverage.
    studentize : str, default "naive_points"
        The variance estimator of :data:`bayescv.classical.estimators.ESTIMATORS` that gives
        se and each se*_b. The bootstrap distribution of t* absorbs its bias, so a simple,
        stable one does: the default is the sd of all losses / sqrt(N).

    Returns
    -------
    xarray.Dataset
        The interval Dataset with the single method ``bootstrap_studentized`` (``kind`` =
        ``"bootstrap_t"``), its ``theta`` (se²) and the attr ``n_bootstrap``; bounds inside
        the table's loss range (truncated with a flag otherwise), heavy-tail flags as
        :func:`bayescv.tails.add_tail_flags` gives them. A replicate with se*_b = 0 has no
        t*: it is left out, and with fewer than :data:`MIN_REPLICATES` left the interval is
        NaN, flagged ``"too_few_replicates"``.

    Raises
    ------
    ValueError
        For a replicated observed table, a bootstrap table of another kind or with fewer
        than :data:`MIN_REPLICATES` replicates, or an unknown `studentize`.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> from bayescv import bootstrap_cv_losses, cross_val_losses
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(120, 2))
    >>> y = X[:, 0] + rng.standard_t(3, 120)
    >>> groups = np.repeat(np.arange(4), 30)
    >>> table = cross_val_losses(LinearRegression(), X, y, groups=groups)
    >>> boot = bootstrap_cv_losses(LinearRegression(), X, y, groups=groups, n_bootstrap=30,
    ...                            random_state=0)
    >>> ci = bootstrap_t_interval(table, boot)
    >>> bool(ci["lower"] < ci["estimate"] < ci["upper"])
    True
    """
    check_level(level)
    validate(losses)
    validate(bootstrap)
    if "replicate" in losses.dims:
        raise ValueError("the observed table must be one CV run (no replicate dim)")
    if bootstrap.attrs.get("replicate_kind") != "bootstrap" or "replicate" not in bootstrap.dims:
        raise ValueError("bootstrap= must be a bootstrap-replicated table (bootstrap_cv_losses)")
    if bootstrap.sizes["replicate"] < MIN_REPLICATES:
        raise ValueError(
            f"the studentized bootstrap needs at least {MIN_REPLICATES} replicates for the "
            f"quantiles of t*, got {bootstrap.sizes['replicate']}"
        )
    if studentize not in ESTIMATORS:
        raise ValueError(f"unknown estimator {studentize!r}; known: {list(ESTIMATORS)}")
    spec = ESTIMATORS[studentize]
    observed, replicated = block_stats(losses), block_stats(bootstrap)
    mu = float(observed.mu_hat[0])
    with np.errstate(invalid="ignore", divide="ignore"):
        se = float(np.sqrt(spec.func(observed)[0]))
        se_star = np.sqrt(spec.func(replicated))
        t_star = (replicated.mu_hat - mu) / se_star
    usable = np.isfinite(t_star)
    flag = ""
    if usable.sum() < MIN_REPLICATES or not np.isfinite(se):
        lower = upper = float("nan")
        flag = "too_few_replicates"
    else:
        alpha = 1 - level
        q_low, q_high = np.quantile(t_star[usable], [alpha / 2, 1 - alpha / 2])
        lower, upper = mu - q_high * se, mu - q_low * se
        low, high = loss_range(losses)
        if lower < low or upper > high:
            lower, upper, flag = max(lower, low), min(upper, high), "truncated_to_range"
    scheme = losses.attrs.get("scheme", "random")
    ds = interval_dataset(
        ["bootstrap_studentized"], estimate=[mu], lower=[lower], upper=[upper], se=[se],
        level=level, target=interval_target("bootstrap", scheme), flag=[flag],
        kind="bootstrap_t",
        attrs={"scheme": scheme, "n_bootstrap": int(usable.sum()), "studentize": studentize},
    )  # fmt: skip
    ds = ds.assign(theta=("method_name", [se**2]))
    return add_tail_flags(ds, tail_shape(losses)["khat_pooled"].values)
