"""One entry point for comparing two learners: every applicable test, one row each.

:func:`compare_learners` takes what the user has — per-point loss tables of two or more
learners on the same splits, or a fold-score table (:mod:`bayescv.fold_scores`) — and runs the
methods that apply to it, returning one long Dataset with a row per (method, data set or
target, pair of learners). Every row says its ``target`` (the estimand, :data:`bayescv.ESTIMANDS`)
and its ``kind``: Bayesian rows give ``p_better`` / ``p_equivalent`` / ``p_worse`` (posterior
probabilities that the first learner's expected loss is lower by more than the ROPE, within
it, or higher), frequentist rows a ``p_value`` and NaN probabilities. "Better" always means
the lower expected loss (scores given as greater-is-better were negated when the table was
built).

Methods (:data:`COMPARISON_METHODS`):

==========================  =========  ===========================================================
name                        needs      what
==========================  =========  ===========================================================
``correlated_t``            folds      Bayesian correlated t-test (Corani & Benavoli 2015)
``nadeau_bengio``           folds      corrected resampled t-test, two-sided p-value
``naive_folds``             folds      paired t over the K fold means (mlxtend's k-fold paired t)
``naive_points``            points     paired test over all N points
``bayle_within``            points     Bayle et al.'s (2020) one-sided test that A is better
``hierarchical_sources``    points     the hierarchical model over sources (MCMC, ``bayescv[bayes]``)
``hierarchical_datasets``   folds, ≥2  Corani et al.'s (2017) hierarchical model over data sets
                            data sets  (MCMC, ``bayescv[bayes]``)
==========================  =========  ===========================================================
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import xarray as xr
from scipy import stats

from bayescv._extras import BAYES_MODULES, missing_extra, require_extra
from bayescv._names import did_you_mean
from bayescv.classical import paired_comparison as classical_paired
from bayescv.classical.paired import equal_up_to_rounding
from bayescv.fold_scores import fold_differences, nb_ratio
from bayescv.fold_scores._table import check_rope
from bayescv.intervals import check_level, normal_bounds
from bayescv.learner_comparison._correlated_t import correlated_ttest
from bayescv.learner_comparison._inputs import as_inputs, checked_pairs
from bayescv.learner_comparison._range import cut_to_range, difference_bounds
from bayescv.losses import has_pair_blocks

__all__ = ["COMPARISON_METHODS", "DEFAULT_METHODS", "compare_learners"]

#: Every method of :func:`compare_learners`, and what it needs.
COMPARISON_METHODS = {
    "correlated_t": "folds",
    "nadeau_bengio": "folds",
    "naive_folds": "folds",
    "naive_points": "points",
    "bayle_within": "points",
    "hierarchical_sources": "points",
    "hierarchical_datasets": "datasets",
}
#: What runs by default (the MCMC methods only where they are the point: several data sets).
DEFAULT_METHODS = ("correlated_t", "nadeau_bengio", "naive_folds", "bayle_within")
#: The methods that fit a PyMC model: they need the ``bayes`` extra.
_MCMC = ("hierarchical_sources", "hierarchical_datasets")

_COLUMNS = (
    "method", "dataset", "a", "b", "target", "kind", "estimate", "lower", "upper",
    "p_better", "p_equivalent", "p_worse", "p_value", "alternative", "flag",
)  # fmt: skip


def _row(**values: Any) -> dict[str, Any]:
    row = dict.fromkeys(_COLUMNS, np.nan)
    row.update({"flag": "", "alternative": "", "dataset": ""})
    row.update(values)
    return row


#: Fold-level methods whose correlation ρ = n_test/n_train is that of random K-fold CV; on
#: leave-one-source-out tables they run only when named, flagged (as in cv_intervals).
_RANDOM_KFOLD_ONLY = ("correlated_t", "nadeau_bengio")


def _methods(
    methods: Any, points: bool, n_datasets: int, pair_blocks: bool, by_source: bool
) -> list[str]:
    """Return the methods to run: the defaults, ``"all"`` the input allows, or the user's."""
    allowed = [
        m
        for m, need in COMPARISON_METHODS.items()
        if (points or need != "points")
        and (n_datasets > 1 or need != "datasets")
        and (not pair_blocks or m == "naive_points")
        and (not by_source or m not in _RANDOM_KFOLD_ONLY)
    ]
    if methods is None:
        if pair_blocks:
            return ["naive_points"]
        return [m for m in (*DEFAULT_METHODS, "hierarchical_datasets") if m in allowed]
    if isinstance(methods, str):
        methods = allowed if methods == "all" else [methods]
    methods = list(methods)
    if not methods:
        raise ValueError(f"no methods given; choose from {list(COMPARISON_METHODS)}")
    unknown = [m for m in methods if m not in COMPARISON_METHODS]
    if unknown:
        raise ValueError(
            f"unknown methods {unknown}; choose from {list(COMPARISON_METHODS)}"
            f"{did_you_mean(unknown[0], COMPARISON_METHODS)}"
        )
    for m in methods:
        if COMPARISON_METHODS[m] == "points" and not points:
            raise ValueError(
                f"{m!r} needs every point's loss, and a fold-score table has only fold means; "
                "build loss tables with bayescv.cross_val_losses or "
                "bayescv.losses.from_predictions, or use a fold-level method "
                "(correlated_t, nadeau_bengio, naive_folds, hierarchical_datasets)"
            )
        if m == "hierarchical_datasets" and n_datasets < 2:
            raise ValueError("'hierarchical_datasets' needs results on at least two data sets")
        if pair_blocks and m != "naive_points":
            raise ValueError(
                f"{m!r} needs CV folds, and these tables' blocks are consecutive pairs of "
                "points (pointwise elpd from PSIS-LOO or WAIC): only 'naive_points' applies"
            )
    return list(dict.fromkeys(methods))


