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
* binary :class:`~sklearn.linear_model.LogisticRegression` (L2 penalty, ``l1_ratio=0``, finite
  ``C`` > 0, no ``class_weight``; ``C=inf`` goes to scikit-learn, see below): batched Newton steps with
  step halving on scikit-learn's objective C Σᵢ logloss(yᵢ, xᵢᵀw + b) + ½‖w‖² (intercept not
  penalised), until a Newton step changes no coefficient by more than 1e-9 of its size. A
  training set that has not converged in 40 steps (Newton needs fewer than 15 here) or that lacks one of the two classes is
  refitted by scikit-learn, which raises or warns as it always does. Without a penalty
  (``C=inf``) the optimum is ill-determined (flat directions; none at all for separable
  data): measured, Newton and scikit-learn's solvers stopped up to 1e-3 apart in the
  coefficients at equal log-likelihood, so those fits stay with scikit-learn.

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
from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge

__all__ = ["MAX_CONDITION", "MEMORY_BUDGET", "batched_predictions", "batching_reason"]

#: Largest condition number of a training set's Gram matrix solved in batch; above it the
#: fit goes to scikit-learn (minimum-norm least squares).
MAX_CONDITION = 1e10
#: Bytes of arrays a batch may hold at once (``BAYESCV_BATCH_MEMORY`` overrides it).
MEMORY_BUDGET = int(os.environ.get("BAYESCV_BATCH_MEMORY", 256 * 2**20))
_NEWTON_MAX_ITER = 40
_CONTROLLER = None
_NEWTON_TOL = 1e-14


def batching_reason(estimator: Any, response_method: str, *, auto: bool) -> str:
    """Say why `estimator` cannot be fitted in batch, or return ``""`` when it can.

    Parameters
    ----------
    estimator : estimator
        The learner (its exact type counts: subclasses and pipelines are not batched).
    response_method : str
        ``"predict"`` or ``"predict_proba"``, what the loss reads.
    auto : bool
        The automatic choice: logistic regression is batched only on request (see the
        module docs).

    Returns
    -------
    str
        The reason, or ``""``.
    """
    kind = type(estimator)
    if kind not in (LinearRegression, Ridge, LogisticRegression):
        return f"{kind.__name__} is not one of LinearRegression, Ridge, LogisticRegression"
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
        if not (p["C"] > 0):
            return f"C must be > 0, got {p['C']!r}"
        if np.isinf(p["C"]):
            return (
                "C=inf is not batched: without a penalty the optimum is flat in some "
                "directions, and Newton and scikit-learn stop at points up to 1e-3 apart"
            )
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
    """Row counts of each training set, shape (B, n)."""
    return np.stack([np.bincount(np.asarray(tr), minlength=n) for tr, _ in folds]).astype(float)


