"""Tests of the exact expectations and biases (bayescv.classical.expectations).

For losses e with mean vector m and covariance Σ, E[eᵀWe] = tr(WΣ) + mᵀWm (an identity of
second moments: it needs no Gaussianity and no positive definiteness of Σ). Σ and m are
built entry by entry from the block structure of Geras & Sutton (2013, eq. 6):
Σ_ii = σ_k², Σ_ij = ω_k (i ≠ j in block k), Σ_ij = γ_kl (i in k, j in l), m_i = μ_k. The
reference matrices W come from tests/test_estimators.py, written from the papers.
"""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr
from test_estimators import (
    ALL_NAMES,
    ANY_SIZES,
    EQUAL_ONLY,
    gamma_pair_weights,
    moment_matrix,
    omega_block_weights,
    point_blocks,
    proposition1_weights,
    reference_matrix,
)

import bayescv.classical.estimators as est
from bayescv.classical.estimators import ESTIMATORS
from bayescv.classical.expectations import coefficients, expected_estimates, true_variance
from bayescv.classical.quadratic import quadratic_estimator


# ----------------------------------------------------------------------------- helpers
def covariance(n, sigma2, omega, gamma) -> np.ndarray:
    """Σ entry by entry from (σ_k², ω_k, γ_kl) (Geras & Sutton 2013, eq. 6, sizes n_k)."""
    blocks = point_blocks(n)
    size = blocks.size
    Sigma = np.empty((size, size))
    for i in range(size):
        for j in range(size):
            k, k2 = blocks[i], blocks[j]
            Sigma[i, j] = sigma2[k] if i == j else omega[k] if k == k2 else gamma[k][k2]
    return Sigma


def mean_vector(n, mu) -> np.ndarray:
    return np.asarray(mu, dtype=float)[point_blocks(n)]


def exact_expectation(W, Sigma, m) -> float:
    """E[eᵀWe] = tr(WΣ) + mᵀWm."""
    return float(np.trace(W @ Sigma) + m @ W @ m)


def heterogeneous(K: int, rng, *, psd: bool):
    """Random (μ_k, σ_k², ω_k, γ_kl): with negative ω and γ, or from a PSD construction."""
    mu = rng.normal(0.5, 0.3, size=K)
    if psd:
        # e_ki = μ_k + a_k u + v_k + ε_ki: γ_kl = a_k a_l var(u), ω_k = a_k² var(u) + var(v_k),
        # σ_k² = ω_k + var(ε_k); a sum of covariances, so Σ is positive semi-definite.
        a = rng.uniform(0.2, 1.5, size=K)
        var_u, var_v, var_e = 0.3, rng.uniform(0, 0.5, size=K), rng.uniform(0.5, 2, size=K)
        omega = a**2 * var_u + var_v
        return mu, omega + var_e, omega, np.outer(a, a) * var_u
    sigma2 = rng.uniform(0.5, 2.0, size=K)
    omega = rng.normal(0.0, 0.5, size=K)
    omega[0] = -0.4  # negative within-block covariance
    g = rng.normal(0.0, 0.3, size=(K, K))
    gamma = (g + g.T) / 2
    gamma[0, 1] = gamma[1, 0] = -0.25  # negative between-block covariance
    return mu, sigma2, omega, gamma


def scenario(n, seed: int, psd: bool):
    rng = np.random.default_rng(seed)
    mu, sigma2, omega, gamma = heterogeneous(len(n), rng, psd=psd)
    Sigma = covariance(n, sigma2, omega, gamma)
    if psd:
        assert np.linalg.eigvalsh(Sigma).min() > -1e-10
    else:
        assert omega.min() < 0
        assert (gamma - np.diag(np.diag(gamma))).min() < 0
    return mu, sigma2, omega, gamma, Sigma, mean_vector(n, mu)


def off_sum(gamma) -> float:
    """Σ_{k≠l} γ_kl."""
    gamma = np.asarray(gamma)
    return float(gamma.sum() - np.trace(gamma))


