"""Fit the collapsed model, check the sampler, and turn the posterior into intervals.

:func:`fit` samples with nutpie when it is installed and PyMC's NUTS otherwise
(``sampler="auto"``), or with the sampler named, then adds with numpy the quantities that need
no gradient: θ_CVS (Geras & Sutton 2013, eq. 7; for unequal block sizes the variance
w ᵀ Σ w of the pooled mean, w_k = n_k / N), the per-source error means, ``expected_cv``
(E[μ̂] with the sources fixed), ``ose`` (the out-of-source error, the population mean of
the source errors, μ₀ or exp(α + τ²/2); Geras & Sutton 2013, eq. 3) and ``new_source`` (the
error level of one new source); the log-likelihood, prior, prior-predictive and posterior-predictive groups are
filled the same way (:mod:`bayescv.bayes._posterior`), so a later fit never recompiles.
Convergence (r̂, bulk and tail ESS, divergences) is checked after every fit, stored in
``idata.sample_stats.attrs`` and reported with a :class:`SamplingWarning` when it fails.
"""

from __future__ import annotations

import numbers
import time
import warnings
from typing import Any

import numpy as np
import xarray as xr

from bayescv._bounds import truncate_to_range
from bayescv._extras import BAYES_MODULES, import_quietly, require_extra
from bayescv._provenance import child_seeds, resolve_seed
from bayescv.bayes._diagnostics import SamplingWarning, convergence_advice, diagnose
from bayescv.bayes._lognormal import check_population, fit_population, resolve_population
from bayescv.bayes._posterior import inference_data, reports_median
from bayescv.bayes._samplers import SAMPLE, check_n_jobs, resolve_sampler
from bayescv.bayes._stats import collapse
from bayescv.bayes.model import CompiledModel, get_model, model_data
from bayescv.bayes.priors import Priors
from bayescv.intervals import check_level, interval_dataset
from bayescv.losses import effective_range, has_pair_blocks, is_binary
from bayescv.losses._differences import check_bootstrap_of
from bayescv.tails import add_tail_flags, pooled_tail_shape, warn_heavy_tail

__all__ = ["SAMPLERS", "SamplingWarning", "diagnose", "fit", "posterior_intervals"]

#: NUTS implementations; ``fit`` also accepts ``"auto"`` (nutpie if installed, else PyMC).
SAMPLERS = ("pymc", "nutpie", "numpyro")

#: Derived quantities that get an interval, in the order of :func:`posterior_intervals`'
#: rows ``bayes_<name>``; each is also the name of its estimand
#: (:data:`bayescv.intervals.ESTIMANDS`).
_TARGETS = ("expected_cv", "ose", "new_source")

_LIKELIHOODS = ("auto", "binomial", "gaussian")


