"""Block means of a replicated data set whose sources are new draws from the population.

The posterior predictive group replicates the *observed* sources: each replicated block
mean is drawn around its own source's fitted level, so the spread of the replicated means
matches the observed spread whatever the population model, and says nothing of it. A
*mixed* replication (Gelman, Meng & Stern 1996; Marshall & Spiegelhalter
2007) instead draws K new levels from the fitted population, one per position of the
observed design (its block sizes, its within-block and training-set variances), and block
means around them:

- normal population: μ_new ~ N(μ₀, τ²), ē_new ~ MVN(μ_new, Σ / c);
- lognormal population: log μ_new ~ N(α, τ²), log ē_new ~ MVN(log μ_new, D Σ D / c) on the
  delta-method scale that :func:`bayescv.bayes._lognormal.log_scale` fits;
- binomial (logit-normal) population: λ_new ~ N(α, τ²), fold effects u ~ N(0, Γ), error
  counts ~ Binomial(n_k, expit(λ_new + u))
  (:func:`bayescv.bayes._binomial_posterior.binomial_new_sources`, beside the model's other
  draws).

Statistics of the set of source means that do not depend on which source is which (their
standard deviation and skewness, :mod:`bayescv.bayes.checks`) then check the population's
shape: right-skewed source means under a normal population give a skewness p-value near 0.

References
----------
Gelman, A., Meng, X.-L. & Stern, H. (1996). Posterior predictive assessment of model
fitness via realized discrepancies. Statistica Sinica 6(4), 733–807.

Marshall, E. C. & Spiegelhalter, D. J. (2007). Identifying outliers in Bayesian
hierarchical models: a simulation-based approach. Bayesian Analysis 2(2), 409–444.
"""

from __future__ import annotations

import numpy as np

from bayescv.bayes._rank1 import own_variance, rank1_mvn

__all__ = ["block_means_from_log", "gaussian_new_sources", "lognormal_new_sources"]


def gaussian_new_sources(p: dict, stats, rng: np.random.Generator) -> np.ndarray:
    """Block means of K new sources of a normal population, per posterior draw.

    Parameters
    ----------
    p : dict of ndarray
        ``mu0``, ``tau`` of shape (chain, draw) and ``nu``, ``gamma_sd`` of shape
        (chain, draw, K), ``rho`` of shape (chain, draw)
        (:func:`bayescv.bayes._posterior.parameters`).
    stats : CollapsedStats
        The design: block sizes and the number of replicates averaged in each block mean.
    rng : numpy.random.Generator
        Source of the draws.

    Returns
    -------
    ndarray of shape (chain, draw, K)
        ē_new ~ MVN(μ₀ + τ z, Σ / c), z ~ N(0, I), Σ = diag(own) + ρ s sᵀ.
    """
    own = own_variance(p["nu"], p["gamma_sd"], p["rho"], stats.n)
    levels = p["mu0"][..., None] + p["tau"][..., None] * rng.standard_normal(own.shape)
    count = stats.ybar_count
    return rank1_mvn(levels, own / count, p["gamma_sd"], p["rho"] / count, rng)


def lognormal_new_sources(p_log: dict, log_stats, stats, rng: np.random.Generator) -> np.ndarray:
    """Block means of K new sources of a lognormal population, on the losses' scale.

    Parameters
    ----------
    p_log : dict of ndarray
        The parameters of the fit to the log block means, as in :func:`gaussian_new_sources`
        (``mu0`` is α, ``tau`` the log-scale spread).
    log_stats, stats : CollapsedStats
        The design on the log scale (:func:`bayescv.bayes._lognormal.log_scale`) and on
        the losses' scale.
    rng : numpy.random.Generator
        Source of the draws.

    Returns
    -------
    ndarray of shape (chain, draw, K)
        exp(log ē_new − b_k), by :func:`block_means_from_log`.
    """
    return block_means_from_log(gaussian_new_sources(p_log, log_stats, rng), log_stats, stats)


def block_means_from_log(log_means: np.ndarray, log_stats, stats) -> np.ndarray:
    """Map replicated log block means back to the losses' scale: exp(log ē − b_k).

    b_k = ``log_stats.ybar`` − log(``stats.ybar``) is the first-order bias of log ē_k that
    :func:`~bayescv.bayes._lognormal.log_scale` added to the observed log means; it is taken
    off so that replicated and observed block means are on the same footing.
    """
    return np.exp(log_means - (log_stats.ybar - np.log(stats.ybar)))
