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

Differences equal up to the rounding of a − b (losses B = losses A + c) have no variance:
every row but θ_1's (μ̂²) is then flagged ``"zero_variance"`` with no p-value
(:func:`equal_up_to_rounding`, the rule of the fold-level comparisons too), rather than given
the ~1e-34 of rounding.

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

import warnings
from collections.abc import Sequence

import numpy as np
import xarray as xr
from scipy import stats

from bayescv._names import did_you_mean
from bayescv.classical._block_stats import block_stats
from bayescv.classical._methods import INTERVAL_METHODS
from bayescv.classical.intervals import cv_intervals
from bayescv.intervals import normal_bounds, score_bounds
from bayescv.losses import is_binary, loss_differences
from bayescv.tails import HeavyTailWarning, warn_heavy_tail

__all__ = ["ALTERNATIVES", "equal_up_to_rounding", "paired_comparison"]

ALTERNATIVES = ("two-sided", "less", "greater")


def paired_comparison(
    losses_a: xr.Dataset,
    losses_b: xr.Dataset,
    methods: Sequence[str] | str | None = None,
    *,
    level: float = 0.95,
    kind: str = "auto",
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
    kind : {"auto", "score", "normal", "t"}, default "auto"
        ``"score"`` (the default when both tables hold 0-1 losses): the difference
        h ∈ {−1, 0, 1} is mapped to (h + 1)/2 ∈ [0, 1] and each method's interval is the
        score interval of :func:`bayescv.intervals.score_bounds` there (on the effective
        sample size of its θ̂), mapped back, so the bounds stay inside [−1, 1]. When the two
        learners never disagree (every h = 0, so every θ̂ = 0), the interval is ±u with u
        the Wilson upper bound z²/(N + z²) of the rate of disagreements for 0 disagreements
        in N points (the size of A − B cannot exceed that rate), flagged ``"no_disagreements"``;
        when A errs where B does not at every point, or the other way round (every h = 1, or
        every h = −1), Wilson's bound at that end, flagged ``"b_lower_everywhere"``
        (``"a_lower_everywhere"``).
        ``"normal"``, ``"t"`` (the default otherwise, as in :func:`cv_intervals`): the
        reference distribution of the statistic (``nadeau_bengio`` is always t), bounds
        truncated to the differences' range [a − b, b − a] with a flag. The statistic and
        p-value are mean(h)/se in every case.
    alternative : {"two-sided", "less", "greater"}, default "two-sided"
        ``"less"``: A has the lower error (mean h < 0); ``"greater"``: B has.

    Returns
    -------
    xarray.Dataset
        The interval Dataset of the difference A − B, plus ``statistic`` (mean(h)/se) and
        ``p_value`` per method; attrs ``alternative`` and ``difference = "A - B"``. A method
        whose variance estimate is negative or undefined has NaN statistic and p-value and
        keeps its flag. When every difference is equal up to rounding
        (:func:`equal_up_to_rounding`; per replicate for independent data sets), the
        variance of every method but θ_1 (μ̂², not 0 for equal differences) is 0: its
        interval is [estimate, estimate], flagged ``"zero_variance"``, with NaN p-value.

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
        raise ValueError(
            f"alternative must be one of {ALTERNATIVES}, got {alternative!r}"
            f"{did_you_mean(alternative, ALTERNATIVES)}"
        )
    if methods is not None and "bootstrap" in ([methods] if isinstance(methods, str) else methods):
        # cv_intervals' advice (pass bootstrap=) names an argument this function does not take
        raise ValueError(
            "paired_comparison has no 'bootstrap' method: the bootstrap interval needs "
            "bootstrap-replicated CV runs, which it does not take; choose from "
            f"{list(INTERVAL_METHODS)}"
        )
    diff = loss_differences(losses_a, losses_b)
    if kind not in ("auto", "score", "normal", "t"):
        raise ValueError(
            f"kind must be 'auto', 'score', 'normal' or 't', got {kind!r}"
            + (": differences of losses take both signs, so no log scale" if kind == "log" else "")
        )
    binary = is_binary(losses_a) and is_binary(losses_b)
    if kind == "score" and not binary:
        raise ValueError("kind='score' compares two tables of 0-1 losses")
    score = kind == "score" or (kind == "auto" and binary)
    with warnings.catch_warnings():
        # cv_intervals' advice (a log-scale interval) cannot apply to differences, which
        # take both signs: warn here instead, at the caller's line.
        warnings.simplefilter("ignore", HeavyTailWarning)
        result = cv_intervals(diff, methods, level=level, kind="normal" if score else kind)
    result = _zero_variance_rows(result, losses_a, losses_b, level)
    warn_heavy_tail(
        result.attrs.get("khat", np.nan),
        stacklevel=3,
        advice=(
            "Here they are the differences of two learners' losses: their intervals may be "
            "too narrow and their p-values too small (docs, 'When normal intervals fail')"
        ),
    )
    if score:
        result = _score_rows(result, diff, level)
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


def equal_up_to_rounding(la: np.ndarray, lb: np.ndarray) -> np.ndarray:
    """Whether each row's differences ``la − lb`` are all equal, up to the rounding of ``a − b``.

    Differences that differ only by a few ulps of the losses (0.1 − 0.12 and 0.2 − 0.22, or
    losses shifted by a constant) are one difference: their variance is 0, not the ~1e-34
    that would make a t statistic of 1e16. The fold-level comparisons read fold losses so,
    :func:`paired_comparison` the per-point losses.

    Parameters
    ----------
    la, lb : ndarray of shape (n_rows, J)
        Two learners' losses (fold losses, or per-point losses), one row per data set.

    Returns
    -------
    ndarray of bool, shape (n_rows,)

    Examples
    --------
    >>> equal_up_to_rounding(np.array([[0.1, 0.2]]), np.array([[0.12, 0.22]])).tolist()
    [True]
    """
    rounding = 4 * np.finfo(float).eps * np.maximum(np.abs(la), np.abs(lb)).max(axis=1)
    return np.ptp(la - lb, axis=1) <= rounding


#: Methods whose θ̂ is not 0 for equal differences: θ_1 = μ̂² (unbiased when μ = 0) is c²
#: when every difference is c. Their rows keep their value.
_LOCATION_TERMS = ("theta_1",)
#: Flags of a variance estimate that a zero variance replaces.
_VARIANCE_FLAGS = ("zero_variance", "negative_variance", "truncated_to_range")


def _zero_variance_rows(
    result: xr.Dataset, losses_a: xr.Dataset, losses_b: xr.Dataset, level: float
) -> xr.Dataset:
    """Set θ̂ = 0 on the rows whose per-point differences are equal up to rounding.

    One row per replicate for independent data sets, else one over every run. A method
    without a variance estimate (``unequal_block_sizes``) keeps its row, as do those of
    :data:`_LOCATION_TERMS`.
    """
    replicated = result["estimate"].ndim > 1
    rows = losses_a.sizes["replicate"] if replicated else 1
    la, lb = (
        np.asarray(t["loss"].values, dtype=float).reshape(rows, -1) for t in (losses_a, losses_b)
    )
    equal = equal_up_to_rounding(la, lb)
    old = result["flag"].values
    mask = np.broadcast_to(equal[:, None] if replicated else equal[0], old.shape)
    mask = mask & np.vectorize(lambda f: "unequal_block_sizes" not in f, otypes=[bool])(old)
    mask = mask & ~np.isin(result["method_name"].values, _LOCATION_TERMS)
    if not mask.any():
        return result
    est = result["estimate"].values
    se, lower, upper, _ = normal_bounds(est, np.zeros_like(est), level=level)
    flags = np.vectorize(_with_zero_variance, otypes=[object])(old)
    dims = result["estimate"].dims
    return result.assign(
        {
            name: (dims, np.where(mask, new, result[name].values))
            for name, new in (
                ("theta", np.zeros_like(est)), ("se", se), ("lower", lower), ("upper", upper),
                ("flag", flags.astype(str)),
            )
        }
    )  # fmt: skip


def _with_zero_variance(flag: str) -> str:
    """``flag`` with its variance flag replaced by ``zero_variance`` (after a scheme flag)."""
    parts = [f for f in flag.split(",") if f]
    rest = [f for f in parts if f not in _VARIANCE_FLAGS]
    at = 1 if rest[:1] == ["random_kfold_only"] else 0
    return ",".join([*rest[:at], "zero_variance", *rest[at:]])


def _score_rows(result: xr.Dataset, diff: xr.Dataset, level: float) -> xr.Dataset:
    """Score bounds for the difference of two 0-1 losses, on q = (h + 1)/2 ∈ [0, 1]."""
    n = np.atleast_1d(block_stats(diff).N)
    n = n[:, None] if result["estimate"].ndim > 1 else n[0]
    est, theta = result["estimate"].values, result["theta"].values
    df = result["df"].values  # t for nadeau_bengio, as its p-value; inf (normal) otherwise
    _, low_q, high_q, flags = score_bounds((est + 1) / 2, theta / 4, n, level=level, df=df)
    lower, upper = 2 * low_q - 1, 2 * high_q - 1
    # q̂ = 0 (1) is h = −1 (+1) at every point, not a table without (with only) errors
    flags = np.where(flags == "no_errors", "a_lower_everywhere", flags)
    flags = np.where(flags == "all_errors", "b_lower_everywhere", flags)
    # The learners never disagree (every h = 0, every θ̂ = 0): per data set for independent
    # replicates, over every run of repeated CV (one row).
    agree = ~np.atleast_2d(np.asarray(diff["loss"].values)).any(axis=-1)
    agree = agree[:, None] if est.ndim > 1 else agree.all()
    if np.any(agree):
        z2 = stats.norm.ppf(0.5 + level / 2) ** 2
        bound = np.broadcast_to(z2 / (n + z2), est.shape)
        lower, upper = np.where(agree, -bound, lower), np.where(agree, bound, upper)
        flags = np.where(agree, "no_disagreements", flags)
    old = result["flag"].values
    keep = np.isin(old, ("", "zero_variance", "truncated_to_range"))
    flags = np.where(keep, flags, old)
    return result.assign(
        lower=(result["lower"].dims, np.where(keep, lower, np.nan)),
        upper=(result["upper"].dims, np.where(keep, upper, np.nan)),
        flag=(result["flag"].dims, flags.astype(str)),
    ).assign_attrs(kind="score")
