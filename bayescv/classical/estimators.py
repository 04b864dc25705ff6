"""Closed-form ("quadratic") estimators of the variance θ of a CV estimate.

The CV estimate is the mean of all N test losses, μ̂ = (1/N) Σ e. Every estimator here is
a quadratic form eᵀWe of the losses, and all of them are computed from the per-block
sufficient statistics of :func:`bayescv.moments.block_moments` (n_k, S_k and the centred
within-block sum of squares W_k): O(N) time, O(K) memory, never an N×N matrix.

Notation (Geras & Sutton 2013): K blocks (folds, or held-out sources), M points per
block when sizes are equal, N = KM; block means ē_k; the empirical moments

* s_k^σ² = (1/M) Σ_i e_ki²,  s_k^ω = 1/(M(M−1)) Σ_{i≠j} e_ki e_kj,  s_kl^γ = ē_k ē_l,
* s1 = mean_k s_k^σ²,  s2 = mean_k s_k^ω,  s3 = mean_{k≠l} s_kl^γ.

Their expectations are σ_k² + μ_k², ω_k + μ_k² and γ_kl + μ_k μ_l, where μ_k is the mean
loss of block k, σ_k² a point's variance, ω_k the covariance of two points of one block and
γ_kl that of points of two blocks. The variance of μ̂ is (Geras & Sutton 2013, eq. 7, written for any sizes)

    θ = (1/N²) [Σ_k n_k σ_k² + Σ_k n_k(n_k−1) ω_k + Σ_{k≠l} n_k n_l γ_kl].

No quadratic estimator is unbiased for θ (Bengio & Grandvalet 2004); each one below is
unbiased under a stated assumption, and its bias is stated. :mod:`bayescv.classical.expectations`
computes the exact expectation and bias of every estimator for given (μ, σ², ω, γ).

Numerics: every formula is evaluated in a centred form (block means minus their mean, W_k
from centred values), so a large common mean does not cancel catastrophically; the
coefficient of μ̂² (α₄ of Proposition 1) is applied exactly.

Formulas written with M (Geras & Sutton 2013, Tables 1 and 2, θ_5, θ_A, θ_B, the Proposition-1 family)
need equal block sizes and raise a :class:`ValueError` otherwise; ``theta_A_weighted`` and
``theta_B_weighted`` are this package's extension of θ_A and θ_B to unequal sizes.

References
----------
Bengio, Y. & Grandvalet, Y. (2004). No unbiased estimator of the variance of K-fold
cross-validation. JMLR 5, 1089–1105.

Grandvalet, Y. & Bengio, Y. (2006). Hypothesis testing for cross-validation. Technical
report 1285, Université de Montréal.

Geras, K. J. & Sutton, C. (2013). Multiple-source cross-validation. ICML, PMLR 28(3),
1292–1300.

Bates, S., Hastie, T. & Tibshirani, R. (2024). Cross-validation: what does it estimate and
how well does it do it? JASA 119(546), 1434–1445. doi:10.1080/01621459.2023.2197686

Bayle, P., Bayle, A., Janson, L. & Mackey, L. (2020). Cross-validation confidence intervals
for test error. NeurIPS 33.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import xarray as xr

from bayescv.moments import block_moments

__all__ = [
    "ESTIMATORS",
    "BlockStats",
    "block_stats",
    "gs_moments",
    "naive_se_folds",
    "naive_se_points",
    "quadratic_estimator",
    "sigma2_all_pairs",
    "sigma2_within",
    "theta_1",
    "theta_2",
    "theta_3",
    "theta_4",
    "theta_5",
    "theta_A",
    "theta_A_weighted",
    "theta_B",
    "theta_B_weighted",
    "theta_gamma",
    "theta_gamma_pair",
    "theta_omega",
    "theta_omega_block",
]


@dataclass(frozen=True)
class BlockStats:
    """Centred per-block statistics of one or several CV runs (leading axis: replicate).

    Absent blocks (``n = 0`` in a replicate that lacks them) are masked out of every sum.

    Attributes
    ----------
    n, S, W : ndarray of shape (R, K)
        Block sizes (float), sums and centred within-block sums of squares.
    present : ndarray of bool, shape (R, K)
        Which blocks each replicate has.
    K, N : ndarray of shape (R,)
        Number of blocks and of points per replicate.
    means : ndarray of shape (R, K)
        Block means ē_k (0 where absent).
    m : ndarray of shape (R,)
        Unweighted mean of the block means (equals μ̂ when sizes are equal).
    mu_hat : ndarray of shape (R,)
        The CV estimate, the mean of all losses.
    d : ndarray of shape (R, K)
        ē_k − m (0 where absent).
    D : ndarray of shape (R,)
        Σ_k (ē_k − m)².
    M : ndarray of shape (R,)
        The common block size, NaN where sizes differ.
    labels : ndarray of shape (K,)
        Block labels.
    replicated : bool
        Whether the input had a ``replicate`` dimension.
    """

    n: np.ndarray
    S: np.ndarray
    W: np.ndarray
    present: np.ndarray
    K: np.ndarray
    N: np.ndarray
    means: np.ndarray
    m: np.ndarray
    mu_hat: np.ndarray
    d: np.ndarray
    D: np.ndarray
    M: np.ndarray
    labels: np.ndarray
    replicated: bool

    @property
    def equal_sizes(self) -> np.ndarray:
        """Whether each replicate's blocks all have the same size."""
        return ~np.isnan(self.M)


