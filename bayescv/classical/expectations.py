"""Exact expectation and bias of every quadratic variance estimator.

Every estimator of :mod:`bayescv.classical.estimators` is a quadratic form in the losses, and so a
linear combination of the Geras–Sutton moments (Geras & Sutton 2013, §4.2):

    θ̂ = Σ_k a_k s_k^σ² + Σ_k b_k s_k^ω + Σ_{k≠l} c_kl s_kl^γ.

With block means μ_k, point variances σ_k², within-block covariances ω_k and between-block
covariances γ_kl, E[s_k^σ²] = σ_k² + μ_k², E[s_k^ω] = ω_k + μ_k² and
E[s_kl^γ] = γ_kl + μ_k μ_l (Geras & Sutton 2013, eq. 8), so E[θ̂] follows in closed form, for any block
sizes, and so does the bias against the true variance of the CV estimate μ̂ (Geras & Sutton 2013, eq. 7,
written for sizes n_k):

    θ = (1/N²) [Σ_k n_k σ_k² + Σ_k n_k (n_k−1) ω_k + Σ_{k≠l} n_k n_l γ_kl].

Used by the tests (against tr(WΣ) + mᵀWm built entry by entry), the docs and the
comparison module (the bias of each method in a scenario with known moments).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from bayescv.classical.estimators import ESTIMATORS

__all__ = ["coefficients", "expected_estimates", "true_variance"]


def _check_sizes(n: Any) -> np.ndarray:
    n = np.asarray(n, dtype=float)
    if n.ndim != 1 or n.size < 2:
        raise ValueError(f"n must list the sizes of at least 2 blocks, got {n!r}")
    if np.any(n < 2) or np.any(n != np.round(n)):
        raise ValueError(f"block sizes must be integers of at least 2, got {n.tolist()}")
    return n


def _equal(n: np.ndarray, name: str) -> float:
    if not np.all(n == n[0]):
        raise ValueError(
            f"{name} needs equal block sizes, got {n.astype(int).tolist()}; theta_A_weighted, "
            "theta_B_weighted and the naive and Bayle estimators allow unequal sizes"
        )
    return float(n[0])


def coefficients(name: str, n: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Weights (a_k, b_k, c_kl) of an estimator on the moments s_k^σ², s_k^ω, s_kl^γ.

    Parameters
    ----------
    name : str
        An estimator name from :data:`bayescv.classical.estimators.ESTIMATORS`.
    n : array-like of int, shape (K,)
        Block sizes.

    Returns
    -------
    a, b : ndarray of shape (K,)
        Weights of s_k^σ² and s_k^ω.
    c : ndarray of shape (K, K)
        Weights of s_kl^γ (zero diagonal).

    Raises
    ------
    ValueError
        For an unknown `name`, fewer than two blocks, a size below 2, or unequal sizes for
        an estimator that needs equal ones (``ESTIMATORS[name].equal_sizes``: θ_1…θ_5, θ^ω,
        θ^γ, θ_A, θ_B).

    Examples
    --------
    θ_3 weighs the three moments by 1, M − 1 and −M, over NK and (for the pairs) NK(K − 1):
    with K = 4 blocks of M = 5 points, 1/80, 4/80 and −5/240:

    >>> a, b, c = coefficients("theta_3", [5, 5, 5, 5])
    >>> round(float(a[0]), 4), round(float(b[0]), 4), round(float(c[0, 1]), 4), c.shape
    (0.0125, 0.05, -0.0208, (4, 4))
    """
    if name not in ESTIMATORS:
        raise ValueError(f"unknown estimator {name!r}; known: {sorted(ESTIMATORS)}")
    n = _check_sizes(n)
    K = n.size
    N = n.sum()
    off = 1.0 - np.eye(K)
    ones = np.ones(K)
    if name in {"theta_1", "theta_2", "theta_3", "theta_4", "theta_5"}:
        M = _equal(n, name)
        A, B, C = {
            "theta_1": (1, M - 1, N - M),
            "theta_2": (1, -(N + 1 - M), N - M),
            "theta_3": (1, M - 1, -M),
            "theta_4": (1, -1, 0),
            "theta_5": (1, N + M - 1, -(N + M)),
        }[name]
        # s1, s2, s3 are means over K blocks and K(K−1) ordered pairs.
        return ones * A / (N * K), ones * B / (N * K), off * C / (N * K * (K - 1))
    if name in {"theta_omega", "theta_gamma", "theta_A", "theta_B"}:
        M = _equal(n, name)
        a = ones / (K * K * M)
        if name == "theta_omega":
            return a, ones * (M - 1 - K * M) / (K * K * M), off / K**2
        if name == "theta_gamma":
            return a, ones * (M - 1) / (K * K * M), -off / (K * K * (K - 1))
        scale = 2.0 if name == "theta_B" else 1.0
        return scale * a, -scale * a, 0 * off
    if name in {"theta_A_weighted", "theta_B_weighted", "bayle_within"}:
        # W_k/(n_k − 1) = s_k^σ² − s_k^ω, weighted n_k/N² or 1/(KN).
        w = n / N**2 if name != "bayle_within" else ones / (K * N)
        w = 2 * w if name == "theta_B_weighted" else w
        return w, -w, 0 * off
    # Σ_i (e_i − μ̂)² = Σ_k n_k s_k^σ² − (Σ_k S_k)²/N, with S_k² = n_k s_k^σ² + n_k(n_k−1) s_k^ω.
    if name in {"naive_points", "bayle_all_pairs"}:
        denominator = N * (N - 1) if name == "naive_points" else N * N
        a = (n - n / N) / denominator
        b = -n * (n - 1) / N / denominator
        return a, b, -np.outer(n, n) * off / N / denominator
    if name == "naive_folds":
        # Σ_k (ē_k − m)² = (1 − 1/K) Σ_k ē_k² − (1/K) Σ_{k≠l} ē_k ē_l, ē_k² in s moments.
        return 1 / (K * K * n), (n - 1) / (K * K * n), -off / (K * K * (K - 1))
    raise AssertionError(f"no coefficients for {name}")  # pragma: no cover


