"""Cross-validation weighted toward an unlabelled target domain, and its built-in validation.

:func:`importance_weighted_cv` runs CV on labelled source data (:func:`bayescv.cross_val_losses`)
and weights the held-out losses by density ratios toward unlabelled target features, giving
intervals for the target risk. :func:`importance_weighted_cvs` does this for every source of
a multi-source data set in turn, treating the held-out source as the unlabelled target and
then comparing the intervals with its true loss: a check users can run on their own data
before trusting the weighting on a new domain.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr
from scipy import stats
from sklearn.base import clone
from sklearn.utils import _safe_indexing, indexable
from sklearn.utils.validation import _num_samples

from bayescv._extras import progress_bar
from bayescv._provenance import child_seeds, resolve_seed
from bayescv.cv import cross_val_losses
from bayescv.cv.loss_functions import Loss, get_loss
from bayescv.shift._common import (
    Estimates,
    Prepared,
    prepare,
    settings_attrs,
    to_dataset,
    warn_low_ess,
    warn_mean_weight,
)
from bayescv.shift.risk import METHODS, beta_attrs, check_request, estimates
from bayescv.shift.weights import density_ratio_weights

__all__ = ["importance_weighted_cv", "importance_weighted_cvs"]


@dataclass
class _Run:
    """One weighted CV: the loss table, the weights and the estimates."""

    table: xr.Dataset
    weights: Any
    prep: Prepared
    est: Estimates

    @property
    def source_risk(self) -> tuple[float, float]:
        """Unweighted CV mean of the source losses and its naive standard error.

        For repeated CV (a ``replicate`` dim) the mean of the repetitions' means and of their
        standard errors: each repetition re-partitions the same points, so pooling their
        losses as independent would make the standard error √R too small.
        """
        loss = np.atleast_2d(self.table["loss"].values)
        se = loss.std(axis=-1, ddof=1) / np.sqrt(loss.shape[-1])
        return float(loss.mean(axis=-1).mean()), float(se.mean())


def importance_weighted_cv(
    estimator: Any,
    X_source: Any,
    y_source: Any,
    X_target: Any = None,
    *,
    weights: Any = None,
    cv: int | Any | Iterable[tuple[Any, Any]] | None = None,
    groups: Any = None,
    loss: str | Loss | Any = None,
    classifier: Any = None,
    weight_cv: int | Any = 5,
    calibration: str = "auto",
    methods: Sequence[str] = METHODS,
    beta: str | float = "optimal",
    clip: float | None = None,
    clip_quantile: float | None = None,
    normalize: bool = False,
    level: float = 0.95,
    min_ess_fraction: float = 0.1,
    random_state: int | np.random.Generator | None = None,
    n_jobs: int | None = None,
    progress: bool = False,
) -> xr.Dataset:
    """CV on labelled source data, weighted toward an unlabelled target domain.

    Runs CV on the source (:func:`bayescv.cross_val_losses`), estimates the density ratio
    of every source point toward `X_target` (:func:`density_ratio_weights`) unless
    `weights` are given, and returns intervals for the target risk by importance weighting
    and by the control variate (:func:`target_risk_intervals`).

    The target is the risk on the target domain of the CV fold models (each trained on
    ``(K - 1) / K`` of the source data), the target-domain analogue of what plain CV
    estimates. It assumes covariate shift (``p(y | x)`` the same in both domains) and that
    the target's features lie where the source has data (support overlap).

    Parameters
    ----------
    estimator : scikit-learn estimator
        The model to evaluate; cloned for every fit.
    X_source : array-like of shape (n_source, n_features)
        Labelled source features.
    y_source : array-like of shape (n_source,)
        Source labels.
    X_target : array-like of shape (n_target, n_features), optional
        Unlabelled target features; required unless `weights` is given.
    weights : array-like of shape (n_source,), optional
        User-supplied density ratios for the source rows (then `X_target` must be None).
    cv : int, splitter or iterable, optional
        Source CV folds, as in :func:`bayescv.cross_val_losses` (default: shuffled 10-fold).
        Repeated CV (a repeated splitter, or a list of runs) gives one interval per
        repetition, along a leading ``replicate`` dim, as :func:`target_risk_intervals`
        gives for a loss table with replicates; the repetitions re-partition the same
        points, so they are not independent estimates.
    groups : array-like of shape (n_source,), optional
        Group labels of the source rows for a group splitter given as `cv` (such as
        :class:`~sklearn.model_selection.GroupKFold`), as in :func:`bayescv.cross_val_losses`.
        For intervals per held-out source, see :func:`importance_weighted_cvs`.
    loss : str, Loss or callable, optional
        As in :func:`bayescv.cross_val_losses`.
    classifier, weight_cv, calibration
        Domain classifier, cross-fitting folds and calibration for the weights, as
        `classifier`, `cv` and `calibration` of :func:`density_ratio_weights`.
    methods, beta, clip, clip_quantile, normalize, level, min_ess_fraction
        As in :func:`target_risk_intervals`.
    random_state : None, int or numpy.random.Generator
        Seeds the CV folds and the weights' folds (independent child seeds); the resolved
        seed is recorded.
    n_jobs : int, optional
        Parallel fits; the result does not depend on it.
    progress : bool, default False
        Progress bar over the CV fits.

    Returns
    -------
    xarray.Dataset
        The interval Dataset of :func:`target_risk_intervals` (methods ``"iw"``,
        ``"iw_control_variate"``, target ``"target_risk"``, diagnostics ``ess``, ``beta``,
        ...). Further attrs: ``estimator``, ``cv``, ``loss_name``, ``seed``, ``weights``
        (``"estimated"`` or ``"given"``), the weights' own attrs as ``weights_*``,
        ``source_risk`` and ``source_risk_se`` (the unweighted CV mean and its naive
        standard error, for comparison: it estimates the *source* risk; for repeated CV,
        their means over the repetitions) and, with both methods, ``variance_ratio``
        (estimated ``Var(R_β) / Var(R_W)``, averaged over repetitions). Estimates and
        bounds are kept inside the loss's range (``loss_range`` attr: [0, 1] for
        ``"zero_one"``), flagged ``"truncated_to_range"`` for a bound and
        ``"estimate_outside_range"`` for an estimate moved onto it (a warning sign: for the
        control variate it means the control variate failed); see
        :func:`importance_weighted_risk`.

    Raises
    ------
    ValueError
        If both or neither of `X_target` and `weights` are given, the weights do not match
        the source rows (a pandas Series of weights must have `X_source`'s index), `groups`
        comes without a `cv` splitter, or as the functions it calls.

    Examples
    --------
    >>> from sklearn.linear_model import LinearRegression
    >>> rng = np.random.default_rng(0)
    >>> xs, xt = rng.normal(0, 1, (300, 1)), rng.normal(1, 1, (200, 1))
    >>> ys = xs[:, 0] ** 2 + rng.normal(0, 0.5, 300)  # a line misfits the curve
    >>> ds = importance_weighted_cv(LinearRegression(), xs, ys, xt, cv=5, random_state=0)
    >>> ds["method_name"].values.tolist(), ds.attrs["weights"]
    (['iw', 'iw_control_variate'], 'estimated')
    """
    if (X_target is None) == (weights is None):
        raise ValueError(
            "give exactly one of X_target (to estimate the weights) and weights (user-supplied)"
        )
    if groups is not None and cv is None:
        raise ValueError(
            "groups are used by a group splitter: pass cv=GroupKFold(n_splits) (or another "
            "splitter that takes groups); for intervals per held-out source use "
            "importance_weighted_cvs"
        )
    X_source, y_source = indexable(X_source, y_source)
    methods = check_request(methods, beta, level)
    seed = resolve_seed(random_state)
    run = _weighted_cv(
        estimator, X_source, y_source, X_target, weights, cv=cv, groups=groups, loss=loss,
        classifier=classifier, weight_cv=weight_cv, calibration=calibration, methods=methods,
        beta=beta, clip=clip, clip_quantile=clip_quantile, normalize=normalize,
        min_ess_fraction=min_ess_fraction, seed=seed, n_jobs=n_jobs, progress=progress,
    )  # fmt: skip
    dims = run.prep.dims
    warn_low_ess(
        run.prep.ess, run.prep.n, run.prep.min_ess_fraction, where="replicates" if dims else ""
    )
    risk, risk_se = run.source_risk
    attrs: dict[str, Any] = {
        "estimator": repr(estimator),
        "cv": run.table.attrs["cv"],
        "loss_name": run.table.attrs["loss_name"],
        "weights": "given" if X_target is None else "estimated",
        "source_risk": risk,
        "source_risk_se": risk_se,
        **settings_attrs(run.prep),
        **beta_attrs(methods, beta),
        **run.prep.weight_attrs,
    }
    if list(methods) == list(METHODS):
        iw, cv_var = run.est.variance.mean(axis=0)  # mean over repetitions of repeated CV
        attrs["variance_ratio"] = float(cv_var / iw) if iw > 0 else float("nan")
    ds = to_dataset(
        run.est, level=level, dims=dims, coords=run.prep.coords, attrs=attrs,
        bounds=run.prep.bounds,
    )  # fmt: skip
    ds.attrs["seed"] = seed
    return ds


def importance_weighted_cvs(
    estimator: Any,
    X: Any,
    y: Any,
    groups: Any,
    *,
    cv: int | Any | None = None,
    loss: str | Loss | Any = None,
    classifier: Any = None,
    weight_cv: int | Any = 5,
    calibration: str = "auto",
    methods: Sequence[str] = METHODS,
    beta: str | float = "optimal",
    clip: float | None = None,
    clip_quantile: float | None = None,
    normalize: bool = False,
    level: float = 0.95,
    min_ess_fraction: float = 0.1,
    random_state: int | np.random.Generator | None = None,
    n_jobs: int | None = None,
    progress: bool = False,
) -> xr.Dataset:
    """Check importance-weighted CV on each source held out as an unlabelled target.

    For every source ``g``: the other sources are the labelled source domain and the
    features of ``g`` the unlabelled target; :func:`importance_weighted_cv` gives intervals
    for the target risk without using ``g``'s labels. Then the estimator is fit on all the
    other sources and scored on ``g``'s labels: the true held-out loss. Whether the
    intervals cover it, source by source, shows whether covariate-shift weighting works on
    these data (and whether the shift between sources is covariate shift at all).

    Parameters
    ----------
    estimator : scikit-learn estimator
        The model to evaluate; cloned for every fit.
    X : array-like of shape (n_samples, n_features)
        Features of all sources.
    y : array-like of shape (n_samples,)
        Labels.
    groups : array-like of shape (n_samples,)
        Source of each point; at least two sources.
    cv : int or splitter, optional
        CV over the pooled remaining sources, for each held-out source (default: shuffled
        10-fold; an int gives shuffled K-fold). A single run: repeated CV is refused.
    loss, classifier, weight_cv, calibration, methods, beta, clip, clip_quantile, normalize
        As in :func:`importance_weighted_cv`.
    level, min_ess_fraction
        As in :func:`importance_weighted_cv`; one warning lists the held-out sources whose
        effective sample size is low.
    random_state : None, int or numpy.random.Generator
        Seeds everything (an independent child seed per held-out source); recorded.
    n_jobs : int, optional
        Parallel fits within each held-out source; the result does not depend on it.
    progress : bool, default False
        Progress bar over the held-out sources.

    Returns
    -------
    xarray.Dataset
        The interval Dataset with leading dim ``source`` (the held-out source) and dim
        ``method_name`` (kept inside the loss's range as in :func:`importance_weighted_cv`),
        with the per-interval diagnostics (``ess``, ``n_points``, ``beta``, ...),
        and per source ``true_risk`` (mean loss on the held-out source of the model fit on
        all the others) with ``true_risk_se`` (its own sampling error over the held-out
        points), ``source_risk`` and ``source_risk_se`` (the unweighted CV mean over the
        other sources: what ignoring the shift would report), ``n_target``; and ``covered``
        (source, method): whether the interval contains ``true_risk``. Two caveats when
        reading ``covered``: the CV intervals are for models trained on ``(K - 1) / K`` of
        the other sources, slightly less data than the model behind ``true_risk``; and
        ``true_risk`` is itself an estimate, so with few held-out points a miss can come
        from its noise. ``agrees`` (source, method) allows for it: whether
        ``|estimate - true_risk| ≤ z · sqrt(se² + true_risk_se²)``, the two being
        independent estimates of the same target risk (z the normal quantile of `level`).

    Raises
    ------
    ValueError
        With fewer than two sources, missing source labels, a repeated `cv`, or as
        :func:`importance_weighted_cv` (the message then names the held-out source).

    Examples
    --------
    >>> from sklearn.linear_model import LinearRegression
    >>> rng = np.random.default_rng(0)
    >>> groups = np.repeat(["a", "b", "c"], 150)
    >>> x = rng.normal(np.repeat([-0.5, 0.0, 0.5], 150), 1.0)[:, None]
    >>> y = x[:, 0] ** 2 + rng.normal(0, 0.5, 450)
    >>> ds = importance_weighted_cvs(LinearRegression(), x, y, groups, cv=5, random_state=0)
    >>> ds["covered"].dims, ds.sizes["source"]
    (('source', 'method_name'), 3)
    """
    X, y, groups = indexable(X, y, groups)
    if groups is None:
        raise ValueError("importance_weighted_cvs needs the source of every point (groups)")
    methods = check_request(methods, beta, level)
    missing = int(pd.isna(np.asarray(groups, dtype=object)).sum())
    if missing:  # np.unique would make NaN a source with no points
        raise ValueError(f"groups has {missing} missing label(s) (NaN or None)")
    groups = np.asarray(groups)
    labels = np.unique(groups)
    if labels.size < 2:
        raise ValueError(f"need at least two sources, got {labels.size}")
    # The problem's classes fix the Brier formula for every held-out source, as the other
    # sources alone may lack a class (Loss.for_targets).
    loss_fn = get_loss(loss, estimator).for_targets(y)
    seed = resolve_seed(random_state)
    runs, truths, truth_ses, n_target = [], [], [], []
    for label, child in progress_bar(
        list(zip(labels, child_seeds(seed, labels.size), strict=True)),
        desc="held-out sources",
        unit="source",
        disable=not progress,
    ):
        target = np.flatnonzero(groups == label)
        source = np.flatnonzero(groups != label)
        X_s, y_s = _safe_indexing(X, source), _safe_indexing(y, source)
        X_t, y_t = _safe_indexing(X, target), _safe_indexing(y, target)
        try:
            run = _weighted_cv(
                estimator, X_s, y_s, X_t, None, cv=cv, loss=loss_fn, classifier=classifier,
                weight_cv=weight_cv, calibration=calibration, methods=methods, beta=beta,
                clip=clip, clip_quantile=clip_quantile, normalize=normalize,
                min_ess_fraction=min_ess_fraction, seed=child, n_jobs=n_jobs, progress=False,
                warn=False,
            )  # fmt: skip
        except ValueError as error:  # say which held-out source the numbers are about
            raise ValueError(
                f"with source {np.asarray(label).item()!r} held out as the target "
                f"({target.size} point(s); {source.size} in the other sources): {error}"
            ) from error
        if run.prep.dims:
            raise ValueError(
                "importance_weighted_cvs needs a single-run cv (an int, or a splitter that "
                f"partitions the data once), got the repeated {run.table.attrs['cv']}"
            )
        runs.append(run)
        model = clone(estimator).fit(X_s, y_s)
        y_pred = getattr(model, loss_fn.response_method)(X_t)
        held_out = loss_fn(y_t, y_pred, getattr(model, "classes_", None))
        truths.append(float(held_out.mean()))
        truth_ses.append(float(held_out.std(ddof=1) / np.sqrt(held_out.size)))
        n_target.append(held_out.size)

    est = Estimates.stack([run.est for run in runs])
    warn_low_ess(est.ess, est.n_points, float(min_ess_fraction), where="held-out sources")
    off = np.concatenate([run.prep.mean_weight_not_1 for run in runs])
    if off.any():  # one warning, naming the held-out sources
        names = ", ".join(repr(np.asarray(label).item()) for label in labels[off])
        warn_mean_weight(est.mean_weight[off][0], f"with held-out source(s) {names}")
    first = runs[0]
    ds = to_dataset(
        est,
        level=level,
        dims=("source",),
        coords={"source": labels},
        attrs={
            "estimator": repr(estimator),
            "cv": first.table.attrs["cv"],
            "loss_name": first.table.attrs["loss_name"],
            "weights": "estimated",
            "weights_classifier": first.weights.attrs["classifier"],
            "weights_calibration": first.weights.attrs["calibration"],
            "weights_cv": first.weights.attrs["cv"],
            **settings_attrs(first.prep),
            **beta_attrs(methods, beta),
        },
        bounds=first.prep.bounds,
    )
    ds.attrs["seed"] = seed
    risks = np.array([run.source_risk for run in runs])
    ds["true_risk"] = ("source", np.array(truths))
    ds["true_risk"].attrs["long_name"] = "mean loss on the held-out source (model fit on the rest)"
    ds["true_risk_se"] = ("source", np.array(truth_ses))
    ds["true_risk_se"].attrs["long_name"] = "standard error of true_risk over the held-out points"
    ds["source_risk"] = ("source", risks[:, 0])
    ds["source_risk"].attrs["long_name"] = "unweighted CV mean loss over the other sources"
    ds["source_risk_se"] = ("source", risks[:, 1])
    ds["n_target"] = ("source", np.array(n_target))
    ds["covered"] = (ds["lower"] <= ds["true_risk"]) & (ds["true_risk"] <= ds["upper"])
    ds["covered"].attrs["long_name"] = "the interval contains true_risk"
    z = stats.norm.ppf(0.5 + float(level) / 2)
    combined = np.sqrt(ds["se"] ** 2 + ds["true_risk_se"] ** 2)
    ds["agrees"] = np.abs(ds["estimate"] - ds["true_risk"]) <= z * combined
    ds["agrees"].attrs["long_name"] = (
        "estimate and true_risk agree within z · sqrt(se² + true_risk_se²)"
    )
    return ds


def _weighted_cv(
    estimator: Any, X_source: Any, y_source: Any, X_target: Any, weights: Any, *,
    cv: Any, loss: Any, classifier: Any, weight_cv: Any, calibration: str, groups: Any = None,
    methods: list[str], beta: str | float, clip: float | None, clip_quantile: float | None,
    normalize: bool, min_ess_fraction: float, seed: int, n_jobs: int | None, progress: bool,
    warn: bool = True,
) -> _Run:  # fmt: skip
    """CV losses on the source, weights toward the target, estimates.

    Warns about unnormalised-looking weights unless `warn` is False; never about the ESS.
    """
    cv_seed, weight_seed = child_seeds(seed, 2)
    n_source = _num_samples(X_source)
    if weights is None:
        weights = density_ratio_weights(
            X_source, X_target, classifier=classifier, cv=weight_cv, calibration=calibration,
            random_state=weight_seed, n_jobs=n_jobs,
        )  # fmt: skip
    elif np.shape(weights) != (n_source,):
        raise ValueError(
            f"mismatched lengths: {n_source} source points but weights of shape "
            f"{np.shape(weights)}"
        )
    elif (
        isinstance(weights, pd.Series)
        and hasattr(X_source, "index")
        and not weights.index.equals(X_source.index)
    ):
        raise ValueError(
            "weights is a pandas Series whose index differs from X_source's: weights are "
            "taken by position, row for row; pass weights.reindex(X_source.index) to "
            "match them by label, or weights.to_numpy() if the order is right"
        )
    if isinstance(weights, pd.Series):  # aligned with X_source's rows (checked): positions
        weights = weights.to_numpy()
    min_points = 3 if "iw_control_variate" in methods and beta == "optimal" else 2
    # Check the weights before the (expensive) CV fits; warn once, below, with the losses.
    prepare(
        np.zeros(n_source), weights if not isinstance(weights, xr.DataArray) else weights.values,
        clip, clip_quantile, normalize, min_ess_fraction, min_points, warn=False,
    )  # fmt: skip
    table = cross_val_losses(
        estimator, X_source, y_source, cv=cv, groups=groups, loss=loss, random_state=cv_seed,
        n_jobs=n_jobs, progress=progress,
    )  # fmt: skip
    prep = prepare(
        table, weights, clip, clip_quantile, normalize, min_ess_fraction, min_points, warn=warn
    )
    return _Run(table, weights, prep, estimates(prep, methods, beta))
