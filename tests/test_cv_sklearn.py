"""The scikit-learn contracts of the CV runners: check_cv folds, params routing, fitted models."""

import numpy as np
import pytest
import sklearn
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.exceptions import UnsetMetadataPassedError
from sklearn.linear_model import LogisticRegression, Ridge

from bayescv import balanced_group_folds, bootstrap_cv_losses, cross_val_losses
from bayescv.losses import to_csv, to_netcdf, validate


def fold_class_counts(table, y):
    """Points of each class in each block, shape (n_blocks, n_classes)."""
    block, index = table["block"].values, table["index"].values
    return np.array(
        [np.bincount(y[index[block == b]], minlength=y.max() + 1) for b in np.unique(block)]
    )


# --- cv=int follows check_cv: stratified for classifiers, KFold otherwise ---------------


@pytest.fixture(scope="module")
def imbalanced():
    """100 points, three classes of 70, 20 and 10."""
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1, 2], [70, 20, 10])
    X = rng.normal(size=(100, 3)) + y[:, None]
    return X, y


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_int_cv_is_stratified_for_a_classifier(imbalanced, n_jobs):
    X, y = imbalanced
    table = cross_val_losses(LogisticRegression(), X, y, cv=5, random_state=0, n_jobs=n_jobs)
    assert table.attrs["cv"].startswith("StratifiedKFold(n_splits=5")
    assert "shuffle=True" in table.attrs["cv"]
    # StratifiedKFold: each class split as evenly as possible, 70/5, 20/5 and 10/5 per fold
    np.testing.assert_array_equal(fold_class_counts(table, y), np.tile([14, 4, 2], (5, 1)))


def test_stratified_folds_do_not_depend_on_n_jobs_and_follow_the_seed(imbalanced):
    X, y = imbalanced
    one = cross_val_losses(LogisticRegression(), X, y, cv=5, random_state=3, n_jobs=1)
    two = cross_val_losses(LogisticRegression(), X, y, cv=5, random_state=3, n_jobs=2)
    other = cross_val_losses(LogisticRegression(), X, y, cv=5, random_state=4, n_jobs=1)
    np.testing.assert_array_equal(one["index"].values, two["index"].values)
    np.testing.assert_array_equal(one["loss"].values, two["loss"].values)
    assert not np.array_equal(one["index"].values, other["index"].values)  # shuffled by seed


def test_default_cv_is_ten_stratified_folds_for_a_classifier(imbalanced):
    X, y = imbalanced
    table = cross_val_losses(LogisticRegression(), X, y, random_state=0)
    assert table.attrs["cv"].startswith("StratifiedKFold(n_splits=10")
    np.testing.assert_array_equal(fold_class_counts(table, y), np.tile([7, 2, 1], (10, 1)))


def test_int_cv_is_kfold_for_a_regressor_and_a_continuous_target(imbalanced):
    X, y = imbalanced
    table = cross_val_losses(Ridge(), X, y.astype(float) + 0.5, cv=5, random_state=0)
    assert table.attrs["cv"].startswith("KFold(n_splits=5")
    assert "shuffle=True" in table.attrs["cv"]


def test_int_cv_with_groups_keeps_sources_whole_for_a_classifier(classification):
    X, y, groups = classification
    table = cross_val_losses(LogisticRegression(), X, y, groups=groups, cv=3, random_state=0)
    assert table.attrs["cv"].startswith("GroupKFold(n_splits=3")


def test_bootstrap_int_cv_is_stratified_for_a_classifier(imbalanced):
    X, y = imbalanced
    table = bootstrap_cv_losses(LogisticRegression(), X, y, cv=5, n_bootstrap=3, random_state=0)
    assert table.attrs["cv"] == "balanced_group_folds(n_splits=5, stratified)"
    for r in range(3):
        counts = fold_class_counts(table.isel(replicate=r), y)
        # greedy placement: per class, folds differ by at most the largest copy count
        rows = table["index"].values[r]
        largest = np.bincount(rows).max()
        assert (counts.max(0) - counts.min(0) <= largest).all()
        assert counts.sum() == 100
    regression = bootstrap_cv_losses(Ridge(), X, y + 0.5, cv=5, n_bootstrap=2, random_state=0)
    assert regression.attrs["cv"] == "balanced_group_folds(n_splits=5)"


def test_balanced_group_folds_stratify_on_y():
    # 40 singleton groups of class 0 and 10 of class 1, 5 folds: exactly 8 + 2 in each
    y = np.repeat([0, 1], [40, 10])
    folds = balanced_group_folds(np.arange(50), 5, y=y, random_state=1)
    for _, test in folds:
        np.testing.assert_array_equal(np.bincount(y[test], minlength=2), [8, 2])
    with pytest.raises(ValueError, match="one class"):
        balanced_group_folds([0, 0, 1, 1], 2, y=[0, 1, 0, 0])


# --- params= and metadata routing ---------------------------------------------------------

_FITS = []  # module level: clone() deep-copies parameters


class _WeightedMean(RegressorMixin, BaseEstimator):
    """Predicts the (weighted) mean of the training targets; logs the weights it got."""

    def fit(self, X, y, sample_weight=None):
        _FITS.append(None if sample_weight is None else np.asarray(sample_weight))
        self.mean_ = float(np.average(y, weights=sample_weight))
        return self

    def predict(self, X):
        return np.full(len(X), self.mean_)