def block_stats(data: xr.Dataset | BlockStats) -> BlockStats:
    """Reduce a loss table (or its block moments) to centred block statistics.

    Parameters
    ----------
    data : xarray.Dataset or BlockStats
        A loss table (see :mod:`bayescv.losses`) or the output of
        :func:`bayescv.moments.block_moments`.

    Returns
    -------
    BlockStats
        The statistics every estimator reads.
    """
    if isinstance(data, BlockStats):
        return data
    if not isinstance(data, xr.Dataset):
        raise TypeError(f"expected a loss table or block moments Dataset, got {type(data)}")
    if "loss" in data:
        data = block_moments(data)
    missing = {"n", "S", "W"} - set(data.data_vars)
    if missing:
        raise ValueError(
            f"expected a loss table or block moments; the Dataset lacks {sorted(missing)}"
        )
    replicated = "replicate" in data.dims
    n = np.atleast_2d(data["n"].values).astype(float)
    S = np.atleast_2d(data["S"].values).astype(float)
    W = np.atleast_2d(data["W"].values).astype(float)
    present = n > 0
    if np.any(n == 1):
        raise ValueError("every block needs at least 2 points; some block has 1")
    K = present.sum(axis=1).astype(float)
    if np.any(K < 2):
        raise ValueError("need at least 2 blocks in every replicate")
    N = n.sum(axis=1)
    means = np.divide(S, n, out=np.zeros_like(S), where=present)
    m = means.sum(axis=1) / K
    mu_hat = S.sum(axis=1) / N
    d = np.where(present, means - m[:, None], 0.0)
    D = (d * d).sum(axis=1)
    big = np.where(present, n, -np.inf).max(axis=1)
    small = np.where(present, n, np.inf).min(axis=1)
    M = np.where(big == small, big, np.nan)
    return BlockStats(
        n=n, S=S, W=W, present=present, K=K, N=N, means=means, m=m, mu_hat=mu_hat,
        d=d, D=D, M=M, labels=np.asarray(data["block"].values), replicated=replicated,
    )  # fmt: skip


def _require_equal(stats: BlockStats, name: str) -> None:
    if not stats.equal_sizes.all():
        sizes = np.unique(stats.n[stats.present]).astype(int)
        raise ValueError(
            f"{name} needs equal block sizes, got sizes {sizes.tolist()[:8]}; use "
            "theta_A_weighted / theta_B_weighted, the naive or Bayle estimators instead"
        )


def _centred_moments(stats: BlockStats) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """s1 − m², s2 − m², s3 − m² (equal sizes), exact in centred form."""
    M, K = stats.M, stats.K
    wbar = stats.W.sum(axis=1) / K
    t1 = wbar / M + stats.D / K
    t2 = stats.D / K - wbar / (M * (M - 1))
    t3 = -stats.D / (K * (K - 1))
    return t1, t2, t3