def _fold_rows(table, a, b, method, rope, level) -> list[dict]:
    """Rows of the fold-level methods for the pair (a, b), one per data set."""
    rows = []
    if method == "correlated_t":
        res = correlated_ttest(table, a, b, rope=rope, level=level)
        for d in res["dataset"].values:
            r = res.sel(dataset=d)
            rows.append(_row(
                method=method, dataset=str(d), a=a, b=b, target="err", kind="bayesian",
                estimate=float(r["mean"]), lower=float(r["lower"]), upper=float(r["upper"]),
                p_better=float(r["p_better"]), p_equivalent=float(r["p_equivalent"]),
                p_worse=float(r["p_worse"]), flag=str(r["flag"].values),
            ))  # fmt: skip
        return rows
    x = fold_differences(table, a, b).values  # (dataset, repetition, fold)
    ratio = nb_ratio(table)
    # Differences equal up to the rounding of a − b have no variance (correlated_t's rule),
    # not one of 1e-34 that would give a p-value of 1e-48.
    equal = equal_up_to_rounding(*(_fold_losses(table, u) for u in (a, b)))
    for i, d in enumerate(table["dataset"].values):
        xd = x[i]
        if method == "nadeau_bengio":
            J = xd.size
            est, var, df = xd.mean(), np.var(xd, ddof=1) * (1 / J + ratio[i]), J - 1
        else:  # naive_folds: per run, the variance of the mean of its K fold means
            K = xd.shape[1]
            est = xd.mean(axis=1).mean()
            var, df = (xd.var(axis=1, ddof=1) / K).mean(), K - 1
        se, lower, upper, flag = normal_bounds(
            est, 0.0 if equal[i] else var, level=level, kind="t", df=df,
            bounds=difference_bounds(table),
        )  # fmt: skip
        with np.errstate(divide="ignore", invalid="ignore"):
            z = est / se
        p = 2 * stats.t.sf(abs(z), df) if se > 0 else np.nan
        rows.append(_row(
            method=method, dataset=str(d), a=a, b=b, target="err", kind="frequentist",
            estimate=float(est), lower=float(lower), upper=float(upper),
            p_value=float(p), alternative="two-sided", flag=str(flag),
        ))  # fmt: skip
    return rows


def _fold_losses(table, learner: str) -> np.ndarray:
    """Return a learner's fold losses, shape (dataset, J)."""
    loss = table["loss"].sel(learner=learner).values
    return loss.reshape(loss.shape[0], -1)


