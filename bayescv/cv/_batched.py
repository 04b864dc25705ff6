"""Batched fits: every training set of a CV run (or many runs) solved together in numpy.

Coverage studies, nested CV and bootstrap-replicated CV fit thousands of small linear models,
one Python call each; the arithmetic is a fraction of the cost. This module fits all the
training sets of a batch of folds at once, for the learners studies use most, and gives the
same solutions as scikit-learn:

* :class:`~sklearn.linear_model.LinearRegression` and :class:`~sklearn.linear_model.Ridge`
  (``solver="auto"``, scalar ``alpha``, ``positive=False``): each training set's normal
  equations from its weighted Gram matrix (a training set is a vector of row counts, so
  bootstrap copies count twice), centred by the training set's means so that the intercept
  is not penalised, as scikit-learn does, and solved in one batched call. The
  data are first shifted by their overall means, which keeps the centring well conditioned.
  LinearRegression's scikit-learn solution is the minimum-norm least-squares one; a training
  set whose Gram matrix is singular or has a condition number above :data:`MAX_CONDITION` is
  refitted by scikit-learn itself (the per-fit path), so no answer differs silently.
  Ridge without a scaler on K-fold-like training sets (every row in once or out, at most
  a third out, and no more rows out than coefficients) skips the per-fit Gram matrices:
  one inverse for all the rows, downdated for each training set's left-out rows by the
  Woodbury identity (:func:`~bayescv.cv._batched_algebra.ridge_by_woodbury`).
* binary :class:`~sklearn.linear_model.LogisticRegression` (L2 penalty, ``l1_ratio=0``,
  ``C`` > 0 including ``C=inf``, no ``class_weight``): batched Newton steps with step halving
  on scikit-learn's objective C Σᵢ logloss(yᵢ, xᵢᵀw + b) + ½‖w‖² (intercept not penalised;
  no penalty term at ``C=inf``), until the gradient is at rounding level or a Newton step
  changes no coefficient by more than 1e-8 of its size (about 5 steps at n = 100, p = 20;
  coefficients within about 1e-10 of scikit-learn's newton-cholesky at ``tol=1e-14``). A
  fit's Hessian is recomputed only while its steps are large (the first one, at the common
  start, is one Gram matrix downdated per fit). A training set that has not converged in
  40 steps or lacks one of the two classes is refitted by scikit-learn, which raises or
  warns as it always does. Without a penalty a separable or quasi-separable training set
  has no finite optimum, and collinear features leave a flat direction: those fits (all
  margins of one sign, a margin beyond 30, or a Hessian with a condition number above
  :data:`MAX_CONDITION`) also go to scikit-learn, which warns that it did not converge.

Each of the three may follow a plain :class:`~sklearn.preprocessing.StandardScaler` in a
two-step pipeline (the catalogue's ``ridge`` and ``logistic``): the scaler's mean and
standard deviation are those of each training set (bootstrap copies counted, a constant
column left unscaled as scikit-learn does), the model is fitted on the standardised features
and its coefficients are returned on the original scale (for logistic regression, the
penalty ½‖w‖² on the standardised scale is a per-fit diagonal penalty on the original one).
With ``fit_intercept=False`` after the scaler, least squares and ridge keep the centred
fit's coefficients and take the intercept −coef·mean (the targets are not centred); logistic
regression then goes to scikit-learn.

The Newton solution is the exact optimum; scikit-learn's default lbfgs stops at ``tol=1e-4``,
so its coefficients differ from the optimum by up to about that much. That is why logistic
regression is batched only when asked (``batched=True``), while least squares and ridge (whose
scikit-learn solvers are direct, equal to the batched ones to rounding) are batched by
default. Every batch is cut into chunks whose arrays stay under :data:`MEMORY_BUDGET` bytes.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy.special import expit
from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge

from bayescv.cv._batched_algebra import (
    gram,
    linear,
    logistic_hessian,
    ridge_by_woodbury,
    rowdot,
    training_gram,
)
from bayescv.cv._batched_models import fitted_model, parts, scaler_statistics

__all__ = ["MAX_CONDITION", "MEMORY_BUDGET", "batched_predictions", "batching_reason"]

#: Largest condition number of a training set's Gram matrix solved in batch; above it the
#: fit goes to scikit-learn (minimum-norm least squares).
MAX_CONDITION = 1e10
#: Bytes of arrays a batch may hold at once (``BAYESCV_BATCH_MEMORY`` overrides it).
MEMORY_BUDGET = int(os.environ.get("BAYESCV_BATCH_MEMORY", 256 * 2**20))
_NEWTON_MAX_ITER = 40
_CONTROLLER = None
_NEWTON_TOL = 1e-14


def batching_reason(
    estimator: Any, response_method: str, *, auto: bool, models: bool = False
) -> str:
    """Say why `estimator` cannot be fitted in batch, or return ``""`` when it can.

    Parameters
    ----------
    estimator : estimator
        The learner (its exact type counts: subclasses are not batched). A pipeline of a
        plain ``StandardScaler`` and one of the three learners is batched too.
    response_method : str
        ``"predict"`` or ``"predict_proba"``, what the loss reads.
    auto : bool
        The automatic choice: logistic regression is batched only on request (see the
        module docs).
    models : bool, default False
        Whether fitted models are asked for (:mod:`bayescv.cv._batched_models` builds them,
        for every learner but ``LinearRegression``).

    Returns
    -------
    str
        The reason, or ``""``.

    Raises
    ------
    sklearn.utils._param_validation.InvalidParameterError
        For a setting scikit-learn's ``fit`` refuses, with its message.
    """
    scaler, estimator = parts(estimator)
    if scaler is not None and not (scaler.with_mean and scaler.with_std):
        return "only a StandardScaler with with_mean=True and with_std=True is batched"
    kind = type(estimator)
    if kind not in (LinearRegression, Ridge, LogisticRegression):
        return f"{kind.__name__} is not one of LinearRegression, Ridge, LogisticRegression"
    for step in (scaler, estimator):  # scikit-learn's own check first, as in its fit
        getattr(step, "_validate_params", lambda: None)()  # refuses fit_intercept="no"
    if scaler is not None and kind is LogisticRegression and not estimator.fit_intercept:
        # Features centred by each training set's means and no intercept: a design per fit
        return "a StandardScaler before LogisticRegression(fit_intercept=False) is not batched"
    if models and kind is LinearRegression:
        return "fitted LinearRegression models (rank_, singular_) come from its own solver"
    p = estimator.get_params()
    if kind is LogisticRegression:
        if auto:
            return (
                "LogisticRegression is batched only with batched=True: the batched Newton "
                "solution is the exact optimum, scikit-learn's lbfgs stops at its tol"
            )
        if p["l1_ratio"] not in (0, 0.0, None) or p["penalty"] not in ("deprecated", "l2"):
            return "only the L2 penalty is batched"
        if p["class_weight"] is not None:
            return "class_weight is not batched"
        if p["solver"] == "liblinear" and p["fit_intercept"]:
            # liblinear penalises the intercept (scaled by intercept_scaling): another optimum
            return "liblinear penalises the intercept, which the batched solver does not"
        if not (p["C"] > 0):
            return f"C must be > 0, got {p['C']!r}"
        return ""
    if p["positive"]:
        return "positive=True is not batched"
    if response_method != "predict":
        return f"{kind.__name__} has no {response_method}"
    if kind is Ridge:
        if np.ndim(p["alpha"]) != 0 or p["solver"] != "auto":
            return "only a scalar alpha with solver='auto' is batched"
        if not (np.isfinite(p["alpha"]) and p["alpha"] >= 0):
            return f"alpha must be a finite number >= 0, got {p['alpha']!r}"
    return ""


def _counts(folds: Sequence[tuple[np.ndarray, np.ndarray]], n: int) -> np.ndarray:
    """Row counts of each training set, shape (B, n) (one bincount over all of them)."""
    trains = [np.asarray(tr, dtype=np.int64) for tr, _ in folds]
    fit = np.repeat(np.arange(len(trains)), [tr.size for tr in trains])
    flat = fit * n + np.concatenate(trains) if trains else np.empty(0, dtype=np.int64)
    return np.bincount(flat, minlength=len(trains) * n).reshape(len(trains), n).astype(float)


def _chunks(n_folds: int, n: int, p: int) -> list[slice]:
    """Slices of folds whose arrays fit the budget.

    Per fold: the weighted design of :func:`~bayescv.cv._batched_algebra.gram` (n × (p + 1)
    floats), a few length-n rows (weights, linear predictor, probabilities) and a few
    (p + 1)² matrices.
    """
    per_fold = 8 * (n * (p + 1) + 6 * n + 4 * (p + 1) ** 2)
    size = max(1, min(n_folds, MEMORY_BUDGET // max(per_fold, 1)))
    return [slice(i, min(i + size, n_folds)) for i in range(0, n_folds, size)]


def _least_squares(X, y, w, alpha, intercept, scale=None):
    """Coefficients (B, p) and intercepts (B,) of weighted ridge fits; NaN rows: not solved.

    With `scale` (B, p), the fit is on the standardised features x / scale (a StandardScaler
    before the model; the centring is the intercept's), returned on the original scale.
    Ridge on K-fold-like training sets (each row in or out, at most a third out and at
    most as many as there are coefficients) is solved from the inverse for all the rows
    (:func:`~bayescv.cv._batched_algebra.ridge_by_woodbury`); a fit failing its residual
    check there, and every other fit, by its own normal equations.
    """
    left_out = w == 0
    simple = scale is None and alpha > 0 and np.all(left_out | (w == 1))
    # Woodbury solves an m × m system per fit (m rows left out), the direct path a q × q
    # one: it pays while m is at most q.
    width = left_out.sum(axis=1).max(initial=0)
    if not simple or width > X.shape[1] + intercept or 3 * width > X.shape[0]:
        return _normal_equations(X, y, w, alpha, intercept, scale)
    p = X.shape[1]
    if intercept:  # an unpenalised column of ones: the training means' centring, exactly
        mx, my = X.mean(axis=0), y.mean()
        Xa, ya = np.hstack([X - mx, np.ones((X.shape[0], 1))]), y - my
    else:
        Xa, ya = X, y
    if np.sum(Xa[:, :p] ** 2) > MAX_CONDITION * alpha:  # possibly ill-conditioned: as below
        return _normal_equations(X, y, w, alpha, intercept, scale)
    beta, ok = ridge_by_woodbury(Xa, ya, left_out, np.r_[np.full(p, alpha), [0.0] * intercept])
    coef = beta[:, :p]
    b = beta[:, p] + my - np.einsum("bi,i->b", coef, mx) if intercept else np.zeros(len(w))
    if not ok.all():
        coef[~ok], b[~ok] = _normal_equations(X, y, w[~ok], alpha, intercept)
    return coef, b


def _normal_equations(X, y, w, alpha, intercept, scale=None):
    """:func:`_least_squares` by each training set's Gram matrix (any weights)."""
    n_w = w.sum(axis=1)
    if intercept:
        mx, my = X.mean(axis=0), y.mean()
        Xs, ys = X - mx, y - my
        sx = rowdot(w, Xs)
        sy = rowdot(w, ys[:, None])[:, 0]
        G = training_gram(w, Xs)
        G -= sx[:, :, None] * (sx / n_w[:, None])[:, None, :]
        c = rowdot(w, Xs * ys[:, None]) - sx * (sy / n_w)[:, None]
    else:
        G = training_gram(w, X)
        c = rowdot(w, X * y[:, None])
    p = X.shape[1]
    if scale is not None:
        G /= scale[:, :, None] * scale[:, None, :]
        c = c / scale
    A = G  # the normal equations' matrix, in place
    A[:, np.arange(p), np.arange(p)] += alpha
    coef = np.full((w.shape[0], p), np.nan)
    # With alpha > 0 every eigenvalue is at least alpha and at most the trace: when
    # trace/alpha is below the bound no eigen-decomposition is needed.
    trace = np.trace(A, axis1=1, axis2=2)
    ok = (trace <= MAX_CONDITION * alpha) if alpha > 0 else np.zeros(w.shape[0], dtype=bool)
    check = ~ok
    if check.any():
        eig = np.linalg.eigvalsh(A[check])
        ok[check] = (eig[:, 0] > 0) & (eig[:, -1] <= MAX_CONDITION * np.maximum(eig[:, 0], 1e-300))
    if ok.all():
        coef = np.linalg.solve(A, c[..., None])[..., 0]
    elif ok.any():
        coef[ok] = np.linalg.solve(A[ok], c[ok][..., None])[..., 0]
    if scale is not None:
        coef = coef / scale
    if intercept:
        b = (sy / n_w + my) - np.einsum("bi,bi->b", sx / n_w[:, None] + mx, coef)
    else:
        b = np.zeros(w.shape[0])
    return coef, b


def _logistic(X, t, w, C, intercept, *, warm=True, scale=None, steps=None):
    """Batched Newton on C Σ w·logloss + ½‖coef‖²; returns (coef, b, converged).

    Each fit leaves the batch once converged (gradient at rounding level, or a Newton step
    below 1e-8 of the coefficients) or failed (no decrease along the Newton direction with
    the gradient still large; its row is NaN and scikit-learn refits it). With `warm`, every
    fit starts from the fit to all rows (training sets overlap most of the data, so about
    half the Newton steps are saved); that start depends on the data only, never on which
    training sets share the batch. With `scale` (B, p) the fit is on the standardised
    features x / scale: on the original features that is the penalty ½ Σ scale²·coef².
    """
    B, p = w.shape[0], X.shape[1]
    Xa = np.hstack([X, np.ones((X.shape[0], 1))]) if intercept else X
    q = Xa.shape[1]
    penalty = np.ones((B, q))
    if scale is not None:
        penalty[:, :p] = scale**2
    if intercept:
        penalty[:, -1] = 0.0
    weight = 1.0 if np.isinf(C) else C
    reg = 0.0 if np.isinf(C) else 1.0

    def objective(z, beta, weights, pen):  # z: the linear predictors, linear(beta, Xa)
        # log(1 + e^z) as log1p(e^−|z|) + max(z, 0): stable, and twice as fast as logaddexp.
        softplus = np.log1p(np.exp(-np.abs(z))) + np.maximum(z, 0.0)
        loglik = np.einsum("bn,bn->b", weights, softplus - t * z)
        return weight * loglik + 0.5 * reg * np.einsum("bi,bi->b", beta**2, pen)

    beta = np.zeros((B, q))
    start_curvature = None  # p(1 − p) at the common start, when there is one
    if warm:
        ones = np.ones((1, X.shape[0]))
        scale0 = None if scale is None else scaler_statistics(X, ones)[2]
        coef0, b0, ok0 = _logistic(X, t, ones, C, intercept, warm=False, scale=scale0)
        if ok0[0]:
            beta[:] = np.append(coef0[0], b0[0]) if intercept else coef0[0]
            p0 = expit(Xa @ beta[0])
            start_curvature = p0 * (1.0 - p0)
    Z = linear(beta, Xa)  # kept up to date with beta: each step's trial reuses its own
    f = objective(Z, beta, w, penalty)
    hess = np.empty((B, q, q))
    # A fit's Hessian is recomputed only while its steps are large: once a step moves no
    # coefficient by more than 1e-3 (relative), the Hessian changes by about as little, and
    # the stored one still contracts the error by ~1e-3 per step.
    stale = np.ones(B, dtype=bool)
    at_start = np.full(B, start_curvature is not None)
    converged = np.zeros(B, dtype=bool)
    failed = np.zeros(B, dtype=bool)
    tol = _NEWTON_TOL * np.maximum(1.0, weight * w.sum(axis=1))
    for _ in range(_NEWTON_MAX_ITER):
        idx = np.flatnonzero(~(converged | failed))
        if idx.size == 0:
            break
        ba, wa = beta[idx], w[idx]
        prob = expit(Z[idx])
        pen = penalty[idx]
        g = weight * rowdot(wa * (prob - t), Xa) + reg * ba * pen
        gmax = np.abs(g).max(axis=1)
        done = gmax <= tol[idx]
        converged[idx[done]] = True
        keep = ~done
        idx, ba, wa, g, prob, gmax = idx[keep], ba[keep], wa[keep], g[keep], prob[keep], gmax[keep]
        pen = pen[keep]
        if idx.size == 0:
            break
        new = stale[idx]
        if new.any():
            hess[idx[new]] = logistic_hessian(
                Xa, wa[new], prob[new], pen[new], weight, reg,
                start_curvature if at_start[idx[new]].all() else None,
            )  # fmt: skip
        try:
            step = -np.linalg.solve(hess[idx], g[..., None])[..., 0]
        except np.linalg.LinAlgError:  # a singular Hessian in the batch: scikit-learn refits
            failed[idx] = True
            continue
        at_start[idx] = False
        if steps is not None:  # Newton steps of each fit (its n_iter_)
            steps[idx] += 1
        stale[idx] = np.abs(step).max(axis=1) > 1e-3 * (1.0 + np.abs(ba).max(axis=1))
        decrease = -np.einsum("bi,bi->b", g, step)  # twice the predicted decrease
        # Quadratic convergence: a step this small means the optimum to rounding. When the
        # predicted decrease is below what the objective resolves (1e-12 of it), the line
        # search cannot see progress: Newton's full step is taken, as it is then exact.
        small = np.abs(step).max(axis=1) <= 1e-8 * (1.0 + np.abs(ba).max(axis=1))
        unresolved = decrease <= 1e-12 * np.maximum(1.0, np.abs(f[idx]))
        beta[idx[small | unresolved]] += step[small | unresolved]
        converged[idx[small]] = True
        moved = unresolved & ~small
        Z[idx[moved]] = linear(beta[idx[moved]], Xa)
        f[idx[moved]] = objective(Z[idx[moved]], beta[idx[moved]], wa[moved], pen[moved])
        big = ~(small | unresolved)
        idx, ba, g, step, gmax = idx[big], ba[big], g[big], step[big], gmax[big]
        slope = -1e-4 * decrease[big]
        pending = np.arange(idx.size)
        size = 1.0
        for _ in range(30):  # step halving until the objective decreases (Armijo)
            if pending.size == 0:
                break
            trial = ba[pending] + size * step[pending]
            zt = linear(trial, Xa)
            ft = objective(zt, trial, w[idx[pending]], penalty[idx[pending]])
            good = (ft <= f[idx[pending]] + size * slope[pending]) & (ft < f[idx[pending]])
            beta[idx[pending[good]]] = trial[good]
            Z[idx[pending[good]]] = zt[good]
            f[idx[pending[good]]] = ft[good]
            pending = pending[~good]
            size /= 2
        # No decrease possible: at the optimum to rounding, or stuck (scikit-learn refits).
        at_optimum = gmax[pending] <= 1e3 * tol[idx[pending]]
        converged[idx[pending[at_optimum]]] = True
        failed[idx[pending[~at_optimum]]] = True
    beta[failed | ~converged] = np.nan
    if np.isinf(C):
        # Without a penalty a (quasi-)separable training set has no finite optimum: its
        # margins grow without bound. scikit-learn then stops at max_iter with a
        # ConvergenceWarning; leave those fits to it.
        margins = (2.0 * t - 1.0) * linear(np.nan_to_num(beta), Xa)
        trained = w > 0
        separated = np.where(trained, margins > 0, True).all(axis=1)
        saturated = np.where(trained, np.abs(margins) > 30.0, False).any(axis=1)
        converged &= ~(separated | saturated)
        # Collinear features leave a flat direction (a singular Hessian): no unique optimum.
        if converged.any():
            prob = expit(linear(beta[converged], Xa))
            eig = np.linalg.eigvalsh(gram(w[converged] * prob * (1.0 - prob), Xa))
            converged[converged] = eig[:, 0] > eig[:, -1] / MAX_CONDITION
    converged &= ~failed
    coef = beta[:, :p]
    b = beta[:, p] if intercept else np.zeros(B)
    return coef, b, converged


def batched_predictions(
    estimator: Any,
    X: np.ndarray,
    y: np.ndarray,
    folds: Sequence[tuple[np.ndarray, np.ndarray]],
    response_method: str,
    *,
    models: bool = False,
    feature_names: np.ndarray | None = None,
) -> list[tuple[Any, ...] | None]:
    """Fit every fold's training set in batch and predict its test rows.

    Parameters
    ----------
    estimator : estimator
        A learner for which :func:`batching_reason` returned ``""``.
    X : ndarray of shape (n, p)
        Features (numeric).
    y : ndarray of shape (n,)
        Targets.
    folds : sequence of (train, test) int arrays
        Training rows may repeat (bootstrap copies).
    response_method : {"predict", "predict_proba"}
        What to return for the test rows.
    models : bool, default False
        Also return each fold's fitted model (:func:`~bayescv.cv._batched_models.
        fitted_model`).
    feature_names : ndarray of str, optional
        The column names of a DataFrame `X` came from, for the models' ``feature_names_in_``.

    Returns
    -------
    list
        Per fold, ``(y_pred, classes)`` (``classes`` None for regressors), with the model
        as a third item if `models`, or None where the fold must be refitted by scikit-learn
        (an ill-conditioned least-squares system, a training set without both classes, no
        convergence).
    """
    global _CONTROLLER
    if _CONTROLLER is None:  # inspecting the loaded libraries costs milliseconds: once
        from threadpoolctl import ThreadpoolController

        _CONTROLLER = ThreadpoolController()
    with _CONTROLLER.limit(limits=1, user_api="blas"):
        return _batched_predictions(estimator, X, y, folds, response_method, models, feature_names)


def _batched_predictions(template, X, y, folds, response_method, models, feature_names):
    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    n, p = X.shape
    out: list[tuple[Any, ...] | None] = [None] * len(folds)
    scaler, estimator = parts(template)
    params = estimator.get_params()
    intercept = bool(params["fit_intercept"])
    for part in _chunks(len(folds), n, p):
        chunk = list(folds[part])
        w = _counts(chunk, n)
        stats = None if scaler is None else scaler_statistics(X, w)  # mean, var, scale
        scale = None if stats is None else stats[2]
        steps = np.zeros(len(chunk), dtype=int)
        if isinstance(estimator, LogisticRegression):
            classes = np.unique(y)
            if classes.size != 2:
                continue  # multiclass: scikit-learn's path
            t = (y == classes[1]).astype(float)
            positives = rowdot(w, t[:, None])[:, 0]
            present = (positives > 0) & (positives < w.sum(axis=1))  # both classes trained
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                coef, b, ok = _logistic(
                    X, t, w, float(params["C"]), intercept, scale=scale, steps=steps
                )
            ok &= present
        else:
            alpha = float(params["alpha"]) if isinstance(estimator, Ridge) else 0.0
            # After a scaler, fit_intercept=False keeps the centred fit's coefficients (centred
            # columns are orthogonal to the constant); its intercept is −coef·mean.
            centred = intercept or scaler is not None
            coef, b = _least_squares(X, y.astype(float), w, alpha, centred, scale)
            if not intercept and scaler is not None:
                b = -np.einsum("bi,bi->b", coef, stats[0])
            ok = np.isfinite(coef).all(axis=1)
        # The linear predictor of every row for every fit (one product per fit, as in
        # gram), then every fold's test rows in one gather and a slice per fold.
        Z = linear(np.where(ok[:, None], coef, 0.0), X) + np.where(ok, b, 0.0)[:, None]
        tests = [np.asarray(te, dtype=np.int64) for _, te in chunk]
        ends = np.cumsum([te.size for te in tests]).tolist()
        fold_of = np.repeat(np.arange(len(chunk)), np.diff(ends, prepend=0))
        z = Z[fold_of, np.concatenate(tests)] if tests else Z[:0, 0]
        if not isinstance(estimator, LogisticRegression):
            flat, classes = z, None
        elif response_method == "predict_proba":
            flat = np.empty((z.size, 2))
            flat[:, 1] = expit(z)
            flat[:, 0] = 1.0 - flat[:, 1]
        else:
            flat = np.where(z > 0, classes[1], classes[0])
        starts = [0, *ends[:-1]]
        pieces = [(flat[a:e], classes) for a, e in zip(starts, ends, strict=True)]
        if models:  # fits left to scikit-learn (not ok) get None below
            n_seen = w.sum(axis=1)
            pieces = [
                (*piece, fitted_model(
                    template, coef[j], float(b[j]), n_features=p, feature_names=feature_names,
                    classes=classes, n_iter=int(steps[j]),
                    scaler_stats=None if stats is None
                    else (stats[0][j], stats[1][j], stats[2][j], n_seen[j]),
                )) if ok[j] else piece
                for j, piece in enumerate(pieces)
            ]  # fmt: skip
        out[part] = [
            piece if good else None for piece, good in zip(pieces, ok.tolist(), strict=True)
        ]
    return out
