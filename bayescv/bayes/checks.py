"""Posterior (and prior) predictive checks of the collapsed model.

Each posterior draw replicates the statistics of a data set of the observed design: the
per-source mean losses ē_k, the within-source variances W_k / (n_k − 1) and the spread of the
source means (their standard deviation across sources). The observed values are compared
with their replicated distribution through central intervals and Bayesian p-values
P(T_rep ≥ T_obs) (Gelman, Meng & Stern 1996); a p-value near 0 or 1 points at a feature the
model does not reproduce, such as one source with an outlying within-source variance. The
groups are named as ArviZ expects, so ``arviz.plot_ppc(idata, var_names=["ybar"])`` works too.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

__all__ = ["plot_ppc", "plot_targets", "predictive_check"]

_GROUPS = {"posterior": "posterior_predictive", "prior": "prior_predictive"}


def _replicated(idata, group: str) -> dict[str, np.ndarray]:
    pred = idata[_GROUPS[group]]
    dof = idata.constant_data["dof"].values
    ybar = pred["ybar"].values.reshape(-1, dof.size)
    within = pred["W"].values.reshape(-1, dof.size) / dof
    return {"mean": ybar, "within_var": within, "spread": ybar.std(axis=-1, ddof=1)}


def _observed(idata) -> dict[str, np.ndarray]:
    obs = idata.observed_data
    dof = idata.constant_data["dof"].values
    ybar = obs["ybar"].values
    return {"mean": ybar, "within_var": obs["W"].values / dof, "spread": ybar.std(ddof=1)}


def predictive_check(idata, *, group: str = "posterior", level: float = 0.95) -> xr.Dataset:
    """Compare observed statistics with their posterior (or prior) predictive distribution.

    Parameters
    ----------
    idata : arviz.InferenceData
        A result of :func:`bayescv.bayes.fit`.
    group : {"posterior", "prior"}, default "posterior"
        Posterior predictive check, or prior predictive check (are the observed statistics
        plausible under the prior alone?).
    level : float, default 0.95
        Coverage of the central predictive intervals.

    Returns
    -------
    xarray.Dataset
        Dim ``check`` (one entry per source and statistic, and one for the spread), with
        coords ``statistic`` (``"mean"``, ``"within_var"``, ``"spread"``) and ``block``
        (``""`` for the spread); variables ``observed``, ``predictive_mean``, ``lower``,
        ``upper`` and ``p_value`` = P(T_rep ≥ T_obs).
    """
    if group not in _GROUPS:
        raise ValueError(f"group must be one of {tuple(_GROUPS)}, got {group!r}")
    rep, obs = _replicated(idata, group), _observed(idata)
    labels = [str(b) for b in idata.observed_data["block"].values]
    rows: dict[str, list[Any]] = {
        k: [] for k in ("check", "statistic", "block", "observed", "mean", "lo", "hi", "p")
    }
    q = [(1 - level) / 2, (1 + level) / 2]
    for stat in ("mean", "within_var", "spread"):
        draws = rep[stat].reshape(rep[stat].shape[0], -1)
        observed = np.atleast_1d(obs[stat])
        names = labels if stat != "spread" else [""]
        for j, name in enumerate(names):
            column = draws[:, j]
            lo, hi = np.quantile(column, q)
            rows["check"].append(f"{stat}[{name}]" if name else stat)
            rows["statistic"].append(stat)
            rows["block"].append(name)
            rows["observed"].append(float(observed[j]))
            rows["mean"].append(float(column.mean()))
            rows["lo"].append(float(lo))
            rows["hi"].append(float(hi))
            rows["p"].append(float((column >= observed[j]).mean()))
    return xr.Dataset(
        {
            "observed": ("check", rows["observed"]),
            "predictive_mean": ("check", rows["mean"]),
            "lower": ("check", rows["lo"]),
            "upper": ("check", rows["hi"]),
            "p_value": ("check", rows["p"]),
        },
        coords={
            "check": rows["check"],
            "statistic": ("check", rows["statistic"]),
            "block": ("check", rows["block"]),
        },
        attrs={"group": group, "level": float(level)},
    )


def plot_ppc(idata, *, group: str = "posterior", level: float = 0.95, axes: Any = None) -> Any:
    """Draw the predictive check: per-source means, within-source variances, spread.

    Parameters
    ----------
    idata : arviz.InferenceData
        A result of :func:`bayescv.bayes.fit`.
    group : {"posterior", "prior"}, default "posterior"
        Which predictive distribution.
    level : float, default 0.95
        Coverage of the predictive intervals drawn.
    axes : sequence of three matplotlib Axes, optional
        Where to draw; a new 1 x 3 figure otherwise.

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
        The three axes.
    """
    import matplotlib.pyplot as plt

    check = predictive_check(idata, group=group, level=level)
    if axes is None:
        _, axes = plt.subplots(1, 3, figsize=(13, 4), constrained_layout=True)
    axes = np.asarray(axes).ravel()
    titles = {
        "mean": "mean loss per source",
        "within_var": "within-source variance",
    }
    for ax, stat in zip(axes[:2], ("mean", "within_var"), strict=True):
        sub = check.where(check["statistic"] == stat, drop=True)
        x = np.arange(sub.sizes["check"])
        mid = sub["predictive_mean"].values
        err = np.vstack([mid - sub["lower"].values, sub["upper"].values - mid])
        ax.errorbar(x, mid, yerr=err, fmt="o", color="0.6", label=f"replicated ({level:.0%})")
        ax.plot(x, sub["observed"].values, "x", color="C3", label="observed")
        ax.set_xticks(x, sub["block"].values, rotation=90 if x.size > 12 else 0)
        ax.set_title(titles[stat])
        ax.set_xlabel("source (block)")
    axes[0].legend(loc="best")
    rep = _replicated(idata, group)["spread"]
    spread = check.sel(check="spread")
    axes[2].hist(rep, bins=40, color="0.7")
    axes[2].axvline(float(spread["observed"]), color="C3", label="observed")
    axes[2].set_title(f"spread of source means (p = {float(spread['p_value']):.2f})")
    axes[2].set_xlabel("standard deviation across sources")
    axes[2].legend(loc="best")
    return axes


def plot_targets(idata, *, level: float = 0.95, axes: Any = None) -> Any:
    """Histograms of the posterior of each target with its equal-tailed interval.

    Parameters
    ----------
    idata : arviz.InferenceData
        A result of :func:`bayescv.bayes.fit`.
    level : float, default 0.95
        Coverage of the interval marked.
    axes : sequence of matplotlib Axes, optional
        One per target (``expected_cv``; for CVS ``ose`` and ``new_source``; and ``theta``);
        new ones otherwise.

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
        The axes drawn on.
    """
    import matplotlib.pyplot as plt

    names = [
        v for v in ("expected_cv", "ose", "new_source", "theta") if v in idata.posterior.data_vars
    ]
    if axes is None:
        _, axes = plt.subplots(
            1, len(names), figsize=(4.3 * len(names), 3.6), constrained_layout=True
        )
    axes = np.atleast_1d(np.asarray(axes)).ravel()
    titles = {
        "expected_cv": "expected_cv (sources at hand)",
        "ose": "ose (mean over new sources)",
        "new_source": "new_source (one new source)",
        "theta": "θ: variance of the CV estimate",
    }
    for ax, name in zip(axes, names, strict=True):
        draws = np.asarray(idata.posterior[name].values).ravel()
        ax.hist(draws, bins=50, color="0.7")
        for bound in np.quantile(draws, [(1 - level) / 2, (1 + level) / 2]):
            ax.axvline(bound, color="C0", linestyle="--")
        ax.axvline(draws.mean(), color="C0")
        ax.set_title(titles[name])
        ax.set_yticks([])
    return axes