def _cvr(stats: BlockStats, numerators: Callable, name: str) -> np.ndarray:
    """Compute A s1 + B s2 + C s3 with (A, B, C) = (n1, n2, n3)/N from integer numerators."""
    _require_equal(stats, name)
    N, M = stats.N, stats.M
    n1, n2, n3 = numerators(N, M)
    t1, t2, t3 = _centred_moments(stats)
    # α4 = A + B + C is exact in integers, so the μ̂² term carries no rounding.
    return (n1 * t1 + n2 * t2 + n3 * t3 + (n1 + n2 + n3) * stats.m**2) / N


@dataclass(frozen=True)
class _Estimator:
    func: Callable[[BlockStats], np.ndarray]
    bias: str
    assumption: str
    equal_sizes: bool


def _theta_a(stats: BlockStats) -> np.ndarray:
    _require_equal(stats, "theta_A")
    return sigma2_within_array(stats) / stats.N


ESTIMATORS: dict[str, _Estimator] = {
    "theta_1": _Estimator(
        lambda s: _cvr(s, lambda N, M: (1, M - 1, N - M), "theta_1"),
        "mu^2",
        "mu = 0 (CVR; Grandvalet & Bengio 2006; Geras & Sutton 2013, Table 2)",
        True,
    ),
    "theta_2": _Estimator(
        lambda s: _cvr(s, lambda N, M: (1, -(N + 1 - M), N - M), "theta_2"),
        "-omega",
        "omega = 0 (CVR; Geras & Sutton 2013, Table 2); can be negative",
        True,
    ),
    "theta_3": _Estimator(
        lambda s: _cvr(s, lambda N, M: (1, M - 1, -M), "theta_3"),
        "-gamma",
        "gamma = 0 (CVR; Geras & Sutton 2013, Table 2)",
        True,
    ),
    "theta_4": _Estimator(
        lambda s: _cvr(s, lambda N, M: (1, -1, 0 * N), "theta_4"),
        "-(M/N) omega - ((N-M)/N) gamma",
        "gamma = -M omega/(N-M) (CVR; Geras & Sutton 2013, Table 2)",
        True,
    ),
    "theta_5": _Estimator(
        lambda s: _cvr(s, lambda N, M: (1, N + M - 1, -(N + M)), "theta_5"),
        "omega - 2 gamma",
        "omega = 2 gamma (CVR; Geras & Sutton 2013, section 5); can be negative",
        True,
    ),
    "theta_omega": _Estimator(
        lambda s: theta_omega_array(s),
        "-sum_k omega_k / K + (1-K)/K^2 (sum_k mu_k^2 - sum_{k!=l} mu_k mu_l / (K-1))",
        "all omega_k = 0 and all mu_k equal (CVS; Geras & Sutton 2013, Table 1); can be negative",
        True,
    ),
    "theta_gamma": _Estimator(
        lambda s: theta_gamma_array(s),
        "-sum_{k!=l} gamma_kl / (K(K-1)) + (1/K^2) (sum_k mu_k^2 - sum_{k!=l} mu_k mu_l / (K-1))",
        "all gamma_kl = 0 and all mu_k equal (CVS; Geras & Sutton 2013, Table 1)",
        True,
    ),
    "theta_A": _Estimator(
        _theta_a,
        "-(1/K^2) (sum_k omega_k + sum_{k!=l} gamma_kl)",
        "no mu terms in the bias (CVS; Geras & Sutton 2013, eq. 11); optimistic when omega, gamma > 0",
        True,
    ),
    "theta_B": _Estimator(
        lambda s: 2 * _theta_a(s),
        "(1/(K^2 M)) (sum_k sigma_k^2 - (M+1) sum_k omega_k - M sum_{k!=l} gamma_kl)",
        "no mu terms in the bias, terms of opposite sign (CVS; Geras & Sutton 2013, eq. 12)",
        True,
    ),
    "theta_A_weighted": _Estimator(
        lambda s: theta_a_weighted_array(s),
        "-(1/N^2) (sum_k n_k^2 omega_k + sum_{k!=l} n_k n_l gamma_kl)",
        "extension of theta_A to unequal sizes (bayescv); equals theta_A on equal sizes",
        False,
    ),
    "theta_B_weighted": _Estimator(
        lambda s: 2 * theta_a_weighted_array(s),
        "(1/N^2) (sum_k n_k sigma_k^2 - sum_k n_k (n_k+1) omega_k - sum_{k!=l} n_k n_l gamma_kl)",
        "extension of theta_B to unequal sizes (bayescv); equals theta_B on equal sizes",
        False,
    ),
    "naive_points": _Estimator(
        lambda s: naive_points_array(s),
        "see bayescv.classical.expectations (exact for given mu, sigma^2, omega, gamma)",
        "all N losses independent (Bates et al. eq. 5, squared)",
        False,
    ),
    "naive_folds": _Estimator(
        lambda s: naive_folds_array(s),
        "see bayescv.classical.expectations (exact for given mu, sigma^2, omega, gamma)",
        "the K block means independent and identically distributed (Bates et al. eq. 9, squared)",
        False,
    ),
    "bayle_within": _Estimator(
        lambda s: sigma2_within_array(s) / s.N,
        "see bayescv.classical.expectations; targets the k-fold test error, not Var(mu_hat)",
        "sigma^2_in / N, within-fold variance (Bayle et al. 2020)",
        False,
    ),
    "bayle_all_pairs": _Estimator(
        lambda s: sigma2_all_pairs_array(s) / s.N,
        "see bayescv.classical.expectations; targets the k-fold test error, not Var(mu_hat)",
        "sigma^2_out / N, all-pairs variance (Bayle et al. 2020)",
        False,
    ),
}


