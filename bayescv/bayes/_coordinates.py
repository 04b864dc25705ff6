"""The sampled coordinates of the model and its parameters, both ways, with numpy.

The samplers move on unconstrained coordinates centred and scaled by the data
(:mod:`bayescv.bayes.model`, "Parameterisation"): ``{loc}_z`` (μ₀, CVR μ, drawn from its
exact conditional), ``tau_z`` (τ = κ softplus(z), CVS only), ``nu_z``, ``gamma_sd_z`` and
``rho_b`` (ρ's Beta coordinate, sampled on the log-odds scale as ``rho_b_logodds__``).
:func:`natural_params` maps draws to parameters, the same way for every sampler;
:func:`coordinates` is its inverse, for evaluating a compiled log-density at given
parameters; :func:`logit`, :func:`expit` and :func:`inverse_softplus` are the scalar maps
they and the samplers share.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bayescv.bayes._rank1 import own_variance, rank1_parts

__all__ = ["coordinates", "expit", "inverse_softplus", "logit", "natural_params"]


def logit(p: Any) -> np.ndarray:
    """log(p / (1 − p)), the log-odds of p in (0, 1): ``rho_b`` to ``rho_b_logodds__``."""
    return np.log(p) - np.log1p(-np.asarray(p))


def expit(x: Any) -> np.ndarray:
    """1 / (1 + exp(−x)), the inverse of :func:`logit`."""
    return 1.0 / (1.0 + np.exp(-np.asarray(x)))


def inverse_softplus(x: Any) -> np.ndarray:
    """log(exp(x) − 1), the inverse of softplus, for x > 0 (``tau / tau_kappa`` to ``tau_z``)."""
    x = np.asarray(x, dtype=float)
    return x + np.log(-np.expm1(-x))


def natural_params(scheme: str, data: dict[str, np.ndarray], values: dict) -> dict:
    """Map draws of the sampled coordinates to the model's parameters, with numpy.

    Mirrors the deterministics of :func:`bayescv.bayes.model.build_model` (the tests check
    that they agree), so that every sampler's draws are turned into parameters the same way.

    Parameters
    ----------
    scheme : {"source", "random"}
        The model variant.
    data : dict of ndarray
        The model data (:func:`bayescv.bayes.model.model_data`) the draws were made with.
    values : dict of ndarray
        ``{loc}_z``, ``tau_z`` (CVS), ``nu_z``, ``gamma_sd_z`` of shape (chain, draw[, K])
        and ``rho_b`` (constrained, in (0, 1)).

    Returns
    -------
    dict of ndarray
        ``mu0`` (CVR: ``mu``), ``tau`` (CVS), ``nu``, ``gamma_sd`` and ``rho``.
    """
    source = scheme == "source"
    loc = "mu0" if source else "mu"
    out = {
        "nu": np.exp(data["nu_loc"] + data["nu_scale"] * values["nu_z"]),
        "gamma_sd": np.exp(data["gamma_loc"] + values["gamma_sd_z"]),
        "rho": data["rho_lower"] + (1.0 - data["rho_lower"]) * values["rho_b"],
    }
    if source:
        out["tau"] = data["tau_kappa"] * np.logaddexp(0.0, values["tau_z"])
        nu, sd = out["nu"], out["gamma_sd"]
    else:  # one ν and one scale for every fold
        nu, sd = out["nu"][..., None], out["gamma_sd"][..., None]
    # μ₀'s exact conditional N(m + B/P, 1/P) given the other coordinates, as in
    # bayescv.bayes.model.loglik_graph: V = τ² I + Σ / c is diagonal plus rank one.
    count = float(data["ybar_count"])
    own = own_variance(nu, sd, out["rho"], data["n"])
    diag_v = (out["tau"][..., None] ** 2 if source else 0.0) + own / count
    resid = data["ybar"] - data["mu0_loc"]
    rc = out["rho"] / count
    u, denom = rank1_parts(diag_v, np.broadcast_to(sd, diag_v.shape), rc)
    u_one, u_r = u.sum(-1), (u * resid).sum(-1)
    a_ = (1.0 / diag_v).sum(-1) - rc * u_one**2 / denom
    b_ = (resid / diag_v).sum(-1) - rc * u_one * u_r / denom
    prec = a_ + 1.0 / data["mu0_scale"] ** 2
    out[loc] = data["mu0_loc"] + b_ / prec + values[f"{loc}_z"] / np.sqrt(prec)
    return out


def coordinates(scheme: str, data: dict[str, np.ndarray], params: dict[str, Any]) -> dict:
    """Map parameter values to the sampled coordinates, the inverse of :func:`natural_params`.

    Parameters
    ----------
    scheme : {"source", "random"}
        The model variant.
    data : dict of ndarray
        The model data (:func:`bayescv.bayes.model.model_data`).
    params : dict
        ``tau`` (CVS only), ``nu``, ``gamma_sd``, ``rho`` and optionally ``mu0_z``
        (CVR: ``mu_z``), the standardised draw of the integrated-out mean (default 0).

    Returns
    -------
    dict of ndarray
        Keyed by PyMC's value-variable names (``rho_b_logodds__`` for ρ).
    """
    loc = "mu0" if scheme == "source" else "mu"
    lower = data["rho_lower"]
    out = {
        f"{loc}_z": np.asarray(params.get(f"{loc}_z", 0.0)),
        "nu_z": (np.log(params["nu"]) - data["nu_loc"]) / data["nu_scale"],
        "gamma_sd_z": np.log(params["gamma_sd"]) - data["gamma_loc"],
        "rho_b_logodds__": logit((np.asarray(params["rho"], dtype=float) - lower) / (1.0 - lower)),
    }
    if scheme == "source":
        out["tau_z"] = inverse_softplus(params["tau"] / data["tau_kappa"])
    return {name: np.asarray(value, dtype=float) for name, value in out.items()}
