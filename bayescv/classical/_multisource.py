"""The multiple-source (CVS) estimators θ^ω, θ^γ, θ_A, θ_B and their weighted forms.

Geras & Sutton (2013, Table 1 and eq. 11–12) for blocks that are held-out sources;
``theta_A_weighted`` and ``theta_B_weighted`` are this package's extension to unequal sizes.
Notation and references are in :mod:`bayescv.classical.estimators`, which re-exports every
public name here.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from bayescv.classical._block_stats import (
    BlockStats,
    as_result,
    block_stats,
    centred_moments,
    pair_mask,
    require_equal,
    sizes,
)
from bayescv.classical._estimator import THETA, Estimator, document
from bayescv.classical._random_kfold import bayle_within_core

__all__ = [
    "MULTISOURCE_SPECS",
    "theta_A",
    "theta_A_weighted",
    "theta_B",
    "theta_B_weighted",
    "theta_gamma",
    "theta_gamma_pair",
    "theta_omega",
    "theta_omega_block",
]


# ------------------------------------- array cores: BlockStats -> one value per replicate (R,)
def _theta_omega(stats: BlockStats) -> np.ndarray:
    """θ^ω = μ̂² − s2 in centred form: mean_k W_k/(M(M−1)) − D/K (equal sizes)."""
    require_equal(stats, "theta_omega")
    return 0.0 - centred_moments(stats)[1]  # not −t2: a 0.0 would print as −0.0 (its se too)


def _theta_gamma(stats: BlockStats) -> np.ndarray:
    """θ^γ = μ̂² − s3 = Σ_k (ē_k − μ̂)²/(K(K−1)) (equal sizes)."""
    require_equal(stats, "theta_gamma")
    return -centred_moments(stats)[2]


def _theta_A(stats: BlockStats) -> np.ndarray:
    """θ_A = σ²_in/N (equal sizes)."""
    require_equal(stats, "theta_A")
    return bayle_within_core(stats)


def _theta_B(stats: BlockStats) -> np.ndarray:
    """θ_B = 2 θ_A (equal sizes)."""
    require_equal(stats, "theta_B")
    return 2 * bayle_within_core(stats)


def _theta_A_weighted(stats: BlockStats) -> np.ndarray:
    """(1/N²) Σ_k n_k W_k/(n_k − 1)."""
    n = sizes(stats)
    return (n * stats.W / (n - 1)).sum(axis=1) / stats.N**2


def _theta_B_weighted(stats: BlockStats) -> np.ndarray:
    """2 θ_A_weighted."""
    return 2 * _theta_A_weighted(stats)


# --------------------------------------------------------------------------- specifications
_WEIGHTED = "extension of {0} to unequal sizes (bayescv); equals {0} on equal sizes"
_MU_SPREAD = "(sum_k mu_k^2 - sum_{k!=l} mu_k mu_l / (K-1))"

#: θ^ω, θ^γ, θ_A, θ_B and the weighted forms, in the order of ``ESTIMATORS``.
MULTISOURCE_SPECS = (
    Estimator(
        "theta_omega",
        _theta_omega,
        f"-sum_k omega_k / K + (1-K)/K^2 {_MU_SPREAD}",
        "all omega_k = 0 and all mu_k equal (CVS; Geras & Sutton 2013, Table 1); can be negative",
        equal_sizes=True,
    ),
    Estimator(
        "theta_gamma",
        _theta_gamma,
        f"-sum_{{k!=l}} gamma_kl / (K(K-1)) + (1/K^2) {_MU_SPREAD}",
        "all gamma_kl = 0 and all mu_k equal (CVS; Geras & Sutton 2013, Table 1)",
        equal_sizes=True,
    ),
    Estimator(
        "theta_A",
        _theta_A,
        "-(1/K^2) (sum_k omega_k + sum_{k!=l} gamma_kl)",
        "no mu terms in the bias (CVS; Geras & Sutton 2013, eq. 11); "
        "optimistic when omega, gamma > 0",
        equal_sizes=True,
    ),
    Estimator(
        "theta_B",
        _theta_B,
        "(1/(K^2 M)) (sum_k sigma_k^2 - (M+1) sum_k omega_k - M sum_{k!=l} gamma_kl)",
        "no mu terms in the bias, terms of opposite sign (CVS; Geras & Sutton 2013, eq. 12)",
        equal_sizes=True,
    ),
    Estimator(
        "theta_A_weighted",
        _theta_A_weighted,
        "-(1/N^2) (sum_k n_k^2 omega_k + sum_{k!=l} n_k n_l gamma_kl)",
        _WEIGHTED.format("theta_A"),
        equal_sizes=False,
    ),
    Estimator(
        "theta_B_weighted",
        _theta_B_weighted,
        "(1/N^2) (sum_k n_k sigma_k^2 - sum_k n_k (n_k+1) omega_k - sum_{k!=l} n_k n_l gamma_kl)",
        _WEIGHTED.format("theta_B"),
        equal_sizes=False,
    ),
)

_SPECS = {spec.name: spec for spec in MULTISOURCE_SPECS}


# --------------------------------------------------------------------------- public functions
@document(THETA, _SPECS)
def theta_omega(losses: xr.Dataset | BlockStats) -> xr.DataArray:
    """θ^ω = μ̂² − s2 (Geras & Sutton 2013, Table 1, all ω_k = 0).

    Examples
    --------
    On three blocks of two losses (equal sizes, which it needs), θ^ω is the mean over blocks of
    :func:`theta_omega_block`; it can be negative:

    >>> from bayescv.losses import from_arrays
    >>> table = from_arrays([0.1, 0.4, 0.3, 0.2, 0.9, 0.5], [0, 0, 1, 1, 2, 2])
    >>> theta = theta_omega(table)
    >>> round(float(theta), 6), bool(np.isclose(theta, theta_omega_block(table).mean()))
    (-0.023333, True)
    """
    return _SPECS["theta_omega"](losses)


@document(THETA, _SPECS)
def theta_gamma(losses: xr.Dataset | BlockStats) -> xr.DataArray:
    """θ^γ = μ̂² − s3, the squared standard error of the block means.

    Examples
    --------
    On three blocks of two losses (equal sizes, which it needs), θ^γ equals the squared
    standard error of the block means:

    >>> from bayescv.losses import from_arrays
    >>> table = from_arrays([0.1, 0.4, 0.3, 0.2, 0.9, 0.5], [0, 0, 1, 1, 2, 2])
    >>> from bayescv.classical import naive_se_folds
    >>> theta = theta_gamma(table)
    >>> round(float(theta), 6), bool(np.isclose(theta, naive_se_folds(table) ** 2))
    (0.0225, True)
    """
    return _SPECS["theta_gamma"](losses)


@document(THETA, _SPECS)
def theta_A(losses: xr.Dataset | BlockStats) -> xr.DataArray:
    """θ_A = (1/(K²M)) Σ_k (s_k^σ² − s_k^ω) = σ²_in/N.

    Examples
    --------
    On three blocks of two losses (equal sizes, which it needs), θ_A equals σ²_in/N; block
    statistics computed once can be passed to several estimators:

    >>> from bayescv.losses import from_arrays
    >>> table = from_arrays([0.1, 0.4, 0.3, 0.2, 0.9, 0.5], [0, 0, 1, 1, 2, 2])
    >>> from bayescv.classical import block_stats, sigma2_within
    >>> stats = block_stats(table)
    >>> round(float(theta_A(stats)), 6), bool(np.isclose(theta_A(stats), sigma2_within(stats) / 6))
    (0.007222, True)
    """
    return _SPECS["theta_A"](losses)


@document(THETA, _SPECS)
def theta_B(losses: xr.Dataset | BlockStats) -> xr.DataArray:
    """θ_B = 2 θ_A (Geras & Sutton 2013, eq. 12).

    Examples
    --------
    On three blocks of two losses (equal sizes, which it needs), θ_B is twice θ_A:

    >>> from bayescv.losses import from_arrays
    >>> table = from_arrays([0.1, 0.4, 0.3, 0.2, 0.9, 0.5], [0, 0, 1, 1, 2, 2])
    >>> from bayescv.classical import block_stats
    >>> stats = block_stats(table)
    >>> round(float(theta_B(stats)), 6), bool(np.isclose(theta_B(stats), 2 * theta_A(stats)))
    (0.014444, True)
    """
    return _SPECS["theta_B"](losses)


@document(THETA, _SPECS)
def theta_A_weighted(losses: xr.Dataset | BlockStats) -> xr.DataArray:
    """θ_A for unequal sizes: (1/N²) Σ_k n_k W_k/(n_k − 1).

    Its bias is θ_A's with each block weighted by its size (a bayescv extension).

    Examples
    --------
    Any block sizes; on equal sizes it equals θ_A, and on blocks {0.1, 0.4, 0.3} and {0.2, 0.9}
    (sample variances 0.07/3 and 0.245) it is (3 · 0.07/3 + 2 · 0.245)/5² = 0.0224:

    >>> from bayescv.losses import from_arrays
    >>> table = from_arrays([0.1, 0.4, 0.3, 0.2, 0.9, 0.5], [0, 0, 1, 1, 2, 2])
    >>> bool(np.isclose(theta_A_weighted(table), theta_A(table)))
    True
    >>> round(float(theta_A_weighted(from_arrays([0.1, 0.4, 0.3, 0.2, 0.9], [0, 0, 0, 1, 1]))), 6)
    0.0224
    """
    return _SPECS["theta_A_weighted"](losses)


@document(THETA, _SPECS)
def theta_B_weighted(losses: xr.Dataset | BlockStats) -> xr.DataArray:
    """2 θ_A_weighted.

    Examples
    --------
    Any block sizes; it is twice ``theta_A_weighted``:

    >>> from bayescv.losses import from_arrays
    >>> table = from_arrays([0.1, 0.4, 0.3, 0.2, 0.9, 0.5, 0.6], [0, 0, 0, 1, 1, 2, 2])
    >>> theta = theta_B_weighted(table)
    >>> round(float(theta), 6), bool(np.isclose(theta, 2 * theta_A_weighted(table)))
    (0.023265, True)
    """
    return _SPECS["theta_B_weighted"](losses)


@document("Dims ``(block,)`` or ``(replicate, block)``.")
def theta_omega_block(losses: xr.Dataset | BlockStats) -> xr.DataArray:
    """Table 1's θ^ω_k̃ = μ̂² − s_k̃^ω for every block k̃ (unbiased if ω_k̃ = 0, all μ_k equal).

    Bias: ``-omega_k + (1/K^2) sum_{k,l} mu_k mu_l - mu_k^2`` (Geras & Sutton 2013, Table 1).
    Needs equal block sizes. Their mean over k̃ is θ^ω.

    Examples
    --------
    On three blocks of two losses (equal sizes, which it needs), one value per block, whose
    mean is θ^ω:

    >>> from bayescv.losses import from_arrays
    >>> table = from_arrays([0.1, 0.4, 0.3, 0.2, 0.9, 0.5], [0, 0, 1, 1, 2, 2])
    >>> values = theta_omega_block(table)
    >>> values.round(6).values.tolist(), bool(np.isclose(values.mean(), theta_omega(table)))
    ([0.12, 0.1, -0.29], True)
    """
    stats = block_stats(losses)
    require_equal(stats, "theta_omega_block")
    M = stats.M[:, None]
    values = -stats.d * (2 * stats.m[:, None] + stats.d) + stats.W / (M * (M - 1))
    values = np.where(stats.present, values, np.nan)
    return as_result(values, stats, "theta_omega", dims=("block",))


@document("Dims ``(block, block_other)`` (leading ``replicate`` if any), NaN on the diagonal.")
def theta_gamma_pair(losses: xr.Dataset | BlockStats) -> xr.DataArray:
    """Table 1's θ^γ_k̃l̃ = μ̂² − ē_k̃ ē_l̃ for every pair of distinct blocks.

    Unbiased if γ_k̃l̃ = 0 and all μ_k are equal; bias
    ``-gamma_kl + (1/K^2) sum_{k,l} mu_k mu_l - mu_k mu_l`` (Geras & Sutton 2013, Table 1).
    Needs equal block sizes. Their mean over pairs is θ^γ. Uses O(K²) memory.

    Examples
    --------
    On three blocks of two losses (equal sizes, which it needs), one value per pair of distinct
    blocks, whose mean is θ^γ:

    >>> from bayescv.losses import from_arrays
    >>> table = from_arrays([0.1, 0.4, 0.3, 0.2, 0.9, 0.5], [0, 0, 1, 1, 2, 2])
    >>> values = theta_gamma_pair(table)
    >>> values.shape, bool(np.isclose(np.nanmean(values), theta_gamma(table)))
    ((3, 3), True)
    """
    stats = block_stats(losses)
    require_equal(stats, "theta_gamma_pair")
    d, m = stats.d, stats.m[:, None, None]
    values = -m * (d[:, :, None] + d[:, None, :]) - d[:, :, None] * d[:, None, :]
    values = np.where(pair_mask(stats), values, np.nan)
    return as_result(values, stats, "theta_gamma", dims=("block", "block_other"))
