"""Small defects left behind: from_long_frame had no scheme, plot_coverage's bars reached past
100 %, and axis labels gave raw loss names ("zero_one error"). Each test fails on the old code.
"""

from __future__ import annotations

import inspect

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from bayescv import compare_learners
from bayescv.compare import summarize
from bayescv.compare.plots import plot_coverage, plot_intervals
from bayescv.fold_scores import from_cross_validate, from_long_frame
from bayescv.losses import from_arrays

# from_long_frame(scheme=) ------------------------------------------------------------------


def _frame() -> pd.DataFrame:
    """Two learners' accuracies on five folds of one data set, 20 test and 80 train points."""
    rng = np.random.default_rng(0)
    rows = [
        {"learner": name, "fold": k, "score": float(mu + 0.05 * rng.standard_normal()),
         "n_test": 20, "n_train": 80}
        for name, mu in (("lr", 0.8), ("rf", 0.75))
        for k in range(5)
    ]  # fmt: skip
    return pd.DataFrame(rows)


def test_from_long_frame_records_a_source_scheme_as_from_cross_validate_does():
    """A long frame of leave-one-group-out folds could not say so: no `scheme` argument.

    With ``scheme="source"`` the table must record it, and compare_learners must then target
    expected_cv and flag correlated_t ``random_kfold_only`` (the documented consequence);
    the default stays "random", as from_cross_validate's.
    """
    df = _frame()
    kwargs = {"metric": "accuracy", "n_test": "n_test", "n_train": "n_train"}
    table = from_long_frame(df, scheme="source", **kwargs)
    assert table.attrs["scheme"] == "source"
    assert from_long_frame(df, **kwargs).attrs["scheme"] == "random"
    default = inspect.signature(from_cross_validate).parameters["scheme"].default
    assert inspect.signature(from_long_frame).parameters["scheme"].default == default
    row = compare_learners(table, methods=["correlated_t"]).isel(row=0)
    assert str(row["target"].values) == "expected_cv"
    assert "random_kfold_only" in str(row["flag"].values)


def test_from_long_frame_refuses_an_unknown_scheme_with_the_package_message():
    """An unknown scheme must be refused by fold_table's check, the one from_cross_validate uses."""
    with pytest.raises(ValueError, match="scheme must be 'random' or 'source', got 'groups'"):
        from_long_frame(_frame(), metric="accuracy", scheme="groups")


# plot_coverage: error bars inside [0, 1] ---------------------------------------------------


def _bar_ends(ax) -> np.ndarray:
    """(low, high) of every error bar drawn, from the errorbar containers' bar lines."""
    ends = [
        [seg[0][1], seg[1][1]]
        for container in ax.containers
        for collection in container.lines[2]
        for seg in collection.get_segments()
    ]
    return np.sort(np.asarray(ends), axis=1)


def test_plot_coverage_keeps_the_error_bars_inside_0_and_1(small_bates_study):
    """Coverage 0.95 ± 2 × 0.05 drew a bar up to 1.05, coverage 0.05 one down to −0.05.

    Reference: the bars are coverage ± 2 coverage_se clipped to [0, 1], so [0.85, 1.0] and
    [0.0, 0.15] exactly.
    """
    s = summarize(small_bates_study).copy(deep=True)
    where = {"method_name": "theta_B", "target": "err_xy"}
    high = s.copy(deep=True)
    high["coverage"].loc[where] = 0.95
    high["coverage_se"].loc[where] = 0.05
    low = s.copy(deep=True)
    low["coverage"].loc[where] = 0.05
    low["coverage_se"].loc[where] = 0.05
    ax = plot_coverage({10: high, 20: low}, target="err_xy", methods=["theta_B"])
    ends = _bar_ends(ax)
    np.testing.assert_allclose(ends, [[0.85, 1.0], [0.0, 0.15]])
    assert "clipped to [0, 1]" in " ".join(plot_coverage.__doc__.split())
    plt.close("all")


# readable loss names on axis labels --------------------------------------------------------


def test_plot_intervals_names_the_loss_readably(small_bates_study):
    """The y axis read "zero_one error"; it must read "0-1 loss" (a classification study)."""
    assert small_bates_study.attrs["loss_name"] == "zero_one"
    ax = plot_intervals(small_bates_study, method="theta_B", target="err_xy")
    assert ax.get_ylabel() == "0-1 loss"
    unnamed = small_bates_study.copy()
    unnamed.attrs = {k: v for k, v in unnamed.attrs.items() if k != "loss_name"}
    assert plot_intervals(unnamed, method="theta_B", target="err_xy").get_ylabel() == "loss"
    plt.close("all")


def test_bayes_plots_name_the_loss_readably():
    """plot_targets and plot_ppc wrote "expected loss (zero_one)", "mean loss (squared)".

    The labels must carry the readable names ("0-1 loss", "squared error").
    """
    pytest.importorskip("pymc")
    from bayescv.bayes import fit, plot_ppc, plot_targets

    rng = np.random.default_rng(0)
    blocks = np.repeat(np.arange(5), 40)
    quick = {"draws": 300, "tune": 300, "chains": 2, "ess_min": 1, "rhat_max": 2.0}
    zero_one = from_arrays((rng.random(200) < 0.2).astype(float), blocks, loss_name="zero_one")
    idata = fit(zero_one, random_state=0, **quick)
    assert plot_targets(idata)[0].get_xlabel() == "expected loss (0-1 loss)"
    assert plot_ppc(idata)[0].get_ylabel() == "mean loss (0-1 loss)"
    squared = from_arrays(rng.gamma(2, 1, 200), blocks, loss_name="squared")
    idata = fit(squared, random_state=0, **quick)
    assert plot_targets(idata)[0].get_xlabel() == "expected loss (squared error)"
    assert [ax.get_ylabel() for ax in plot_ppc(idata)[:2]] == [
        "mean loss (squared error)",
        "variance of the losses (squared error)",
    ]
    plt.close("all")
