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
γ_kl that of points of two blocks. The variance of μ̂ is (Geras & Sutton 2013, eq. 7,
written for any sizes)

    θ = (1/N²) [Σ_k n_k σ_k² + Σ_k n_k(n_k−1) ω_k + Σ_{k≠l} n_k n_l γ_kl].

No quadratic estimator is unbiased for θ (Bengio & Grandvalet 2004); each one below is
unbiased under a stated assumption, and its bias is stated. :mod:`bayescv.classical.expectations`
computes the exact expectation and bias of every estimator for given (μ, σ², ω, γ).

Numerics: every formula is evaluated in a centred form (block means minus their mean, W_k
from centred values; :func:`block_stats`), so a large common mean does not cancel
catastrophically; the coefficient of μ̂² is applied exactly.

Formulas written with M (Geras & Sutton 2013, Tables 1 and 2, θ_5, θ_A, θ_B) need equal
block sizes and raise a :class:`ValueError` otherwise; ``theta_A_weighted`` and
``theta_B_weighted`` are this package's extension of θ_A and θ_B to unequal sizes. The
whole Proposition-1 family of quadratic estimators, of which θ_1…θ_5 are members, is in
:mod:`bayescv.classical.quadratic`.

Every estimator is a plain module-level function (it pickles by reference, for joblib or
Dask); :data:`ESTIMATORS` maps each name to its specification, itself callable on a loss
table.

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
from functools import partial
from inspect import cleandoc
from typing import TypeVar

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