def probed_matrix(func, n) -> np.ndarray:
    """The symmetric W of the package's estimator, recovered by polarisation of f(x) = xᵀWx.

    f is evaluated on block moments of basis vectors: no knowledge of the package's W needed.
    """
    K = len(n)
    blocks = point_blocks(n)
    size = blocks.size

    def f(x):
        groups = [x[blocks == k] for k in range(K)]
        moments = xr.Dataset(
            {
                "n": ("block", np.asarray(n)),
                "S": ("block", [g.sum() for g in groups]),
                "W": ("block", [((g - g.mean()) ** 2).sum() for g in groups]),
            },
            coords={"block": np.arange(K)},
        )
        return float(func(moments))

    eye = np.eye(size)
    diag = np.array([f(eye[i]) for i in range(size)])
    W = np.diag(diag)
    for i in range(size):
        for j in range(i + 1, size):
            W[i, j] = W[j, i] = (f(eye[i] + eye[j]) - diag[i] - diag[j]) / 2
    return W


EQUAL_SHAPES = [(4, 5), (3, 2), (2, 6)]
UNEQUAL_SIZES = [[3, 5, 2, 4], [2, 7], [6, 2, 3]]


# ----------------------------------------------------- 2a, 2b. expectation = tr(WΣ) + mᵀWm
@pytest.mark.parametrize("psd", [False, True])
@pytest.mark.parametrize(("K", "M"), EQUAL_SHAPES)
def test_expectation_is_trace_formula_equal_sizes(K, M, psd):
    n = [M] * K
    mu, sigma2, omega, gamma, Sigma, m = scenario(n, 10 * K + M, psd)
    ds = expected_estimates(n, mu, sigma2, omega, gamma)
    assert ds["estimator"].values.tolist() == list(ESTIMATORS)
    N = K * M
    theta = Sigma.sum() / N**2  # Var(μ̂) = 1ᵀΣ1/N²
    np.testing.assert_allclose(ds.attrs["theta"], theta, rtol=1e-12)
    for name in ALL_NAMES:
        expected = exact_expectation(reference_matrix(name, n), Sigma, m)
        got = ds["expectation"].sel(estimator=name)
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-14, err_msg=name)
        np.testing.assert_allclose(
            ds["bias"].sel(estimator=name), expected - theta, rtol=1e-9, atol=1e-13
        )


@pytest.mark.parametrize("psd", [False, True])
@pytest.mark.parametrize("n", UNEQUAL_SIZES)
def test_expectation_is_trace_formula_unequal_sizes(n, psd):
    mu, sigma2, omega, gamma, Sigma, m = scenario(n, sum(n), psd)
    ds = expected_estimates(n, mu, sigma2, omega, gamma)
    # the equal-size estimators are left out for unequal sizes
    assert ds["estimator"].values.tolist() == [x for x in ESTIMATORS if x in ANY_SIZES]
    N = sum(n)
    theta = Sigma.sum() / N**2
    np.testing.assert_allclose(ds.attrs["theta"], theta, rtol=1e-12)
    np.testing.assert_allclose(true_variance(n, sigma2, omega, gamma), theta, rtol=1e-12)
    for name in ANY_SIZES:
        expected = exact_expectation(reference_matrix(name, n), Sigma, m)
        np.testing.assert_allclose(
            ds["expectation"].sel(estimator=name), expected, rtol=1e-10, atol=1e-14
        )


def test_estimators_argument_selects_and_orders():
    ds = expected_estimates([4] * 3, 0.2, 1.0, 0.2, 0.05, estimators=["theta_5", "naive_points"])
    assert ds["estimator"].values.tolist() == ["theta_5", "naive_points"]
    # θ_5's bias in CVR is ω − 2γ (Geras & Sutton 2013, §5)
    np.testing.assert_allclose(ds["bias"].sel(estimator="theta_5"), 0.2 - 2 * 0.05, rtol=1e-12)


