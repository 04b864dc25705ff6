"""Every interval method of the package under a stable name, with its target and cost.

A :class:`Method` is a callable ``func(context, names, **options) -> interval Dataset``
(:mod:`bayescv.intervals`) that returns one row per name in ``names`` (its ``outputs``),
plus what it targets and what it costs:

* ``"losses"``: needs only the loss table of the one CV run of the replicate (every
  closed-form method; they are computed together by one :func:`bayescv.cv_intervals` call);
* ``"refit"``: needs the learner and the data and refits many models (``bootstrap``:
  B × K fits; ``nested_cv``: about n_repeats × (K + K(K−1)/2) fits);
* ``"posterior"``: runs MCMC on the losses (``bayes_hier``; by default also on the
  bootstrap replicates of the ``bootstrap`` method, B × K refits, shared with it).

Methods of one replicate share what they can through the :class:`Context`: the loss table,
and the bootstrap-replicated CV tables (:meth:`Context.bootstrap_table`), which are built
once per replicate and size from a seed of the replicate, not of the method.

Methods that need optional packages or heavier modules (``nested_cv`` from
:mod:`bayescv.nested`, ``bayes_hier`` from :mod:`bayescv.bayes`, which needs PyMC and ArviZ)
are registered lazily: if a package they need is not installed (an :class:`ImportError`), the
method is absent from :func:`available_methods` and :func:`unavailable_methods` says why; any
other error while loading one is a bug and is raised. Add your own with :func:`register_method`.

Each method declares the options it accepts (:attr:`Method.option_names`);
:func:`check_method_options` refuses options of unknown names or for methods not selected.

Select rows of a result with ``ds.sel(method_name=name)`` (the dim is not called ``method``,
a keyword of :meth:`xarray.Dataset.sel`).
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import xarray as xr

from bayescv._defaults import DEFAULT_N_BOOTSTRAP
from bayescv._names import did_you_mean
from bayescv.classical import INTERVAL_METHODS, interval_target
from bayescv.compare._context import Context
from bayescv.compare._options import check_method_options, keyword_names
from bayescv.compare._registry_builtins import (
    BAYES_TARGETS,
    bayes_hier,
    bootstrap,
    closed_form,
    nested,
)

__all__ = [
    "COSTS",
    "Context",
    "Method",
    "available_methods",
    "check_method_options",
    "get_method",
    "register_method",
    "resolve_methods",
    "unavailable_methods",
    "unregister_method",
]

#: Cost classes of a method.
COSTS = ("losses", "refit", "posterior")


@dataclass(frozen=True)
class Method:
    """An interval method of the registry.

    Parameters
    ----------
    name : str
        Stable name (what users select).
    func : callable
        ``func(context, names, **options) -> xarray.Dataset``: the interval Dataset with
        one row along ``method_name`` for each name in `names`.
    target : str, mapping or callable
        The estimand of the outputs: one name for all; a mapping output → estimand; or a
        callable ``target(scheme) -> str or mapping``.
    cost : {"losses", "refit", "posterior"}, default "losses"
        Cost class (see the module docs).
    outputs : tuple of str, optional
        Row names the method produces; default ``(name,)``.
    batch : str, optional
        Methods with the same `func` and `batch` run in one call per replicate (their
        runtime is split equally); options for the call come from ``method_options[batch]``.
    description : str, default ""
        One line for listings.
    options : tuple of str, optional
        Names of the options the method accepts (``method_options[name]``, or
        ``method_options[batch]``). Default: the keyword parameters of `func` after
        ``context, names``; any name when `func` takes ``**options`` and `options` is unset.

    Examples
    --------
    Two rows whose target follows the CV scheme, with one option:

    >>> method = Method(
    ...     "pair", lambda context, names, *, width=0.1: None,
    ...     target=lambda scheme: "ose" if scheme == "source" else "err",
    ...     outputs=("pair_low", "pair_high"),
    ... )
    >>> method.output_names, method.option_names, method.cost
    (('pair_low', 'pair_high'), ('width',), 'losses')
    >>> method.targets("source")
    {'pair_low': 'ose', 'pair_high': 'ose'}
    """

    name: str
    func: Callable[..., xr.Dataset]
    target: Any
    cost: str = "losses"
    outputs: tuple[str, ...] = field(default=())
    batch: str | None = None
    description: str = ""
    options: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"a method needs a non-empty name, got {self.name!r}")
        if self.cost not in COSTS:
            raise ValueError(f"cost must be one of {COSTS}, got {self.cost!r}")
        if not callable(self.func):
            raise TypeError(f"func of method {self.name!r} is not callable")

    @property
    def output_names(self) -> tuple[str, ...]:
        """Row names this method produces."""
        return tuple(self.outputs) or (self.name,)

    @property
    def option_key(self) -> str:
        """The key of this method's options in ``method_options``: its batch, else its name."""
        return self.batch or self.name

    @property
    def option_names(self) -> tuple[str, ...] | None:
        """Names of the options the method accepts, or None when it accepts any name."""
        if self.options is not None:
            return tuple(self.options)
        return keyword_names(self.func, skip=2)

    def targets(self, scheme: str) -> dict[str, str]:
        """Return the estimand of each output for a CV scheme.

        Parameters
        ----------
        scheme : {"random", "source"}
            CV scheme of the study.

        Returns
        -------
        dict of str to str
        """
        target = self.target(scheme) if callable(self.target) else self.target
        if isinstance(target, str):
            return dict.fromkeys(self.output_names, target)
        if isinstance(target, Mapping):
            return {name: str(target[name]) for name in self.output_names}
        raise TypeError(f"target of method {self.name!r} must be a str or a mapping")


