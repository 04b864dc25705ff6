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
:func:`bates_coefficient` solves the Bayes error of a logistic source for its scale, with the
same quadrature.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import optimize, special

__all__ = ["bates_coefficient", "linear_predictor", "logistic_zero_one_error", "squared_error"]

# Outer: Gauss–Legendre on each side of the decision boundary; inner: Gauss–Hermite.
_GL_X, _GL_W = np.polynomial.legendre.leggauss(96)
_GH_X, _GH_W = np.polynomial.hermite_e.hermegauss(64)
_GH_W = _GH_W / np.sqrt(2 * np.pi)
_EDGE = 10.0


def _normal_nodes(
    lo: np.ndarray, hi: np.ndarray, x: np.ndarray = _GL_X, w: np.ndarray = _GL_W
) -> tuple[np.ndarray, np.ndarray]:
    """Gauss–Legendre nodes on each [lo, hi], weights times the standard normal density.

    Parameters
    ----------
    lo, hi : ndarray of shape (S,)
        Integration limits.
    x, w : ndarray of shape (n,)
        Gauss–Legendre nodes and weights on [-1, 1].

    Returns
    -------
    z, weights : ndarray of shape (S, n)
        ``∫_lo^hi f(z) φ(z) dz ≈ (weights * f(z)).sum(axis=1)``.
    """
    half = (hi - lo)[:, None] / 2
    z = lo[:, None] + half * (x + 1)
    return z, half * w * np.exp(-0.5 * z**2) / np.sqrt(2 * np.pi)


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
    w, b : ndarray of shape (p,), float
        The fitted rule's weights and intercept.
    beta, a, mean, cov : ndarray of shapes (S, p), (S,), (S, p), (p, p)
        The sources, as in :func:`squared_error`: true coefficients and intercepts,
        feature means and the shared feature covariance.

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

    def p_one(z: np.ndarray) -> np.ndarray:  # E[expit(u) | z], u | z normal
        centre = mu_u[:, None] + (rho * s_u)[:, None] * z
        inner = special.expit(centre[..., None] + spread[:, None, None] * _GH_X)
        return inner @ _GH_W

    edge = np.full_like(zstar, _EDGE)
    z_lo, w_lo = _normal_nodes(-edge, zstar)  # predicted 0: wrong when y = 1
    z_hi, w_hi = _normal_nodes(zstar, edge)  # predicted 1: wrong when y = 0
    return (w_lo * p_one(z_lo)).sum(axis=1) + (w_hi * (1.0 - p_one(z_hi))).sum(axis=1)


def bates_coefficient(bayes_error: float, n_signal: int = 3) -> float:
    """Scale c with Bayes error `bayes_error` for P(y=1|x) = expit(c·(x₁+…+x_s)), x ~ N(0, I).

    The Bayes error is E[min(σ(u), 1 − σ(u))] with u ~ N(0, s·c²) (Bates et al. 2024, §5;
    their footnote writes it as 2∫_{θ·x≤0} σ(−θ·x) dN(x)).

    Parameters
    ----------
    bayes_error : float
        In (0, 0.5).
    n_signal : int, default 3
        Number s of non-zero coefficients.

    Returns
    -------
    float
        The scale c.

    Examples
    --------
    >>> round(bates_coefficient(0.33), 4), round(bates_coefficient(0.225), 4)
    (0.5571, 1.1321)
    """
    if not 0 < bayes_error < 0.5:
        raise ValueError(f"bayes_error must be in (0, 0.5), got {bayes_error!r}")
    # By symmetry the Bayes error is 2 ∫_0^∞ expit(−c √s z) φ(z) dz: smooth on [0, 10].
    z, w = _normal_nodes(np.zeros(1), np.full(1, 10.0), *np.polynomial.legendre.leggauss(200))
    z, w = z[0], w[0]

    def excess(c: float) -> float:
        return float(2 * w @ special.expit(-c * np.sqrt(n_signal) * z)) - bayes_error

    return float(optimize.brentq(excess, 1e-9, 100.0, xtol=1e-12))
