"""The collapsed hierarchical model in PyMC, compiled once per number of blocks.

Gaussian form (DESIGN.md, "The Bayesian model"): e_ki = μ_k + u_k + ε_ki with
u ~ MVN(0, Γ), ε_ki ~ N(0, ν_k), so σ_k² = ν_k + ω_k (ω_k = Γ_kk, γ_kl = Γ_kl). The
likelihood sees only, per block, n_k, the block mean ē_k and the within-block sum of squares
W_k (:mod:`bayescv.bayes._stats`), so its cost does not depend on the number of points.

Parameterisation, chosen so that NUTS samples well at any N (``docs/bayes.md``):

* the source means μ_k ~ N(μ₀, τ²) **and their mean μ₀ ~ N(m, s0²) are integrated out
  analytically**: the block means are ē ~ MVN(m 1, s0² 11ᵀ + τ² I + Γ + diag(ν_k/n_k)).
  This removes the τ/μ_k funnel of the centred model, the data-precise groups that defeat the
  non-centred one (at large N, ē_k pins μ_k + u_k to 10⁻³ of its prior scale), and the
  smaller μ₀/τ funnel that remains with few sources (divergences at small τ with K = 5).
  μ₀ is drawn in the graph from its exact conditional N(m + B/P, 1/P) through a standard
  normal coordinate, the μ_k afterwards with numpy;
* Γ = diag(s) [(1 − ρ) I + ρ 11ᵀ] diag(s): per-block scales s_k = sqrt(ω_k) and one common
  correlation ρ ∈ (−1/(K−1), 1), so Γ is positive definite by construction with K + 1
  parameters (a full LKJ matrix has K(K − 1)/2 correlations, which one realisation cannot
  inform and 20 bootstrap replicates inform poorly);
* every unconstrained coordinate is centred and scaled by the data: log ν_k is centred at the
  mode of its conjugate (within-block) posterior and divided by that posterior's standard
  deviation (≈ sqrt(2/(n_k − 1))); log s_k is centred at the prior scale of Γ; τ is
  κ · softplus(z) with κ its data scale: log-like near 0, linear above κ, so the likelihood's
  cut-off of a τ whose posterior sits near 0 stays Gaussian in z instead of the doubly
  exponential wall exp(−e^(2z)) of the log scale (rare divergences with τ ≈ 0). The block
  scales s_k keep the log: with one realisation their posterior is their half-Student-t prior,
  whose polynomial tail is exponential, and easy for NUTS, only on the log scale.
  The posterior is then O(1) around 0 in
  every direction whether there are 10³ or 10⁷ losses, so the sampler's initial unit mass
  matrix and step size are already about right.

Every data array and prior parameter is a :func:`pymc.Data` container, so one compiled model
serves every loss table with the same K and scheme (:class:`CompiledModel`, :func:`get_model`).
This model is the specification: PyMC's NUTS (``sampler="pymc"``) and numpyro sample it
directly, and the default sampler, nutpie, samples its numba transcription
(:mod:`bayescv.bayes._density`), which the tests hold equal to this model's ``logp`` and
``dlogp``.
"""

from __future__ import annotations

import math
import threading
import warnings
from typing import Any

import numpy as np

from bayescv._extras import import_quietly, require_extra
from bayescv.bayes._coordinates import coordinates
from bayescv.bayes._stats import CollapsedStats
from bayescv.bayes.priors import Priors

__all__ = [
    "CompiledModel",
    "build_model",
    "clear_model_cache",
    "get_model",
    "model_data",
]

_LOG_2PI = math.log(2.0 * math.pi)

#: Free variables of each scheme, in the order of the sampler's flat parameter vector.
FREE_VARS = {
    "source": ("mu0_z", "tau_z", "nu_z", "gamma_sd_z", "rho_b"),
    "random": ("mu_z", "nu_z", "gamma_sd_z", "rho_b"),
}


_IMPORT_LOCK = threading.Lock()


def _import_pymc():
    """Import ArviZ (silencing its once-a-day refactor notice) and PyMC, once per process.

    The warning filters are touched only on the first call, under a lock: ``catch_warnings``
    changes process-wide state, and later calls (on a study's worker threads) must not.
    """
    with _IMPORT_LOCK:
        if "pymc" not in _IMPORTED:
            _IMPORTED["pymc"] = _first_import()
    return _IMPORTED["pymc"]


_IMPORTED: dict = {}