def _by_scheme(random: str, source: str, scheme: str) -> str:
    return source if scheme == "source" else random


def _closed_target(name: str) -> Callable[[str], str]:
    return functools.partial(interval_target, name)


def _scheme_target(random: str, source: str) -> Callable[[str], str]:
    return functools.partial(_by_scheme, random, source)


_DESCRIPTIONS = {
    "naive_points": "naive CV: sd of all losses / sqrt(N) (Bates et al. 2024, eq. 5)",
    "naive_folds": "naive CV: sd of the fold means / sqrt(K) (Bates et al. 2024, eq. 9)",
    "nadeau_bengio": "corrected resampled t (Nadeau & Bengio 2003)",
    "bayle_within": "within-fold variance (Bayle et al. 2020)",
    "bayle_all_pairs": "all-pairs variance (Bayle et al. 2020)",
}

_BUILTIN: dict[str, Method] = {
    name: Method(
        name,
        closed_form,
        _closed_target(name),
        "losses",
        batch="closed_form",
        description=_DESCRIPTIONS.get(
            name, f"closed-form variance estimator {name} (Geras & Sutton 2013)"
        ),
    )
    for name in INTERVAL_METHODS
}
_BUILTIN["bootstrap"] = Method(
    "bootstrap", bootstrap, _scheme_target("err", "expected_cv"), "refit",
    description=(
        f"bootstrap-replicated CV, B x K refits (options: n_bootstrap={DEFAULT_N_BOOTSTRAP}, kind)"
    ),
)  # fmt: skip


#: Options of nested_cv and bayes.fit that the study sets itself.
_NESTED_SET = ("estimator", "X", "y", "groups", "loss", "level", "random_state")
_BAYES_SET = ("losses", "bootstrap", "random_state")


def _load_nested() -> Method:
    module = importlib.import_module("bayescv.nested")
    if not callable(getattr(module, "nested_cv", None)):
        raise ImportError("bayescv.nested has no nested_cv")
    return Method(
        "nested_cv", nested, _scheme_target("err_xy", "ose"), "refit",
        description="nested CV (Bates et al. 2024), n_repeats x (K + K(K-1)/2) fits",
        options=keyword_names(module.nested_cv, drop=_NESTED_SET),
    )  # fmt: skip


