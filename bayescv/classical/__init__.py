"""Closed-form ("quadratic") variance estimators of a CV estimate, and the intervals on them.

* :mod:`bayescv.classical.estimators`: θ_1…θ_5 (Grandvalet & Bengio 2006; Geras & Sutton
  2013), the naive CVS estimators θ^ω, θ^γ, θ_A, θ_B (Geras & Sutton 2013, Table 1 and
  eqs. 11–12), their size-weighted forms, naive standard errors, Bayle et al.'s (2020)
  within-fold and all-pairs variances;
* :mod:`bayescv.classical.quadratic`: the whole Proposition-1 family
  (:func:`quadratic_estimator`) and the moments it combines (:func:`gs_moments`);
* :mod:`bayescv.classical.expectations`: the exact expectation and bias of each;
* :mod:`bayescv.classical.intervals`: all estimates of a loss table at once
  (:func:`variance_estimates`) and the intervals built on them (:func:`cv_intervals`,
  :func:`bootstrap_interval`);
* :mod:`bayescv.classical.paired`: paired comparison of two learners on the same splits.
"""

# Each module lists its names once, in its own __all__; the package exports them all.
from bayescv.classical import estimators, quadratic
from bayescv.classical._block_stats import BlockStats, block_stats
from bayescv.classical.estimators import *  # noqa: F403
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
from bayescv.classical.quadratic import *  # noqa: F403

__all__ = [
    *estimators.__all__,
    *quadratic.__all__,
    "ALTERNATIVES",
    "BlockStats",
    "block_stats",
    "INTERVAL_METHODS",
    "RANDOM_KFOLD_ONLY",
    "bootstrap_interval",
    "coefficients",
    "cv_intervals",
    "default_methods",
    "expected_estimates",
    "interval_target",
    "paired_comparison",
    "true_variance",
    "variance_estimates",
]
