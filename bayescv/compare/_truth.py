"""Exact conditional errors of linear predictors under Gaussian features.

For features x ~ N(m, Σ), a source with P(y = 1 | x) = expit(xᵀβ + a) (logistic) or
y = xᵀβ + a + ε, ε ~ N(0, s²) (linear), and a fitted linear predictor with weights w and
intercept b:

* squared loss: E[(y − xᵀw − b)²] = s² + dᵀΣd + (mᵀd + a − b)², d = β − w;
* zero-one loss of the rule ``1[xᵀw + b > 0]``: with u = xᵀβ + a and v = xᵀw + b jointly
  normal, P(error) = E_u[expit(u) P(v ≤ 0 | u) + (1 − expit(u)) P(v > 0 | u)], a
  one-dimensional integral split at the decision boundary (Gauss–Legendre on each side,
  Gauss–Hermite inside), accurate to about 1e-7.

Used by the synthetic scenarios as the noise-free truth when the learner is linear.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import special

__all__ = ["linear_predictor", "logistic_zero_one_error", "squared_error"]

# Outer: Gauss–Legendre on each side of the decision boundary; inner: Gauss–Hermite.
_GL_X, _GL_W = np.polynomial.legendre.leggauss(96)
_GH_X, _GH_W = np.polynomial.hermite_e.hermegauss(64)
_GH_W = _GH_W / np.sqrt(2 * np.pi)
_EDGE = 10.0


def linear_predictor(model: Any, loss_name: str, link: str) -> tuple[np.ndarray, float] | None:
    """Return the weights and intercept of a fitted linear model whose error is exact.

    Parameters
    ----------
    model : fitted scikit-learn estimator
        Checked for ``coef_`` and ``intercept_`` (a pipeline is not recognised).
    loss_name : str
        The loss; exact errors exist for ``"squared"`` (linear link, regressors) and
        ``"zero_one"`` (logistic link, binary classifiers with classes 0 and 1).
    link : {"linear", "logistic"}
        How the scenario generates y.

    Returns
    -------
    (w, b) or None
        None when the error must be estimated on a test sample instead.
    """
    coef = getattr(model, "coef_", None)
    intercept = getattr(model, "intercept_", None)
    if coef is None or intercept is None:
        return None
    coef = np.asarray(coef, dtype=float)
    intercept = np.ravel(np.asarray(intercept, dtype=float))
    classes = getattr(model, "classes_", None)
    if link == "linear" and loss_name == "squared" and classes is None:
        if coef.ndim == 1 and intercept.size == 1:
            return coef, float(intercept[0])
        return None
    binary = classes is not None and list(np.asarray(classes).tolist()) == [0, 1]
    single = coef.ndim == 2 and coef.shape[0] == 1 and intercept.size == 1
    if link == "logistic" and loss_name == "zero_one" and binary and single:
        return coef[0], float(intercept[0])
    return None


def squared_error(
    w: np.ndarray,
    b: float,
    beta: np.ndarray,
    a: np.ndarray,
    mean: np.ndarray,
    cov: np.ndarray,
    noise_sd: float,
) -> np.ndarray:
    """Return the expected squared error of ``xᵀw + b`` on each source.

    Parameters
    ----------
    w : ndarray of shape (p,)
        Fitted weights.
    b : float
        Fitted intercept.
    beta : ndarray of shape (S, p)
        True coefficients of each source.
    a : ndarray of shape (S,)
        True intercepts.
    mean : ndarray of shape (S, p)
        Feature means.
    cov : ndarray of shape (p, p)
        Feature covariance (shared by the sources).
    noise_sd : float
        Standard deviation of the noise.

    Returns
    -------
    ndarray of shape (S,)
        s² + dᵀΣd + (mᵀd + a − b)² with d = β − w.

    Examples
    --------
    >>> squared_error(np.zeros(2), 0.0, np.ones((1, 2)), np.zeros(1), np.zeros((1, 2)),
    ...               np.eye(2), 1.0)
    array([3.])
    """
    d = beta - w
    quad = np.einsum("sp,pq,sq->s", d, cov, d)
    shift = np.einsum("sp,sp->s", mean, d) + a - b
    return noise_sd**2 + quad + shift**2


def logistic_zero_one_error(
    w: np.ndarray,
    b: float,
    beta: np.ndarray,
    a: np.ndarray,
    mean: np.ndarray,
    cov: np.ndarray,
) -> np.ndarray:
    """Return the misclassification rate of ``1[xᵀw + b > 0]`` on each logistic source.

    Parameters
    ----------
    w : ndarray of shape (p,)
        Fitted weights.
    b : float
        Fitted intercept.
    beta : ndarray of shape (S, p)
        True coefficients of each source.
    a : ndarray of shape (S,)
        True intercepts.
    mean : ndarray of shape (S, p)
        Feature means.
    cov : ndarray of shape (p, p)
        Feature covariance.

    Returns
    -------
    ndarray of shape (S,)
        P(y ≠ ŷ) on each source.

    Examples
    --------
    >>> # the Bayes rule of a source with a very strong signal errs almost never
    >>> float(logistic_zero_one_error(np.array([1.0]), 0.0, np.array([[50.0]]), np.zeros(1),
    ...                               np.zeros((1, 1)), np.eye(1))[0]) < 0.02
    True
    """
    mu_u = np.einsum("sp,sp->s", mean, beta) + a
    s_u = np.sqrt(np.maximum(np.einsum("sp,pq,sq->s", beta, cov, beta), 0.0))
    mu_v = mean @ w + b
    s_v = float(np.sqrt(max(w @ cov @ w, 0.0)))
    c = beta @ cov @ w
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = np.where((s_u > 0) & (s_v > 0), c / (s_u * s_v), 0.0)
        # v = mu_v + s_v z is at most 0 (predicted class 0) for z below zstar
        zstar = -mu_v / s_v if s_v > 0 else np.where(mu_v <= 0, _EDGE, -_EDGE)
    rho = np.clip(rho, -1.0, 1.0)
    zstar = np.clip(zstar, -_EDGE, _EDGE)
    spread = s_u * np.sqrt(1.0 - rho**2)

    def nodes(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        half = (hi - lo)[:, None] / 2
        z = lo[:, None] + half * (_GL_X + 1)
        return z, half * _GL_W * np.exp(-0.5 * z**2) / np.sqrt(2 * np.pi)

    def p_one(z: np.ndarray) -> np.ndarray:  # E[expit(u) | z], u | z normal
        centre = mu_u[:, None] + (rho * s_u)[:, None] * z
        inner = special.expit(centre[..., None] + spread[:, None, None] * _GH_X)
        return inner @ _GH_W

    edge = np.full_like(zstar, _EDGE)
    z_lo, w_lo = nodes(-edge, zstar)
    z_hi, w_hi = nodes(zstar, edge)
    return (w_lo * p_one(z_lo)).sum(axis=1) + (w_hi * (1.0 - p_one(z_hi))).sum(axis=1)