# --------------------------------------------------------------------------- array cores
def theta_omega_array(stats: BlockStats) -> np.ndarray:
    """θ^ω = μ̂² − s2 in centred form: mean_k W_k/(M(M−1)) − D/K (equal sizes)."""
    _require_equal(stats, "theta_omega")
    return -_centred_moments(stats)[1]


def theta_gamma_array(stats: BlockStats) -> np.ndarray:
    """θ^γ = μ̂² − s3 = Σ_k (ē_k − μ̂)²/(K(K−1)) (equal sizes)."""
    _require_equal(stats, "theta_gamma")
    return -_centred_moments(stats)[2]


def theta_a_weighted_array(stats: BlockStats) -> np.ndarray:
    """(1/N²) Σ_k n_k W_k/(n_k − 1)."""
    n = np.where(stats.present, stats.n, 2.0)
    return (n * stats.W / (n - 1)).sum(axis=1) / stats.N**2


def naive_points_array(stats: BlockStats) -> np.ndarray:
    """Σ_i (e_i − μ̂)² / (N(N−1)), from the within/between decomposition."""
    total = stats.W.sum(axis=1) + (stats.n * (stats.means - stats.mu_hat[:, None]) ** 2).sum(
        axis=1, where=stats.present
    )
    return total / (stats.N * (stats.N - 1))


def naive_folds_array(stats: BlockStats) -> np.ndarray:
    """Σ_k (ē_k − m)² / (K(K−1)), m the mean of the block means."""
    return stats.D / (stats.K * (stats.K - 1))


def sigma2_within_array(stats: BlockStats) -> np.ndarray:
    """Bayle's within-fold variance (1/K) Σ_k W_k/(n_k − 1)."""
    n = np.where(stats.present, stats.n, 2.0)
    return (stats.W / (n - 1)).sum(axis=1) / stats.K


def sigma2_all_pairs_array(stats: BlockStats) -> np.ndarray:
    """Bayle's all-pairs variance (1/N) Σ_i (e_i − μ̂)²."""
    return naive_points_array(stats) * (stats.N - 1)


# --------------------------------------------------------------------------- xarray layer
def _wrap(values: np.ndarray, stats: BlockStats, name: str, attrs: dict) -> xr.DataArray:
    if stats.replicated:
        return xr.DataArray(values, dims=("replicate",), name=name, attrs=attrs)
    return xr.DataArray(values[0], name=name, attrs=attrs)


def _named(name: str) -> Callable[[Any], xr.DataArray]:
    spec = ESTIMATORS[name]

    def estimator(losses: xr.Dataset | BlockStats) -> xr.DataArray:
        stats = block_stats(losses)
        attrs = {"bias": spec.bias, "assumption": spec.assumption}
        return _wrap(spec.func(stats), stats, name, attrs)

    estimator.__name__ = name
    return estimator


