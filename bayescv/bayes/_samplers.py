"""The NUTS samplers behind :func:`bayescv.bayes.fit`, each reusing compiled code.

Each returns the draws of the sampled coordinates, as numpy arrays of shape
(chain, draw, ...), and the sampler statistics as an xarray Dataset; ``fit`` maps the draws to
parameters with numpy (:func:`bayescv.bayes._coordinates.natural_params`), the same way for all.
:func:`resolve_sampler` turns ``"auto"`` into nutpie when it can be imported, else PyMC.
"""

from __future__ import annotations

import time
import warnings
from typing import Any

import numpy as np
import xarray as xr

from bayescv._extras import check_n_jobs as check_worker_count
from bayescv._extras import import_quietly, progress_bar
from bayescv._names import did_you_mean
from bayescv._provenance import child_seeds
from bayescv.bayes._coordinates import expit, logit
from bayescv.bayes.model import _import_pymc

__all__ = ["SAMPLE", "check_n_jobs", "resolve_sampler"]

_NAMES = ("auto", "pymc", "nutpie", "numpyro")


def resolve_sampler(sampler: str) -> str:
    """Return the NUTS implementation a ``sampler`` argument of :func:`bayescv.bayes.fit` means.

    Parameters
    ----------
    sampler : {"auto", "pymc", "nutpie", "numpyro"}
        ``"auto"``: nutpie when it can be imported (it samples the disk-cached numba
        log-density, :mod:`bayescv.bayes._density`: a later fit costs about 0.25 s at K = 10
        against about 7 s for PyMC's NUTS; ``benchmarks/results/bench_bayes.md``), else
        PyMC's own NUTS, with a RuntimeWarning when nutpie is installed but fails to import.
        Other names are returned unchanged (a missing optional package is reported when
        sampling starts).

    Returns
    -------
    str
        ``"pymc"``, ``"nutpie"`` or ``"numpyro"``.

    Raises
    ------
    ValueError
        For any other name.
    """
    if not isinstance(sampler, str) or sampler not in _NAMES:
        raise ValueError(
            f"sampler must be one of {_NAMES}, got {sampler!r}{did_you_mean(sampler, _NAMES)}"
        )
    if sampler != "auto":
        return sampler
    try:
        import_quietly("nutpie")
    except ModuleNotFoundError as error:
        if error.name != "nutpie":
            _warn_broken_nutpie(error)
        return "pymc"
    except ImportError as error:  # installed, but it (or a library under it) fails to load
        _warn_broken_nutpie(error)
        return "pymc"
    return "nutpie"


def _warn_broken_nutpie(error: ImportError) -> None:
    """Say that nutpie is installed but cannot be imported, so PyMC's slower NUTS runs."""
    warnings.warn(
        f"nutpie is installed but cannot be imported ({type(error).__name__}: {error}); "
        "sampler='auto' falls back to PyMC's NUTS, which recompiles the model in every "
        "process and samples more slowly. Repair the nutpie installation (often a version "
        "clash of numpy and pyarrow), or pass sampler='pymc' to silence this warning",
        RuntimeWarning,
        stacklevel=4,  # the user's call of fit or compare_datasets
    )


def check_n_jobs(n_jobs: Any) -> int | None:
    """Return `n_jobs` as a count of workers (joblib's meaning: −1 all CPUs), or None.

    Parameters
    ----------
    n_jobs : int or None
        Chains run in parallel; negative values count back from the number of CPUs, as in
        joblib (−1: all of them). None leaves the choice to the sampler.

    Returns
    -------
    int or None
        A positive count of workers, or None.

    Raises
    ------
    ValueError
        For 0, a bool, or anything but an integer or None.
    """
    check_worker_count(n_jobs)  # the package's one check of a joblib count
    if n_jobs is None:
        return None
    from joblib import effective_n_jobs

    return int(effective_n_jobs(int(n_jobs)))


def _initvals(scheme: str, k: int, chains: int, rng: np.random.Generator) -> list[dict]:
    """Jittered starting points around the data-centred origin of the parameterisation."""
    per = k if scheme == "source" else None
    loc = "mu0_z" if scheme == "source" else "mu_z"
    out = []
    for _ in range(chains):
        point = {
            loc: rng.uniform(-1, 1),
            "nu_z": rng.uniform(-1, 1, per),
            "gamma_sd_z": rng.uniform(-1, 1, per),
            "rho_b": rng.uniform(0.3, 0.7),
        }
        if scheme == "source":
            point["tau_z"] = rng.uniform(-1, 1)
        out.append(point)
    return out


def _on_logodds(point: dict) -> dict:
    """Return a starting point with ρ's coordinate ``rho_b`` put on the sampled log-odds scale."""
    out = dict(point)
    out["rho_b_logodds__"] = logit(out.pop("rho_b"))
    return out


