"""What every scenario shares: the :class:`Scenario` and :class:`Population` bases, checks.

The synthetic scenarios (:mod:`bayescv.compare._gaussian`, :mod:`bayescv.compare.scenarios`)
and the resampled real data (:mod:`bayescv.compare._resampled`) subclass these; users import
them from :mod:`bayescv.compare.scenarios`.
"""

from __future__ import annotations

import dataclasses
import json
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import joblib
import numpy as np
from sklearn.model_selection import KFold, LeaveOneGroupOut

from bayescv._names import did_you_mean
from bayescv.losses import SCHEMES

__all__ = [
    "DESIGNS",
    "TRUTHS",
    "Draw",
    "Population",
    "Scenario",
    "check_scenario",
    "scenario_hash",
]

#: Sampling designs.
DESIGNS = ("iid", "sources_fixed", "sources_redrawn")
#: Truths a scenario computes per replicate (``ose_xy`` and ``ose_cv`` only with new sources).
TRUTHS = ("err_xy", "kfold_test_error", "ose_xy", "ose_cv")


class Population(ABC):
    """What a replicate's data were drawn from; computes true errors of fitted models.

    Attributes
    ----------
    weights : ndarray of shape (S,)
        Share of the data points from each training source (one source for i.i.d. data).
    source_index : ndarray of shape (n_samples,)
        Training-source position (0 … S−1) of every data row.

    Examples
    --------
    The true error, on each training source, of a model fitted on one replicate: no model
    errs below the noise variance (1 here):

    >>> from sklearn.linear_model import LinearRegression
    >>> from bayescv.compare import MultiSourceLinear
    >>> from bayescv.cv import get_loss
    >>> draw = MultiSourceLinear(3, 10).draw(np.random.default_rng(0))
    >>> model = LinearRegression().fit(draw.X, draw.y)
    >>> population = draw.population
    >>> errors = population.source_errors(model, get_loss("squared"), np.random.default_rng(1))
    >>> errors.shape, bool(errors.min() > 1.0), population.weights.round(3).tolist()
    ((3,), True, [0.333, 0.333, 0.333])
    """

    weights: np.ndarray
    source_index: np.ndarray

    @abstractmethod
    def source_errors(self, model: Any, loss: Any, rng: np.random.Generator) -> np.ndarray:
        """Return the expected loss of `model` on fresh points of each training source, shape (S,)."""

    def new_source_error(self, model: Any, loss: Any, rng: np.random.Generator) -> float:
        """Return the expected loss of `model` on a point from a new source."""
        raise NotImplementedError(
            f"{type(self).__name__} has no new sources: implement new_source_error for the "
            "truths ose_xy and ose_cv, or ask for others (truths=['err_xy', "
            "'kfold_test_error'])"
        )


@dataclass
class Draw:
    """One replicate's data and the population they came from.

    Examples
    --------
    >>> from bayescv.compare import MultiSourceLinear
    >>> draw = MultiSourceLinear(3, 10).draw(np.random.default_rng(0))
    >>> draw.X.shape, draw.y.shape, np.bincount(draw.groups).tolist()
    ((30, 5), (30,), [10, 10, 10])
    """

    X: np.ndarray
    y: np.ndarray
    groups: np.ndarray | None
    population: Population


