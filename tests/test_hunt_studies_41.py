"""A user's-hands pass over coverage studies, nested CV and covariate shift (round 41).

Each test names what a user did and what went wrong before the fix.
"""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LinearRegression

from bayescv import cross_val_losses
from bayescv.compare import (
    GaussianLinear,
    make_scenario,
    run_study,
    summarize,
    summary_table,
)
from bayescv.compare.plots import plot_intervals, plot_summary, plot_theta
from bayescv.shift import (
    density_ratio_weights,
    importance_weighted_cv,
    target_risk_intervals,
)


@pytest.fixture(scope="module")
def study():
    return run_study(
        GaussianLinear(n=40), methods=["naive_points", "theta_A"], n_replicates=4, random_state=0
    )


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def shifted(n=120, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(0.0, 1.0, (n, 1))
    y = np.sin(2 * x[:, 0]) + rng.normal(0.0, 0.3, n)
    w = np.exp(x[:, 0] - 0.5)  # exact p_T/p_S for N(1, 1) against N(0, 1)
    return x, y, w


# --- covariate shift ---------------------------------------------------------------------


def test_series_weights_of_other_labels_are_refused_with_a_loss_table():
    """A Series of weights indexed by a frame's labels was taken by position: given in
    another row order, each point silently got another point's weight."""
    x, y, w = shifted()
    frame = pd.DataFrame(x, index=np.arange(len(y)) + 1000, columns=["x"])
    table = cross_val_losses(LinearRegression(), frame, pd.Series(y, index=frame.index), cv=5,
                             random_state=0)  # fmt: skip
    reversed_labels = pd.Series(w[::-1], index=frame.index[::-1])  # by label: w itself
    with pytest.raises(ValueError, match=r"Series indexed \[1119, 1118, 1117, \.\.\.\].*reindex"):
        target_risk_intervals(table, reversed_labels)
    # What the message says to do gives the estimate of the weights matched by label.
    fixed = target_risk_intervals(table, reversed_labels.reindex(frame.index).to_numpy())
    expected = target_risk_intervals(table, w)
    np.testing.assert_allclose(fixed["estimate"].values, expected["estimate"].values, rtol=1e-12)
    # The positions 0..n-1 as index are positions: accepted, the same numbers as the array.
    plain = target_risk_intervals(table, pd.Series(w))
    np.testing.assert_allclose(plain["estimate"].values, expected["estimate"].values, rtol=1e-12)


def test_series_weights_with_the_frames_index_still_work_in_importance_weighted_cv():
    # importance_weighted_cv checks a Series against X_source's index itself; a Series of
    # the frame's own labels (the right rows) gives the numbers of the plain arrays.
    x, y, w = shifted()
    frame = pd.DataFrame(x, index=np.arange(len(y)) + 1000, columns=["x"])
    labelled = importance_weighted_cv(
        LinearRegression(), frame, pd.Series(y, index=frame.index),
        weights=pd.Series(w, index=frame.index), cv=5, random_state=0,
    )  # fmt: skip
    plain = importance_weighted_cv(LinearRegression(), x, y, weights=w, cv=5, random_state=0)
    np.testing.assert_allclose(labelled["estimate"].values, plain["estimate"].values, rtol=1e-12)


def test_reordered_target_columns_are_named_in_the_error():
    """The same columns in another order read "different columns", naming neither."""
    rng = np.random.default_rng(0)
    source = pd.DataFrame(rng.normal(size=(60, 2)), columns=["a", "b"])
    target = pd.DataFrame(rng.normal(0.5, 1.0, size=(40, 2)), columns=["a", "b"])
    with pytest.raises(ValueError, match=r"another order.*X_target\[X_source.columns\]"):
        density_ratio_weights(source, target[["b", "a"]], random_state=0)
    with pytest.raises(ValueError, match=r"only in X_source \['b'\], only in X_target \['c'\]"):
        density_ratio_weights(source, target.rename(columns={"b": "c"}), random_state=0)
    # What the message says to do: the weights of the target in the source's order.
    np.testing.assert_array_equal(
        density_ratio_weights(source, target[["b", "a"]][source.columns], random_state=0),
        density_ratio_weights(source, target, random_state=0),
    )


# --- plots of studies --------------------------------------------------------------------


@pytest.mark.parametrize("bad", [0, -2, 2.5, True])
def test_plot_intervals_refuses_a_max_replicates_that_is_not_a_positive_integer(study, bad):
    """0 drew "no intervals to show (0 replicates without one)", -2 silently dropped the
    last two replicates, 2.5 raised a TypeError about slice indices."""
    with pytest.raises(ValueError, match="max_replicates must be a positive integer"):
        plot_intervals(study, method="naive_points", target="err_xy", max_replicates=bad)


def test_plot_intervals_names_the_truths_a_study_has(study):
    with pytest.raises(ValueError, match=r"it has \['err_xy', 'kfold_test_error'\].*plot_summary"):
        plot_intervals(study, method="naive_points", target="err")


def test_empty_selections_of_plots_are_refused(study):
    """methods=[] (or targets=[]) drew an empty figure, with a matplotlib UserWarning about
    singular x limits (an error under warnings-as-errors)."""
    summary = summarize(study)
    with pytest.raises(ValueError, match="methods is empty"):
        plot_summary(summary, methods=[])
    with pytest.raises(ValueError, match="targets is empty"):
        plot_summary(summary, targets=[])
    with pytest.raises(ValueError, match="methods is empty"):
        plot_theta(study, methods=[])


# --- summary table ---------------------------------------------------------------------


def test_summary_table_says_why_a_methods_own_coverage_is_na():
    """Under sources_redrawn the closed-form methods target expected_cv, which that design
    does not cover: their coverage read "n/a" beside "undefined % 0.0", with no reason."""
    scenario = make_scenario("multi-source-linear", design="sources_redrawn")
    study = run_study(scenario, methods=["naive_points", "theta_A"], n_replicates=3,
                      random_state=0)  # fmt: skip
    text = summary_table(summarize(study))
    assert (
        "n/a: expected_cv is not a target under design sources_redrawn (naive_points, theta_A)"
        in text
    )
    # A study whose methods' targets are all covered has no such line.
    plain = run_study(GaussianLinear(n=40), methods=["naive_points"], n_replicates=3,
                      random_state=0)  # fmt: skip
    assert "\nn/a:" not in summary_table(summarize(plain))
