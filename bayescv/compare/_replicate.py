"""One replicate of a coverage study, as a worker runs it (see :func:`bayescv.compare.run_study`).

:class:`_Spec` holds everything a replicate needs and is pickled once per task;
:func:`run_replicate` draws the data, runs the CV, computes the truths and runs every method,
and returns plain arrays that :mod:`bayescv.compare.study` assembles into the study Dataset.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import sys
import threading
import time
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.base import clone

from bayescv._extras import import_quietly
from bayescv._provenance import child_seeds, named_seed, seed_unset
from bayescv.compare._context import Context
from bayescv.compare.registry import Method
from bayescv.compare.scenarios import Scenario
from bayescv.cv import Loss, _fold_losses
from bayescv.cv.loss_functions import loss_range_for
from bayescv.losses import from_arrays
from bayescv.moments import block_moments

__all__ = ["run_replicate"]

#: Per-method variables of a study, dims (replicate, method).
_PER_METHOD = ("estimate", "lower", "upper", "se", "theta_hat", "runtime")


@dataclass(frozen=True)
class _Spec:
    """Everything a worker needs to run a replicate (pickled once per task)."""

    scenario: Scenario
    learner: Any
    loss: Loss
    methods: tuple[Method, ...]
    options: Mapping[str, Mapping[str, Any]]
    level: float
    truths: tuple[str, ...]
    outputs: tuple[str, ...]
    raise_errors: bool
    inner_threads: int | None
    batched: bool | None = None


@functools.cache
def _controller() -> Any:
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def _cross_validate(spec: _Spec, learner: Any, draw: Any, folds: list, keep: bool):
    """Return the replicate's loss table, block moments and (if `keep`) fold models.

    The fits run through the CV runner's core (:func:`bayescv.cv._fold_losses`, as in
    :func:`bayescv.cv.cross_val_losses`) and the moments come from
    :func:`bayescv.moments.block_moments`, so a replicate's closed-form intervals equal
    ``cv_intervals(cross_val_losses(...))`` on the same data and folds.
    """
    values, models, _ = _fold_losses(
        learner, draw.X, draw.y, folds, spec.loss, return_estimator=keep, batched=spec.batched
    )
    tests = [test for _, test in folds]
    if spec.scenario.scheme == "source":
        labels = np.array([draw.groups[test[0]] for test in tests])
    else:
        labels = np.arange(len(folds))
    rows = np.concatenate(tests)
    table = from_arrays(
        np.concatenate(values),
        np.repeat(labels, [test.size for test in tests]),
        source=None if draw.groups is None else np.asarray(draw.groups)[rows],
        index=rows,
        scheme=spec.scenario.scheme,
        loss_name=spec.loss.name,
        attrs={"loss_range": list(loss_range_for(spec.loss, draw.y))},
    )
    return table, block_moments(table), models or []


def _truths(spec: _Spec, learner, draw, folds, models, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    pop, out = draw.population, {}
    if "err_xy" in spec.truths or "ose_xy" in spec.truths:
        full = clone(learner).fit(draw.X, draw.y)
        if "err_xy" in spec.truths:
            out["err_xy"] = float(pop.weights @ pop.source_errors(full, spec.loss, rng))
        if "ose_xy" in spec.truths:
            out["ose_xy"] = pop.new_source_error(full, spec.loss, rng)
    if "ose_cv" in spec.truths:
        # The out-of-source error of the models CV trains (each on the other blocks), the
        # definition of `ose` that the Bayesian model and docs/bayes.md use.
        errors = [pop.new_source_error(model, spec.loss, rng) for model in models]
        out["ose_cv"] = float(np.mean(errors))
    if "kfold_test_error" in spec.truths:
        total = 0.0
        for model, (_, test) in zip(models, folds, strict=True):
            errors = pop.source_errors(model, spec.loss, rng)
            total += errors[pop.source_index[test]].sum()
        out["kfold_test_error"] = total / len(draw.y)
    return np.array([out[name] for name in spec.truths], dtype=float)


def _plan(methods: Sequence[Method]) -> list[tuple[list[Method], str | None]]:
    """Group batched methods (same func and batch) into one call each, keeping order."""
    groups: list[tuple[list[Method], str | None]] = []
    index: dict[tuple[Any, str], int] = {}
    for m in methods:
        if m.batch is None:
            groups.append(([m], None))
            continue
        key = (m.func, m.batch)
        if key not in index:
            index[key] = len(groups)
            groups.append(([], m.batch))
        groups[index[key]][0].append(m)
    return groups


class _WarningRecorder:
    """Record the warnings each replicate raises, also when replicates run on many threads.

    :class:`warnings.catch_warnings` saves and restores process-wide state (the filters and
    :func:`warnings.showwarning`), so one block per replicate is not thread-safe: replicates
    overlapping on the threads of a Dask worker enter and leave in any order, and the last to
    leave can restore the state another saved, leaving its recorder and an "always" filter
    installed for good. Here, while any replicate of this process runs, one shared block is
    open (counted under a lock): every warning is shown ("always", so that a warning raised
    twice is recorded twice) and goes to the list of the thread that raised it; a warning of
    another thread goes on to the showwarning in place before (shown, whatever the filters
    said: the filters are process-wide, and the study needs "always" while it runs). The last
    replicate to finish closes the block, which restores the filters and showwarning exactly.

    With context-aware warnings (Python 3.14, ``sys.flags.context_aware_warnings``),
    ``catch_warnings`` is local to the thread's context and a block per replicate is safe.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._depth = 0
        self._block: Any = None
        self._previous: Any = warnings.showwarning
        self._local = threading.local()

    @contextlib.contextmanager
    def record(self) -> Iterator[list[str]]:
        """Collect ``"Category: message"`` of every warning this thread raises inside."""
        caught: list[str] = []
        if getattr(sys.flags, "context_aware_warnings", False):  # pragma: no cover - 3.14
            with warnings.catch_warnings(record=True) as log:
                warnings.simplefilter("always")
                yield caught
            caught.extend(f"{w.category.__name__}: {w.message}" for w in log)
            return
        with self._lock:
            if self._depth == 0:
                block = warnings.catch_warnings()
                block.__enter__()
                warnings.simplefilter("always")
                self._previous, warnings.showwarning = warnings.showwarning, self._show
                self._block = block
            self._depth += 1
        outer = getattr(self._local, "caught", None)
        self._local.caught = caught
        try:
            yield caught
        finally:
            self._local.caught = outer
            with self._lock:
                self._depth -= 1
                if self._depth == 0:
                    self._block.__exit__(None, None, None)
                    self._block = None

    def _show(self, message, category, filename, lineno, file=None, line=None) -> None:
        caught = getattr(self._local, "caught", None)
        if caught is None:
            self._previous(message, category, filename, lineno, file, line)
        else:
            caught.append(f"{category.__name__}: {message}")