def _point_rows(points, a, b, method, rope, level, fit_kwargs, dataset) -> list[dict]:
    if method in ("naive_points", "bayle_within"):
        alternative = "less" if method == "bayle_within" else "two-sided"
        res = classical_paired(
            points[a], points[b], [method], level=level, alternative=alternative
        )
        r = res.isel(method_name=0)
        return [_row(
            method=method, dataset=dataset, a=a, b=b, target=str(r["target"].values), kind="frequentist",
            estimate=float(r["estimate"]), lower=float(r["lower"]), upper=float(r["upper"]),
            p_value=float(r["p_value"]), alternative=alternative, flag=str(r["flag"].values),
        )]  # fmt: skip
    from bayescv.bayes import paired_comparison as bayes_paired

    targets = ("expected_cv", "ose", "new_source")  # the summary rows, named as targets
    if np.array_equal(points[a]["loss"].values, points[b]["loss"].values):
        # No difference to model (bayes.paired_comparison refuses it): one flagged row, so
        # that the other methods' rows of the comparison still come back.
        return [_row(
            method=method, dataset=dataset, a=a, b=b, target="expected_cv", kind="bayesian",
            estimate=0.0, flag="no_disagreements",
        )]  # fmt: skip
    _, s = bayes_paired(points[a], points[b], rope=rope, level=level, **fit_kwargs)
    return [
        _row(
            method=method, dataset=dataset, a=a, b=b, target=target, kind="bayesian",
            estimate=float(s["mean"].sel(target=target)),
            lower=float(s["lower"].sel(target=target)),
            upper=float(s["upper"].sel(target=target)),
            p_better=float(s["p_better"].sel(target=target)),
            p_equivalent=float(s["p_equivalent"].sel(target=target)),
            p_worse=float(s["p_worse"].sel(target=target)),
            flag=str(s["flag"].sel(target=target).values),
        )
        for target in targets
        if target in s["target"].values
    ]  # fmt: skip


def _datasets_rho(table) -> np.ndarray | None:
    """ρ_i of the model over data sets: r_i / (1 + r_i), r_i = nb_ratio, when sizes are known.

    Then ρ_i / (1 − ρ_i) = r_i, the ratio of ``correlated_t`` and ``nadeau_bengio``; with
    sizes assumed equal, None (compare_datasets' default ρ_i = 1/K_i, baycomp's).
    """
    if table.attrs.get("sizes") != "known":
        return None
    ratio = nb_ratio(table)
    return ratio / (1.0 + ratio)


def _dataset_rows(table, a, b, rope, level, rho, fit_kwargs) -> list[dict]:
    from bayescv.bayes import compare_datasets

    diff = fold_differences(table, a, b)
    x = diff.values.reshape(diff.sizes["dataset"], -1)
    if equal_up_to_rounding(*(_fold_losses(table, u) for u in (a, b))).all():
        # Every fold difference equal within every data set: the model has no scale to fit
        # (compare_datasets refuses it). Flagged rows, so that the other methods' rows of
        # the comparison still come back.
        labels = [*map(str, table["dataset"].values), "new_dataset"]
        estimates = [*x[:, 0], np.nan]
        return [
            _row(
                method="hierarchical_datasets", dataset=d, a=a, b=b,
                target="new_dataset" if d == "new_dataset" else "err", kind="bayesian",
                estimate=float(e), flag="zero_variance",
            )
            for d, e in zip(labels, estimates, strict=True)
        ]  # fmt: skip
    res = compare_datasets(
        x, rope=rope, runs=table.sizes["repetition"], names=table["dataset"].values.tolist(),
        rho=rho, level=level, **fit_kwargs,
    )  # fmt: skip
    rows = []
    for d in res["dataset"].values:
        r = res.sel(dataset=d)
        rows.append(_row(
            method="hierarchical_datasets", dataset=str(d), a=a, b=b, target="err",
            kind="bayesian", estimate=float(r["delta_mean"]), lower=float(r["delta_lower"]),
            upper=float(r["delta_upper"]), p_better=float(r["p_better"]),
            p_equivalent=float(r["p_equivalent"]), p_worse=float(r["p_worse"]),
            flag="zero_variance" if str(d) in res.attrs.get("zero_variance_datasets", []) else "",
        ))  # fmt: skip
    # The new data set's row: estimate and interval of δ0, the mean difference over the
    # population of data sets; probabilities for δ of one new data set (baycomp's reading).
    rows.append(_row(
        method="hierarchical_datasets", dataset="new_dataset", a=a, b=b,
        target="new_dataset", kind="bayesian", estimate=float(res["delta0_mean"]),
        lower=float(res["delta0_lower"]), upper=float(res["delta0_upper"]),
        p_better=float(res["new_dataset_p_better"]),
        p_equivalent=float(res["new_dataset_p_equivalent"]),
        p_worse=float(res["new_dataset_p_worse"]),
    ))  # fmt: skip
    return rows


