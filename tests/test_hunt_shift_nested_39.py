"""User's-hands pass over bayescv.shift and bayescv.nested: defects found and fixed."""

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from scipy import stats
from sklearn.datasets import make_regression
from sklearn.linear_model import LinearRegression
from sklearn.tree import DecisionTreeClassifier

import bayescv
from bayescv.losses import from_arrays
from bayescv.nested import nested_cv
from bayescv.shift import (
    density_ratio_weights,
    effective_sample_size,
    importance_weighted_cv,
    target_risk_intervals,
)


def test_shift_without_errors_gives_wilson_bound_on_ess_not_zero_width():
    # A classifier with no CV error on the source: before, the target-risk interval was
    # [0, 0] (flag zero_variance), a certainty the data cannot give.
    rng = np.random.default_rng(0)
    w = np.exp(rng.normal(0.0, 0.5, 60))
    table = from_arrays(np.zeros(60), np.repeat(np.arange(5), 12), loss_name="zero_one")
    res = target_risk_intervals(table, w)
    z2 = stats.norm.ppf(0.975) ** 2
    ess = float(effective_sample_size(w))
    # Wilson's bound for 0 errors in N points, z² / (N + z²), with N the Kish ESS
    np.testing.assert_allclose(res["upper"].values, z2 / (ess + z2))
    assert res["lower"].values.tolist() == [0.0, 0.0]
    assert res["flag"].values.tolist() == ["no_errors", "no_errors"]
    assert np.isnan(res["se"].values).all()


def test_importance_weighted_cv_of_an_error_free_classifier_is_not_zero_width():
    rng = np.random.default_rng(0)
    X = rng.normal(0, 1, (120, 2))
    y = (X[:, 0] > 0).astype(int)
    X[:, 0] += np.where(y == 1, 3, -3)  # separable: no CV error
    ds = importance_weighted_cv(
        DecisionTreeClassifier(), X, y, rng.normal(0.5, 1, (60, 2)), cv=5, random_state=0
    )
    assert (ds["estimate"] == 0).all()
    assert (ds["upper"] > 0).all()
    assert all("no_errors" in f for f in ds["flag"].values.tolist())


def test_default_domain_classifier_names_string_columns_and_the_way_out():
    # Before: "could not convert string to float: 'y'" from deep inside StandardScaler.
    rng = np.random.default_rng(0)
    source = pd.DataFrame({"a": rng.normal(size=40), "c": rng.choice(["x", "y"], 40)})
    target = pd.DataFrame({"a": rng.normal(1, 1, 30), "c": rng.choice(["x", "y"], 30)})
    with pytest.raises(ValueError, match=r"numeric features; not numeric: c;.*OneHotEncoder"):
        density_ratio_weights(source, target, random_state=0)
    # numeric frames (bool columns included) still work
    source["c"], target["c"] = source["c"] == "x", target["c"] == "x"
    assert density_ratio_weights(source, target, random_state=0).sizes["obs"] == 40


def test_reading_a_saved_nested_result_as_a_loss_table_says_how_to_read_it(tmp_path):
    # Before: "loss table has no 'loss' variable", with no word on what to do instead.
    X, y = make_regression(n_samples=40, n_features=2, noise=1.0, random_state=0)
    res = nested_cv(LinearRegression(), X, y, n_splits=4, n_repeats=2, random_state=0)
    path = tmp_path / "nested.nc"
    res.to_netcdf(path)
    with pytest.raises(ValueError, match=r"holds intervals.*xarray\.load_dataset"):
        bayescv.read_netcdf(path)
    with pytest.raises(ValueError, match=r"holds intervals.*result\.to_netcdf"):
        bayescv.to_netcdf(res, tmp_path / "again.nc")
    back = xr.load_dataset(path)  # the documented way round-trips the interval
    assert float(back["upper"].item()) == float(res["upper"].item())
