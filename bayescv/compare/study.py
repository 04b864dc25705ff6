"""Coverage studies: many replicates of a scenario, every method, the truth beside each.

:func:`run_study` draws ``n_replicates`` data sets from a scenario (each from its own child
seed), runs one CV per replicate, every selected method, and computes the replicate's
truths; the result is an :class:`xarray.Dataset`:

* dims ``(replicate, method_name)``: ``estimate``, ``lower``, ``upper``, ``se``, ``theta_hat``
  (the method's variance estimate: θ̂ for closed-form methods, se² otherwise),
  ``runtime`` (seconds), ``flag`` (``""``, ``"negative_variance"``, ``"error: ..."``);
  coords ``method_target`` (the estimand the method declares) and ``method_cost``;
* dims ``(replicate, target)``: ``truth``, the per-replicate truths (``err_xy``,
  ``kfold_test_error``, ``ose_xy``, ``ose_cv``; see :mod:`bayescv.compare.scenarios`);
* dim ``replicate``: ``mu_hat`` (the CV estimate), ``seed``, timings ``time_sample``,
  ``time_cv``, ``time_truth``, ``time_methods``, ``time_total``, ``warnings`` (warnings
  raised while the replicate ran), coords ``design``, ``scheme`` and ``settings_id`` (an id
  of the settings but the seed: replicates of stacked studies must share it);
* dims ``(replicate, block)``: ``block_n``, ``block_S``, ``block_W``, ``block_label``: the
  CV run's per-block statistics, from which :func:`bayescv.compare.decompose` estimates
  the σ/ω/γ decomposition of the true θ;
* attrs: the settings (``settings`` as JSON, and readable copies), seed, versions;
  ``scenario`` is the catalogue name a scenario was built under
  (:func:`~bayescv.compare.make_scenario`), else its class's ``name``.

Results do not depend on ``n_jobs`` or the backend: replicate i always uses child seed i of
the study's seed, and inside it the data, the folds, the truths, the learner and every
method have their own seeds. Only the timing variables (``runtime``, ``time_*``) and the
attrs ``created``, ``wall_time_s``, ``backend``, ``n_jobs`` and ``replicates_loaded`` differ.
"""

from __future__ import annotations

import contextlib
import json
import platform
import time
from collections.abc import Mapping, Sequence
from typing import Any

import joblib
import numpy as np
import sklearn
import xarray as xr

from bayescv._extras import progress_bar
from bayescv._provenance import child_seeds, created_now, package_version, resolve_seed
from bayescv.compare._backends import check_workers, chunks, dask_client, run_dask, run_joblib
from bayescv.compare._replicate import _PER_METHOD, _run_chunk, _Spec
from bayescv.compare._results import as_names
from bayescv.compare._scenario_base import check_scenario
from bayescv.compare._settings import (
    check_resume,
    fill_settings_id,
    settings_id,
    study_settings,
    with_settings_id,
)
from bayescv.compare._store import (
    StudyStore,
    check_store_name,
    normalize,
)
from bayescv.compare.registry import check_method_options, resolve_methods
from bayescv.compare.scenarios import Scenario
from bayescv.cv.loss_functions import Loss, get_loss
from bayescv.intervals import check_level

__all__ = ["TIMING_VARIABLES", "load_study", "run_study"]

#: Variables that hold wall-clock times (they differ between otherwise identical runs).
TIMING_VARIABLES = (
    "runtime",
    "time_sample",
    "time_cv",
    "time_truth",
    "time_methods",
    "time_total",
)
_TIMES = ("time_sample", "time_cv", "time_truth", "time_methods", "time_total")


