"""Plots used as in a notebook, with default arguments: what is drawn is what was passed.

Each test reads the drawn artists back (tick labels, error-bar data, lines, texts) and
compares them with numbers computed here from the inputs (pandas group means, scipy's t
density, the summary's own variables), never with values copied from the plotting code.
"""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.container import ErrorbarContainer
from scipy import stats

from bayescv.compare import MultiSourceLinear, decompose, run_study, summarize
from bayescv.compare.plots import plot_coverage, plot_decomposition, plot_summary, plot_theta
from bayescv.fold_scores import fold_table
from bayescv.learner_comparison import correlated_ttest
from bayescv.losses import from_arrays
from bayescv.plots import plot_block_losses, plot_comparison


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _gamma_table(labels, per_block=4, seed=0, loss_name="squared"):
    rng = np.random.default_rng(seed)
    blocks = np.repeat(np.asarray(labels), per_block)
    return from_arrays(
        rng.gamma(2.0, 1.0, blocks.size), blocks, scheme="source", loss_name=loss_name
    )


@pytest.fixture(scope="module")
def study():
    """A small source study: three closed-form methods, 12 replicates (about 2 s)."""
    return run_study(
        MultiSourceLinear(4, 8),
        methods=["naive_points", "theta_B_weighted", "bayle_within"],
        n_replicates=12,
        level=0.9,
        random_state=0,
    )


# plot_block_losses ------------------------------------------------------------------------


def test_block_plot_draws_the_labels_only_a_later_table_has():
    """Sources 7-9 of the second table were silently dropped (only the first's were drawn).

    Every (table, source) mean drawn must equal pandas' groupby mean of that table's losses,
    and each table's every source must appear among the tick labels.
    """
    first = _gamma_table(list(range(7)), seed=1)
    second = _gamma_table([7, 8, 9], seed=2)
    ax = plot_block_losses({"first": first, "second": second}, by="source")
    ticks = [int(t.get_text()) for t in ax.get_xticklabels()]
    assert sorted(ticks) == list(range(10))
    for container, table in zip(ax.containers, (first, second), strict=True):
        means = pd.Series(table["loss"].values).groupby(table["source"].values).mean()
        x, y = container.lines[0].get_data()
        drawn = {ticks[round(xi)]: yi for xi, yi in zip(x, y, strict=True) if np.isfinite(yi)}
        assert drawn.keys() == set(means.index)
        np.testing.assert_allclose([drawn[k] for k in means.index], means.values)


def test_block_plot_refuses_tables_of_different_losses():
    """Squared and absolute losses on one y axis labelled "mean squared loss" mislabel one.

    The refusal names both losses and the way out (one axes per table).
    """
    labels = list(range(4))
    squared = _gamma_table(labels, loss_name="squared")
    absolute = _gamma_table(labels, loss_name="absolute")
    with pytest.raises(ValueError, match=r"different losses.*absolute.*squared.*own axes"):
        plot_block_losses({"sq": squared, "abs": absolute})
    # tables of one loss still share the axis, and its label names the loss
    ax = plot_block_losses({"a": squared, "b": _gamma_table(labels, seed=5)})
    assert ax.get_ylabel() == "mean squared error ± 1 SE"


def test_block_plot_keeps_long_labels_that_differ_in_the_middle_distinct():
    """100 hospitals "hospital_000_..._region_north" were all ticked "hospital_0…ion_north".

    Distinct blocks must keep distinct tick labels, and each label shown must still name
    its block: its start and end are the block's own.
    """
    labels = [f"hospital_{i:03d}_very_long_name_region_north" for i in range(100)]
    table = _gamma_table(labels, per_block=3)
    ax = plot_block_losses(table)
    shown = [t.get_text() for t in ax.get_xticklabels()]
    assert len(set(shown)) == len(shown)
    means = pd.Series(table["loss"].values).groupby(table["block"].values).mean()
    order = means.sort_values().index
    for x, text in zip(ax.get_xticks(), shown, strict=True):
        head, tail = text.split("…")
        assert order[int(x)].startswith(head)
        assert order[int(x)].endswith(tail)


# plot_comparison ---------------------------------------------------------------------------


def test_comparison_density_is_drawn_at_its_peak_under_a_wide_rope():
    """With a ROPE far wider than the posterior, the 400-point grid stepped over the peak.

    The drawn curve's maximum must be the Student-t density at its location (its mode), to
    1 %, and the drawn curve must integrate to about 1 (it is a density).
    """
    rng = np.random.default_rng(3)
    scores = rng.normal([[0.80], [0.81]], 0.002, size=(2, 50))
    result = correlated_ttest(fold_table(scores, runs=5, greater_is_better=True), rope=5.0)
    loc, scale, df = (float(result[v].item()) for v in ("mean", "scale", "df"))
    ax = plot_comparison(result)
    x, y = (np.asarray(v, float) for v in ax.lines[0].get_data())
    assert y.max() == pytest.approx(stats.t.pdf(loc, df, loc, scale), rel=0.01)
    assert np.trapezoid(y, x) == pytest.approx(1.0, abs=0.01)