def _document(func: Callable, formula: str, extra: str = "") -> Callable:
    name = func.__name__
    spec = ESTIMATORS[name]
    sizes = "Needs equal block sizes (raises ValueError otherwise)." if spec.equal_sizes else ""
    func.__doc__ = f"""{formula}

    Unbiased if {spec.assumption}. Bias: ``{spec.bias}``. {sizes}{extra}

    Parameters
    ----------
    losses : xarray.Dataset or BlockStats
        A loss table, its block moments, or :func:`block_stats` of either.

    Returns
    -------
    xarray.DataArray
        The estimate of θ = Var(μ̂): 0-d, or along ``replicate`` when the table has one;
        attrs ``bias`` and ``assumption``.
    """
    return func


theta_1 = _document(_named("theta_1"), "θ_1 = (1/N) s1 + ((M−1)/N) s2 + ((N−M)/N) s3.")
theta_2 = _document(_named("theta_2"), "θ_2 = (1/N) s1 − ((N+1−M)/N) s2 + ((N−M)/N) s3.")
theta_3 = _document(_named("theta_3"), "θ_3 = (1/N) s1 + ((M−1)/N) s2 − (M/N) s3.")
theta_4 = _document(_named("theta_4"), "θ_4 = (1/N) s1 − (1/N) s2 = σ²_in / N.")
theta_5 = _document(_named("theta_5"), "θ_5 = (1/N) s1 + ((N+M−1)/N) s2 − ((N+M)/N) s3.")
theta_omega = _document(
    _named("theta_omega"), "θ^ω = μ̂² − s2 (Geras & Sutton 2013, Table 1, all ω_k = 0)."
)
theta_gamma = _document(
    _named("theta_gamma"), "θ^γ = μ̂² − s3, the squared standard error of the block means."
)
theta_A = _document(_named("theta_A"), "θ_A = (1/(K²M)) Σ_k (s_k^σ² − s_k^ω) = σ²_in/N.")
theta_B = _document(_named("theta_B"), "θ_B = 2 θ_A (Geras & Sutton 2013, eq. 12).")
theta_A_weighted = _document(
    _named("theta_A_weighted"),
    "θ_A for unequal sizes: (1/N²) Σ_k n_k W_k/(n_k − 1).",
    " Its bias is θ_A's with each block weighted by its size (a bayescv extension).",
)
theta_B_weighted = _document(_named("theta_B_weighted"), "2 θ_A_weighted.")


def naive_se_points(losses: xr.Dataset | BlockStats) -> xr.DataArray:
    """Naive standard error from all points, sqrt(Σ_i (e_i − μ̂)²/(N(N−1))) (Bates eq. 5).

    Treats the N losses as independent, which CV's shared training data breaks; it
    underestimates the standard error when ω or γ are positive.

    Parameters
    ----------
    losses : xarray.Dataset or BlockStats
        A loss table, its block moments, or :func:`block_stats` of either.

    Returns
    -------
    xarray.DataArray
        The standard error (0-d, or along ``replicate``).
    """
    stats = block_stats(losses)
    return _wrap(np.sqrt(naive_points_array(stats)), stats, "se_points", {})


def naive_se_folds(losses: xr.Dataset | BlockStats) -> xr.DataArray:
    """Naive standard error from the K block means, sqrt(Σ_k (ē_k − m)²/(K(K−1))) (Bates eq. 9).

    ``m``, the unweighted mean of the block means (μ̂ for equal sizes), centres its interval.

    Parameters
    ----------
    losses : xarray.Dataset or BlockStats
        A loss table, its block moments, or :func:`block_stats` of either.

    Returns
    -------
    xarray.DataArray
        The standard error (0-d, or along ``replicate``).
    """
    stats = block_stats(losses)
    return _wrap(np.sqrt(naive_folds_array(stats)), stats, "se_folds", {})


def sigma2_within(losses: xr.Dataset | BlockStats) -> xr.DataArray:
    """Bayle et al.'s within-fold variance σ²_in = (1/K) Σ_k (1/(n_k−1)) Σ_i (e_ki − ē_k)².

    The interval μ̂ ± z σ̂_in/√N targets the k-fold test error (the mean conditional error of
    the K fitted models), not the expected error over data sets.

    Parameters
    ----------
    losses : xarray.Dataset or BlockStats
        A loss table, its block moments, or :func:`block_stats` of either.

    Returns
    -------
    xarray.DataArray
        σ²_in (0-d, or along ``replicate``).
    """
    stats = block_stats(losses)
    return _wrap(sigma2_within_array(stats), stats, "sigma2_within", {})