#: Sampler statistics kept from PyMC's NUTS, under ArviZ's names.
_PYMC_STATS = {
    "diverging": "diverging",
    "tree_size": "n_steps",
    "depth": "tree_depth",
    "step_size": "step_size",
    "energy": "energy",
    "model_logp": "lp",
    "mean_tree_accept": "acceptance_rate",
    "reached_max_treedepth": "reached_max_treedepth",
}


def _sample_pymc(
    compiled, data, scheme, draws, tune, chains, seed, target_accept, n_jobs, progress
):
    """Run PyMC's NUTS step method, compiled once per model, chain after chain.

    The step's ``astep`` is driven directly: ``pymc.sample`` would compile a trace function
    for every chain of every fit (about a second each) and log on every call.
    """
    if n_jobs not in (None, 1):
        raise ValueError(
            "sampler='pymc' runs its chains one after another (n_jobs=1), reusing the compiled "
            "step; for parallel chains use sampler='nutpie', or run fits in parallel"
        )
    _import_pymc()
    from pymc.blocking import DictToArrayBijection
    from pymc.step_methods.hmc.base_hmc import DualAverageAdaptation

    started = time.perf_counter()
    step = compiled.nuts_step()  # compiled on the model's first fit, then reused
    compile_s = time.perf_counter() - started
    # A fresh step-size adaptation from the initial step size (PyMC's defaults gamma = 0.05,
    # k = 0.75, t0 = 10); reset_tuning() below also restarts the mass-matrix adaptation.
    step.target_accept = target_accept
    step.step_adapt = DualAverageAdaptation(
        compiled.initial_step_size, target_accept, 0.05, 0.75, 10
    )
    init_seed, *chain_seeds = child_seeds(seed, chains + 1)
    starts = _initvals(
        compiled.scheme, compiled.n_blocks, chains, np.random.default_rng(init_seed)
    )
    names = [v.name for v in step.vars]
    samples = []
    stats = {name: np.empty((chains, draws)) for name in _PYMC_STATS.values()}
    iterator = range(chains)
    if progress:
        iterator = progress_bar(iterator, desc="chains")
    for c in iterator:
        start = _on_logodds(starts[c])
        q = DictToArrayBijection.map({name: np.asarray(start[name], float) for name in names})
        step.set_rng(np.random.default_rng(chain_seeds[c]))
        step.tune = True
        step.reset_tuning()
        step.iter_count = 0
        chain = np.empty((draws, q.data.size))
        for i in range(tune + draws):
            if i == tune:
                step.stop_tuning()
            q, step_stats = step.astep(q)
            if i >= tune:
                chain[i - tune] = q.data
                for key, name in _PYMC_STATS.items():
                    stats[name][c, i - tune] = step_stats[0][key]
        samples.append(chain)
    flat = np.stack(samples)  # (chain, draw, n)
    values, offset = {}, 0
    for name, shape, size, _ in q.point_map_info:
        values[name] = flat[..., offset : offset + size].reshape((chains, draws, *shape))
        offset += size
    values["rho_b"] = expit(values.pop("rho_b_logodds__"))
    sample_stats = xr.Dataset(
        {name: (("chain", "draw"), value) for name, value in stats.items()},
        coords={"chain": np.arange(chains), "draw": np.arange(draws)},
    )
    for name, dtype in (("diverging", bool), ("reached_max_treedepth", bool)):
        sample_stats[name] = sample_stats[name].astype(dtype)
    for name in ("n_steps", "tree_depth"):
        sample_stats[name] = sample_stats[name].astype(np.int64)
    return values, sample_stats, compile_s


def _from_idata(idata, scheme: str) -> tuple[dict, xr.Dataset]:
    """Return the sampled coordinates and sampler statistics of an external sampler."""
    post = idata.posterior
    names = ["mu0_z" if scheme == "source" else "mu_z", "nu_z", "gamma_sd_z"]
    names += ["tau_z"] if scheme == "source" else []
    values = {name: np.asarray(post[name].values, dtype=float) for name in names}
    values["rho_b"] = np.asarray(post["rho_b"].values, dtype=float)
    return values, idata.sample_stats


def _nutpie_model(data: dict[str, np.ndarray], scheme: str, init_seed: int):
    """Build nutpie's model over the cached C callbacks of :mod:`bayescv.bayes._density`."""
    from bayescv.bayes import _density

    source = scheme == "source"
    k = int(np.size(data["n"]))
    slices = _density.coordinate_slices(source, k)
    names = list(slices)

    def start(rng):
        point = _on_logodds(_initvals(scheme, k, 1, rng)[0])
        return np.concatenate([np.ravel(point[name]) for name in names])

    return nutpie_model(_density, data, source, slices, start, init_seed)


