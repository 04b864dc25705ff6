"""Density-ratio (importance) weights for covariate shift, and their diagnostics.

Under covariate shift the risk on a target domain is the source risk weighted by
``w(x) = p_T(x) / p_S(x)``. :func:`density_ratio_weights` estimates `w` at every labelled
source point with a probabilistic classifier that tells source from target features;
:func:`effective_sample_size` is the diagnostic that says how much the weighting costs.

Nothing is adjusted silently: clipping and self-normalisation are options of the risk
functions (:mod:`bayescv.shift.risk`), recorded in their results and flagged.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import xarray as xr
from joblib import Parallel, delayed
from sklearn.base import clone
from sklearn.calibration import CalibratedClassifierCV
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils import _safe_indexing
from sklearn.utils.validation import _num_samples

from bayescv._names import did_you_mean
from bayescv._provenance import (
    child_seeds,
    created_now,
    named_seed,
    package_version,
    resolve_seed,
    seed_unset,
    seeded_splitter,
)

__all__ = [
    "CALIBRATIONS",
    "LowEffectiveSampleSizeWarning",
    "density_ratio_weights",
    "effective_sample_size",
]

#: Calibration of the domain classifier's probabilities (see :func:`density_ratio_weights`).
CALIBRATIONS = ("auto", "none", "sigmoid", "isotonic")

_CALIBRATION_FOLDS = 3


class LowEffectiveSampleSizeWarning(UserWarning):
    """The importance weights leave few effective points: the weighted risk is unreliable.

    Raised when the effective sample size ``(Σw)² / Σw²`` falls below a fraction of the
    number of points (``min_ess_fraction``, 0.1 by default). The estimate then rests on the
    few source points that look most like the target, its standard error is itself noisy,
    and the normal interval can badly under-cover.

    Examples
    --------
    One weight of 100 among 19 of 1 leaves (119)² / (100² + 19) ≈ 1.4 effective points of 20:

    >>> import warnings
    >>> from bayescv.shift import importance_weighted_risk
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always", LowEffectiveSampleSizeWarning)
    ...     ds = importance_weighted_risk([0.0, 1.0] * 10, [100.0] + [1.0] * 19)
    >>> caught[0].category.__name__, ds["flag"].values.tolist()
    ('LowEffectiveSampleSizeWarning', ['low_effective_sample_size'])
    """


def effective_sample_size(weights: Any, *, axis: int = -1) -> np.ndarray:
    """Kish's effective sample size of importance weights, ``(Σ w)² / Σ w²``.

    It equals the number of points for equal weights and 1 when one weight carries all the
    mass; it is unchanged by rescaling the weights. For weights with mean 1 it is about
    ``n / (1 + Var(w))``, so ``n / ESS - 1`` estimates the variance of the weights.

    Parameters
    ----------
    weights : array-like of shape (..., n_samples)
        Non-negative weights, not all zero along `axis`.
    axis : int, default -1
        Axis of the points.

    Returns
    -------
    ndarray
        The effective sample size (a 0-d array for 1-D input).

    Examples
    --------
    >>> float(effective_sample_size([1.0, 1.0, 1.0, 1.0]))
    4.0
    >>> float(effective_sample_size([4.0, 0.0, 0.0, 0.0]))
    1.0
    """
    w = np.asarray(weights, dtype=float)
    bad = ~np.isfinite(w) | (w < 0)
    if bad.any():
        first = int(np.flatnonzero(bad.ravel())[0])
        raise ValueError(
            f"weights must be finite and non-negative: {int(bad.sum())} of {w.size} are not "
            f"(NaN, infinite or negative), the first at flat position {first}: "
            f"{float(w.ravel()[first])}"
        )
    peak = w.max(axis=axis, keepdims=True) if w.size else np.zeros(1)
    if (peak == 0).any():
        raise ValueError("weights are all zero: no point has any weight")
    w = w / peak  # scale-free, and safe from underflow of tiny weights squared
    return w.sum(axis=axis) ** 2 / (w**2).sum(axis=axis)


def density_ratio_weights(
    X_source: Any,
    X_target: Any,
    *,
    classifier: Any = None,
    cv: int | Any = 5,
    calibration: str = "auto",
    random_state: int | np.random.Generator | None = None,
    n_jobs: int | None = None,
) -> xr.DataArray:
    """Estimate ``w(x) = p_T(x) / p_S(x)`` at every source point with a domain classifier.

    Source features get domain label 0, target features label 1, and a probabilistic
    classifier learns ``P(target | x)``. By Bayes' rule, with ``n_S`` source and ``n_T``
    target points in the classifier's training set,

    ``w(x) = (n_S / n_T) · P(target | x) / P(source | x)``,

    the factor ``n_S / n_T`` undoing the class prior of the training set. The weights are
    *cross-fitted*: the points are split into `cv` stratified folds and the weight of a
    source point comes from a classifier trained on the other folds, never on the point
    itself (each fold's own ``n_S / n_T`` is used). Labels ``y`` are never used.

    Parameters
    ----------
    X_source : array-like of shape (n_source, n_features)
        Features of the labelled source points (the rows the weights are for).
    X_target : array-like of shape (n_target, n_features)
        Features of the unlabelled target points.
    classifier : scikit-learn classifier, optional
        Any classifier with ``predict_proba``; cloned for every fold. Default:
        ``make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))``. Logistic
        regression is the natural choice: when the log density ratio is linear in the
        features (for example two Gaussians with a common covariance) it is the correct
        model and its maximum-likelihood probabilities are consistent.
    cv : int or splitter, default 5
        Cross-fitting folds: an int gives shuffled
        :class:`~sklearn.model_selection.StratifiedKFold` on the domain labels (seeded from
        `random_state`); a splitter is called as ``cv.split(X, domain)`` and its test sets
        must cover every source point exactly once. A shuffling splitter left unseeded
        (``random_state=None``) is seeded from `random_state` too, as in
        :func:`bayescv.cv.cross_val_losses`.
    calibration : {"auto", "none", "sigmoid", "isotonic"}, default "auto"
        Recalibrate the classifier's probabilities with
        :class:`~sklearn.calibration.CalibratedClassifierCV` (3 internal folds, inside each
        cross-fitting fold). ``"auto"`` means ``"none"`` for the default logistic
        regression and ``"sigmoid"`` for any other classifier, whose probabilities (trees,
        boosting, naive Bayes) are often badly calibrated; the choice made is recorded.
    random_state : None, int or numpy.random.Generator
        Seeds the folds; the resolved seed is recorded in the attrs. The classifier's
        ``random_state`` parameters left None are set from it (attribute ``classifier_seed``),
        those you set are kept.
    n_jobs : int, optional
        Parallel fits (joblib); the weights do not depend on it.

    Returns
    -------
    xarray.DataArray
        ``weight``, dim ``obs`` with coord ``index`` (the row in `X_source`); attrs
        ``method``, ``classifier``, ``calibration``, ``cv``, ``n_source``, ``n_target``,
        ``prior_ratio`` (``n_S / n_T`` of the whole sample), ``mean_weight`` (about 1 when
        the ratio is well estimated: ``E_S[w] = 1``), ``max_weight``, ``ess``,
        ``ess_fraction``, ``seed`` and provenance.

    Raises
    ------
    ValueError
        If the classifier has no ``predict_proba`` or, with ``calibration="none"``, sets
        ``class_weight`` (which would undo the domains' sizes a second time), the feature
        counts differ, the default classifier meets non-numeric features, either
        domain has fewer than `cv` points, a fold misses a domain, the folds do not cover
        every source point once, or the classifier gives a source point
        ``P(source | x) = 0`` (an infinite weight: no support overlap).

    See Also
    --------
    bayescv.shift.importance_weighted_risk, bayescv.shift.control_variate_risk

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> xs, xt = rng.normal(0, 1, (300, 1)), rng.normal(0.5, 1, (300, 1))
    >>> w = density_ratio_weights(xs, xt, random_state=0)
    >>> w.sizes["obs"], w.attrs["calibration"], round(w.attrs["mean_weight"], 1)
    (300, 'none', 1.0)
    """
    n_s, n_t = _num_samples(X_source), _num_samples(X_target)
    _check_features(X_source, X_target)
    if calibration not in CALIBRATIONS:
        raise ValueError(
            f"calibration must be one of {CALIBRATIONS}, got {calibration!r}"
            f"{did_you_mean(calibration, CALIBRATIONS)}"
        )
    if classifier is not None and not hasattr(classifier, "predict_proba"):
        raise ValueError(
            f"the domain classifier {type(classifier).__name__} has no predict_proba; pass a "
            "probabilistic classifier (for SVC set probability=True, or wrap it in "
            "CalibratedClassifierCV)"
        )
    if calibration == "auto":
        calibration = "none" if classifier is None else "sigmoid"
    if calibration == "none" and hasattr(classifier, "get_params"):
        # Recalibrated probabilities follow the training set's domain sizes again; raw ones
        # of a class-weighted classifier do not, and n_S/n_T would be undone twice.
        weighted = {
            k: v for k, v in classifier.get_params().items()
            if k.split("__")[-1] == "class_weight" and v is not None
        }  # fmt: skip
        if weighted:
            raise ValueError(
                f"the domain classifier sets {weighted} and calibration='none': class weights "
                "undo the domains' sizes, which density_ratio_weights undoes itself (the "
                "factor n_S/n_T), so the weights would be off by that factor; pass the "
                "classifier without class_weight, or calibrate its probabilities"
            )
    if classifier is None:
        _check_numeric(X_source, X_target)
    base = (
        make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
        if classifier is None
        else classifier
    )
    model = (
        base
        if calibration == "none"
        else CalibratedClassifierCV(base, method=calibration, cv=_CALIBRATION_FOLDS)
    )
    seed = resolve_seed(random_state)
    classifier_seed = named_seed(seed, "classifier")
    model, seeded = seed_unset(model, classifier_seed)
    X = _stack(X_source, X_target)
    domain = np.r_[np.zeros(n_s, dtype=np.int64), np.ones(n_t, dtype=np.int64)]
    folds = _folds(cv, X, domain, seed, n_s, n_t)

    jobs = (
        delayed(_fold_weights)(clone(model), X, domain, train, test[test < n_s])
        for train, test in folds
    )
    weights = np.empty(n_s)
    for rows, values in Parallel(n_jobs=n_jobs)(jobs):
        weights[rows] = values

    ess = float(effective_sample_size(weights))
    out = xr.DataArray(
        weights, dims=("obs",), coords={"index": ("obs", np.arange(n_s))}, name="weight"
    )
    out.attrs = {
        "long_name": "density ratio p_T(x) / p_S(x)",
        "method": "classifier",
        "classifier": repr(base),
        "calibration": calibration,
        "cv": len(folds) if isinstance(cv, int | np.integer) else repr(cv),
        "n_source": int(n_s),
        "n_target": int(n_t),
        "prior_ratio": n_s / n_t,
        "mean_weight": float(weights.mean()),
        "max_weight": float(weights.max()),
        "ess": ess,
        "ess_fraction": ess / n_s,
        "seed": seed,
        **({"classifier_seed": classifier_seed} if seeded else {}),
        "bayescv_version": package_version(),
        "created": created_now(),
    }
    return out


def _check_features(X_source: Any, X_target: Any) -> None:
    shapes = [np.shape(X) if not hasattr(X, "shape") else X.shape for X in (X_source, X_target)]
    if any(len(s) != 2 for s in shapes):
        raise ValueError(
            f"X_source and X_target must be 2-D (n_samples, n_features), got shapes {shapes}"
        )
    if shapes[0][1] != shapes[1][1]:
        raise ValueError(
            f"X_source has {shapes[0][1]} features and X_target {shapes[1][1]}; they must match"
        )


def _check_numeric(X_source: Any, X_target: Any) -> None:
    """Refuse features the default classifier cannot fit, naming the columns and the way out."""
    for X in (X_source, X_target):
        try:
            np.asarray(X, dtype=float)
        except (TypeError, ValueError):
            dtypes = X.dtypes.items() if isinstance(X, pd.DataFrame) else []
            bad = [str(c) for c, t in dtypes if not pd.api.types.is_numeric_dtype(t)]
            raise ValueError(
                "the default domain classifier (StandardScaler + LogisticRegression) needs "
                f"numeric features; not numeric: {', '.join(bad) or 'some values'}; pass "
                "classifier= a pipeline that encodes them (make_column_transformer("
                "(OneHotEncoder(handle_unknown='ignore'), columns), remainder=StandardScaler()) "
                "before LogisticRegression(max_iter=1000)), or your own weights="
            ) from None


def _stack(X_source: Any, X_target: Any) -> Any:
    if isinstance(X_source, pd.DataFrame) and isinstance(X_target, pd.DataFrame):
        source, target = list(X_source.columns), list(X_target.columns)
        if source != target:
            only_s = [c for c in source if c not in target]
            only_t = [c for c in target if c not in source]
            raise ValueError(
                "X_source and X_target have different columns: "
                + (
                    f"only in X_source {only_s}, only in X_target {only_t}"
                    if only_s or only_t
                    else f"the same ones in another order ({source} and {target}); pass "
                    "X_target[X_source.columns]"
                )
            )
        return pd.concat([X_source, X_target], ignore_index=True)
    return np.concatenate([np.asarray(X_source), np.asarray(X_target)])


def _folds(
    cv: Any, X: Any, domain: np.ndarray, seed: int, n_s: int, n_t: int
) -> list[tuple[np.ndarray, np.ndarray]]:
    if isinstance(cv, int | np.integer) and not isinstance(cv, bool):
        if cv < 2:
            raise ValueError(f"cv must be at least 2 folds for cross-fitting, got {cv}")
        if min(n_s, n_t) < cv:
            raise ValueError(
                f"{n_s} source and {n_t} target points: each domain needs at least cv={cv} "
                "points for cross-fitted weights"
            )
        splitter = StratifiedKFold(int(cv), shuffle=True, random_state=child_seeds(seed, 1)[0])
    elif hasattr(cv, "split") and not isinstance(cv, str):
        splitter = seeded_splitter(cv, child_seeds(seed, 1)[0])
    else:
        shown = repr(cv) if len(repr(cv)) <= 80 else f"a {type(cv).__name__}"  # not arrays
        why = (
            "; (train, test) pairs are not accepted, as the folds split the source and target "
            "rows stacked: pass a splitter"
            if hasattr(cv, "__iter__") and not isinstance(cv, str)
            else ""
        )
        raise ValueError(f"cv must be an int or a splitter, got {shown}{why}")
    folds = [
        (np.asarray(tr, dtype=np.int64), np.asarray(te, dtype=np.int64))
        for tr, te in splitter.split(X, domain)
    ]
    tested = np.concatenate([te for _, te in folds]) if folds else np.array([], dtype=np.int64)
    counts = np.bincount(tested[tested < n_s], minlength=n_s)
    if len(folds) < 2 or (counts != 1).any():
        raise ValueError(
            "the cross-fitting folds must have test sets that cover every source point exactly "
            "once (at least two folds)"
        )
    for k, (train, test) in enumerate(folds):
        if np.isin(test, train).any():
            raise ValueError(f"cross-fitting fold {k}: training and test sets overlap")
        if np.unique(domain[train]).size < 2:
            raise ValueError(f"cross-fitting fold {k}: the training set lacks one of the domains")
    return folds


def _fold_weights(
    model: Any, X: Any, domain: np.ndarray, train: np.ndarray, rows: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Fit on `train`, return the weights of source `rows` with the fold's prior correction."""
    model.fit(_safe_indexing(X, train), domain[train])
    if rows.size == 0:
        return rows, np.empty(0)
    proba = model.predict_proba(_safe_indexing(X, rows))
    classes = list(model.classes_)
    p_target, p_source = proba[:, classes.index(1)], proba[:, classes.index(0)]
    if (p_source <= 0).any():
        raise ValueError(
            f"the domain classifier gives {int((p_source <= 0).sum())} source point(s) "
            "P(source | x) = 0, an infinite weight: the domains barely overlap, or the "
            "classifier is overconfident (try calibration='sigmoid' or a smoother classifier)"
        )
    n_s_train = int((domain[train] == 0).sum())
    n_t_train = train.size - n_s_train
    return rows, (n_s_train / n_t_train) * p_target / p_source
