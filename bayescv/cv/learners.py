"""scikit-learn models chosen by name, for the command line and quick studies.

:func:`make_model` turns a short name and a task into an unfitted estimator with fixed,
documented settings, so that ``bayescv nested DATA.csv --model ridge`` means the same model
everywhere.

=====================  ====================================  ===================================
name                   classification                        regression
=====================  ====================================  ===================================
``logistic``           standardise + ``LogisticRegression``  (refused)
``ridge``              standardise + ``RidgeClassifier``     standardise + ``Ridge``
``linear``             (refused)                             ``LinearRegression`` (OLS)
``random-forest``      ``RandomForestClassifier``            ``RandomForestRegressor``
``gradient-boosting``  ``GradientBoostingClassifier``        ``GradientBoostingRegressor``
=====================  ====================================  ===================================

Penalised linear models are fitted on standardised features (a
:class:`~sklearn.preprocessing.StandardScaler` in a pipeline, refitted in every CV fold), so
the penalty treats features on different scales alike and the solver converges. Other
settings are scikit-learn's defaults, except ``max_iter=1000`` for the logistic regression
(L2 penalty, ``C=1``).
"""

from __future__ import annotations

from typing import Any, Literal

from sklearn.ensemble import (
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge, RidgeClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

__all__ = ["MODEL_NAMES", "TASKS", "make_model", "model_task"]

#: Model names accepted by :func:`make_model`.
MODEL_NAMES = ("logistic", "ridge", "linear", "random-forest", "gradient-boosting")

#: Tasks accepted by :func:`make_model`.
TASKS = ("classification", "regression")

# The task a name implies on its own, when it makes sense for one task only.
_ONLY_TASK = {"logistic": "classification", "linear": "regression"}


def model_task(name: str) -> str | None:
    """Return the only task a model name supports, or None when it supports both.

    Parameters
    ----------
    name : str
        One of :data:`MODEL_NAMES`.

    Returns
    -------
    str or None
        ``"classification"`` for ``logistic``, ``"regression"`` for ``linear``, else None.

    Examples
    --------
    >>> model_task("logistic"), model_task("ridge")
    ('classification', None)
    """
    _check_name(name)
    return _ONLY_TASK.get(name)


def make_model(
    name: str,
    *,
    task: Literal["classification", "regression"],
    random_state: int | None = None,
) -> Any:
    """Return an unfitted scikit-learn estimator chosen by name.

    Parameters
    ----------
    name : str
        One of :data:`MODEL_NAMES` (see the module's table).
    task : {"classification", "regression"}
        What the target is.
    random_state : int, optional
        Seed of the randomised models (forests, boosting); ignored by the others.

    Returns
    -------
    estimator
        A fresh, unfitted estimator (a pipeline for the penalised linear models).

    Raises
    ------
    ValueError
        For an unknown name or task, or a name that does not fit the task (``logistic`` for
        regression, ``linear`` for classification).

    Examples
    --------
    >>> make_model("random-forest", task="regression", random_state=0)
    RandomForestRegressor(random_state=0)
    >>> [type(step).__name__ for step in make_model("ridge", task="classification")]
    ['StandardScaler', 'RidgeClassifier']
    """
    _check_name(name)
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}, got {task!r}")
    only = _ONLY_TASK.get(name)
    if only is not None and only != task:
        hint = "ridge, random-forest or gradient-boosting" if task == "classification" else (
            "linear, ridge, random-forest or gradient-boosting"
        )  # fmt: skip
        raise ValueError(f"model {name!r} is for {only} only; for {task} use {hint}")
    classify = task == "classification"
    if name == "logistic":
        return make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
    if name == "ridge":
        return make_pipeline(StandardScaler(), RidgeClassifier() if classify else Ridge())
    if name == "linear":
        return LinearRegression()
    if name == "random-forest":
        forest = RandomForestClassifier if classify else RandomForestRegressor
        return forest(random_state=random_state)
    boosting = GradientBoostingClassifier if classify else GradientBoostingRegressor
    return boosting(random_state=random_state)


def _check_name(name: str) -> None:
    if name not in MODEL_NAMES:
        raise ValueError(f"unknown model {name!r}; expected one of {', '.join(MODEL_NAMES)}")
