"""Weighted target-risk estimates and intervals stay inside the loss's range, flagged.

A weighted mean of losses in [a, b] leaves [a, b] when the weights are far from mean 1, and
the control variate mean(l w - β (w - 1)) can take any value. The results of bayescv.shift
for a loss table with a range are kept inside it, as bayescv.cv_intervals does, with the
flags "truncated_to_range" (a bound) and "estimate_outside_range" (an estimate).

Reference values are computed by hand from the definitions R_W = mean(l w) and
R_β = mean(l w - β (w - 1)), se = sd(ψ, ddof=1) / √n, bounds R ± z se with
z = 1.959963984540054 (the normal 0.975 quantile), then moved onto the range.
"""

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.dummy import DummyClassifier
from sklearn.linear_model import LogisticRegression

from bayescv.losses import from_arrays
from bayescv.shift import (
    LowEffectiveSampleSizeWarning,
    control_variate_risk,
    importance_weighted_cv,
    importance_weighted_cvs,
    importance_weighted_risk,
    target_risk_intervals,
)

Z = 1.959963984540054
# Two of four points misclassified, with weights 3 where the target has more mass: the
# weights have mean 2, so mean(l w) = (3 + 3) / 4 = 1.5, above the 0-1 loss's maximum.
LOSS = np.array([1.0, 1.0, 0.0, 0.0])
W = np.array([3.0, 3.0, 1.0, 1.0])


def zero_one_table(loss):
    return from_arrays(loss, [0, 0, 1, 1], loss_name="zero_one")


def test_importance_weighted_estimate_above_one_is_moved_onto_the_range_and_flagged():
    ds = importance_weighted_risk(zero_one_table(LOSS), W)
    se = np.std(LOSS * W, ddof=1) / 2  # sd([3, 3, 0, 0]) / √4 = √3 / 2
    assert ds["se"].item() == pytest.approx(se)
    assert ds["estimate_unbounded"].item() == pytest.approx(1.5)
    # 1.5 ± 1.96 · 0.866 = [-0.197, 3.197], moved onto [0, 1]; the estimate onto 1.
    assert 1.5 - Z * se < 0
    assert ds["estimate"].item() == 1.0
    assert (ds["lower"].item(), ds["upper"].item()) == (0.0, 1.0)
    assert ds["flag"].item() == "truncated_to_range,estimate_outside_range"
    assert ds.attrs["loss_range"] == [0.0, 1.0]


def test_control_variate_estimate_below_zero_is_moved_onto_the_range_and_flagged():
    # β = 3: ψ = l w - 3 (w - 1) = [-3, -3, 0, 0], R_β = -1.5, se = sd(ψ) / 2 = √3 / 2.
    ds = control_variate_risk(zero_one_table(LOSS), W, beta=3.0)
    psi = LOSS * W - 3.0 * (W - 1)
    assert psi.mean() == -1.5
    assert ds["estimate_unbounded"].item() == pytest.approx(-1.5)
    assert ds["se"].item() == pytest.approx(np.std(psi, ddof=1) / 2)
    assert ds["estimate"].item() == 0.0
    assert ds["lower"].item() == 0.0
    assert ds["upper"].item() == pytest.approx(-1.5 + Z * np.sqrt(3) / 2)  # 0.197, inside
    assert ds["flag"].item() == "truncated_to_range,estimate_outside_range"


def test_an_interval_wholly_outside_the_range_becomes_the_boundary_not_an_inverted_one():
    # No errors, weights of mean 3 with a small spread, fixed β = 1: ψ = -(w - 1), so
    # R_β = -2 with se = sd(w) / √4 ≈ 0.04: the interval [-2.08, -1.92] lies below 0.
    loss, w = np.zeros(4), np.array([3.0, 3.1, 2.9, 3.0])
    with pytest.warns(UserWarning, match="mean_weight_not_1"):
        ds = control_variate_risk(zero_one_table(loss), w, beta=1.0)
    assert ds["estimate_unbounded"].item() == pytest.approx(-2.0)
    assert -2.0 + Z * np.std(w, ddof=1) / 2 < 0  # the unbounded upper bound is below 0 too
    assert (ds["estimate"].item(), ds["lower"].item(), ds["upper"].item()) == (0.0, 0.0, 0.0)
    assert "estimate_outside_range" in ds["flag"].item()


