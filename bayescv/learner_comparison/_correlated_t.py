"""The Bayesian correlated t-test (Corani & Benavoli 2015), in closed form.

The J = R·K per-fold differences x_j of two learners (A minus B, losses: negative means A is
better) on the same repeated K-fold splits are correlated, because training sets overlap.
Modelling them as Gaussian with a common mean δ and correlation ρ between any two, under the
prior of Corani & Benavoli, the posterior of δ is Student t with J − 1 degrees of freedom,
location x̄ and scale² = s² (1/J + ρ/(1 − ρ)), s² the sample variance of the x_j. With
ρ/(1 − ρ) = n_test/n_train this is Nadeau & Bengio's (2003) corrected resampled t statistic
read as a posterior. baycomp's ``CorrelatedTTest`` takes ρ = 1/K, i.e. ρ/(1 − ρ) = 1/(K − 1),
the ratio for equal folds; bayescv uses the mean of n_test/n_train over the folds when the fold
sizes are known (:func:`bayescv.fold_scores.nb_ratio`), which is the same number for equal
folds.

A region of practical equivalence (ROPE) of half-width r splits the posterior into
P(A better) = P(δ < −r), P(equivalent) = P(−r ≤ δ ≤ r) and P(A worse) = P(δ > r), computed from
the t distribution function (no sampling).

References
----------
Corani, G. & Benavoli, A. (2015). A Bayesian approach for comparing cross-validated
algorithms on multiple data sets. Machine Learning 100, 285–304.
doi:10.1007/s10994-015-5486-z

Benavoli, A., Corani, G., Demšar, J. & Zaffalon, M. (2017). Time for a change: a tutorial
for comparing multiple classifiers through Bayesian analysis. JMLR 18(77), 1–36.

Nadeau, C. & Bengio, Y. (2003). Inference for the generalization error. Machine Learning
52, 239–281. doi:10.1023/A:1024068626366
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr
from scipy import stats

from bayescv.classical.paired import equal_up_to_rounding
from bayescv.fold_scores import nb_ratio, validate_fold_table
from bayescv.fold_scores._table import check_rope
from bayescv.intervals import check_level, normal_bounds
from bayescv.learner_comparison._inputs import as_fold_table
from bayescv.learner_comparison._range import difference_bounds

__all__ = ["correlated_ttest", "t_posterior_probabilities"]


def t_posterior_probabilities(
    loc: np.ndarray, scale: np.ndarray, df: np.ndarray, rope: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """P(δ < −rope), P(−rope ≤ δ ≤ rope), P(δ > rope) for δ ~ t(df, loc, scale).

    A zero scale is a point mass at `loc` (ties at ±rope go to "equivalent"; with rope 0 a
    difference of exactly 0 counts half to each side, as baycomp does).

    Parameters
    ----------
    loc, scale, df : array-like
        Location, scale and degrees of freedom.
    rope : float
        Half-width of the region of practical equivalence (≥ 0).

    Returns
    -------
    p_better, p_equivalent, p_worse : ndarray

    Examples
    --------
    δ ~ t(9, 0, 1) with rope 1 puts the t cdf at −1, 0.1717, on each side:

    >>> better, equivalent, worse = t_posterior_probabilities(0.0, 1.0, 9, rope=1.0)
    >>> round(float(better), 4), round(float(equivalent), 4), round(float(worse), 4)
    (0.1717, 0.6566, 0.1717)
    """
    loc, scale, df = np.broadcast_arrays(*(np.asarray(a, dtype=float) for a in (loc, scale, df)))
    point = scale == 0
    safe = np.where(point, 1.0, scale)
    better = stats.t.cdf(-rope, df, loc, safe)
    worse = stats.t.sf(rope, df, loc, safe)
    if rope == 0:  # no equivalence region: the two sides share all the mass
        tie = 0.5 * (loc == 0)
        better = np.where(point, (loc < 0) + tie, better)
        worse = 1.0 - better
    else:
        better = np.where(point, loc < -rope, better).astype(float)
        worse = np.where(point, loc > rope, worse).astype(float)
    equivalent = np.clip(1.0 - better - worse, 0.0, 1.0)
    return better, equivalent, worse


def correlated_ttest(
    table: Any,
    a: str | None = None,
    b: str | None = None,
    *,
    rope: float = 0.0,
    level: float = 0.95,
) -> xr.Dataset:
    """Bayesian correlated t-test of learner `a` against `b` on each data set of a fold table.

    Parameters
    ----------
    table : xarray.Dataset, mapping or sequence
        A fold-score table (:mod:`bayescv.fold_scores`), losses lower-is-better, or per-point
        loss tables of the learners on the same splits, as ``{name: table}`` or a list
        (learners A, B, …), reduced to one with :func:`bayescv.fold_scores.from_loss_tables`.
    a, b : str, optional
        Learner names (default: the table's first two).
    rope : float, default 0
        Half-width of the region of practical equivalence, in loss units.
    level : float, default 0.95
        Mass of the reported equal-tailed credible interval.

    Returns
    -------
    xarray.Dataset
        Dim ``dataset``: ``mean`` (x̄, the posterior location of the difference of expected
        losses a − b), ``scale``, ``df``, ``lower``, ``upper``, ``p_better`` (a has the lower
        expected loss by more than `rope`), ``p_equivalent``, ``p_worse``, ``flag``
        (``"zero_variance"`` when every fold difference is equal, up to the rounding of the
        subtraction: the scale is then exactly 0 and the posterior a point mass, as in
        baycomp, whose probabilities are 0 or 1; with ``rope=0`` a point
        mass at exactly 0 is split, 0.5 better and 0.5 worse; ``"truncated_to_range"`` when
        a bound was moved onto the range of the differences, :func:`difference_bounds`,
        the probabilities staying the untruncated posterior's). Attrs: ``a``, ``b``,
        ``rope``, ``level``, ``difference`` (``"a - b"``), ``target`` (``"err"``: the expected loss of the learner
        trained on n_train points, per data set), ``metric``, ``greater_is_better``.

    Raises
    ------
    ValueError
        For a malformed table, unknown learners, a negative rope or a level outside (0, 1).

    Examples
    --------
    >>> from bayescv.fold_scores import fold_table
    >>> t = fold_table([[0.81, 0.84, 0.80, 0.86, 0.83], [0.78, 0.80, 0.79, 0.81, 0.80]],
    ...                learners=["lr", "tree"], greater_is_better=True)
    >>> out = correlated_ttest(t, rope=0.01)
    >>> round(float(out["p_better"].item()), 3)  # lr has the higher accuracy
    0.954
    """
    table = validate_fold_table(as_fold_table(table))
    rope = check_rope(rope)
    check_level(level)
    # numpy from here on: xarray's lookups and alignment would cost more than the test.
    variables = table.variables
    names = variables["learner"].values.tolist()
    if len(names) < 2:
        raise ValueError("the table has one learner; a comparison needs two")
    a = names[0] if a is None else a
    b = names[1] if b is None else b
    for x in (a, b):
        if x not in names:
            raise ValueError(f"unknown learner {x!r}; the table has {names}")
    if a == b:
        raise ValueError(f"compare two different learners, got {a!r} twice")
    loss = variables["loss"].values
    la, lb = (loss[:, names.index(u)].reshape(loss.shape[0], -1) for u in (a, b))
    x = la - lb
    J = x.shape[1]
    mean = x.mean(axis=1)
    # Centred on the first difference, equal differences give exactly 0 (x.var would centre
    # on the rounded x̄ and give ~1e-35). Differences that differ only by the rounding of
    # a − b (a few ulps of the losses: 0.1 − 0.12 and 0.2 − 0.22) are equal too, so the
    # posterior is the point mass it should be rather than a t of scale ~1e-17.
    var = (x - x[:, :1]).var(axis=1, ddof=1)
    var = np.where(equal_up_to_rounding(la, lb), 0.0, var)
    scale = np.sqrt(var * (1.0 / J + nb_ratio(table)))
    df = np.full_like(mean, J - 1.0)
    better, equivalent, worse = t_posterior_probabilities(mean, scale, df, rope)
    # The equal-tailed interval of the t posterior; a bound past the differences' range is
    # moved onto it and flagged, as every interval of the package is.
    _, lower, upper, flag = normal_bounds(
        mean, scale**2, level=level, kind="t", df=df, bounds=difference_bounds(table)
    )
    return xr.Dataset(
        {
            "mean": ("dataset", mean),
            "scale": ("dataset", scale),
            "df": ("dataset", df),
            "lower": ("dataset", lower),
            "upper": ("dataset", upper),
            "p_better": ("dataset", better),
            "p_equivalent": ("dataset", equivalent),
            "p_worse": ("dataset", worse),
            "flag": ("dataset", flag),
        },
        coords={"dataset": variables["dataset"].values},
        attrs={
            "a": a, "b": b, "rope": rope, "level": float(level), "difference": "a - b",
            "target": "err", "method": "correlated_t", "metric": table.attrs.get("metric", ""),
            "greater_is_better": int(table.attrs.get("greater_is_better", 0)),
        },
    )  # fmt: skip
