"""All closed-form variance estimates of a loss table, and the intervals built on them.

:func:`variance_estimates` evaluates every estimator of :mod:`bayescv.classical.estimators` in one
pass over the block statistics; :func:`cv_intervals` turns the chosen ones into the
package's interval Dataset (:mod:`bayescv.intervals`), together with the Nadeau–Bengio
corrected interval for (repeated) K-fold CV and the bootstrap interval of bootstrap-replicated
CV.

What each interval targets (``target`` coordinate of the result):

* CVR tables (``scheme="random"``): θ_1…θ_5, the naive and Nadeau–Bengio intervals target
  ``err``, the expected error of the learner over training sets (Bengio & Grandvalet 2004);
* CVS tables (``scheme="source"``): θ^ω, θ^γ, θ_A, θ_B, the naive and bootstrap intervals
  target ``expected_cv``, the CV error expected with the sources held fixed (Geras & Sutton
  2013, §6); none of them covers the error on a *new* source (``ose``), which adds the
  between-source heterogeneity: use the Bayesian model for that;
* Bayle et al.'s (2020) intervals target ``kfold_test_error``, the mean conditional error of the
  K models actually fitted.

θ_1…θ_5 and the Nadeau–Bengio interval (:data:`RANDOM_KFOLD_ONLY`) assume a random
partition of exchangeable points (Grandvalet & Bengio 2006; Nadeau & Bengio 2003): on a
source table they are neither in the defaults nor in ``"all"``, and when named explicitly
their rows are computed but flagged ``"random_kfold_only"``.

θ^ω is not a default for source tables (it stays available by name): its bias,
−Σ_k ω_k/K minus a multiple of the spread of the source means μ_k (Table 1 of Geras &
Sutton 2013), pulls it below zero, so it gives no interval on most data sets: 100 of 100 of
``MultiSourceLinear`` and 77 of 100 of ``MultiSourceLogistic`` (their default learners).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields

import numpy as np
import xarray as xr

from bayescv._bounds import truncate_to_range
from bayescv._defaults import DEFAULT_N_BOOTSTRAP
from bayescv.classical._block_stats import (
    BlockStats,
    block_stats,
    size_range,
    unequal_sizes_note,
)
from bayescv.classical._inputs import bootstrap_mu, check_table
from bayescv.classical._kinds import few_blocks_note, pair_table_methods, resolve_kind
from bayescv.classical._methods import (
    INTERVAL_METHODS,
    RANDOM_KFOLD_ONLY,
    default_methods,
    interval_target,
    method_names,
)
from bayescv.classical.estimators import ESTIMATORS
from bayescv.intervals import (
    check_level,
    interval_dataset,
    log_bounds,
    normal_bounds,
    score_bounds,
)
from bayescv.losses import effective_range
from bayescv.tails import add_tail_flags, pooled_tail_shape, warn_heavy_tail

__all__ = [
    "DEFAULT_N_BOOTSTRAP",
    "INTERVAL_METHODS",
    "RANDOM_KFOLD_ONLY",
    "bootstrap_interval",
    "cv_intervals",
    "default_methods",
    "interval_target",
    "variance_estimates",
]


def _evaluate(stats: BlockStats, names: Sequence[str]) -> tuple[np.ndarray, list[str]]:
    """θ̂ for every name (R, n_names); NaN with a note where sizes must be equal."""
    values = np.full((stats.N.size, len(names)), np.nan)
    notes = [""] * len(names)
    equal = bool(stats.equal_sizes.all())
    for j, name in enumerate(names):
        spec = ESTIMATORS[name]
        if spec.equal_sizes and not equal:
            notes[j] = f"{name} needs equal block sizes; the blocks hold {size_range(stats)}"
            continue
        values[:, j] = spec.func(stats)
    return values, notes


def _constant_attr(values: np.ndarray) -> dict:
    return {} if values.size == 0 or np.any(values != values[0]) else {"value": values[0]}


def variance_estimates(losses: xr.Dataset) -> xr.Dataset:
    """Every closed-form estimate of θ = Var(μ̂) for a loss table, in one pass.

    Parameters
    ----------
    losses : xarray.Dataset
        A loss table (or its block moments), with or without ``replicate``.

    Returns
    -------
    xarray.Dataset
        ``theta`` along ``estimator`` (leading ``replicate`` when the table has one; NaN
        where an estimator needs equal block sizes and they differ), ``bias_formula``,
        ``assumption`` and ``note`` (why a value is NaN) along ``estimator``, and
        ``mu_hat`` (the CV estimate). Attrs ``scheme``, and ``K``, ``N``, ``M`` when they
        are the same in every replicate (``M`` only for equal sizes).

    Examples
    --------
    >>> from bayescv.losses import from_arrays
    >>> table = from_arrays([0.1, 0.4, 0.3, 0.2, 0.9, 0.5], [0, 0, 1, 1, 2, 2])
    >>> ds = variance_estimates(table)
    >>> bool(np.isclose(ds["theta"].sel(estimator="theta_B"),
    ...                 2 * ds["theta"].sel(estimator="theta_A")))
    True
    """
    check_table(losses, "losses")
    stats = block_stats(losses)
    names = list(ESTIMATORS)
    values, notes = _evaluate(stats, names)
    lead = ("replicate",) if stats.replicated else ()
    pick = (lambda a: a) if stats.replicated else (lambda a: a[0])
    attrs = {"scheme": losses.attrs.get("scheme", "unknown")}
    for key, array in {"K": stats.K, "N": stats.N, "M": stats.M}.items():
        constant = _constant_attr(array)
        if constant and np.isfinite(constant["value"]):
            attrs[key] = int(constant["value"])
    ds = xr.Dataset(
        {
            "theta": ((*lead, "estimator"), pick(values)),
            "mu_hat": (lead, pick(stats.mu_hat)),
            "bias_formula": ("estimator", [ESTIMATORS[n].bias for n in names]),
            "assumption": ("estimator", [ESTIMATORS[n].assumption for n in names]),
            "note": ("estimator", notes),
        },
        coords={"estimator": names},
        attrs=attrs,
    )
    if stats.replicated:
        ds = ds.assign_coords(replicate=losses["replicate"].values)
    return ds


def _nadeau_bengio(stats: BlockStats) -> tuple[float, float, float]:
    """Estimate, corrected variance and df from the J = R·K fold means of all runs.

    Var ≈ (1/J + n_test/n_train) S², S² the sample variance of the fold means (Nadeau &
    Bengio 2003, corrected resampled t; Bouckaert & Frank 2004 for repeated K-fold).
    """
    fold_means = stats.means[stats.present]
    sizes = stats.n[stats.present]
    n_train = np.repeat(stats.N, stats.present.sum(axis=1)) - sizes
    J = fold_means.size
    ratio = float(np.mean(sizes / n_train))
    variance = (1 / J + ratio) * np.var(fold_means, ddof=1)
    return float(fold_means.mean()), float(variance), float(J - 1)


def _df(method: str, stats: BlockStats) -> np.ndarray:
    if method in {"naive_points", "bayle_all_pairs"}:
        return stats.N - 1
    if method == "bayle_within":
        return stats.N - stats.K
    return stats.K - 1


def cv_intervals(
    losses: xr.Dataset,
    methods: Sequence[str] | str | None = None,
    *,
    level: float = 0.95,
    kind: str = "auto",
    bootstrap: xr.Dataset | None = None,
) -> xr.Dataset:
    """Intervals for the CV error from closed-form variance estimates.

    Each interval is μ̂ ± q·sqrt(θ̂), q the t (or normal) quantile, except two centred on
    a mean of fold means, to match their variance: ``naive_folds`` on m, the unweighted mean
    of the K block means (its variance Σ_k (ē_k − m)²/(K(K−1)) is that of m), and
    ``nadeau_bengio`` on the mean of the J fold means; both equal μ̂ for equal block sizes.
    A negative θ̂ (θ_2, θ_5 and θ^ω can be negative) is never clipped: that interval is NaN
    and flagged ``"negative_variance"`` (see :func:`bayescv.intervals.normal_bounds` for the
    other flags). On a source table, the random-K-fold methods (:data:`RANDOM_KFOLD_ONLY`)
    are not offered by default or by ``"all"``, and rows of those named explicitly are
    flagged ``"random_kfold_only"``: their assumptions do not hold there.

    Parameters
    ----------
    losses : xarray.Dataset
        A loss table (a DataFrame must first go through :func:`bayescv.from_frame`, which
        names its columns and scheme). Without a ``replicate`` dim: one CV run. With
        ``replicate_kind="independent"`` (simulated data sets): one interval per replicate.
        With ``replicate_kind="repeat"`` (repeated CV of one data set): the estimate is the
        mean of the runs' μ̂ and θ̂ the mean of the runs' θ̂, so the interval is for a
        single run's variance (conservative for the average); ``nadeau_bengio`` uses all
        R·K folds (its estimate is the mean of the J fold means, which equals μ̂ for equal
        block sizes). A ``"bootstrap"`` table is refused: pass it as `bootstrap`.
    methods : str or sequence of str, optional
        Names from :data:`INTERVAL_METHODS` (and ``"bootstrap"``), or ``"all"`` (every
        method that applies to the table's scheme: without :data:`RANDOM_KFOLD_ONLY` for
        source tables); default :func:`default_methods` for the table's scheme (plus
        ``"bootstrap"`` when `bootstrap` is given). A table whose blocks are pairs of points,
        ``from_elpd(..., blocks="pairs")``, gets ``naive_points`` alone (no block-level method).
    level : float, default 0.95
        Nominal coverage.
    kind : {"auto", "score", "normal", "t", "log"}, default "auto"
        ``"score"``: for 0-1 losses, the Wilson-type score interval on each method's
        effective sample size p̂(1 − p̂)/θ̂ (:func:`bayescv.intervals.score_bounds`), inside
        [0, 1] by construction (and truncated, with the flag, to a narrower declared loss
        range) and calibrated at error rates near 0 or 1; a table without
        errors (or with only errors) gets Wilson's interval for N independent points,
        flagged ``"no_errors"`` (``"all_errors"``). ``"normal"``, ``"t"``: μ̂ ± q·sqrt(θ̂)
        with normal or t quantiles (with ``"t"`` the degrees of freedom are N−1
        (naive_points, bayle_all_pairs), N−K (bayle_within), B−1 (bootstrap) and K−1 for the
        block-level estimators), truncated to the table's loss range
        (:func:`bayescv.losses.loss_range`) with the flag ``"truncated_to_range"``.
        ``"log"``: for losses that are at least 0, the transformed-scale interval
        μ̂ · exp(± z sqrt(θ̂)/μ̂) (:func:`bayescv.intervals.log_bounds`), above 0 by
        construction and asymmetric like the mean of heavy-tailed losses; with
        ``theta_B_weighted`` (``theta_B`` for equal sizes) it is the interval the docs
        recommend when the losses' Pareto k̂ exceeds 0.5 (``docs/estimators.md``, "When
        normal intervals fail"). ``"auto"``: ``"score"`` for a table whose losses are all 0
        or 1, else ``"t"`` (with K = 5 blocks the normal quantile's intervals of
        ``naive_folds`` and θ_A covered 78–88 % where t's covered 90–96 %,
        ``benchmarks/results/small_k_quantile.md``; for large N and K the two agree).
        ``nadeau_bengio`` uses t with J−1 df, J the number of folds over all runs (it is
        defined as a t procedure), under ``"score"`` as the quantile of its score interval.
        The kind used is in ``attrs["kind"]``.
    bootstrap : xarray.Dataset, optional
        A bootstrap-replicated loss table of the same data (:func:`bayescv.bootstrap_cv_losses`)
        for the ``bootstrap`` method (see :func:`bootstrap_interval`).

    Returns
    -------
    xarray.Dataset
        The interval Dataset of :mod:`bayescv.intervals`, with variables ``theta`` (θ̂) and
        ``df`` (degrees of freedom used; inf for normal quantiles) and ``target`` per
        method (see the module docs). When blocks differ in size, the methods that need
        equal sizes (θ_1…θ_5, θ^ω, θ^γ, θ_A, θ_B; kept so that the rows are the same for
        every table) are NaN, flagged ``"unequal_block_sizes"``, and ``attrs["note"]`` says
        in one line which they are, the sizes, and which methods allow unequal sizes.

    Examples
    --------
    >>> from bayescv.losses import from_arrays
    >>> table = from_arrays([0.1, 0.4, 0.3, 0.2, 0.9, 0.5], [0, 0, 1, 1, 2, 2])
    >>> ci = cv_intervals(table, ["naive_points", "theta_3"], level=0.9)
    >>> ci["target"].values.tolist(), bool((ci["lower"] < ci["upper"]).all())
    (['err', 'err'], True)
    """
    check_level(level)
    check_table(losses, "losses")
    replicate_kind = losses.attrs.get("replicate_kind") if "replicate" in losses.dims else None
    if replicate_kind == "bootstrap":
        raise ValueError(
            "this table holds bootstrap replicates of one data set; pass the observed "
            "table as `losses` and the bootstrap table as `bootstrap=`"
        )
    scheme = losses.attrs.get("scheme", "random")
    methods = pair_table_methods(losses, methods, bootstrap is not None)
    names = method_names(methods, scheme, bootstrap is not None)
    stats = block_stats(losses)
    per_run = [m for m in names if m in ESTIMATORS]
    theta, notes = _evaluate(stats, per_run)
    estimate = np.repeat(stats.mu_hat[:, None], len(names), axis=1)
    variance = np.full_like(estimate, np.nan)
    df = np.full_like(estimate, np.nan)
    flags = np.full(estimate.shape, "", dtype=object)
    for j, name in enumerate(names):
        if name in ESTIMATORS:
            i = per_run.index(name)
            variance[:, j], df[:, j] = theta[:, i], _df(name, stats)
            flags[:, j] = "unequal_block_sizes" if notes[i] else ""
            if name == "naive_folds":
                estimate[:, j] = stats.m
        elif name == "nadeau_bengio":
            rows = (
                [_slice(stats, r) for r in range(stats.N.size)]
                if replicate_kind != "repeat"
                else [stats]
            )
            for r, part in enumerate(rows):
                e, v, dof = _nadeau_bengio(part)
                target_rows = slice(None) if replicate_kind == "repeat" else r
                estimate[target_rows, j], variance[target_rows, j], df[target_rows, j] = e, v, dof
    if replicate_kind == "repeat":
        estimate, variance, df = (a.mean(axis=0, keepdims=True) for a in (estimate, variance, df))
        flags = flags[:1]
    if "bootstrap" in names:
        j = names.index("bootstrap")
        boot = bootstrap_mu(losses, bootstrap)
        variance[:, j], df[:, j] = np.var(boot, ddof=1), boot.size - 1
    kind = resolve_kind(kind, losses)
    if kind == "log":
        se, lower, upper, bound_flags = log_bounds(
            estimate, variance, level=level, bounds=effective_range(losses)
        )
        df = np.full_like(df, np.inf)  # log_bounds uses the normal quantile z for every row
    elif kind == "score":
        n_points = np.repeat(stats.N[:, None], len(names), axis=1)
        if replicate_kind == "repeat":
            n_points = n_points[:1]
        # Nadeau–Bengio is a t procedure; df = inf gives the normal quantile for the rest.
        df = np.where(np.array(names) == "nadeau_bengio", df, np.inf)
        se, lower, upper, bound_flags = score_bounds(
            estimate, variance, n_points, level=level, df=df
        )
        # At p̂ = 0 or 1 score_bounds uses the normal quantile, Nadeau–Bengio's row too.
        df = np.where((estimate == 0) | (estimate == 1), np.inf, df)
        # Inside [0, 1] by construction; a narrower declared range still holds them, flagged.
        lower, upper, bound_flags = truncate_to_range(
            lower, upper, bound_flags, effective_range(losses)
        )
    else:
        if kind == "normal":
            df = np.where(np.array(names) == "nadeau_bengio", df, np.inf)
        se, lower, upper, bound_flags = normal_bounds(
            estimate, variance, level=level, kind="t", df=df, bounds=effective_range(losses)
        )
    flags = np.where(flags != "", flags, bound_flags)
    if scheme == "source":
        misplaced = np.isin(names, RANDOM_KFOLD_ONLY)
        flags = np.where(misplaced, _join("random_kfold_only", flags), flags)
    replicated = replicate_kind == "independent"
    pick = (lambda a: a) if replicated else (lambda a: a[0])
    ds = interval_dataset(
        names,
        estimate=pick(estimate), lower=pick(lower), upper=pick(upper), se=pick(se),
        flag=pick(flags), level=level, kind=kind,
        target=[interval_target(m, scheme) for m in names],
        dims=("replicate",) if replicated else (),
        coords={"replicate": losses["replicate"].values} if replicated else None,
        attrs={"scheme": scheme, **({"replicate_kind": replicate_kind} if replicate_kind else {})},
    )  # fmt: skip
    unequal = [name for name, note in zip(per_run, notes, strict=True) if note]
    how = "cv_intervals(losses, ['theta_A_weighted', 'theta_B_weighted'])"
    said = [
        unequal_sizes_note(unequal, stats, how) if unequal else "",
        few_blocks_note(kind, int(np.min(stats.K)), names, scheme),
    ]
    if any(said):
        ds.attrs["note"] = "\n".join(line for line in said if line)
    dims = ("replicate", "method_name") if replicated else ("method_name",)
    ds = ds.assign(theta=(dims, pick(variance)), df=(dims, pick(df)))
    if "loss" not in losses.data_vars:  # block moments: no tail to look at
        return ds
    khat = pooled_tail_shape(losses)["khat_pooled"].values
    if kind == "log":
        advice = (
            "Of the log-scale intervals asked for, the one measured to hold up there is "
            "theta_B_weighted's (theta_B for equal block sizes; docs, 'When normal intervals "
            "fail')"
            if {"theta_B", "theta_B_weighted"} & set(names)
            else "None of the log-scale intervals asked for was measured to hold up there; "
            "theta_B_weighted's was: cv_intervals(losses, ['theta_B_weighted'], kind='log') "
            "(theta_B for equal block sizes; docs, 'When normal intervals fail')"
        )
        warn_heavy_tail(khat, stacklevel=3, advice=advice)
    else:
        warn_heavy_tail(khat, stacklevel=3)
    return add_tail_flags(ds, khat)


def _join(first: str, flags: np.ndarray) -> np.ndarray:
    """``first`` before each non-empty flag, comma-separated."""
    return np.array([f"{first},{f}" if f else first for f in np.ravel(flags)]).reshape(
        np.shape(flags)
    )


def _slice(stats: BlockStats, r: int) -> BlockStats:
    """Return the statistics of replicate r alone."""
    per_replicate = {
        f.name: getattr(stats, f.name)[r : r + 1]
        for f in fields(stats)
        if f.name not in ("labels", "replicated")
    }
    return BlockStats(**per_replicate, labels=stats.labels, replicated=False)


def bootstrap_interval(
    losses: xr.Dataset, bootstrap: xr.Dataset, *, level: float = 0.95, kind: str = "auto"
) -> xr.Dataset:
    """Bootstrap interval: μ̂ of the observed run ± q · sd of μ̂ over bootstrap CV runs.

    The variance of μ̂ is estimated by its variance (ddof 1) across the B bootstrap-replicated
    CV runs of :func:`bayescv.bootstrap_cv_losses` (points resampled within sources, each run
    refitting all folds: cost B × K fits; B = :data:`DEFAULT_N_BOOTSTRAP` = 50 by default
    there). With sources fixed, it targets ``expected_cv`` (CVS) or ``err`` (CVR).

    Parameters
    ----------
    losses : xarray.Dataset
        The observed loss table (one run).
    bootstrap : xarray.Dataset
        The bootstrap table (``replicate_kind="bootstrap"``, at least 2 replicates).
    level : float, default 0.95
        Nominal coverage.
    kind : {"auto", "score", "normal", "t", "log"}, default "auto"
        As :func:`cv_intervals`: the score interval for 0-1 losses, else the t quantile with
        B − 1 degrees of freedom (``"normal"``: the normal quantile; ``"log"``: the normal
        interval of log μ̂, for losses of at least 0).

    Returns
    -------
    xarray.Dataset
        The interval Dataset with the single method ``bootstrap``.

    Examples
    --------
    The standard error is the standard deviation (ddof 1) of the bootstrap runs' mean losses:

    >>> from sklearn.datasets import make_regression
    >>> from sklearn.linear_model import Ridge
    >>> from bayescv import bootstrap_cv_losses, cross_val_losses
    >>> X, y = make_regression(n_samples=60, n_features=3, noise=1.0, random_state=0)
    >>> losses = cross_val_losses(Ridge(), X, y, cv=5, random_state=0)
    >>> boot = bootstrap_cv_losses(Ridge(), X, y, cv=5, n_bootstrap=5, random_state=0)
    >>> ci = bootstrap_interval(losses, boot).sel(method_name="bootstrap")
    >>> bool(np.isclose(ci["se"], boot["loss"].mean("obs").std(ddof=1))), str(ci["target"].values)
    (True, 'err')
    """
    return cv_intervals(losses, ["bootstrap"], level=level, kind=kind, bootstrap=bootstrap)
