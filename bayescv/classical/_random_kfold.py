"""θ_1…θ_5 of random K-fold CV, and the naive and Bayle et al. estimators.

θ_1…θ_5 are Grandvalet & Bengio's (2006) and Geras & Sutton's (2013, Table 2 and §5)
estimators for random (CVR) folds; the naive standard errors are Bates et al.'s (2024, eq. 5
and 9) and σ²_in, σ²_out Bayle et al.'s (2020). Notation and references are in
:mod:`bayescv.classical.estimators`, which re-exports every public name here.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import xarray as xr

from bayescv.classical._block_stats import (
    BlockStats,
    as_result,
    block_stats,
    centred_moments,
    require_equal,
    sizes,
)
from bayescv.classical._estimator import THETA, Estimator, document

__all__ = [
    "CVR_SPECS",
    "NAIVE_SPECS",
    "bayle_within_core",
    "naive_se_folds",
    "naive_se_points",
    "sigma2_all_pairs",
    "sigma2_within",
    "theta_1",
    "theta_2",
    "theta_3",
    "theta_4",
    "theta_5",
]


# ------------------------------------- array cores: BlockStats -> one value per replicate (R,)

#: Numerators (n1, n2, n3) of θ = (n1 s1 + n2 s2 + n3 s3)/N for the CVR estimators θ_1…θ_5
#: (Geras & Sutton 2013, Table 2 and §5), as functions of N and M.
_CVR_NUMERATORS = {
    "theta_1": lambda N, M: (1, M - 1, N - M),
    "theta_2": lambda N, M: (1, -(N + 1 - M), N - M),
    "theta_3": lambda N, M: (1, M - 1, -M),
    "theta_4": lambda N, M: (1, -1, 0 * N),
    "theta_5": lambda N, M: (1, N + M - 1, -(N + M)),
}


def _cvr(stats: BlockStats, name: str) -> np.ndarray:
    """Compute A s1 + B s2 + C s3 with (A, B, C) = (n1, n2, n3)/N from integer numerators."""
    require_equal(stats, name)
    N, M = stats.N, stats.M
    n1, n2, n3 = _CVR_NUMERATORS[name](N, M)
    t1, t2, t3 = centred_moments(stats)
    # α4 = A + B + C is exact in integers, so the μ̂² term carries no rounding.
    return (n1 * t1 + n2 * t2 + n3 * t3 + (n1 + n2 + n3) * stats.m**2) / N


def _naive_points(stats: BlockStats) -> np.ndarray:
    """Σ_i (e_i − μ̂)² / (N(N−1)), from the within/between decomposition."""
    total = stats.W.sum(axis=1) + (stats.n * (stats.means - stats.mu_hat[:, None]) ** 2).sum(
        axis=1, where=stats.present
    )
    return total / (stats.N * (stats.N - 1))


def _naive_folds(stats: BlockStats) -> np.ndarray:
    """Σ_k (ē_k − m)² / (K(K−1)), m the mean of the block means."""
    return stats.D / (stats.K * (stats.K - 1))


def _sigma2_within(stats: BlockStats) -> np.ndarray:
    """Bayle et al.'s (2020) within-fold variance (1/K) Σ_k W_k/(n_k − 1)."""
    return (stats.W / (sizes(stats) - 1)).sum(axis=1) / stats.K


def _sigma2_all_pairs(stats: BlockStats) -> np.ndarray:
    """Bayle et al.'s (2020) all-pairs variance (1/N) Σ_i (e_i − μ̂)²."""
    return _naive_points(stats) * (stats.N - 1)


def bayle_within_core(stats: BlockStats) -> np.ndarray:
    """σ²_in / N (also θ_A's core, :mod:`bayescv.classical._multisource`)."""
    return _sigma2_within(stats) / stats.N


def _bayle_all_pairs(stats: BlockStats) -> np.ndarray:
    """σ²_out / N."""
    return _sigma2_all_pairs(stats) / stats.N


# --------------------------------------------------------------------------- specifications
def _cvr_estimator(name: str, bias: str, assumption: str) -> Estimator:
    return Estimator(name, partial(_cvr, name=name), bias, assumption, equal_sizes=True)


_EXACT = "see bayescv.classical.expectations (exact for given mu, sigma^2, omega, gamma)"
_BAYLE = "see bayescv.classical.expectations; targets the k-fold test error, not Var(mu_hat)"

#: θ_1…θ_5, in the order of :data:`bayescv.classical.estimators.ESTIMATORS`.
CVR_SPECS = (
    _cvr_estimator(
        "theta_1", "mu^2", "mu = 0 (CVR; Grandvalet & Bengio 2006; Geras & Sutton 2013, Table 2)"
    ),
    _cvr_estimator(
        "theta_2", "-omega", "omega = 0 (CVR; Geras & Sutton 2013, Table 2); can be negative"
    ),
    _cvr_estimator("theta_3", "-gamma", "gamma = 0 (CVR; Geras & Sutton 2013, Table 2)"),
    _cvr_estimator(
        "theta_4",
        "-(M/N) omega - ((N-M)/N) gamma",
        "gamma = -M omega/(N-M) (CVR; Geras & Sutton 2013, Table 2)",
    ),
    _cvr_estimator(
        "theta_5",
        "omega - 2 gamma",
        "omega = 2 gamma (CVR; Geras & Sutton 2013, section 5); can be negative",
    ),
)