def _to_dataset(
    results: Sequence[dict[str, Any]], spec: _Spec, targets: Sequence[str]
) -> xr.Dataset:
    results = sorted(results, key=lambda r: r["replicate"])
    rm, rt, rb = ("replicate", "method_name"), ("replicate", "target"), ("replicate", "block")
    stack = lambda key: np.stack([r[key] for r in results])  # noqa: E731
    n_blocks = {len(r["block_n"]) for r in results}
    _check_blocks(n_blocks)
    data = {name: (rm, stack(name)) for name in _PER_METHOD}
    data["flag"] = (
        rm,
        np.array([r["flag"] for r in results], dtype=str).reshape(len(results), -1),
    )
    data["truth"] = (rt, stack("truth").reshape(len(results), len(spec.truths)))
    for name in ("mu_hat", "seed", "warnings", *_TIMES):
        data[name] = (("replicate",), np.array([r[name] for r in results]))
    data["seed"] = (("replicate",), data["seed"][1].astype(np.int64))
    data["warnings"] = (("replicate",), data["warnings"][1].astype(str))
    for name in ("block_n", "block_S", "block_W"):
        data[name] = (rb, stack(name).astype(float))
    data["block_label"] = (rb, stack("block_label").astype(str))
    n = len(results)
    coords = {
        "replicate": np.array([r["replicate"] for r in results], dtype=np.int64),
        "method_name": np.array(spec.outputs, dtype=str),
        "target": np.array(spec.truths, dtype=str),
        "method_target": ("method_name", np.array(targets, dtype=str)),
        "method_cost": (
            "method_name",
            np.array([_cost(spec, o) for o in spec.outputs], dtype=str),
        ),
        "block": np.arange(n_blocks.pop(), dtype=np.int64),
        "design": ("replicate", np.full(n, spec.scenario.design, dtype=object).astype(str)),
        "scheme": ("replicate", np.full(n, spec.scenario.scheme, dtype=object).astype(str)),
    }
    return normalize(xr.Dataset(data, coords=coords))


def _check_blocks(n_blocks: set[int]) -> None:
    """Refuse replicates whose CV runs have different numbers of blocks (folds or sources)."""
    if len(n_blocks) != 1:
        raise ValueError(
            f"replicates differ in their number of CV blocks: {sorted(n_blocks)}; a study "
            "needs the same number in every replicate (draw the same number of sources)"
        )


def _cost(spec: _Spec, output: str) -> str:
    return next(m.cost for m in spec.methods if output in m.output_names)


def _concat(pieces: Sequence[xr.Dataset]) -> xr.Dataset:
    """Concatenate pieces along ``replicate`` (numpy, fast), keeping each replicate once."""
    seen: set[int] = set()
    keep = []
    for ds in pieces:
        index = ds["replicate"].values
        mask = np.array([int(i) not in seen for i in index], dtype=bool)
        seen.update(int(i) for i in index)
        if mask.any():
            keep.append(ds.isel(replicate=np.flatnonzero(mask)) if not mask.all() else ds)
    _check_blocks({ds.sizes["block"] for ds in keep})  # pieces written at different times
    if len(keep) == 1:
        out = keep[0]
    else:
        first = keep[0]
        data = {}
        for name, var in first.variables.items():
            if "replicate" in var.dims:
                axis = var.dims.index("replicate")
                values = np.concatenate([ds.variables[name].values for ds in keep], axis=axis)
                data[name] = (var.dims, values)
        coords = {k: v for k, v in data.items() if k in first.coords}
        variables = {k: v for k, v in data.items() if k not in first.coords}
        static = {
            k: first.coords[k] for k in first.coords if "replicate" not in first.coords[k].dims
        }
        out = xr.Dataset(variables, coords={**static, **coords})
    order = np.argsort(out["replicate"].values, kind="stable")
    return normalize(out.isel(replicate=order))


