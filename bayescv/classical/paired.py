"""Paired comparison of two learners evaluated on the same CV splits.

The per-point loss differences h_i = e_i^A − e_i^B form a loss table of their own, so every
interval of :func:`bayescv.classical.intervals.cv_intervals` applies to them: its interval is for the
difference of the two learners' errors (the estimand named in ``target``, for A minus B),
and the test statistic is mean(h)/se. This gives

* Bayle et al.'s (2020) test (``bayle_within``, ``bayle_all_pairs``): with ``alternative="less"``
  it rejects "A is not better than B" when √N·mean(h)/σ̂_h < z_α;
* the Nadeau–Bengio corrected resampled t-test (``nadeau_bengio``), for repeated K-fold CV
  (the J = R·K version of Bouckaert & Frank 2004), with J − 1 degrees of freedom;
* the naive tests (``naive_points``, ``naive_folds``) and the θ-based ones.

Losses are "lower is better", so ``alternative="less"`` asks whether A has the lower error.

References
----------
Nadeau, C. & Bengio, Y. (2003). Inference for the generalization error. Machine Learning
52, 239–281. doi:10.1023/A:1024068626366

Bouckaert, R. R. & Frank, E. (2004). Evaluating the replicability of significance tests for
comparing learning algorithms. PAKDD, LNCS 3056, 3–12. doi:10.1007/978-3-540-24775-3_3

Bayle, P., Bayle, A., Janson, L. & Mackey, L. (2020). Cross-validation confidence intervals
for test error. NeurIPS 33.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import xarray as xr
from scipy import stats

from bayescv.classical.intervals import cv_intervals
from bayescv.losses import loss_differences

__all__ = ["ALTERNATIVES", "paired_comparison"]

ALTERNATIVES = ("two-sided", "less", "greater")


def paired_comparison(
    losses_a: xr.Dataset,
    losses_b: xr.Dataset,
    methods: Sequence[str] | str | None = None,
    *,
    level: float = 0.95,
    kind: str = "normal",
    alternative: str = "two-sided",
) -> xr.Dataset:
    """Compare two learners on the same CV splits: intervals and tests per method.

    Parameters
    ----------
    losses_a, losses_b : xarray.Dataset
        Loss tables of learners A and B on the same splits.
    methods : str or sequence of str, optional
        Interval methods as in :func:`bayescv.classical.intervals.cv_intervals` (default: that
        function's default for the scheme).
    level : float, default 0.95
        Nominal coverage of the two-sided intervals.
    kind : {"normal", "t"}, default "normal"
        Reference distribution of the statistic (``nadeau_bengio`` is always t).
    alternative : {"two-sided", "less", "greater"}, default "two-sided"
        ``"less"``: A has the lower error (mean h < 0); ``"greater"``: B has.

    Returns
    -------
    xarray.Dataset
        The interval Dataset of the difference A − B, plus ``statistic`` (mean(h)/se) and
        ``p_value`` per method; attrs ``alternative`` and ``difference = "A - B"``. A method
        whose variance estimate is negative or undefined has NaN statistic and p-value and
        keeps its flag.

    Examples
    --------
    >>> from bayescv.losses import from_arrays
    >>> blocks = [0, 0, 0, 1, 1, 1, 2, 2, 2]
    >>> a = from_arrays([0.1, 0.2, 0.1, 0.3, 0.2, 0.1, 0.2, 0.2, 0.3], blocks)
    >>> b = from_arrays([0.3, 0.4, 0.2, 0.5, 0.3, 0.4, 0.3, 0.4, 0.4], blocks)
    >>> out = paired_comparison(a, b, ["naive_points"], alternative="less")
    >>> bool(out["p_value"].sel(method_name="naive_points") < 0.01)
    True
    """
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative must be one of {ALTERNATIVES}, got {alternative!r}")
    diff = loss_differences(losses_a, losses_b)
    result = cv_intervals(diff, methods, level=level, kind=kind)
    with np.errstate(invalid="ignore", divide="ignore"):
        statistic = result["estimate"] / result["se"]
    df = result["df"].values
    z = statistic.values
    cdf = stats.t.cdf(z, df)
    sf = stats.t.sf(z, df)
    p_value = {
        "two-sided": 2 * np.minimum(cdf, sf),
        "less": cdf,
        "greater": sf,
    }[alternative]
    result = result.assign(
        statistic=statistic,
        p_value=(result["estimate"].dims, np.where(np.isfinite(z), p_value, np.nan)),
    )
    result.attrs.update({"alternative": alternative, "difference": "A - B"})
    return result
