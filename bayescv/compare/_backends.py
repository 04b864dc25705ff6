"""Where replicates run: joblib workers on this machine, or a Dask cluster.

Each task runs a chunk of replicates and returns their results; the caller stores them as
they arrive (in any order: every replicate carries its own index and seed).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from joblib import Parallel, delayed

__all__ = ["chunks", "dask_client", "run_dask", "run_joblib"]

Task = Callable[[Any, Sequence[tuple[int, int]]], list[dict[str, Any]]]


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