def test_scalar_parameters_broadcast_like_blocks():
    n = [5, 5, 5]
    a = expected_estimates(n, 0.3, 1.0, 0.2, 0.1)
    b = expected_estimates(n, [0.3] * 3, [1.0] * 3, [0.2] * 3, np.full((3, 3), 0.1))
    np.testing.assert_allclose(a["expectation"], b["expectation"], rtol=1e-14)
    # γ's diagonal is ignored (Geras & Sutton 2013, eq. 6 defines γ_kl for k ≠ l only)
    c = expected_estimates(n, 0.3, 1.0, 0.2, np.full((3, 3), 0.1) + 5 * np.eye(3))
    np.testing.assert_allclose(a["expectation"], c["expectation"], rtol=1e-14)


# ----------------------------------------------------- 2c. biases as printed in the papers
@pytest.mark.parametrize(
    ("mu", "sigma2", "omega", "gamma"),
    [(0.3, 1.0, 0.2, 0.05), (1.7, 0.8, -0.1, -0.03), (-0.4, 2.0, 0.05, 0.3)],
)
@pytest.mark.parametrize(("K", "M"), EQUAL_SHAPES)
def test_table2_and_theta5_biases_cvr(K, M, mu, sigma2, omega, gamma):
    N = K * M
    printed = {  # Geras & Sutton (2013, Table 2); θ_5 in Geras & Sutton (2013, §5)
        "theta_1": mu**2,
        "theta_2": -omega,
        "theta_3": -gamma,
        "theta_4": -(M / N) * omega - ((N - M) / N) * gamma,
        "theta_5": omega - 2 * gamma,
    }
    n = [M] * K
    ds = expected_estimates(n, mu, sigma2, omega, gamma)
    # θ_CVR, Geras & Sutton (2013, eq. 2)
    theta = sigma2 / N + (M - 1) * omega / N + (K - 1) * gamma / K
    np.testing.assert_allclose(ds.attrs["theta"], theta, rtol=1e-12)
    Sigma = covariance(n, [sigma2] * K, [omega] * K, np.full((K, K), gamma))
    m = mean_vector(n, [mu] * K)
    for name, bias in printed.items():
        np.testing.assert_allclose(ds["bias"].sel(estimator=name), bias, rtol=1e-9, atol=1e-13)
        exact = exact_expectation(reference_matrix(name, n), Sigma, m) - theta
        np.testing.assert_allclose(exact, bias, rtol=1e-9, atol=1e-13, err_msg=name)


def table1_mu_term(mu) -> float:
    """Σ_k μ_k² − Σ_{k≠l} μ_k μ_l/(K−1), the μ-part of Table 1's biases (Geras & Sutton 2013)."""
    mu = np.asarray(mu)
    return float((mu**2).sum() - off_sum(np.outer(mu, mu)) / (mu.size - 1))


@pytest.mark.parametrize("psd", [False, True])
@pytest.mark.parametrize(("K", "M"), EQUAL_SHAPES)
def test_table1_biases_cvs(K, M, psd):
    n = [M] * K
    mu, sigma2, omega, gamma, Sigma, m = scenario(n, 3 * K + M, psd)
    ds = expected_estimates(n, mu, sigma2, omega, gamma)
    # θ_CVS, Geras & Sutton (2013, eq. 7)
    theta = (
        sigma2.sum() / (K * K * M) + (M - 1) * omega.sum() / (K * K * M) + off_sum(gamma) / K**2
    )
    np.testing.assert_allclose(ds.attrs["theta"], theta, rtol=1e-12)
    printed = {  # Geras & Sutton (2013, Table 1), rows 3 and 4
        "theta_omega": -omega.sum() / K + (1 - K) / K**2 * table1_mu_term(mu),
        "theta_gamma": -off_sum(gamma) / (K * (K - 1)) + table1_mu_term(mu) / K**2,
    }
    for name, bias in printed.items():
        np.testing.assert_allclose(ds["bias"].sel(estimator=name), bias, rtol=1e-9, atol=1e-13)
    # rows 1 and 2 (per block / per pair), by exact expectation of their W
    mumu = np.outer(mu, mu).sum()
    for k in range(K):
        W = moment_matrix(n, *omega_block_weights(K, M, k))
        bias = -omega[k] + mumu / K**2 - mu[k] ** 2
        np.testing.assert_allclose(exact_expectation(W, Sigma, m) - theta, bias, rtol=1e-9)
    for k, k2 in [(0, 1), (K - 1, 0)]:
        W = moment_matrix(n, *gamma_pair_weights(K, M, k, k2))
        bias = -gamma[k, k2] + mumu / K**2 - mu[k] * mu[k2]
        np.testing.assert_allclose(exact_expectation(W, Sigma, m) - theta, bias, rtol=1e-9)


