"""Posterior (and prior) predictive checks of the collapsed model.

Each posterior draw replicates the statistics of a data set of the observed design: the
per-source mean losses ē_k, the within-source variances W_k / (n_k − 1) and the spread of the
source means (their standard deviation across sources). The observed values are compared
with their replicated distribution through central intervals and Bayesian p-values
P(T_rep > T_obs) + ½ P(T_rep = T_obs) (Gelman, Meng & Stern 1996; the mid-p form, which is
P(T_rep ≥ T_obs) for continuous statistics, keeps the discrete counts of the binomial model
from reading as misfit: a block without errors would get P(T_rep ≥ 0) = 1); a p-value near
0 or 1 points at a feature the
model does not reproduce, such as one source with an outlying within-source variance. The
groups are named as ArviZ expects, so ``arviz.plot_ppc(idata, var_names=["ybar"])`` works too.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from bayescv.intervals import check_level

__all__ = ["predictive_check", "replicated_statistics"]

_GROUPS = {"posterior": "posterior_predictive", "prior": "prior_predictive"}


def replicated_statistics(idata, group: str) -> dict[str, np.ndarray]:
    """Per draw: the source means, within-source variances and spread of a replicated data set."""
    pred = idata[_GROUPS[group]]
    k = idata.constant_data["n"].size
    ybar = pred["ybar"].values.reshape(-1, k)
    out = {"mean": ybar, "spread": ybar.std(axis=-1, ddof=1)}
    if "W" in pred:  # the binomial model's within-block variance is fixed by its mean
        out["within_var"] = pred["W"].values.reshape(-1, k) / idata.constant_data["dof"].values
    return out


def _observed(idata) -> dict[str, np.ndarray]:
    obs = idata.observed_data
    ybar = obs["ybar"].values
    out = {"mean": ybar, "spread": ybar.std(ddof=1)}
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
        ``upper`` and ``p_value`` = P(T_rep > T_obs) + ½ P(T_rep = T_obs).

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
    >>> check.sizes["check"], check["check"].values[[0, 5, 10]].tolist()
    (11, ['mean[0]', 'within_var[0]', 'spread'])
    >>> round(float(check["observed"].sel(check="spread")), 3)
    0.15
    >>> bool(check["p_value"].min() > 0.05 and check["p_value"].max() < 0.95)
    True
    """
    if group not in _GROUPS:
        raise ValueError(f"group must be one of {tuple(_GROUPS)}, got {group!r}")
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
    for stat in [s for s in ("mean", "within_var", "spread") if s in obs]:
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
