"""Compare two learners over several data sets with the hierarchical model of Corani et al.

Corani, Benavoli, Demšar, Mangili & Zaffalon (2017), "Statistical comparison of classifiers
through Bayesian hierarchical modelling", *Machine Learning* 106:1817–1837,
doi:10.1007/s10994-017-5641-9 (baycomp's ``HierarchicalTest``). Given the per-fold
differences of the two learners' losses on q data sets, :func:`compare_datasets` gives, per
data set, the posterior of the (partially pooled) mean difference δ_i and the probabilities
that A is better (δ_i < −rope), equivalent (−rope ≤ δ_i ≤ rope) or worse (δ_i > rope); and for a
new data set from the same population, the probabilities baycomp reports, and the posterior
of the population mean difference δ0. The model and its priors are in
:mod:`bayescv.bayes.datasets_model`.

The default sampler is nutpie on the numba log-density of
:mod:`bayescv.bayes._datasets_density`, compiled once and cached on disk: a later fit, in
the same process or in a new one, compiles nothing. ``sampler="pymc"`` samples the PyMC
model of :func:`bayescv.bayes.datasets_model.build_datasets_model` instead (compiled anew on
every fit).
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import xarray as xr
from scipy import special
from scipy import stats as st

from bayescv._extras import BAYES_MODULES, import_quietly, require_extra
from bayescv._names import did_you_mean
from bayescv._provenance import child_seeds, resolve_seed
from bayescv.bayes._coordinates import expit, logit
from bayescv.bayes._diagnostics import ess_problem
from bayescv.bayes._samplers import check_n_jobs, nutpie_model, resolve_sampler
from bayescv.bayes.datasets_model import (
    ZERO_VARIANCE_FRACTION,
    DatasetsStats,
    build_datasets_model,
    conditional_delta,
    datasets_data,
    datasets_stats,
)
from bayescv.fold_scores._table import check_rope
from bayescv.intervals import check_level

__all__ = ["compare_datasets"]

TARGET = "difference of expected losses A − B per data set; and for a new data set"

_SAMPLERS = ("auto", "nutpie", "pymc")
_VECTORS = ("lambda_w", "sigma_interval__")


def _start(stats: DatasetsStats, data: dict, rng: np.random.Generator) -> np.ndarray:
    """Draw a jittered starting point near the data, in the sampled coordinates."""
    q = stats.n_datasets
    lo, hi = float(data["delta_lo"]), float(data["delta_hi"])
    margin = 0.05 * (hi - lo)
    d0 = np.clip(np.mean(stats.mean) + 0.1 * rng.uniform(-1, 1), lo + margin, hi - margin)
    s0 = max(float(np.std(stats.mean)), 0.1) * rng.uniform(0.5, 1.5)
    sigma = np.sqrt(stats.ss / ((stats.n - 1) * (1 - stats.rho))) * rng.uniform(0.8, 1.2, q)
    head = [
        logit((d0 - lo) / (hi - lo)),
        logit(s0 / float(data["std0_hi"])),
        logit(rng.uniform(0.3, 0.7)),
        logit(rng.uniform(0.3, 0.7)),
        rng.uniform(2.0, 4.0),  # log(ν − 1): ν between about 8 and 56
    ]
    w = rng.uniform(-0.5, 0.5, q)  # λ_i near 1
    return np.concatenate([head, w, logit(sigma / float(data["sigma_hi"]))])


def _natural(coords: dict[str, np.ndarray], data: dict) -> dict:
    """Map the sampled coordinates (chain, draw, ...) to the model's parameters, scaled units."""

    def interval(y, lo, hi):
        s = expit(y)
        return s * hi + (1.0 - s) * lo

    nu = 1.0 + np.exp(coords["nu_minus_one_log__"])
    return {
        "delta0": interval(coords["delta0_interval__"], data["delta_lo"], data["delta_hi"]),
        "std0": interval(coords["std0_interval__"], 0.0, data["std0_hi"]),
        "gamma_alpha": interval(coords["gamma_alpha_interval__"], data["alpha_lo"], data["alpha_hi"]),
        "gamma_beta": interval(coords["gamma_beta_interval__"], data["beta_lo"], data["beta_hi"]),
        "nu": nu,
        "lambda": np.exp(coords["lambda_w"] / np.sqrt(nu / 2.0)[..., None]),
        "sigma": interval(coords["sigma_interval__"], 0.0, data["sigma_hi"]),
    }  # fmt: skip


