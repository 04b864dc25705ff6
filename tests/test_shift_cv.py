"""Importance-weighted CV toward an unlabelled target, and the leave-one-source-out check.

Data: x ~ N(0, 1) in the source and N(1, 1) in the target, y = x² + N(0, 0.5²) in both
(covariate shift), a straight line fit by least squares: the line misfits the curve most
where the target has its mass, so the target risk is far above the source risk. The
reference target risk is the line's mean squared error on 200 000 labelled target points
(Monte Carlo error below 0.1% of the value).
"""

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import KFold

from bayescv import cross_val_losses
from bayescv.shift import (
    LowEffectiveSampleSizeWarning,
    importance_weighted_cv,
    importance_weighted_cvs,
    target_risk_intervals,
)


def curve(rng, mean, n):
    x = rng.normal(mean, 1.0, (n, 1))
    return x, x[:, 0] ** 2 + rng.normal(0, 0.5, n)


@pytest.fixture(scope="module")
def shifted():
    rng = np.random.default_rng(0)
    xs, ys = curve(rng, 0.0, 400)
    xt, _ = curve(rng, 1.0, 300)
    x_big, y_big = curve(rng, 1.0, 200_000)
    truth = np.mean((y_big - LinearRegression().fit(xs, ys).predict(x_big)) ** 2)
    return xs, ys, xt, truth


def test_weighted_cv_covers_the_target_risk_that_plain_cv_misses(shifted):
    xs, ys, xt, truth = shifted
    ds = importance_weighted_cv(LinearRegression(), xs, ys, xt, cv=5, random_state=0)
    assert ds["method_name"].values.tolist() == ["iw", "iw_control_variate"]
    assert ds.attrs["target"] == "target_risk"
    # The unweighted CV mean estimates the source risk: its interval misses the target
    # risk by far (truth 7.7, source risk 2.7 ± 0.6).
    naive_upper = ds.attrs["source_risk"] + 1.96 * ds.attrs["source_risk_se"]
    assert naive_upper < truth
    # Both weighted intervals cover the target risk; the control variate is tighter.
    assert ((ds["lower"] <= truth) & (truth <= ds["upper"])).all()
    se = ds["se"].values
    assert se[1] < se[0]
    assert ds.attrs["variance_ratio"] == pytest.approx((se[1] / se[0]) ** 2)
    assert ds.attrs["weights"] == "estimated"
    assert ds.attrs["weights_n_target"] == 300
    assert ds.attrs["seed"] == 0
    assert ds.attrs["loss_name"] == "squared"


def test_given_weights_reproduce_the_risk_functions_on_the_cv_losses(shifted):
    xs, ys, _, _ = shifted
    folds = list(KFold(4, shuffle=True, random_state=1).split(xs))
    w = np.exp(xs[:, 0] - 0.5)  # the true ratio N(x; 1, 1) / N(x; 0, 1)
    ds = importance_weighted_cv(LinearRegression(), xs, ys, weights=w, cv=folds, clip=5.0)
    table = cross_val_losses(LinearRegression(), xs, ys, cv=folds)
    expected = target_risk_intervals(table, w, clip=5.0)
    np.testing.assert_allclose(ds["estimate"], expected["estimate"])
    np.testing.assert_allclose(ds["se"], expected["se"])
    assert ds.attrs["weights"] == "given"
    assert ds.attrs["weight_clipping"] == "max=5"
    assert ds["n_clipped"].values[0] == int((w > 5).sum())


def test_same_seed_same_result(shifted):
    xs, ys, xt, _ = shifted
    a = importance_weighted_cv(LinearRegression(), xs, ys, xt, cv=3, random_state=5)
    b = importance_weighted_cv(LinearRegression(), xs, ys, xt, cv=3, random_state=5)
    np.testing.assert_array_equal(a["estimate"].values, b["estimate"].values)
    assert a.attrs["weights_seed"] == b.attrs["weights_seed"]