def _load_bayes() -> Method:
    # What a fit imports (pymc, numba, platformdirs; nutpie is optional), looked up
    # with find_spec, nothing imported: bayescv.bayes itself imports none of them.
    from bayescv._extras import BAYES_MODULES, missing_extra

    absent = missing_extra(BAYES_MODULES, "bayes", what="bayes_hier")
    if absent:
        raise ImportError(absent)
    module = importlib.import_module("bayescv.bayes")
    missing = [f for f in ("fit", "posterior_intervals") if not callable(getattr(module, f, None))]
    if missing:
        raise ImportError(f"bayescv.bayes has no {', '.join(missing)}")
    fit_options = keyword_names(module.fit, drop=_BAYES_SET)
    return Method(
        "bayes_hier", bayes_hier, BAYES_TARGETS, "posterior", outputs=tuple(BAYES_TARGETS),
        description=(
            "hierarchical Bayesian model, posterior intervals: one MCMC fit on the losses and "
            "B bootstrap-replicated CV runs, B x K refits shared with 'bootstrap' "
            f"(options: n_bootstrap={DEFAULT_N_BOOTSTRAP}, 0 for the losses alone; draws, tune, "
            "chains, sampler)"
        ),
        options=None if fit_options is None else ("n_bootstrap", *fit_options),
    )  # fmt: skip


# Lazily registered methods: one small loader each.
_LAZY: dict[str, Callable[[], Method]] = {"nested_cv": _load_nested, "bayes_hier": _load_bayes}
_USER: dict[str, Method] = {}


def _lazy(name: str) -> tuple[Method | None, str]:
    # Only a missing package (or function) makes a method unavailable; any other error while
    # loading it is a bug and is raised, rather than the method silently vanishing from "all".
    try:
        return _LAZY[name](), ""
    except ImportError as error:  # recorded, see unavailable_methods()
        return None, f"{type(error).__name__}: {error}"


def _all() -> tuple[dict[str, Method], dict[str, str]]:
    found, missing = dict(_BUILTIN), {}
    for name in _LAZY:
        method, reason = _lazy(name)
        if method is None:
            missing[name] = reason
        else:
            found[name] = method
    found.update(_USER)
    return found, missing


def available_methods(cost: str | None = None) -> tuple[str, ...]:
    """Names of the methods that can run now, optionally of one cost class.

    Parameters
    ----------
    cost : {"losses", "refit", "posterior"}, optional
        Keep only this cost class.

    Returns
    -------
    tuple of str

    Examples
    --------
    >>> names = available_methods()
    >>> "theta_B" in names and "naive_points" in names and "bootstrap" in names
    True
    >>> "bootstrap" in available_methods("losses")
    False
    """
    found, _ = _all()
    return tuple(n for n, m in found.items() if cost is None or m.cost == cost)


def unavailable_methods() -> dict[str, str]:
    """Return the lazily registered methods that could not be loaded, and why.

    Returns
    -------
    dict of str to str
        Name → the :class:`ImportError` that keeps the method out; empty when every optional
        package is installed.

    Examples
    --------
    Each lazily registered method is either available or explained here:

    >>> missing = unavailable_methods()
    >>> [name in missing or name in available_methods() for name in ("nested_cv", "bayes_hier")]
    [True, True]
    >>> set(missing).isdisjoint(available_methods())
    True
    """
    return _all()[1]


