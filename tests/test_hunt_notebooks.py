"""Figures as the tutorial notebooks use them: titled by the user, in narrow panels, compared.

Each test reproduces what a reader of an executed notebook saw: a legend printed over the
title the notebook set (coverage summary, notebook 04), tick labels run together on the
interval panel of :func:`bayescv.plots.plot_best` (notebook 03) and on the θ panel of
:func:`bayescv.bayes.plot_targets`, and a method of the same coverage as another hidden
under it (notebook 04: ``naive_points`` under ``theta_A``). Reference values are the drawn
artists' own extents in display pixels and the summaries passed in.
"""

from __future__ import annotations

import warnings

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

from bayescv.compare import MultiSourceLinear, run_study, summarize
from bayescv.compare.plots import plot_coverage, plot_summary
from bayescv.fold_scores import fold_table
from bayescv.learner_comparison import compare_several, correlated_ttest
from bayescv.losses import from_arrays
from bayescv.plots import plot_best, plot_comparison


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def study():
    """A small source study of two closed-form methods, 10 replicates (about 1 s)."""
    return run_study(
        MultiSourceLinear(4, 8),
        methods=["naive_points", "theta_B_weighted"],
        n_replicates=10,
        random_state=0,
    )


def _accuracies():
    """Three learners' accuracies in 10 folds, near 1 as on the wine data of notebook 03."""
    rng = np.random.default_rng(0)
    return np.clip(rng.normal([[0.985], [0.975], [0.90]], 0.08, (3, 10)), 0, 1)


def _renderer(ax):
    ax.figure.canvas.draw()
    return ax.figure.canvas.get_renderer()


def _touching_ticks(ax):
    """Pairs of neighbouring x tick labels in view whose boxes overlap on the canvas."""
    renderer = _renderer(ax)
    lo, hi = sorted(ax.get_xlim())
    labels = [t for t in ax.get_xticklabels() if t.get_text() and lo <= t.get_position()[0] <= hi]
    boxes = [t.get_window_extent(renderer) for t in labels]
    return [
        (labels[i].get_text(), labels[i + 1].get_text())
        for i in range(len(boxes) - 1)
        if boxes[i].x1 > boxes[i + 1].x0
    ]


def _summary_plot(study):
    return plot_summary(summarize(study))


def _best_plot(study):
    return plot_best(compare_several(fold_table(_accuracies(), greater_is_better=True)))


def _comparison_plot(study):
    table = fold_table(_accuracies()[:2], greater_is_better=True)
    return plot_comparison(correlated_ttest(table, rope=0.01))


@pytest.mark.parametrize("draw", [_summary_plot, _best_plot, _comparison_plot])
def test_legend_leaves_room_for_the_title_a_user_sets(study, draw):
    """The legend sat above the axes, where ax.set_title puts the title: both unreadable.

    Notebook 04 titles its coverage summary; its legend entry "err_xy" was printed over it.
    """
    ax = draw(study)
    ax.set_title("coverage of err_xy and err (nominal 90%)")
    renderer = _renderer(ax)
    legend = ax.get_legend().get_window_extent(renderer)
    assert not legend.overlaps(ax.title.get_window_extent(renderer))


def test_best_interval_panel_has_readable_ticks():
    """Expected losses from −1.02 to −0.83 were ticked every 0.025: "−1.000−0.975−0.950"."""
    ax = plot_best(compare_several(fold_table(_accuracies(), greater_is_better=True)))
    panel = ax.figure.axes[1]
    assert panel.get_xlabel().startswith("expected loss")
    assert _touching_ticks(panel) == []


def test_targets_theta_panel_has_readable_ticks():
    """θ draws from 0.0005 to 0.00225 were ticked "0.00050 0.00075 ...", run together."""
    from bayescv.bayes import SamplingWarning, fit, plot_targets

    rng = np.random.default_rng(0)
    block = np.repeat(np.arange(5), 40)
    table = from_arrays(rng.normal(1.0, 0.3, 200) + 0.1 * block, block, scheme="source")
    with warnings.catch_warnings():  # short chains: the not-converged fit is the point
        warnings.simplefilter("ignore", SamplingWarning)
        idata = fit(table, random_state=1, draws=50, tune=50, chains=2)
    theta = idata.posterior["theta"]
    idata.posterior["theta"] = theta.copy(
        data=np.linspace(5e-4, 2.25e-3, theta.size).reshape(theta.shape)
    )
    axes = plot_targets(idata)
    assert axes[-1].get_title().startswith("θ")
    assert [_touching_ticks(ax) for ax in axes] == [[]] * len(axes)


def test_coverage_plot_shows_methods_of_equal_coverage_side_by_side(study):
    """Two methods of equal coverage were drawn at the same points: one line was hidden.

    Each method's points must stay at its coverage and near its setting, but apart.
    """
    s = summarize(study)
    same = s["coverage"].sel(method_name="naive_points").values
    s["coverage"].loc[{"method_name": "theta_B_weighted"}] = same
    ax = plot_coverage({10: s, 30: s, 100: s}, target="expected_cv")
    (x1, y1), (x2, y2) = (
        (np.asarray(v, float) for v in c.lines[0].get_data()) for c in ax.containers
    )
    np.testing.assert_array_equal(y1, y2)
    assert np.all(x1 < x2)
    np.testing.assert_allclose(x1, [10, 30, 100], rtol=0.1)
    np.testing.assert_allclose(x2, [10, 30, 100], rtol=0.1)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["10", "30", "100"]


def test_comparison_of_equal_fold_differences_shows_the_point_mass():
    """Fold differences all -0.02 gave a t scale of about 4e-17, not 0: the density drew as
    a spike on the left edge of the axes and the "A better" region (probability 1) was not
    to be seen. correlated_ttest now gives the exact 0 (tests/test_leftovers_36.py), and the
    plot draws the point mass at -0.02, inside the axes and named as such (it also does so
    for a scale that rounding leaves above 0).
    """
    table = fold_table(
        [[0.90, 0.80, 0.85, 0.82], [0.88, 0.78, 0.83, 0.80]], greater_is_better=True
    )
    result = correlated_ttest(table, rope=0.01)
    assert float(result["scale"].item()) == 0.0
    ax = plot_comparison(result)
    lo, hi = ax.get_xlim()
    assert lo < -0.02 < hi
    (label,) = ax.get_legend_handles_labels()[1]
    assert label.startswith("all mass at -0.02: A better 1.000")


def test_interval_plot_says_it_shows_the_first_replicates_only(study):
    """Notebook 04's panel read "78% of 100 cover err_xy" beside a table of 77.0% over 200.

    The coverage drawn is that of the first `max_replicates`; the axes must say how many of
    the study's replicates those are, and say nothing of the kind when all are drawn.
    """
    from bayescv.compare.plots import plot_intervals

    ax = plot_intervals(study, method="naive_points", target="err_xy", max_replicates=4)
    assert ax.get_xlabel() == "first 4 of 10 replicates (sorted by err_xy)"
    assert "of 4 cover err_xy" in ax.get_title()
    ax = plot_intervals(study, method="naive_points", target="err_xy")
    assert ax.get_xlabel() == "replicate (sorted by err_xy)"