#: The naive and Bayle et al. (2020) estimators of θ, in the order of ``ESTIMATORS``.
NAIVE_SPECS = (
    Estimator(
        "naive_points",
        _naive_points,
        _EXACT,
        "all N losses independent (Bates et al. 2024, eq. 5, squared)",
        equal_sizes=False,
    ),
    Estimator(
        "naive_folds",
        _naive_folds,
        _EXACT,
        "the K block means independent and identically distributed "
        "(Bates et al. 2024, eq. 9, squared)",
        equal_sizes=False,
    ),
    Estimator(
        "bayle_within",
        bayle_within_core,
        _BAYLE,
        "sigma^2_in / N, within-fold variance (Bayle et al. 2020)",
        equal_sizes=False,
    ),
    Estimator(
        "bayle_all_pairs",
        _bayle_all_pairs,
        _BAYLE,
        "sigma^2_out / N, all-pairs variance (Bayle et al. 2020)",
        equal_sizes=False,
    ),
)

_SPECS = {spec.name: spec for spec in CVR_SPECS}


# --------------------------------------------------------------------------- public functions
@document(THETA, _SPECS)
def theta_1(losses: xr.Dataset | BlockStats) -> xr.DataArray:
    """θ_1 = (1/N) s1 + ((M−1)/N) s2 + ((N−M)/N) s3.

    Examples
    --------
    On three blocks of two losses (equal sizes, which it needs), θ_1 is exactly μ̂², the
    squared mean loss:

    >>> from bayescv.losses import from_arrays
    >>> table = from_arrays([0.1, 0.4, 0.3, 0.2, 0.9, 0.5], [0, 0, 1, 1, 2, 2])
    >>> theta = theta_1(table)
    >>> round(float(theta), 6), bool(np.isclose(theta, table["loss"].mean() ** 2))
    (0.16, True)
    """
    return _SPECS["theta_1"](losses)


@document(THETA, _SPECS)
def theta_2(losses: xr.Dataset | BlockStats) -> xr.DataArray:
    """θ_2 = (1/N) s1 − ((N+1−M)/N) s2 + ((N−M)/N) s3.

    Examples
    --------
    On three blocks of two losses (equal sizes, which it needs), θ_2 is the same quadratic form
    as θ^ω, and here it is negative:

    >>> from bayescv.losses import from_arrays
    >>> table = from_arrays([0.1, 0.4, 0.3, 0.2, 0.9, 0.5], [0, 0, 1, 1, 2, 2])
    >>> from bayescv.classical import theta_omega
    >>> round(float(theta_2(table)), 6), bool(np.isclose(theta_2(table), theta_omega(table)))
    (-0.023333, True)
    """
    return _SPECS["theta_2"](losses)


@document(THETA, _SPECS)
def theta_3(losses: xr.Dataset | BlockStats) -> xr.DataArray:
    """θ_3 = (1/N) s1 + ((M−1)/N) s2 − (M/N) s3.

    Examples
    --------
    On three blocks of two losses (equal sizes, which it needs), θ_3 equals θ^γ, the squared
    standard error of the block means:

    >>> from bayescv.losses import from_arrays
    >>> table = from_arrays([0.1, 0.4, 0.3, 0.2, 0.9, 0.5], [0, 0, 1, 1, 2, 2])
    >>> theta = theta_3(table)
    >>> round(float(theta), 6), bool(np.isclose(theta, naive_se_folds(table) ** 2))
    (0.0225, True)
    """
    return _SPECS["theta_3"](losses)


@document(THETA, _SPECS)
def theta_4(losses: xr.Dataset | BlockStats) -> xr.DataArray:
    """θ_4 = (1/N) s1 − (1/N) s2 = σ²_in / N.

    Examples
    --------
    On three blocks of two losses (equal sizes, which it needs), θ_4 equals θ_A, Bayle et al.'s
    σ²_in divided by N:

    >>> from bayescv.losses import from_arrays
    >>> table = from_arrays([0.1, 0.4, 0.3, 0.2, 0.9, 0.5], [0, 0, 1, 1, 2, 2])
    >>> theta = theta_4(table)
    >>> round(float(theta), 6), bool(np.isclose(theta, sigma2_within(table) / 6))
    (0.007222, True)
    """
    return _SPECS["theta_4"](losses)