def _first_import():
    pm = import_quietly("pymc")  # pymc imports ArviZ
    import pytensor

    with warnings.catch_warnings():
        # PyTensor resolves its BLAS link flags lazily, on the first graph rewrite, and warns
        # once per process when it finds no system BLAS (pip installs). The model's algebra is
        # O(K) element-wise work, which never uses them; resolving the setting here (to the
        # value it would get anyway) keeps the notice out of every fit.
        warnings.filterwarnings(
            "ignore", message="PyTensor could not link to a BLAS", category=UserWarning
        )
        _ = pytensor.config.blas__ldflags
    return pm


def model_data(stats: CollapsedStats, priors: Priors | None = None) -> dict[str, np.ndarray]:
    """Everything a compiled model reads for one fit, by data-container name.

    Parameters
    ----------
    stats : CollapsedStats
        Statistics of the loss tables (:func:`bayescv.bayes._stats.collapse`).
    priors : Priors, optional
        Prior settings; default :class:`Priors()`.

    Returns
    -------
    dict of ndarray
        Likelihood data, numeric prior parameters and the centres and scales of the
        parameterisation.
    """
    priors = priors or Priors()
    scaled = priors.scaled_to(stats.scales, stats.n_blocks)
    data = stats.likelihood_data()
    data.update({name: np.asarray(value) for name, value in scaled.items()})
    # Conjugate posterior of the within-block variances from the W term alone:
    # InverseGamma(alpha + dof/2, beta + W/2); its mode and the sd of its log set the scale.
    if stats.scheme == "source":
        dof, ss = stats.dof, stats.W
    else:
        dof, ss = np.asarray(stats.dof.sum()), np.asarray(stats.W.sum())
    shape = scaled["nu_alpha"] + 0.5 * dof
    rate = scaled["nu_beta"] + 0.5 * ss
    data["nu_loc"] = np.log(rate / (shape + 1.0))
    data["nu_scale"] = 1.0 / np.sqrt(shape)
    scale_between = stats.scales["sd_between"]
    data["tau_kappa"] = np.asarray(scale_between)
    data["gamma_loc"] = np.asarray(math.log(scaled["gamma_scale"]))
    return {name: np.asarray(value, dtype=float) for name, value in data.items()}


def _scaled_log(dist):
    """``CustomDist`` builder for z = (log x − loc) / scale, with x ~ `dist`.

    PyMC derives the density of z, Jacobian included, from the graph.
    """
    import pytensor.tensor as pt

    def make(*args):
        *params, loc, scale, size = args
        return (pt.log(dist(*params, size=size)) - loc) / scale

    return make


def _inverse_softplus(dist):
    """``CustomDist`` builder for z = log(exp(x / κ) − 1), so x = κ · softplus(z), x ~ `dist`.

    For a scale whose posterior sits near 0: like the log for x ≪ κ, linear for x ≫ κ, so the
    upper edge of the posterior, where the likelihood cuts it off, stays Gaussian in z instead
    of the doubly exponential wall exp(−e^(2z)) it becomes on the log scale (a source of
    divergences when τ is near 0).
    """
    import pytensor.tensor as pt

    def make(*args):
        *params, kappa, size = args
        return pt.log(pt.expm1(dist(*params, size=size) / kappa))

    return make