def test_tiny_effective_sample_size_warns(shifted):
    xs, ys, _, _ = shifted
    rng = np.random.default_rng(3)
    far = rng.normal(3.0, 0.3, (100, 1))  # a target at the edge of the source's support
    with pytest.warns(LowEffectiveSampleSizeWarning):
        ds = importance_weighted_cv(LinearRegression(), xs, ys, far, cv=3, random_state=0)
    assert ds.attrs["ess_fraction"] < 0.1
    assert all("low_effective_sample_size" in f for f in ds["flag"].values)


def test_target_and_weights_are_exclusive(shifted):
    xs, ys, xt, _ = shifted
    with pytest.raises(ValueError, match="exactly one"):
        importance_weighted_cv(LinearRegression(), xs, ys)
    with pytest.raises(ValueError, match="exactly one"):
        importance_weighted_cv(LinearRegression(), xs, ys, xt, weights=np.ones(len(ys)))
    with pytest.raises(ValueError, match="mismatched lengths"):
        importance_weighted_cv(LinearRegression(), xs, ys, weights=np.ones(3))
    with pytest.raises(ValueError, match="non-negative"):
        importance_weighted_cv(LinearRegression(), xs, ys, weights=-np.ones(len(ys)))
    with pytest.raises(ValueError, match="methods"):
        importance_weighted_cv(LinearRegression(), xs, ys, xt, methods=["naive"])


# --- leave-one-source-out validation ----------------------------------------------------


@pytest.fixture(scope="module")
def sources():
    rng = np.random.default_rng(1)
    means = [-0.6, -0.2, 0.2, 0.6]
    groups = np.repeat(np.array(["a", "b", "c", "d"]), 200)
    x = rng.normal(np.repeat(means, 200), 1.0)[:, None]
    y = x[:, 0] ** 2 + rng.normal(0, 0.5, 800)
    return x, y, groups


def test_every_source_is_held_out_and_checked_against_its_true_loss(sources):
    x, y, groups = sources
    ds = importance_weighted_cvs(LinearRegression(), x, y, groups, cv=5, random_state=0)
    assert ds["source"].values.tolist() == ["a", "b", "c", "d"]
    assert ds["estimate"].dims == ("source", "method_name")
    assert ds["covered"].dims == ("source", "method_name")
    for label in ("a", "d"):
        held = groups == label
        model = LinearRegression().fit(x[~held], y[~held])
        truth = np.mean((y[held] - model.predict(x[held])) ** 2)
        assert ds["true_risk"].sel(source=label).item() == pytest.approx(truth)
        losses = (y[held] - model.predict(x[held])) ** 2
        assert ds["true_risk_se"].sel(source=label).item() == pytest.approx(
            losses.std(ddof=1) / np.sqrt(200)
        )
        assert ds["n_target"].sel(source=label).item() == 200
        assert (ds["n_points"].sel(source=label) == 600).all()
    covered = (ds["lower"] <= ds["true_risk"]) & (ds["true_risk"] <= ds["upper"])
    np.testing.assert_array_equal(ds["covered"].values, covered.values)
    gap = np.abs(ds["estimate"] - ds["true_risk"])
    combined = np.sqrt(ds["se"] ** 2 + ds["true_risk_se"] ** 2)
    np.testing.assert_array_equal(
        ds["agrees"].values, (gap <= 1.959963984540054 * combined).values
    )
    assert ds["agrees"].dims == ("source", "method_name")
    # The outer sources are shifted most; the weighting moves the estimate toward their
    # true loss, where the unweighted CV mean of the others falls short.
    iw_error = np.abs(ds["estimate"].sel(method_name="iw") - ds["true_risk"])
    naive_error = np.abs(ds["source_risk"] - ds["true_risk"])
    for label in ("a", "d"):
        assert iw_error.sel(source=label) < naive_error.sel(source=label)
    assert ds.attrs["seed"] == 0
    assert ds.attrs["target"] == "target_risk"


def test_leave_one_source_out_needs_sources(sources):
    x, y, _ = sources
    with pytest.raises(ValueError, match="two sources"):
        importance_weighted_cvs(LinearRegression(), x, y, np.zeros(len(y)))
    with pytest.raises(ValueError, match="groups"):
        importance_weighted_cvs(LinearRegression(), x, y, None)