__all__ = [
    "ESTIMATORS",
    "naive_se_folds",
    "naive_se_points",
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
    return _bayle_within(stats)


def _theta_B(stats: BlockStats) -> np.ndarray:
    """θ_B = 2 θ_A (equal sizes)."""
    require_equal(stats, "theta_B")
    return 2 * _bayle_within(stats)


def _theta_A_weighted(stats: BlockStats) -> np.ndarray:
    """(1/N²) Σ_k n_k W_k/(n_k − 1)."""
    n = sizes(stats)
    return (n * stats.W / (n - 1)).sum(axis=1) / stats.N**2


def _theta_B_weighted(stats: BlockStats) -> np.ndarray:
    """2 θ_A_weighted."""
    return 2 * _theta_A_weighted(stats)


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


def _bayle_within(stats: BlockStats) -> np.ndarray:
    """σ²_in / N."""
    return _sigma2_within(stats) / stats.N


def _bayle_all_pairs(stats: BlockStats) -> np.ndarray:
    """σ²_out / N."""
    return _sigma2_all_pairs(stats) / stats.N


# --------------------------------------------------------------------------- registry
@dataclass(frozen=True)
class _Estimator:
    """An estimator of θ: its core on :class:`BlockStats`, bias and when it is unbiased.

    Callable on a loss table, as the public function of the same name; it pickles.
    """

    name: str
    func: Callable[[BlockStats], np.ndarray]
    bias: str
    assumption: str
    equal_sizes: bool

    def __call__(self, losses: xr.Dataset | BlockStats) -> xr.DataArray:
        stats = block_stats(losses)
        attrs = {"bias": self.bias, "assumption": self.assumption}
        return as_result(self.func(stats), stats, self.name, attrs)


def _cvr_estimator(name: str, bias: str, assumption: str) -> _Estimator:
    return _Estimator(name, partial(_cvr, name=name), bias, assumption, equal_sizes=True)


_WEIGHTED = "extension of {0} to unequal sizes (bayescv); equals {0} on equal sizes"
_EXACT = "see bayescv.classical.expectations (exact for given mu, sigma^2, omega, gamma)"
_BAYLE = "see bayescv.classical.expectations; targets the k-fold test error, not Var(mu_hat)"
_MU_SPREAD = "(sum_k mu_k^2 - sum_{k!=l} mu_k mu_l / (K-1))"

#: Every estimator of θ = Var(μ̂) by name: ``func`` (its core on :class:`BlockStats`, one
#: value per replicate), ``bias`` (E[θ̂] − θ as a formula), ``assumption`` (when it is
#: unbiased, with its source) and ``equal_sizes`` (whether it needs equal block sizes).
#: Each entry is also callable on a loss table.
ESTIMATORS: dict[str, _Estimator] = {
    spec.name: spec
    for spec in (
        _cvr_estimator(
            "theta_1",
            "mu^2",
            "mu = 0 (CVR; Grandvalet & Bengio 2006; Geras & Sutton 2013, Table 2)",
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
        _Estimator(
            "theta_omega",
            _theta_omega,
            f"-sum_k omega_k / K + (1-K)/K^2 {_MU_SPREAD}",
            "all omega_k = 0 and all mu_k equal (CVS; Geras & Sutton 2013, Table 1); "
            "can be negative",
            equal_sizes=True,
        ),
        _Estimator(
            "theta_gamma",
            _theta_gamma,
            f"-sum_{{k!=l}} gamma_kl / (K(K-1)) + (1/K^2) {_MU_SPREAD}",
            "all gamma_kl = 0 and all mu_k equal (CVS; Geras & Sutton 2013, Table 1)",
            equal_sizes=True,
        ),
        _Estimator(
            "theta_A",
            _theta_A,
            "-(1/K^2) (sum_k omega_k + sum_{k!=l} gamma_kl)",
            "no mu terms in the bias (CVS; Geras & Sutton 2013, eq. 11); "
            "optimistic when omega, gamma > 0",
            equal_sizes=True,
        ),
        _Estimator(
            "theta_B",
            _theta_B,
            "(1/(K^2 M)) (sum_k sigma_k^2 - (M+1) sum_k omega_k - M sum_{k!=l} gamma_kl)",
            "no mu terms in the bias, terms of opposite sign (CVS; Geras & Sutton 2013, eq. 12)",
            equal_sizes=True,
        ),
        _Estimator(
            "theta_A_weighted",
            _theta_A_weighted,
            "-(1/N^2) (sum_k n_k^2 omega_k + sum_{k!=l} n_k n_l gamma_kl)",
            _WEIGHTED.format("theta_A"),
            equal_sizes=False,
        ),
        _Estimator(
            "theta_B_weighted",
            _theta_B_weighted,
            "(1/N^2) (sum_k n_k sigma_k^2 - sum_k n_k (n_k+1) omega_k "
            "- sum_{k!=l} n_k n_l gamma_kl)",
            _WEIGHTED.format("theta_B"),
            equal_sizes=False,
        ),
        _Estimator(
            "naive_points",
            _naive_points,
            _EXACT,
            "all N losses independent (Bates et al. 2024, eq. 5, squared)",
            equal_sizes=False,
        ),
        _Estimator(
            "naive_folds",
            _naive_folds,
            _EXACT,
            "the K block means independent and identically distributed "
            "(Bates et al. 2024, eq. 9, squared)",
            equal_sizes=False,
        ),
        _Estimator(
            "bayle_within",
            _bayle_within,
            _BAYLE,
            "sigma^2_in / N, within-fold variance (Bayle et al. 2020)",
            equal_sizes=False,
        ),
        _Estimator(
            "bayle_all_pairs",
            _bayle_all_pairs,
            _BAYLE,
            "sigma^2_out / N, all-pairs variance (Bayle et al. 2020)",
            equal_sizes=False,
        ),
    )
}


# --------------------------------------------------------------------------- public functions
_F = TypeVar("_F", bound=Callable)

_THETA = (
    "The estimate of θ = Var(μ̂): 0-d, or along ``replicate`` when the table has one;\n"
    "    attrs ``bias`` and ``assumption``."
)


def _document(returns: str) -> Callable[[_F], _F]:
    """Complete the docstring of a function of a loss table, returning the function itself.

    Appends the bias and assumption of the estimator of the same name in :data:`ESTIMATORS`
    (if any) and the numpydoc sections shared by every function here.
    """

    def decorate(func: _F) -> _F:
        doc = cleandoc(func.__doc__ or "")
        spec = ESTIMATORS.get(func.__name__)
        if spec is not None:
            sizes_note = (
                " Needs equal block sizes (raises ValueError otherwise)."
                if spec.equal_sizes
                else ""
            )
            doc += f"\n\nUnbiased if {spec.assumption}. Bias: ``{spec.bias}``.{sizes_note}"
        func.__doc__ = (
            f"{doc}\n\nParameters\n----------\nlosses : xarray.Dataset or BlockStats\n"
            "    A loss table, its block moments, or :func:`block_stats` of either.\n\n"
            f"Returns\n-------\nxarray.DataArray\n    {returns}\n"
        )
        return func

    return decorate


@_document(_THETA)
def theta_1(losses: xr.Dataset | BlockStats) -> xr.DataArray:
    """θ_1 = (1/N) s1 + ((M−1)/N) s2 + ((N−M)/N) s3."""
    return ESTIMATORS["theta_1"](losses)


@_document(_THETA)
def theta_2(losses: xr.Dataset | BlockStats) -> xr.DataArray:
    """θ_2 = (1/N) s1 − ((N+1−M)/N) s2 + ((N−M)/N) s3."""
    return ESTIMATORS["theta_2"](losses)


@_document(_THETA)
def theta_3(losses: xr.Dataset | BlockStats) -> xr.DataArray:
    """θ_3 = (1/N) s1 + ((M−1)/N) s2 − (M/N) s3."""
    return ESTIMATORS["theta_3"](losses)


@_document(_THETA)
def theta_4(losses: xr.Dataset | BlockStats) -> xr.DataArray:
    """θ_4 = (1/N) s1 − (1/N) s2 = σ²_in / N."""
    return ESTIMATORS["theta_4"](losses)


@_document(_THETA)
def theta_5(losses: xr.Dataset | BlockStats) -> xr.DataArray:
    """θ_5 = (1/N) s1 + ((N+M−1)/N) s2 − ((N+M)/N) s3."""
    return ESTIMATORS["theta_5"](losses)


@_document(_THETA)
def theta_omega(losses: xr.Dataset | BlockStats) -> xr.DataArray:
    """θ^ω = μ̂² − s2 (Geras & Sutton 2013, Table 1, all ω_k = 0)."""
    return ESTIMATORS["theta_omega"](losses)


@_document(_THETA)
def theta_gamma(losses: xr.Dataset | BlockStats) -> xr.DataArray:
    """θ^γ = μ̂² − s3, the squared standard error of the block means."""
    return ESTIMATORS["theta_gamma"](losses)


@_document(_THETA)
def theta_A(losses: xr.Dataset | BlockStats) -> xr.DataArray:
    """θ_A = (1/(K²M)) Σ_k (s_k^σ² − s_k^ω) = σ²_in/N."""
    return ESTIMATORS["theta_A"](losses)


@_document(_THETA)
def theta_B(losses: xr.Dataset | BlockStats) -> xr.DataArray:
    """θ_B = 2 θ_A (Geras & Sutton 2013, eq. 12)."""
    return ESTIMATORS["theta_B"](losses)


@_document(_THETA)
def theta_A_weighted(losses: xr.Dataset | BlockStats) -> xr.DataArray:
    """θ_A for unequal sizes: (1/N²) Σ_k n_k W_k/(n_k − 1).

    Its bias is θ_A's with each block weighted by its size (a bayescv extension).
    """
    return ESTIMATORS["theta_A_weighted"](losses)


@_document(_THETA)
def theta_B_weighted(losses: xr.Dataset | BlockStats) -> xr.DataArray:
    """2 θ_A_weighted."""
    return ESTIMATORS["theta_B_weighted"](losses)


@_document("The standard error (0-d, or along ``replicate``).")
def naive_se_points(losses: xr.Dataset | BlockStats) -> xr.DataArray:
    """Naive standard error from all points, sqrt(Σ_i (e_i − μ̂)²/(N(N−1))) (Bates et al. 2024, eq. 5).

    Treats the N losses as independent, which CV's shared training data breaks; it
    underestimates the standard error when ω or γ are positive.
    """
    stats = block_stats(losses)
    return as_result(np.sqrt(_naive_points(stats)), stats, "se_points")


@_document("The standard error (0-d, or along ``replicate``).")
def naive_se_folds(losses: xr.Dataset | BlockStats) -> xr.DataArray:
    """Naive standard error from the K block means, sqrt(Σ_k (ē_k − m)²/(K(K−1))) (Bates et al. 2024, eq. 9).

    ``m``, the unweighted mean of the block means (μ̂ for equal sizes), centres its interval.
    """
    stats = block_stats(losses)
    return as_result(np.sqrt(_naive_folds(stats)), stats, "se_folds")


@_document("σ²_in (0-d, or along ``replicate``).")
def sigma2_within(losses: xr.Dataset | BlockStats) -> xr.DataArray:
    """Bayle et al.'s within-fold variance σ²_in = (1/K) Σ_k (1/(n_k−1)) Σ_i (e_ki − ē_k)².

    The interval μ̂ ± z σ̂_in/√N targets the k-fold test error (the mean conditional error of
    the K fitted models), not the expected error over data sets (Bayle et al. 2020).
    """
    stats = block_stats(losses)
    return as_result(_sigma2_within(stats), stats, "sigma2_within")


@_document("σ²_out (0-d, or along ``replicate``).")
def sigma2_all_pairs(losses: xr.Dataset | BlockStats) -> xr.DataArray:
    """Bayle et al.'s all-pairs variance σ²_out = (1/N) Σ_i (e_i − μ̂)² (Bayle et al. 2020)."""
    stats = block_stats(losses)
    return as_result(_sigma2_all_pairs(stats), stats, "sigma2_all_pairs")


@_document("Dims ``(block,)`` or ``(replicate, block)``.")
def theta_omega_block(losses: xr.Dataset | BlockStats) -> xr.DataArray:
    """Table 1's θ^ω_k̃ = μ̂² − s_k̃^ω for every block k̃ (unbiased if ω_k̃ = 0, all μ_k equal).

    Bias: ``-omega_k + (1/K^2) sum_{k,l} mu_k mu_l - mu_k^2`` (Geras & Sutton 2013, Table 1).
    Needs equal block sizes. Their mean over k̃ is θ^ω.
    """
    stats = block_stats(losses)
    require_equal(stats, "theta_omega_block")
    M = stats.M[:, None]
    values = -stats.d * (2 * stats.m[:, None] + stats.d) + stats.W / (M * (M - 1))
    values = np.where(stats.present, values, np.nan)
    return as_result(values, stats, "theta_omega", dims=("block",))


@_document("Dims ``(block, block_other)`` (leading ``replicate`` if any), NaN on the diagonal.")
def theta_gamma_pair(losses: xr.Dataset | BlockStats) -> xr.DataArray:
    """Table 1's θ^γ_k̃l̃ = μ̂² − ē_k̃ ē_l̃ for every pair of distinct blocks.

    Unbiased if γ_k̃l̃ = 0 and all μ_k are equal; bias
    ``-gamma_kl + (1/K^2) sum_{k,l} mu_k mu_l - mu_k mu_l`` (Geras & Sutton 2013, Table 1).
    Needs equal block sizes. Their mean over pairs is θ^γ. Uses O(K²) memory.
    """
    stats = block_stats(losses)
    require_equal(stats, "theta_gamma_pair")
    d, m = stats.d, stats.m[:, None, None]
    values = -m * (d[:, :, None] + d[:, None, :]) - d[:, :, None] * d[:, None, :]
    values = np.where(pair_mask(stats), values, np.nan)
    return as_result(values, stats, "theta_gamma", dims=("block", "block_other"))