def _sample(sampler, stats, data, draws, tune, chains, seed, target_accept, n_jobs, progress):
    """Draw the posterior; return the parameters (scaled), sampler statistics, compile seconds."""
    from bayescv.bayes import _datasets_density as density

    q = stats.n_datasets
    slices = density.coordinate_slices(q)
    init_seed, run_seed = child_seeds(seed, 2)
    if sampler == "nutpie":
        nutpie = import_quietly("nutpie")

        start = time.perf_counter()
        density.callbacks()  # loaded from the disk cache, or compiled, on this process' first fit
        compile_s = time.perf_counter() - start
        model, slices, _ = nutpie_model(
            density, data, None, slices, lambda rng: _start(stats, data, rng), init_seed
        )
        kwargs = {} if n_jobs is None else {"cores": n_jobs}
        idata = nutpie.sample(
            model, draws=draws, tune=tune, chains=chains, seed=run_seed,
            target_accept=target_accept, progress_bar=progress, save_warmup=False, **kwargs,
        )  # fmt: skip
        flat = np.asarray(idata.posterior["x"].values, dtype=float)
        coords = {name: flat[..., where] for name, where in slices.items()}
        coords = {n: v if n in _VECTORS else v[..., 0] for n, v in coords.items()}
        return _natural(coords, data), idata.sample_stats, compile_s
    from bayescv.bayes.model import _import_pymc

    pm = _import_pymc()
    if n_jobs not in (None, 1):
        raise ValueError("sampler='pymc' runs its chains one after another (n_jobs=1)")
    rng = np.random.default_rng(init_seed)
    starts = []
    for _ in range(chains):
        x = _start(stats, data, rng)
        coords = {n: x[s] if n in _VECTORS else x[s][0] for n, s in slices.items()}
        nat = _natural(coords, data)
        starts.append({
            "delta0": nat["delta0"], "std0": nat["std0"], "gamma_alpha": nat["gamma_alpha"],
            "gamma_beta": nat["gamma_beta"], "nu_minus_one": nat["nu"] - 1.0,
            "lambda_w": coords["lambda_w"], "sigma": nat["sigma"],
        })  # fmt: skip
    with build_datasets_model(data):
        idata = pm.sample(
            draws=draws, tune=tune, chains=chains, target_accept=target_accept,
            random_seed=run_seed, initvals=starts, progressbar=progress, cores=1,
            compute_convergence_checks=False,
        )  # fmt: skip
    post = idata.posterior
    names = ("delta0", "std0", "gamma_alpha", "gamma_beta", "nu", "lambda", "sigma")
    values = {name: np.asarray(post[name].values, dtype=float) for name in names}
    # PyMC compiles inside pm.sample: its share of the time is not separated from sampling.
    return values, idata.sample_stats, float("nan")


def _diagnostics(params: dict, sample_stats) -> dict:
    """Worst r̂, smallest bulk and tail ESS over δ0, std0, ν and the δ_i; divergences."""
    az = import_quietly("arviz")
    post = xr.Dataset(
        {
            name: (("chain", "draw", "dataset")[: params[name].ndim], params[name])
            for name in ("delta0", "std0", "nu", "delta")
        }
    )
    worst = lambda ds, f: float(f([f(ds[v].values) for v in ds.data_vars]))  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a constant draw has no ESS
        bulk = worst(az.ess(post, method="bulk"), np.nanmin)
        tail = worst(az.ess(post, method="tail"), np.nanmin)
        # r̂ needs two chains at least; with one it is NaN and not checked.
        rhat = worst(az.rhat(post), np.nanmax) if post.sizes["chain"] > 1 else float("nan")
    div = int(np.asarray(sample_stats["diverging"].values).sum())
    return {"rhat_max": rhat, "ess_bulk_min": bulk, "ess_tail_min": tail, "divergences": div}


