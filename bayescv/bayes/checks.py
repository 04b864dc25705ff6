"""Posterior (and prior) predictive checks of the collapsed model.

Each posterior draw replicates the statistics of a data set of the observed design: the
per-source mean losses ē_k, the within-source variances W_k / (n_k − 1) and the spread of the
source means (their standard deviation across sources). The observed values are compared
with their replicated distribution through central intervals and Bayesian p-values
P(T_rep > T_obs) + ½ P(T_rep = T_obs) (Gelman, Meng & Stern 1996; the mid-p form, which is
P(T_rep ≥ T_obs) for continuous statistics, keeps the discrete counts of the binomial model
from reading as misfit: a block without errors would get P(T_rep ≥ 0) = 1); a p-value near
0 or 1 points at a feature the
model does not reproduce, such as one source with an outlying within-source variance.

Those replicates keep the observed sources, whose fitted levels reproduce their spread
whatever the population model. A CVS fit's posterior predictive group also holds
``ybar_new``, the block means of K new sources drawn from the fitted population (a mixed
replication, :mod:`bayescv.bayes._new_sources`); the spread and skewness of the source means
against it check the population's shape. The groups are named as ArviZ expects, so
``arviz.plot_ppc(idata, var_names=["ybar"])`` works too; for the binomial model's fits,
whose replicated block means are discrete (ArviZ's density estimate fails on a draw whose
blocks are all equal), ``var_names=["y"]``, the error counts.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from bayescv._names import did_you_mean
from bayescv.intervals import check_level

__all__ = ["POPULATION_STATISTICS", "predictive_check", "replicated_statistics"]

_GROUPS = {"posterior": "posterior_predictive", "prior": "prior_predictive"}


#: Statistics of a replicated data set with new sources (``ybar_new``): shape, not order.
POPULATION_STATISTICS = ("new_sources_spread", "new_sources_skewness")


def _population(ybar: np.ndarray) -> dict[str, np.ndarray]:
    """Return the standard deviation and skewness (K ≥ 3) of source means, last axis."""
    out = {"new_sources_spread": ybar.std(axis=-1, ddof=1)}
    if ybar.shape[-1] >= 3:
        # g1 = m3 / m2^(3/2), scipy.stats.skew's default; NaN where every mean is equal, up
        # to rounding as scipy judges it (three error rates of 5/50 average to 0.1 + 1.4e-17,
        # whose rounding residues would otherwise give a skewness of -1).
        mean = ybar.mean(axis=-1, keepdims=True)
        centred = ybar - mean
        m2, m3 = (centred**2).mean(axis=-1), (centred**3).mean(axis=-1)
        equal = m2 <= (10 * np.finfo(float).resolution * mean[..., 0]) ** 2
        with np.errstate(invalid="ignore", divide="ignore"):
            out["new_sources_skewness"] = np.where(equal, np.nan, m3 / m2**1.5)
    return out


def replicated_statistics(idata, group: str) -> dict[str, np.ndarray]:
    """Per draw: the source means, within-source variances and spread of a replicated data set.

    A posterior group with new sources (``ybar_new``: CVS fits) adds the population
    statistics :data:`POPULATION_STATISTICS` of those new sources' means.
    """
    pred = idata[_GROUPS[group]]
    k = idata.constant_data["n"].size
    ybar = pred["ybar"].values.reshape(-1, k)
    out = {"mean": ybar, "spread": ybar.std(axis=-1, ddof=1)}
    if "W" in pred:  # the binomial model's within-block variance is fixed by its mean
        out["within_var"] = pred["W"].values.reshape(-1, k) / idata.constant_data["dof"].values
    if "ybar_new" in pred:
        out.update(_population(pred["ybar_new"].values.reshape(-1, k)))
    return out


def _observed(idata) -> dict[str, np.ndarray]:
    obs = idata.observed_data
    ybar = obs["ybar"].values
    out = {"mean": ybar, "spread": ybar.std(ddof=1), **_population(ybar)}
    if "W" in obs:
        out["within_var"] = obs["W"].values / idata.constant_data["dof"].values
    return out


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
        ``upper`` and ``p_value`` = P(T_rep > T_obs) + ½ P(T_rep = T_obs). A posterior
        check of a CVS fit adds two rows that check the population of sources, not the
        observed ones: ``new_sources_spread`` and ``new_sources_skewness`` (K ≥ 3), the
        standard deviation and skewness (g1 = m3 / m2^(3/2)) of the source means, replicated
        with K new sources drawn from the fitted population (normal, lognormal or
        logit-normal; :mod:`bayescv.bayes._new_sources`). The observed source means
        are compared with those of new sources, so a population of the wrong shape shows:
        right-skewed means under a normal population get a skewness p-value near 0.

    Raises
    ------
    ValueError
        For an unknown group or a level outside (0, 1).
    TypeError
        When `idata` is not a result of :func:`bayescv.bayes.fit`.

    Examples
    --------
    >>> import numpy as np
    >>> from bayescv.bayes import fit
    >>> from bayescv.losses import from_arrays
    >>> rng = np.random.default_rng(0)
    >>> block = np.repeat(np.arange(5), 40)
    >>> table = from_arrays(rng.normal(1.0, 0.3, 200) + 0.1 * block, block, scheme="source")
    >>> check = predictive_check(fit(table, random_state=1))
    >>> check.sizes["check"], check["check"].values[[0, 5, 10, 11, 12]].tolist()
    (13, ['mean[0]', 'within_var[0]', 'spread', 'new_sources_spread', 'new_sources_skewness'])
    >>> round(float(check["observed"].sel(check="spread")), 3)
    0.15
    >>> bool(check["p_value"].min() > 0.05 and check["p_value"].max() < 0.95)
    True
    """
    if group not in _GROUPS:
        raise ValueError(
            f"group must be one of {tuple(_GROUPS)}, got {group!r}{did_you_mean(group, _GROUPS)}"
        )
    check_level(level)
    if not hasattr(idata, "observed_data"):
        raise TypeError(
            f"idata must be the InferenceData that bayescv.bayes.fit returns, got "
            f"{type(idata).__name__}; for a loss table call fit(table) first"
        )
    rep, obs = replicated_statistics(idata, group), _observed(idata)
    labels = [str(b) for b in idata.observed_data["block"].values]
    rows: dict[str, list[Any]] = {
        k: [] for k in ("check", "statistic", "block", "observed", "mean", "lo", "hi", "p")
    }
    q = [(1 - level) / 2, (1 + level) / 2]
    order = ("mean", "within_var", "spread", *POPULATION_STATISTICS)
    for stat in [s for s in order if s in obs and s in rep]:
        draws = rep[stat].reshape(rep[stat].shape[0], -1)
        observed = np.atleast_1d(obs[stat])
        names = labels if stat in ("mean", "within_var") else [""]
        for j, name in enumerate(names):
            column = draws[:, j]
            # Skewness is undefined where all source means are equal: such draws (and an
            # observed set of equal means, a row then left out) say nothing of shape.
            column = column[np.isfinite(column)]
            if not np.isfinite(observed[j]) or column.size == 0:
                continue
            lo, hi = np.quantile(column, q)
            rows["check"].append(f"{stat}[{name}]" if name else stat)
            rows["statistic"].append(stat)
            rows["block"].append(name)
            rows["observed"].append(float(observed[j]))
            rows["mean"].append(float(column.mean()))
            rows["lo"].append(float(lo))
            rows["hi"].append(float(hi))
            above, tied = (column > observed[j]).mean(), (column == observed[j]).mean()
            rows["p"].append(float(above + tied / 2))
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