def _per_block(name: str, value: Any, K: int) -> np.ndarray:
    """`value` as one float per block; a scalar is the same for every block."""
    array = np.asarray(value, dtype=float)
    if array.shape not in ((), (1,), (K,)):
        raise ValueError(
            f"{name} must be a scalar or hold one value per block ({K}, as n does), "
            f"got shape {array.shape}"
        )
    return np.broadcast_to(array, (K,))


def _parameters(n: np.ndarray, mu: Any, sigma2: Any, omega: Any, gamma: Any) -> tuple:
    K = n.size
    mu, sigma2, omega = (
        _per_block(name, value, K)
        for name, value in {"mu": mu, "sigma2": sigma2, "omega": omega}.items()
    )
    gamma = np.asarray(gamma, dtype=float)
    gamma = np.broadcast_to(gamma, (K, K)) if gamma.ndim == 0 or gamma.shape == (1,) else gamma
    if gamma.shape != (K, K):
        raise ValueError(f"gamma must be a scalar or a ({K}, {K}) matrix, got {gamma.shape}")
    if not np.allclose(gamma, gamma.T):
        raise ValueError("gamma must be symmetric")
    for name, value in {"mu": mu, "sigma2": sigma2, "omega": omega, "gamma": gamma}.items():
        if not np.all(np.isfinite(value)):
            raise ValueError(f"{name} must be finite")
    if np.any(sigma2 < 0):
        raise ValueError(f"sigma2 holds variances and must be >= 0, got {sigma2.tolist()}")
    return mu, sigma2, omega, gamma * (1.0 - np.eye(K))


