"""Provenance shared by the benchmark scripts: git commit, machine, package versions, load.

The scripts run as ``python benchmarks/X.py`` from the repository root, so this directory is
on ``sys.path`` and they import it as ``from _report import ...``.
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import platform
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

#: Import names of packages whose distribution name differs.
_MODULES = {"scikit-learn": "sklearn"}


def git_commit() -> str:
    """Short hash of HEAD, marked " (uncommitted changes)" if tracked files differ from it.

    "unknown" when git or the repository is missing.
    """

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args],
            capture_output=True,
            text=True,
            check=True,
            cwd=Path(__file__).resolve().parent,
        ).stdout.strip()

    try:
        commit = git("rev-parse", "--short", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return commit + (" (uncommitted changes)" if dirty else "")


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo, else what :mod:`platform` knows."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(
                line.split(":", 1)[1].strip() for line in f if line.startswith("model name")
            )
    except (OSError, StopIteration):
        pass
    return cpu


def usable_cores() -> int | None:
    """Cores this process may run on (None where the platform cannot tell)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None


def load_average() -> float:
    """The one-minute load average."""
    return os.getloadavg()[0]


def versions(packages: Sequence[str]) -> dict[str, str]:
    """``__version__`` of each package, keyed by its name as given ("scikit-learn", ...)."""
    return {
        name: importlib.import_module(_MODULES.get(name, name)).__version__ for name in packages
    }


def blas() -> list[str]:
    """The BLAS/OpenMP libraries loaded, with their versions and thread counts."""
    from threadpoolctl import threadpool_info

    return [
        f"{p.get('internal_api')} {p.get('version')} ({p.get('num_threads')} threads)"
        for p in threadpool_info()
    ]


def machine_info(
    packages: Sequence[str],
    *,
    cpu: bool = False,
    cores: bool = True,
    with_blas: bool = False,
) -> dict[str, Any]:
    """The machine and software a benchmark ran on, in the order the result files use.

    Keys: ``cpu`` (if `cpu`), ``cores`` and ``usable_cores`` (if `cores`), ``platform``,
    ``python``, one per package of `packages`, ``git_commit``, ``blas`` (if `with_blas`).
    """
    out: dict[str, Any] = {"cpu": cpu_model()} if cpu else {}
    if cores:
        out.update(cores=os.cpu_count(), usable_cores=usable_cores())
    out.update(platform=platform.platform(), python=platform.python_version())
    out.update(versions(packages))
    out["git_commit"] = git_commit()
    if with_blas:
        out["blas"] = blas()
    return out


def timed(fn: Callable[[], Any]) -> float:
    """Wall time of one call of `fn`, after a garbage collection."""
    gc.collect()  # the same starting state for every run; the collector stays on while timed
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def interleaved(contenders: dict[str, Callable[[], Any]], repeats: int) -> dict[str, list[float]]:
    """Time each contender `repeats` times, interleaved, after one unrecorded warm-up each."""
    for fn in contenders.values():  # warm-up, not recorded
        fn()
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(repeats):
        for name, fn in contenders.items():
            times[name].append(timed(fn))
    return times


#: Where every benchmark writes its results.
RESULTS = Path(__file__).resolve().parent / "results"


def write_results(
    name: str, results: dict[str, Any], markdown: Callable[[dict[str, Any]], str], started: float
) -> None:
    """Record load and run time, then write ``results/{name}.json`` and ``.md`` and say so."""
    results["load_after"] = load_average()
    results["total_runtime_s"] = time.perf_counter() - started
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{name}.json").write_text(json.dumps(results, indent=2) + "\n")
    (RESULTS / f"{name}.md").write_text(markdown(results))
    print(
        f"wrote {RESULTS / (name + '.json')} and {name}.md in {results['total_runtime_s']:.0f} s"
    )