def compare_learners(
    data: Any,
    *,
    learners: Sequence[str] | None = None,
    pairs: Sequence[tuple[str, str]] | None = None,
    methods: Sequence[str] | str | None = None,
    rope: float = 0.0,
    level: float = 0.95,
    **fit_kwargs: Any,
) -> xr.Dataset:
    """Compare learners with every applicable test, one row per method and data set.

    Parameters
    ----------
    data : xarray.Dataset, mapping or sequence
        A fold-score table (:mod:`bayescv.fold_scores`: from ``cross_validate`` output, a long
        DataFrame, an array of fold scores), or per-point loss tables of the learners on the
        same splits, as ``{name: table}`` or a list (then named `learners` or A, B, …).
    learners : sequence of str, optional
        Names for a list of tables (refused with a fold-score table, which names its own).
    pairs : sequence of (str, str), optional
        Which pairs to compare (first minus second). Default: the first learner against each
        of the others.
    methods : str or sequence of str, optional
        Names from :data:`COMPARISON_METHODS`, or ``"all"`` (every method the input allows).
        Default :data:`DEFAULT_METHODS` (those needing per-point losses only when given them),
        plus ``hierarchical_datasets`` when the table has several data sets. Without the
        ``bayes`` extra, the default and ``"all"`` leave the MCMC methods out, with a warning
        and the attr ``methods_left_out`` (as a study's ``"all"`` runs the methods available);
        named, they raise an ``ImportError`` naming the extra. For pointwise
        elpd tables paired by ``blocks="pairs"`` (no folds), ``naive_points`` alone; for
        leave-one-source-out tables (``attrs["scheme"] == "source"``, of loss tables or of a
        fold table built with ``scheme="source"``), without ``correlated_t`` and
        ``nadeau_bengio``, whose fold correlation n_test/n_train is that of random K-fold CV
        (named, they run flagged ``"random_kfold_only"``; fold-level rows target ``expected_cv``).
    rope : float, default 0
        Half-width of the region of practical equivalence, in loss units (for scores: in
        score units, since a negated score is the loss).
    level : float, default 0.95
        Mass of the intervals.
    **fit_kwargs
        Passed to the MCMC methods (``random_state``, ``draws``, ...).

    Returns
    -------
    xarray.Dataset
        Dim ``row``, variables as in :data:`_COLUMNS`: ``method``, ``dataset`` (a data set's
        label, or ``"new_dataset"``), ``a`` and ``b`` (the pair;
        the difference is a − b), ``target`` (the estimand), ``kind`` (``"bayesian"`` or
        ``"frequentist"``), ``estimate``, ``lower``, ``upper`` (for the ``new_dataset`` row of
        ``hierarchical_datasets``: the population mean difference δ0, while its probabilities
        are for the difference on one new data set, as baycomp reports them), ``p_better`` (P(a's expected loss
        < b's − rope)), ``p_equivalent``, ``p_worse``, ``p_value``, ``alternative`` and
        ``flag`` (``"zero_variance"``: every fold difference equal, up to the rounding of
        a − b, and then no p-value; for
        ``hierarchical_datasets`` equal within every data set, where the model has no scale
        to fit and its rows carry no bounds or probabilities; ``"no_disagreements"``:
        the learners' losses equal at every point, where ``hierarchical_sources`` has nothing
        to fit and gives one row without bounds). ``.to_dataframe()`` gives a table. Attrs ``rope``, ``level``, ``metric``,
        ``greater_is_better`` (of the user's numbers), ``better`` (a sentence) and
        ``methods_left_out`` (``""``, or which MCMC methods a missing extra left out); with
        ``hierarchical_datasets``, ``hierarchical_datasets_rho`` (its ρ_i per data set:
        r_i / (1 + r_i), r_i the mean n_test/n_train of ``correlated_t``, when the fold
        sizes are known; else baycomp's 1/K) and ``hierarchical_datasets_rho_source``.

    Raises
    ------
    ValueError
        For unknown methods or learners, fewer than two learners, an empty or malformed
        `pairs`, a method the input cannot serve (a point-level method on a fold-score table,
        the model over data sets on one data set, a fold-level method on pointwise elpd
        paired by ``blocks="pairs"``), a negative rope.
    ImportError
        For an MCMC method named without the ``bayes`` extra.

    Examples
    --------
    >>> from bayescv.fold_scores import fold_table
    >>> t = fold_table([[0.81, 0.84, 0.80, 0.86, 0.83], [0.78, 0.80, 0.79, 0.81, 0.80]],
    ...                learners=["lr", "tree"], metric="accuracy")
    >>> out = compare_learners(t, rope=0.01)
    >>> out["method"].values.tolist()
    ['correlated_t', 'nadeau_bengio', 'naive_folds']
    >>> bool(out["p_better"].values[0] > 0.9)
    True
    """
    rope = check_rope(rope)
    check_level(level)
    table, points = as_inputs(data, learners)
    names = table["learner"].values.tolist()
    if len(names) < 2:
        raise ValueError(f"a comparison needs at least two learners; the table has {names}")
    pairs = checked_pairs(pairs, names)
    pair_blocks = points is not None and any(has_pair_blocks(t) for t in points.values())
    by_source = table.attrs.get("scheme") == "source" or (  # a fold table says it itself
        points is not None and any(t.attrs.get("scheme") == "source" for t in points.values())
    )
    chosen = _methods(methods, points is not None, table.sizes["dataset"], pair_blocks, by_source)
    left_out = ""
    mcmc = [m for m in chosen if m in _MCMC]
    if mcmc and methods is not None and methods != "all":  # named: the user asked for them
        require_extra(BAYES_MODULES, "bayes", what="bayescv.compare_learners")
    elif mcmc and (absent := missing_extra(BAYES_MODULES, "bayes")):  # as a study's "all"
        left_out = f"{' and '.join(mcmc)} left out because {absent}"
        warnings.warn(left_out, UserWarning, stacklevel=2)
        chosen = [m for m in chosen if m not in _MCMC]
    rho = _datasets_rho(table)  # of the model over data sets: one value for every pair
    rows: list[dict] = []
    for a, b in pairs:
        for method in chosen:
            need = COMPARISON_METHODS[method]
            if need == "folds":
                fold_rows = _fold_rows(table, a, b, method, rope, level)
                if by_source:  # blocks are held-out sources: the CV error with them fixed
                    for row in fold_rows:
                        row["target"] = "expected_cv"
                        if method in _RANDOM_KFOLD_ONLY:
                            row["flag"] = ",".join(
                                f for f in (row["flag"], "random_kfold_only") if f
                            )
                rows += fold_rows
            elif need == "points":
                rows += _point_rows(
                    points, a, b, method, rope, level, fit_kwargs, str(table["dataset"].values[0])
                )
            else:
                rows += _dataset_rows(table, a, b, rope, level, rho, fit_kwargs)
    cut_to_range(rows, difference_bounds(table))  # the MCMC rows' posterior quantiles
    data_vars = {}
    for col in _COLUMNS:
        values = [r[col] for r in rows]
        kind = str if isinstance(values[0], str) else float
        data_vars[col] = ("row", np.asarray(values, dtype=kind))
    greater = int(table.attrs.get("greater_is_better", 0))
    metric = table.attrs.get("metric", "loss")
    rho_attrs = {}
    if "hierarchical_datasets" in chosen:
        equal = np.full(table.sizes["dataset"], 1.0 / table.sizes["fold"])
        rho_attrs = {
            "hierarchical_datasets_rho": (equal if rho is None else rho).tolist(),
            "hierarchical_datasets_rho_source": "1/K" if rho is None else "n_test/n_train",
        }
    better = (
        "'better' means a lower expected loss; the "
        + ("scores" if metric == "score" else f"{metric} scores")
        + " were negated into losses"
        if greater
        else "'better' means a lower expected loss"
    )
    return xr.Dataset(
        data_vars,
        coords={"row": np.arange(len(rows))},
        attrs={
            "rope": rope, "level": float(level), "metric": metric, "greater_is_better": greater,
            "better": better, "difference": "a - b", "methods_left_out": left_out,
            **rho_attrs,
        },
    )  # fmt: skip
