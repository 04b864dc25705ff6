"""Tests of the closed-form variance estimators (bayescv.classical.estimators).

Every estimator is a quadratic form eᵀWe of the losses. The reference matrices W below are
built entry by entry, independently of the package, from the published formulas:

* the Geras–Sutton moments (Geras & Sutton 2013, §4.2): s_k^σ² = (1/M) Σ_i e_ki²
  puts a_k/n_k on W_ii, s_k^ω = Σ_{i≠j} e_ki e_kj / (M(M−1)) puts b_k/(n_k(n_k−1)) on W_ij
  (i ≠ j in block k), s_kl^γ = ē_k ē_l puts c_kl/(n_k n_l) on W_ij (i in k, j in l);
* the weights (a, b, c) of Table 2 and θ_5 (Geras & Sutton 2013, §5; s1, s2, s3 as defined there), Table 1,
  eqs. 11 (θ_A) and 12 (θ_B) and Proposition 1 as corrected in the seeds README;
* centring matrices for the variance-type estimators: Bates et al. eqs. 5 and 9 (Bates, Hastie & Tibshirani 2024),
  Bayle et al.'s σ²_in and σ²_out (seeds README), and the docstring formula of
  theta_A_weighted, (1/N²) Σ_k n_k W_k/(n_k − 1).
"""

from __future__ import annotations

import itertools
import pickle
from fractions import Fraction

import numpy as np
import pytest
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st

import bayescv.classical.estimators as est
from bayescv.classical.estimators import ESTIMATORS, BlockStats, block_stats
from bayescv.classical.expectations import coefficients
from bayescv.classical.quadratic import gs_moments, quadratic_estimator
from bayescv.losses import from_arrays
from bayescv.moments import block_moments

EQUAL_ONLY = (
    "theta_1", "theta_2", "theta_3", "theta_4", "theta_5",
    "theta_omega", "theta_gamma", "theta_A", "theta_B",
)  # fmt: skip
ANY_SIZES = (
    "theta_A_weighted", "theta_B_weighted", "naive_points", "naive_folds",
    "bayle_within", "bayle_all_pairs",
)  # fmt: skip
ALL_NAMES = EQUAL_ONLY + ANY_SIZES
TRANSLATION_INVARIANT = tuple(name for name in ALL_NAMES if name != "theta_1")


# ----------------------------------------------------------------------------- references
def point_blocks(n) -> np.ndarray:
    """Block of every point, blocks contiguous in label order (the table's own order)."""
    return np.repeat(np.arange(len(n)), n)


def moment_matrix(n, a, b, c) -> np.ndarray:
    """W of Σ_k a_k s_k^σ² + Σ_k b_k s_k^ω + Σ_{k≠l} c_kl s_kl^γ, entry by entry (Geras & Sutton 2013, §4.2)."""
    n = np.asarray(n)
    blocks = point_blocks(n)
    size = blocks.size
    W = np.zeros((size, size))
    for i in range(size):
        for j in range(size):
            k, k2 = blocks[i], blocks[j]
            if i == j:  # e_ki² appears in s_k^σ² = (1/n_k) Σ_i e_ki²
                W[i, j] = a[k] / n[k]
            elif k == k2:  # e_ki e_kj in s_k^ω = Σ_{i≠j} e_ki e_kj / (n_k (n_k − 1))
                W[i, j] = b[k] / (n[k] * (n[k] - 1))
            else:  # e_ki e_lj in s_kl^γ = ē_k ē_l = Σ_ij e_ki e_lj / (n_k n_l)
                W[i, j] = c[k][k2] / (n[k] * n[k2])
    return W