def _interval(draws: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean and equal-tailed interval over the first two axes (chain, draw)."""
    flat = draws.reshape(-1, *draws.shape[2:])
    lo, hi = np.quantile(flat, [(1 - level) / 2, (1 + level) / 2], axis=0)
    return flat.mean(axis=0), lo, hi


def _check_not_a_table(diff: Any) -> None:
    """Refuse a fold-score table, or its 3-d differences, with the recipe for `diff`."""
    recipe = (
        "from a fold-score table, take d = bayescv.fold_scores.fold_differences(table, a, b) "
        "and pass d.values.reshape(d.sizes['dataset'], -1) with runs=table.sizes['repetition'] "
        "and names=d['dataset'].values; or call bayescv.compare_learners(table, "
        "methods=['hierarchical_datasets']), which does this for each pair of learners"
    )
    if isinstance(diff, xr.Dataset):
        raise TypeError(
            "compare_datasets takes the per-fold loss differences of two learners, an array of "
            f"shape (q data sets, J folds of all runs), not an xarray.Dataset; {recipe}"
        )
    if isinstance(diff, xr.DataArray) and {"repetition", "fold"} <= set(diff.dims):
        raise ValueError(
            f"diff has dims {diff.dims}; compare_datasets takes a 2-d array (q data sets, J "
            f"folds of all runs, run after run); {recipe}"
        )


def compare_datasets(
    diff: Any,
    *,
    rope: float = 0.0,
    runs: int = 1,
    names: Sequence | None = None,
    rho: Any = None,
    level: float = 0.95,
    draws: int = 2000,
    tune: int = 1000,
    chains: int = 4,
    random_state: int | np.random.Generator | None = None,
    sampler: str = "auto",
    target_accept: float | None = None,
    n_jobs: int | None = None,
    rhat_max: float = 1.01,
    ess_min: float = 400.0,
    progress: bool = False,
    return_inferencedata: bool = False,
) -> Any:
    """Hierarchical Bayesian comparison of two learners over several data sets.

    The model of Corani et al. (2017, *Machine Learning* 106:1817–1837; baycomp's
    ``HierarchicalTest``): the per-fold differences of each data set are compound-symmetric
    normal with correlation ρ = 1/K (K folds per run; or the given `rho`) around the data set's mean difference
    δ_i, and the δ_i are Student-t around the population mean δ0, with baycomp's priors
    (:mod:`bayescv.bayes.datasets_model`). The Student-t is sampled as a scale mixture of
    normals and δ_i is integrated out analytically, then drawn from its exact conditional
    law: the same posterior as baycomp's Stan program, without the funnel that sampling δ_i
    directly leaves NUTS.

    Parameters
    ----------
    diff : array-like of shape (q, J), or sequence of q 1-d arrays
        Per-fold differences "learner A minus learner B" of losses (lower is better, so
        "A better" is δ < 0), one row per data set, ``runs`` K-fold CV runs each (the order
        within a row does not matter to the model). Rows may differ in length: each data set
        has its own J_i and ρ_i = runs / J_i. For scores where higher is better (accuracy),
        pass B − A.
    rope : float, default 0.0
        Half-width of the region of practical equivalence, in the units of `diff` (≥ 0).
    runs : int, default 1
        CV runs per data set: every J_i must be a multiple, K_i = J_i / runs ≥ 2 folds.
    names : sequence, optional
        Labels of the data sets (the ``dataset`` coordinate); default 0..q−1.
    rho : float or array-like of shape (q,), optional
        Correlation ρ_i of two fold differences of each data set, in (0, 1). Default
        1 / K_i, baycomp's (equal folds). With known fold sizes pass ρ_i = r_i / (1 + r_i),
        r_i the mean n_test/n_train: ρ_i / (1 − ρ_i) = r_i is then the ratio of the
        correlated t-test and of Nadeau & Bengio (:func:`bayescv.fold_scores.nb_ratio`),
        as :func:`bayescv.compare_learners` does. ρ is data of the cached density: any value
        compiles nothing.
    level : float, default 0.95
        Coverage of the equal-tailed posterior intervals.
    draws, tune, chains : int
        Posterior draws and tuning steps per chain, and the number of chains.
    random_state : None, int or numpy.random.Generator
        Seeds the sampler, the starting points and the draws of δ_i; a given seed gives
        identical results.
    sampler : {"auto", "nutpie", "pymc"}, default "auto"
        ``"auto"``: nutpie when it can be imported, on the numba density cached on disk
        (:mod:`bayescv.bayes._datasets_density`: a fit after the first in a process, or in a
        later process, compiles nothing); else PyMC's NUTS on
        :func:`~bayescv.bayes.datasets_model.build_datasets_model` (compiled on every call).
    target_accept : float, optional
        Target acceptance rate of NUTS' step-size adaptation; default 0.9, and 0.99 when a
        data set has zero variance (its stand-in variance, below, pins its δ_i tightly: at
        0.9 and 0.95, 3 and 4 of 4 fits of six data sets with one tie diverged; at 0.99,
        none).
    n_jobs : int, optional
        Chains run in parallel (nutpie; default all cores), with joblib's meaning: −1 for
        all CPUs; ``"pymc"`` accepts only 1. Draws do not depend on it.
    rhat_max, ess_min : float
        Convergence thresholds for the :class:`~bayescv.bayes.SamplingWarning`.
    progress : bool, default False
        Show the sampler's progress bar.
    return_inferencedata : bool, default False
        Also return an ArviZ ``InferenceData`` with the posterior in the units of `diff`
        (``delta0``, ``std0``, ``nu``, ``gamma_alpha``, ``gamma_beta``, and per data set
        ``delta``, ``lambda`` and ``sigma``) and the sampler statistics.

    Returns
    -------
    summary : xarray.Dataset
        Dim ``dataset``: ``delta_mean``, ``delta_lower``, ``delta_upper`` (posterior mean and
        interval of δ_i, partially pooled), ``p_better`` = P(δ_i < −rope),
        ``p_equivalent`` = P(−rope ≤ δ_i ≤ rope), ``p_worse`` = P(δ_i > rope), and ``n`` (J_i).
        Scalars for a new data set, as baycomp computes them (the mean over posterior draws
        of the masses of StudentT(ν, δ0, std0) below −rope, inside ±rope and above rope):
        ``new_dataset_p_better``, ``new_dataset_p_equivalent``, ``new_dataset_p_worse``;
        and ``delta0_mean``, ``delta0_lower``, ``delta0_upper`` (the population mean
        difference), ``std0_mean``, ``std0_lower``, ``std0_upper`` (the scale of the δ_i
        around it), all in the units of `diff`. Attrs: ``target``, ``sampler``, ``rope``,
        ``runs``, ``rho`` (ρ_i per data set), ``rho_source`` (``"1/K"`` or ``"given"``),
        ``level``, ``seconds`` (the whole call), ``compile_seconds`` (compiling or
        loading the density in this call: about 0 after the first fit of a process; NaN for
        PyMC, which compiles inside its sampler), ``sampling_seconds``, ``divergences``,
        ``rhat_max``, ``ess_bulk_min``, ``ess_tail_min``, ``problems``, ``seed``, ``scale``
        (the divisor of the data), ``zero_variance_datasets`` (labels, as strings, of data
        sets whose differences were all equal; see Warns).
    idata : arviz.InferenceData
        Only with ``return_inferencedata=True``: ``(summary, idata)``.

    Raises
    ------
    TypeError
        For a fold-score table (an ``xarray.Dataset``) instead of the differences: the
        message gives the recipe (:func:`bayescv.fold_scores.fold_differences`).
    ValueError
        For a 3-d ``fold_differences`` array (reshape it), NaN or infinite differences, fewer
        than 2 data sets, a data set with fewer than 2 measurements, `runs` not dividing its
        J_i, a `rho` not in (0, 1), a `rope` that is not a finite number >= 0, an `n_jobs` that is not a non-zero
        integer, an unknown sampler, or a bad count or level.

    Warns
    -----
    UserWarning
        When a data set's differences are all equal. Its likelihood would then have an
        unbounded peak at σ_i = 0; baycomp replaces its values with random ones, this
        function instead (deterministically) sets its centred sum of squares to
        1 % of (J_i − 1) times the pooled within-data-set variance of the others (a standard
        deviation of 10 % of theirs) and names it in ``zero_variance_datasets``.
    SamplingWarning
        When r̂ > `rhat_max`, an ESS < `ess_min`, or a transition diverged.

    Notes
    -----
    ``p_better``, ``p_equivalent``, ``p_worse`` and ``delta_mean`` are Rao-Blackwellised:
    the means over posterior draws of the conditional normal law of δ_i (exact given the
    other parameters), not counts of draws; the intervals use one draw of δ_i per posterior
    draw. baycomp's ``Posterior.probs`` reports, for a new data set, the fraction of
    posterior draws in which each of the three masses is the largest; ``new_dataset_p_*``
    here are the mean masses themselves (the posterior predictive probabilities for a new
    data set's δ). The data and the rope are divided by the mean over data sets of the
    differences' standard deviations before fitting (as baycomp does) and the results
    multiplied back.

    Examples
    --------
    >>> import numpy as np
    >>> from bayescv.bayes import compare_datasets
    >>> rng = np.random.default_rng(0)
    >>> diff = rng.normal(-0.5, 1.0, size=(6, 10))  # 6 data sets, 10-fold CV, A better
    >>> s = compare_datasets(diff, rope=0.05, random_state=0)
    >>> float(s["new_dataset_p_better"]) > 0.5
    True
    >>> s["p_better"].dims
    ('dataset',)
    """
    require_extra(BAYES_MODULES, "bayes", what="bayescv.bayes.compare_datasets")
    started = time.perf_counter()
    _check_not_a_table(diff)
    if not isinstance(sampler, str) or sampler not in _SAMPLERS:
        raise ValueError(
            f"sampler must be one of {_SAMPLERS}, got {sampler!r}"
            f"{did_you_mean(sampler, _SAMPLERS)}"
        )
    for name, value in {"draws": draws, "tune": tune, "chains": chains}.items():
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    rope = check_rope(rope)
    n_jobs = check_n_jobs(n_jobs)
    check_level(level)
    stats = datasets_stats(diff, runs=runs, names=names, rho=rho)
    if target_accept is None:
        target_accept = 0.99 if stats.zero_variance.any() else 0.9
    if isinstance(target_accept, bool) or not 0 < target_accept < 1:
        raise ValueError(f"target_accept must be in (0, 1), got {target_accept!r}")
    data = datasets_data(stats)
    requested = sampler
    if sampler == "auto":
        sampler = resolve_sampler("auto")
    seed = resolve_seed(random_state)
    sampler_seed, numpy_seed = child_seeds(seed, 2)
    t0 = time.perf_counter()
    params, sample_stats, compile_s = _sample(
        sampler, stats, data, int(draws), int(tune), int(chains), sampler_seed,
        float(target_accept), n_jobs, progress,
    )  # fmt: skip
    sampling_s = time.perf_counter() - t0 - (0.0 if np.isnan(compile_s) else compile_s)
    user, loc, sd = _delta_posterior(params, stats, np.random.default_rng(numpy_seed))
    summary = _summary(user, loc, sd, stats, float(rope), level)
    diag = _diagnostics(user, sample_stats)
    zero = [str(stats.names[i]) for i in np.flatnonzero(stats.zero_variance)]
    summary.attrs.update({
        "target": TARGET, "sampler": sampler, "sampler_requested": requested,
        "rope": float(rope), "runs": int(runs), "level": float(level),
        "rho": stats.rho.tolist(), "rho_source": "1/K" if rho is None else "given",
        "draws": int(draws), "tune": int(tune), "chains": int(chains), "seed": seed,
        "target_accept": float(target_accept), **diag, "scale": stats.scale,
        "zero_variance_fraction": ZERO_VARIANCE_FRACTION, "zero_variance_datasets": zero,
        "compile_seconds": float(compile_s), "sampling_seconds": float(sampling_s),
    })  # fmt: skip
    problems = []
    if chains > 1 and not diag["rhat_max"] <= rhat_max:
        problems.append(f"r̂ {diag['rhat_max']:.3f} > {rhat_max}")
    ess = ess_problem(diag["ess_bulk_min"], diag["ess_tail_min"], ess_min)
    if ess:
        problems.append(ess)
    if diag["divergences"]:
        problems.append(f"{diag['divergences']} divergent transitions")
    summary.attrs["problems"] = "; ".join(problems)
    if problems:
        from bayescv.bayes._diagnostics import SamplingWarning

        warnings.warn(
            f"the {sampler} sampler did not converge: {summary.attrs['problems']}; the "
            "posterior is unreliable (more draws or tune, or a higher target_accept)",
            SamplingWarning,
            stacklevel=2,
        )
    idata = _inference_data(user, sample_stats, stats) if return_inferencedata else None
    summary.attrs["seconds"] = time.perf_counter() - started
    return (summary, idata) if return_inferencedata else summary


def _delta_posterior(params: dict, stats: DatasetsStats, rng: np.random.Generator):
    """Return the parameters in the data's units with one draw of each δ_i per posterior draw.

    Also returns the conditional mean and standard deviation of δ_i (data's units), per draw.
    """
    scale = stats.scale
    tau2 = np.square(params["std0"])[..., None] / params["lambda"]
    loc, var = conditional_delta(
        stats.mean, stats.n, stats.rho, params["delta0"][..., None], tau2, params["sigma"]
    )
    sd = np.sqrt(var)
    delta = loc + sd * rng.standard_normal(loc.shape)
    user = {
        name: value * scale if name in ("delta0", "std0", "sigma") else value
        for name, value in params.items()
    }
    user["delta"] = delta * scale
    return user, loc * scale, sd * scale


def _summary(user, loc, sd, stats: DatasetsStats, rope: float, level: float) -> xr.Dataset:
    """Summarise the posterior per data set and for a new data set, in the units of the data."""
    q = stats.n_datasets
    loc, sd = loc.reshape(-1, q), sd.reshape(-1, q)
    with np.errstate(divide="ignore", invalid="ignore"):
        below = np.where(sd > 0, special.ndtr((-rope - loc) / sd), (loc < -rope) * 1.0)
        above = np.where(sd > 0, special.ndtr((loc - rope) / sd), (loc > rope) * 1.0)
    better, worse = below.mean(axis=0), above.mean(axis=0)
    _, lo, hi = _interval(user["delta"], level)
    nu = user["nu"].ravel()
    d0 = user["delta0"].ravel()
    s0 = user["std0"].ravel()
    left = st.t.cdf(-rope, nu, d0, s0)
    right = st.t.sf(rope, nu, d0, s0)
    out = {
        "delta_mean": ("dataset", loc.mean(axis=0)),
        "delta_lower": ("dataset", lo),
        "delta_upper": ("dataset", hi),
        "p_better": ("dataset", better),
        "p_equivalent": ("dataset", np.clip(1.0 - better - worse, 0.0, 1.0)),
        "p_worse": ("dataset", worse),
        "n": ("dataset", stats.n.astype(np.int64)),
        "new_dataset_p_better": float(left.mean()),
        "new_dataset_p_equivalent": float(np.clip(1.0 - left - right, 0.0, 1.0).mean()),
        "new_dataset_p_worse": float(right.mean()),
    }
    for name in ("delta0", "std0"):
        m, a, b = _interval(user[name], level)
        out.update(
            {f"{name}_mean": float(m), f"{name}_lower": float(a), f"{name}_upper": float(b)}
        )
    return xr.Dataset(out, coords={"dataset": list(stats.names)})


def _inference_data(user: dict, sample_stats, stats: DatasetsStats):
    """Assemble an InferenceData of the posterior (in the data's units) and sampler statistics."""
    az = import_quietly("arviz")
    chains, draws = user["delta0"].shape
    coords = {"chain": np.arange(chains), "draw": np.arange(draws), "dataset": list(stats.names)}
    posterior = xr.Dataset(
        {name: (("chain", "draw", "dataset")[: v.ndim], v) for name, v in user.items()},
        coords=coords,
    )
    observed = xr.Dataset(
        {
            "mean": ("dataset", stats.mean * stats.scale),
            "ss": ("dataset", stats.ss * stats.scale**2),
            "n": ("dataset", stats.n),
            "rho": ("dataset", stats.rho),
        },
        coords={"dataset": list(stats.names)},
    )
    ss = sample_stats.assign_coords(chain=coords["chain"], draw=coords["draw"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return az.InferenceData(posterior=posterior, sample_stats=ss, observed_data=observed)