def test_comparison_axes_say_the_losses_are_a_negated_score():
    """Accuracies enter as losses −accuracy (fold_table's greater_is_better=True): plot_best's
    axis read "expected loss" under values near −0.8, a loss no reader can place.

    The drawn interval centres are compare_several's means, which are minus the mean accuracy
    of each learner's folds (an exact identity of fold_table's negation).
    """
    from bayescv.learner_comparison import compare_several
    from bayescv.plots import plot_best

    rng = np.random.default_rng(4)
    scores = rng.normal([[0.80], [0.82], [0.78]], 0.02, size=(3, 20))
    table = fold_table(scores, runs=2, greater_is_better=True, metric="accuracy")
    best = compare_several(table, rope=0.01, random_state=0)
    ax = plot_best(best)
    right = ax.figure.axes[1]
    assert right.get_xlabel() == "expected loss (−accuracy)\n(95% interval)"
    drawn = np.sort(np.asarray(right.containers[0].lines[0].get_xdata(), float))
    np.testing.assert_allclose(drawn, np.sort(-scores.mean(axis=1)))
    pair = correlated_ttest(table.sel(learner=["A", "B"]), rope=0.01)
    assert (
        plot_comparison(pair)
        .get_xlabel()
        .startswith("difference of expected losses (−accuracy),\nA − B")
    )


# plot_targets ------------------------------------------------------------------------------


def test_targets_plot_shows_the_fits_flags_and_its_level():
    """A fit whose diagnostics failed drew clean histograms, and the level was nowhere.

    Each panel must carry the flags posterior_intervals gives its row (θ those of the fit),
    and the interval's legend entry the level passed.
    """
    pytest.importorskip("pymc")
    from bayescv.bayes import fit, plot_ppc, plot_targets, posterior_intervals

    idata = fit(_gamma_table([f"s{i}" for i in range(6)], per_block=10), random_state=0)
    idata.sample_stats.attrs["problems"] = "r̂ 1.2 > 1.01 (set here to test the figure)"
    rows = posterior_intervals(idata, level=0.8)
    assert all("not_converged" in str(f) for f in rows["flag"].values)
    axes = plot_targets(idata, level=0.8)
    # gamma losses declare [0, inf): a lognormal population, whose ose and new_source rows
    # report (and the panels mark) the posterior median
    assert idata.sample_stats.attrs["population"] == "lognormal"
    centres = ["posterior mean", "posterior median", "posterior median", "posterior mean"]
    for ax, centre in zip(axes, centres, strict=True):
        texts = [t.get_text() for t in ax.texts]
        assert any("not_converged" in t for t in texts), ax.get_title()
        entries = [t.get_text() for t in ax.get_legend().get_texts()]
        assert "80% equal-tailed interval" in entries
        assert centre in entries
    # the posterior predictive check of that fit says so too; the prior's does not depend on it
    assert "flagged: not_converged" in [t.get_text() for t in plot_ppc(idata)[2].texts]
    assert len(plot_ppc(idata, group="prior")[2].texts) == 0
    # every panel of the check says what its y axis counts, with the table's loss
    ppc = plot_ppc(idata)
    assert [ax.get_ylabel() for ax in ppc] == [
        "mean loss (squared error)",
        "variance of the losses (squared error)",
        "posterior predictive draws",
    ]


# compare.plots -----------------------------------------------------------------------------


def test_coverage_plot_refuses_summaries_of_different_levels(study):
    """The nominal line of the first summary (90 %) was drawn for a 95 % study too."""
    at_90 = summarize(study)
    other = study.copy()
    other.attrs = {**study.attrs, "level": 0.95}
    with pytest.raises(ValueError, match="different nominal levels"):
        plot_coverage({10: at_90, 20: summarize(other)}, target="err_xy")


def test_coverage_plot_keeps_a_setting_of_zero(study):
    """A setting of 0 (no heterogeneity) vanished from the log x axis without a word.

    Every setting's point must lie within the x limits, at the summary's coverage.
    """
    s = summarize(study)
    ax = plot_coverage({0.0: s, 0.5: s, 1.0: s}, target="err_xy", xlabel="τ")
    lo, hi = ax.get_xlim()
    assert ax.get_xscale() == "linear"
    x, y = (np.asarray(v, float) for v in ax.containers[0].lines[0].get_data())
    assert lo < x.min()
    assert x.max() < hi
    expected = s["coverage"].sel(method_name="naive_points", target="err_xy").item()
    np.testing.assert_allclose(y, expected)


def test_coverage_plot_refuses_settings_that_are_not_numbers(study):
    """String keys were sorted as text ("M=100" before "M=20") on a log axis."""
    s = summarize(study)
    with pytest.raises(ValueError, match="keyed by the setting's number"):
        plot_coverage({"M=20": s, "M=100": s}, target="err_xy")