def _chunks(n_folds: int, n: int, p: int) -> list[slice]:
    """Slices of folds whose arrays (B × (n + p²) floats, a few copies) fit the budget."""
    per_fold = 8 * 4 * (n + (p + 1) ** 2 + n * (p + 1) // max(n_folds, 1))
    size = max(1, min(n_folds, MEMORY_BUDGET // max(per_fold, 1)))
    return [slice(i, min(i + size, n_folds)) for i in range(0, n_folds, size)]


def _gram(weights: np.ndarray, A: np.ndarray) -> np.ndarray:
    """Weighted Gram matrices Aᵀ diag(w_b) A for each row w_b of `weights`.

    One matrix product per training set, of the same shape whatever the batch, run with a
    single BLAS thread (:func:`batched_predictions` sets it): each fit's rounding depends
    neither on which folds share its batch nor on ``n_jobs``.
    """
    return np.matmul(A.T[None, :, :] * weights[:, None, :], A)


def _rowdot(weights: np.ndarray, A: np.ndarray) -> np.ndarray:
    """Σ_n w_bn A_n· for each b (``np.einsum`` without BLAS: rounding independent of B)."""
    return np.einsum("bn,ni->bi", weights, A)


def _least_squares(X, y, w, alpha, intercept):
    """Coefficients (B, p) and intercepts (B,) of weighted ridge fits; NaN rows: not solved."""
    n_w = w.sum(axis=1)
    if intercept:
        mx, my = X.mean(axis=0), y.mean()
        Xs, ys = X - mx, y - my
        sx = _rowdot(w, Xs)
        sy = _rowdot(w, ys[:, None])[:, 0]
        G = _gram(w, Xs)
        G -= np.einsum("bi,bj->bij", sx, sx) / n_w[:, None, None]
        c = _rowdot(w, Xs * ys[:, None]) - sx * (sy / n_w)[:, None]
    else:
        G = _gram(w, X)
        c = _rowdot(w, X * y[:, None])
    p = X.shape[1]
    A = G + alpha * np.eye(p)
    coef = np.full((w.shape[0], p), np.nan)
    # With alpha > 0 every eigenvalue is at least alpha and at most the trace: when
    # trace/alpha is below the bound no eigen-decomposition is needed.
    trace = np.trace(A, axis1=1, axis2=2)
    ok = (trace <= MAX_CONDITION * alpha) if alpha > 0 else np.zeros(w.shape[0], dtype=bool)
    check = ~ok
    if check.any():
        eig = np.linalg.eigvalsh(A[check])
        ok[check] = (eig[:, 0] > 0) & (eig[:, -1] <= MAX_CONDITION * np.maximum(eig[:, 0], 1e-300))
    if ok.any():
        coef[ok] = np.linalg.solve(A[ok], c[ok][..., None])[..., 0]
    if intercept:
        b = (sy / n_w + my) - np.einsum("bi,bi->b", sx / n_w[:, None] + mx, coef)
    else:
        b = np.zeros(w.shape[0])
    return coef, b


def _log1pexp(z):
    return np.logaddexp(0.0, z)


def _logistic(X, t, w, C, intercept):
    """Batched Newton on C Σ w·logloss + ½‖coef‖²; returns (coef, b, converged)."""
    B, p = w.shape[0], X.shape[1]
    Xa = np.hstack([X, np.ones((X.shape[0], 1))]) if intercept else X
    q = Xa.shape[1]
    penalty = np.ones(q)
    if intercept:
        penalty[-1] = 0.0
    scale = 1.0 if np.isinf(C) else C
    reg = 0.0 if np.isinf(C) else 1.0

    def objective(beta):
        z = np.einsum("bi,ni->bn", beta, Xa)
        return scale * np.einsum("bn,bn->b", w, _log1pexp(z) - t * z) + 0.5 * reg * (
            (beta**2) @ penalty
        )

    beta = np.zeros((B, q))
    f = objective(beta)
    converged = np.zeros(B, dtype=bool)
    tol = _NEWTON_TOL * np.maximum(1.0, scale * w.sum(axis=1))
    for _ in range(_NEWTON_MAX_ITER):
        active = ~converged
        if not active.any():
            break
        ba, wa = beta[active], w[active]
        z = np.einsum("bi,ni->bn", ba, Xa)
        prob = np.exp(-_log1pexp(-z))
        g = scale * _rowdot(wa * (prob - t), Xa) + reg * ba * penalty
        gmax = np.abs(g).max(axis=1)
        done = gmax <= tol[active]
        idx = np.flatnonzero(active)
        converged[idx[done]] = True
        keep = ~done
        if not keep.any():
            break
        idx, ba, wa, g, prob = idx[keep], ba[keep], wa[keep], g[keep], prob[keep]
        h = wa * prob * (1.0 - prob)
        H = scale * _gram(h, Xa)
        H += reg * np.eye(q) * penalty
        H += 1e-12 * np.eye(q) * np.trace(H, axis1=1, axis2=2)[:, None, None] / q
        try:
            step = -np.linalg.solve(H, g[..., None])[..., 0]
        except np.linalg.LinAlgError:
            break
        # Quadratic convergence: a step this small means the optimum to rounding.
        small = np.abs(step).max(axis=1) <= 1e-9 * (1.0 + np.abs(ba).max(axis=1))
        beta[idx[small]] += step[small]
        converged[idx[small]] = True
        if small.all():
            continue
        keep = ~small
        idx, ba, g, step = idx[keep], ba[keep], g[keep], step[keep]
        gmax = gmax[~done][keep]
        f_old = f[idx]
        size = np.ones(idx.size)
        accepted = np.zeros(idx.size, dtype=bool)
        for _ in range(30):  # step halving until the objective decreases
            trial = ba + size[:, None] * step
            wt = w[idx]
            zt = np.einsum("bi,ni->bn", trial, Xa)
            ft = scale * np.einsum("bn,bn->b", wt, _log1pexp(zt) - t * zt) + 0.5 * reg * (
                (trial**2) @ penalty
            )
            good = (ft <= f_old + 1e-4 * size * np.einsum("bi,bi->b", g, step)) & ~accepted
            beta[idx[good]] = trial[good]
            f[idx[good]] = ft[good]
            accepted |= good
            if accepted.all():
                break
            size = np.where(accepted, size, size / 2)
        stalled = ~accepted
        if stalled.any():  # no decrease possible: at the optimum to rounding, or stuck
            converged[idx[stalled]] = gmax[stalled] <= 1e3 * tol[idx[stalled]]
            beta[idx[stalled]] = np.where(
                converged[idx[stalled]][:, None], beta[idx[stalled]], np.nan
            )
    if np.isinf(C):
        # Without a penalty a (quasi-)separable training set has no finite optimum: its
        # margins grow without bound. scikit-learn then stops at max_iter with a
        # ConvergenceWarning; leave those fits to it.
        margins = (2.0 * t - 1.0) * np.einsum("bi,ni->bn", np.nan_to_num(beta), Xa)
        trained = w > 0
        separated = np.where(trained, margins > 0, True).all(axis=1)
        saturated = np.where(trained, np.abs(margins) > 30.0, False).any(axis=1)
        converged &= ~(separated | saturated)
    coef = beta[:, :p]
    b = beta[:, p] if intercept else np.zeros(B)
    return coef, b, converged


def batched_predictions(
    estimator: Any,
    X: np.ndarray,
    y: np.ndarray,
    folds: Sequence[tuple[np.ndarray, np.ndarray]],
    response_method: str,
) -> list[tuple[Any, np.ndarray | None] | None]:
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

    Returns
    -------
    list
        Per fold, ``(y_pred, classes)`` (``classes`` None for regressors), or None where the
        fold must be refitted by scikit-learn (an ill-conditioned least-squares system, a
        training set without both classes, no convergence).
    """
    global _CONTROLLER
    if _CONTROLLER is None:  # inspecting the loaded libraries costs milliseconds: once
        from threadpoolctl import ThreadpoolController

        _CONTROLLER = ThreadpoolController()
    with _CONTROLLER.limit(limits=1, user_api="blas"):
        return _batched_predictions(estimator, X, y, folds, response_method)


def _batched_predictions(estimator, X, y, folds, response_method):
    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    n, p = X.shape
    out: list[tuple[Any, np.ndarray | None] | None] = [None] * len(folds)
    params = estimator.get_params()
    intercept = bool(params["fit_intercept"])
    for part in _chunks(len(folds), n, p):
        chunk = list(folds[part])
        w = _counts(chunk, n)
        if isinstance(estimator, LogisticRegression):
            classes = np.unique(y)
            if classes.size != 2:
                continue  # multiclass: scikit-learn's path
            t = (y == classes[1]).astype(float)
            present = np.stack([np.unique(y[np.asarray(tr)]).size == 2 for tr, _ in chunk])
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                coef, b, ok = _logistic(X, t, w, float(params["C"]), intercept)
            ok &= present
        else:
            alpha = float(params["alpha"]) if isinstance(estimator, Ridge) else 0.0
            coef, b = _least_squares(X, y.astype(float), w, alpha, intercept)
            ok = np.isfinite(coef).all(axis=1)
        for j, (_, te) in enumerate(chunk):
            if not ok[j]:
                continue
            z = X[np.asarray(te)] @ coef[j] + b[j]
            if isinstance(estimator, LogisticRegression):
                if response_method == "predict_proba":
                    p1 = np.exp(-_log1pexp(-z))
                    pred = np.column_stack([1.0 - p1, p1])
                else:
                    pred = np.where(z > 0, classes[1], classes[0])
                out[part.start + j] = (pred, classes)
            else:
                out[part.start + j] = (z, None)
    return out
