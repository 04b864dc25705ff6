"""Method-comparison studies: coverage of every interval method against known truth.

Scenarios with known truth (:mod:`bayescv.compare.scenarios`), a registry of every interval
method of the package (:mod:`bayescv.compare.registry`), a study runner that is resumable
and runs on joblib or Dask (:func:`run_study`), summaries (:func:`summarize`) and plots
(:mod:`bayescv.compare.plots`). Learners by name come from the one catalogue of
:mod:`bayescv.cv.learners`.
"""

from bayescv.compare.catalog import SCENARIOS, make_scenario
from bayescv.compare.demo import demo_study, save_demo_plot
from bayescv.compare.registry import (
    COSTS,
    Context,
    Method,
    available_methods,
    get_method,
    register_method,
    resolve_methods,
    unavailable_methods,
    unregister_method,
)
from bayescv.compare.scenarios import (
    DESIGNS,
    TRUTHS,
    BatesLogistic,
    Draw,
    GaussianLinear,
    MultiSourceErrorRate,
    MultiSourceLinear,
    MultiSourceLogistic,
    Population,
    ResampledSources,
    Scenario,
    bates_coefficient,
)
from bayescv.compare.study import TIMING_VARIABLES, load_study, run_study
from bayescv.compare.summary import (
    VALID_TARGETS,
    check_design,
    decompose,
    monte_carlo_truths,
    summarize,
    summary_table,
)

__all__ = [
    "COSTS",
    "DESIGNS",
    "SCENARIOS",
    "TIMING_VARIABLES",
    "TRUTHS",
    "VALID_TARGETS",
    "BatesLogistic",
    "Context",
    "Draw",
    "GaussianLinear",
    "Method",
    "MultiSourceErrorRate",
    "MultiSourceLinear",
    "MultiSourceLogistic",
    "Population",
    "ResampledSources",
    "Scenario",
    "available_methods",
    "bates_coefficient",
    "check_design",
    "decompose",
    "demo_study",
    "get_method",
    "load_study",
    "make_scenario",
    "monte_carlo_truths",
    "register_method",
    "resolve_methods",
    "run_study",
    "save_demo_plot",
    "summarize",
    "summary_table",
    "unavailable_methods",
    "unregister_method",
]
