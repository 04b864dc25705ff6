"""Named scenarios and learners, as the ``bayescv study`` command knows them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from bayescv.compare.scenarios import (
    BatesLogistic,
    GaussianLinear,
    MultiSourceLinear,
    MultiSourceLogistic,
    ResampledSources,
    Scenario,
)

__all__ = ["LEARNERS", "SCENARIOS", "make_learner", "make_scenario"]

#: Scenario names and what they build (defaults of each class).
SCENARIOS: dict[str, Callable[..., Scenario]] = {
    "bates-logistic": lambda **kw: BatesLogistic(bayes_error=0.33, **kw),
    "bates-logistic-22": lambda **kw: BatesLogistic(bayes_error=0.225, **kw),
    "gaussian-linear": GaussianLinear,
    "multi-source-logistic": MultiSourceLogistic,
    "multi-source-linear": MultiSourceLinear,
    "star": ResampledSources.star,
}

_MULTI = ("multi-source-logistic", "multi-source-linear", "star")

#: Learner names: (classifier, regressor) factories; None where the task does not fit.
LEARNERS: dict[str, tuple[Callable[[], Any] | None, Callable[[], Any] | None]] = {
    "logistic": (
        lambda: LogisticRegression(C=np.inf, solver="newton-cholesky", max_iter=1000),
        None,
    ),
    "logistic-l2": (lambda: LogisticRegression(max_iter=1000), None),
    "ols": (None, LinearRegression),
    "ridge": (None, Ridge),
    "tree": (
        lambda: DecisionTreeClassifier(max_depth=5),
        lambda: DecisionTreeRegressor(max_depth=5),
    ),
    "forest": (
        lambda: RandomForestClassifier(n_estimators=50),
        lambda: RandomForestRegressor(n_estimators=50),
    ),
    "knn": (lambda: KNeighborsClassifier(10), lambda: KNeighborsRegressor(10)),
}


def make_scenario(name: str, *, design: str | None = None, scheme: str | None = None) -> Scenario:
    """Build a named scenario (:data:`SCENARIOS`).

    Parameters
    ----------
    name : str
        A key of :data:`SCENARIOS`.
    design : {"sources_fixed", "sources_redrawn"}, optional
        For the multi-source scenarios.
    scheme : {"source", "random"}, optional
        For the multi-source scenarios.

    Returns
    -------
    Scenario

    Examples
    --------
    >>> make_scenario("multi-source-linear", design="sources_redrawn").design
    'sources_redrawn'
    """
    if name not in SCENARIOS:
        raise ValueError(f"unknown scenario {name!r}; known: {', '.join(SCENARIOS)}")
    kwargs = {k: v for k, v in {"design": design, "scheme": scheme}.items() if v is not None}
    if kwargs and name not in _MULTI:
        raise ValueError(f"scenario {name!r} is i.i.d.: it takes no design or scheme")
    return SCENARIOS[name](**kwargs)


def make_learner(name: str, task: str) -> Any:
    """Build a named learner (:data:`LEARNERS`) for a task.

    Parameters
    ----------
    name : str
        A key of :data:`LEARNERS`.
    task : {"classification", "regression"}
        The scenario's task.

    Returns
    -------
    estimator

    Examples
    --------
    >>> make_learner("tree", "regression")
    DecisionTreeRegressor(max_depth=5)
    """
    if name not in LEARNERS:
        raise ValueError(f"unknown learner {name!r}; known: {', '.join(LEARNERS)}")
    factory = LEARNERS[name][0 if task == "classification" else 1]
    if factory is None:
        raise ValueError(f"learner {name!r} does not do {task}")
    return factory()
