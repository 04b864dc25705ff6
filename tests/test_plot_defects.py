"""Figures that said something other than what they show, or failed with an obscure error.

Each test reproduces a defect found by a new-user pass over the plots (the figures of
:mod:`bayescv.plots`, :mod:`bayescv.bayes.plots` and :mod:`bayescv.compare.plots`). Reference
values: the mean of a table's points (the CV error), the mean of its first replicate, and the
labels given to the builders. ``filterwarnings = error`` (pyproject.toml) turns matplotlib's
"constrained_layout not applied" warning, raised when a figure is drawn, into a failure.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
import xarray as xr

from bayescv.compare import MultiSourceLinear, decompose, run_study, summarize
from bayescv.compare.plots import plot_coverage, plot_decomposition, plot_intervals
from bayescv.losses import from_arrays, stack_replicates
from bayescv.plots import plot_block_losses

HOSPITALS = [
    f"Community Hospital of {county} County #{i}"
    for i, county in enumerate(["Alameda", "Butte", "Colusa", "Del Norte", "El Dorado"] * 12)
]


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _table(seed, n_blocks=5, per_block=6, scheme="random", labels=None, **kw):
    rng = np.random.default_rng(seed)
    labels = np.arange(n_blocks) if labels is None else np.asarray(labels)
    block = np.repeat(labels, per_block)
    loss = rng.gamma(2.0, 1.0 + np.repeat(np.arange(len(labels)), per_block) / len(labels))
    return from_arrays(loss, block, scheme=scheme, loss_name="squared", **kw)


def _dashed(ax):
    return [line for line in ax.lines if line.get_linestyle() == "--"]


def _texts(ax):
    """Every text of the axes a reader sees: title, legend title and entries."""
    legend = ax.get_legend()
    texts = [ax.get_title()]
    if legend is not None:
        texts += [legend.get_title().get_text()] + [t.get_text() for t in legend.get_texts()]
    return texts


def _shown_ticks(ax):
    return [t.get_text() for t in ax.get_xticklabels() if t.get_text()]


def _minor_labels_in_view(ax):
    lo, hi = sorted(ax.get_xlim())
    return [
        t.get_text()
        for t in ax.get_xticklabels(minor=True)
        if t.get_text() and lo <= t.get_position()[0] <= hi
    ]


# B: a table with a replicate dim shows one replicate and must say which ------------------


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("repeat", "run 1 of 3"),
        ("bootstrap", "bootstrap replicate 1 of 3 (not the observed CV)"),
        ("independent", "data set 1 of 3"),
    ],
)
def test_block_plot_of_replicates_names_the_replicate_shown(kind, expected):
    tables = [_table(seed) for seed in range(3)]
    stacked = stack_replicates(tables, replicate_kind=kind)
    ax = plot_block_losses(stacked)
    (line,) = _dashed(ax)
    first = float(tables[0]["loss"].mean())  # the mean of replicate 0's points
    assert line.get_ydata()[0] == pytest.approx(first)
    assert first != pytest.approx(float(stacked["loss"].mean()))  # not the CV error
    assert expected in line.get_label()
    assert expected in ax.get_title()
    assert not any("CV error" in text for text in _texts(ax)), _texts(ax)


def test_block_plot_of_one_run_marks_its_cv_error():
    table = _table(0)
    ax = plot_block_losses(table)
    (line,) = _dashed(ax)
    assert line.get_ydata()[0] == pytest.approx(float(table["loss"].mean()))
    assert line.get_label() == "overall CV error"
    assert "overall CV error" in _texts(ax)
    assert ax.get_title() == ""


def test_block_plot_docstring_says_which_replicate_is_shown():
    doc = " ".join(plot_block_losses.__doc__.split())
    assert "replicate_kind" in doc
    assert "never the CV error" in doc


# E: many or long block labels ------------------------------------------------------------


def test_block_plot_shortens_long_labels_without_a_layout_warning():
    labels = [f"Universitätsklinikum Hamburg-Eppendorf Abteilung {i}" for i in range(8)]
    ax = plot_block_losses(_table(0, labels=labels, scheme="source"))
    ax.figure.canvas.draw()  # "constrained_layout not applied" would be raised here
    shown = _shown_ticks(ax)
    assert len(shown) == 8
    assert all(len(t) <= 20 and "…" in t for t in shown), shown
    assert len(set(shown)) == 8  # the numbers at the end still tell them apart
    assert ax.get_position().height > 0.4


def test_block_plot_thins_the_labels_of_many_blocks():
    table = _table(1, n_blocks=100, per_block=3)
    ax = plot_block_losses(table)
    ax.figure.canvas.draw()
    ticks = ax.get_xticks()
    shown = _shown_ticks(ax)
    assert 10 <= len(shown) <= 30  # it drew none above 30 blocks
    # each label shown sits at its block: the x positions are the blocks sorted by mean loss
    means = table["loss"].groupby("block").mean().to_series().sort_values()
    assert [str(means.index[int(x)]) for x in ticks] == shown


def test_block_and_ppc_share_one_tick_rule():
    doc_block = " ".join(plot_block_losses.__doc__.split())
    from bayescv.bayes import plot_ppc

    doc_ppc = " ".join(plot_ppc.__doc__.split())
    for doc in (doc_block, doc_ppc):
        assert "30" in doc
        assert "20 characters" in doc


# F: blocks of different CV schemes are different things ---------------------------------


def test_block_plot_refuses_blocks_of_different_schemes():
    groups = np.repeat(np.arange(6), 5)
    rng = np.random.default_rng(0)
    cvs = from_arrays(rng.gamma(2, 1, 30), groups, source=groups, scheme="source")
    cvr = from_arrays(rng.gamma(2, 1, 30), np.tile(np.arange(5), 6), source=groups,
                      scheme="random")  # fmt: skip
    with pytest.raises(ValueError, match=r"not comparable.*by=\"source\""):
        plot_block_losses({"CVS": cvs, "CVR": cvr})
    ax = plot_block_losses({"CVS": cvs, "CVR": cvr}, by="source")
    assert len(ax.containers) == 2  # one errorbar per table
    doc = " ".join(plot_block_losses.__doc__.split())
    assert '{"CVS": cvs, "CVR": cvr}, by="source"' in doc


# H: legends that say what is drawn -------------------------------------------------------


def test_block_plot_of_one_table_is_not_labelled_by_its_scheme():
    ax = plot_block_losses(_table(0, scheme="random"))
    assert "random" not in _texts(ax)
    assert "mean per block" in _texts(ax)  # from_arrays records the estimator as "unknown"
    named = _table(0, scheme="source", attrs={"estimator": "Ridge()"})
    texts = _texts(plot_block_losses(named))
    assert "source" not in texts
    assert "Ridge()" in texts


# G, I: the coverage and decomposition plots ------------------------------------------


@pytest.fixture(scope="module")
def study(small_bates_study):
    return small_bates_study


def test_coverage_plot_names_a_method_missing_from_a_summary(study):
    full = summarize(study)
    part = summarize(study.sel(method_name=["theta_B"]))
    with pytest.raises(ValueError, match=r"summary for 20 lacks method\(s\) \['naive_points'\]"):
        plot_coverage({10: full, 20: part}, target="err_xy")
    ax = plot_coverage({10: full, 20: part}, target="err_xy", methods=["theta_B"])
    assert len(ax.containers) == 1


def test_coverage_plot_tells_sixteen_methods_apart(study):
    s = summarize(study)
    names = [f"m{i:02d}" for i in range(16)]
    many = xr.concat(
        [s.assign_coords(method_name=names[2 * i : 2 * i + 2]) for i in range(8)], "method_name",
        data_vars="all", coords="different", compat="equals", join="outer",
    )  # fmt: skip
    ax = plot_coverage({10: many, 20: many}, target="err_xy")
    styles = {(c.lines[0].get_color(), c.lines[0].get_marker()) for c in ax.containers}
    assert len(styles) == 16


def test_log_axes_have_no_stray_minor_labels(study):
    s = summarize(study)
    ax = plot_coverage({10: s, 20: s, 40: s}, target="err_xy")
    ax.figure.canvas.draw()
    assert _minor_labels_in_view(ax) == []
    assert _shown_ticks(ax) == ["10", "20", "40"]
    st = run_study(MultiSourceLinear(3, 5), methods=["theta_A"], n_replicates=5, truths=[],
                   random_state=0)  # fmt: skip
    dec = decompose(st)
    ax = plot_decomposition({10: dec, 20: dec, 40: dec})
    ax.figure.canvas.draw()
    assert _minor_labels_in_view(ax) == []


# H: a method without intervals -----------------------------------------------------------


def test_interval_plot_without_intervals_says_so(study):
    empty = study.copy(deep=True)
    empty["lower"].loc[{"method_name": "theta_B"}] = np.nan
    ax = plot_intervals(empty, method="theta_B", target="err_xy")
    assert "no intervals to show" in ax.get_title()
    assert "nan" not in ax.get_title()
    texts = _texts(ax)
    assert "covers" not in texts
    assert "misses" not in texts
    # with intervals, the title and legend are as before
    ax = plot_intervals(study, method="theta_B", target="err_xy")
    assert "of 6 cover err_xy" in ax.get_title()


# Bayesian plots: E, G, H --------------------------------------------------------------


@pytest.fixture(scope="module")
def hospitals_fit():
    """60 sources with long names: the default fit (nutpie when installed, about 5 s)."""
    pytest.importorskip("pymc")
    from bayescv.bayes import fit

    return fit(_table(2, labels=HOSPITALS, scheme="source"), random_state=0)


@pytest.fixture(scope="module")
def small_fit():
    pytest.importorskip("pymc")
    from bayescv.bayes import fit

    # the normal population named: its new_source draws reach below 0 (the lognormal one,
    # which "auto" takes for squared errors, cannot)
    return fit(_table(3, scheme="source"), random_state=0, population="normal")


def test_ppc_of_sixty_long_names_stays_readable(hospitals_fit):
    from bayescv.bayes import plot_ppc

    axes = plot_ppc(hospitals_fit)
    axes[0].figure.canvas.draw()  # no "constrained_layout not applied"
    # The rule's reference: first 10 and last 9 characters around "…" (20 in all), and every
    # k-th of the 60 blocks, k = ceil(60 / 30) = 2, in the fit's block order.
    blocks = [str(b) for b in hospitals_fit.observed_data["block"].values]
    expected = [f"{b[:10]}…{b[-9:]}" for b in blocks[::2]]
    for ax in axes[:2]:
        assert _shown_ticks(ax) == expected
        assert ax.get_position().height > 0.4, ax.get_position()
    assert len(set(expected)) == 30  # still tell the hospitals apart


def test_ppc_says_which_predictive_it_draws(small_fit):
    from bayescv.bayes import plot_ppc

    for group in ("posterior", "prior"):
        axes = plot_ppc(small_fit, group=group)
        assert f"{group} predictive (95%)" in _texts(axes[0])
        assert f"{group} predictive" in " ".join(_texts(axes[2]))


def test_bayes_plots_name_the_axes_they_need(small_fit):
    from bayescv.bayes import plot_ppc, plot_targets

    _, two = plt.subplots(1, 2)
    with pytest.raises(ValueError, match=r"three axes.*got 2"):
        plot_ppc(small_fit, axes=two)
    _, one = plt.subplots()
    with pytest.raises(ValueError, match=r"one axes per target.*got 1"):
        plot_targets(small_fit, axes=one)
    _, three = plt.subplots(3, 1)
    assert len(plot_ppc(small_fit, axes=three)) == 3


def test_plot_targets_marks_the_bounds_the_table_shows(small_fit):
    # The dashed lines were the raw posterior quantiles, while posterior_intervals moves a
    # bound outside the loss range onto it; draws outside [0, inf) (a Gaussian model of
    # squared errors) are shaded and the range's edge is drawn.
    from bayescv.bayes import plot_targets, posterior_intervals

    ci = posterior_intervals(small_fit)
    axes = plot_targets(small_fit)
    for ax, target in zip(axes[:3], ["expected_cv", "ose", "new_source"], strict=True):
        row = ci.sel(method_name=f"bayes_{target}")
        shown = sorted(float(line.get_xdata()[0]) for line in _dashed(ax))
        assert shown == pytest.approx([float(row["lower"]), float(row["upper"])], rel=1e-12)
    outside = [
        bool((small_fit.posterior[t].values < 0).any())
        for t in ("expected_cv", "ose", "new_source")
    ]
    assert outside[2]  # the Gaussian model's new_source draws reach below the range
    for ax, below in zip(axes[:3], outside, strict=True):
        assert ("edge of the loss range" in _texts(ax)) == below