def test_table1_unbiased_only_with_equal_means():
    # Table 1's "unbiased if" column also needs all μ_k equal (seeds README).
    K, M = 4, 5
    n = [M] * K
    g = np.full((K, K), 0.07)
    equal = expected_estimates(n, 0.6, 1.0, 0.0, g)  # all ω_k = 0, all μ_k equal
    assert abs(float(equal["bias"].sel(estimator="theta_omega"))) < 1e-14
    unequal = expected_estimates(n, [0.2, 0.4, 0.6, 0.8], 1.0, 0.0, g)
    assert abs(float(unequal["bias"].sel(estimator="theta_omega"))) > 1e-3
    no_gamma = expected_estimates(n, 0.6, 1.0, 0.1, 0.0)  # all γ_kl = 0, all μ_k equal
    assert abs(float(no_gamma["bias"].sel(estimator="theta_gamma"))) < 1e-14
    mixed = expected_estimates(n, [0.2, 0.4, 0.6, 0.8], 1.0, 0.1, 0.0)
    assert abs(float(mixed["bias"].sel(estimator="theta_gamma"))) > 1e-3


@pytest.mark.parametrize("psd", [False, True])
@pytest.mark.parametrize(("K", "M"), EQUAL_SHAPES)
def test_theta_a_theta_b_biases(K, M, psd):
    n = [M] * K
    mu, sigma2, omega, gamma, _, _ = scenario(n, 5 * K + M, psd)
    ds = expected_estimates(n, mu, sigma2, omega, gamma)
    # Geras & Sutton (2013, eq. 11) and eq. 12 (no μ terms)
    bias_a = -(omega.sum() + off_sum(gamma)) / K**2
    bias_b = (sigma2.sum() - (M + 1) * omega.sum() - M * off_sum(gamma)) / (K * K * M)
    np.testing.assert_allclose(ds["bias"].sel(estimator="theta_A"), bias_a, rtol=1e-9)
    np.testing.assert_allclose(ds["bias"].sel(estimator="theta_B"), bias_b, rtol=1e-9)


@pytest.mark.parametrize("psd", [False, True])
@pytest.mark.parametrize("n", UNEQUAL_SIZES)
def test_weighted_extension_biases(n, psd):
    mu, sigma2, omega, gamma, Sigma, m = scenario(n, 2 * sum(n), psd)
    sizes = np.asarray(n, dtype=float)
    N = sizes.sum()
    ds = expected_estimates(n, mu, sigma2, omega, gamma)
    nn = off_sum(np.outer(sizes, sizes) * gamma)  # Σ_{k≠l} n_k n_l γ_kl
    # the bias strings of ESTIMATORS["theta_A_weighted"] and ["theta_B_weighted"]
    bias_a = -((sizes**2) @ omega + nn) / N**2
    bias_b = (sizes @ sigma2 - (sizes * (sizes + 1)) @ omega - nn) / N**2
    theta = Sigma.sum() / N**2
    for name, bias in {"theta_A_weighted": bias_a, "theta_B_weighted": bias_b}.items():
        np.testing.assert_allclose(ds["bias"].sel(estimator=name), bias, rtol=1e-9, atol=1e-14)
        exact = exact_expectation(reference_matrix(name, n), Sigma, m) - theta
        np.testing.assert_allclose(exact, bias, rtol=1e-9, atol=1e-14)