def loglik_graph(tau, nu, gamma_sd, rho, d: dict[str, Any]):
    """PyTensor graph of the collapsed log-likelihood, the mean μ₀ integrated out.

    Every covariance here is diagonal plus rank one, M = diag(a) + ρ s sᵀ, so its
    log-determinant and inverse follow in O(K) from the matrix determinant lemma and the
    Sherman–Morrison formula: no Cholesky factorisation, cheap gradients. The mean of the
    sources μ₀ ~ N(m, s0²) (CVR: the common mean μ) is integrated out as well: with
    V = τ² I + Σ / c, r = ē − m, A = 1ᵀV⁻¹1, B = 1ᵀV⁻¹r, C = rᵀV⁻¹r and P = A + 1/s0²,

        log p(ē) = −½ (K log 2π + log|V| + C + log(s0² P)) + B² / (2P),

    and μ₀ | ē, θ ~ N(m + B/P, 1/P), from which μ₀ is drawn exactly.

    Returns
    -------
    tuple of TensorVariable
        Per-block W terms (K,), the block-mean term and the scatter term (scalars), and the
        conditional mean and standard deviation of μ₀.
    """
    import pytensor.tensor as pt

    k = d["n"].shape[0]
    sd2 = pt.square(gamma_sd)
    tau2 = pt.square(tau)
    own = (1.0 - rho) * sd2 + nu / d["n"]  # diagonal of Σ − ρ s sᵀ
    # Block means: V = τ² I + Σ / c = diag(τ² + own / c) + (ρ / c) s sᵀ.
    count = d["ybar_count"]
    diag_v = tau2 + own / count
    resid = d["ybar"] - d["mu0_loc"]
    u = gamma_sd / diag_v
    rc = rho / count
    denom = 1.0 + rc * pt.sum(gamma_sd * u)
    u_one, u_r = pt.sum(u), pt.sum(u * resid)
    a_ = pt.sum(1.0 / diag_v) - rc * pt.square(u_one) / denom
    b_ = pt.sum(resid / diag_v) - rc * u_one * u_r / denom
    c_ = pt.sum(pt.square(resid) / diag_v) - rc * pt.square(u_r) / denom
    s02 = pt.square(d["mu0_scale"])
    prec = a_ + 1.0 / s02
    logdet = pt.sum(pt.log(diag_v)) + pt.log(denom)
    ll_ebar = -0.5 * (k * _LOG_2PI + logdet + c_ + pt.log(s02 * prec)) + pt.square(b_) / (2 * prec)
    # Scatter of replicated block means: Σ_s = diag(own + t τ²) + ρ s sᵀ; bootstrap resamples
    # scale ν_k/n_k by (1 − 1/n_k) and add the duplicated-point term (_stats.tie_term).
    own_s = (1.0 - rho) * sd2 + d["scatter_nu_factor"] * nu / d["n"] + d["scatter_extra"]
    diag_s = own_s + d["scatter_tau"] * tau2
    u_s = gamma_sd / diag_s
    denom_s = 1.0 + rho * pt.sum(gamma_sd * u_s)
    scatter = d["scatter"]
    trace = pt.sum(pt.diag(scatter) / diag_s) - rho * pt.dot(u_s, pt.dot(scatter, u_s)) / denom_s
    logdet_s = pt.sum(pt.log(diag_s)) + pt.log(denom_s)
    ll_scatter = d["scatter_const"] - 0.5 * (
        d["scatter_df"] * (k * _LOG_2PI + logdet_s) + d["scatter_weight"] * trace
    )
    ll_w = -0.5 * d["dof"] * pt.log(2.0 * np.pi * nu) - d["W"] / (2.0 * nu) + d["w_const"]
    return ll_w, ll_ebar, ll_scatter, d["mu0_loc"] + b_ / prec, 1.0 / pt.sqrt(prec)


