"""The one catalogue of scikit-learn learners chosen by name.

:func:`make_learner` turns a short name (and, where the name allows both, a task) into an
unfitted estimator with fixed, documented settings, so that ``bayescv nested DATA.csv
--learner ridge`` and ``bayescv study --learner ridge`` mean the same model, and so does
``make_learner("ridge", task="regression")`` in a notebook.

========================  ========================================  ========================================
name                      classification                            regression
========================  ========================================  ========================================
``logistic``              standardise + ``LogisticRegression``      (refused)
``unpenalized-logistic``  ``LogisticRegression(C=inf)``             (refused)
``ridge``                 standardise + ``RidgeClassifier``         standardise + ``Ridge``
``linear``                (refused)                                 ``LinearRegression`` (OLS)
``decision-tree``         ``DecisionTreeClassifier(max_depth=5)``   ``DecisionTreeRegressor(max_depth=5)``
``random-forest``         ``RandomForestClassifier``                ``RandomForestRegressor``
``gradient-boosting``     ``GradientBoostingClassifier``            ``GradientBoostingRegressor``
``k-neighbors``           standardise + ``KNeighborsClassifier``    standardise + ``KNeighborsRegressor``
========================  ========================================  ========================================

Learners whose fit depends on the scale of the features (the penalised linear models and
nearest neighbours) are fitted on standardised features: a
:class:`~sklearn.preprocessing.StandardScaler` in a pipeline, refitted in every CV fold, so
the penalty and the distances treat features on different scales alike. In particular
``ridge`` is *scaled*; pass ``sklearn.linear_model.Ridge()`` yourself for the bare one.
``logistic`` is L2-penalised (``C=1``, ``max_iter=1000``); ``unpenalized-logistic`` is the
maximum-likelihood fit of Bates, Hastie & Tibshirani (2024)'s experiments (``C=inf``,
``solver="newton-cholesky"``, ``max_iter=1000``; scaling would not change its predictions).
``k-neighbors`` uses 10 neighbours. Other settings are scikit-learn's defaults.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import Any, Literal

import numpy as np
from sklearn.ensemble import (
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge, RidgeClassifier
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

__all__ = ["LEARNERS", "TASKS", "learner_task", "make_learner"]

#: Tasks accepted by :func:`make_learner`.
TASKS = ("classification", "regression")

_Factory = Callable[[int | None], Any] | None


def _scaled(model: Any) -> Any:
    return make_pipeline(StandardScaler(), model)


# name -> (classifier factory, regressor factory), each taking random_state; None: refused.
_CATALOGUE: dict[str, tuple[_Factory, _Factory]] = {
    "logistic": (lambda rs: _scaled(LogisticRegression(max_iter=1000)), None),
    "unpenalized-logistic": (
        lambda rs: LogisticRegression(C=np.inf, solver="newton-cholesky", max_iter=1000),
        None,
    ),
    "ridge": (lambda rs: _scaled(RidgeClassifier()), lambda rs: _scaled(Ridge())),
    "linear": (None, lambda rs: LinearRegression()),
    "decision-tree": (
        lambda rs: DecisionTreeClassifier(max_depth=5, random_state=rs),
        lambda rs: DecisionTreeRegressor(max_depth=5, random_state=rs),
    ),
    "random-forest": (
        lambda rs: RandomForestClassifier(random_state=rs),
        lambda rs: RandomForestRegressor(random_state=rs),
    ),
    "gradient-boosting": (
        lambda rs: GradientBoostingClassifier(random_state=rs),
        lambda rs: GradientBoostingRegressor(random_state=rs),
    ),
    "k-neighbors": (
        lambda rs: _scaled(KNeighborsClassifier(10)),
        lambda rs: _scaled(KNeighborsRegressor(10)),
    ),
}

#: Learner names accepted by :func:`make_learner` (see the module's table).
LEARNERS: tuple[str, ...] = tuple(_CATALOGUE)


def learner_task(name: str) -> str | None:
    """Return the only task a learner name supports, or None when it supports both.

    Parameters
    ----------
    name : str
        One of :data:`LEARNERS`.

    Returns
    -------
    str or None
        ``"classification"`` for the logistic regressions, ``"regression"`` for ``linear``,
        else None.

    Raises
    ------
    ValueError
        For an unknown name.

    Examples
    --------
    >>> learner_task("logistic"), learner_task("ridge")
    ('classification', None)
    """
    _check_name(name)
    classifier, regressor = _CATALOGUE[name]
    if regressor is None:
        return "classification"
    return "regression" if classifier is None else None


def make_learner(
    name: str,
    *,
    task: Literal["classification", "regression"] | None = None,
    random_state: int | None = None,
) -> Any:
    """Return an unfitted scikit-learn estimator chosen by name.

    Parameters
    ----------
    name : str
        One of :data:`LEARNERS` (see the module's table).
    task : {"classification", "regression"}, optional
        What the target is. Needed only for names that do both (:func:`learner_task`).
    random_state : int, optional
        Seed of the randomised learners (trees, forests, boosting); ignored by the others.

    Returns
    -------
    estimator
        A fresh, unfitted estimator (a pipeline for the standardised learners).

    Raises
    ------
    ValueError
        For an unknown name or task, a name that does not fit the task (``logistic`` for
        regression, ``linear`` for classification), or no task for a name that does both.

    Examples
    --------
    >>> make_learner("random-forest", task="regression", random_state=0)
    RandomForestRegressor(random_state=0)
    >>> [type(step).__name__ for step in make_learner("ridge", task="classification")]
    ['StandardScaler', 'RidgeClassifier']
    >>> make_learner("linear")
    LinearRegression()
    """
    only = learner_task(name)
    if task is None:
        if only is None:
            raise ValueError(
                f"learner {name!r} does classification and regression: pass "
                "task='classification' or task='regression'"
            )
        task = only
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}, got {task!r}{_did_you_mean(task, TASKS)}")
    factory = _CATALOGUE[name][TASKS.index(task)]
    if factory is None:
        fits = ", ".join(n for n in LEARNERS if _CATALOGUE[n][TASKS.index(task)] is not None)
        raise ValueError(f"learner {name!r} is for {only} only; for {task} use one of {fits}")
    return factory(random_state)


def _check_name(name: str) -> None:
    if not isinstance(name, str) or name not in _CATALOGUE:
        raise ValueError(
            f"unknown learner {name!r}; expected one of {', '.join(LEARNERS)}"
            f"{_did_you_mean(name, LEARNERS)}"
        )


def _did_you_mean(given: Any, choices: tuple[str, ...]) -> str:
    """``" (did you mean 'x'?)"`` for a near miss (case, spaces, ``_`` for ``-``, a typo)."""
    if not isinstance(given, str):
        return ""
    key = given.strip().lower().replace("_", "-").replace(" ", "-")
    close = difflib.get_close_matches(key, choices, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""