def paper_weights(name: str, K: int, M: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(a_k, b_k, c_kl) of an estimator, written out from Geras & Sutton 2013 (equal block sizes M)."""
    N = K * M
    ones, off = np.ones(K), 1.0 - np.eye(K)
    # Geras & Sutton (2013, Table 2) (θ_1…θ_4) and §5 (θ_5): θ = A s1 + B s2 + C s3 with
    # s1 = (1/K) Σ_k s_k^σ², s2 = (1/K) Σ_k s_k^ω, s3 = Σ_{k≠l} s_kl^γ / (K(K−1)).
    table2 = {
        "theta_1": (1 / N, (M - 1) / N, (N - M) / N),
        "theta_2": (1 / N, -(N + 1 - M) / N, (N - M) / N),
        "theta_3": (1 / N, (M - 1) / N, -M / N),
        "theta_4": (1 / N, -1 / N, 0.0),
        "theta_5": (1 / N, (N + M - 1) / N, -(N + M) / N),
    }
    if name in table2:
        A, B, C = table2[name]
        return ones * A / K, ones * B / K, off * C / (K * (K - 1))
    if name == "theta_omega":  # Table 1, row ∀k ω_k = 0
        return ones / (K * K * M), ones * (M - 1 - K * M) / (K * K * M), off / K**2
    if name == "theta_gamma":  # Table 1, row ∀k,l γ_kl = 0
        return ones / (K * K * M), ones * (M - 1) / (K * K * M), -off / (K * K * (K - 1))
    if name == "theta_A":  # eq. 11: (1/(K²M)) Σ_k (s_k^σ² − s_k^ω)
        return ones / (K * K * M), -ones / (K * K * M), 0 * off
    if name == "theta_B":  # eq. 12: (2/(K²M)) Σ_k (s_k^σ² − s_k^ω)
        return 2 * ones / (K * K * M), -2 * ones / (K * K * M), 0 * off
    raise KeyError(name)


def omega_block_weights(K: int, M: int, k_tilde: int):
    """Geras & Sutton (2013, Table 1), row ω_k̃ = 0: θ̂^ω_k̃."""
    a = np.ones(K) / (K * K * M)
    b = np.ones(K) * (M - 1) / (K * K * M)
    b[k_tilde] -= 1.0
    return a, b, (1.0 - np.eye(K)) / K**2


def gamma_pair_weights(K: int, M: int, k_tilde: int, l_tilde: int):
    """Geras & Sutton (2013, Table 1), row γ_k̃l̃ = 0: θ̂^γ_k̃l̃ (minus (s_k̃l̃ + s_l̃k̃)/2)."""
    a = np.ones(K) / (K * K * M)
    b = np.ones(K) * (M - 1) / (K * K * M)
    c = (1.0 - np.eye(K)) / K**2
    c[k_tilde, l_tilde] -= 0.5
    c[l_tilde, k_tilde] -= 0.5
    return a, b, c


def proposition1_weights(alphas, K: int, M: int):
    """Geras & Sutton (2013, Proposition 1) as corrected in the seeds README: A = α₁ + 1/N etc. on s1, s2, s3."""
    N = K * M
    a1, a2, a3, _ = alphas
    A, B, C = a1 + 1 / N, a2 + (M - 1) / N, a3 + (N - M) / N
    return np.ones(K) * A / K, np.ones(K) * B / K, (1.0 - np.eye(K)) * C / (K * (K - 1))


def centring(size: int) -> np.ndarray:
    """I − J/size: xᵀ(I − J/size)x = Σ (x_i − x̄)²."""
    return np.eye(size) - np.full((size, size), 1.0 / size)


def direct_matrix(name: str, n) -> np.ndarray:
    """W of the variance-type estimators from their definitions (any block sizes)."""
    n = np.asarray(n)
    K, N = n.size, int(n.sum())
    blocks = point_blocks(n)
    if name == "naive_points":  # Bates eq. 5 squared: Σ_i (e_i − μ̂)² / (N(N−1))
        return centring(N) / (N * (N - 1))
    if name == "bayle_all_pairs":  # σ²_out/N, σ²_out = (1/N) Σ_i (e_i − μ̂)² (Bayle et al.)
        return centring(N) / N**2
    if name == "naive_folds":  # Bates eq. 9 squared: Σ_k (ē_k − mean ē)² / (K(K−1))
        L = np.zeros((K, N))
        L[blocks, np.arange(N)] = 1.0 / n[blocks]  # row k of L e is ē_k
        return L.T @ centring(K) @ L / (K * (K - 1))
    # Block-diagonal Σ_k w_k Σ_{i∈k} (e_ki − ē_k)²/(n_k − 1):
    weight = {
        "bayle_within": np.full(K, 1.0 / (K * N)),  # σ²_in/N, σ²_in = (1/K) Σ_k W_k/(n_k−1)
        "theta_A_weighted": n / N**2,  # docstring: (1/N²) Σ_k n_k W_k/(n_k − 1)
        "theta_B_weighted": 2 * n / N**2,  # docstring: 2 θ_A_weighted
    }[name]
    W = np.zeros((N, N))
    for k in range(K):
        idx = np.flatnonzero(blocks == k)
        W[np.ix_(idx, idx)] = weight[k] * centring(n[k]) / (n[k] - 1)
    return W


def reference_matrix(name: str, n) -> np.ndarray:
    """The independent W of any registered estimator for block sizes n."""
    if name in EQUAL_ONLY:
        n = np.asarray(n)
        assert np.all(n == n[0]), "paper formulas need equal sizes"
        return moment_matrix(n, *paper_weights(name, n.size, int(n[0])))
    return direct_matrix(name, n)


def public_value(name: str, table) -> float:
    """The estimate through the public functions of bayescv.classical.estimators."""
    stats = block_stats(table)
    N = stats.N if stats.replicated else stats.N[0]
    special = {
        "naive_points": lambda t: est.naive_se_points(t) ** 2,
        "naive_folds": lambda t: est.naive_se_folds(t) ** 2,
        "bayle_within": lambda t: est.sigma2_within(t) / N,
        "bayle_all_pairs": lambda t: est.sigma2_all_pairs(t) / N,
    }
    func = special[name] if name in special else getattr(est, name)
    return np.asarray(func(table))


def losses_for(n, rng, *, loc=1.5) -> tuple[np.ndarray, np.ndarray]:
    """Random losses with block offsets (so μ-terms matter), in table order."""
    blocks = point_blocks(n)
    offsets = rng.normal(0.0, 0.7, size=len(n))
    return loc + offsets[blocks] + rng.normal(size=blocks.size), blocks


def quad(W: np.ndarray, e: np.ndarray) -> float:
    return float(e @ W @ e)


EQUAL_SHAPES = [(4, 5), (2, 3), (3, 2), (6, 4)]  # (K, M)
UNEQUAL_SIZES = [[3, 5, 2, 4], [2, 7], [6, 2, 3]]


# ------------------------------------------------------------ 1. against eᵀWe entry by entry
def test_every_registered_estimator_has_a_reference():
    # A new estimator without a reference W here would go untested.
    assert set(ESTIMATORS) == set(ALL_NAMES)
    for name in ALL_NAMES:
        assert ESTIMATORS[name].equal_sizes == (name in EQUAL_ONLY)


@pytest.mark.parametrize("name", ALL_NAMES)
@pytest.mark.parametrize(("K", "M"), EQUAL_SHAPES)
def test_equal_sizes_against_quadratic_form(name, K, M):
    rng = np.random.default_rng(K * 100 + M)
    n = [M] * K
    e, blocks = losses_for(n, rng)
    table = from_arrays(e, blocks)
    W = reference_matrix(name, n)
    expected = quad(W, e)
    got = public_value(name, table)
    assert got.shape == ()
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-14)
    # the same value from the block moments and from BlockStats, and from the registry
    stats = block_stats(block_moments(table))
    np.testing.assert_allclose(public_value(name, stats), expected, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(ESTIMATORS[name].func(stats)[0], expected, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("name", ANY_SIZES)
@pytest.mark.parametrize("n", UNEQUAL_SIZES)
def test_unequal_sizes_against_quadratic_form(name, n):
    rng = np.random.default_rng(sum(n))
    e, blocks = losses_for(n, rng)
    # labels given shuffled: the table sorts points by block, eᵀWe is order-free per block
    perm = rng.permutation(e.size)
    table = from_arrays(e[perm], blocks[perm])
    got = public_value(name, table)
    np.testing.assert_allclose(got, quad(direct_matrix(name, n), e), rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("name", ALL_NAMES)
@pytest.mark.parametrize("n", [[5] * 4, [3] * 2, *UNEQUAL_SIZES])
def test_expectations_coefficients_give_the_same_matrix(name, n):
    if name in EQUAL_ONLY and len(set(n)) > 1:
        with pytest.raises(ValueError, match="equal block sizes"):
            coefficients(name, n)
        return
    a, b, c = coefficients(name, n)
    assert np.all(np.diag(c) == 0)
    np.testing.assert_allclose(
        moment_matrix(n, a, b, c), reference_matrix(name, n), rtol=1e-12, atol=1e-15
    )


@pytest.mark.parametrize(("K", "M"), EQUAL_SHAPES)
def test_theta_omega_block_against_table1(K, M):
    rng = np.random.default_rng(7 + K + M)
    e, blocks = losses_for([M] * K, rng)
    got = est.theta_omega_block(from_arrays(e, blocks))
    assert got.dims == ("block",)
    assert got["block"].values.tolist() == list(range(K))
    for k in range(K):
        W = moment_matrix([M] * K, *omega_block_weights(K, M, k))
        np.testing.assert_allclose(got.values[k], quad(W, e), rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize(("K", "M"), EQUAL_SHAPES)
def test_theta_gamma_pair_against_table1(K, M):
    rng = np.random.default_rng(11 + K + M)
    e, blocks = losses_for([M] * K, rng)
    got = est.theta_gamma_pair(from_arrays(e, blocks))
    assert got.dims == ("block", "block_other")
    assert np.all(np.isnan(np.diag(got.values)))
    for k, k2 in itertools.permutations(range(K), 2):
        W = moment_matrix([M] * K, *gamma_pair_weights(K, M, k, k2))
        np.testing.assert_allclose(got.values[k, k2], quad(W, e), rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize(("K", "M"), EQUAL_SHAPES)
def test_quadratic_estimator_against_proposition1(K, M):
    rng = np.random.default_rng(3 * K + M)
    e, blocks = losses_for([M] * K, rng)
    table = from_arrays(e, blocks)
    for _ in range(5):
        a1, a2, a3 = rng.normal(size=3)
        alphas = (a1, a2, a3, a1 + a2 + a3 + 1)  # Proposition 1: α1 + α2 + α3 − α4 = −1
        got = quadratic_estimator(*alphas)(table)
        W = moment_matrix([M] * K, *proposition1_weights(alphas, K, M))
        np.testing.assert_allclose(got, quad(W, e), rtol=1e-10, atol=1e-12)
        assert got.attrs["bias"].startswith(f"{a1:g} sigma^2")


@pytest.mark.parametrize(("K", "M"), EQUAL_SHAPES)
def test_table2_estimators_are_members_of_proposition1(K, M):
    # Geras & Sutton (2013, Table 2) and §5: θ_1 bias μ², θ_2 −ω, θ_3 −γ, θ_4 −(M/N)ω − ((N−M)/N)γ, θ_5 ω − 2γ.
    N = K * M
    members = {
        "theta_1": (0, 0, 0, 1),
        "theta_2": (0, -1, 0, 0),
        "theta_3": (0, 0, -1, 0),
        "theta_4": (0, -M / N, -(N - M) / N, 0),
        "theta_5": (0, 1, -2, 0),
    }
    rng = np.random.default_rng(K + 5 * M)
    table = from_arrays(*losses_for([M] * K, rng))
    for name, alphas in members.items():
        np.testing.assert_allclose(
            quadratic_estimator(*alphas)(table), getattr(est, name)(table), rtol=1e-12
        )


def test_quadratic_estimator_constraint_and_finiteness():
    with pytest.raises(ValueError, match="alpha1 \\+ alpha2 \\+ alpha3 - alpha4 = -1"):
        quadratic_estimator(0, 1, -2, 0.5)
    with pytest.raises(ValueError, match="finite"):
        quadratic_estimator(np.nan, 0, 0, 1)
    # α₄ multiplies μ² (the seeds README corrects Proposition 1's "α₄μ")
    assert quadratic_estimator(0, 1, -2, 0).__doc__.endswith("0 mu^2.")


# ------------------------------------------------------------------- 3. identities
@pytest.mark.parametrize(("K", "M"), EQUAL_SHAPES)
def test_identities_on_equal_sizes(K, M):
    # seeds README, "Useful identities on equal-size data"
    rng = np.random.default_rng(100 + K * M)
    e, blocks = losses_for([M] * K, rng)
    table = from_arrays(e, blocks)
    v = {name: float(public_value(name, table)) for name in ALL_NAMES}
    N = K * M
    mu_hat = e.mean()
    block_means = e.reshape(K, M).mean(axis=1)
    se2_means = block_means.var(ddof=1) / K
    close = lambda x, y: np.testing.assert_allclose(x, y, rtol=1e-11, atol=1e-15)  # noqa: E731
    close(v["theta_1"], mu_hat**2)
    close(v["theta_omega"], v["theta_2"])
    close(v["theta_gamma"], v["theta_3"])
    close(v["theta_3"], se2_means)
    close(v["naive_folds"], se2_means)
    close(v["theta_4"], v["theta_A"])
    close(v["theta_A"], v["bayle_within"])
    close(v["theta_B"], 2 * v["theta_A"])
    close(v["theta_A_weighted"], v["theta_A"])
    close(v["theta_B_weighted"], v["theta_B"])
    close(float(est.sigma2_all_pairs(table)), (N - 1) * v["naive_points"])
    close(float(est.sigma2_within(table)), e.reshape(K, M).var(axis=1, ddof=1).mean())
    close(float(est.sigma2_all_pairs(table)), e.var())
    close(float(est.naive_se_points(table)), e.std(ddof=1) / np.sqrt(N))  # Bates eq. 5
    close(float(est.theta_omega_block(table).mean()), v["theta_omega"])
    close(float(np.nanmean(est.theta_gamma_pair(table).values)), v["theta_gamma"])


@pytest.mark.parametrize("n", [[4, 4, 4], [3, 5, 2, 4], [2, 2]])
def test_gs_moments_against_loops(n):
    rng = np.random.default_rng(len(n) + sum(n))
    e, blocks = losses_for(n, rng)
    got = gs_moments(from_arrays(e, blocks))
    K = len(n)
    groups = [e[blocks == k] for k in range(K)]
    # Geras & Sutton (2013, §4.2), each block with its own size
    s_sigma2 = [sum(x * x for x in g) / len(g) for g in groups]
    s_omega = [
        sum(g[i] * g[j] for i in range(len(g)) for j in range(len(g)) if i != j)
        / (len(g) * (len(g) - 1))
        for g in groups
    ]
    s_gamma = np.full((K, K), np.nan)
    for k, k2 in itertools.permutations(range(K), 2):
        s_gamma[k, k2] = sum(x * y for x in groups[k] for y in groups[k2]) / (n[k] * n[k2])
    np.testing.assert_allclose(got["s_sigma2"].values, s_sigma2, rtol=1e-12)
    np.testing.assert_allclose(got["s_omega"].values, s_omega, rtol=1e-12)
    np.testing.assert_allclose(got["s_gamma"].values, s_gamma, rtol=1e-12)
    # s1, s2, s3 as in Geras & Sutton (2013, §5)
    np.testing.assert_allclose(float(got["s1"]), np.mean(s_sigma2), rtol=1e-12)
    np.testing.assert_allclose(float(got["s2"]), np.mean(s_omega), rtol=1e-12)
    np.testing.assert_allclose(float(got["s3"]), np.nanmean(s_gamma), rtol=1e-12)


@pytest.mark.parametrize(("K", "M"), [(4, 5), (3, 2)])
def test_table2_from_gs_moments(K, M):
    # Geras & Sutton (2013, Table 2) evaluated directly on the pooled moments s1, s2, s3.
    rng = np.random.default_rng(K * M)
    table = from_arrays(*losses_for([M] * K, rng))
    m = gs_moments(table)
    s1, s2, s3 = float(m["s1"]), float(m["s2"]), float(m["s3"])
    N = K * M
    np.testing.assert_allclose(
        est.theta_5(table), s1 / N + (N + M - 1) / N * s2 - (N + M) / N * s3, rtol=1e-9
    )
    np.testing.assert_allclose(est.theta_4(table), (s1 - s2) / N, rtol=1e-10)


# -------------------------------------------------------------------- replicates
def test_replicates_with_an_absent_block_match_each_run_alone():
    rng = np.random.default_rng(5)
    # replicate 0 has blocks 0, 1, 2; replicate 1 has 0, 1, 3 (block 2 absent, 3 new)
    b0 = np.repeat([0, 1, 2], 4)
    b1 = np.repeat([0, 1, 3], 4)
    e = rng.normal(1.0, 1.0, size=(2, 12))
    stacked = from_arrays(e, np.stack([b0, b1]), replicate_kind="independent")
    alone = [from_arrays(e[0], b0), from_arrays(e[1], b1)]
    for name in ALL_NAMES:
        got = public_value(name, stacked)
        assert got.shape == (2,)
        for r in range(2):
            np.testing.assert_allclose(got[r], public_value(name, alone[r]), rtol=1e-12)
    per_block = est.theta_omega_block(stacked)
    assert per_block.dims == ("replicate", "block")
    assert np.isnan(per_block.values[0, 3])
    assert np.isnan(per_block.values[1, 2])
    np.testing.assert_allclose(
        per_block.values[1, [0, 1, 3]], est.theta_omega_block(alone[1]).values, rtol=1e-12
    )
    pairs = est.theta_gamma_pair(stacked)
    assert pairs.dims == ("replicate", "block", "block_other")
    np.testing.assert_allclose(
        pairs.values[0][np.ix_([0, 1, 2], [0, 1, 2])],
        est.theta_gamma_pair(alone[0]).values,
        rtol=1e-12,
    )


# -------------------------------------------------------------- 4. hypothesis properties
@st.composite
def block_losses(draw):
    """Equal-size block losses (K, M) and a seed for permutations."""
    K = draw(st.integers(2, 5))
    M = draw(st.integers(2, 6))
    values = draw(
        st.lists(
            st.floats(-50, 50, allow_nan=False, allow_infinity=False),
            min_size=K * M,
            max_size=K * M,
        )
    )
    return np.asarray(values).reshape(K, M), draw(st.integers(0, 2**32 - 1))


def all_estimates(e2d: np.ndarray, labels=None) -> dict[str, float]:
    K, M = e2d.shape
    labels = np.arange(K) if labels is None else np.asarray(labels)
    stats = block_stats(from_arrays(e2d.ravel(), np.repeat(labels, M)))  # reduce once
    out = {name: float(public_value(name, stats)) for name in ALL_NAMES}
    out["mu_hat"] = float(stats.mu_hat[0])
    return out


def assert_same(x: dict, y: dict, scale: float, factor: float = 1.0, names=None) -> None:
    # θ̂ is quadratic: rounding errors are of order eps × (size of the losses)²
    for name in names or x:
        np.testing.assert_allclose(
            y[name], factor * x[name], rtol=1e-9, atol=1e-10 * factor * scale**2, err_msg=name
        )


PROPERTY = settings(max_examples=50, deadline=None)


@PROPERTY
@given(block_losses())
def test_permuting_points_within_blocks_changes_nothing(data):
    e2d, seed = data
    rng = np.random.default_rng(seed)
    permuted = np.stack([rng.permutation(row) for row in e2d])
    scale = 1.0 + np.abs(e2d).max()
    assert_same(all_estimates(e2d), all_estimates(permuted), scale)


@PROPERTY
@given(block_losses())
def test_relabelling_blocks_changes_nothing(data):
    e2d, seed = data
    rng = np.random.default_rng(seed)
    K = e2d.shape[0]
    labels = rng.permutation(K) * 3 + 10  # a permutation of the labels (and new names)
    scale = 1.0 + np.abs(e2d).max()
    before, after = all_estimates(e2d), all_estimates(e2d, labels)
    assert_same(before, after, scale)
    # per-block values follow their block, whatever its label
    M = e2d.shape[1]
    by_label = est.theta_omega_block(from_arrays(e2d.ravel(), np.repeat(labels, M)))
    plain = est.theta_omega_block(from_arrays(e2d.ravel(), np.repeat(np.arange(K), M)))
    np.testing.assert_allclose(
        by_label.sel(block=labels).values, plain.values, rtol=1e-9, atol=1e-10 * scale**2
    )


@PROPERTY
@given(block_losses(), st.floats(0.01, 100), st.integers(-8, 8))
def test_scaling_losses_scales_estimates_by_c_squared(data, c, power):
    e2d, _ = data
    scale = 1.0 + np.abs(e2d).max()
    before = all_estimates(e2d)
    after = all_estimates(c * e2d)
    assert_same(before, after, scale, factor=c**2, names=ALL_NAMES)
    np.testing.assert_allclose(
        after["mu_hat"], c * before["mu_hat"], rtol=1e-12, atol=1e-14 * c * scale
    )
    # a power of two scales every operation exactly
    exact = all_estimates(2.0**power * e2d)
    for name in ALL_NAMES:
        # (atol only for squares of tiny losses that fall below the normal range)
        np.testing.assert_allclose(exact[name], 4.0**power * before[name], rtol=1e-13, atol=1e-290)


@PROPERTY
@given(block_losses(), st.floats(-1000, 1000).filter(lambda c: abs(c) > 0.5))
def test_adding_a_constant(data, c):
    e2d, _ = data
    before, after = all_estimates(e2d), all_estimates(e2d + c)
    # θ̂ is unchanged iff α₄ = a + b + c = 0; for θ_1 (α₄ = 1) θ_1 = μ̂² moves to (μ̂ + c)².
    # Adding c rounds the losses at ulp(|c| + 50), hence the absolute tolerance.
    scale = 1.0 + np.abs(e2d).max() + abs(c)
    for name in TRANSLATION_INVARIANT:
        np.testing.assert_allclose(
            after[name], before[name], rtol=1e-8, atol=1e-9 * scale**2, err_msg=name
        )
    np.testing.assert_allclose(after["theta_1"], (before["mu_hat"] + c) ** 2, rtol=1e-9)
    shift = c * (2 * before["mu_hat"] + c)  # (μ̂ + c)² − μ̂²
    if abs(shift) > 1e-6 * scale**2:
        assert not np.isclose(after["theta_1"], before["theta_1"], rtol=1e-9)


# ------------------------------------------------------------------------ 5. numerics
def exact_moments(e2d: np.ndarray):
    """s1, s2, s3, θ_A pieces in exact rational arithmetic (Geras & Sutton 2013, §4.2, §5)."""
    K, M = e2d.shape
    rows = [[Fraction(float(x)) for x in row] for row in e2d]
    sums = [sum(r) for r in rows]
    squares = [sum(x * x for x in r) for r in rows]
    s_sigma2 = [q / M for q in squares]
    s_omega = [(s * s - q) / (M * (M - 1)) for s, q in zip(sums, squares, strict=True)]
    means = [s / M for s in sums]
    s3 = sum(means[k] * means[k2] for k in range(K) for k2 in range(K) if k != k2) / (K * (K - 1))
    return sum(s_sigma2) / K, sum(s_omega) / K, s3, s_sigma2, s_omega, means


def test_large_common_mean_against_exact_rationals():
    # Losses of mean 1e8 and unit spread: s1, s2, s3 are each ≈ 1e16 while θ ≈ 1e-2, so an
    # uncentred float evaluation loses everything; the module claims centred evaluation.
    rng = np.random.default_rng(42)
    K, M = 5, 8
    N = K * M
    e2d = 1e8 + rng.normal(size=(K, M))
    table = from_arrays(e2d.ravel(), np.repeat(np.arange(K), M))
    s1, s2, s3, s_sigma2, s_omega, means = exact_moments(e2d)
    F = Fraction
    mu_hat = sum(means) / K
    exact = {  # Table 2, §5, Table 1, eqs. 11, 12 of Geras & Sutton 2013; Bates eq. 5, 9; Bayle (README)
        "theta_1": F(1, N) * s1 + F(M - 1, N) * s2 + F(N - M, N) * s3,
        "theta_2": F(1, N) * s1 - F(N + 1 - M, N) * s2 + F(N - M, N) * s3,
        "theta_3": F(1, N) * s1 + F(M - 1, N) * s2 - F(M, N) * s3,
        "theta_4": F(1, N) * s1 - F(1, N) * s2,
        "theta_5": F(1, N) * s1 + F(N + M - 1, N) * s2 - F(N + M, N) * s3,
        "theta_omega": mu_hat**2 - s2,
        "theta_gamma": mu_hat**2 - s3,
        "theta_A": F(1, K * K * M) * sum(a - b for a, b in zip(s_sigma2, s_omega, strict=True)),
        "naive_folds": sum((m - mu_hat) ** 2 for m in means) / (K * (K - 1)),
        "naive_points": sum(
            (Fraction(float(x)) - mu_hat) ** 2 for x in e2d.ravel()
        ) / (N * (N - 1)),
    }  # fmt: skip
    exact["theta_B"] = 2 * exact["theta_A"]
    exact["bayle_within"] = exact["theta_A"]
    exact["bayle_all_pairs"] = exact["naive_points"] * (N - 1) / N
    for name, value in exact.items():
        # relative error ≈ eps × 1e8 / spread ≈ 1e-8; 1e-6 leaves room, the raw formula is ≫ 1
        np.testing.assert_allclose(
            public_value(name, table), float(value), rtol=1e-6, err_msg=name
        )
    # the test has teeth: the raw-moment formula in floats is off by far more than that
    f1, f2, f3 = float(s1), float(s2), float(s3)
    raw_theta3 = f1 / N + (M - 1) / N * f2 - M / N * f3
    assert abs(raw_theta3 - float(exact["theta_3"])) > 1e-3 * float(exact["theta_3"])


def test_large_mean_against_hand_centred_reference_unequal():
    rng = np.random.default_rng(8)
    n = [30, 50, 20, 40]
    e, blocks = losses_for(n, rng, loc=1e8)
    table = from_arrays(e, blocks)
    groups = [e[blocks == k] for k in range(len(n))]
    N = e.size
    # centred by hand: subtract the (rounded) grand mean first, then the formulas
    c = e - e.mean()
    naive_points = (c - c.mean()) @ (c - c.mean()) / (N * (N - 1))
    within = [((g - g.mean()) ** 2).sum() for g in groups]
    theta_aw = sum(nk * w / (nk - 1) for nk, w in zip(n, within, strict=True)) / N**2
    np.testing.assert_allclose(public_value("naive_points", table), naive_points, rtol=1e-7)
    np.testing.assert_allclose(public_value("theta_A_weighted", table), theta_aw, rtol=1e-7)


# --------------------------------------------------------------------- 6. bad input
@pytest.mark.parametrize(
    "func",
    [
        *(getattr(est, name) for name in EQUAL_ONLY),
        est.theta_omega_block,
        est.theta_gamma_pair,
        quadratic_estimator(0, 1, -2, 0),
    ],
)
def test_unequal_sizes_raise(func):
    table = from_arrays(np.arange(9.0), [0, 0, 0, 1, 1, 2, 2, 2, 2])
    with pytest.raises(ValueError, match="equal block sizes"):
        func(table)


def test_unequal_sizes_error_names_the_sizes():
    table = from_arrays(np.arange(9.0), [0, 0, 0, 1, 1, 2, 2, 2, 2])
    with pytest.raises(ValueError, match=r"\[2, 3, 4\]"):
        est.theta_3(table)


def test_block_stats_input_checks():
    with pytest.raises(TypeError, match="expected a loss table"):
        block_stats(np.zeros(3))
    with pytest.raises(ValueError, match="lacks"):
        block_stats(xr.Dataset({"n": ("block", [2, 2])}, coords={"block": [0, 1]}))
    one_point = xr.Dataset(
        {"n": ("block", [1, 3]), "S": ("block", [1.0, 3.0]), "W": ("block", [0.0, 2.0])},
        coords={"block": [0, 1]},
    )
    with pytest.raises(ValueError, match="at least 2 points"):
        block_stats(one_point)
    one_block = one_point.isel(block=[1])
    with pytest.raises(ValueError, match="at least 2 blocks"):
        block_stats(one_block)
    stats = block_stats(from_arrays(np.arange(4.0), [0, 0, 1, 1]))
    assert isinstance(stats, BlockStats)
    assert block_stats(stats) is stats
    assert stats.equal_sizes.tolist() == [True]


def test_attrs_state_bias_and_assumption():
    table = from_arrays(np.arange(6.0), [0, 0, 1, 1, 2, 2])
    out = est.theta_3(table)
    assert out.attrs["bias"] == "-gamma"  # Geras & Sutton (2013, Table 2)
    assert "gamma = 0" in out.attrs["assumption"]
    assert est.theta_5(table).attrs["bias"] == "omega - 2 gamma"  # Geras & Sutton (2013, §5)
    assert "Needs equal block sizes" in est.theta_3.__doc__


# --------------------------------------------------------------------- 7. pickling
# joblib and Dask send functions to their workers by pickling them.
@pytest.mark.parametrize("name", ALL_NAMES)
def test_every_registered_estimator_pickles(name):
    table = from_arrays(*losses_for([4] * 3, np.random.default_rng(7)))
    spec = ESTIMATORS[name]
    clone = pickle.loads(pickle.dumps(spec))
    xr.testing.assert_identical(clone(table), spec(table))
    assert (clone.bias, clone.assumption, clone.equal_sizes) == (
        spec.bias,
        spec.assumption,
        spec.equal_sizes,
    )
    # the registry entry, called on a table, gives what the public functions give
    np.testing.assert_allclose(spec(table), public_value(name, table), rtol=1e-12)
    if hasattr(est, name):  # the public function pickles by reference
        func = getattr(est, name)
        assert pickle.loads(pickle.dumps(func)) is func
        xr.testing.assert_identical(func(table), spec(table))


@pytest.mark.parametrize(
    "func",
    [
        est.naive_se_points,
        est.naive_se_folds,
        est.sigma2_within,
        est.sigma2_all_pairs,
        est.theta_omega_block,
        est.theta_gamma_pair,
        gs_moments,
        quadratic_estimator(0.5, 1, -2, 0.5),
    ],
)
def test_other_public_functions_pickle(func):
    table = from_arrays(*losses_for([4] * 3, np.random.default_rng(8)))
    clone = pickle.loads(pickle.dumps(func))
    xr.testing.assert_identical(clone(table), func(table))
    assert clone.__doc__ == func.__doc__


def test_quadratic_estimator_repr_and_bias():
    q = quadratic_estimator(0, 1, -2, 0)
    assert repr(q) == "quadratic_estimator(0, 1, -2, 0)"
    assert q.bias == "0 sigma^2 + 1 omega + -2 gamma + 0 mu^2"