def get_method(name: str) -> Method:
    """Return the method registered under `name`.

    Parameters
    ----------
    name : str
        A registry name.

    Returns
    -------
    Method

    Raises
    ------
    ValueError
        For an unknown or unavailable name.

    Examples
    --------
    >>> method = get_method("theta_B")
    >>> method.cost, method.batch, method.targets("random"), method.targets("source")
    ('losses', 'closed_form', {'theta_B': 'err'}, {'theta_B': 'expected_cv'})
    """
    if name in _USER:
        return _USER[name]
    if name in _BUILTIN:
        return _BUILTIN[name]
    if name in _LAZY:
        method, reason = _lazy(name)
        if method is None:
            raise ValueError(f"method {name!r} is not available: {reason}")
        return method
    raise ValueError(
        f"unknown method {name!r}; available: {', '.join(available_methods())}"
        f"{did_you_mean(name, available_methods())}"
    )


def resolve_methods(methods: str | Sequence[str] | None) -> list[Method]:
    """Turn a selection into methods: ``"all"``, ``"closed_form"``, a name or a list.

    Parameters
    ----------
    methods : str or sequence of str or None
        ``"all"`` (or None): every available method; ``"closed_form"``: every method of
        cost ``"losses"``; otherwise registry names, among which the two groups may stand
        (``["closed_form", "bootstrap"]``).

    Returns
    -------
    list of Method

    Raises
    ------
    ValueError
        For unknown names, duplicates, or outputs that collide.

    Examples
    --------
    >>> [method.name for method in resolve_methods(["bootstrap", "theta_B"])]
    ['bootstrap', 'theta_B']
    >>> {method.cost for method in resolve_methods("closed_form")}
    {'losses'}
    >>> [m.name for m in resolve_methods(["closed_form", "bootstrap"])][-1]
    'bootstrap'
    """
    items = (
        ["all"] if methods is None else [methods] if isinstance(methods, str) else list(methods)
    )
    if not items:
        raise ValueError("no methods selected")
    named = [m for m in items if m not in ("all", "closed_form")]
    if len(set(named)) != len(named):
        raise ValueError(f"methods listed twice: {named}")
    names: list[str] = []  # the groups expanded in place; a method both named and grouped once
    for item in items:
        group = {"all": None, "closed_form": "losses"}
        expanded = available_methods(group[item]) if item in group else [item]
        names += [n for n in expanded if n not in names]
    resolved = [get_method(n) for n in names]
    outputs = [o for m in resolved for o in m.output_names]
    if len(set(outputs)) != len(outputs):
        raise ValueError(f"the selected methods produce duplicate rows: {outputs}")
    return resolved


def register_method(method: Method, *, replace: bool = False) -> None:
    """Add a method to the registry.

    Parameters
    ----------
    method : Method
        The method.
    replace : bool, default False
        Allow replacing a method of the same name.

    Examples
    --------
    >>> from bayescv.intervals import interval_dataset
    >>> def half_width(ctx, names):
    ...     mu = float(ctx.moments["S"].sum() / ctx.moments["n"].sum())
    ...     return interval_dataset(names, estimate=[mu], lower=[mu - 0.1], upper=[mu + 0.1],
    ...                             se=[np.nan], level=ctx.level, target="err")
    >>> register_method(Method("fixed_width", half_width, "err"))
    >>> "fixed_width" in available_methods()
    True
    >>> unregister_method("fixed_width")
    """
    if not isinstance(method, Method):
        raise TypeError(f"expected a Method, got {type(method).__name__}")
    taken = method.name in _USER or method.name in _BUILTIN or method.name in _LAZY
    if taken and not replace:
        raise ValueError(f"a method named {method.name!r} exists; pass replace=True")
    _USER[method.name] = method


def unregister_method(name: str) -> None:
    """Remove a method added with :func:`register_method`.

    Parameters
    ----------
    name : str
        Its name.

    Examples
    --------
    >>> register_method(Method("mine", lambda context, names: None, "err"))
    >>> unregister_method("mine")
    >>> "mine" in available_methods()
    False
    >>> unregister_method("theta_A")
    Traceback (most recent call last):
    ValueError: 'theta_A' was not added with register_method
    """
    if name not in _USER:
        raise ValueError(f"{name!r} was not added with register_method")
    del _USER[name]
