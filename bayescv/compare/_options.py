"""Options of the registry's methods: which names each accepts, and checking a selection's."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

__all__ = ["check_method_options", "keyword_names"]


class _Optioned(Protocol):
    """What the check reads of a :class:`bayescv.compare.registry.Method` (no import of it)."""

    @property
    def name(self) -> str: ...

    @property
    def option_key(self) -> str: ...

    @property
    def option_names(self) -> tuple[str, ...] | None: ...


def keyword_names(
    func: Callable[..., Any], skip: int = 0, drop: Sequence[str] = ()
) -> tuple[str, ...] | None:
    """Return the parameters of `func` that can be passed by keyword, after the first `skip`.

    Parameters
    ----------
    func : callable
        A method's function (``func(context, names, **options)``) or what it calls.
    skip : int, default 0
        Leading parameters to leave out (``context, names``: 2).
    drop : sequence of str, default ()
        Parameters the caller sets itself.

    Returns
    -------
    tuple of str or None
        None when `func` takes ``**kwargs``: any name may be valid.
    """
    params = list(inspect.signature(func).parameters.values())[skip:]
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return None
    return tuple(
        p.name
        for p in params
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name not in drop
    )


def check_method_options(
    methods: Sequence[_Optioned], method_options: Mapping[str, Mapping[str, Any]] | None
) -> dict[str, dict[str, Any]]:
    """Check options per method against the selected methods; return them as plain dicts.

    Parameters
    ----------
    methods : sequence of Method
        The selected methods (:func:`resolve_methods`).
    method_options : mapping of str to mapping, optional
        Options per method name, or per batch (``"closed_form"``) for batched methods.

    Returns
    -------
    dict of str to dict

    Raises
    ------
    ValueError
        For options of a method that is not selected, of a batched method under its own
        name, or of a name the method does not accept (the message lists those it does).

    Examples
    --------
    >>> from bayescv.compare.registry import resolve_methods
    >>> check_method_options(resolve_methods(["theta_3"]), {"closed_form": {"kind": "t"}})
    {'closed_form': {'kind': 't'}}
    >>> check_method_options(resolve_methods(["theta_3"]), {"closed_form": {"dits": "t"}})
    Traceback (most recent call last):
    ...
    ValueError: unknown option 'dits' for closed_form; valid options: kind
    """
    if method_options is None:
        return {}
    if not isinstance(method_options, Mapping):
        raise ValueError(
            f"method_options must map method names to options, got {type(method_options).__name__}"
        )
    by_key: dict[str, _Optioned] = {}
    for m in methods:
        by_key.setdefault(m.option_key, m)
    selected = ", ".join(by_key)
    out: dict[str, dict[str, Any]] = {}
    for key, options in method_options.items():
        if key not in by_key:
            batched = next((m for m in methods if m.name == key), None)
            if batched is not None:
                raise ValueError(f"options of {key} go under {batched.option_key!r}, its batch")
            raise ValueError(
                f"options for {key!r}, which is not selected "
                f"(the selection takes options under: {selected})"
            )
        if not isinstance(options, Mapping):
            raise ValueError(
                f"method_options[{key!r}] must be a mapping of option names to values, "
                f"got {type(options).__name__}"
            )
        valid = by_key[key].option_names
        if valid is not None:
            unknown = [name for name in options if name not in valid]
            if unknown:
                raise ValueError(
                    f"unknown option {unknown[0]!r} for {key}; valid options: "
                    f"{', '.join(valid) or '(none)'}"
                )
        out[key] = dict(options)
    return out