def test_a_bound_past_the_range_is_truncated_and_the_estimate_left_alone():
    # One error of weight 1.2 among six points: R_W = 0.2, se = 0.2 (sd of [1.2, 0, ...]
    # is 0.49 over √6), lower = 0.2 - 1.96 · 0.2 < 0, upper inside.
    loss = np.array([1.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    w = np.array([1.2, 1.0, 1.0, 0.8, 1.0, 1.0])
    table = from_arrays(loss, [0, 0, 0, 1, 1, 1], loss_name="zero_one")
    ds = importance_weighted_risk(table, w)
    unbounded = importance_weighted_risk(loss, w)  # array losses: no range, no truncation
    assert ds["estimate"].item() == unbounded["estimate"].item() == pytest.approx(0.2)
    assert unbounded["lower"].item() < 0
    assert ds["lower"].item() == 0.0
    assert ds["upper"].item() == unbounded["upper"].item() < 1
    assert ds["flag"].item() == "truncated_to_range"
    assert unbounded["flag"].item() == ""


def test_array_losses_have_no_range_and_are_not_bounded():
    ds = target_risk_intervals(LOSS, W, beta=3.0)
    np.testing.assert_allclose(ds["estimate"], [1.5, -1.5])
    np.testing.assert_array_equal(ds["estimate"], ds["estimate_unbounded"])
    assert ds["flag"].values.tolist() == ["", ""]
    assert "loss_range" not in ds.attrs


def test_a_declared_range_bounds_other_losses():
    # Losses declared in [0, 2]: R_W = mean([6, 0, 3, 0]) = 2.25 is moved onto 2.
    table = from_arrays([2.0, 0.0, 1.0, 0.0], [0, 0, 1, 1], loss_range=(0.0, 2.0))
    ds = importance_weighted_risk(table, [3.0, 1.0, 3.0, 1.0])
    assert ds["estimate_unbounded"].item() == pytest.approx(2.25)
    assert ds["estimate"].item() == 2.0
    assert 0.0 <= ds["lower"].item() <= ds["upper"].item() == 2.0
    assert ds.attrs["loss_range"] == [0.0, 2.0]


def check_bounded(ds, low=0.0, high=1.0):
    for name in ("estimate", "lower", "upper"):
        values = ds[name].values
        assert ((low <= values) & (values <= high)).all(), (name, values)
    assert (ds["lower"] <= ds["estimate"]).all()
    assert (ds["estimate"] <= ds["upper"]).all()
    moved = ds["estimate"] != ds["estimate_unbounded"]
    flagged = np.array(["estimate_outside_range" in f for f in np.ravel(ds["flag"].values)])
    np.testing.assert_array_equal(np.ravel(moved.values), flagged)


def test_weighted_cv_of_a_classifier_on_a_shifted_target_stays_in_zero_one():
    """The reported case: breast cancer (sklearn's bundled copy), zero-one loss, the target
    the other 269 rows shifted by 0.3 of their standard deviation. The weights' ESS is about
    1 of 300 points; the unbounded control-variate interval reached below 0."""
    X, y = load_breast_cancer(return_X_y=True)
    target = X[300:] + 0.3 * X[300:].std(0)
    with pytest.warns(LowEffectiveSampleSizeWarning):
        ds = importance_weighted_cv(
            LogisticRegression(max_iter=5000), X[:300], y[:300], target, cv=5, random_state=0
        )
    assert ds.attrs["loss_name"] == "zero_one"
    assert ds.attrs["loss_range"] == [0.0, 1.0]
    check_bounded(ds)
    # Something was moved, and said so.
    assert any("truncated_to_range" in f for f in ds["flag"].values)


def test_leave_one_source_out_results_are_bounded_too():
    rng = np.random.default_rng(0)
    groups = np.repeat(["a", "b", "c"], 60)
    X = rng.normal(np.repeat([-1.0, 0.0, 1.0], 60), 1.0)[:, None]
    y = (X[:, 0] + rng.normal(0.0, 1.0, 180) > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LowEffectiveSampleSizeWarning)
        ds = importance_weighted_cvs(
            DummyClassifier(), X, y, groups, cv=3, loss="zero_one", random_state=0
        )
    assert ds.attrs["loss_range"] == [0.0, 1.0]
    check_bounded(ds)
    # Source "a" is the most shifted: its iw interval reached past 1.
    assert any("truncated_to_range" in f for f in np.ravel(ds["flag"].values))
