"""Every interval method of the package under a stable name, with its target and cost.

A :class:`Method` is a callable ``func(context, names, **options) -> interval Dataset``
(:mod:`bayescv.intervals`) that returns one row per name in ``names`` (its ``outputs``),
plus what it targets and what it costs:

* ``"losses"``: needs only the loss table of the one CV run of the replicate (every
  closed-form method; they are computed together by one :func:`bayescv.cv_intervals` call);
* ``"refit"``: needs the learner and the data and refits many models (``bootstrap``:
  B × K fits; ``nested_cv``: about n_repeats × (K + K(K−1)/2) fits);
* ``"posterior"``: needs only the losses but runs MCMC (``bayes_hier``).

Methods that live in modules still being written (``nested_cv`` from :mod:`bayescv.nested`,
``bayes_hier`` from :mod:`bayescv.bayes`) are registered lazily: if the import fails or the
function is missing, the method is absent from :func:`available_methods` and
:func:`unavailable_methods` says why. Add your own with :func:`register_method`.

Select rows of a result with ``ds.sel({"method": name})``; ``ds.sel(method=name)`` silently
does nothing (``method`` is a keyword of :meth:`xarray.Dataset.sel`).
"""

from __future__ import annotations

import copy
import functools
import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import xarray as xr

from bayescv.classical import INTERVAL_METHODS, cv_intervals, interval_target
from bayescv.intervals import combine_intervals, interval_dataset

__all__ = [
    "COSTS",
    "Context",
    "Method",
    "available_methods",
    "get_method",
    "register_method",
    "resolve_methods",
    "unavailable_methods",
    "unregister_method",
]

#: Cost classes of a method.
COSTS = ("losses", "refit", "posterior")


class Context:
    """What a method may use for one replicate.

    Attributes
    ----------
    X, y : ndarray
        The replicate's data.
    groups : ndarray or None
        Source of each point.
    learner : estimator
        Unfitted learner (clone it before fitting).
    loss : bayescv.Loss
        The loss function.
    scheme : {"random", "source"}
        The CV scheme of the replicate.
    n_folds : int
        K of random K-fold CV (the number of sources for leave-one-source-out).
    level : float
        Nominal coverage.
    seed : int
        This method's own seed for the replicate.
    moments : xarray.Dataset
        Block moments (n, S, Q, W along ``block``) of the replicate's CV run; accepted by
        :func:`bayescv.cv_intervals`.
    """

    def __init__(
        self, *, X: Any, y: Any, groups: Any, learner: Any, loss: Any, scheme: str,
        n_folds: int, level: float, seed: int, moments: xr.Dataset,
        table: Callable[[], xr.Dataset],
    ) -> None:  # fmt: skip
        self.X, self.y, self.groups, self.learner, self.loss = X, y, groups, learner, loss
        self.scheme, self.n_folds, self.level, self.seed = scheme, n_folds, level, seed
        self.moments = moments
        self._cache: dict[str, Any] = {"table": table}

    @property
    def losses(self) -> xr.Dataset:
        """The replicate's loss table (:mod:`bayescv.losses`), built on first use."""
        if "losses" not in self._cache:
            self._cache["losses"] = self._cache["table"]()
        return self._cache["losses"]

    def with_seed(self, seed: int) -> Context:
        """Return a copy with another seed (sharing the loss table)."""
        out = copy.copy(self)
        out.seed = int(seed)
        return out


@dataclass(frozen=True)
class Method:
    """An interval method of the registry.

    Parameters
    ----------
    name : str
        Stable name (what users select).
    func : callable
        ``func(context, names, **options) -> xarray.Dataset``: the interval Dataset with
        one row along ``method`` for each name in `names`.
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
    """

    name: str
    func: Callable[..., xr.Dataset]
    target: Any
    cost: str = "losses"
    outputs: tuple[str, ...] = field(default=())
    batch: str | None = None
    description: str = ""

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


# ------------------------------------------------------------------------ built-in methods
def closed_form(context: Context, names: Sequence[str], *, dist: str = "normal") -> xr.Dataset:
    """Every requested closed-form interval from one :func:`bayescv.cv_intervals` call."""
    return cv_intervals(context.moments, list(names), level=context.level, dist=dist)


def bootstrap(
    context: Context, names: Sequence[str], *, n_bootstrap: int = 50, dist: str = "normal"
) -> xr.Dataset:
    """Bootstrap-replicated CV: within-source resampling, ``n_bootstrap`` × K refits."""
    from bayescv.cv import bootstrap_cv_losses

    source = context.scheme == "source"
    boot = bootstrap_cv_losses(
        context.learner, context.X, context.y,
        groups=context.groups if source else None,
        cv=None if source else context.n_folds, loss=context.loss,
        n_bootstrap=n_bootstrap, random_state=context.seed,
    )  # fmt: skip
    return cv_intervals(
        context.moments, ["bootstrap"], level=context.level, dist=dist, bootstrap=boot
    )