class Scenario(ABC):
    """A data-generating process with known truth (see :mod:`bayescv.compare.scenarios`).

    Subclasses set ``name``, ``task`` (``"classification"`` or ``"regression"``),
    ``design``, ``scheme`` (``"random"``: shuffled K-fold; ``"source"``: leave one source out)
    and ``n_splits``, and implement :meth:`draw`, :meth:`default_learner` and :meth:`params`.
    ``catalogue_name`` is the name :func:`bayescv.compare.make_scenario` built the scenario
    under (None otherwise): studies show it in place of ``name``; :func:`scenario_hash`
    ignores it.

    Examples
    --------
    One source, y = x + ε with x, ε ~ N(0, 1): a fitted line w x + b errs by
    1 + (w − 1)² + b² on fresh points.

    >>> from sklearn.linear_model import LinearRegression
    >>> class Line(Population):
    ...     def __init__(self, n):
    ...         self.weights, self.source_index = np.ones(1), np.zeros(n, dtype=int)
    ...     def source_errors(self, model, loss, rng):
    ...         return np.array([1 + (model.coef_[0] - 1) ** 2 + model.intercept_**2])
    >>> class NoisyLine(Scenario):
    ...     n_splits = 5
    ...     def draw(self, rng):
    ...         x = rng.normal(size=(40, 1))
    ...         return Draw(x, x[:, 0] + rng.normal(size=40), None, Line(40))
    ...     def default_learner(self):
    ...         return LinearRegression()
    ...     def params(self):
    ...         return {"n": 40}
    >>> scenario = NoisyLine()
    >>> scenario, scenario.default_loss(), scenario.truth_names()
    (NoisyLine(n=40), 'squared', ('err_xy', 'kfold_test_error'))
    >>> draw = scenario.draw(np.random.default_rng(0))
    >>> [test.size for _, test in scenario.folds(draw, seed=0)]
    [8, 8, 8, 8, 8]
    """

    name: str = "scenario"
    catalogue_name: str | None = None
    task: str = "regression"
    design: str = "iid"
    scheme: str = "random"
    n_splits: int = 10

    @abstractmethod
    def draw(self, rng: np.random.Generator) -> Draw:
        """Draw one replicate's data, with the population they come from.

        Parameters
        ----------
        rng : numpy.random.Generator
            The replicate's generator (its data seed).

        Returns
        -------
        Draw
            The data and their :class:`Population`.
        """

    @abstractmethod
    def default_learner(self) -> Any:
        """Return the learner the scenario is studied with by default."""

    @abstractmethod
    def params(self) -> dict[str, Any]:
        """Return the settings as a JSON-serialisable dict (recorded by studies)."""

    def sample(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, Any]:
        """Draw one data set: :meth:`draw` without the population.

        Parameters
        ----------
        rng : numpy.random.Generator
            Source of randomness.

        Returns
        -------
        X : ndarray of shape (n_samples, n_features)
        y : ndarray of shape (n_samples,)
        groups : ndarray of shape (n_samples,) or None
            Source of each point (None for i.i.d. scenarios).
        """
        draw = self.draw(rng)
        return draw.X, draw.y, draw.groups

    def default_loss(self) -> str:
        """Return ``"zero_one"`` for classification, ``"squared"`` for regression."""
        return "zero_one" if self.task == "classification" else "squared"

    def truth_names(self) -> tuple[str, ...]:
        """Per-replicate truths this scenario computes (``ose_xy``, ``ose_cv`` only with new sources).

        ``ose_xy`` is the error on new sources of the model fitted on all the data;
        ``ose_cv`` the mean over the CV's fold models of their error on new sources: the
        population of sources' error of models trained as CV trains them, the estimand the
        Bayesian ``ose`` targets (``docs/bayes.md``); the study's ``ose`` is its mean.
        """
        if self.design == "sources_redrawn":
            return TRUTHS
        return TRUTHS[:2]

    def folds(self, draw: Draw, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
        """Return the CV folds of one replicate: shuffled K-fold, or leave one source out.

        Parameters
        ----------
        draw : Draw
            The replicate's data.
        seed : int
            Seed of the shuffle.

        Returns
        -------
        list of (train, test) int arrays
        """
        if self.scheme == "source":
            splits = LeaveOneGroupOut().split(draw.X, draw.y, draw.groups)
        else:
            splits = KFold(self.n_splits, shuffle=True, random_state=seed).split(draw.X)
        return [(np.asarray(tr, np.int64), np.asarray(te, np.int64)) for tr, te in splits]

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self.params().items())
        return f"{type(self).__name__}({inner})"


def scenario_hash(scenario: Scenario) -> str:
    """Hash a scenario's class name and state, wherever its class (and theirs) is defined.

    A pickle would record the module path of the scenario's class and of the dataclasses it
    holds, so moving a class would change the hash and refuse a store's resumption; this hash
    sees the class name and the attribute values only (dataclasses as their fields).

    Parameters
    ----------
    scenario : Scenario
        The scenario.

    Returns
    -------
    str
        A hex digest (:func:`joblib.hash`).

    Examples
    --------
    >>> from bayescv.compare.scenarios import GaussianLinear
    >>> scenario_hash(GaussianLinear(n=30)) == scenario_hash(GaussianLinear(n=30))
    True
    >>> scenario_hash(GaussianLinear(n=30)) == scenario_hash(GaussianLinear(n=31))
    False
    """
    state = {
        key: _plain(value)
        for key, value in sorted(vars(scenario).items())
        if key != "catalogue_name"  # how it was built, not what it is
    }
    return joblib.hash((type(scenario).__name__, state))


def check_scenario(scenario: Scenario) -> None:
    """Refuse, before any replicate runs, a scenario a study could not record or summarise.

    A user's :class:`Scenario` subclass sets ``design`` and ``scheme`` itself and returns
    :meth:`Scenario.params`, which the study stores as JSON.

    Parameters
    ----------
    scenario : Scenario
        The scenario of a study.

    Raises
    ------
    ValueError
        For a ``design`` not in :data:`DESIGNS` or a ``scheme`` other than ``"random"`` and
        ``"source"``.
    TypeError
        When ``params()`` does not return a JSON-serialisable dict.
    """
    kind = type(scenario).__name__
    for name, allowed in (("design", DESIGNS), ("scheme", SCHEMES)):
        _check_choice(getattr(scenario, name), allowed, f"{kind}.{name}")
    params = scenario.params()
    if not isinstance(params, dict):
        raise TypeError(f"{kind}.params() must return a dict, got {type(params).__name__}")
    try:
        json.dumps(params)
    except (TypeError, ValueError) as error:
        raise TypeError(
            f"{kind}.params() must return a JSON-serialisable dict (the study records it): "
            f"{error}; convert numpy values with .item() or .tolist()"
        ) from None


def _plain(value: Any) -> Any:
    """Dataclass instances as ``{field: value}`` dicts, inside lists, tuples and dicts too."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _check_choice(value: str, allowed: Sequence[str], name: str) -> str:
    if value not in allowed:
        raise ValueError(
            f"{name} must be one of {list(allowed)}, got {value!r}{did_you_mean(value, allowed)}"
        )
    return value


def _positive(value: Any, name: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)
