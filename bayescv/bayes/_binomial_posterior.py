"""Sampling the 0-1 model, and its derived quantities and InferenceData groups, with numpy.

The targets keep the meaning they have in the Gaussian model (:mod:`bayescv.bayes._posterior`),
now as error rates: with u_k ~ N(0, s²) a fold model's training-set effect on the logit scale,

* ``mu`` (per block) = E_u[expit(λ_k + u)]: the error rate of source k expected over CV runs
  on fresh data from the same sources (CVR: λ_k = α for every fold);
* ``expected_cv`` = Σ_k (n_k / N) μ_k: E[μ̂] with the sources fixed;
* ``ose`` = E[expit(α + sqrt(τ² + s²) z)]: the mean error rate over the population of
  sources of a model trained as the CV fold models are (Geras & Sutton 2013, eq. 3);
* ``new_source`` = E_u[expit(α + τ z + u)], z ~ N(0, 1): the error rate of one new source;
* ``theta``: Var(μ̂) by the delta method, Σ_k w_k² μ_k (1 − μ_k) / n_k + q ᵀ Γ q with
  q_k = w_k μ_k (1 − μ_k).

The expectations over u and z are Gauss–Hermite sums (:data:`_NODES` nodes: exact to
rounding for these smooth integrands). The source levels λ given the block logits η are
drawn exactly by Matheron's rule, as the Gaussian model draws its source means.
"""

from __future__ import annotations

import warnings

import numpy as np
import xarray as xr

from bayescv._extras import import_quietly
from bayescv._provenance import child_seeds
from bayescv.bayes._coordinates import expit, logit
from bayescv.bayes._posterior import dataset
from bayescv.bayes.binomial_model import (
    BinomialStats,
    block_logits,
    build_binomial_model,
    jeffreys_logit_draws,
    natural_params,
)

__all__ = ["binomial_inference_data", "replicate_kind", "sample_binomial"]

_NODES = 24
_Z, _W = np.polynomial.hermite_e.hermegauss(_NODES)
_W = _W / _W.sum()


