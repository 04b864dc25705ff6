"""Compiling a hand-written density's C callbacks for nutpie, once per process."""

from __future__ import annotations

import threading
import time

import numba

from bayescv.bayes import _density
from bayescv.bayes._cache import use_disk_cache

__all__ = ["logp_callbacks"]


def logp_callbacks(store: dict, lock: threading.Lock, logp_callback) -> dict:
    """Compile (or load from the disk cache) another density's logp callback, once per process.

    The densities of :mod:`bayescv.bayes._binomial_density` and
    :mod:`bayescv.bayes._datasets_density` share the Gaussian density's callback signature and
    its identity ``expand`` callback (:mod:`bayescv.bayes._density`); each keeps its own
    `store` and `lock`.

    Parameters
    ----------
    store : dict
        The module's cache of callbacks (filled on first use).
    lock : threading.Lock
        Serialises the first compilation between threads.
    logp_callback : function
        The module's ``_logp_callback``.

    Returns
    -------
    dict
        ``logp``, ``expand`` and ``seconds`` (time spent compiling or loading).
    """
    with lock:
        if not store:
            start = time.perf_counter()
            options = {"cache": use_disk_cache(), "error_model": "numpy"}
            store["logp"] = numba.cfunc(_density._LOGP_SIG, **options)(logp_callback)
            # The identity map of the sampled coordinates: the Gaussian density's callback.
            store["expand"] = _density.callbacks()["expand"]
            store["seconds"] = time.perf_counter() - start
    return store