def expected_weighted_losses(table, y, w):
    """Squared loss of the weighted training mean, per point (the definition of the model)."""
    out = np.empty(table.sizes["obs"])
    block, index = table["block"].values, table["index"].values
    for b in np.unique(block):
        train = np.setdiff1d(np.arange(y.size), index[block == b])
        out[block == b] = (y[index[block == b]] - np.average(y[train], weights=w[train])) ** 2
    return out


@pytest.fixture(scope="module")
def weighted(regression):
    X, y, _ = regression
    w = np.linspace(0.1, 3.0, y.size)
    return X, y, w


def test_params_reach_fit_indexed_per_fold_without_routing(weighted):
    X, y, w = weighted
    _FITS.clear()
    table = cross_val_losses(
        _WeightedMean(), X, y, cv=5, random_state=0, params={"sample_weight": w}
    )
    assert [len(s) for s in _FITS] == [72] * 5
    np.testing.assert_allclose(
        table["loss"].values, expected_weighted_losses(table, y, w), rtol=1e-12
    )


def test_routing_sends_requested_sample_weight_to_fit(weighted):
    X, y, w = weighted
    _FITS.clear()
    with sklearn.config_context(enable_metadata_routing=True):
        est = _WeightedMean().set_fit_request(sample_weight=True)
        table = cross_val_losses(est, X, y, cv=5, random_state=0, params={"sample_weight": w})
    assert [len(s) for s in _FITS] == [72] * 5
    np.testing.assert_allclose(
        table["loss"].values, expected_weighted_losses(table, y, w), rtol=1e-12
    )


def test_routing_refuses_a_param_the_estimator_declines_as_scikit_learn_does(weighted):
    # scikit-learn's cross_validate raises the same TypeError: nothing consumes the weights
    X, y, w = weighted
    _FITS.clear()
    with sklearn.config_context(enable_metadata_routing=True):
        est = _WeightedMean().set_fit_request(sample_weight=False)
        with pytest.raises(TypeError, match=r"^cross_val_losses got unexpected argument"):
            cross_val_losses(est, X, y, cv=5, random_state=0, params={"sample_weight": w})
        cross_val_losses(est, X, y, cv=5, random_state=0)
    assert _FITS == [None] * 5


def test_routing_refuses_an_unrequested_param_as_scikit_learn_does(weighted):
    X, y, w = weighted
    with sklearn.config_context(enable_metadata_routing=True):
        with pytest.raises(UnsetMetadataPassedError, match=r"within cross_val_losses\b") as info:
            cross_val_losses(_WeightedMean(), X, y, cv=5, params={"sample_weight": w})
        assert "cross_val_losses.fit" not in str(info.value)
        with pytest.raises(TypeError, match="not routed to any object"):
            cross_val_losses(Ridge(), X, y, cv=5, params={"nonsense": w})


def test_routing_takes_groups_from_params(classification):
    X, y, groups = classification
    with sklearn.config_context(enable_metadata_routing=True):
        table = cross_val_losses(LogisticRegression(), X, y, params={"groups": groups})
        with pytest.raises(ValueError, match="groups twice"):
            cross_val_losses(LogisticRegression(), X, y, groups=groups, params={"groups": groups})
    # leave-one-source-out, as with groups= (cv=None)
    assert table.attrs["scheme"] == "source"
    assert table.attrs["n_splits"] == 7


# --- return_estimator -----------------------------------------------------------------------


def test_return_estimator_keeps_the_fold_models_in_block_order(regression):
    X, y, _ = regression
    plain = cross_val_losses(Ridge(), X, y, cv=4, random_state=2)
    table = cross_val_losses(Ridge(), X, y, cv=4, random_state=2, return_estimator=True)
    assert "estimator" not in plain
    assert table["estimator"].dims == ("fold",)
    assert table["estimator"].dtype == object
    # return_estimator fits per fold; the plain table runs batched: equal to rounding.
    np.testing.assert_allclose(table["loss"].values, plain["loss"].values, rtol=1e-10)
    block, index = table["block"].values, table["index"].values
    for k, model in enumerate(table["estimator"].values):
        rows = index[block == k]  # block k was tested by the k-th model
        np.testing.assert_allclose(
            (y[rows] - model.predict(X[rows])) ** 2, table["loss"].values[block == k], rtol=1e-12
        )
    validate(table)


def test_return_estimator_with_repeats_has_replicate_first(regression):
    X, y, _ = regression
    table = cross_val_losses(
        Ridge(), X, y, cv=3, n_repeats=2, random_state=0, return_estimator=True
    )
    assert table["estimator"].dims == ("replicate", "fold")
    assert table["estimator"].shape == (2, 3)
    assert all(hasattr(m, "coef_") for m in table["estimator"].values.ravel())


def test_tables_with_models_are_refused_by_the_writers(regression, tmp_path):
    X, y, _ = regression
    table = cross_val_losses(Ridge(), X, y, cv=3, random_state=0, return_estimator=True)
    for write, name in ((to_netcdf, "t.nc"), (to_csv, "t.csv")):
        with pytest.raises(ValueError, match=r'drop_vars\("estimator"\)'):
            write(table, tmp_path / name)
        assert not (tmp_path / name).exists()
        write(table.drop_vars("estimator"), tmp_path / name)
        assert (tmp_path / name).exists()
