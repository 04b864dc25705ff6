"""The posterior's derived quantities and the numpy groups of a fit, in O(K) per draw.

:func:`inference_data` turns the sampled coordinates of any sampler into the
``InferenceData`` that :func:`bayescv.bayes.fit` returns: the parameters
(:func:`bayescv.bayes._coordinates.natural_params`), θ_CVS (Geras & Sutton 2013, eq. 7; for
unequal block sizes the variance wᵀ Σ w of the pooled mean, w_k = n_k / N), the fixed-source
and partially pooled source means, ``expected_cv``, ``ose`` and ``new_source``, and the
log-likelihood, prior, prior-predictive and posterior-predictive groups, all with numpy
(no compiled graph). Σ is diagonal plus rank one (:mod:`bayescv.bayes._rank1`), so no
K × K matrix is formed.
"""

from __future__ import annotations

import warnings

import numpy as np
import xarray as xr

from bayescv._extras import import_quietly
from bayescv.bayes._coordinates import natural_params
from bayescv.bayes._new_sources import gaussian_new_sources
from bayescv.bayes._rank1 import own_variance, rank1_mvn, rank1_solve
from bayescv.bayes._stats import CollapsedStats, loglik_numpy

__all__ = [
    "MEDIAN_POPULATIONS",
    "dataset",
    "derived_quantities",
    "inference_data",
    "parameters",
    "predictive",
    "reports_median",
]

#: Populations whose ``ose`` and ``new_source`` are nonlinear in τ (exp(α + τ²/2),
#: E expit(α + τz)), with right-skewed posteriors: their rows report the posterior median.
MEDIAN_POPULATIONS = ("lognormal", "logit-normal")


def reports_median(population: str | None, target: str) -> bool:
    """Whether the interval row of `target` reports the posterior median, not the mean."""
    return population in MEDIAN_POPULATIONS and target != "expected_cv"


def parameters(ds: xr.Dataset, stats: CollapsedStats) -> dict[str, np.ndarray]:
    """Model parameters as numpy arrays of shape (chain, draw[, K]), CVR broadcast to K."""
    k = stats.n_blocks
    get = lambda name: np.asarray(ds[name].values, dtype=float)  # noqa: E731
    if stats.scheme == "source":
        mu0, tau = get("mu0"), get("tau")
        nu, gamma_sd = get("nu"), get("gamma_sd")
    else:
        mu0 = get("mu")
        tau = np.zeros_like(mu0)
        nu = np.repeat(get("nu")[..., None], k, axis=-1)
        gamma_sd = np.repeat(get("gamma_sd")[..., None], k, axis=-1)
    return {"mu0": mu0, "tau": tau, "nu": nu, "gamma_sd": gamma_sd, "rho": get("rho")}


def _own(p: dict[str, np.ndarray], stats: CollapsedStats) -> np.ndarray:
    """Diagonal of Σ less its rank-one part, own_k = (1 − ρ) s_k² + ν_k / n_k, per draw."""
    return own_variance(p["nu"], p["gamma_sd"], p["rho"], stats.n)


def derived_quantities(
    p: dict[str, np.ndarray], stats: CollapsedStats, rng: np.random.Generator
) -> dict:
    """θ, fixed-source and pooled source means, expected_cv, ose and new_source, per draw.

    Σ = Γ + diag(ν_k/n_k) = diag(own) + ρ s sᵀ is diagonal plus rank one, so every draw and
    solve here is O(K) per posterior draw (no K × K matrix: K = 1000 sources cost the same
    per source as K = 10).
    """
    own, s, rho = _own(p, stats), p["gamma_sd"], p["rho"]
    w = stats.weights
    # θ = wᵀ Σ w, eq. 7 of Geras & Sutton (2013) for unequal block sizes.
    theta = (w**2 * own).sum(-1) + rho * ((w * s).sum(-1)) ** 2
    count = stats.ybar_count
    mu = rank1_mvn(stats.ybar, own / count, s, rho / count, rng)
    out = {
        "omega": s**2,
        "sigma2": p["nu"] + s**2,
        "theta": theta,
        "mu": mu,
        # Σ_k (n_k / N) μ_k = E[μ̂] of the pooled CV estimate μ̂ = Σ_k S_k / N.
        "expected_cv": mu @ w,
    }
    if stats.scheme == "source":
        # Source means given (ē, μ₀, τ, Σ), drawn by Matheron's rule: with x ~ N(0, τ² I) and
        # y ~ N(0, Σ/c), μ₀ + x + τ² V⁻¹ (ē − μ₀ − x − y) has the exact conditional law.
        tau2 = (p["tau"] ** 2)[..., None]
        x = np.sqrt(tau2) * rng.standard_normal(own.shape)
        y = rank1_mvn(np.zeros(own.shape), own / count, s, rho / count, rng)
        resid = stats.ybar - p["mu0"][..., None] - x - y
        solved = rank1_solve(tau2 + own / count, s, rho / count, resid)
        out["mu_pooled"] = p["mu0"][..., None] + x + tau2 * solved
        # The out-of-source error (Geras & Sutton 2013, eq. 3) is an expectation over new
        # sources: the population mean μ₀. One new source's error level is μ₀ + τ z, a
        # predictive draw that carries τ² itself.
        out["ose"] = p["mu0"].copy()
        out["new_source"] = p["mu0"] + p["tau"] * rng.standard_normal(p["mu0"].shape)
    else:
        out["mu_pooled"] = np.broadcast_to(p["mu0"][..., None], mu.shape).copy()
    return out