def nested(context: Context, names: Sequence[str], **options: Any) -> xr.Dataset:
    """Bates et al.'s nested CV (:func:`bayescv.nested.nested_cv`); grouped under CVS.

    Options are passed on (``n_repeats``, ``bias_correction``, ...). Default ``n_folds``:
    the study's K for random CV; for CVS ``min(10, n_sources // 2)`` (two sources per fold).
    """
    from bayescv.nested import nested_cv

    grouped = context.scheme == "source"
    if "n_folds" not in options:
        n_units = np.unique(context.groups).size if grouped else context.n_folds
        options["n_folds"] = min(10, n_units // 2) if grouped else context.n_folds
    return nested_cv(
        context.learner, context.X, context.y, groups=context.groups if grouped else None,
        loss=context.loss, level=context.level, random_state=context.seed, **options,
    )  # fmt: skip


#: Rows of the Bayesian model and their targets.
BAYES_TARGETS = {"bayes_expected_cv": "expected_cv", "bayes_ose": "ose"}


def bayes_hier(context: Context, names: Sequence[str], **options: Any) -> xr.Dataset:
    """Hierarchical Bayesian model (:mod:`bayescv.bayes`): posterior intervals.

    Calls ``bayes.fit(losses, random_state=seed, **options)`` (options such as ``draws``,
    ``tune``, ``chains``, ``sampler``) and ``bayes.posterior_intervals(idata, level)``: rows
    ``bayes_expected_cv`` and, for CVS, ``bayes_ose`` (under random CV that row is NaN, flagged
    ``not_applicable``).
    """
    bayes = importlib.import_module("bayescv.bayes")
    idata = bayes.fit(context.losses, random_state=context.seed, **options)
    result = bayes.posterior_intervals(idata, context.level)
    missing = [n for n in names if n not in result["method"].values]
    if not missing:
        return result
    # the random-CV model has no new-source target: its row is NaN, flagged
    nan = [np.nan] * len(missing)
    absent = interval_dataset(
        missing, estimate=nan, lower=nan, upper=nan, se=nan, level=context.level,
        target=[BAYES_TARGETS[n] for n in missing],
        flag=[f"not_applicable: no {BAYES_TARGETS[n]} target under {context.scheme} CV" for n in missing],
    )  # fmt: skip
    return combine_intervals(result[["estimate", "lower", "upper", "se", "flag"]], absent)


def _by_scheme(random: str, source: str, scheme: str) -> str:
    return source if scheme == "source" else random


def _closed_target(name: str) -> Callable[[str], str]:
    return functools.partial(interval_target, name)


def _scheme_target(random: str, source: str) -> Callable[[str], str]:
    return functools.partial(_by_scheme, random, source)


_DESCRIPTIONS = {
    "naive_points": "naive CV: sd of all losses / sqrt(N) (Bates et al. eq. 5)",
    "naive_folds": "naive CV: sd of the fold means / sqrt(K) (Bates et al. eq. 9)",
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
        description=_DESCRIPTIONS.get(name, f"closed-form variance estimator {name} (000)"),
    )
    for name in INTERVAL_METHODS
}
_BUILTIN["bootstrap"] = Method(
    "bootstrap", bootstrap, _scheme_target("err", "expected_cv"), "refit",
    description="bootstrap-replicated CV, B x K refits (options: n_bootstrap)",
)  # fmt: skip


def _load_nested() -> Method:
    module = importlib.import_module("bayescv.nested")
    if not callable(getattr(module, "nested_cv", None)):
        raise ImportError("bayescv.nested has no nested_cv")
    return Method(
        "nested_cv", nested, _scheme_target("err_xy", "ose"), "refit",
        description="nested CV (Bates et al.), n_repeats x (K + K(K-1)/2) fits",
    )  # fmt: skip


def _load_bayes() -> Method:
    module = importlib.import_module("bayescv.bayes")
    missing = [f for f in ("fit", "posterior_intervals") if not callable(getattr(module, f, None))]
    if missing:
        raise ImportError(f"bayescv.bayes has no {', '.join(missing)}")
    return Method(
        "bayes_hier", bayes_hier, BAYES_TARGETS, "posterior", outputs=tuple(BAYES_TARGETS),
        description="hierarchical Bayesian model, posterior intervals (MCMC)",
    )  # fmt: skip


# Lazily registered methods: one small loader each.
_LAZY: dict[str, Callable[[], Method]] = {"nested_cv": _load_nested, "bayes_hier": _load_bayes}
_USER: dict[str, Method] = {}


def _lazy(name: str) -> tuple[Method | None, str]:
    try:
        return _LAZY[name](), ""
    except Exception as error:  # recorded, see unavailable_methods()
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
    """Return the lazily registered methods that could not be loaded, and why."""
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
    raise ValueError(f"unknown method {name!r}; available: {', '.join(available_methods())}")


def resolve_methods(methods: str | Sequence[str] | None) -> list[Method]:
    """Turn a selection into methods: ``"all"``, ``"closed_form"``, a name or a list.

    Parameters
    ----------
    methods : str or sequence of str or None
        ``"all"`` (or None): every available method; ``"closed_form"``: every method of
        cost ``"losses"``; otherwise registry names.

    Returns
    -------
    list of Method

    Raises
    ------
    ValueError
        For unknown names, duplicates, or outputs that collide.
    """
    if methods is None or methods == "all":
        names = list(available_methods())
    elif methods == "closed_form":
        names = list(available_methods("losses"))
    else:
        names = [methods] if isinstance(methods, str) else list(methods)
    if not names:
        raise ValueError("no methods selected")
    if len(set(names)) != len(names):
        raise ValueError(f"methods listed twice: {names}")
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
    """
    if name not in _USER:
        raise ValueError(f"{name!r} was not added with register_method")
    del _USER[name]