def nutpie_model(density, data, source, slices, start, init_seed):
    """Build nutpie's model over the cached C callbacks of a numba density module.

    Parameters
    ----------
    density : module
        :mod:`bayescv.bayes._density` or :mod:`bayescv.bayes._binomial_density` (their
        ``callbacks`` and ``buffer``).
    data : dict of ndarray
        The model data.
    source : bool
        CVS or CVR model.
    slices : dict of slice
        The density's ``coordinate_slices``.
    start : callable
        ``start(rng) -> ndarray`` of a jittered initial point.
    init_seed : int
        Seed of the initial points, combined with nutpie's per-chain seed.

    Returns
    -------
    model, slices, seconds
        nutpie's compiled model, the slices, and the seconds this call spent compiling or
        loading the callbacks (about 0 once this process has them).
    """
    compiled_model = import_quietly("nutpie.compile_pymc").CompiledPyMCModel
    n_dim = max(s.stop for s in slices.values())

    def initial_point(seed):
        # nutpie passes a seed of its own per chain: the start depends on it and on the
        # fit's seed, not on which thread asks first.
        return start(np.random.default_rng([init_seed, int(seed)]))

    # Timed here: the callbacks' own "seconds" is the process' first compile or load, which
    # a later fit, served from memory, did not spend.
    started = time.perf_counter()
    compiled = density.callbacks()
    seconds = time.perf_counter() - started
    model = compiled_model(
        dims={},
        compiled_logp_func=compiled["logp"],
        compiled_expand_func=compiled["expand"],
        initial_point_func=initial_point,
        shared_data={},
        user_data=density.buffer(data, source),
        n_expanded=n_dim,
        shape_info=(["x"], [slice(0, n_dim)], [(n_dim,)]),
        logp_func=None,
        expand_func=None,
        _n_dim=n_dim,
        _shapes={"x": (n_dim,)},
        _coords={},
    )
    return model, slices, seconds


def _sample_nutpie(
    compiled, data, scheme, draws, tune, chains, seed, target_accept, n_jobs, progress
):
    """Run nutpie's NUTS on the numba log-density (:mod:`bayescv.bayes._density`).

    Returns the draws and statistics, and the seconds this fit spent compiling (or loading
    from the disk cache) the log-density: 0 but for the first fit of a process.
    """
    try:
        nutpie = import_quietly("nutpie")
    except ImportError as err:
        raise ImportError(
            "sampler='nutpie' needs the nutpie package: pip install 'bayescv[bayes]'"
        ) from err
    init_seed, run_seed = child_seeds(seed, 2)
    model, slices, seconds = _nutpie_model(data, scheme, init_seed)
    kwargs = {} if n_jobs is None else {"cores": n_jobs}
    idata = nutpie.sample(
        model,
        draws=draws,
        tune=tune,
        chains=chains,
        seed=run_seed,
        target_accept=target_accept,
        progress_bar=progress,
        save_warmup=False,
        **kwargs,
    )
    flat = np.asarray(idata.posterior["x"].values, dtype=float)  # (chain, draw, n_dim)
    values = {}
    for name, where in slices.items():
        part = flat[..., where]
        per_block = scheme == "source" and name in ("nu_z", "gamma_sd_z")
        values[name] = part if per_block else part[..., 0]
    values["rho_b"] = expit(values.pop("rho_b_logodds__"))
    return values, idata.sample_stats, seconds


def _sample_numpyro(
    compiled, data, scheme, draws, tune, chains, seed, target_accept, n_jobs, progress
):
    try:
        import numpyro  # noqa: F401
    except ImportError as err:
        raise ImportError(
            "sampler='numpyro' needs numpyro and jax: pip install 'bayescv[bayes-fast]'"
        ) from err
    pm = _import_pymc()
    init_seed = child_seeds(seed, 1)[0]
    with compiled.model:
        idata = pm.sample(
            draws=draws,
            tune=tune,
            chains=chains,
            nuts_sampler="numpyro",
            target_accept=target_accept,
            random_seed=seed,
            initvals=_initvals(
                compiled.scheme, compiled.n_blocks, chains, np.random.default_rng(init_seed)
            ),
            progressbar=progress,
            compute_convergence_checks=False,
            nuts_sampler_kwargs={"chain_method": "vectorized"},
        )
    values, sample_stats = _from_idata(idata, compiled.scheme)
    # PyMC compiles the JAX graph inside pm.sample; its share of the time is not reported.
    return values, sample_stats, float("nan")


SAMPLE = {"pymc": _sample_pymc, "nutpie": _sample_nutpie, "numpyro": _sample_numpyro}
