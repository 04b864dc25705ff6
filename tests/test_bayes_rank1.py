"""Structured (diagonal plus rank-one) log-determinants, solves and draws (bayes._rank1).

Reference: the dense matrix diag(d) + ρ s sᵀ, built explicitly for small K.
"""

import numpy as np
import pytest

from bayescv.bayes._rank1 import rank1_logdet, rank1_mvn, rank1_solve


def _dense(d, s, rho):
    return np.diag(d) + rho * np.outer(s, s)


@pytest.mark.parametrize("rho", [-0.2, 0.0, 0.6])
def test_rank1_solve_equals_dense_solve(rho):
    rng = np.random.default_rng(0)
    d, s, r = rng.uniform(0.5, 2, 6), rng.uniform(0.1, 1, 6), rng.normal(size=6)
    expected = np.linalg.solve(_dense(d, s, rho), r)
    np.testing.assert_allclose(rank1_solve(d, s, np.asarray(rho), r), expected, rtol=1e-12)


@pytest.mark.parametrize("rho", [-0.2, 0.0, 0.6])
def test_rank1_logdet_equals_dense_slogdet(rho):
    rng = np.random.default_rng(2)
    d, s = rng.uniform(0.5, 2, (3, 6)), rng.uniform(0.1, 1, (3, 6))
    rhos = np.full(3, rho)
    logdet, _, _ = rank1_logdet(d, s, rhos)
    expected = [np.linalg.slogdet(_dense(d[i], s[i], rho))[1] for i in range(3)]
    np.testing.assert_allclose(logdet, expected, rtol=1e-12)


@pytest.mark.parametrize("rho", [-0.2, 0.6])
def test_rank1_mvn_has_the_dense_covariance(rho):
    # ρ = −0.2 > −1/(K − 1) = −0.25: still positive definite, the negative rank-one case.
    rng = np.random.default_rng(1)
    k, n = 5, 200_000
    d, s = rng.uniform(0.5, 2, k), rng.uniform(0.5, 1.5, k)
    mean = rng.normal(size=k)
    draws = rank1_mvn(np.broadcast_to(mean, (n, k)), d, s, np.asarray(rho), rng)
    cov = _dense(d, s, rho)
    # Monte Carlo standard error of a sample covariance: sqrt((Σ_ii Σ_jj + Σ_ij²) / n).
    se = np.sqrt((np.outer(np.diag(cov), np.diag(cov)) + cov**2) / n)
    assert np.all(np.abs(np.cov(draws.T) - cov) < 5 * se)
    assert np.all(np.abs(draws.mean(0) - mean) < 5 * np.sqrt(np.diag(cov) / n))
