"""A new user's journey across modules: combining results, nested CV on few sources, and
the Bayesian model on folds of several sources (GroupKFold)."""

import warnings

import numpy as np
import pytest
from sklearn.linear_model import Ridge

import bayescv


@pytest.fixture(scope="module")
def regression():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 3))
    y = X @ np.array([1.0, -0.5, 0.2]) + rng.normal(size=120)
    return X, y, np.arange(120) % 12


def test_combine_intervals_takes_a_list_of_results(regression):
    X, y, _ = regression
    table = bayescv.cross_val_losses(Ridge(), X, y, loss="squared", random_state=0)
    a = bayescv.cv_intervals(table, ["naive_points"])
    b = bayescv.cv_intervals(table, ["bayle_within"])
    # as xarray.concat takes them; this was an AttributeError ('list' has no 'attrs')
    combined = bayescv.combine_intervals([a, b])
    assert combined["method_name"].values.tolist() == ["naive_points", "bayle_within"]


def test_combining_a_whole_nested_result_keeps_one_row_per_method(regression):
    X, y, groups = regression
    table = bayescv.cross_val_losses(Ridge(), X, y, groups=groups, loss="squared")
    nested = bayescv.nested_cv(
        Ridge(), X, y, groups=groups, n_splits=3, n_repeats=3, loss="squared", random_state=0
    )
    combined = bayescv.combine_intervals(bayescv.cv_intervals(table), nested)
    # the per-fold diagnostics of nested CV used to repeat every row 3 x 3 times
    assert set(combined["estimate"].dims) == {"method_name"}
    assert combined.to_dataframe().shape[0] == combined.sizes["method_name"]
    row = combined.sel(method_name="nested_cv")
    assert row["estimate"].item() == nested["estimate"].item()
    assert row["target"].item() == "ose"


def test_nested_cv_on_too_few_sources_names_the_n_splits_that_works(regression):
    X, y, groups = regression
    with pytest.raises(ValueError, match=r"got 12 for n_splits=10: pass n_splits=6 or fewer"):
        bayescv.nested_cv(Ridge(), X, y, groups=groups, n_repeats=2)
    with pytest.raises(ValueError, match=r"n_splits is at least 3.*cv_intervals"):
        bayescv.nested_cv(Ridge(), X, y, groups=np.arange(120) % 4, n_repeats=2)


def test_bayes_fit_warns_when_blocks_hold_several_sources(regression):
    pytest.importorskip("pymc")
    from bayescv.bayes import fit

    X, y, groups = regression
    # an int cv with groups is shuffled GroupKFold: 4 folds of 3 sources each
    folds = bayescv.cross_val_losses(
        Ridge(), X, y, groups=groups, cv=4, loss="squared", random_state=0
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the warning comes before any sampling
        with pytest.raises(UserWarning, match=r"hold up to 3 sources each.*new_source"):
            fit(folds, random_state=0, draws=300, tune=300)


def test_leave_one_source_out_tables_do_not_warn(regression):
    from bayescv.bayes._lognormal import warn_pooled_sources

    X, y, groups = regression
    loso = bayescv.cross_val_losses(Ridge(), X, y, groups=groups, loss="squared")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_pooled_sources(loso, "source", stacklevel=1)
        warn_pooled_sources(loso.drop_vars("source"), "source", stacklevel=1)