def run_study(
    scenario: Scenario,
    learner: Any = None,
    methods: str | Sequence[str] | None = "all",
    n_replicates: int = 100,
    *,
    level: float = 0.95,
    loss: str | Loss | Any = None,
    truths: Sequence[str] | None = None,
    method_options: Mapping[str, Mapping[str, Any]] | None = None,
    random_state: int | np.random.Generator | None = None,
    n_jobs: int | None = None,
    backend: str = "joblib",
    store: str | Any = None,
    progress: bool = False,
    error_score: str | float = "raise",
    chunk_size: int | None = None,
    flush_interval: float = 2.0,
    inner_threads: int | None = 1,
    batched: bool | None = None,
) -> xr.Dataset:
    """Run a coverage study: replicates of a scenario, every method, the truths.

    Parameters
    ----------
    scenario : Scenario or str
        Where the data come from (:mod:`bayescv.compare.scenarios`), or a name of
        :data:`bayescv.compare.SCENARIOS` (:func:`bayescv.compare.make_scenario`).
    learner : estimator or str, optional
        Default: the scenario's (unregularised logistic regression, OLS, ridge...); a name
        from :data:`bayescv.cv.LEARNERS` is built for the scenario's task. Unset
        ``random_state`` parameters are seeded per replicate.
    methods : "all", "closed_form", str or sequence of str, default "all"
        Registry names (:func:`bayescv.compare.available_methods`).
    n_replicates : int, default 100
        Replicates; with a store, more than stored extends the study.
    level : float, default 0.95
        Nominal coverage; a study reproducing Bates et al. (2024) passes their
        ``level=0.90``.
    loss : str, Loss or callable, optional
        Default: the scenario's (zero-one or squared).
    truths : sequence of str, optional
        Per-replicate truths to compute; default all the scenario can
        (:meth:`Scenario.truth_names`); ``[]`` skips them (no full-data fit).
    method_options : mapping, optional
        Options per method name, e.g. ``{"nested_cv": {"n_repeats": 20}}``, and for the
        closed-form batch under ``"closed_form"`` (``{"kind": "t"}``).
    random_state : None, int or numpy.random.Generator
        The study's seed; replicate i uses child seed i, whatever the order it runs in.
    n_jobs : int, optional
        Parallel workers of the joblib backend (replicates run in parallel, each on one
        thread); ignored by Dask, which uses the cluster's workers.
    backend : {"joblib", "dask"}, default "joblib"
        ``"dask"`` submits to the current :class:`distributed.Client`.
    store : str or path-like, optional
        ``study.nc`` or ``study.zarr`` (other names are refused): write replicates as they
        finish and resume from what is there (see :mod:`bayescv.compare._store`). Resuming
        needs the same settings; with ``random_state=None`` the stored seed is reused. One
        process at a time: the store is locked while the study runs.
    progress : bool, default False
        Show a progress bar over replicates.
    error_score : "raise" or numpy.nan, default "raise"
        As in scikit-learn's ``cross_validate``: a method that raises stops the study, or,
        with ``numpy.nan``, its interval is recorded as NaN with the message in ``flag``.
    chunk_size : int, optional
        Replicates per task; default 1 for one worker or when a method refits, else up to 8.
    flush_interval : float, default 2.0
        Least seconds between writes to the store; writes are also spaced at least 19 times
        their own duration apart (at most about 5% of the run). 0: after every task.
    inner_threads : int or None, default 1
        BLAS/OpenMP threads inside a replicate (None: leave as is).
    batched : bool or None, default None
        Fit the folds of a replicate's CV, of its bootstrap-replicated CV and of nested CV
        together (:func:`bayescv.cv.losses_on_folds`): None for plain least squares and
        ridge, True also for binary L2 logistic regression (``C=inf`` included; the exact
        optimum), False never. A ``batched`` option of ``nested_cv`` overrides it. Folds
        whose models a truth needs (``kfold_test_error``, ``ose_cv``) are fitted one by one.

    Returns
    -------
    xarray.Dataset
        The study (see the module docs).

    Raises
    ------
    ValueError
        For a bad argument (a store name not ending in ``.nc`` or ``.zarr`` included, a
        scenario whose ``design`` or ``scheme`` is unknown),
        options a selected method does not take (or for a method not selected), a store
        holding a study with other settings, or an unreadable store file (the message names
        the file to delete).
    TypeError
        For a scenario that is not a :class:`Scenario`, or whose ``params()`` is not a
        JSON-serialisable dict.
    bayescv.compare._store.StoreInUseError
        A :class:`RuntimeError`: another process is writing the store (the message gives
        its process id and host).

    Examples
    --------
    >>> from bayescv.compare import BatesLogistic
    >>> study = run_study(BatesLogistic(n=40, p=3, n_splits=4), methods=["naive_points"],
    ...                   n_replicates=3, random_state=0)
    >>> study.sizes["replicate"], study["truth"].sizes["target"]
    (3, 2)
    """
    started = time.perf_counter()
    check_level(level)
    if (
        isinstance(n_replicates, bool)
        or not isinstance(n_replicates, int | np.integer)
        or n_replicates < 1
    ):
        raise ValueError(f"n_replicates must be a positive integer, got {n_replicates!r}")
    if backend not in ("joblib", "dask"):
        raise ValueError(f"backend must be 'joblib' or 'dask', got {backend!r}")
    if not (
        error_score == "raise"
        or (isinstance(error_score, float | np.floating) and np.isnan(error_score))
    ):
        raise ValueError(f"error_score must be 'raise' or numpy.nan, got {error_score!r}")
    if chunk_size is not None and (
        isinstance(chunk_size, bool)
        or not isinstance(chunk_size, int | np.integer)
        or chunk_size < 1
    ):
        raise ValueError(f"chunk_size must be a positive integer, got {chunk_size!r}")
    check_workers(n_jobs, flush_interval, inner_threads)
    if store is not None:
        check_store_name(store)  # x.csv was written as NetCDF under that name
    if isinstance(scenario, str):  # a name from the catalogue, as the CLI takes it
        from bayescv.compare.catalog import make_scenario

        scenario = make_scenario(scenario)
    if not isinstance(scenario, Scenario):
        raise TypeError(
            f"scenario must be a Scenario or a name of bayescv.compare.SCENARIOS, got "
            f"{type(scenario).__name__}"
        )
    check_scenario(scenario)  # a user's scenario: before any replicate runs
    if isinstance(learner, str):  # a name from the learner catalogue
        from bayescv.cv.learners import make_learner

        learner = make_learner(learner, task=scenario.task)
    learner = scenario.default_learner() if learner is None else learner
    loss_fn = get_loss(scenario.default_loss() if loss is None else loss, learner)
    resolved = resolve_methods(methods)
    allowed = scenario.truth_names()
    truth_names = allowed if truths is None else tuple(as_names(truths, "truths"))
    bad = [t for t in truth_names if t not in allowed]
    if bad:
        raise ValueError(
            f"{type(scenario).__name__} ({scenario.design}) cannot compute {bad}; it offers {list(allowed)}"
        )
    outputs = tuple(o for m in resolved for o in m.output_names)
    targets = [m.targets(scenario.scheme)[o] for m in resolved for o in m.output_names]
    options = check_method_options(resolved, method_options)
    spec = _Spec(
        scenario, learner, loss_fn, tuple(resolved), options, float(level), truth_names,
        outputs, error_score == "raise", inner_threads, batched,
    )  # fmt: skip

    target_store = None if store is None else StudyStore(store)
    with contextlib.ExitStack() as stack:
        if target_store is not None:
            stack.enter_context(target_store.locked())  # one writer at a time
        stored = None if target_store is None else target_store.stored_settings()
        if random_state is None and stored is not None:
            seed = int(stored["seed"])
        else:
            seed = resolve_seed(random_state)
        settings = study_settings(spec, seed, [m.name for m in resolved])
        check_resume(stored, settings, store)
        sid = settings_id(settings)

        # check_resume took the stored settings as this call's (a method fingerprinted on
        # one side only included): its replicates take this id (older parts have none)
        loaded_chunks = [] if target_store is None else target_store.load()
        chunks_done = [with_settings_id(ds, sid) for ds in loaded_chunks]
        done = set()
        for ds in chunks_done:
            done.update(int(i) for i in ds["replicate"].values)
        loaded = len(done & set(range(n_replicates)))
        seeds = child_seeds(seed, n_replicates)
        pending = [(i, seeds[i]) for i in range(n_replicates) if i not in done]

        client = dask_client() if backend == "dask" and pending else None
        if client is not None:
            workers = max(1, sum(client.nthreads().values()))
        else:
            workers = joblib.effective_n_jobs(n_jobs)
        if chunk_size is None and any(m.cost != "losses" for m in resolved):
            chunk_size = 1  # replicates that refit are slow: one per task, stored as they finish
        parts = chunks(pending, workers, chunk_size)
        if client is not None:
            stream = run_dask(client, _run_chunk, spec, parts)
        else:
            stream = run_joblib(_run_chunk, spec, parts, n_jobs)

        new_chunks: list[xr.Dataset] = []
        if pending and target_store is not None:
            target_store.start(settings)
        buffer: list[dict[str, Any]] = []
        last, write_cost = time.perf_counter(), 0.0
        # nothing pending (every replicate already stored): no empty "0rep" bar
        show = progress and bool(pending)
        with progress_bar(total=len(pending), desc="study", unit="rep", disable=not show) as bar:
            try:
                for results in stream if pending else ():
                    buffer.extend(results)
                    bar.update(len(results))
                    # writes are spaced so that they take at most about 5% of the run
                    wait = max(flush_interval, 19 * write_cost) if flush_interval > 0 else 0.0
                    if time.perf_counter() - last >= wait:
                        start = time.perf_counter()
                        new_chunks.append(_flush(buffer, spec, targets, target_store, sid))
                        buffer, last = [], time.perf_counter()
                        write_cost = last - start
            except BaseException:  # an error or Ctrl-C: keep what is finished, then re-raise
                if buffer and target_store is not None:
                    _flush(buffer, spec, targets, target_store, sid)
                raise
            if buffer:
                new_chunks.append(_flush(buffer, spec, targets, target_store, sid))

        full = _concat([*chunks_done, *new_chunks])
        study = full.isel(replicate=np.flatnonzero(full["replicate"].values < n_replicates))
        if not np.array_equal(study["replicate"].values, np.arange(n_replicates)):
            raise RuntimeError(
                "the study does not hold every replicate exactly once"
            )  # pragma: no cover
        study.attrs = _attrs(settings, spec, n_replicates, backend, n_jobs, loaded, started)
        if target_store is not None and (new_chunks or target_store.has_parts()):
            stored_n = full.sizes["replicate"]
            if stored_n == n_replicates:
                target_store.finish(study)
            else:
                attrs = _attrs(settings, spec, stored_n, backend, n_jobs, loaded, started)
                target_store.finish(full.assign_attrs(attrs))
        return study


