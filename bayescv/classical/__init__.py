"""Closed-form ("quadratic") variance estimators of a CV estimate, and the intervals on them.

* :mod:`bayescv.classical.estimators`: θ_1…θ_5 (Grandvalet & Bengio 2006; Geras & Sutton
  2013), the naive CVS estimators θ^ω, θ^γ, θ_A, θ_B (Geras & Sutton 2013, Table 1 and
  eqs. 11–12), their size-weighted forms, naive standard errors, Bayle et al.'s (2020)
  within-fold and all-pairs variances and the whole Proposition-1 family
  (:func:`quadratic_estimator`);
* :mod:`bayescv.classical.expectations`: the exact expectation and bias of each;
* :mod:`bayescv.classical.intervals`: all estimates of a loss table at once
  (:func:`variance_estimates`) and the intervals built on them (:func:`cv_intervals`,
  :func:`bootstrap_interval`);
* :mod:`bayescv.classical.paired`: paired comparison of two learners on the same splits.
"""

from bayescv.classical.estimators import (
    ESTIMATORS,
    BlockStats,
    block_stats,
    gs_moments,
    naive_se_folds,
    naive_se_points,
    quadratic_estimator,
    sigma2_all_pairs,
    sigma2_within,
    theta_1,
    theta_2,
    theta_3,
    theta_4,
    theta_5,
    theta_A,
    theta_A_weighted,
    theta_B,
    theta_B_weighted,
    theta_gamma,
    theta_gamma_pair,
    theta_omega,
    theta_omega_block,
)
from bayescv.classical.expectations import coefficients, expected_estimates, true_variance
from bayescv.classical.intervals import (
    INTERVAL_METHODS,
    RANDOM_KFOLD_ONLY,
    bootstrap_interval,
    cv_intervals,
    default_methods,
    interval_target,
    variance_estimates,
)
from bayescv.classical.paired import ALTERNATIVES, paired_comparison

__all__ = [
    "ALTERNATIVES",
    "ESTIMATORS",
    "INTERVAL_METHODS",
    "RANDOM_KFOLD_ONLY",
    "BlockStats",
    "block_stats",
    "bootstrap_interval",
    "coefficients",
    "cv_intervals",
    "default_methods",
    "expected_estimates",
    "gs_moments",
    "interval_target",
    "naive_se_folds",
    "naive_se_points",
    "paired_comparison",
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
    "true_variance",
    "variance_estimates",
]
