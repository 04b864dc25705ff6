"""Defects found by a new-user pass over the Bayesian comparison of learners and its plots.

Each test reproduces one defect with default arguments. Reference values: the labels given to
the builders, the identity p_better + p_equivalent + p_worse = 1, and the rule of
:func:`bayescv.plots._shorten` (start and end of a label around "…").
"""

from __future__ import annotations

import warnings

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

import bayescv
from bayescv.fold_scores import fold_table
from bayescv.losses import from_arrays
from bayescv.plots import plot_best, plot_comparison

LONG = (
    "Pipeline(StandardScaler(), PolynomialFeatures(degree=2), "
    "LogisticRegression(C=10.0, max_iter=1000))"
)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _scores(names, gains, seed=0, J=30):
    rng = np.random.default_rng(seed)
    base = rng.normal(0.8, 0.02, J)
    return {n: base + g + rng.normal(0, 0.01, J) for n, g in zip(names, gains, strict=True)}


def _overlap(a, b):
    """Whether two display-space bounding boxes overlap (with a one-pixel margin)."""
    return a.x0 < b.x1 - 1 and b.x0 < a.x1 - 1 and a.y0 < b.y1 - 1 and b.y0 < a.y1 - 1


# paired_comparison: a block labelled like a summary row replaced that row -------------------


def test_paired_comparison_keeps_blocks_named_like_its_summary_rows():
    # Before: blocks "ose", "expected_cv", "new_source" and the summaries shared the `target`
    # labels; the dict of draws kept one of each, so 4 rows came back for 4 blocks + 3
    # summaries, and the blocks' rows were silently replaced by the summaries' values.
    pytest.importorskip("pymc")
    from bayescv.bayes import paired_comparison

    rng = np.random.default_rng(0)
    labels = ["ose", "expected_cv", "new_source", "d"]
    block = np.repeat(labels, 40)
    a = from_arrays(rng.normal(1.0, 0.2, 160), block, scheme="source")
    b = a.copy(data={"loss": a["loss"].values + rng.normal(0.3, 0.1, 160)})
    idata, s = paired_comparison(a, b, rope=0.05, random_state=0)
    assert s.sizes["target"] == 4 + 3  # one row per block, one per summary
    targets = [str(t) for t in s["target"].values]
    assert len(set(targets)) == len(targets)
    # The summary rows keep their names and values (compare_learners reads them by name).
    post = idata.posterior
    for name, var in (
        ("expected_cv", "expected_cv"),
        ("ose", "ose"),
        ("new_source", "new_source"),
    ):
        assert float(s["mean"].sel(target=name)) == pytest.approx(float(post[var].mean()))
        assert s["block"].sel(target=name).item() == ""
    # Every block has its own row, the partially pooled mean of its difference.
    for label in labels:
        row = s.where(s["block"] == label, drop=True)
        assert row.sizes["target"] == 1
        expected = float(post["mu_pooled"].sel(block=label).mean())
        assert float(row["mean"].item()) == pytest.approx(expected)
    total = s["p_better"] + s["p_equivalent"] + s["p_worse"]
    np.testing.assert_allclose(total.values, 1.0)  # three disjoint regions


# plot_best / plot_comparison: legends inside the axes hid the data ------------------------


def test_plot_best_legend_hides_no_bar():
    # Before: the legend sat at the lower right inside the axes; with a wide ROPE every
    # learner is within it of the best (P = 1, full-width bars) and it covered the last one.
    t = fold_table(_scores([f"l{i}" for i in range(5)], np.arange(5) * 0.002), runs=3,
                   metric="accuracy")  # fmt: skip
    ax = plot_best(bayescv.compare_several(t, rope=0.1, random_state=0))
    fig = ax.figure
    fig.canvas.draw()
    legend = ax.get_legend().get_window_extent()
    bars = [p.get_window_extent() for p in ax.patches if p.get_width() > 0]
    assert bars
    assert not any(_overlap(legend, bar) for bar in bars)


def test_plot_comparison_legend_hides_no_density():
    t = fold_table(_scores(["tree", "logistic"], [0.0, 0.01]), runs=3, metric="accuracy")
    ax = plot_comparison(bayescv.correlated_ttest(t, rope=0.03))
    ax.figure.canvas.draw()
    legend = ax.get_legend().get_window_extent()
    assert not _overlap(legend, ax.get_window_extent())


# a very long learner name squeezed the plots to nothing -----------------------------------


def test_plot_best_shortens_a_long_learner_name():
    # Before: a pipeline's repr as a tick label left the panels a sliver of the figure.
    t = fold_table(_scores([LONG, "tree", "knn"], [0.01, 0.0, 0.005]), runs=3,
                   metric="accuracy")  # fmt: skip
    ax = plot_best(bayescv.compare_several(t, rope=0.01, random_state=0))
    ax.figure.canvas.draw()
    labels = [t.get_text() for t in ax.get_yticklabels()]
    short = f"{LONG[:15]}…{LONG[-14:]}"  # _shorten's rule, limit 30
    assert short in labels
    assert "tree" in labels
    assert ax.get_position().width > 0.25, ax.get_position()


