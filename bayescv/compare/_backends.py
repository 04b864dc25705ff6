"""Where replicates run: joblib workers on this machine, or a Dask cluster.

Each task runs a chunk of replicates and returns their results; the caller stores them as
they arrive (in any order: every replicate carries its own index and seed).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from numbers import Integral, Real
from typing import Any

from joblib import Parallel, delayed

from bayescv._extras import check_n_jobs

__all__ = ["check_workers", "chunks", "dask_client", "run_dask", "run_joblib"]

Task = Callable[[Any, Sequence[tuple[int, int]]], list[dict[str, Any]]]


def check_workers(n_jobs: Any, flush_interval: Any, inner_threads: Any) -> None:
    """Refuse worker settings that joblib or the store writer would misread or fail on.

    Parameters
    ----------
    n_jobs : int or None
        Joblib workers: None or a non-zero integer (−1 for all cores).
    flush_interval : float
        Least seconds between store writes, ≥ 0.
    inner_threads : int or None
        Threads inside a replicate: None or an integer ≥ 1.

    Raises
    ------
    ValueError
        Naming the setting, what it must be, and what was given.
    """
    check_n_jobs(n_jobs)
    if (
        isinstance(flush_interval, bool)
        or not isinstance(flush_interval, Real)
        or not (flush_interval >= 0)
    ):
        raise ValueError(
            f"flush_interval must be a number of seconds >= 0 (0: write after every task), "
            f"got {flush_interval!r}"
        )
    if inner_threads is not None and (
        isinstance(inner_threads, bool)
        or not isinstance(inner_threads, Integral)
        or inner_threads < 1
    ):
        raise ValueError(
            "inner_threads must be None (leave the thread pools as they are) or an integer "
            f">= 1, got {inner_threads!r}"
        )


def chunks(pending: list[tuple[int, int]], workers: int, size: int | None) -> list[list]:
    """Split (index, seed) pairs into tasks: one replicate each for one worker, else up to 8."""
    if size is None:
        size = 1 if workers <= 1 else max(1, min(8, math.ceil(len(pending) / (4 * workers))))
    return [pending[i : i + size] for i in range(0, len(pending), size)]


def run_joblib(task: Task, spec: Any, parts: list[list], n_jobs: int | None) -> Iterator[list]:
    """Run the tasks with joblib, yielding results as they finish."""
    jobs = (delayed(task)(spec, part) for part in parts)
    yield from Parallel(n_jobs=n_jobs, return_as="generator_unordered")(jobs)


def dask_client() -> Any:
    """Return the current :class:`distributed.Client`, or explain how to start one."""
    try:
        from distributed import get_client
    except ImportError as error:  # pragma: no cover - dask is an optional extra
        raise ImportError(
            "backend='dask' needs dask.distributed: pip install 'bayescv[dask]'"
        ) from error
    try:
        return get_client()
    except ValueError as error:
        raise ValueError(
            "backend='dask' runs on the current distributed Client; create one first, "
            "e.g. `with Client(LocalCluster(dashboard_address=':0')):` (any free port) or "
            "`Client('scheduler-address:8786')`"
        ) from error


def run_dask(client: Any, task: Task, spec: Any, parts: list[list]) -> Iterator[list]:
    """Submit the tasks to a Dask cluster (the spec is scattered once), yield as they finish."""
    from distributed import as_completed

    spec_future = client.scatter(spec, broadcast=True, hash=False)
    futures = [client.submit(task, spec_future, part, pure=False) for part in parts]
    try:
        for future in as_completed(futures):
            yield future.result()
            future.release()
    finally:
        client.cancel(futures)