def build_model(scheme: str, data: dict[str, np.ndarray], labels: Any = None):
    """Build the PyMC model for a scheme, with `data` as its initial data containers.

    Parameters
    ----------
    scheme : {"source", "random"}
        CVS model (per-block ν_k and ω_k, source means μ_k ~ N(μ₀, τ²) integrated out) or
        CVR model (one ν, one ω, one common mean μ).
    data : dict of ndarray
        Output of :func:`model_data`.
    labels : array-like, optional
        Block labels for the ``block`` coordinate; default 0..K-1.

    Returns
    -------
    pymc.Model
        Free variables as in ``FREE_VARS[scheme]``; deterministic ``rho``; potentials
        ``loglik_W`` (per block), ``loglik_ebar`` and ``loglik_scatter``.
    """
    pm = _import_pymc()
    import pytensor.tensor as pt

    k = data["n"].size
    coords = {"block": list(range(k)) if labels is None else [str(x) for x in labels]}
    with pm.Model(coords=coords) as model:
        d = {}
        for name, value in data.items():
            dims = ("block",) if value.ndim == 1 else None
            if value.ndim == 2:
                dims = ("block", "block_bis")
                model.add_coord("block_bis", coords["block"])
            d[name] = pm.Data(name, value, dims=dims)
        source = scheme == "source"
        per = {"dims": "block"} if source else {}
        loc_name = "mu0" if source else "mu"
        # μ₀ is integrated out of the likelihood; this standard normal z draws it from its
        # exact conditional posterior, independently of every other coordinate.
        loc_z = pm.Normal(f"{loc_name}_z", 0.0, 1.0)
        if source:
            tau_z = pm.CustomDist(
                "tau_z",
                d["tau_scale"],
                d["tau_kappa"],
                dist=_inverse_softplus(pm.HalfNormal.dist),
            )
            tau = pm.Deterministic("tau", d["tau_kappa"] * pt.softplus(tau_z))
        else:
            tau = pt.as_tensor(0.0)
        nu_z = pm.CustomDist(
            "nu_z",
            d["nu_alpha"],
            d["nu_beta"],
            d["nu_loc"],
            d["nu_scale"],
            dist=_scaled_log(pm.InverseGamma.dist),
            **per,
        )
        nu = pm.Deterministic("nu", pt.exp(d["nu_loc"] + d["nu_scale"] * nu_z), **per)
        gamma_z = pm.CustomDist(
            "gamma_sd_z",
            d["gamma_df"],
            d["gamma_scale"],
            d["gamma_loc"],
            1.0,
            dist=_scaled_log(
                lambda df, sigma, size: pm.HalfStudentT.dist(nu=df, sigma=sigma, size=size)
            ),
            **per,
        )
        gamma_sd = pm.Deterministic("gamma_sd", pt.exp(d["gamma_loc"] + gamma_z), **per)
        rho_b = pm.Beta("rho_b", d["rho_a"], d["rho_a"])
        rho = pm.Deterministic("rho", d["rho_lower"] + (1.0 - d["rho_lower"]) * rho_b)
        ones = pt.ones(k)
        ll_w, ll_ebar, ll_scatter, loc_mean, loc_sd = loglik_graph(
            tau, nu * ones, gamma_sd * ones, rho, d
        )
        pm.Deterministic(loc_name, loc_mean + loc_sd * loc_z)
        pm.Potential("loglik_W", ll_w, dims="block")
        pm.Potential("loglik_ebar", ll_ebar)
        pm.Potential("loglik_scatter", ll_scatter)
    return model


class CompiledModel:
    """A PyMC model for one (K, scheme), with PyMC's NUTS step compiled once and reused.

    Fitting a new loss table swaps the data containers (:meth:`set_data`); the compiled
    log-density and gradient are kept. The default sampler, nutpie, does not use this class:
    it samples the numba transcription of the same density (:mod:`bayescv.bayes._density`),
    cached on disk. Not thread-safe: use one per thread (the cache in :func:`get_model` is
    per thread).

    Parameters
    ----------
    scheme : {"source", "random"}
        The model variant.
    data : dict of ndarray
        Initial data (:func:`model_data`); fixes K.

    Examples
    --------
    >>> from bayescv.bayes._stats import collapse
    >>> from bayescv.losses import from_arrays
    >>> table = from_arrays([0.1, 0.4, 0.2, 0.3, 0.5, 0.2], [0, 0, 1, 1, 2, 2], scheme="source")
    >>> compiled = CompiledModel("source", model_data(collapse(table)))
    >>> compiled.n_blocks, [v.name for v in compiled.model.free_RVs]
    (3, ['mu0_z', 'tau_z', 'nu_z', 'gamma_sd_z', 'rho_b'])
    >>> compiled.data["n"].tolist()
    [2.0, 2.0, 2.0]
    """

    def __init__(self, scheme: str, data: dict[str, np.ndarray]):
        require_extra(["pymc"], "bayes", what="bayescv.bayes.CompiledModel")
        self.scheme = scheme
        self.n_blocks = int(data["n"].size)
        self.model = build_model(scheme, data)
        self._data_names = tuple(data)
        self._step = None
        self.compile_seconds: dict[str, float] = {}

    def set_data(self, data: dict[str, np.ndarray]) -> None:
        """Swap in the data of a new fit (same K).

        Parameters
        ----------
        data : dict of ndarray
            Output of :func:`model_data` for a table with the same number of blocks.
        """
        if data["n"].size != self.n_blocks:
            raise ValueError(
                f"this compiled model has {self.n_blocks} blocks; the data have {data['n'].size}"
            )
        pm = _import_pymc()
        with self.model:
            pm.set_data({name: data[name] for name in self._data_names})

    @property
    def data(self) -> dict[str, np.ndarray]:
        """Current values of the data containers."""
        return {name: self.model[name].get_value() for name in self._data_names}

    def nuts_step(self):
        """PyMC NUTS step method, compiled on first use and reused."""
        if self._step is None:
            import time

            pm = _import_pymc()
            from pymc.step_methods.hmc.quadpotential import QuadPotentialDiagAdapt

            start = time.perf_counter()
            size = sum(np.size(v) for v in self.model.initial_point().values())
            # Every coordinate is centred and scaled by the data (module docstring), so the
            # adaptation starts from mean 0 and unit variances whatever the table.
            potential = QuadPotentialDiagAdapt(size, np.zeros(size), np.ones(size), 10)
            with self.model:
                self._step = pm.NUTS(
                    vars=self.model.free_RVs,
                    potential=potential,
                    compile_kwargs={"mode": "NUMBA"},
                )
            # Sampling overwrites ``step_size``; each fit restarts the adaptation from this.
            self.initial_step_size = float(self._step.step_size)
            self.compile_seconds["pymc"] = time.perf_counter() - start
        return self._step

    def logp_function(self, *, likelihood_only: bool = True):
        """Compiled log-density of the model at a point (see :meth:`point`).

        Parameters
        ----------
        likelihood_only : bool, default True
            Only the likelihood potentials (no priors, no Jacobians): the collapsed
            log-likelihood. Otherwise the log-posterior density of the sampled coordinates.

        Returns
        -------
        callable
            Takes a point dict keyed by value-variable names, returns a float.
        """
        vars_ = self.model.potentials if likelihood_only else None
        # Every value variable an input, used or not (the point holds them all): what
        # compile_logp does itself from PyMC 5.26 on; spelt out, it works from 5.20.
        return self.model.compile_fn(
            self.model.logp(vars=vars_, jacobian=not likelihood_only),
            inputs=self.model.value_vars,
            mode="NUMBA",
            on_unused_input="ignore",
        )

    def point(self, params: dict[str, Any]) -> dict[str, np.ndarray]:
        """Map natural parameter values to the sampled coordinates, under the current data.

        Parameters
        ----------
        params : dict
            The parameters, as :func:`bayescv.bayes._coordinates.coordinates` takes them.

        Returns
        -------
        dict of ndarray
            The point :meth:`logp_function` expects.
        """
        return coordinates(self.scheme, self.data, params)