def true_variance(n: Any, sigma2: Any, omega: Any, gamma: Any) -> float:
    """Var(μ̂) of the CV estimate for blocks of sizes n_k (Geras & Sutton 2013, eq. 7 for any sizes).

    Parameters
    ----------
    n : array-like of int, shape (K,)
        Block sizes.
    sigma2, omega : float or array-like of shape (K,)
        Point variances σ_k² and within-block covariances ω_k.
    gamma : float or array-like of shape (K, K)
        Between-block covariances γ_kl (diagonal ignored).

    Returns
    -------
    float
        θ = (1/N²) [Σ n_k σ_k² + Σ n_k(n_k−1) ω_k + Σ_{k≠l} n_k n_l γ_kl].

    Raises
    ------
    ValueError
        For block sizes below 2, non-finite moments, a negative σ_k² or an asymmetric γ.

    Examples
    --------
    >>> K, M = 4, 5  # CVR: Geras & Sutton (2013, eq. 2), σ²/N + (M−1)ω/N + (K−1)γ/K
    >>> true_variance([M] * K, 1.0, 0.1, 0.02) == 1 / 20 + 4 * 0.1 / 20 + 3 * 0.02 / 4
    True
    """
    n = _check_sizes(n)
    _, sigma2, omega, gamma = _parameters(n, 0.0, sigma2, omega, gamma)
    N = n.sum()
    return float((n @ sigma2 + (n * (n - 1)) @ omega + n @ gamma @ n) / N**2)


def expected_estimates(
    n: Any,
    mu: Any,
    sigma2: Any,
    omega: Any,
    gamma: Any,
    *,
    estimators: list[str] | None = None,
) -> xr.Dataset:
    """Exact E[θ̂] and bias E[θ̂] − θ of every estimator, for given block moments.

    Parameters
    ----------
    n : array-like of int, shape (K,)
        Block sizes.
    mu, sigma2, omega : float or array-like of shape (K,)
        Block means μ_k, point variances σ_k² and within-block covariances ω_k (a scalar
        means the same for every block, as in CVR).
    gamma : float or array-like of shape (K, K)
        Between-block covariances γ_kl (symmetric; diagonal ignored).
    estimators : list of str, optional
        Which estimators; default all of :data:`bayescv.classical.estimators.ESTIMATORS` that are
        defined for these sizes.

    Returns
    -------
    xarray.Dataset
        Variables ``expectation`` and ``bias`` along ``estimator``; attr ``theta`` is the
        true Var(μ̂). Estimators that need equal sizes are left out for unequal ones.

    Raises
    ------
    ValueError
        As :func:`coefficients`: also when `estimators` names one that needs equal block
        sizes and the sizes differ.

    Examples
    --------
    >>> ds = expected_estimates([10] * 5, 0.3, 0.2, 0.01, 0.002)
    >>> round(float(ds["bias"].sel(estimator="theta_3")), 12)  # Geras & Sutton (2013, Table 2): -γ
    -0.002
    """
    n = _check_sizes(n)
    mu, sigma2, omega, gamma = _parameters(n, mu, sigma2, omega, gamma)
    names = list(ESTIMATORS) if estimators is None else list(estimators)
    equal = bool(np.all(n == n[0]))
    if estimators is None and not equal:
        names = [name for name in names if not ESTIMATORS[name].equal_sizes]
    theta = true_variance(n, sigma2, omega, gamma)
    mumu = np.outer(mu, mu)
    values = []
    for name in names:
        a, b, c = coefficients(name, n)
        values.append(a @ (sigma2 + mu**2) + b @ (omega + mu**2) + np.sum(c * (gamma + mumu)))
    expectation = np.asarray(values)
    return xr.Dataset(
        {
            "expectation": ("estimator", expectation),
            "bias": ("estimator", expectation - theta),
        },
        coords={"estimator": names},
        attrs={"theta": theta},
    )
