"""Fitted scikit-learn models carrying the batched engine's solutions.

When fitted models are asked for (``return_estimator``, or a study whose truths evaluate
the fold models on new points), the batched engine returns, for each fold, a clone of the
learner with the attributes its own ``fit`` would have set: for
:class:`~sklearn.linear_model.Ridge` ``coef_``, ``intercept_``, ``n_iter_`` (None) and
``solver_`` (``"cholesky"``, the direct solver that ``solver="auto"`` picks for dense data);
for binary :class:`~sklearn.linear_model.LogisticRegression` ``coef_`` (1, p), ``intercept_``
(1,), ``classes_`` and ``n_iter_`` (the Newton steps taken); before either, a
:class:`~sklearn.preprocessing.StandardScaler`'s ``mean_``, ``var_``, ``scale_`` and
``n_samples_seen_`` of the training rows; ``n_features_in_`` and, for DataFrames,
``feature_names_in_`` where scikit-learn sets them. Their ``predict`` and ``predict_proba``
are scikit-learn's own, on the batched solution. :class:`~sklearn.linear_model.
LinearRegression` is not built this way (its ``rank_`` and ``singular_`` come from its own
least-squares solver): with models asked for it takes the per-fit path.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

from bayescv.cv._batched_algebra import rowdot

__all__ = ["fitted_model", "parts", "scaler_statistics"]


def parts(estimator: Any) -> tuple[Any, Any]:
    """``(scaler, model)`` of a two-step ``StandardScaler`` pipeline, else ``(None, estimator)``."""
    if type(estimator) is Pipeline and len(estimator.steps) == 2:
        first, last = (step for _, step in estimator.steps)
        if type(first) is StandardScaler:
            return first, last
    return None, estimator


def scaler_statistics(X: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, ...]:
    """StandardScaler's ``mean_``, ``var_`` and ``scale_`` on each training set, (B, p) each.

    Row counts `w` (B, n) weight the rows (bootstrap copies count twice). A feature constant
    on a training set (a one-hot column of the held-out source, a rare value left out) gets
    variance 0 and scale 1, as scikit-learn gives it: its variance is taken as 0 below the
    rounding error of its computation here, n·eps·mean(Xs²), or below scikit-learn's own bound
    (``_is_constant_feature``: n·eps·var + (n·mean·eps)²), which a feature constant up to
    rounding (1000 plus 1-ulp jitter) meets. Scaling such a column by its residue (~1e-9)
    blew its coefficient up and changed the predictions.
    """
    eps = np.finfo(float).eps
    n_w = w.sum(axis=1)[:, None]
    centre = X.mean(axis=0)  # shifted once: little cancellation in the variance
    Xs = X - centre
    shift = rowdot(w, Xs) / n_w
    mean_sq = rowdot(w, Xs**2) / n_w
    var = np.maximum(mean_sq - shift**2, 0.0)
    mean = shift + centre
    constant = (var <= n_w * eps * mean_sq) | (var <= n_w * eps * var + (n_w * mean * eps) ** 2)
    var = np.where(constant, 0.0, var)
    return mean, var, np.where(constant, 1.0, np.sqrt(var))


def fitted_model(
    template: Any,
    coef: np.ndarray,
    intercept: float,
    *,
    n_features: int,
    feature_names: np.ndarray | None = None,
    classes: np.ndarray | None = None,
    n_iter: int = 0,
    scaler_stats: tuple[np.ndarray, np.ndarray, np.ndarray, float] | None = None,
) -> Any:
    """Clone `template` and give it one training set's batched solution as fitted attributes.

    Parameters
    ----------
    template : estimator
        ``Ridge`` or binary ``LogisticRegression``, alone or after a ``StandardScaler``.
    coef : ndarray of shape (p,)
        Coefficients on the original features.
    intercept : float
        Intercept on the original features.
    n_features : int
        Number of features (``n_features_in_``).
    feature_names : ndarray of str, optional
        The DataFrame's column names (``feature_names_in_`` of the first step).
    classes : ndarray of shape (2,), optional
        The classes, for logistic regression.
    n_iter : int, default 0
        Newton steps taken, for logistic regression.
    scaler_stats : tuple, optional
        The scaler's ``(mean_, var_, scale_, n_samples_seen_)`` on the training set.

    Returns
    -------
    estimator
        The fitted clone.
    """
    est = clone(template)
    scaler, model = parts(est)
    first = model if scaler is None else scaler
    if scaler is not None:
        mean, var, scale, n_seen = scaler_stats
        scaler.mean_, scaler.var_, scaler.scale_ = mean, var, scale
        scaler.n_samples_seen_ = np.int64(n_seen)
        scaler.n_features_in_ = n_features
        # The model sees standardised features: z = (x − mean) / scale.
        intercept = intercept + float(coef @ mean)
        coef = coef * scale
    if feature_names is not None:
        first.feature_names_in_ = feature_names
    model.n_features_in_ = n_features
    if isinstance(model, LogisticRegression):
        model.classes_ = classes
        model.coef_ = coef[None, :].copy()
        model.intercept_ = np.array([intercept if model.fit_intercept else 0.0])
        model.n_iter_ = np.array([n_iter], dtype=np.int32)
    else:  # Ridge
        model.coef_ = coef.copy()
        model.intercept_ = float(intercept) if model.fit_intercept else 0.0
        model.n_iter_ = None
        model.solver_ = "cholesky"
    return est