@document(THETA, _SPECS)
def theta_5(losses: xr.Dataset | BlockStats) -> xr.DataArray:
    """θ_5 = (1/N) s1 + ((N+M−1)/N) s2 − ((N+M)/N) s3.

    Examples
    --------
    On three blocks of two losses (equal sizes, which it needs), θ_5 = μ̂² + s2 − 2 s3 equals 2
    θ_3 − θ_2 (= 2 θ^γ − θ^ω):

    >>> from bayescv.losses import from_arrays
    >>> table = from_arrays([0.1, 0.4, 0.3, 0.2, 0.9, 0.5], [0, 0, 1, 1, 2, 2])
    >>> theta = theta_5(table)
    >>> round(float(theta), 6), bool(np.isclose(theta, 2 * theta_3(table) - theta_2(table)))
    (0.068333, True)
    """
    return _SPECS["theta_5"](losses)


@document("The standard error (0-d, or along ``replicate``).")
def naive_se_points(losses: xr.Dataset | BlockStats) -> xr.DataArray:
    """Naive standard error from all points, sqrt(Σ_i (e_i − μ̂)²/(N(N−1))) (Bates et al. 2024, eq. 5).

    Treats the N losses as independent, which CV's shared training data breaks; it
    underestimates the standard error when ω or γ are positive.

    Examples
    --------
    Any block sizes; it equals the sample standard deviation of the N losses over √N:

    >>> from bayescv.losses import from_arrays
    >>> loss = [0.1, 0.4, 0.3, 0.2, 0.9, 0.5, 0.6]
    >>> se = naive_se_points(from_arrays(loss, [0, 0, 0, 1, 1, 2, 2]))
    >>> round(float(se), 6), bool(np.isclose(se, np.std(loss, ddof=1) / 7**0.5))
    (0.101686, True)
    """
    stats = block_stats(losses)
    return as_result(np.sqrt(_naive_points(stats)), stats, "se_points")


@document("The standard error (0-d, or along ``replicate``).")
def naive_se_folds(losses: xr.Dataset | BlockStats) -> xr.DataArray:
    """Naive standard error from the K block means, sqrt(Σ_k (ē_k − m)²/(K(K−1))) (Bates et al. 2024, eq. 9).

    ``m``, the unweighted mean of the block means (μ̂ for equal sizes), centres its interval.

    Examples
    --------
    Any block sizes; with block means 0.25, 0.25 and 0.7 it equals their sample standard
    deviation over √K:

    >>> from bayescv.losses import from_arrays
    >>> table = from_arrays([0.1, 0.4, 0.3, 0.2, 0.9, 0.5], [0, 0, 1, 1, 2, 2])
    >>> se = naive_se_folds(table)
    >>> round(float(se), 6), bool(np.isclose(se, np.std([0.25, 0.25, 0.7], ddof=1) / 3**0.5))
    (0.15, True)
    """
    stats = block_stats(losses)
    return as_result(np.sqrt(_naive_folds(stats)), stats, "se_folds")


@document("σ²_in (0-d, or along ``replicate``).")
def sigma2_within(losses: xr.Dataset | BlockStats) -> xr.DataArray:
    """Bayle et al.'s within-fold variance σ²_in = (1/K) Σ_k (1/(n_k−1)) Σ_i (e_ki − ē_k)².

    The interval μ̂ ± z σ̂_in/√N targets the k-fold test error (the mean conditional error of
    the K fitted models), not the expected error over data sets (Bayle et al. 2020).

    Examples
    --------
    Any block sizes; it is the mean of the blocks' sample variances (``ddof=1``):

    >>> from bayescv.losses import from_arrays
    >>> s2 = sigma2_within(from_arrays([0.1, 0.4, 0.3, 0.2, 0.9, 0.5], [0, 0, 1, 1, 2, 2]))
    >>> variances = [np.var(b, ddof=1) for b in ([0.1, 0.4], [0.3, 0.2], [0.9, 0.5])]
    >>> round(float(s2), 6), bool(np.isclose(s2, np.mean(variances)))
    (0.043333, True)
    """
    stats = block_stats(losses)
    return as_result(_sigma2_within(stats), stats, "sigma2_within")


@document("σ²_out (0-d, or along ``replicate``).")
def sigma2_all_pairs(losses: xr.Dataset | BlockStats) -> xr.DataArray:
    """Bayle et al.'s all-pairs variance σ²_out = (1/N) Σ_i (e_i − μ̂)² (Bayle et al. 2020).

    Examples
    --------
    Any block sizes; it is the variance of all N losses (``ddof=0``), so (N − 1) times
    ``naive_se_points`` squared:

    >>> from bayescv.losses import from_arrays
    >>> loss = [0.1, 0.4, 0.3, 0.2, 0.9, 0.5, 0.6]
    >>> s2 = sigma2_all_pairs(from_arrays(loss, [0, 0, 0, 1, 1, 2, 2]))
    >>> round(float(s2), 6), bool(np.isclose(s2, np.var(loss)))
    (0.062041, True)
    """
    stats = block_stats(losses)
    return as_result(_sigma2_all_pairs(stats), stats, "sigma2_all_pairs")
