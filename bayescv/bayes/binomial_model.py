"""The hierarchical model for 0-1 losses: binomial error counts with logit-normal block effects.

Under a 0-1 loss a block's losses are its error count y_k out of n_k points, and a normal
model of the block means misbehaves near 0 and 1: its bounds leave [0, 1], and since a
source's variance p(1 − p) moves with its error rate, the hierarchy weights the low-error
sources by their spuriously high precision (``docs/bayes.md``). This model keeps the
structure of the Gaussian one (:mod:`bayescv.bayes.model`) on the logit scale:

    y_k ~ Binomial(n_k, expit(η_k)),   η_k = λ_k + u_k,
    λ_k ~ N(α, τ²)  (CVS; CVR: λ_k = α),   u ~ MVN(0, Γ),   Γ = s² [(1 − ρ) I + ρ 11ᵀ],

λ_k the logit error level of source k, u the training-set effects of the CV folds (one
scale s for every block: with one realisation only the prior separates per-block scales,
and one scale keeps the covariance compound-symmetric, τ² I + Γ = d I + c 11ᵀ), ρ their
common correlation in (−1/(K − 1), 1). Priors, on the logit scale and scaled to the data
like the Gaussian model's (:class:`bayescv.bayes.Priors` fields carry over):

* Jeffreys' prior on the level of this CV run, flat on α: the joint prior is that of the
  model with a flat α times sqrt(p̄ (1 − p̄)) / π, p̄ = expit(η̄) and η̄ = Σ_k η_k / K the
  mean block logit, which is proper (given η̄, α ~ N(η̄, e / K), e = τ² + (1 + (K − 1) ρ) s²).
  η̄ is what the counts pin down, and for one pooled count this is Jeffreys' prior for a
  binomial proportion, Beta(½, ½). The first version of this model had α ~ N(logit p̃,
  mu0_sd²), nearly flat on the logit scale: Haldane's prior, whose intervals miss on the
  low side at a few errors (``docs/bayes.md``). Jeffreys' prior on α itself fixed that but
  broke tables without errors: α is confounded with the fold effects' common shift, and
  Jeffreys' tail on α let it climb to rates the data rule out (0 errors in 400 points gave
  a 95 % upper bound of 0.125 for ``expected_cv``; this prior gives 0.023).
  ``Priors.mu0_sd`` is unused. η̄ is sampled as logit p̃ + h z, p̃ = (Y + ½) / (N + 1) the
  pooled error rate and h = sqrt(1 / (Y + ½) + 1 / (N − Y + ½)) its logit's standard
  error: a change of coordinates for the sampler, not part of the prior;
* τ ~ HalfNormal(tau_sd / 2), HalfNormal(1) by default, in logit units: a between-source
  spread of up to a factor of about e in the odds of an error is plausible, one of e² is
  not. Unlike the Gaussian model's, this scale is not read off the spread of the block
  means: at a low error rate that spread is mostly binomial noise (a block with 0 errors in
  50 has a logit of −4.6 after smoothing, one with 1 error −3.5), so a scale read off it
  would leave τ free to be large, each block would then keep its own rate, and the
  posterior of a pooled rate with 0 errors in N points would sit near K/N instead of
  pooling to 1/N. This is a prior choice, made before the coverage studies and reported in
  ``docs/bayes.md``;
* s ~ HalfNormal(gamma_sd / sqrt(N p̃ (1 − p̃))): the delta-method image on the logit scale
  of the Gaussian model's scale s_w / sqrt(N), with a half-normal tail (``gamma_df`` is
  unused: with one realisation nothing overrides this prior, and a heavy tail inflated
  ``expected_cv`` through the Jensen gap of expit; ``docs/bayes.md``);
* ρ = −1/(K − 1) + K/(K − 1) · b, b ~ Beta(rho_beta, rho_beta).

The block logits are sampled non-centred around their mean, η = η̄ + sqrt(d) (z − z̄ 1) with
z ~ N(0, I), z̄ = Σ_k z_k / K and d = τ² + (1 − ρ) s², and α = η̄ − sqrt(e) z̄
(:mod:`bayescv.bayes._binomial_density`): with a flat α this is exactly the model above,
whose η − η̄ is N(0, d (I − 11ᵀ / K)) and η̄ − α is N(0, e / K). It stays well conditioned
when blocks have no errors (their η is then pinned by the prior alone).

One realisation is modelled: one CV run, or R repeated runs of the same data
(``replicate_kind="repeat"``), whose log-likelihood is the mean of the runs' binomial
log-likelihoods with one η_k per block label (:func:`collapse_counts`): R identical runs
count as one, as in the Gaussian model. Under leave-one-source-out CV a block is the same
source with the same training set in every run, so its η_k is one quantity; under random
K-fold, fold k of one run and fold k of another hold different points, and sharing η_k reads
the mean counts as one run whose fold-to-fold scatter the repeats have averaged (s and ρ are
set by their priors with one realisation anyway; ``docs/bayes.md`` reports the calibration).
Independent realisations (simulated data sets) go to the Gaussian model
(:func:`bayescv.bayes.fit`, ``likelihood="auto"``); bootstrap replicates of one run inform s
and ρ.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import xarray as xr
from scipy import special

from bayescv.bayes.priors import Priors
from bayescv.losses import is_binary, loss_range, validate

__all__ = [
    "BinomialStats",
    "binomial_data",
    "block_logits",
    "build_binomial_model",
    "collapse_counts",
    "jeffreys_logit_draws",
]

#: Logit units per unit of ``Priors.tau_sd``: τ ~ HalfNormal(tau_sd / 2), HalfNormal(1) by
#: default (see the module docs for why the data do not set this scale).
_TAU_UNIT = 0.5

#: Free variables of each scheme, in the order of the flat coordinate vector.
FREE_VARS = {
    "source": ("level_z", "tau_z", "gamma_sd_z", "rho_b", "eta_z"),
    "random": ("level_z", "gamma_sd_z", "rho_b", "eta_z"),
}


@dataclass(frozen=True)
class BinomialStats:
    """Error counts per block of one 0-1 loss table.

    Attributes
    ----------
    scheme : str
        ``"source"`` or ``"random"``.
    labels : ndarray of shape (K,)
        Block labels.
    sources : ndarray of shape (K,) or None
        The source of each block, when the table names them.
    n, y : ndarray of shape (K,)
        Points and errors per block.
    scatter : ndarray of shape (K, K)
        Centred scatter of the bootstrap block means (zeros without a bootstrap table).
    scatter_df, scatter_weight, scatter_const : float
        Its Wishart-type term's weights (:class:`bayescv.bayes._stats.CollapsedStats`).
    scatter_nu_factor, scatter_extra : ndarray of shape (K,)
        The resampling factor 1 − 1/n_k and the duplicated-point term of the bootstrap
        scatter (:func:`bayescv.bayes._stats.tie_term`).
    n_bootstrap : int
        Number of bootstrap replicates (0 without).
    n_runs, y_runs : ndarray of shape (R, K) or None
        For R repeated CV runs of the same data (``replicate_kind="repeat"``), the points and
        errors per block of each run; `n` and `y` are then their means over the runs. None
        for one run.
    """

    scheme: str
    labels: np.ndarray
    sources: np.ndarray | None
    n: np.ndarray
    y: np.ndarray
    scatter: np.ndarray
    scatter_df: float = 0.0
    scatter_weight: float = 0.0
    scatter_const: float = 0.0
    scatter_nu_factor: np.ndarray | None = None
    scatter_extra: np.ndarray | None = None
    n_bootstrap: int = 0
    n_runs: np.ndarray | None = None
    y_runs: np.ndarray | None = None

    @property
    def n_repeats(self) -> int:
        """Number of repeated CV runs the counts average (1 for one run)."""
        return 1 if self.y_runs is None else int(self.y_runs.shape[0])

    @property
    def runs(self) -> tuple[np.ndarray, np.ndarray]:
        """Points and errors per run and block, of shape (R, K): (1, K) for one run."""
        if self.y_runs is None:
            return self.n[None], self.y[None]
        return self.n_runs, self.y_runs

    @property
    def n_blocks(self) -> int:
        """Number of blocks K."""
        return int(self.labels.size)

    @property
    def weights(self) -> np.ndarray:
        """Weights n_k / N of the blocks in the pooled CV estimate μ̂ = Σ_k y_k / N."""
        return self.n / self.n.sum()


def collapse_counts(
    losses: xr.Dataset, bootstrap: xr.Dataset | None = None, *, scheme: str | None = None
) -> BinomialStats:
    """Reduce a 0-1 loss table of one CV run, or of repeated runs, to its error counts per block.

    Parameters
    ----------
    losses : xarray.Dataset
        A loss table whose losses are all 0 or 1: one CV run, or R repeated runs of the same
        data (a ``replicate`` dim with ``replicate_kind="repeat"``, every block in every
        run). Repeated runs enter through their mean counts per block, ȳ_k = Σ_r y_rk / R
        and n̄_k: the model's log-likelihood is the mean of the runs' binomial
        log-likelihoods, each run's raised to the power 1/R, as the Gaussian model
        weights repeated runs, so that R identical runs count as one.
    bootstrap : xarray.Dataset, optional
        Bootstrap replicates of the same data: their block means' scatter informs the
        training-set effects (Γ), as in the Gaussian model, never the error rates. Only with
        one observed run.
    scheme : {"source", "random"}, optional
        Default from the table's ``scheme`` attribute.

    Returns
    -------
    BinomialStats

    Raises
    ------
    ValueError
        For replicates other than repeated runs, a block missing from a run, a bootstrap
        table with repeated runs, a loss other than 0 or 1, fewer than two blocks, or an
        unknown scheme.
    """
    validate(losses)
    scheme = scheme or losses.attrs.get("scheme")
    if scheme not in ("source", "random"):
        raise ValueError(f"scheme must be 'source' or 'random', got {scheme!r}")
    kind = losses.attrs.get("replicate_kind") if "replicate" in losses.dims else None
    if kind not in (None, "repeat"):
        raise ValueError(
            "the binomial likelihood models one CV run or repeated runs of the same data; "
            f"a table with replicates of kind {kind!r} needs likelihood='gaussian'"
        )
    if kind == "repeat" and bootstrap is not None:
        raise ValueError("bootstrap replicates go with one observed run, not repeated runs")
    loss = np.atleast_2d(np.asarray(losses["loss"].values, dtype=float))
    if not is_binary(losses):
        what = (
            "other values"
            if not np.isin(loss, (0.0, 1.0)).all()
            else f"loss range {list(loss_range(losses))} (loss differences?)"
        )
        raise ValueError(
            f"the binomial likelihood needs 0-1 losses; this table has {what} "
            "(use likelihood='gaussian')"
        )
    block = np.atleast_2d(np.asarray(losses["block"].values))
    labels, inverse = np.unique(block, return_inverse=True)
    if labels.size < 2:
        raise ValueError(f"the model needs at least two blocks, got {labels.size}")
    runs, k = loss.shape[0], labels.size
    cell = inverse.reshape(block.shape) + k * np.arange(runs)[:, None]  # (run, block) index
    n_runs = np.bincount(cell.ravel(), minlength=runs * k).reshape(runs, k).astype(float)
    y_runs = np.bincount(cell.ravel(), weights=loss.ravel(), minlength=runs * k).reshape(runs, k)
    if (n_runs == 0).any():
        r, b = np.argwhere(n_runs == 0)[0]
        raise ValueError(f"block {labels[b].item()!r} has no points in run {r}")
    n, y = n_runs.mean(axis=0), y_runs.mean(axis=0)
    sources = None
    if "source" in losses.coords:
        first = np.zeros(k, dtype=np.int64)
        flat = inverse.reshape(block.shape)[0]
        first[flat[::-1]] = np.arange(flat.size)[::-1]
        sources = np.atleast_2d(np.asarray(losses["source"].values))[0][first]
    if kind == "repeat" and runs > 1:
        return BinomialStats(
            scheme, labels, sources, n, y, np.zeros((k, k)), n_runs=n_runs, y_runs=y_runs
        )
    if bootstrap is None:
        return BinomialStats(scheme, labels, sources, n, y, np.zeros((k, k)))
    from bayescv.bayes._stats import collapse

    boot = collapse(losses, bootstrap, scheme=scheme)
    return BinomialStats(
        scheme, labels, sources, n, y, boot.scatter, boot.scatter_df, boot.scatter_weight,
        boot.scatter_const, boot.scatter_nu_factor, boot.scatter_extra, boot.n_bootstrap,
    )  # fmt: skip


def binomial_data(stats: BinomialStats, priors: Priors | None = None) -> dict[str, np.ndarray]:
    """Everything the 0-1 model reads for one fit: counts and prior parameters.

    Parameters
    ----------
    stats : BinomialStats
        The error counts (:func:`collapse_counts`).
    priors : Priors, optional
        Prior settings (``tau_sd``, ``gamma_sd`` and ``rho_beta`` are used,
        on the logit scale; the mean block logit has Jeffreys' prior: see the module docs);
        default :class:`Priors()`.

    Returns
    -------
    dict of ndarray
        ``y``, ``n`` (for repeated runs, their means over the runs), ``log_choose``
        (Σ_k log C(n_k, y_k), averaged over repeated runs), ``n_repeats`` and the scalars of
        :data:`bayescv.bayes._binomial_density.SCALARS`.
    """
    priors = priors or Priors()
    n, y = stats.n, stats.y
    total_n = float(n.sum())
    pooled = (y.sum() + 0.5) / (total_n + 1.0)
    info = pooled * (1.0 - pooled)
    gamma_scale = priors.gamma_sd / math.sqrt(total_n * info)
    runs_n, runs_y = stats.runs
    log_choose = (
        special.gammaln(runs_n + 1)
        - special.gammaln(runs_y + 1)
        - special.gammaln(runs_n - runs_y + 1)
    ).mean(axis=0)  # of each run's likelihood, weighted 1/R (collapse_counts)
    smoothed = (y + 0.5) / (n + 1.0)
    ones = np.ones_like(n)
    out = {
        "y": y,
        "n": n,
        "q": smoothed * (1.0 - smoothed),
        "scatter": stats.scatter,
        "scatter_df": stats.scatter_df,
        "scatter_weight": stats.scatter_weight,
        "scatter_const": stats.scatter_const,
        "scatter_nu_factor": ones if stats.scatter_nu_factor is None else stats.scatter_nu_factor,
        "scatter_extra": 0.0 * ones if stats.scatter_extra is None else stats.scatter_extra,
        "log_choose": log_choose.sum(),
        "n_repeats": stats.n_repeats,
        "level_loc": math.log(pooled) - math.log1p(-pooled),
        "level_scale": math.sqrt(1.0 / (y.sum() + 0.5) + 1.0 / (total_n - y.sum() + 0.5)),
        "tau_scale": priors.tau_sd * _TAU_UNIT,
        "tau_kappa": _TAU_UNIT,
        "gamma_loc": math.log(gamma_scale),
        "gamma_scale": gamma_scale,
        "rho_a": priors.rho_beta,
        "rho_lower": -1.0 / (stats.n_blocks - 1),
    }
    return {name: np.asarray(value, dtype=float) for name, value in out.items()}


def build_binomial_model(scheme: str, data: dict[str, np.ndarray], labels: Any = None):
    """Build the PyMC model of the 0-1 likelihood: the specification of its numba density.

    Parameters
    ----------
    scheme : {"source", "random"}
        CVS model (sources λ_k ~ N(α, τ²)) or CVR model (one level α for every fold).
    data : dict of ndarray
        Output of :func:`binomial_data`.
    labels : array-like, optional
        Block labels for the ``block`` coordinate; default 0..K-1.

    Returns
    -------
    pymc.Model
        Free variables ``FREE_VARS[scheme]``; deterministics ``level`` (η̄), ``alpha``,
        ``tau`` (CVS), ``gamma_sd``, ``rho`` and ``eta``; the observed binomial ``y``.
    """
    from bayescv.bayes.model import _import_pymc, _inverse_softplus, _scaled_log

    pm = _import_pymc()
    import pytensor.tensor as pt

    k = int(np.size(data["y"]))
    coords = {"block": list(range(k)) if labels is None else [str(x) for x in labels]}
    with pm.Model(coords=coords) as model:
        level_z = pm.CustomDist(
            "level_z",
            data["level_loc"],
            data["level_scale"],
            logp=_jeffreys_logit_logp,
            random=jeffreys_logit_draws,
            support_point=lambda rv, size, loc, scale: pt.zeros_like(loc),
        )
        level = pm.Deterministic("level", data["level_loc"] + data["level_scale"] * level_z)
        if scheme == "source":
            tau_z = pm.CustomDist(
                "tau_z",
                data["tau_scale"],
                data["tau_kappa"],
                dist=_inverse_softplus(pm.HalfNormal.dist),
            )
            tau = pm.Deterministic("tau", data["tau_kappa"] * pt.softplus(tau_z))
        else:
            tau = pt.as_tensor(0.0)
        gamma_z = pm.CustomDist(
            "gamma_sd_z",
            data["gamma_scale"],
            data["gamma_loc"],
            1.0,
            dist=_scaled_log(pm.HalfNormal.dist),
        )
        s = pm.Deterministic("gamma_sd", pt.exp(data["gamma_loc"] + gamma_z))
        rho_b = pm.Beta("rho_b", data["rho_a"], data["rho_a"])
        rho = pm.Deterministic("rho", data["rho_lower"] + (1.0 - data["rho_lower"]) * rho_b)
        z = pm.Normal("eta_z", 0.0, 1.0, dims="block")
        d = pt.square(tau) + (1.0 - rho) * pt.square(s)
        e = d + k * rho * pt.square(s)
        z_bar = pt.mean(z)
        pm.Deterministic("alpha", level - pt.sqrt(e) * z_bar)
        eta = pm.Deterministic("eta", level + pt.sqrt(d) * (z - z_bar), dims="block")
        y, n = data["y"], data["n"]
        if float(data["n_repeats"]) == 1:
            pm.Binomial("y", n=n, logit_p=eta, observed=y, dims="block")
        else:  # mean counts of repeated runs: the runs' mean log-likelihood (collapse_counts)
            pm.Potential("y", pt.sum(y * eta - n * pt.softplus(eta)) + data["log_choose"])
        if float(data["scatter_weight"]) > 0:
            pm.Potential("loglik_scatter", _scatter_graph(s, rho, data))
    return model


def jeffreys_logit_draws(loc, scale, rng: np.random.Generator, size=None) -> np.ndarray:
    """Draw z = (logit p − loc) / scale with p ~ Beta(½, ½), Jeffreys' prior on the logit scale.

    logit p is drawn as log G₁ − log G₂ with G₁, G₂ ~ Gamma(½) independent (then
    p = G₁ / (G₁ + G₂) ~ Beta(½, ½)), which never rounds p to 0 or 1.

    Parameters
    ----------
    loc, scale : float or ndarray
        The sampling coordinate's shift and scale (:func:`binomial_data`).
    rng : numpy.random.Generator
        Source of randomness.
    size : int or tuple of int, optional
        Output shape.

    Returns
    -------
    ndarray
    """
    log_ratio = np.log(rng.standard_gamma(0.5, size)) - np.log(rng.standard_gamma(0.5, size))
    return (log_ratio - loc) / scale


def _jeffreys_logit_logp(value, loc, scale):
    """Log-density of z with loc + scale · z = logit p, p ~ Beta(½, ½) (module docs)."""
    import pytensor.tensor as pt

    x = loc + scale * value
    # log sqrt(p (1 − p)) = −½ [softplus(−x) + softplus(x)], p = expit(x); the Jacobian of x
    # is scale.
    return -0.5 * (pt.softplus(-x) + pt.softplus(x)) - math.log(math.pi) + pt.log(scale)


def _scatter_graph(s, rho, d):
    """Build the bootstrap scatter term: Σ = diag(own) + ρ v vᵀ with v = s q (module docs)."""
    import pytensor.tensor as pt

    k = int(np.size(d["y"]))
    q = d["q"]
    v = s * q
    own = (1.0 - rho) * pt.square(v) + d["scatter_nu_factor"] * q / d["n"] + d["scatter_extra"]
    u = v / own
    denom = 1.0 + rho * pt.sum(v * u)
    scatter = d["scatter"]
    trace = pt.sum(np.diag(scatter) / own) - rho * pt.dot(u, pt.dot(scatter, u)) / denom
    logdet = pt.sum(pt.log(own)) + pt.log(denom)
    return d["scatter_const"] - 0.5 * (
        d["scatter_df"] * (k * math.log(2 * math.pi) + logdet) + d["scatter_weight"] * trace
    )


def natural_params(scheme: str, data: dict[str, np.ndarray], values: dict) -> dict:
    """Map draws of the sampled coordinates to the model's parameters, with numpy.

    Mirrors the deterministics of :func:`build_binomial_model` (the tests check it).

    Parameters
    ----------
    scheme : {"source", "random"}
        The model variant.
    data : dict of ndarray
        The model data the draws were made with (:func:`binomial_data`).
    values : dict of ndarray
        ``level_z``, ``tau_z`` (CVS), ``gamma_sd_z``, ``rho_b`` (constrained, in (0, 1)) of
        shape (chain, draw) and ``eta_z`` of shape (chain, draw, K).

    Returns
    -------
    dict of ndarray
        ``alpha``, ``tau`` (zeros for CVR), ``gamma_sd``, ``rho`` and ``eta``.
    """
    level = data["level_loc"] + data["level_scale"] * values["level_z"]
    if scheme == "source":
        tau = data["tau_kappa"] * np.logaddexp(0.0, values["tau_z"])
    else:
        tau = np.zeros_like(level)
    s = np.exp(data["gamma_loc"] + values["gamma_sd_z"])
    rho = data["rho_lower"] + (1.0 - data["rho_lower"]) * values["rho_b"]
    alpha, eta = block_logits(level, tau, s, rho, values["eta_z"])
    return {"alpha": alpha, "tau": tau, "gamma_sd": s, "rho": rho, "eta": eta}


def block_logits(level, tau, s, rho, z):
    """α and the block logits η from the run's level η̄ and the standardised effects z.

    η = η̄ + sqrt(d) (z − z̄), α = η̄ − sqrt(e) z̄, d = τ² + (1 − ρ) s², e = d + K ρ s² (module
    docs), with numpy.

    Parameters
    ----------
    level, tau, s, rho : ndarray
        η̄, τ, the fold-effect scale s and ρ, of one shape.
    z : ndarray
        The standardised effects, of that shape plus (K,).

    Returns
    -------
    alpha : ndarray
        Of the shape of `level`.
    eta : ndarray
        Of the shape of `z`.
    """
    k = z.shape[-1]
    d = tau**2 + (1.0 - rho) * s**2
    e = d + k * rho * s**2
    z_bar = z.mean(-1)
    alpha = level - np.sqrt(e) * z_bar
    eta = level[..., None] + np.sqrt(d)[..., None] * (z - z_bar[..., None])
    return alpha, eta