def test_plot_comparison_shortens_a_long_learner_name():
    t = fold_table(_scores([LONG, "tree"], [0.01, 0.0]), runs=3, metric="accuracy")
    ax = plot_comparison(bayescv.correlated_ttest(t, rope=0.01))
    ax.figure.canvas.draw()
    short = f"{LONG[:15]}…{LONG[-14:]}"
    assert short in ax.get_xlabel()
    assert LONG not in ax.get_xlabel()
    assert ax.get_position().width > 0.6, ax.get_position()


def test_long_names_that_share_their_ends_stay_distinct():
    names = [f"{'x' * 20}{i}{'y' * 20}" for i in range(3)]
    t = fold_table(_scores(names, [0.0, 0.01, 0.02]), runs=3, metric="accuracy")
    ax = plot_best(bayescv.compare_several(t, random_state=0))
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert len(set(labels)) == 3


# identical learners: the point mass sat on the axes' edge ---------------------------------


@pytest.mark.parametrize("rope", [0.0, 0.01])
def test_plot_comparison_of_identical_learners_shows_the_point_mass(rope):
    # Before: with rope 0 the axis ran from 0 to 1 and the mass at 0 lay on the left spine.
    base = _scores(["tree"], [0.0])["tree"]
    t = fold_table({"tree": base, "same": base.copy()}, runs=3, metric="accuracy")
    res = bayescv.correlated_ttest(t, rope=rope)
    assert res["flag"].item() == "zero_variance"
    ax = plot_comparison(res)
    lo, hi = ax.get_xlim()
    assert lo < 0 < hi  # the mass at 0 inside the axes, not on a spine
    assert lo == pytest.approx(-hi)  # centred: the ROPE drawn symmetric
    assert hi >= 1.5 * rope


# several data sets: the figure drew the first without saying so ---------------------------


def test_plots_name_the_data_set_they_draw():
    rng = np.random.default_rng(0)
    scores = rng.normal(0.8, 0.02, (2, 3, 30)) + np.array([0.0, 0.01, 0.02])[None, :, None]
    t = fold_table(scores, runs=3, learners=["a", "b", "c"], datasets=["iris", "wine"],
                   metric="accuracy")  # fmt: skip
    ax = plot_comparison(bayescv.correlated_ttest(t, rope=0.01), dataset="wine")
    assert "data set wine of 2" in ax.get_legend().get_title().get_text()
    ax = plot_best(bayescv.compare_several(t, random_state=0), dataset="wine")
    assert "data set wine of 2" in ax.get_legend().get_title().get_text()


# plot_targets: a random K-fold fit's expected_cv was titled "sources at hand" -------------


def test_plot_targets_of_random_kfold_does_not_speak_of_sources():
    pytest.importorskip("pymc")
    from bayescv.bayes import fit, plot_targets

    rng = np.random.default_rng(0)
    table = from_arrays(rng.gamma(2, 1, 100), np.repeat(np.arange(5), 20), scheme="random")
    axes = plot_targets(fit(table, random_state=0))
    titles = [ax.get_title() for ax in axes]
    assert titles[0] == "expected_cv (data at hand)"
    assert not any("source" in t for t in titles)


# plot_targets had no x label, and a paired fit's axis did not say it was A − B ------------


def test_plot_targets_labels_the_axis_and_a_paired_fit_says_a_minus_b():
    pytest.importorskip("pymc")
    from bayescv.bayes import fit, paired_comparison, plot_ppc, plot_targets

    rng = np.random.default_rng(0)
    blocks = np.repeat(np.arange(5), 20)
    a = from_arrays(rng.gamma(2, 1, 100), blocks, scheme="random", loss_name="squared")
    b = from_arrays(rng.gamma(2, 1, 100) + 0.1, blocks, scheme="random", loss_name="squared")
    idata = fit(a, random_state=0)
    labels = [ax.get_xlabel() for ax in plot_targets(idata)]
    assert labels == ["expected loss (squared error)", "variance of the CV estimate"]
    paired, _ = paired_comparison(a, b, rope=0.01, random_state=0)
    assert plot_targets(paired)[0].get_xlabel().startswith("difference of expected losses, A − B")
    # plot_ppc's legend sits above the panel, where it cannot cover an error bar
    legend = plot_ppc(idata)[0].get_legend()
    assert legend.get_bbox_to_anchor().transformed(legend.axes.transAxes.inverted()).y0 >= 1


def test_bayes_paired_comparison_keeps_its_intervals_inside_the_range_of_a_difference():
    # 0-1 losses differ by at most 1 either way; the Gaussian model of their differences does
    # not know that: on four sources of three points whose learners always disagree, the
    # new-source interval reached [-1.79, 1.68] (seed 0), with no flag.
    from bayescv.bayes import paired_comparison

    rng = np.random.default_rng(1)
    block = np.repeat(np.arange(4), 3)
    x = rng.choice([0.0, 1.0], 12)
    a = from_arrays(x, block, loss_name="zero_one", scheme="source")
    b = from_arrays(1.0 - x, block, loss_name="zero_one", scheme="source")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a SamplingWarning is not what this test is about
        _, s = paired_comparison(a, b, rope=0.0, random_state=0)
    assert float(s["lower"].min()) >= -1.0
    assert float(s["upper"].max()) <= 1.0
    moved = np.array(["truncated_to_range" in f for f in s["flag"].values])
    assert moved[list(s["target"].values).index("new_source")]
    assert np.all((s["lower"].values[moved] == -1.0) | (s["upper"].values[moved] == 1.0))