def sigma2_all_pairs(losses: xr.Dataset | BlockStats) -> xr.DataArray:
    """Bayle et al.'s all-pairs variance σ²_out = (1/N) Σ_i (e_i − μ̂)².

    Parameters
    ----------
    losses : xarray.Dataset or BlockStats
        A loss table, its block moments, or :func:`block_stats` of either.

    Returns
    -------
    xarray.DataArray
        σ²_out (0-d, or along ``replicate``).
    """
    stats = block_stats(losses)
    return _wrap(sigma2_all_pairs_array(stats), stats, "sigma2_all_pairs", {})


def theta_omega_block(losses: xr.Dataset | BlockStats) -> xr.DataArray:
    """Table 1's θ^ω_k̃ = μ̂² − s_k̃^ω for every block k̃ (unbiased if ω_k̃ = 0, all μ_k equal).

    Bias: ``-omega_k + (1/K^2) sum_{k,l} mu_k mu_l - mu_k^2``. Needs equal block sizes.
    Their mean over k̃ is θ^ω.

    Parameters
    ----------
    losses : xarray.Dataset or BlockStats
        A loss table, its block moments, or :func:`block_stats` of either.

    Returns
    -------
    xarray.DataArray
        Dims ``(block,)`` or ``(replicate, block)``.
    """
    stats = block_stats(losses)
    _require_equal(stats, "theta_omega_block")
    M = stats.M[:, None]
    values = -stats.d * (2 * stats.m[:, None] + stats.d) + stats.W / (M * (M - 1))
    values = np.where(stats.present, values, np.nan)
    dims = ("replicate", "block") if stats.replicated else ("block",)
    data = values if stats.replicated else values[0]
    return xr.DataArray(data, dims=dims, coords={"block": stats.labels}, name="theta_omega")


def theta_gamma_pair(losses: xr.Dataset | BlockStats) -> xr.DataArray:
    """Table 1's θ^γ_k̃l̃ = μ̂² − ē_k̃ ē_l̃ for every pair of distinct blocks.

    Unbiased if γ_k̃l̃ = 0 and all μ_k are equal; bias
    ``-gamma_kl + (1/K^2) sum_{k,l} mu_k mu_l - mu_k mu_l``. Needs equal block sizes. Their
    mean over pairs is θ^γ. Uses O(K²) memory.

    Parameters
    ----------
    losses : xarray.Dataset or BlockStats
        A loss table, its block moments, or :func:`block_stats` of either.

    Returns
    -------
    xarray.DataArray
        Dims ``(block, block_other)`` (leading ``replicate`` if any), NaN on the diagonal.
    """
    stats = block_stats(losses)
    _require_equal(stats, "theta_gamma_pair")
    d, m = stats.d, stats.m[:, None, None]
    values = -m * (d[:, :, None] + d[:, None, :]) - d[:, :, None] * d[:, None, :]
    mask = stats.present[:, :, None] & stats.present[:, None, :]
    mask &= ~np.eye(stats.labels.size, dtype=bool)
    values = np.where(mask, values, np.nan)
    dims = ("block", "block_other")
    coords = {"block": stats.labels, "block_other": stats.labels}
    if stats.replicated:
        return xr.DataArray(values, dims=("replicate", *dims), coords=coords, name="theta_gamma")
    return xr.DataArray(values[0], dims=dims, coords=coords, name="theta_gamma")