@pytest.mark.parametrize(("K", "M"), [(3, 2), (2, 3)])
def test_proposition1_bias_by_exact_expectation(K, M):
    rng = np.random.default_rng(K * M + 1)
    n = [M] * K
    N = K * M
    for _ in range(3):
        a1, a2, a3 = rng.normal(size=3)
        a4 = a1 + a2 + a3 + 1  # Proposition 1: α1 + α2 + α3 − α4 = −1
        estimator = quadratic_estimator(a1, a2, a3, a4)
        W = probed_matrix(estimator, n)  # the package's own W
        np.testing.assert_allclose(
            W, moment_matrix(n, *proposition1_weights((a1, a2, a3, a4), K, M)), atol=1e-12
        )
        mu, sigma2, omega, gamma = rng.normal(), rng.uniform(0.5, 2), rng.normal(), rng.normal()
        Sigma = covariance(n, [sigma2] * K, [omega] * K, np.full((K, K), gamma))
        theta = (
            sigma2 / N + (M - 1) * omega / N + (K - 1) * gamma / K
        )  # Geras & Sutton (2013, eq. 2)
        bias = exact_expectation(W, Sigma, mean_vector(n, [mu] * K)) - theta
        expected = a1 * sigma2 + a2 * omega + a3 * gamma + a4 * mu**2  # corrected Prop. 1
        np.testing.assert_allclose(bias, expected, rtol=1e-9, atol=1e-12)


def test_proposition1_refuses_inadmissible_alphas():
    with pytest.raises(ValueError, match="Proposition 1"):
        quadratic_estimator(0.1, 0.2, 0.3, 0.4)  # 0.1 + 0.2 + 0.3 − 0.4 = 0.2 ≠ −1


@pytest.mark.parametrize(
    ("name", "func"),
    [
        ("theta_3", est.theta_3),
        ("theta_omega", est.theta_omega),
        ("naive_folds", lambda t: est.naive_se_folds(t) ** 2),
        ("theta_B_weighted", est.theta_B_weighted),
    ],
)
def test_package_matrix_by_probing(name, func):
    # W recovered from the package's values alone agrees with the paper-built reference
    n = [3, 3, 3] if name in EQUAL_ONLY else [2, 4, 3]
    np.testing.assert_allclose(probed_matrix(func, n), reference_matrix(name, n), atol=1e-12)


# ---------------------------------------------------------------- true_variance
def test_true_variance_matches_eq7_and_the_covariance_sum():
    n = [4, 4, 4]
    rng = np.random.default_rng(3)
    _, sigma2, omega, gamma, _, _ = scenario(n, 99, psd=True)
    K, M = 3, 4
    eq7 = sigma2.sum() / (K * K * M) + (M - 1) * omega.sum() / (K * K * M) + off_sum(gamma) / K**2
    np.testing.assert_allclose(true_variance(n, sigma2, omega, gamma), eq7, rtol=1e-12)
    sizes = [2, 6, 3]
    _mu, s2, om, ga, Sigma, _ = scenario(sizes, int(rng.integers(1000)), psd=False)
    np.testing.assert_allclose(true_variance(sizes, s2, om, ga), Sigma.sum() / 11**2, rtol=1e-12)


# ---------------------------------------------------------------- 6. bad input
def test_errors():
    with pytest.raises(ValueError, match="needs equal block sizes"):
        expected_estimates([3, 4], 0.0, 1.0, 0.1, 0.0, estimators=["theta_3"])
    with pytest.raises(ValueError, match="unknown estimator"):
        expected_estimates([3, 3], 0.0, 1.0, 0.1, 0.0, estimators=["theta_9"])
    with pytest.raises(ValueError, match="unknown estimator"):
        coefficients("bogus", [3, 3])
    with pytest.raises(ValueError, match="symmetric"):
        expected_estimates([3, 3], 0.0, 1.0, 0.1, [[0.0, 0.1], [0.2, 0.0]])
    with pytest.raises(ValueError, match=r"\(3, 3\) matrix"):
        expected_estimates([3, 3, 3], 0.0, 1.0, 0.1, np.zeros((2, 2)))
    with pytest.raises(ValueError, match="finite"):
        expected_estimates([3, 3], np.nan, 1.0, 0.1, 0.0)
    with pytest.raises(ValueError, match="at least 2"):
        true_variance([3, 1], 1.0, 0.1, 0.0)
    with pytest.raises(ValueError, match="integers"):
        true_variance([3, 2.5], 1.0, 0.1, 0.0)
    with pytest.raises(ValueError, match="at least 2 blocks"):
        true_variance([3], 1.0, 0.1, 0.0)