def fit(
    losses: xr.Dataset,
    *,
    bootstrap: xr.Dataset | None = None,
    priors: Priors | None = None,
    scheme: str | None = None,
    draws: int = 1000,
    tune: int = 1000,
    chains: int = 4,
    sampler: str = "auto",
    random_state: int | np.random.Generator | None = None,
    target_accept: float | None = None,
    n_jobs: int | None = None,
    prior_draws: int = 500,
    rhat_max: float = 1.01,
    ess_min: float = 400.0,
    model: CompiledModel | None = None,
    progress: bool = False,
    likelihood: str = "auto",
    population: str = "auto",
) -> Any:
    """Fit the hierarchical model of CV errors to a loss table.

    Parameters
    ----------
    losses : xarray.Dataset
        The observed loss table (:mod:`bayescv.losses`); with a ``replicate`` dim of kind
        ``"independent"`` (realisations sharing every parameter) or ``"repeat"`` (repeated
        CV of the same data: each run's likelihood counts 1/R).
    bootstrap : xarray.Dataset, optional
        Bootstrap replicates of the same data (:func:`bayescv.bootstrap_cv_losses`). They
        inform only the sampling covariance Σ = Γ + diag(ν_k/n_k) of the block means, through
        their centred scatter; never the error means. A test point drawn twice in a resample
        carries its model-driven loss variance twice; that duplicated-point term is estimated
        from the table's ``index`` and modelled, not read as covariance
        (:func:`bayescv.bayes._stats.tie_term`; ``constant_data["bootstrap_tie_term"]``).
    priors : Priors, optional
        Prior settings; default ``Priors()``.
    scheme : {"source", "random"}, optional
        CVS model (hierarchy over sources) or CVR model (exchangeable folds: one ν, ω, γ);
        default from the table's ``scheme``.
    draws, tune, chains : int
        Posterior draws and tuning steps per chain, and the number of chains (at least 2:
        r̂ compares them).
    sampler : {"auto", "pymc", "nutpie", "numpyro"}, default "auto"
        NUTS implementation. ``"auto"`` takes nutpie when it can be imported (it is in the
        ``bayes`` extra) and PyMC's own NUTS otherwise. nutpie samples the numba
        transcription of the model's density (:mod:`bayescv.bayes._density`), compiled once
        and then cached on disk (:func:`bayescv.bayes._cache.cache_dir`): the first fit on a
        machine compiles for about 7 s, a later process loads the cache in a fraction of a
        second, and a later fit in the same process takes about 0.22 s at K = 10
        (``benchmarks/results/bench_bayes.md``, "Time to answer"). PyMC's NUTS compiles the
        PyMC model for 5-7 s per process and samples in Python (about 7 s per fit). The
        sampler used is recorded in ``idata.sample_stats.attrs["sampler"]``. numpyro is in
        the extra ``bayes-fast``.
    random_state : None, int or numpy.random.Generator
        Seeds the sampler (one child seed per chain) and every numpy draw.
    target_accept : float, optional
        Target acceptance rate of NUTS' step-size adaptation; default 0.8, and 0.98 for the
        binomial likelihood (its non-centred block logits need the smaller steps near small
        scales). The value used is recorded in ``idata.sample_stats.attrs["target_accept"]``.
    n_jobs : int, optional
        Chains run in parallel, nutpie only (default min(chains, CPUs); joblib's meaning,
        −1 for all CPUs; 0 is refused); PyMC's NUTS runs
        its chains one after another in this process, reusing the compiled step (worker
        processes would re-import and re-link it on every fit), so it accepts only 1. Draws
        do not depend on it.
    prior_draws : int, default 500
        Draws of the prior and prior-predictive groups.
    rhat_max, ess_min : float
        Convergence thresholds (r̂ ≤ 1.01 and bulk and tail ESS ≥ 400 by default, after
        Vehtari et al. 2021, doi:10.1214/20-BA1221); also zero divergences.
    model : CompiledModel, optional
        A compiled PyMC model to reuse (samplers ``"pymc"`` and ``"numpyro"``); by default the
        per-thread cache of :func:`bayescv.bayes.model.get_model` (compiled once per scheme
        and K). nutpie needs none.
    progress : bool, default False
        Show the sampler's progress bar (nutpie's in a terminal or notebook; PyMC's: one
        tqdm bar over the chains).
    likelihood : {"auto", "binomial", "gaussian"}, default "auto"
        ``"binomial"``: the model of error counts for 0-1 losses
        (:mod:`bayescv.bayes.binomial_model`: y_k ~ Binomial(n_k, expit(η_k)) with
        correlated logit-normal block effects): its intervals stay inside [0, 1], a table
        without errors gets a proper posterior, and `bootstrap` informs the block effects
        as in the Gaussian model; it models one CV run, or repeated runs of the same data
        (``replicate_kind="repeat"``: their mean counts, R identical runs counting as one).
        ``"gaussian"``: the collapsed normal model, for any loss. ``"auto"`` takes the
        binomial likelihood for a table of one run or of repeated runs whose losses are all
        0 or 1, and the Gaussian one otherwise (for independent replicates even of 0-1
        losses).
        The choice is recorded in ``idata.sample_stats.attrs["likelihood"]``.
    population : {"auto", "normal", "lognormal"}, default "auto"
        Population of source error levels behind ``ose`` and ``new_source`` (Gaussian
        likelihood, CVS): μ_k ~ N(μ₀, τ²), or log μ_k ~ N(α, τ²) fitted to the log block
        means by a second run of the sampler (:mod:`bayescv.bayes._lognormal`; α, τ kept as
        ``log_mu0``, ``log_tau``), for losses whose spread grows with their level. ``"auto"``:
        lognormal for losses in [0, ∞) (squared, absolute, log loss), else normal.

    Returns
    -------
    arviz.InferenceData
        Groups ``posterior`` (sampled ``*_z`` coordinates and ``rho_b``; ``mu0``, ``tau``, ``nu``,
        ``gamma_sd``, ``rho``; derived ``omega``, ``sigma2``, ``theta``, ``mu``,
        ``mu_pooled``, ``expected_cv`` and, CVS only, ``ose`` and ``new_source``),
        ``sample_stats`` (diagnostics, sampler), ``log_likelihood`` (``W`` per block, ``ebar``,
        ``scatter``), ``prior``, ``prior_predictive``, ``posterior_predictive`` (``ybar``,
        ``W``; CVS: ``ybar_new``, new sources), ``observed_data`` and ``constant_data``.

    Raises
    ------
    TypeError
        When `losses` or `bootstrap` is not a loss table (an xarray.Dataset), or `priors` is
        not a :class:`~bayescv.bayes.Priors`.
    ValueError
        For a malformed table, a table whose blocks are pairs of points
        (:func:`bayescv.losses.has_pair_blocks`), bootstrap replicates of another loss, CV
        scheme or blocks, or an option out of its range (``rhat_max`` below 1, a negative
        ``ess_min``).

    Warns
    -----
    SamplingWarning
        When r̂ exceeds `rhat_max`, an ESS is below `ess_min` or a transition diverged. For
        a fit of one table without `bootstrap` it also says that bootstrap replicates help:
        one table identifies only the sum of the between-block variances, and the split
        between τ² and Γ follows the prior along a ridge that NUTS crosses slowly.
    UserWarning
        When the blocks of a CVS table hold several sources (GroupKFold): see ``new_source``.

    Notes
    -----
    ``mu`` (and so ``expected_cv``) is each block's mean error with the sources held fixed:
    its conditional posterior given Σ under a flat prior, MVN(ē, Σ / c) (c = R for R
    independent realisations, else 1), so the hierarchy does not pull the fixed-source mean
    towards the sources with the smaller variance. ``expected_cv`` = Σ_k (n_k / N) μ_k is
    E[μ̂] for the pooled CV estimate μ̂ = Σ_k S_k / N (the comparison module's truth
    ``expected_cv``, the mean of μ̂ over data sets drawn from the same sources); its
    posterior mean is μ̂ itself and its posterior variance is E[θ].

    ``mu_pooled`` are the partially pooled source means under μ_k ~ N(μ₀, τ²). ``ose`` = μ₀
    is Geras & Sutton's (2013, eq. 3) out-of-source error, the mean error over the sources
    (a fixed number): its posterior variance, about (τ² + Σ_kk) / K for K sources, carries
    the between-source heterogeneity τ² / K that θ leaves out. ``new_source`` = μ₀ + τ z,
    z ~ N(0, 1), is the (predictive) error level of one new source: it carries τ² itself.
    Under the lognormal population (log μ_k ~ N(α, τ²)): exp(α + τ²/2), exp(α + τ z), and
    ``mu_pooled`` and the replicated ``ybar`` pooled on the log scale.

    Examples
    --------
    >>> import numpy as np
    >>> from bayescv.losses import from_arrays
    >>> from bayescv.bayes import fit, posterior_intervals
    >>> rng = np.random.default_rng(0)
    >>> block = np.repeat(np.arange(5), 40)
    >>> table = from_arrays(rng.normal(1.0, 0.3, 200) + 0.1 * block, block, scheme="source")
    >>> idata = fit(table, random_state=1)
    >>> ci = posterior_intervals(idata, level=0.9)
    >>> ci["method_name"].values.tolist()
    ['bayes_expected_cv', 'bayes_ose', 'bayes_new_source']
    >>> ci["target"].values.tolist()
    ['expected_cv', 'ose', 'new_source']
    """
    require_extra(BAYES_MODULES, "bayes", what="bayescv.bayes.fit")
    for name, table in (("losses", losses), ("bootstrap", bootstrap)):
        if table is not None and not isinstance(table, xr.Dataset):
            hint = "bayescv.from_arrays(loss, block, source=...)"
            if hasattr(table, "columns"):
                hint = "bayescv.from_frame(frame, loss=..., block=..., source=...)"
            raise TypeError(
                f"{name} must be a loss table (xarray.Dataset), got {type(table).__name__}; "
                f"build one with {hint}"
            )
    if has_pair_blocks(losses):
        raise ValueError(
            "this table's blocks are consecutive pairs of points (pointwise elpd from PSIS-LOO "
            "or WAIC, from_elpd(..., blocks='pairs')), not CV folds or sources: the model "
            "would read the pairs as folds; for pointwise elpd from K-fold CV pass the fold "
            "of every point, from_elpd(..., blocks=folds), or use "
            "bayescv.cv_intervals(table), which gives naive_points on pairs"
        )
    requested, sampler = sampler, resolve_sampler(sampler)
    counts = {"draws": draws, "tune": tune, "chains": chains, "prior_draws": prior_draws}
    for name, value in counts.items():
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if chains < 2:
        raise ValueError(
            f"chains must be at least 2, got {chains}: r̂, the convergence check every fit "
            "runs, compares chains"
        )
    for name, value, low in (("rhat_max", rhat_max, 1.0), ("ess_min", ess_min, 0.0)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not value >= low:
            raise ValueError(f"{name} must be a number >= {low:g}, got {value!r}")
    if priors is not None and not isinstance(priors, Priors):
        raise TypeError(f"priors must be a bayescv.bayes.Priors, got {type(priors).__name__}")
    n_jobs = check_n_jobs(n_jobs)
    if bootstrap is not None:
        check_bootstrap_of(losses, bootstrap)
    if likelihood not in _LIKELIHOODS:
        raise ValueError(f"likelihood must be one of {_LIKELIHOODS}, got {likelihood!r}")
    likelihood = _choose_likelihood(losses, likelihood)
    check_population(population, likelihood, scheme or losses.attrs.get("scheme"), losses)
    if target_accept is None:
        # The binomial model samples its block logits non-centred; near small scales a few
        # draws diverge at 0.8, and at 0.95 still on tables with almost no errors (a perfect
        # classifier's: 1-2 divergences in 5 of 6 fits; at 0.98, 0 in 48; docs/bayes.md).
        target_accept = 0.98 if likelihood == "binomial" else 0.8
    if isinstance(target_accept, bool) or not 0 < target_accept < 1:
        raise ValueError(f"target_accept must be in (0, 1), got {target_accept!r}")
    started = time.perf_counter()
    if likelihood == "binomial":
        if model is not None:
            raise ValueError(
                "model= is a compiled Gaussian model; likelihood='binomial' needs none"
            )
        return _fit_binomial(
            losses, bootstrap, priors, scheme, draws, tune, chains, sampler, requested, random_state,
            target_accept, n_jobs, prior_draws, rhat_max, ess_min, progress, started,
        )  # fmt: skip
    stats = collapse(losses, bootstrap, scheme=scheme)
    population = resolve_population(population, losses, stats)
    priors = priors or Priors()
    data = model_data(stats, priors)
    if model is not None and model.scheme != stats.scheme:
        raise ValueError(f"the model is for scheme {model.scheme!r}, the data {stats.scheme!r}")
    if sampler == "nutpie":
        # nutpie samples the numba transcription of the model's density (_density), cached
        # on disk; the PyMC model is neither built nor compiled.
        compiled = None
    elif model is None:
        compiled = get_model(stats.scheme, data)
    else:
        compiled = model
        compiled.set_data(data)
    seed = resolve_seed(random_state)
    sampler_seed, numpy_seed, population_seed = child_seeds(seed, 3)
    start = time.perf_counter()
    values, sample_stats, compile_s = SAMPLE[sampler](
        compiled,
        data,
        stats.scheme,
        draws,
        tune,
        chains,
        sampler_seed,
        target_accept,
        n_jobs,
        progress,
    )
    sampling_s = time.perf_counter() - start
    rng = np.random.default_rng(numpy_seed)
    idata = inference_data(values, sample_stats, stats, data, priors, rng, prior_draws)
    if population == "lognormal":
        settings = {"draws": draws, "tune": tune, "chains": chains, "n_jobs": n_jobs,
                    "target_accept": target_accept, "progress": progress}  # fmt: skip
        fit_population(idata, stats, priors, sampler, settings, population_seed, rng, prior_draws)
        sampling_s = time.perf_counter() - start
    run = {
        "sampler": sampler, "sampler_requested": requested, "likelihood": "gaussian",
        "seed": seed, "scheme": stats.scheme, "replicate_kind": stats.kind,
        "sampling_seconds": sampling_s, "compile_seconds": float(compile_s),
        "target_accept": float(target_accept), "population": population,
    }  # fmt: skip
    return _finish(idata, run, started, rhat_max, ess_min, losses)


def _finish(
    idata, run: dict, started: float, rhat_max: float, ess_min: float, losses=None, depth=0
):
    """Record the diagnostics and the run's settings; warn when the sampler did not converge.

    `depth` counts the private frames between :func:`fit` and this function (1 from
    ``_fit_binomial``), so that every warning points at the user's call of :func:`fit`.
    """
    if losses is not None and "loss" in losses.data_vars:
        # The pooled Pareto k̂ of the losses: posterior_intervals flags every row with it.
        khat = np.atleast_1d(pooled_tail_shape(losses)["khat_pooled"].values)
        run["khat"] = float(np.nanmax(khat)) if np.isfinite(khat).any() else float("nan")
        # A 0-1 table of no declared range stays in [0, 1], as the closed-form intervals keep it.
        run["loss_range"] = [float(v) for v in effective_range(losses)]
        run["loss_name"] = str(losses.attrs.get("loss_name", "unknown"))  # axis labels
        warn_heavy_tail(khat, stacklevel=4 + depth)
    diag = diagnose(idata, rhat_max=rhat_max, ess_min=ess_min)
    idata.sample_stats.attrs.update(diag)
    idata.sample_stats.attrs.update({**run, "fit_seconds": time.perf_counter() - started})
    if diag["problems"]:
        warnings.warn(
            f"the {run['sampler']} sampler did not converge: {diag['problems']}; the posterior "
            f"and its intervals are unreliable ({convergence_advice(run)})",
            SamplingWarning,
            stacklevel=3 + depth,
        )
    return idata


def _choose_likelihood(losses: Any, likelihood: str) -> str:
    """Resolve ``"auto"``: binomial for one or repeated CV runs of 0-1 losses, else Gaussian."""
    if likelihood != "auto":
        return likelihood
    if not isinstance(losses, xr.Dataset) or "loss" not in losses.data_vars:
        return "gaussian"  # collapse() raises the package's message for a malformed table
    if "replicate" in losses.dims and losses.attrs.get("replicate_kind") != "repeat":
        return "gaussian"
    return "binomial" if is_binary(losses) else "gaussian"


def _fit_binomial(
    losses, bootstrap, priors, scheme, draws, tune, chains, sampler, requested, random_state,
    target_accept, n_jobs, prior_draws, rhat_max, ess_min, progress, started,
):  # fmt: skip
    """:func:`fit` with the 0-1 likelihood (:mod:`bayescv.bayes.binomial_model`)."""
    from bayescv.bayes._binomial_posterior import (
        binomial_inference_data,
        replicate_kind,
        sample_binomial,
    )
    from bayescv.bayes.binomial_model import binomial_data, collapse_counts

    stats = collapse_counts(losses, bootstrap, scheme=scheme)
    priors = priors or Priors()
    data = binomial_data(stats, priors)
    seed = resolve_seed(random_state)
    sampler_seed, numpy_seed = child_seeds(seed, 2)
    start = time.perf_counter()
    values, sample_stats, compile_s = sample_binomial(
        sampler, data, stats.scheme, draws, tune, chains, sampler_seed, target_accept,
        n_jobs, progress,
    )  # fmt: skip
    sampling_s = time.perf_counter() - start
    rng = np.random.default_rng(numpy_seed)
    idata = binomial_inference_data(values, sample_stats, stats, data, priors, rng, prior_draws)
    run = {
        "sampler": sampler, "sampler_requested": requested, "likelihood": "binomial",
        "seed": seed, "scheme": stats.scheme, "replicate_kind": replicate_kind(stats),
        "sampling_seconds": sampling_s, "compile_seconds": float(compile_s),
        "target_accept": float(target_accept), "population": "logit-normal",
    }  # fmt: skip
    return _finish(idata, run, started, rhat_max, ess_min, losses, depth=1)


def posterior_intervals(idata, *, level: float = 0.95, kind: str = "eti") -> xr.Dataset:
    """Posterior intervals of the CV targets, in the package's interval Dataset.

    Parameters
    ----------
    idata : arviz.InferenceData
        A result of :func:`fit`.
    level : float, default 0.95
        Posterior probability inside each interval.
    kind : {"eti", "hdi"}, default "eti"
        Equal-tailed (quantiles (1 − level)/2 and (1 + level)/2) or highest-density interval
        (:func:`arviz.hdi`).

    Returns
    -------
    xarray.Dataset
        One row per target, named ``bayes_<target>``:

        * ``bayes_expected_cv`` (target ``expected_cv``): Σ_k (n_k / N) μ_k, the mean error
          of the sources at hand, n-weighted: E[μ̂] of the pooled CV estimate, sources fixed;
        * CVS model only, ``bayes_ose`` (target ``ose``): μ₀ (a lognormal population:
          exp(α + τ²/2)), the out-of-source error of
          Geras & Sutton (2013, eq. 3), the mean error over the population of sources; its spread carries
          τ² / K besides the sampling error of the block means;
        * CVS model only, ``bayes_new_source`` (target ``new_source``): μ₀ + τ z (or
          exp(α + τ z)), the error
          level of one new source, a posterior predictive that carries τ² itself.

        ``estimate`` is the posterior mean (the median for the ``ose`` and ``new_source`` of
        a lognormal or logit-normal population, skewed by τ), ``se`` the posterior sd;
        ``kind`` is ``"posterior_eti"`` or ``"posterior_hdi"``. Rows are flagged
        ``"not_converged"`` when the fit's diagnostics failed, ``"truncated_to_range"`` when
        a bound was moved onto the losses' range (the Gaussian model's posterior can reach
        below 0 for squared errors; :func:`bayescv.losses.effective_range`: the declared
        range, or [0, 1] for a table of 0-1 losses that declares none), and ``"heavy_tail"`` or
        ``"very_heavy_tail"`` when the losses' pooled Pareto k̂ (:mod:`bayescv.tails`,
        recorded by :func:`fit` in ``idata.sample_stats.attrs["khat"]``) exceeds 0.5 or 0.7:
        the normal model of the block means then understates the upper tail.

    Examples
    --------
    >>> import numpy as np
    >>> from bayescv.losses import from_arrays
    >>> rng = np.random.default_rng(0)
    >>> block = np.repeat(np.arange(5), 40)
    >>> table = from_arrays(rng.normal(1.0, 0.3, 200) + 0.1 * block, block, scheme="source")
    >>> ci = posterior_intervals(fit(table, random_state=1), level=0.9)
    >>> ci.attrs["kind"], ci.attrs["diagnostics"], ci["flag"].values.tolist()
    ('posterior_eti', 'ok', ['', '', ''])

    The interval for one new source carries τ² itself and is the widest:

    >>> width = ci["upper"] - ci["lower"]
    >>> width.sortby(width)["method_name"].values.tolist()
    ['bayes_expected_cv', 'bayes_ose', 'bayes_new_source']
    """
    check_level(level)
    if not hasattr(idata, "posterior"):
        raise TypeError(
            f"idata must be the InferenceData that bayescv.bayes.fit returns, got "
            f"{type(idata).__name__}; for a loss table call fit(table) first"
        )
    if kind not in ("eti", "hdi"):
        raise ValueError(f"kind must be 'eti' or 'hdi', got {kind!r}")
    if kind == "hdi":
        require_extra(["arviz"], "bayes", what="bayescv.bayes.posterior_intervals")
    targets = [t for t in _TARGETS if t in idata.posterior.data_vars]
    est, lo, hi, se = [], [], [], []
    population = idata.sample_stats.attrs.get("population")
    for target in targets:
        draws = np.asarray(idata.posterior[target].values, dtype=float).ravel()
        # exp(α + τ²/2), E expit(α + τz): a right tail in τ that skews (lognormal: can remove) the mean
        est.append(np.median(draws) if reports_median(population, target) else draws.mean())
        se.append(draws.std(ddof=1) if np.isfinite(draws).all() else np.inf)  # exp overflow
        if kind == "eti":
            a, b = np.quantile(draws, [(1 - level) / 2, (1 + level) / 2])
        else:
            az = import_quietly("arviz")
            a, b = az.hdi(draws, hdi_prob=level)
        lo.append(a)
        hi.append(b)
    attrs = dict(idata.sample_stats.attrs)
    flag = "not_converged" if attrs.get("problems") else ""
    # The normal model's posterior can reach outside the losses' range (below 0 for squared
    # errors): such a bound is moved onto the range and its row flagged.
    lo, hi, flags = truncate_to_range(
        lo, hi, [flag] * len(lo), tuple(attrs.get("loss_range", (-np.inf, np.inf)))
    )
    out = interval_dataset(
        [f"bayes_{t}" for t in targets],
        estimate=est,
        lower=lo,
        upper=hi,
        se=se,
        level=level,
        target=targets,
        flag=flags,
        kind=f"posterior_{kind}",
        seed=attrs.get("seed"),
        attrs={
            "sampler": str(attrs.get("sampler", "")),
            "scheme": str(attrs.get("scheme", "")),
            "replicate_kind": str(attrs.get("replicate_kind", "")),
            "diagnostics": attrs.get("problems") or "ok",
            "likelihood": str(attrs.get("likelihood", "gaussian")),
        },
    )
    return add_tail_flags(out, attrs.get("khat", float("nan")))