_RECORDER = _WarningRecorder()


def _message(error: BaseException) -> str:
    text = str(error).splitlines()[0] if str(error) else ""
    return f"error: {type(error).__name__}: {text}"[:300]


def run_replicate(spec: _Spec, replicate: int, seed: int) -> dict[str, Any]:
    """Run one replicate: data, CV, truths, every method. Returns plain arrays."""
    started = time.perf_counter()
    with _RECORDER.record() as caught:
        data_seed, cv_seed, truth_seed, method_seed, learner_seed = child_seeds(seed, 5)
        scenario = spec.scenario
        draw = scenario.draw(np.random.default_rng(data_seed))
        t_sample = time.perf_counter()
        learner, _ = seed_unset(spec.learner, learner_seed)
        folds = scenario.folds(draw, cv_seed)
        keep = "kfold_test_error" in spec.truths or "ose_cv" in spec.truths
        table, moments, models = _cross_validate(spec, learner, draw, folds, keep)
        t_cv = time.perf_counter()
        truth = (
            _truths(spec, learner, draw, folds, models, truth_seed) if spec.truths else np.empty(0)
        )
        t_truth = time.perf_counter()

        context = Context(
            X=draw.X, y=draw.y, groups=draw.groups, learner=learner, loss=spec.loss,
            scheme=scenario.scheme, n_splits=len(folds), level=spec.level, seed=method_seed,
            moments=moments, table=lambda: table, batched=spec.batched,
        )  # fmt: skip
        n_out = len(spec.outputs)
        result = {name: np.full(n_out, np.nan) for name in _PER_METHOD}
        flags = [""] * n_out
        position = {name: j for j, name in enumerate(spec.outputs)}
        for group, batch in _plan(spec.methods):
            names = [o for m in group for o in m.output_names]
            options = dict(spec.options.get(batch or group[0].name, {}))
            start = time.perf_counter()
            try:
                ds = group[0].func(
                    context.with_seed(named_seed(method_seed, batch or group[0].name)),
                    names,
                    **options,
                )
            except Exception as error:
                if spec.raise_errors:  # say which method and which replicate failed
                    error.add_note(
                        f"raised by method {group[0].name!r} on replicate {replicate} (seed "
                        f"{seed}) of the study; error_score=numpy.nan records it and goes on"
                    )
                    raise
                for name in names:
                    flags[position[name]] = _message(error)
                ds = None
            elapsed = (time.perf_counter() - start) / len(names)
            level = None if ds is None else ds.attrs.get("level")
            if level is not None and not np.isclose(float(level), spec.level):
                raise ValueError(  # coverage would be counted against the wrong level
                    f"method {group[0].name!r} returned intervals at level {float(level):g}; "
                    f"the study's is {spec.level:g}: build them at context.level"
                )
            rows = (
                {}
                if ds is None
                else {m: i for i, m in enumerate(ds["method_name"].values.tolist())}
            )
            for name in names:
                j = position[name]
                result["runtime"][j] = elapsed
                if ds is None:
                    continue
                if name not in rows:
                    raise ValueError(f"method {group[0].name!r} returned no row {name!r}")
                i = rows[name]
                for var in ("estimate", "lower", "upper", "se"):
                    result[var][j] = ds[var].values[..., i]
                theta = ds["theta"].values[..., i] if "theta" in ds else result["se"][j] ** 2
                result["theta_hat"][j] = theta
                flags[j] = str(ds["flag"].values[..., i]) if "flag" in ds else ""
    done = time.perf_counter()
    messages = dict.fromkeys(caught)
    result.update(
        replicate=replicate, seed=seed, flag=flags, truth=truth,
        mu_hat=float(moments["S"].values.sum() / moments["n"].values.sum()),
        block_n=moments["n"].values, block_S=moments["S"].values, block_W=moments["W"].values,
        block_label=moments["block"].values.astype(str), warnings=" | ".join(messages)[:1000],
        time_sample=t_sample - started, time_cv=t_cv - t_sample, time_truth=t_truth - t_cv,
        time_methods=done - t_truth, time_total=done - started,
    )  # fmt: skip
    return result


@functools.cache
def _import_arviz() -> None:
    """Import ArviZ, if installed, once per process (seconds: numba compiles its functions)."""
    if importlib.util.find_spec("arviz") is not None:
        import_quietly("arviz")


def _warm_up(spec: _Spec) -> None:
    """Import what the tail flags need before any method is timed.

    The closed-form batch and ``bootstrap`` flag heavy tails with ArviZ's k̂ when the loss
    is unbounded (:func:`bayescv.tails.pooled_tail_shape`); imported on their first call, it
    added seconds to the ``runtime`` of the first replicate of every worker.
    """
    low, high = spec.loss.range
    tails = any(m.batch == "closed_form" or m.name == "bootstrap" for m in spec.methods)
    if tails and not (np.isfinite(low) and np.isfinite(high)):
        _import_arviz()


def _run_chunk(spec: _Spec, items: Sequence[tuple[int, int]]) -> list[dict[str, Any]]:
    _warm_up(spec)
    if spec.inner_threads is None:
        return [run_replicate(spec, i, s) for i, s in items]
    with _controller().limit(limits=spec.inner_threads):
        return [run_replicate(spec, i, s) for i, s in items]
