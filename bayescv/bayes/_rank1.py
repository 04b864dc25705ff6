"""Diagonal-plus-rank-one covariances in O(K): the numpy algebra of the model's Σ.

The sampling covariance of the block means, Σ = Γ + diag(ν_k/n_k) with
Γ = diag(s) [(1 − ρ) I + ρ 11ᵀ] diag(s), is diag(own) + ρ s sᵀ with
own_k = (1 − ρ) s_k² + ν_k/n_k (:func:`own_variance`); so are the covariances built from it
(τ² I + Σ / c, the scatter's Σ_s). Their log-determinants, solves and Gaussian draws follow
from the matrix determinant lemma and the Sherman–Morrison formula without forming a K × K
matrix, batched over leading (chain, draw) axes. The PyTensor graph
(:func:`bayescv.bayes.model.loglik_graph`) and the numba density
(:mod:`bayescv.bayes._density`) write the same algebra in their own languages.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["own_variance", "rank1_logdet", "rank1_mvn", "rank1_parts", "rank1_solve"]


def own_variance(nu: np.ndarray, gamma_sd: np.ndarray, rho: Any, n: np.ndarray) -> np.ndarray:
    """Diagonal of Σ less its rank-one part: own_k = (1 − ρ) s_k² + ν_k / n_k, batched.

    Parameters
    ----------
    nu, gamma_sd : ndarray of shape (..., K) or (..., 1)
        Within-block variances ν_k and between-block standard deviations s_k.
    rho : array-like of shape (...)
        Common correlation of Γ.
    n : ndarray of shape (K,)
        Block sizes.

    Returns
    -------
    ndarray of shape (..., K)
    """
    return (1.0 - np.asarray(rho)[..., None]) * gamma_sd**2 + nu / n


def rank1_parts(diag: np.ndarray, s: np.ndarray, rho: Any) -> tuple[np.ndarray, np.ndarray]:
    """Return u = diag⁻¹ s and d = 1 + ρ sᵀu for M = diag(diag) + ρ s sᵀ, batched.

    Then M⁻¹ = diag⁻¹ − ρ u uᵀ / d (Sherman–Morrison) and |M| = d ∏ diag (matrix
    determinant lemma).

    Parameters
    ----------
    diag, s : ndarray of shape (..., K)
        The diagonal part and the rank-one vector.
    rho : array-like of shape (...)
        The rank-one weight.

    Returns
    -------
    u : ndarray of shape (..., K)
    d : ndarray of shape (...)
    """
    u = s / diag
    return u, 1.0 + np.asarray(rho) * (s * u).sum(-1)


def rank1_logdet(diag: np.ndarray, s: np.ndarray, rho: Any) -> tuple:
    """Return log|M|, u and d of :func:`rank1_parts` for M = diag(diag) + ρ s sᵀ, batched."""
    u, denom = rank1_parts(diag, s, rho)
    return np.log(diag).sum(-1) + np.log(denom), u, denom


def rank1_solve(diag: np.ndarray, s: np.ndarray, rho: Any, r: np.ndarray) -> np.ndarray:
    """Solve (diag(diag) + ρ s sᵀ) x = r by Sherman–Morrison, batched, in O(K).

    Parameters
    ----------
    diag, s, r : ndarray of shape (..., K)
        The diagonal part, the rank-one vector and the right-hand side.
    rho : array-like of shape (...)
        The rank-one weight.

    Returns
    -------
    ndarray of shape (..., K)
    """
    u, denom = rank1_parts(diag, s, rho)
    rho = np.asarray(rho)[..., None]
    return r / diag - rho * u * (u * r).sum(-1, keepdims=True) / denom[..., None]


def rank1_mvn(
    mean: np.ndarray, diag: np.ndarray, s: np.ndarray, rho: Any, rng: np.random.Generator
) -> np.ndarray:
    """Draw MVN(mean, diag(diag) + ρ s sᵀ) in O(K) per draw, batched over leading axes.

    With t = diag^(−1/2) s and u = t/‖t‖, L = diag^(1/2) (I + g u uᵀ) with
    g = sqrt(1 + ρ ‖t‖²) − 1 satisfies L Lᵀ = diag(diag) + ρ s sᵀ (1 + ρ‖t‖² > 0 is the
    matrix being positive definite), so no K × K matrix is formed.

    Parameters
    ----------
    mean, diag, s : ndarray of shape (..., K)
        Mean, diagonal part and rank-one vector (broadcast against each other).
    rho : array-like of shape (...)
        The rank-one weight.
    rng : numpy.random.Generator
        Source of the standard normal draws.

    Returns
    -------
    ndarray of shape (..., K)
    """
    root = np.sqrt(diag)
    t = s / root
    norm2 = (t * t).sum(-1, keepdims=True)
    u = t / np.sqrt(norm2)
    g = np.sqrt(1.0 + np.asarray(rho)[..., None] * norm2) - 1.0
    z = rng.standard_normal(np.broadcast_shapes(mean.shape, diag.shape))
    return mean + root * (z + g * u * (u * z).sum(-1, keepdims=True))
