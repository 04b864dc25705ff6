"""A methods researcher's coverage study, run as the docs say: own method, options, plots.

Each test reproduces a defect found by using :mod:`bayescv.compare` by hand (tested against
the code before the fix).
"""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
import xarray as xr

from bayescv.compare import (
    GaussianLinear,
    Method,
    register_method,
    run_study,
    summarize,
    unregister_method,
)
from bayescv.compare.plots import plot_coverage, plot_summary, plot_theta
from bayescv.intervals import interval_dataset

SMALL = GaussianLinear(n=40, coef=[1.0, 1.0], n_splits=4)
SETTINGS = {"methods": ["naive_points", "theta_5"], "n_replicates": 5, "random_state": 0}


def _wide(context, names):
    """A user's method whose interval, mean ± 100, covers every truth of SMALL."""
    mu = float(context.moments["S"].sum() / context.moments["n"].sum())
    return interval_dataset(names, estimate=[mu], lower=[mu - 100], upper=[mu + 100],
                            se=[50.0], level=context.level, target="err")  # fmt: skip


def _fails(context, names):
    raise RuntimeError("my estimator broke")


@pytest.fixture(scope="module")
def study():
    return run_study(SMALL, **SETTINGS)


@pytest.fixture
def user_methods():
    register_method(Method("wide", _wide, "err"))
    register_method(Method("fails", _fails, "err"))
    yield
    unregister_method("wide")
    unregister_method("fails")


def test_one_name_given_as_a_string_is_one_name(study):
    # Before: each string was split into letters, "cannot compute ['e', 'r', 'r', '_', ...]",
    # "target(s) ['e', 'r', 'r'] are not meaningful", "method(s) ['t', 'h', ...] not in".
    only = run_study(SMALL, truths="err_xy", **SETTINGS)
    assert only["target"].values.tolist() == ["err_xy"]
    summary = summarize(study, targets="err")
    assert summary["target"].values.tolist() == ["err"]
    ax = plot_theta(study, methods="theta_5")
    assert len(ax.get_xticklabels()) == 1
    ax = plot_summary(summarize(study), targets="err")
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "err" in legend
    assert "err_xy" not in legend
    plt.close("all")


def test_a_name_given_twice_is_refused(study):
    # Before: targets=["err", "err"] gave a summary with the target coordinate twice.
    with pytest.raises(ValueError, match=r"targets: \['err'\] given more than once"):
        summarize(study, targets=["err", "err"])


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("n_jobs", "two"),  # was TypeError: '<' not supported between 'str' and 'int'
        ("n_jobs", 2.5),  # was accepted
        ("n_jobs", True),
        ("flush_interval", "x"),  # was TypeError: '>' not supported between 'str' and 'int'
        ("flush_interval", -1.0),  # was accepted
        ("inner_threads", 0),  # was accepted
    ],
)
def test_bad_worker_settings_are_refused_naming_the_setting(option, value):
    with pytest.raises(ValueError, match=rf"{option} must be .* got {value!r}"):
        run_study(SMALL, **{**SETTINGS, option: value})


def test_studies_of_one_seed_stacked_and_renumbered_are_refused(study):
    # Before: the way out the replicate-label error gave (renumber) counted the same data sets
    # twice, and a 0.95 and a 0.80 study of one seed were summarised as one 95 % study.
    other = run_study(SMALL, **{**SETTINGS, "level": 0.8})
    stacked = xr.concat([study, other], dim="replicate")
    renumbered = stacked.assign_coords(replicate=np.arange(stacked.sizes["replicate"]))
    with pytest.raises(ValueError, match="5 replicate\\(s\\) repeat another's seed"):
        summarize(renumbered)
    fresh = run_study(SMALL, **{**SETTINGS, "random_state": 1})
    ok = xr.concat([study, fresh], dim="replicate").assign_coords(replicate=np.arange(10))
    assert summarize(ok).attrs["n_replicates"] == 10


def test_error_bars_at_full_coverage_reach_the_exact_bound(user_methods):
    # Before: at 100 % coverage the bar had zero length (coverage_se = 0), as if the coverage
    # were exact, where summary_table prints "100.0 (≥ 54.9)" for 5 replicates.
    summary = summarize(run_study(SMALL, **{**SETTINGS, "methods": ["naive_points", "wide"]}))
    wide = summary.sel(method_name="wide", target="err")
    assert float(wide["coverage"]) == 1.0
    assert int(wide["n_valid"]) == 5
    bound = 0.05 ** (1 / 5)  # exact one-sided 95 % bound for 5 of 5
    ax = plot_coverage({10: summary, 20: summary}, target="err", methods=["wide"])
    segments = ax.containers[0].lines[2][0].get_segments()
    assert [s[0][1] for s in segments] == pytest.approx([bound, bound])
    assert [s[1][1] for s in segments] == pytest.approx([1.0, 1.0])
    ax = plot_summary(summary, targets=["err"], methods=["wide"])
    (bars,) = [c for c in ax.containers if hasattr(c, "errorbar")]
    (segment,) = bars.errorbar.lines[2][0].get_segments()
    assert segment[:, 1].tolist() == pytest.approx([bound, 1.0])
    plt.close("all")


def test_a_failing_method_says_which_method_and_replicate(user_methods):
    # Before: only "RuntimeError: my estimator broke", with no word of the replicate.
    with pytest.raises(RuntimeError, match="my estimator broke") as caught:
        run_study(SMALL, **{**SETTINGS, "methods": ["naive_points", "fails"]})
    note = " ".join(getattr(caught.value, "__notes__", []))
    assert "method 'fails' on replicate 0" in note
    assert "error_score=numpy.nan" in note