def quadratic_estimator(
    alpha1: float, alpha2: float, alpha3: float, alpha4: float
) -> Callable[[Any], xr.DataArray]:
    """Build the CVR quadratic estimator with bias α₁σ² + α₂ω + α₃γ + α₄μ² (Geras & Sutton 2013, Prop. 1).

    Proposition 1 (as corrected in the project's notes): a quadratic estimator with that
    bias exists if and only if α₁ + α₂ + α₃ − α₄ = −1; it is A s1 + B s2 + C s3 with
    A = α₁ + 1/N, B = α₂ + (M−1)/N, C = α₃ + (N−M)/N. θ_1…θ_5 are members:
    θ_5 is ``quadratic_estimator(0, 1, -2, 0)``.

    Parameters
    ----------
    alpha1, alpha2, alpha3, alpha4 : float
        The bias coefficients of σ², ω, γ and μ².

    Returns
    -------
    callable
        ``estimator(losses) -> xarray.DataArray``; needs equal block sizes.

    Examples
    --------
    >>> from bayescv.losses import from_arrays
    >>> table = from_arrays([0.1, 0.4, 0.3, 0.2, 0.9, 0.5], [0, 0, 1, 1, 2, 2])
    >>> est = quadratic_estimator(0, 1, -2, 0)
    >>> bool(np.isclose(est(table), theta_5(table)))
    True
    """
    alphas = [float(a) for a in (alpha1, alpha2, alpha3, alpha4)]
    if not all(np.isfinite(alphas)):
        raise ValueError(f"the alphas must be finite, got {alphas}")
    a1, a2, a3, a4 = alphas
    if not np.isclose(a1 + a2 + a3 - a4, -1.0, rtol=0, atol=1e-12):
        raise ValueError(
            "Proposition 1 needs alpha1 + alpha2 + alpha3 - alpha4 = -1, "
            f"got {a1 + a2 + a3 - a4:.6g}"
        )
    bias = f"{a1:g} sigma^2 + {a2:g} omega + {a3:g} gamma + {a4:g} mu^2"

    def estimator(losses: xr.Dataset | BlockStats) -> xr.DataArray:
        stats = block_stats(losses)
        _require_equal(stats, "quadratic_estimator")
        N, M = stats.N, stats.M
        t1, t2, t3 = _centred_moments(stats)
        value = (a1 + 1 / N) * t1 + (a2 + (M - 1) / N) * t2 + (a3 + (N - M) / N) * t3
        return _wrap(value + a4 * stats.m**2, stats, "theta_quadratic", {"bias": bias})

    estimator.__name__ = "quadratic_estimator"
    estimator.__doc__ = f"Quadratic CVR estimator with bias {bias}."
    return estimator


def gs_moments(losses: xr.Dataset | BlockStats) -> xr.Dataset:
    """Compute the empirical moments of Geras & Sutton (2013, §4.2), per block and pooled.

    Parameters
    ----------
    losses : xarray.Dataset or BlockStats
        A loss table, its block moments, or :func:`block_stats` of either.

    Returns
    -------
    xarray.Dataset
        ``s_sigma2`` and ``s_omega`` along ``block``; ``s_gamma`` along
        ``(block, block_other)`` (NaN on the diagonal; O(K²) memory); pooled ``s1``,
        ``s2``, ``s3``; a leading ``replicate`` dim when the table has one. Computed with
        each block's own size, so they are defined for unequal sizes too.

    Examples
    --------
    >>> from bayescv.losses import from_arrays
    >>> m = gs_moments(from_arrays([1.0, 3.0, 2.0, 6.0], [0, 0, 1, 1]))
    >>> m["s_sigma2"].values.tolist(), m["s_omega"].values.tolist(), float(m["s3"])
    ([5.0, 20.0], [3.0, 12.0], 8.0)
    """
    stats = block_stats(losses)
    n = np.where(stats.present, stats.n, 2.0)
    e2 = stats.means**2
    s_sigma2 = np.where(stats.present, stats.W / n + e2, np.nan)
    s_omega = np.where(stats.present, e2 - stats.W / (n * (n - 1)), np.nan)
    pair = stats.means[:, :, None] * stats.means[:, None, :]
    mask = stats.present[:, :, None] & stats.present[:, None, :]
    mask &= ~np.eye(stats.labels.size, dtype=bool)
    s_gamma = np.where(mask, pair, np.nan)
    K = stats.K
    s1 = np.nanmean(s_sigma2, axis=1)
    s2 = np.nanmean(s_omega, axis=1)
    s3 = stats.m**2 - stats.D / (K * (K - 1))
    lead = ("replicate",) if stats.replicated else ()
    pick = (lambda a: a) if stats.replicated else (lambda a: a[0])
    return xr.Dataset(
        {
            "s_sigma2": ((*lead, "block"), pick(s_sigma2)),
            "s_omega": ((*lead, "block"), pick(s_omega)),
            "s_gamma": ((*lead, "block", "block_other"), pick(s_gamma)),
            "s1": (lead, pick(s1)),
            "s2": (lead, pick(s2)),
            "s3": (lead, pick(s3)),
        },
        coords={"block": stats.labels, "block_other": stats.labels},
    )
