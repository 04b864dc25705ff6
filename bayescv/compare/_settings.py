"""What a study's store records of its settings, and the check that a resumed study matches.

A store resumes only a study of the same settings (:func:`check_resume`). Besides the
scenario, learner, loss, methods, options, level and seed, the settings hold a fingerprint of
the code of each method a user registered (``method_code``): the abstract syntax tree of its
source, so that comments and layout do not count but any change of what it computes does.
Resuming after such a change would mix replicates of the old code with those of the new.
Methods of the package are not fingerprinted (their code is the package version's), nor are
methods whose source Python cannot read (defined in ``python -c`` or an interactive
session, or not plain functions): for those, as before, an edit goes unnoticed.

Each replicate of a study also records a short id of these settings, all but the seed and the
store format (:func:`settings_id`), in the coordinate ``settings_id``: :func:`xarray.concat`
keeps the attrs of the first study stacked, but the ids of every replicate, so that
:func:`bayescv.compare.summarize` can refuse replicates of studies of other settings.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import json
import textwrap
from collections.abc import Sequence
from typing import Any

import joblib
import numpy as np
import xarray as xr

from bayescv.compare._replicate import _Spec
from bayescv.compare._scenario_base import scenario_hash
from bayescv.compare._store import STORE_FORMAT, describe_changes

__all__ = [
    "check_resume",
    "fill_settings_id",
    "method_fingerprint",
    "settings_id",
    "study_settings",
    "with_settings_id",
]

#: Settings that may differ between studies summarised together: studies of different
#: seeds are what users stack; the store format is the layout of a file, not of a study.
_MAY_DIFFER = ("seed", "store_format")


def method_fingerprint(func: Any) -> str | None:
    """Return a hash of the syntax tree of `func`'s source, or None where it cannot be read.

    Parameters
    ----------
    func : callable
        A method's function.

    Returns
    -------
    str or None
        16 hex digits; the same for sources that differ only in comments, blank lines or
        indentation (a function moved from a module into a test, say).

    Examples
    --------
    >>> from bayescv.compare._settings import study_settings
    >>> len(method_fingerprint(study_settings))
    16
    >>> method_fingerprint(len) is None  # a builtin has no Python source
    True
    """
    try:
        source = textwrap.dedent(inspect.getsource(func))
        tree = ast.parse(source)
    except (OSError, TypeError, SyntaxError, IndentationError):
        return None
    return hashlib.sha256(ast.dump(tree).encode()).hexdigest()[:16]


def _user_method_code(spec: _Spec) -> dict[str, str]:
    codes = {}
    for method in spec.methods:
        if (getattr(method.func, "__module__", None) or "").startswith("bayescv."):
            continue  # the package's own: its code is the version's
        code = method_fingerprint(method.func)
        if code is not None:
            codes[method.name] = code
    return codes


def study_settings(spec: _Spec, seed: int, method_names: Sequence[str]) -> dict[str, Any]:
    """Return the settings a store records (JSON-ready), ``method_code`` only when there is one.

    Parameters
    ----------
    spec : _Spec
        The study's specification.
    seed : int
        Its seed.
    method_names : sequence of str
        The names of its methods.

    Returns
    -------
    dict
    """
    code = _user_method_code(spec)
    settings = {
        "store_format": STORE_FORMAT,
        "scenario": spec.scenario.name,
        "scenario_class": type(spec.scenario).__name__,
        "scenario_params": spec.scenario.params(),
        "scenario_hash": scenario_hash(spec.scenario),
        "learner": repr(spec.learner),
        "learner_hash": joblib.hash(spec.learner),
        "loss": spec.loss.name,
        "methods": list(method_names),
        "outputs": list(spec.outputs),
        "method_options": json.loads(json.dumps(spec.options, default=repr, sort_keys=True)),
        "level": spec.level,
        "truths": list(spec.truths),
        "seed": seed,
        # Only when set, so that stores written before these keys keep their settings.
        **({} if spec.batched is None else {"batched": spec.batched}),
        **({"method_code": code} if code else {}),
    }
    return json.loads(json.dumps(settings))


def check_resume(stored: dict[str, Any] | None, settings: dict[str, Any], store: Any) -> None:
    """Refuse to resume a store whose study has other settings, naming what changed.

    A method's code is compared only where both the store and this call have its
    fingerprint (see the module docstring).

    Parameters
    ----------
    stored : dict or None
        The store's settings (None for a new store).
    settings : dict
        This call's settings (:func:`study_settings`).
    store : path-like
        The store, for the message.

    Raises
    ------
    ValueError
        When the settings differ.
    """
    if stored is None:
        return
    old, new = stored.get("method_code", {}), settings.get("method_code", {})
    changed = sorted(name for name in old.keys() & new.keys() if old[name] != new[name])
    if changed:
        raise ValueError(
            f"the code of method(s) {changed} changed since the store {store} was written: "
            "its replicates hold the old code's intervals; use another path, or delete the "
            "store to compute them all again"
        )
    rest = ({k: v for k, v in d.items() if k != "method_code"} for d in (stored, settings))
    before, now = rest
    if before != now:
        raise ValueError(
            f"the store {store} holds a study with other settings "
            f"{describe_changes(before, now)}; use another path"
        )


def settings_id(settings: dict[str, Any]) -> str:
    """Return a short id of the settings that replicates summarised together must share.

    Parameters
    ----------
    settings : dict
        A study's settings (:func:`study_settings`).

    Returns
    -------
    str
        12 hex digits of a hash of the settings as JSON (keys sorted), without the seed and
        the store format: studies of one setting and different seeds share it.

    Examples
    --------
    >>> a = {"level": 0.9, "seed": 1, "store_format": 1}
    >>> len(settings_id(a)), settings_id(a) == settings_id({**a, "seed": 2})
    (12, True)
    >>> settings_id(a) == settings_id({**a, "level": 0.95})
    False
    """
    shared = {k: v for k, v in settings.items() if k not in _MAY_DIFFER}
    text = json.dumps(shared, sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def with_settings_id(ds: xr.Dataset, sid: str) -> xr.Dataset:
    """Return `ds` with the coordinate ``settings_id`` set to `sid` for every replicate.

    Parameters
    ----------
    ds : xarray.Dataset
        Replicates of a study (a chunk, fresh or read from a store).
    sid : str
        The id of their settings (:func:`settings_id`).

    Returns
    -------
    xarray.Dataset
    """
    return ds.assign_coords(settings_id=("replicate", np.full(ds.sizes["replicate"], sid)))


def fill_settings_id(study: xr.Dataset) -> xr.Dataset:
    """Return a study read from a store, with ``settings_id`` where its store has none.

    A store written before replicates recorded the id lacks it; it is then computed from the
    settings in the study's attrs. A study with the id, or without settings in its attrs, is
    returned as it is.

    Parameters
    ----------
    study : xarray.Dataset
        A study (:func:`bayescv.compare.load_study`).

    Returns
    -------
    xarray.Dataset
    """
    if "settings_id" in study.variables or "settings" not in study.attrs:
        return study
    return with_settings_id(study, settings_id(json.loads(study.attrs["settings"])))
