"""Named scenarios, as the ``bayescv study`` command knows them.

Learners by name come from the one catalogue of the package, :mod:`bayescv.cv.learners`
(:data:`~bayescv.cv.LEARNERS`, :func:`~bayescv.cv.make_learner`).
"""

from __future__ import annotations

from collections.abc import Callable

from bayescv.compare.scenarios import (
    BatesLogistic,
    GaussianLinear,
    MultiSourceErrorRate,
    MultiSourceLinear,
    MultiSourceLogistic,
    ResampledSources,
    Scenario,
)

__all__ = ["SCENARIOS", "make_scenario"]

#: Scenario names and what they build (defaults of each class).
SCENARIOS: dict[str, Callable[..., Scenario]] = {
    "bates-logistic": lambda **kw: BatesLogistic(bayes_error=0.33, **kw),
    "bates-logistic-22": lambda **kw: BatesLogistic(bayes_error=0.225, **kw),
    "gaussian-linear": GaussianLinear,
    "multi-source-logistic": MultiSourceLogistic,
    "multi-source-linear": MultiSourceLinear,
    "multi-source-error-rate": MultiSourceErrorRate,
    "multi-source-student-t": lambda **kw: MultiSourceLinear(
        points_per_source=list(range(20, 120, 10)), noise_df=3.0, **kw
    ),
    "star": ResampledSources.star,
}

_MULTI = (
    "multi-source-logistic", "multi-source-linear", "multi-source-error-rate",
    "multi-source-student-t", "star",
)  # fmt: skip


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
        With ``catalogue_name`` set to `name`, which studies show (a scenario built under
        another name than its class's, such as ``"multi-source-student-t"``, keeps it).

    Examples
    --------
    >>> make_scenario("multi-source-linear", design="sources_redrawn").design
    'sources_redrawn'
    >>> make_scenario("multi-source-student-t").catalogue_name
    'multi-source-student-t'
    """
    if name not in SCENARIOS:
        raise ValueError(f"unknown scenario {name!r}; known: {', '.join(SCENARIOS)}")
    kwargs = {k: v for k, v in {"design": design, "scheme": scheme}.items() if v is not None}
    if kwargs and name not in _MULTI:
        raise ValueError(f"scenario {name!r} is i.i.d.: it takes no design or scheme")
    scenario = SCENARIOS[name](**kwargs)
    scenario.catalogue_name = name
    return scenario
