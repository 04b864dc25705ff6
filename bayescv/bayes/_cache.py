"""Where the compiled model lives between processes: numba's on-disk cache, in the user's cache.

The model's log-density (:mod:`bayescv.bayes._density`) is compiled by numba with
``cache=True``; numba stores the machine code and loads it in a later process instead of
compiling again. This module points numba's cache for bayescv's own source files at
``<cache dir>/numba-<numba version>-bayescv-<version>``, where ``<cache dir>`` is
``$BAYESCV_CACHE_DIR`` or the user cache directory that :mod:`platformdirs` gives
(``~/.cache/bayescv`` on Linux). Numba keys each entry by the function, its argument types,
the source file's time stamp and size and the Python version, and writes each file under a
temporary name before renaming it, so processes that fill the cache at once (a study's
workers) never read a half-written entry.

Set ``BAYESCV_NO_CACHE=1`` before importing bayescv to compile in memory only (every process
then compiles for itself); :func:`clear_cache` empties the directory.
"""

from __future__ import annotations

import functools
import os
import shutil
import tempfile
import warnings
from pathlib import Path

from bayescv._extras import require_extra
from bayescv._provenance import package_version

__all__ = ["cache_dir", "cache_enabled", "clear_cache", "numba_jit", "use_disk_cache"]

_PACKAGE_DIR = Path(__file__).resolve().parents[1]


def cache_enabled() -> bool:
    """Whether compiled functions are cached on disk (``BAYESCV_NO_CACHE`` unset or ``0``).

    Returns
    -------
    bool
    """
    return os.environ.get("BAYESCV_NO_CACHE", "").strip() in ("", "0")


def cache_dir() -> Path:
    """Root of bayescv's on-disk cache: ``$BAYESCV_CACHE_DIR`` or the user cache directory.

    Returns
    -------
    pathlib.Path
        The directory (it may not exist yet).

    Examples
    --------
    >>> from pathlib import Path
    >>> from bayescv.bayes import cache_dir
    >>> isinstance(cache_dir(), Path)
    True
    """
    override = os.environ.get("BAYESCV_CACHE_DIR", "").strip()
    if override:
        return Path(override).expanduser()
    require_extra(["platformdirs"], "bayes", what="bayescv.bayes.cache_dir")
    import platformdirs

    return Path(platformdirs.user_cache_dir("bayescv", appauthor=False))


_DECISION: dict[str, bool] = {}


def use_disk_cache() -> bool:
    """Whether this process caches compiled code on disk: enabled and the directory writable.

    Decided once per process. An unwritable cache directory (a read-only home, a
    ``BAYESCV_CACHE_DIR`` that is a file) gives one :class:`RuntimeWarning` naming it, and the
    code is compiled in memory, every process anew, instead of failing.

    Returns
    -------
    bool
    """
    if "use" not in _DECISION:
        use = cache_enabled()
        if use:
            target = _numba_dir()
            try:
                target.mkdir(parents=True, exist_ok=True)
                tempfile.TemporaryFile(dir=target).close()
            except OSError as err:
                warnings.warn(
                    f"bayescv cannot write its cache directory {target} ({err.strerror or err}); "
                    "the model is compiled in memory in every process. Set BAYESCV_CACHE_DIR "
                    "to a writable directory, or BAYESCV_NO_CACHE=1 to silence this.",
                    RuntimeWarning,
                    stacklevel=3,
                )
                use = False
        _DECISION["use"] = use
    return _DECISION["use"]


def _numba_dir() -> Path:
    import numba

    return cache_dir() / f"numba-{numba.__version__}-bayescv-{package_version()}"


def clear_cache() -> int:
    """Delete everything in bayescv's on-disk cache (all versions).

    A process that already loaded a compiled function keeps it; the next process compiles
    again (about 10 s) and fills the cache anew.

    Returns
    -------
    int
        Number of files deleted.

    Examples
    --------
    On a cache moved to a temporary directory by ``BAYESCV_CACHE_DIR`` (the user's cache is
    left alone):

    >>> import os, tempfile
    >>> from unittest import mock
    >>> with tempfile.TemporaryDirectory() as root:
    ...     with mock.patch.dict(os.environ, {"BAYESCV_CACHE_DIR": root}):
    ...         entry = Path(root, "numba-0.60.0-bayescv-0.1.0")
    ...         entry.mkdir()
    ...         _ = (entry / "density.nbi").write_bytes(b"")
    ...         print(clear_cache(), os.listdir(root))
    1 []
    """
    if not os.environ.get("BAYESCV_CACHE_DIR", "").strip():
        require_extra(["platformdirs"], "bayes", what="bayescv.bayes.clear_cache")
    root = cache_dir()
    if not root.is_dir():
        return 0
    count = sum(1 for p in root.rglob("*") if p.is_file())
    for entry in root.iterdir():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)
    return count


def numba_jit():
    """Return ``numba.njit`` set to cache in bayescv's directory (or not, if disabled).

    Registers, once, a numba cache locator for bayescv's own source files, first in numba's
    list, so that only bayescv's functions are redirected (PyTensor registers its locator for
    the code it generates the same way). Called when the numba code is first imported, so that
    importing :mod:`bayescv.bayes` does not import numba.

    Returns
    -------
    callable
        ``numba.njit`` with ``cache``, ``nogil`` and ``error_model="numpy"`` set.
    """
    import numba
    from numba.core.caching import CacheImpl, _CacheLocator, _SourceFileBackedLocatorMixin

    class BayescvLocator(_SourceFileBackedLocatorMixin, _CacheLocator):
        """Numba cache locator for functions defined in bayescv's own source files."""

        def __init__(self, py_func, py_file):
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno
            self._cache_path = str(_numba_dir() / self.get_suitable_cache_subpath(py_file))

        def get_cache_path(self) -> str:
            return self._cache_path

        @classmethod
        def from_function(cls, py_func, py_file):
            try:
                inside = Path(py_file).resolve().is_relative_to(_PACKAGE_DIR)
            except (OSError, ValueError):
                return None
            if not inside:
                return None
            # An unwritable cache directory falls through to numba's own locators (its
            # __pycache__ beside the source, or its user-wide cache), as numba does.
            return super().from_function(py_func, py_file)

    if not any(getattr(c, "_bayescv", False) for c in CacheImpl._locator_classes):
        BayescvLocator._bayescv = True
        CacheImpl._locator_classes.insert(0, BayescvLocator)
    # error_model="numpy": a division by zero gives inf/nan, which the callers check, where
    # numba's default raises, and an exception cannot cross nutpie's C callback (numba would
    # print it and report success without writing the outputs).
    cache = use_disk_cache()
    return functools.partial(numba.njit, cache=cache, nogil=True, error_model="numpy")