# ---------------------------------------------------------------- 9. Monte Carlo sanity
def simulate_moments(n_rep, K, M, mu, a, var_u, var_v, var_e, rng) -> xr.Dataset:
    """Block moments of e_ki = μ_k + a_k u + v_k + ε_ki, one row per independent data set."""
    u = rng.normal(size=(n_rep, 1, 1)) * np.sqrt(var_u)
    v = rng.normal(size=(n_rep, K, 1)) * np.sqrt(var_v)[:, None]
    eps = rng.normal(size=(n_rep, K, M)) * np.sqrt(var_e)[:, None]
    e = mu[:, None] + a[:, None] * u + v + eps
    S = e.sum(axis=2)
    W = ((e - e.mean(axis=2, keepdims=True)) ** 2).sum(axis=2)
    dims = ("replicate", "block")
    return xr.Dataset(
        {"n": (dims, np.full((n_rep, K), M)), "S": (dims, S), "W": (dims, W)},
        coords={"block": np.arange(K), "replicate": np.arange(n_rep)},
    )


@pytest.mark.parametrize("cvs", [False, True])
def test_monte_carlo_means_match_exact_expectations(cvs):
    rng = np.random.default_rng(2024 + cvs)
    K, M, R = 5, 8, 20_000
    if cvs:  # heterogeneous sources
        mu, a = rng.uniform(0.1, 0.5, K), rng.uniform(0.5, 1.5, K)
        var_v, var_e = rng.uniform(0.0, 0.05, K), rng.uniform(0.05, 0.2, K)
    else:  # CVR: exchangeable blocks
        mu, a, var_v, var_e = np.full(K, 0.3), np.ones(K), np.full(K, 0.02), np.full(K, 0.1)
    var_u = 0.01
    # the construction's moments: γ_kl = a_k a_l var(u), ω_k = a_k² var(u) + var(v_k),
    # σ_k² = ω_k + var(ε_k)
    omega = a**2 * var_u + var_v
    gamma = np.outer(a, a) * var_u
    exact = expected_estimates([M] * K, mu, omega + var_e, omega, gamma)
    moments = simulate_moments(R, K, M, mu, a, var_u, var_v, var_e, rng)
    names = ["theta_3", *(x for x in ALL_NAMES if x != "theta_3")]
    for name in names:
        func = getattr(est, name, None) or ESTIMATORS[name].func
        values = np.asarray(func(est.block_stats(moments)))
        assert values.shape == (R,)
        mc_se = values.std(ddof=1) / np.sqrt(R)
        expected = float(exact["expectation"].sel(estimator=name))
        assert abs(values.mean() - expected) < 4 * mc_se, name
    # and Var(μ̂) across the independent data sets matches θ (SE of a normal variance)
    mu_hat = est.block_stats(moments).mu_hat
    theta = exact.attrs["theta"]
    assert abs(mu_hat.var(ddof=1) - theta) < 4 * theta * np.sqrt(2 / (R - 1))


def test_negative_point_variance_is_refused():
    """σ_k² is a variance: true_variance([20] * 5, -1, 0.1, 0.02) returned 0.025, a number
    from impossible moments, and expected_estimates gave biases for it."""
    with pytest.raises(ValueError, match="sigma2 holds variances"):
        true_variance([20] * 5, -1.0, 0.1, 0.02)
    with pytest.raises(ValueError, match="sigma2 holds variances"):
        expected_estimates([20] * 5, 0.0, [1.0, 1.0, -0.5, 1.0, 1.0], 0.1, 0.02)
