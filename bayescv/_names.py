"""Near misses in names a user types (a leaf: imports nothing of the package)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any

__all__ = ["did_you_mean"]


def _key(name: str) -> str:
    # Case, spaces and "-" for "_" are the slips seen most; difflib's ratio takes the rest.
    return name.strip().lower().replace("-", "_").replace(" ", "_")


def did_you_mean(given: Any, choices: Iterable[str]) -> str:
    """Return ``" (did you mean 'x'?)"`` for the closest of `choices`, or ``""``.

    Names are compared without case, surrounding spaces, or the difference between ``-``,
    ``_`` and a space, then by :func:`difflib.get_close_matches` (cutoff 0.6), so that
    ``"theta_b"`` finds ``"theta_B"`` and ``"nadeau-bengio"`` finds ``"nadeau_bengio"``.

    Parameters
    ----------
    given : object
        What the user gave; anything but a string gets ``""``.
    choices : iterable of str
        The valid names.

    Returns
    -------
    str
        The suffix for an error message.

    Examples
    --------
    >>> did_you_mean("theta_b", ["theta_A", "theta_B", "nadeau_bengio"])
    " (did you mean 'theta_B'?)"
    >>> did_you_mean("xyz", ["theta_A"])
    ''
    """
    if not isinstance(given, str):
        return ""
    by_key = {_key(choice): choice for choice in choices}
    close = difflib.get_close_matches(_key(given), list(by_key), n=1, cutoff=0.6)
    return f" (did you mean {by_key[close[0]]!r}?)" if close else ""