_CACHE = threading.local()


def get_model(scheme: str, data: dict[str, np.ndarray]) -> CompiledModel:
    """Return the cached compiled model for (scheme, K), with `data` swapped in.

    Models are cached per thread for the session, keyed by scheme and K, so a coverage study
    compiles once and then only swaps data. :func:`clear_model_cache` empties the cache.

    Parameters
    ----------
    scheme : {"source", "random"}
        The model variant.
    data : dict of ndarray
        Output of :func:`model_data`.

    Returns
    -------
    CompiledModel

    Examples
    --------
    Another table with as many blocks reuses the model, with its data swapped in:

    >>> from bayescv.bayes._stats import collapse
    >>> from bayescv.losses import from_arrays
    >>> one = from_arrays([0.1, 0.4, 0.2, 0.3, 0.5, 0.2], [0, 0, 1, 1, 2, 2])
    >>> other = from_arrays([0.3, 0.1, 0.2, 0.6, 0.4, 0.4, 0.1], [0, 0, 0, 1, 1, 2, 2])
    >>> compiled = get_model("random", model_data(collapse(one)))
    >>> get_model("random", model_data(collapse(other))) is compiled
    True
    >>> compiled.scheme, compiled.data["n"].tolist()
    ('random', [3.0, 2.0, 2.0])
    """
    require_extra(["pymc"], "bayes", what="bayescv.bayes.get_model")
    cache = _CACHE.__dict__.setdefault("models", {})
    key = (scheme, int(data["n"].size))
    if key not in cache:
        cache[key] = CompiledModel(scheme, data)
    else:
        cache[key].set_data(data)
    return cache[key]


def clear_model_cache() -> None:
    """Forget the compiled models of this thread (their memory is freed when unused).

    Examples
    --------
    The cache is per thread; this thread of its own leaves the caller's cache as it was:

    >>> from concurrent.futures import ThreadPoolExecutor
    >>> from bayescv.bayes._stats import collapse
    >>> from bayescv.losses import from_arrays
    >>> data = model_data(collapse(from_arrays([0.1, 0.4, 0.2, 0.3], [0, 0, 1, 1])))
    >>> def compile_clear_compile():
    ...     first = get_model("random", data)
    ...     clear_model_cache()
    ...     return get_model("random", data) is first
    >>> with ThreadPoolExecutor(1) as pool:
    ...     pool.submit(compile_clear_compile).result()
    False
    """
    _CACHE.__dict__.pop("models", None)
