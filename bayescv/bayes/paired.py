"""Compare two learners with the hierarchical model on paired loss differences.

With both learners evaluated on the same points and folds, the per-point differences
d_ki = e^A_ki − e^B_ki form a loss table of their own, and the same collapsed model gives the
posterior of the mean difference per source (partially pooled), over the sources at hand
(``expected_cv``), on average over new sources (``ose``, the population mean μ₀) and on one
new source (``new_source``, predictive: it carries the spread τ² of the sources). A region of practical
equivalence (ROPE, Kruschke 2018, doi:10.1177/2515245918771304) of half-width ``rope``
splits each posterior into "A better" (d < −rope: A has the lower loss), "equivalent"
(|d| ≤ rope) and "A worse" (d > rope).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from bayescv._bounds import truncate_to_range
from bayescv._extras import BAYES_MODULES, require_extra
from bayescv.bayes.fit import fit
from bayescv.fold_scores._table import check_rope
from bayescv.intervals import check_level
from bayescv.losses import loss_differences

__all__ = ["paired_comparison"]


def paired_comparison(
    losses_a: xr.Dataset,
    losses_b: xr.Dataset,
    *,
    rope: float,
    level: float = 0.95,
    **fit_kwargs: Any,
) -> tuple[Any, xr.Dataset]:
    """Posterior probabilities that learner A is better than, equivalent to or worse than B.

    Parameters
    ----------
    losses_a, losses_b : xarray.Dataset
        Paired loss tables (see :func:`bayescv.losses.loss_differences`).
    rope : float
        Half-width of the region of practical equivalence, in loss units (≥ 0).
    level : float, default 0.95
        Coverage of the equal-tailed intervals reported.
    **fit_kwargs
        Passed to :func:`bayescv.bayes.fit` (``draws``, ``random_state``, ``bootstrap`` with
        a difference table of bootstrap replicates, ...).

    Returns
    -------
    idata : arviz.InferenceData
        The fit on the differences.
    summary : xarray.Dataset
        Dim ``target``: each block (a source in CVS, a fold in CVR: the partially pooled
        mean difference), ``"expected_cv"`` (the mean over the blocks at hand, as the target
        of that name everywhere in the package)
        and, for CVS, ``"ose"`` (the mean difference over the population of sources, μ₀)
        and ``"new_source"`` (the difference on one new source, μ₀ + τ z); variables
        ``p_better``, ``p_equivalent``, ``p_worse``, ``mean``, ``lower``, ``upper`` and
        ``flag`` (``"not_converged"`` when the fit's diagnostics failed,
        ``"truncated_to_range"`` when a bound was moved onto the range of a difference,
        [low − high, high − low] for losses in [low, high]: the normal model's posterior
        can reach past it). ``p_better`` is P(d < −rope), A having the lower loss. Coordinate ``block`` (along
        ``target``): a block row's block label, ``""`` for the summary rows; a block
        labelled like a summary row (``"ose"``, ...) has the target ``"block ose"``.

    Raises
    ------
    ValueError
        For a `rope` that is not a finite number >= 0, a `level` outside (0, 1), for tables
        that do not pair up, and when the learners' losses are equal at every point. The
        differences are fitted with the Gaussian likelihood: their range is [−1, 1] for 0-1
        losses, even when every observed difference is 0 or 1.

    Examples
    --------
    >>> import numpy as np
    >>> from bayescv.losses import from_arrays
    >>> from bayescv.bayes import paired_comparison
    >>> rng = np.random.default_rng(0)
    >>> block = np.repeat(np.arange(4), 50)
    >>> a = from_arrays(rng.normal(1.0, 0.2, 200), block, scheme="source")
    >>> b = a.copy(data={"loss": a["loss"].values + rng.normal(0.3, 0.1, 200)})
    >>> _, s = paired_comparison(a, b, rope=0.05, random_state=0)
    >>> float(s["p_better"].sel(target="expected_cv")) > 0.99
    True
    """
    require_extra(BAYES_MODULES, "bayes", what="bayescv.bayes.paired_comparison")
    rope = check_rope(rope)
    check_level(level)  # before the fit, not after it in the quantiles
    diff = loss_differences(losses_a, losses_b)
    if not np.any(diff["loss"].values):
        raise ValueError(
            "the two learners have the same loss at every point: the model of their "
            "differences has no variance to fit (bayescv.paired_comparison flags this "
            "'no_disagreements' and bounds the difference by the number of points)"
        )
    idata = fit(diff, **fit_kwargs)
    post = idata.posterior
    summaries = {"expected_cv": post["expected_cv"].values.ravel()}
    for name in ("ose", "new_source"):
        if name in post:
            summaries[name] = post[name].values.ravel()
    # A block labelled like a summary row ("ose", "expected_cv", ...) would replace or hide it:
    # such a block's row is named "block <label>" (prefixed again until unique).
    draws, blocks = {}, []
    taken = {str(b) for b in post["block"].values} | set(summaries)
    for b in post["block"].values:
        name = str(b)
        while name in summaries or (name in draws) or (name != str(b) and name in taken):
            name = f"block {name}"
        draws[name] = post["mu_pooled"].sel(block=b).values.ravel()
        blocks.append(str(b))
    draws.update(summaries)
    blocks += [""] * len(summaries)
    q = [(1 - level) / 2, (1 + level) / 2]
    table = {
        "p_better": [float((d < -rope).mean()) for d in draws.values()],
        "p_equivalent": [float((np.abs(d) <= rope).mean()) for d in draws.values()],
        "p_worse": [float((d > rope).mean()) for d in draws.values()],
        "mean": [float(d.mean()) for d in draws.values()],
        "lower": [float(np.quantile(d, q[0])) for d in draws.values()],
        "upper": [float(np.quantile(d, q[1])) for d in draws.values()],
    }
    # The normal model's posterior can reach past the range of a difference ([−1, 1] for
    # 0-1 losses): such a bound is moved onto it and its row flagged, as in
    # posterior_intervals; the probabilities stay the posterior's.
    attrs = idata.sample_stats.attrs
    converged = "not_converged" if attrs.get("problems") else ""
    table["lower"], table["upper"], table["flag"] = truncate_to_range(
        table["lower"], table["upper"], [converged] * len(draws),
        tuple(attrs.get("loss_range", (-np.inf, np.inf))),
    )  # fmt: skip
    summary = xr.Dataset(
        {name: ("target", values) for name, values in table.items()},
        coords={"target": list(draws), "block": ("target", blocks)},
        attrs={"rope": float(rope), "level": float(level), "difference": "A − B"},
    )
    return idata, summary