def _mean_expit(loc: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """E[expit(loc + scale · z)], z ~ N(0, 1), by Gauss–Hermite quadrature, batched."""
    loc, scale = np.broadcast_arrays(np.asarray(loc, float), np.asarray(scale, float))
    return expit(loc[..., None] + scale[..., None] * _Z) @ _W


def _start(scheme: str, k: int, rng: np.random.Generator) -> np.ndarray:
    head = 4 if scheme == "source" else 3
    x = np.concatenate([rng.uniform(-1, 1, head), rng.uniform(-1, 1, k)])
    x[head - 1] = logit(rng.uniform(0.3, 0.7))  # ρ's coordinate, on the log-odds scale
    return x


def sample_binomial(
    sampler, data, scheme, draws, tune, chains, seed, target_accept, n_jobs, progress
):
    """Sample the 0-1 model with nutpie (its numba density) or PyMC's NUTS (its PyMC model).

    Returns
    -------
    values : dict of ndarray
        ``level_z``, ``tau_z`` (CVS), ``gamma_sd_z``, ``rho_b`` (constrained) of shape
        (chain, draw) and ``eta_z`` of shape (chain, draw, K).
    sample_stats : xarray.Dataset
    seconds : float
        Time spent compiling or loading the log-density.
    """
    from bayescv.bayes import _binomial_density
    from bayescv.bayes._samplers import nutpie_model

    k = int(np.size(data["y"]))
    source = scheme == "source"
    init_seed, run_seed = child_seeds(seed, 2)
    if sampler == "nutpie":
        nutpie = import_quietly("nutpie")
        slices = _binomial_density.coordinate_slices(source, k)
        model, slices, seconds = nutpie_model(
            _binomial_density, data, source, slices,
            lambda rng: _start(scheme, k, rng), init_seed,
        )  # fmt: skip
        kwargs = {} if n_jobs is None else {"cores": n_jobs}
        idata = nutpie.sample(
            model, draws=draws, tune=tune, chains=chains, seed=run_seed,
            target_accept=target_accept, progress_bar=progress, save_warmup=False, **kwargs,
        )  # fmt: skip
        flat = np.asarray(idata.posterior["x"].values, dtype=float)
        values = {name: flat[..., where] for name, where in slices.items()}
        values = {name: v if name == "eta_z" else v[..., 0] for name, v in values.items()}
        values["rho_b"] = expit(values.pop("rho_b_logodds__"))
        return values, idata.sample_stats, seconds
    if sampler not in ("pymc", "numpyro"):  # pragma: no cover - resolve_sampler checks names
        raise ValueError(f"unknown sampler {sampler!r}")
    from bayescv.bayes.model import _import_pymc

    pm = _import_pymc()
    rng = np.random.default_rng(init_seed)
    slices = _binomial_density.coordinate_slices(source, k)
    starts = []
    for _ in range(chains):
        x = _start(scheme, k, rng)
        point = {n: (x[s] if n == "eta_z" else x[s][0]) for n, s in slices.items()}
        point["rho_b"] = expit(point.pop("rho_b_logodds__"))
        starts.append(point)
    if sampler == "pymc" and n_jobs not in (None, 1):
        raise ValueError("sampler='pymc' runs its chains one after another (n_jobs=1)")
    extra = {"nuts_sampler": "numpyro"} if sampler == "numpyro" else {"cores": 1}
    with build_binomial_model(scheme, data):
        idata = pm.sample(
            draws=draws, tune=tune, chains=chains, target_accept=target_accept,
            random_seed=run_seed, initvals=starts, progressbar=progress,
            compute_convergence_checks=False, **extra,
        )  # fmt: skip
    post = idata.posterior
    names = ("level_z", "gamma_sd_z", "rho_b", "eta_z") + (("tau_z",) if source else ())
    values = {name: np.asarray(post[name].values, dtype=float) for name in names}
    return values, idata.sample_stats, float("nan")


def derived(p: dict[str, np.ndarray], stats: BinomialStats, rng: np.random.Generator) -> dict:
    """``lambda``, ``mu``, ``theta``, ``expected_cv``, ``ose``, ``new_source`` per draw."""
    alpha, tau, s, rho = p["alpha"], p["tau"], p["gamma_sd"], p["rho"]
    k = stats.n_blocks
    shape = (*alpha.shape, k)
    if stats.scheme == "source":
        # λ | η by Matheron's rule: λ' ~ N(α, τ² I), u' ~ N(0, Γ), then
        # λ = λ' + τ² V⁻¹ (η − λ' − u'), V = τ² I + Γ = d I + c 11ᵀ.
        lam0 = alpha[..., None] + tau[..., None] * rng.standard_normal(shape)
        u0 = _draw_gamma(s, rho, shape, rng)
        resid = p["eta"] - lam0 - u0
        d = tau**2 + (1.0 - rho) * s**2
        c = rho * s**2
        total = resid.sum(-1, keepdims=True)
        solved = (resid - (c / (d + k * c))[..., None] * total) / d[..., None]
        lam = lam0 + (tau**2)[..., None] * solved
    else:
        lam = np.broadcast_to(alpha[..., None], shape)
    mu = _mean_expit(lam, s[..., None])
    w = stats.weights
    q = w * mu * (1.0 - mu)
    gamma_part = s**2 * ((1.0 - rho) * (q**2).sum(-1) + rho * q.sum(-1) ** 2)
    theta = (w**2 * mu * (1.0 - mu) / stats.n).sum(-1) + gamma_part
    out = {
        "lambda": np.array(lam),
        "mu": mu,
        "theta": theta,
        "expected_cv": mu @ w,
        "error_rate": expit(p["eta"]),
    }
    if stats.scheme == "source":
        out["ose"] = _mean_expit(alpha, np.sqrt(tau**2 + s**2))
        new = alpha + tau * rng.standard_normal(alpha.shape)
        out["new_source"] = _mean_expit(new, s)
    return out


def _draw_gamma(s, rho, shape, rng):
    """Draw u ~ MVN(0, s² [(1 − ρ) I + ρ 11ᵀ]) through the matrix's compound-symmetric root."""
    k = shape[-1]
    z = rng.standard_normal(shape)
    root_d = np.sqrt(1.0 - rho)
    beta = (np.sqrt(1.0 + (k - 1.0) * rho) - root_d) / k
    return s[..., None] * (root_d[..., None] * z + (beta * z.sum(-1))[..., None])


def _loglik(stats, eta):
    """Pointwise log-likelihood per block: for repeated runs the mean over the runs."""
    from scipy import stats as st

    n_runs, y_runs = stats.runs
    return st.binom.logpmf(y_runs, n_runs, expit(eta)[..., None, :]).mean(axis=-2)


def _predictive(p, derived_values, stats, rng):
    """Replicated error counts of a data set from the same sources (fresh fold effects)."""
    lam = derived_values["lambda"]
    eta = lam + _draw_gamma(p["gamma_sd"], p["rho"], lam.shape, rng)
    n = np.rint(stats.n).astype(np.int64)  # repeated runs: the mean block size
    y = rng.binomial(n, expit(eta))
    return {"y": y, "ybar": y / n}


def binomial_new_sources(p, stats, rng):
    """Error rates of the blocks of K new sources of the logit-normal population, per draw.

    λ_new ~ N(α, τ²) at each position of the observed design, fold effects u ~ N(0, Γ), and
    y ~ Binomial(n_k, expit(λ_new + u_k)); the mixed replication of
    :mod:`bayescv.bayes._new_sources`, returned as y / n with shape (chain, draw, K).
    """
    shape = (*np.shape(p["alpha"]), stats.n_blocks)
    levels = p["alpha"][..., None] + p["tau"][..., None] * rng.standard_normal(shape)
    logits = levels + _draw_gamma(p["gamma_sd"], p["rho"], shape, rng)
    n = np.rint(stats.n).astype(np.int64)  # repeated runs: the mean block size
    return rng.binomial(n, expit(logits)) / n


def _prior(data, priors, k, size, rng, scheme):
    """Draws of the parameters and block logits from the prior, with numpy."""
    scaled = {
        "tau": (
            np.abs(rng.normal(0.0, data["tau_scale"], size))
            if scheme == "source"
            else np.zeros(size)
        ),
        "gamma_sd": np.abs(rng.normal(0.0, data["gamma_scale"], size)),
    }
    b = rng.beta(data["rho_a"], data["rho_a"], size)
    scaled["rho"] = data["rho_lower"] + (1.0 - data["rho_lower"]) * b
    level = jeffreys_logit_draws(0.0, 1.0, rng, size)  # η̄ under Jeffreys' prior
    scaled["alpha"], scaled["eta"] = block_logits(
        level, scaled["tau"], scaled["gamma_sd"], scaled["rho"], rng.standard_normal((size, k))
    )
    return {name: value[None] for name, value in scaled.items()}


def replicate_kind(stats: BinomialStats) -> str:
    """Return ``"single"``, ``"repeat"`` or ``"bootstrap"``: what the counts of a fit came from."""
    if stats.n_bootstrap:
        return "bootstrap"
    return "repeat" if stats.n_repeats > 1 else "single"


def binomial_inference_data(values, sample_stats, stats, data, priors, rng, prior_draws):
    """Assemble the InferenceData of a 0-1 fit (groups as :func:`bayescv.bayes.fit` documents)."""
    az = import_quietly("arviz")
    labels = stats.labels
    params = natural_params(stats.scheme, data, values)
    if stats.scheme != "source":
        params.pop("tau")
    post = dataset({**values, **params}, labels)
    p = {**params, "tau": params.get("tau", np.zeros_like(params["alpha"]))}
    drv = derived(p, stats, rng)
    posterior = xr.merge([post, dataset(drv, labels)], compat="override")
    prior = _prior(data, priors, stats.n_blocks, prior_draws, rng, stats.scheme)
    prior_drv = derived(prior, stats, rng)
    y_obs = stats.y
    constant = xr.Dataset(
        {"n": ("block", stats.n), "weights": ("block", stats.weights)},
        coords={"block": labels},
        attrs={
            "likelihood": "binomial",
            "scheme": stats.scheme,
            "replicate_kind": replicate_kind(stats),
            "n_replicates": stats.n_repeats,
            "n_bootstrap": stats.n_bootstrap,
        },
    )
    if stats.sources is not None:
        constant = constant.assign_coords(source=("block", stats.sources))
    prior_vars = {k: v for k, v in prior.items() if stats.scheme == "source" or k != "tau"}
    # New sources from their own stream (a spawned child): every other draw is unchanged.
    new = (
        {"ybar_new": binomial_new_sources(p, stats, rng.spawn(1)[0])}
        if stats.scheme == "source"
        else {}
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # group-name check, as in _posterior
        return az.InferenceData(
            posterior=posterior,
            sample_stats=sample_stats.assign_coords(
                chain=posterior["chain"].values, draw=posterior["draw"].values
            ),
            log_likelihood=dataset({"y": _loglik(stats, p["eta"])}, labels),
            posterior_predictive=dataset(_predictive(p, drv, stats, rng) | new, labels),
            prior=dataset({**prior_vars, **prior_drv}, labels),
            prior_predictive=dataset(_predictive(prior, prior_drv, stats, rng), labels),
            observed_data=xr.Dataset(
                {"y": ("block", y_obs), "ybar": ("block", y_obs / stats.n)},
                coords={"block": labels},
            ),
            constant_data=constant,
        )
