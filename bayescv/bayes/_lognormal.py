"""A lognormal population of sources: ``ose`` and ``new_source`` on the log scale.

Under ``μ_k ~ N(μ₀, τ²)`` the population mean μ₀ weights each source by its precision,
1 / (τ² + Σ_kk). For a loss whose spread grows with its level (a squared error's variance is
about twice its mean squared), the sources with the higher error have the larger Σ_kk and
the smaller weight, so μ₀ is pulled towards the low-error sources. On the log scale the
spread of a block mean no longer grows with its level: by the delta method,

    log ē_k ≈ λ_k + (ē_k − μ_k) / μ_k,   Var ≈ Σ_kk / μ_k²,

and for a squared error Σ_kk / μ_k² ≈ 2 / n_k whatever the level. This module maps the
collapsed statistics of the block means to those of their logarithms (the same likelihood
then applies: λ_k ~ N(α, τ²) and log ē ~ MVN(α 1, τ² I + D Σ D), D = diag(1 / ē_k)) and
turns the fitted (α, τ) into the two population targets of a lognormal population:
``ose`` = E[μ_new] = exp(α + τ² / 2), ``new_source`` = exp(α + τ z).
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pandas as pd
import xarray as xr

from bayescv._names import did_you_mean
from bayescv.bayes._coordinates import natural_params
from bayescv.bayes._new_sources import block_means_from_log, lognormal_new_sources
from bayescv.bayes._posterior import dataset, derived_quantities, parameters, predictive
from bayescv.bayes._samplers import SAMPLE
from bayescv.bayes._stats import CollapsedStats, _scales
from bayescv.bayes.model import get_model, model_data
from bayescv.bayes.priors import Priors
from bayescv.losses import effective_range

__all__ = [
    "POPULATIONS",
    "add_population",
    "check_population",
    "fit_population",
    "log_scale",
    "population_targets",
    "resolve_population",
    "warn_pooled_sources",
]

#: Models of the population of source error levels: μ_k ~ N(μ₀, τ²) or log μ_k ~ N(α, τ²).
POPULATIONS = ("normal", "lognormal")


def check_population(
    population: str, likelihood: str, scheme: str | None, losses: xr.Dataset | None = None
) -> None:
    """Refuse an unknown population, or a lognormal one where the model has no sources.

    Warn when the blocks of the CVS table `losses` hold several sources each
    (:func:`warn_pooled_sources`).

    Raises
    ------
    ValueError
        For a name not in :data:`POPULATIONS` or ``"auto"``, or ``"lognormal"`` with the
        binomial likelihood (whose population is logit-normal already) or a random K-fold
        table.
    """
    if population not in ("auto", *POPULATIONS):
        choices = ("auto", *POPULATIONS)
        raise ValueError(
            f"population must be one of {choices}, got {population!r}"
            f"{did_you_mean(population, choices)}"
        )
    if population == "lognormal" and (likelihood == "binomial" or scheme != "source"):
        raise ValueError(
            "population='lognormal' is for the Gaussian model of a CVS table (a population "
            "of sources); the binomial model's population is logit-normal already, and a "
            "random K-fold table has no sources"
        )
    if losses is not None:
        warn_pooled_sources(losses, scheme, stacklevel=3)


def warn_pooled_sources(losses: xr.Dataset, scheme: str, *, stacklevel: int) -> None:
    """Warn when the blocks of a CVS table hold several sources each (GroupKFold folds).

    The model reads each block as one source: ``ose`` and ``new_source`` are then for a new
    block of that many sources, and ``new_source`` is narrower than the error of one source.

    Parameters
    ----------
    losses : xarray.Dataset
        The loss table fitted.
    scheme : str
        The scheme of the fit; only ``"source"`` is checked.
    stacklevel : int
        Passed to :func:`warnings.warn`, to point at the user's call.
    """
    if scheme != "source" or not {"block", "source"} <= set(losses.coords):
        return
    # Views, not xr.broadcast's copies: 10⁷ losses are checked in a small part of a second.
    block, source = (
        a.ravel() for a in np.broadcast_arrays(losses["block"].values, losses["source"].values)
    )
    if block.dtype == source.dtype and np.array_equal(block, source):
        return  # leave-one-source-out blocks are labelled by their source
    block_codes, blocks = pd.factorize(block)
    source_codes, sources = pd.factorize(source)
    if blocks.size * sources.size <= 10**7:  # the (block, source) pairs seen, as a table
        seen = np.zeros((blocks.size, sources.size), dtype=bool)
        seen[block_codes, source_codes] = True
        most = int(seen.sum(axis=1).max())
    else:
        most = int(pd.Series(source_codes).groupby(block_codes).nunique().max())
    if most > 1:
        warnings.warn(
            f"the blocks of this table hold up to {most} sources each (folds of "
            "whole sources, as GroupKFold or an int cv with groups makes them); the model "
            "reads each block as one source, so 'ose' and 'new_source' are for a new block of "
            "such sources, and new_source is narrower than the error of one new source; for "
            "intervals over single sources run leave-one-source-out CV "
            "(bayescv.cross_val_losses(..., groups=groups) with cv=None)",
            UserWarning,
            stacklevel=stacklevel + 1,
        )


def resolve_population(population: str, losses: xr.Dataset, stats: CollapsedStats) -> str:
    """Resolve ``"auto"`` for the Gaussian model: lognormal for non-negative, unbounded losses.

    A loss that declares the range [0, ∞) (squared and absolute errors, log loss) is a scale
    of its own level: its spread grows with its mean, which is what pulls the normal
    population's μ₀ towards the low-error sources. Such a CVS table with every block mean
    above 0 gets ``"lognormal"``; any other table (0-1 losses, differences of two learners'
    losses, losses without a declared range, a random K-fold table) ``"normal"``.
    """
    if population != "auto":
        return population
    low, high = effective_range(losses)
    positive = bool((stats.replicate_means > 0).all())
    nonnegative_scale = low == 0.0 and high == np.inf
    return "lognormal" if stats.scheme == "source" and nonnegative_scale and positive else "normal"


def log_scale(stats: CollapsedStats) -> CollapsedStats:
    """Map collapsed statistics to those of the log block means, by the delta method.

    Each block's statistics are divided by its mean: the within-block sums of squares
    become W_k / ē_k² (ν_k / ē_k² is the block's relative variance), the scatter of
    replicated block means D S D and the bootstrap's duplicated-point term c_k / ē_k². The
    log block means are corrected for the first-order bias of the logarithm,
    E[log ē_k] ≈ log μ_k − ν_k / (2 n_k μ_k²) (the within-block part of Var(ē_k); the
    training-set part ω_k is not known before the fit and is left out).

    Parameters
    ----------
    stats : CollapsedStats
        Statistics of a CVS table (:func:`bayescv.bayes._stats.collapse`).

    Returns
    -------
    CollapsedStats
        The same design on the log scale, with its own data scales for the priors.

    Raises
    ------
    ValueError
        When a block mean is not positive (its logarithm does not exist).
    """
    means = stats.replicate_means
    if not (means > 0).all():
        replicate, block = np.argwhere(~(means > 0))[0]
        raise ValueError(
            f"population='lognormal' needs positive block means, but block "
            f"{stats.labels[block].item()!r} has mean {means[replicate, block]:g}"
            + (f" in replicate {replicate}" if means.shape[0] > 1 else "")
            + "; use population='normal' for losses that can average 0 or less"
        )
    # A source is a block of the same points in every replicate of a CVS table: one size.
    n_all = np.broadcast_to(stats.n, means.shape).astype(float)
    within_rel = stats.replicate_W / np.maximum(n_all - 1.0, 1.0) / means**2
    log_means = np.log(means) + within_rel / (2.0 * n_all)
    w_rel = stats.replicate_W / means**2
    scale = 1.0 / stats.ybar
    ybar_rel = stats.W / stats.dof / stats.ybar**2
    ybar = np.log(stats.ybar) + ybar_rel / (2.0 * stats.n * stats.ybar_count)
    return dataclasses.replace(
        stats,
        ybar=ybar,
        W=stats.W * scale**2,
        scatter=stats.scatter * np.outer(scale, scale),
        scatter_extra=stats.scatter_extra * scale**2,
        replicate_means=log_means,
        replicate_W=w_rel,
        scales=_scales(n_all, log_means, w_rel, ybar),
    )


def population_targets(
    alpha: np.ndarray, tau: np.ndarray, rng: np.random.Generator
) -> dict[str, np.ndarray]:
    """``ose`` and ``new_source`` of a lognormal population, log μ ~ N(α, τ²), per draw.

    Parameters
    ----------
    alpha, tau : ndarray
        Draws of the log-scale population mean and standard deviation.
    rng : numpy.random.Generator
        Source of the new source's standard-normal draw.

    Returns
    -------
    dict of ndarray
        ``ose`` = exp(α + τ² / 2), the mean of the population, and ``new_source`` =
        exp(α + τ z), one new source's level.

    Examples
    --------
    >>> import numpy as np
    >>> out = population_targets(np.log([2.0]), np.array([0.0]), np.random.default_rng(0))
    >>> out["ose"].tolist(), out["new_source"].tolist()
    ([2.0], [2.0])
    """
    z = rng.standard_normal(np.shape(alpha))
    # exp overflows to inf only past τ ≈ 38 on the log scale (sources e^38 times apart):
    # prior draws for two sources orders of magnitude apart, whose prior scale follows them.
    with np.errstate(over="ignore"):
        return {"ose": np.exp(alpha + 0.5 * tau**2), "new_source": np.exp(alpha + tau * z)}


def add_population(
    idata,
    alpha: np.ndarray,
    tau: np.ndarray,
    prior_alpha: np.ndarray,
    prior_tau: np.ndarray,
    diverging: np.ndarray,
    rng: np.random.Generator,
) -> None:
    """Put the lognormal population's targets into a fit of the normal model, in place.

    ``ose`` and ``new_source`` of the posterior and prior groups are replaced by those of
    the log-scale fit, whose α and τ are kept as ``log_mu0`` and ``log_tau``; a transition
    that diverged in either fit counts as divergent.
    """
    post, prior = idata.posterior, idata.prior
    for group, a, t in ((post, alpha, tau), (prior, prior_alpha, prior_tau)):
        targets = population_targets(a, t, rng)
        for name, value in {**targets, "log_mu0": a, "log_tau": t}.items():
            group[name] = (("chain", "draw"), np.asarray(value, dtype=float))
        # mu0 and tau stay the normal model's (behind θ and expected_cv): say so where a
        # reader of the posterior would otherwise take mu0 for this population's mean.
        for name, ours in (("mu0", "ose and log_mu0"), ("tau", "log_tau")):
            if name in group:
                group[name].attrs["description"] = (
                    f"the normal model's {name}; the lognormal population's is {ours}"
                )
    stats = idata.sample_stats
    if "diverging" in stats:
        both = np.asarray(stats["diverging"].values, dtype=bool) | np.asarray(diverging, bool)
        stats["diverging"] = xr.DataArray(both, dims=stats["diverging"].dims)


def pooled_sources(
    p_log: dict, log_stats: CollapsedStats, stats: CollapsedStats, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Draw pooled source means and same-source replicates under the lognormal population.

    The log-scale fit's λ_k | data (Matheron's rule, as
    :func:`bayescv.bayes._posterior.derived_quantities` draws μ_k under the normal population)
    gives the pooled source means exp(λ_k); replicated block means are drawn around λ_k on
    the log scale with the log-scale fit's Σ / c and mapped back with the bias correction
    of :func:`log_scale` taken off, as for new sources
    (:func:`~bayescv.bayes._new_sources.block_means_from_log`).

    Parameters
    ----------
    p_log : dict of ndarray
        The log-scale fit's parameters (:func:`bayescv.bayes._posterior.parameters`).
    log_stats, stats : CollapsedStats
        The design on the log scale and on the losses' scale.
    rng : numpy.random.Generator
        Source of the draws.

    Returns
    -------
    mu_pooled, ybar : ndarray of shape (chain, draw, K)
    """
    log_pooled = derived_quantities(p_log, log_stats, rng)["mu_pooled"]
    log_ybar = predictive(p_log, {"mu_pooled": log_pooled}, log_stats, rng)["ybar"]
    return np.exp(log_pooled), block_means_from_log(log_ybar, log_stats, stats)


def fit_population(
    idata,
    stats: CollapsedStats,
    priors: Priors,
    sampler: str,
    settings: dict,
    seed: int,
    rng: np.random.Generator,
    prior_draws: int,
) -> None:
    """Fit the model to the log block means and put the lognormal targets into `idata`.

    The log-scale statistics go through the same compiled density as the block means (no
    new compilation). The partially pooled source means (``mu_pooled``), the posterior
    predictive's replicated block means (``ybar``) and its new sources (``ybar_new``) are
    redrawn from the lognormal population, and the prior predictive's block means from its
    prior; ``W``'s replicates stay the normal model's.
    `settings` holds the first fit's ``draws``, ``tune``, ``chains``, ``target_accept``,
    ``n_jobs`` and ``progress``.
    """
    log_stats = log_scale(stats)
    data = model_data(log_stats, priors)
    compiled = None if sampler == "nutpie" else get_model(log_stats.scheme, data)
    values, sample_stats, _ = SAMPLE[sampler](
        compiled, data, log_stats.scheme, settings["draws"], settings["tune"],
        settings["chains"], seed, settings["target_accept"], settings["n_jobs"],
        settings["progress"],
    )  # fmt: skip
    params = natural_params(log_stats.scheme, data, values)
    p_log = parameters(dataset({**values, **params}, log_stats.labels), log_stats)
    # The predictive check's new sources, pooled source means and same-source replicates,
    # from this population; spawned streams leave the normal model's other draws as they were.
    new_rng, pooled_rng, prior_rng = rng.spawn(3)
    dims = ("chain", "draw", "block")
    idata.posterior_predictive["ybar_new"] = (
        dims, lognormal_new_sources(p_log, log_stats, stats, new_rng)
    )  # fmt: skip
    pooled, ybar = pooled_sources(p_log, log_stats, stats, pooled_rng)
    idata.posterior["mu_pooled"] = (dims, pooled)
    idata.posterior_predictive["ybar"] = (dims, ybar)
    scaled = priors.scaled_to(log_stats.scales, log_stats.n_blocks)
    prior = priors.draw(scaled, log_stats.n_blocks, prior_draws, rng, scheme=log_stats.scheme)
    # The prior predictive check checks this population's prior too: new sources from the
    # log-scale prior, mapped back (W's replicates stay the normal model's, as above).
    prior_p = parameters(
        dataset({k: v[None] for k, v in prior.items()}, log_stats.labels), log_stats
    )
    with np.errstate(over="ignore"):  # a prior τ far out: sources e^38 apart overflow to inf
        prior_ybar = lognormal_new_sources(prior_p, log_stats, stats, prior_rng)
    idata.prior_predictive["ybar"] = (dims, prior_ybar)
    diverging = np.asarray(sample_stats["diverging"].values, dtype=bool)
    add_population(
        idata, params["mu0"], params["tau"], prior["mu0"][None], prior["tau"][None],
        diverging, rng,
    )  # fmt: skip