def predictive(p: dict, derived: dict, stats: CollapsedStats, rng: np.random.Generator) -> dict:
    """Replicated statistics of a data set of the same design: block means and W."""
    count = stats.ybar_count
    ybar = rank1_mvn(
        derived["mu_pooled"], _own(p, stats) / count, p["gamma_sd"], p["rho"] / count, rng
    )
    w = p["nu"] * rng.chisquare(stats.dof, size=p["nu"].shape)
    return {"ybar": ybar, "W": w}


def dataset(values: dict[str, np.ndarray], labels: np.ndarray) -> xr.Dataset:
    """One InferenceData group: arrays of shape (chain, draw[, K]) on dims (chain, draw, block)."""
    data_vars = {}
    for name, value in values.items():
        dims = ("chain", "draw", "block")[: value.ndim]
        data_vars[name] = (dims, np.asarray(value))
    ds = xr.Dataset(data_vars)
    if "block" in ds.dims:
        ds = ds.assign_coords(block=labels)
    return ds.assign_coords(chain=np.arange(ds.sizes["chain"]), draw=np.arange(ds.sizes["draw"]))


def inference_data(values, sample_stats, stats, data, priors, rng, prior_draws):
    """Assemble the InferenceData: posterior, derived quantities and the numpy groups.

    Parameters
    ----------
    values : dict of ndarray
        The sampled coordinates, of shape (chain, draw[, K]), ``rho_b`` constrained.
    sample_stats : xarray.Dataset
        The sampler's statistics.
    stats : CollapsedStats
        The data (:func:`bayescv.bayes._stats.collapse`).
    data : dict of ndarray
        The model data the draws were made with (:func:`bayescv.bayes.model.model_data`).
    priors : Priors
        The prior settings, for the prior and prior-predictive groups.
    rng : numpy.random.Generator
        Source of every numpy draw.
    prior_draws : int
        Draws of the prior and prior-predictive groups.

    Returns
    -------
    arviz.InferenceData
        The groups that :func:`bayescv.bayes.fit` documents.
    """
    az = import_quietly("arviz")
    labels = stats.labels
    params = natural_params(stats.scheme, data, values)
    post = dataset({**values, **params}, labels)
    p = parameters(post, stats)
    derived = derived_quantities(p, stats, rng)
    posterior = xr.merge([post, dataset(derived, labels)], compat="override")
    ll = loglik_numpy(stats, p["mu0"], p["tau"], p["nu"], p["gamma_sd"], p["rho"])
    scaled = priors.scaled_to(stats.scales, stats.n_blocks)
    prior = priors.draw(scaled, stats.n_blocks, prior_draws, rng, scheme=stats.scheme)
    prior = {name: value[None] for name, value in prior.items()}
    prior_p = parameters(dataset(prior, labels), stats)
    prior_derived = derived_quantities(prior_p, stats, rng)
    # Prior predictive: the source means are drawn from the prior too, μ_k ~ N(μ₀, τ²).
    tau = prior_p["tau"][..., None]
    mu_k = prior_p["mu0"][..., None] + tau * rng.standard_normal(prior_p["nu"].shape)
    block = {"block": labels}
    constant = xr.Dataset(
        {
            "n": ("block", stats.n),
            "dof": ("block", stats.dof),
            "weights": ("block", stats.weights),
            # (1 − 1/n_k) c̄_k / n_k: the duplicated-point term of the bootstrap scatter
            # (bayescv.bayes._stats.tie_term); zero without resampled bootstrap replicates.
            "bootstrap_tie_term": ("block", stats.scatter_extra),
        },
        coords=block,
        attrs={
            "ybar_count": stats.ybar_count,
            "n_replicates": stats.n_replicates,
            "n_bootstrap": stats.n_bootstrap,
            "replicate_kind": stats.kind,
            "scheme": stats.scheme,
        },
    )
    if stats.sources is not None:
        constant = constant.assign_coords(source=("block", stats.sources))
    # New sources from their own stream (a spawned child): every other draw is unchanged.
    new = (
        {"ybar_new": gaussian_new_sources(p, stats, rng.spawn(1)[0])}
        if stats.scheme == "source"
        else {}
    )
    with warnings.catch_warnings():
        # ArviZ warns that groups it does not know would be "not in the InferenceData
        # scheme"; every group here is a standard one, but the check is by name only.
        warnings.simplefilter("ignore", UserWarning)
        return az.InferenceData(
            posterior=posterior,
            sample_stats=sample_stats.assign_coords(
                chain=posterior["chain"].values, draw=posterior["draw"].values
            ),
            log_likelihood=dataset(ll, labels),
            posterior_predictive=dataset(predictive(p, derived, stats, rng) | new, labels),
            prior=dataset({**prior, **prior_derived}, labels),
            prior_predictive=dataset(predictive(prior_p, {"mu_pooled": mu_k}, stats, rng), labels),
            observed_data=xr.Dataset(
                {"ybar": ("block", stats.ybar), "W": ("block", stats.W)}, coords=block
            ),
            constant_data=constant,
        )