def load_study(path: str | Any) -> xr.Dataset:
    """Read a finished study written by :func:`run_study` (``.nc`` or ``.zarr``).

    Parameters
    ----------
    path : str or path-like
        The store.

    Returns
    -------
    xarray.Dataset
        The study, in memory, strings as numpy ``str``.

    Raises
    ------
    ValueError
        For a missing or unreadable file, or a study written before store format 1 (or with
        another store format): the message says so; run such a study again.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from bayescv.compare import BatesLogistic
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "study.nc"
    >>> study = run_study(BatesLogistic(n=40, p=3, n_splits=4), methods=["naive_points"],
    ...                   n_replicates=3, random_state=0, store=path)
    >>> load_study(path).identical(study)
    True
    """
    store = StudyStore(path)
    if not store.path.exists():
        if store.manifest.exists():
            done = len(list(store.parts.glob("part-*.nc")))
            raise ValueError(
                f"{path}: the study is not finished ({done} part file(s) in {store.parts}); "
                "run the same run_study call (or bayescv study command) again to finish it"
            )
        raise ValueError(f"{path}: no such study")
    return fill_settings_id(store.load_final())  # stores written before the id: from attrs


def _flush(buffer, spec, targets, target_store, sid) -> xr.Dataset:
    ds = with_settings_id(_to_dataset(buffer, spec, targets), sid)
    if target_store is not None:
        target_store.write_part(ds)
    return ds


def _attrs(settings, spec, n_replicates, backend, n_jobs, loaded, started) -> dict[str, Any]:
    versions = {
        "bayescv": package_version(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scikit-learn": sklearn.__version__,
        "xarray": xr.__version__,
        "joblib": joblib.__version__,
    }
    return {
        "title": "bayescv coverage study",
        # the catalogue name the user chose (multi-source-student-t), else the class's
        "scenario": spec.scenario.catalogue_name or spec.scenario.name,
        "scenario_params": json.dumps(spec.scenario.params()),
        "design": spec.scenario.design,
        "scheme": spec.scenario.scheme,
        "learner": repr(spec.learner),
        "loss_name": spec.loss.name,
        "level": spec.level,
        "n_replicates": int(n_replicates),
        "methods": ", ".join(settings["methods"]),
        "seed": int(settings["seed"]),
        "settings": json.dumps(settings, sort_keys=True),
        "versions": json.dumps(versions),
        "bayescv_version": versions["bayescv"],
        "created": created_now(),
        "backend": backend,
        "n_jobs": "none" if n_jobs is None else int(n_jobs),
        "replicates_loaded": int(loaded),
        "wall_time_s": time.perf_counter() - started,
    }
