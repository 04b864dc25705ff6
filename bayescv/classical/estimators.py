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
table. The random-K-fold family θ_1…θ_5 and the naive and Bayle et al. estimators are defined
in ``bayescv.classical._random_kfold``, the multiple-source family θ^ω, θ^γ, θ_A, θ_B in
``bayescv.classical._multisource``; this module re-exports them.

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

from bayescv.classical._block_stats import BlockStats as BlockStats  # for callers of this module
from bayescv.classical._block_stats import block_stats as block_stats
from bayescv.classical._estimator import Estimator
from bayescv.classical._multisource import (
    MULTISOURCE_SPECS,
    theta_A,
    theta_A_weighted,
    theta_B,
    theta_B_weighted,
    theta_gamma,
    theta_gamma_pair,
    theta_omega,
    theta_omega_block,
)
from bayescv.classical._random_kfold import (
    CVR_SPECS,
    NAIVE_SPECS,
    naive_se_folds,
    naive_se_points,
    sigma2_all_pairs,
    sigma2_within,
    theta_1,
    theta_2,
    theta_3,
    theta_4,
    theta_5,
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

#: Every estimator of θ = Var(μ̂) by name: ``func`` (its core on :class:`BlockStats`, one
#: value per replicate), ``bias`` (E[θ̂] − θ as a formula), ``assumption`` (when it is
#: unbiased, with its source) and ``equal_sizes`` (whether it needs equal block sizes).
#: Each entry is also callable on a loss table.
ESTIMATORS: dict[str, Estimator] = {
    spec.name: spec for spec in (*CVR_SPECS, *MULTISOURCE_SPECS, *NAIVE_SPECS)
}
