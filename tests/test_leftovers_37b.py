"""Leftovers of test_leftovers_37: plot_block_losses still labelled its y axis with the raw
loss name ("mean zero_one loss"), and plot_summary's error bars still reached past 100 %.
Each test fails on the old code.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.container import ErrorbarContainer

from bayescv.compare import summarize
from bayescv.compare.plots import plot_summary
from bayescv.cv import LOSSES
from bayescv.losses import from_arrays
from bayescv.plots import plot_block_losses


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


# plot_block_losses: the y axis names the loss readably -------------------------------------

#: Expected y labels, written out by hand: every built-in loss, a name bayescv does not know,
#: and no name (from_arrays records "unknown").
_LABELS = {
    "zero_one": "mean 0-1 loss ± 1 SE",
    "squared": "mean squared error ± 1 SE",
    "absolute": "mean absolute error ± 1 SE",
    "log_loss": "mean log loss ± 1 SE",
    "brier": "mean Brier loss ± 1 SE",
    "pinball": "mean pinball loss ± 1 SE",
    None: "mean loss ± 1 SE",
}


def test_every_built_in_loss_has_an_expected_label():
    """The cases below cover every loss of bayescv.cv.LOSSES (a new loss needs a case)."""
    assert set(LOSSES) <= set(_LABELS)


@pytest.mark.parametrize(("loss_name", "expected"), list(_LABELS.items()))
def test_block_plot_names_the_loss_readably(loss_name, expected):
    """The y axis read "mean zero_one loss ± 1 SE", "mean squared loss ± 1 SE".

    It must read "mean 0-1 loss ± 1 SE", "mean squared error ± 1 SE" (the names of
    bayescv.plots._loss_label, "loss" not repeated after "error" or "loss"); a name bayescv
    does not know keeps "loss" after it, and no name gives "mean loss".
    """
    # 0/1 values: inside the range of every built-in loss
    named = {} if loss_name is None else {"loss_name": loss_name}
    table = from_arrays([0.0, 1.0, 1.0, 0.0, 0.0, 1.0], [0, 0, 1, 1, 2, 2], **named)
    assert plot_block_losses(table).get_ylabel() == expected
    if loss_name is None:  # "unknown" recorded, or no loss_name at all
        bare = table.copy()
        bare.attrs = {k: v for k, v in table.attrs.items() if k != "loss_name"}
        assert plot_block_losses(bare).get_ylabel() == expected
    # several tables of one loss: the same label
    ax = plot_block_losses({"a": table, "b": table})
    assert ax.get_ylabel() == expected


# plot_summary: error bars inside [0, 1] -----------------------------------------------------


def _bar_ends(ax) -> np.ndarray:
    """(low, high) of every error bar drawn, from the errorbar containers' bar lines."""
    ends = [
        sorted([seg[0][1], seg[1][1]])
        for container in ax.containers
        if isinstance(container, ErrorbarContainer)
        for collection in container.lines[2]
        for seg in collection.get_segments()
        if len(seg)  # a NaN coverage draws no bar
    ]
    return np.asarray(ends)


def test_summary_plot_keeps_the_error_bars_inside_0_and_1(small_bates_study):
    """Coverage 0.9 ± 2 × 0.1 drew a bar up to 1.1 and stretched the y axis to 1.15.

    Reference: the bars are coverage ± 2 coverage_se clipped to [0, 1], as plot_coverage's,
    so [0.7, 1.0] and, for coverage 0.1, [0.0, 0.3] exactly; the y axis still shows the bar
    ending at 100 % whole (its top a little above 1), no further.
    """
    s = summarize(small_bates_study).copy(deep=True)
    for method, p in (("naive_points", 0.1), ("theta_B", 0.9)):
        where = {"method_name": method, "target": "err_xy"}
        s["coverage"].loc[where] = p
        s["coverage_se"].loc[where] = 0.1
    ax = plot_summary(s, targets=["err_xy"], methods=["naive_points", "theta_B"])
    np.testing.assert_allclose(_bar_ends(ax), [[0.0, 0.3], [0.7, 1.0]])
    bottom, top = ax.get_ylim()
    assert bottom == 0.0
    assert 1.0 < top <= 1.1
    assert "clipped to [0, 1]" in " ".join(plot_summary.__doc__.split())


def test_from_arrays_reads_a_loss_name_of_none_as_no_name():
    # from_arrays(..., loss_name=None) stored the text "None" (a plot then read "mean None
    # loss"); None means no name, as the default "unknown" does.
    from bayescv.losses import from_arrays

    table = from_arrays([0.1, 0.2, 0.3, 0.4], [0, 0, 1, 1], loss_name=None)
    assert table.attrs["loss_name"] == "unknown"
    assert table["loss"].attrs["long_name"] == "per-point loss (unknown)"
