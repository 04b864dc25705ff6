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

import numbers
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

from bayescv._names import did_you_mean

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

#: The learners that take `random_state`, and the largest seed scikit-learn's fit takes.
_SEEDED = ("decision-tree", "random-forest", "gradient-boosting")
_SEED_MAX = 2**32 - 1

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
    random_state: int | np.random.RandomState | None = None,
) -> Any:
    """Return an unfitted scikit-learn estimator chosen by name.

    Parameters
    ----------
    name : str
        One of :data:`LEARNERS` (see the module's table).
    task : {"classification", "regression"}, optional
        What the target is. Needed only for names that do both (:func:`learner_task`).
    random_state : int or numpy.random.RandomState, optional
        Seed of the randomised learners (trees, forests, boosting), as scikit-learn takes it:
        an integer in ``[0, 2**32 - 1]`` or a ``RandomState``; ignored by the others.

    Returns
    -------
    estimator
        A fresh, unfitted estimator (a pipeline for the standardised learners).

    Raises
    ------
    ValueError
        For an unknown name or task, a name that does not fit the task (``logistic`` for
        regression, ``linear`` for classification), no task for a name that does both, or
        a randomised learner's `random_state` outside ``[0, 2**32 - 1]``.
    TypeError
        For a randomised learner's `random_state` that is no integer, ``RandomState`` or
        None (a numpy ``Generator`` included, which scikit-learn's learners do not take).

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
        raise ValueError(f"task must be one of {TASKS}, got {task!r}{did_you_mean(task, TASKS)}")
    factory = _CATALOGUE[name][TASKS.index(task)]
    if factory is None:
        fits = ", ".join(n for n in LEARNERS if _CATALOGUE[n][TASKS.index(task)] is not None)
        raise ValueError(f"learner {name!r} is for {only} only; for {task} use one of {fits}")
    _check_random_state(random_state, name)
    return factory(random_state)


def _check_random_state(random_state: Any, name: str) -> None:
    """Refuse now, for a learner that takes it, a seed that scikit-learn's fit would refuse."""
    if name not in _SEEDED or random_state is None:
        return  # the others ignore it (bayescv nested passes them its own seed)
    if isinstance(random_state, np.random.RandomState):
        return
    if not isinstance(random_state, numbers.Integral):
        hint = (
            ": pass an integer drawn from it, such as int(rng.integers(2**32))"
            if isinstance(random_state, np.random.Generator)
            else ""
        )
        raise TypeError(
            f"random_state of {name!r} must be None, an integer in [0, 2**32 - 1] or a numpy "
            f"RandomState, as scikit-learn takes it, got {random_state!r}{hint}"
        )
    if not 0 <= random_state <= _SEED_MAX:
        raise ValueError(
            f"random_state of {name!r} must be an integer in [0, 2**32 - 1], as scikit-learn "
            f"takes it, got {random_state}"
        )


def _check_name(name: str) -> None:
    if not isinstance(name, str) or name not in _CATALOGUE:
        raise ValueError(
            f"unknown learner {name!r}; expected one of {', '.join(LEARNERS)}"
            f"{did_you_mean(name, LEARNERS)}"
        )