def _part_undefined(study):
    """The study with bayle_within undefined everywhere, theta_B_weighted in 8 of 12."""
    out = study.copy(deep=True)
    for v in ("lower", "upper", "theta_hat", "estimate", "se"):
        out[v].loc[{"method_name": "bayle_within"}] = np.nan
        out[v].loc[{"method_name": "theta_B_weighted", "replicate": slice(0, 7)}] = np.nan
    return out


def test_theta_plot_names_boxes_of_fewer_replicates(study):
    """Non-finite θ̂ were dropped silently: an empty box, a box over 4 of 12 looked whole."""
    ax = plot_theta(_part_undefined(study))
    shown = [t.get_text() for t in ax.get_xticklabels()]
    n = study.sizes["replicate"]
    finite = np.isfinite(study["theta_hat"].sel(method_name="theta_B_weighted").values[8:])
    assert shown == [
        "naive_points",
        f"theta_B_weighted\n({int(finite.sum())} of {n} θ̂)",
        "bayle_within\n(no θ̂)",
    ]


def test_summary_plot_marks_undefined_intervals_and_draws_whole_error_bars(study):
    """A method without intervals left an empty slot; bars over 4 of 12 looked complete.

    Tick labels must give the summary's ``undefined`` share, a bar without coverage must
    read "none", and the y axis must hold every error bar whole: coverage ± 2 MC s.e.,
    clipped to [0, 1] (the bar of naive_points reaches 100 %).
    """
    s = summarize(_part_undefined(study))
    ax = plot_summary(s, targets=["err_xy"])
    undefined = s["undefined"].values
    shown = [t.get_text() for t in ax.get_xticklabels()]
    assert shown[1] == f"theta_B_weighted\n({100 * undefined[1]:.0f}% undefined)"
    assert shown[2] == "bayle_within\n(100% undefined)"
    assert [t.get_text() for t in ax.texts] == ["none"]
    lo, hi = ax.get_xlim()
    assert lo < ax.texts[0].get_position()[0] < hi
    part = s.sel(target="err_xy")
    coverage, se = part["coverage"].values, part["coverage_se"].values
    high = np.clip(coverage + 2 * se, 0.0, 1.0)
    assert np.nanmax(high) == 1.0  # a bar that reaches 100 %: its cap must show
    (bars,) = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    (segments,) = bars.lines[2]
    tops = [seg[:, 1].max() for seg in segments.get_segments() if len(seg)]  # none: no bar
    np.testing.assert_allclose(tops, high[np.isfinite(coverage)])
    assert 1.0 < ax.get_ylim()[1] <= 1.1
    assert "nominal 90%" in [t.get_text() for t in ax.get_legend().get_texts()]


def test_decomposition_plot_marks_a_negative_term(study):
    """On the log axis a negative γ term was drawn as |γ| with nothing to tell it apart.

    The negated term (an exact sign flip of decompose's result) must be circled at |term|.
    """
    dec = decompose(study)
    for term in ("omega_term", "gamma_term"):  # every term positive but the one flipped
        dec[term] = abs(dec[term])
    flipped = dec.copy()
    flipped["gamma_term"] = -dec["gamma_term"]
    ax = plot_decomposition({10: dec, 20: flipped, 40: dec})
    (marks,) = ax.collections
    np.testing.assert_allclose(marks.get_offsets(), [[20.0, abs(dec["gamma_term"].item())]])
    entries = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "open: negative term, drawn as |term|" in entries


def test_comparison_of_a_numbered_data_set_names_the_text_label():
    """fold_table labels data sets "0", "1", ...: dataset=1 was refused with no way out.

    The message must give the label to pass, and that label must draw data set "1".
    """
    rng = np.random.default_rng(5)
    table = fold_table(rng.normal(0.8, 0.02, size=(3, 2, 20)), runs=2, greater_is_better=True)
    result = correlated_ttest(table, rope=0.01)
    with pytest.raises(ValueError, match=r"labels are text, pass dataset='1'"):
        plot_comparison(result, dataset=1)
    ax = plot_comparison(result, dataset="1")
    assert "data set 1 of 3" in ax.get_legend().get_title().get_text()


def test_interval_plot_shows_intervals_of_zero_width(study):
    """Intervals with lower = upper were vertical lines of length 0: 12 misses, nothing drawn.

    Each replicate's interval ends must be drawn at its point (twice, one cap per end).
    """
    from bayescv.compare.plots import plot_intervals

    point = study.copy(deep=True)
    estimate = point["estimate"].sel(method_name="naive_points")
    point["lower"].loc[{"method_name": "naive_points"}] = estimate
    point["upper"].loc[{"method_name": "naive_points"}] = estimate
    ax = plot_intervals(point, method="naive_points", target="err_xy")
    drawn = np.concatenate([np.asarray(c.get_offsets())[:, 1] for c in ax.collections[1::2]])
    np.testing.assert_allclose(np.sort(drawn), np.sort(np.repeat(estimate.values, 2)))
