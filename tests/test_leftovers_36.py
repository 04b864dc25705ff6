"""Small defects: the nested-CV progress bar, a constant difference, the predictive check."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
from sklearn.datasets import make_regression
from sklearn.linear_model import LinearRegression

import bayescv.nested._interval as nested_interval
from bayescv._extras import progress_bar
from bayescv.fold_scores import fold_table
from bayescv.learner_comparison import correlated_ttest
from bayescv.nested import nested_cv


def test_nested_cv_progress_bar_names_the_extra_plain_repetitions(monkeypatch):
    # n_repeats=3 nested repetitions plus ceil(3/5) = 1 extra plain-CV repetition for the
    # bias term: the bar counts 4, and its label must say why.
    seen = []

    def spy(*args, **kwargs):
        seen.append(kwargs)
        return progress_bar(*args, **{**kwargs, "disable": True})

    monkeypatch.setattr(nested_interval, "progress_bar", spy)
    X, y = make_regression(n_samples=40, n_features=2, noise=1.0, random_state=0)
    nested_cv(LinearRegression(), X, y, n_splits=4, n_repeats=3, random_state=0, progress=True)
    (bar,) = seen
    assert bar["total"] == 4
    assert "3 nested" in bar["desc"]
    assert "1 plain" in bar["desc"]


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ([-0.02] * 10, [0.0] * 10),  # x.var centred on the rounded mean: ~1e-36, not 0
        # differences equal up to the rounding of a - b (0.1 - 0.12 != 0.2 - 0.22 in floats)
        ([0.1, 0.2, 0.3, 0.4, 0.5] * 2, [0.12, 0.22, 0.32, 0.42, 0.52] * 2),
    ],
)
def test_correlated_ttest_constant_difference_is_a_point_mass(a, b):
    table = fold_table([a, b], learners=["a", "b"], greater_is_better=False)
    out = correlated_ttest(table, rope=0.01)
    assert float(out["scale"].item()) == 0.0
    assert str(out["flag"].item()) == "zero_variance"
    # a point mass at -0.02, left of the rope [-0.01, 0.01]: a is better for certain
    assert float(out["p_better"].item()) == 1.0
    assert float(out["lower"].item()) == float(out["upper"].item())


def test_correlated_ttest_small_real_spread_keeps_its_scale():
    # a spread of 1e-9 on losses of order 1 is far above rounding: still a t posterior
    a = np.array([0.1, 0.2, 0.3, 0.4, 0.5] * 2)
    b = a + 0.02 + 1e-9 * np.arange(10)
    table = fold_table([a, b], learners=["a", "b"], greater_is_better=False)
    x = a - b
    # Corani & Benavoli's scale with baycomp's rho = 1/K, K = 10 folds of a 1 x 10 table
    expected = np.sqrt(x.var(ddof=1) * (1 / 10 + 1 / 9))
    out = correlated_ttest(table)
    assert float(out["scale"].item()) == pytest.approx(expected, rel=1e-6)
    assert str(out["flag"].item()) == ""


def test_plot_ppc_marks_the_loss_range():
    from bayescv.bayes import fit, plot_ppc
    from bayescv.losses import from_arrays

    # Skewed squared errors in small blocks: the normal population's predictive interval of a
    # block mean reaches below 0, where no mean squared error can lie. (The default for
    # squared errors, a lognormal population, replicates the block means on the log scale:
    # they stay above 0.)
    rng = np.random.default_rng(0)
    block = np.repeat(np.arange(6), 8)
    loss = rng.exponential(1.0, block.size) ** 2
    table = from_arrays(loss, block, scheme="source", loss_name="squared")
    idata = fit(table, random_state=1, population="normal")
    assert idata.sample_stats.attrs["loss_range"][0] == 0.0
    default = fit(table, random_state=1)
    assert default.sample_stats.attrs["population"] == "lognormal"
    assert float(default.posterior_predictive["ybar"].min()) > 0
    axes = plot_ppc(idata)
    try:
        lows = [line.get_segments() for line in axes[0].collections]
        lowest = min(seg[:, 1].min() for segs in lows for seg in segs)
        assert lowest < 0  # the case the shading is for
        handles, labels = axes[0].get_legend_handles_labels()
        assert "edge of the loss range" in labels
        edge = handles[labels.index("edge of the loss range")]
        assert list(edge.get_ydata()) == [0.0, 0.0]
        # the region below 0 is shaded, from the lowest bound up to the edge
        (span,) = [p for p in axes[0].patches if p.get_facecolor()[3] < 1]
        ys = span.get_path().transformed(span.get_patch_transform()).vertices[:, 1]
        assert ys.max() == pytest.approx(0.0)
        assert ys.min() == pytest.approx(lowest)
    finally:
        plt.close(axes[0].figure)
