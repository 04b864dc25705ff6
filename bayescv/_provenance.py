"""Provenance and seeding shared by every result the package writes.

Every result carries the package version, its creation time and the integer seed that
reproduces it, so a saved table or study can be traced and re-run.
"""

from __future__ import annotations

import copy
import datetime as _dt
import functools
import zlib
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import numpy as np

__all__ = [
    "child_seeds",
    "created_now",
    "named_seed",
    "package_version",
    "resolve_seed",
    "seed_unset",
    "seeded_splitter",
    "shuffles",
]

_SEED_BOUND = 2**63


@functools.cache
def package_version() -> str:
    """Return the installed version of bayescv, or ``"unknown"`` when it is not installed."""
    try:
        return version("bayescv")
    except PackageNotFoundError:  # pragma: no cover - only when run from a bare checkout
        return "unknown"


def created_now() -> str:
    """Return the current UTC time in ISO 8601 form, to the second."""
    return _dt.datetime.now(_dt.UTC).replace(microsecond=0).isoformat()


def resolve_seed(random_state: int | np.random.Generator | np.random.RandomState | None) -> int:
    """Turn a ``random_state`` argument into one non-negative integer seed.

    The integer is what a result records: passing it back as ``random_state`` reproduces
    the result exactly.

    Parameters
    ----------
    random_state : None, int, numpy.random.Generator or numpy.random.RandomState
        ``None`` draws fresh operating-system entropy; an int is used as it is; a generator
        is asked for one integer (advancing it).

    Returns
    -------
    int
        A seed in ``[0, 2**63)``.
    """
    if random_state is None:
        return int(np.random.SeedSequence().generate_state(1, np.uint64)[0] % _SEED_BOUND)
    if isinstance(random_state, bool):
        raise TypeError("random_state must be None, an int or a numpy Generator, not a bool")
    if isinstance(random_state, int | np.integer):
        if not 0 <= int(random_state) < _SEED_BOUND:
            raise ValueError(f"random_state must be in [0, 2**63), got {random_state}")
        return int(random_state)
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(_SEED_BOUND))
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(np.iinfo(np.int64).max, dtype=np.int64))
    raise TypeError(
        "random_state must be None, an int, a numpy Generator or RandomState, "
        f"not {type(random_state).__name__}"
    )


def child_seeds(seed: int, n: int) -> list[int]:
    """Return ``n`` independent integer seeds spawned from ``seed``.

    Uses :meth:`numpy.random.SeedSequence.spawn`, so child ``i`` depends only on ``seed``
    and ``i``: the same work gets the same seed whatever the order or the worker that runs it.

    Parameters
    ----------
    seed : int
        The parent seed.
    n : int
        How many children.

    Returns
    -------
    list of int
        ``n`` seeds in ``[0, 2**32)``, the range scikit-learn's ``random_state`` accepts.
    """
    children = np.random.SeedSequence(seed).spawn(n)
    return [int(c.generate_state(1, np.uint32)[0]) for c in children]


def named_seed(root: int, name: str) -> int:
    """Return the child seed of `root` named `name`.

    A :class:`numpy.random.SeedSequence` spawned under the CRC-32 of `name`: independent of
    :func:`child_seeds` of the same root and of other names, and the same on every machine.

    Parameters
    ----------
    root : int
        The parent seed.
    name : str
        What the seed is for.

    Returns
    -------
    int
        A seed in ``[0, 2**32)``.
    """
    sequence = np.random.SeedSequence(root, spawn_key=(zlib.crc32(name.encode()),))
    return int(sequence.generate_state(1, np.uint32)[0])


def seed_unset(estimator: Any, seed: int) -> tuple[Any, bool]:
    """Return the estimator with every ``random_state`` parameter left ``None`` set to `seed`.

    Its own and those of nested estimators (pipeline steps, ``estimator__random_state``):
    a randomised model left unseeded would otherwise draw from numpy's global state, and
    the one ``random_state`` of a CV run would not reproduce it. A parameter the user set
    is kept, as scikit-learn keeps it.

    Parameters
    ----------
    estimator : scikit-learn estimator
        The learner (not changed: a clone is returned when something is set).
    seed : int
        The seed, in ``[0, 2**32)`` as scikit-learn takes it.

    Returns
    -------
    estimator : scikit-learn estimator
        `estimator` itself when nothing was unset, else a clone with the seeds set.
    seeded : bool
        Whether any parameter was set.
    """
    get_params = getattr(estimator, "get_params", None)
    if get_params is None:  # not a scikit-learn estimator: nothing to seed
        return estimator, False
    unset = {
        k: seed
        for k, v in get_params(deep=True).items()
        if (k == "random_state" or k.endswith("__random_state")) and v is None
    }
    if not unset:
        return estimator, False
    from sklearn.base import clone  # here: the leaf helpers load no scikit-learn at import

    return clone(estimator).set_params(**unset), True


def shuffles(splitter: Any) -> bool:
    """Whether a scikit-learn splitter's folds depend on its ``random_state``.

    A splitter with a ``random_state`` and no ``shuffle`` attribute (``ShuffleSplit``,
    ``RepeatedKFold``) always does; ``KFold(shuffle=False)`` and ``GroupKFold`` do not.

    Parameters
    ----------
    splitter : object
        A splitter (anything with ``split``).

    Returns
    -------
    bool

    Examples
    --------
    >>> from sklearn.model_selection import KFold, ShuffleSplit
    >>> shuffles(KFold(3)), shuffles(KFold(3, shuffle=True)), shuffles(ShuffleSplit())
    (False, True, True)
    """
    return hasattr(splitter, "random_state") and bool(getattr(splitter, "shuffle", True))


def seeded_splitter(splitter: Any, seed: int, *, replace: bool = False) -> Any:
    """Return the splitter, or a copy seeded with `seed` if it shuffles without a seed.

    An unseeded shuffling splitter draws its folds from numpy's global state, which the one
    ``random_state`` of a run would not reproduce. The user's object is not changed.

    Parameters
    ----------
    splitter : object
        A splitter.
    seed : int
        The seed, in ``[0, 2**32)``.
    replace : bool, default False
        Also replace a seed the splitter has (for independent repetitions).

    Returns
    -------
    object
        `splitter` itself, or a seeded copy.

    Examples
    --------
    >>> from sklearn.model_selection import KFold
    >>> seeded_splitter(KFold(3, shuffle=True), 5).random_state
    5
    >>> seeded_splitter(KFold(3, shuffle=True, random_state=1), 5).random_state
    1
    """
    if not shuffles(splitter) or (splitter.random_state is not None and not replace):
        return splitter
    out = copy.deepcopy(splitter)
    out.random_state = seed
    return out
