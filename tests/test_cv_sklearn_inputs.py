"""Inputs scikit-learn accepts, run through bayescv's CV: each test reproduces a defect.

* A one-column target ``y`` of shape (n, 1) with an estimator that predicts 1-d values
  (Ridge, a decision tree) broadcast to an (n, n) difference: every squared error wrong,
  silently (the row means had the right shape); classifiers were refused.
* The batched fits of ``StandardScaler`` + Ridge / logistic regression scaled a feature that
  is constant on a training set (a one-hot column of the held-out source) by its rounding
  residue (~1e-9) instead of 1.
* ``groups`` with a splitter that ignores them: a source tested in two folds was merged into
  one block labelled as held out (``scheme="source"``), though half of it was trained on.
* Probability losses looked the true class up in ``classes`` by binary search: a class order
  other than sorted gave wrong Brier and log losses; an estimator without ``classes_`` gave a
  raw numpy error; multilabel 0-1 loss was refused.
* ``batched=True`` fitted liblinear's logistic regression without its penalised intercept.
* Boolean (train, test) masks, which scikit-learn accepts, were read as indices 0 and 1.
* A fold whose fit raised said nothing of which fit it was.

Reference values: scikit-learn's own results on the same splits (``cross_val_predict``,
``sklearn.metrics``), or the same table built from the 1-d form of the input (an identity).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.datasets import make_classification, make_multilabel_classification
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.metrics import zero_one_loss
from sklearn.model_selection import KFold, StratifiedKFold, cross_val_predict
from sklearn.multioutput import MultiOutputClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeRegressor

from bayescv import cross_val_losses, losses_from_predictions
from bayescv.cv import UnshuffledFoldsWarning
from bayescv.cv._batched import batching_reason

CV = KFold(5, shuffle=True, random_state=0)


def _frame(seed=0, n=60):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(rng.normal(size=(n, 3)), columns=list("abc"))
    df["t"] = df.a + rng.normal(size=n)
    return df


@pytest.mark.parametrize("make", [Ridge, DecisionTreeRegressor])
def test_one_column_target_gives_sklearn_squared_errors(make):
    df = _frame()
    X, y = df[["a", "b", "c"]], df[["t"]]
    est = make() if make is Ridge else make(random_state=0)
    table = cross_val_losses(est, X, y, cv=CV)
    pred = np.asarray(cross_val_predict(est, X, y, cv=CV)).reshape(-1)
    expected = (df["t"].to_numpy() - pred) ** 2
    np.testing.assert_allclose(table["loss"].values, expected[table["index"].values], rtol=1e-12)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.DataConversionWarning")  # as sklearn
@pytest.mark.parametrize("loss", ["zero_one", "log_loss", "brier"])
def test_one_column_class_target_equals_the_1d_one(loss):
    X, y = make_classification(60, 4, random_state=0)
    one_d = cross_val_losses(LogisticRegression(), X, y, cv=CV, loss=loss)
    column = cross_val_losses(LogisticRegression(), X, y[:, None], cv=CV, loss=loss)
    np.testing.assert_array_equal(column["loss"].values, one_d["loss"].values)


def test_multilabel_zero_one_is_subset_accuracy():
    X, Y = make_multilabel_classification(60, n_classes=3, random_state=0)
    est = MultiOutputClassifier(LogisticRegression())
    table = cross_val_losses(est, X, Y, cv=CV, loss="zero_one")
    pred = cross_val_predict(est, X, Y, cv=CV)
    # sklearn.metrics.zero_one_loss on multilabel input: a point is wrong if any label is
    assert table["loss"].mean() == pytest.approx(zero_one_loss(Y, pred), abs=1e-15)
    assert set(np.unique(table["loss"].values)) <= {0.0, 1.0}


@pytest.mark.parametrize("loss", ["brier", "log_loss"])
def test_class_order_of_probability_columns_is_respected(loss):
    X, y = make_classification(90, 5, n_informative=3, n_classes=3, random_state=0)
    labels = np.array(["hi", "lo", "mid"])[y]
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    proba = cross_val_predict(LogisticRegression(), X, labels, cv=cv, method="predict_proba")
    sorted_ = losses_from_predictions(labels, proba, cv, loss=loss)
    permuted = losses_from_predictions(
        labels, proba[:, [1, 2, 0]], cv, loss=loss, classes=["lo", "mid", "hi"]
    )
    # the same numbers; the multiclass Brier sum runs over the columns in another order
    np.testing.assert_allclose(permuted["loss"].values, sorted_["loss"].values, rtol=1e-14)


class _NoClasses(ClassifierMixin, BaseEstimator):
    """A classifier without ``classes_``: uniform probabilities over two columns."""

    def fit(self, X, y):
        return self

    def predict_proba(self, X):
        return np.full((len(X), 2), 0.5)


def test_probability_loss_without_classes_is_named():
    X, y = make_classification(40, 5, random_state=0)
    with pytest.raises(ValueError, match="classes_"):
        cross_val_losses(
            _NoClasses(), X, y, cv=KFold(4, shuffle=True, random_state=0), loss="brier"
        )


@pytest.mark.parametrize("seed", range(6))
def test_batched_scaler_leaves_a_held_out_one_hot_column_unscaled(seed):
    rng = np.random.default_rng(seed)
    site = rng.integers(0, 4, 40)
    X = np.c_[rng.normal(size=40), np.eye(4)[site]]
    y = X[:, 0] + site + rng.normal(size=40)
    est = make_pipeline(StandardScaler(), Ridge())
    batched, per_fit = (
        cross_val_losses(est, X, y, groups=site, batched=b)["loss"].values for b in (None, False)
    )
    np.testing.assert_allclose(batched, per_fit, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("column", ["one_row_differs", "ulp_jitter"])
def test_batched_scaler_on_features_constant_in_a_training_set(column):
    rng = np.random.default_rng(0)
    if column == "one_row_differs":  # constant in every training set without row 5
        extra = np.full(40, 3.7)
        extra[5] = 1.2
    else:  # constant up to rounding: scikit-learn's _is_constant_feature bound
        extra = 1000 + np.spacing(1000.0) * rng.integers(0, 2, 40)
    X = np.c_[rng.normal(size=40), extra]
    y = X[:, 0] + rng.normal(size=40)
    est = make_pipeline(StandardScaler(), Ridge())
    batched, per_fit = (
        cross_val_losses(est, X, y, cv=5, random_state=0, batched=b)["loss"].values
        for b in (None, False)
    )
    np.testing.assert_allclose(batched, per_fit, rtol=1e-9, atol=1e-12)


def test_groups_with_a_splitter_that_ignores_them_keep_fold_blocks():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = X[:, 0] + rng.normal(size=60)
    groups = np.repeat(["A", "B", "C", "D"], [24, 12, 12, 12])  # A fills two of five folds
    # The folds must follow the stored order (sorted by source), so KFold stays unshuffled.
    with pytest.warns(UnshuffledFoldsWarning):
        table = cross_val_losses(Ridge(), X, y, groups=groups, cv=KFold(5))
    assert table.attrs["scheme"] == "random"
    assert table["block"].values.tolist() == np.repeat(np.arange(5), 12).tolist()
    assert table["source"].values.tolist() == groups.tolist()


def test_liblinear_is_not_batched():
    est = LogisticRegression(solver="liblinear")
    assert "liblinear" in batching_reason(est, "predict_proba", auto=False)
    assert batching_reason(LogisticRegression(), "predict_proba", auto=False) == ""
    assert batching_reason(
        LogisticRegression(solver="liblinear", fit_intercept=False), "predict_proba", auto=False
    ) == ""  # fmt: skip
    X, y = make_classification(80, 5, random_state=0)
    cv = StratifiedKFold(4, shuffle=True, random_state=1)
    a, b = (
        cross_val_losses(est, X, y, cv=cv, loss="log_loss", batched=flag)["loss"].values
        for flag in (True, False)
    )
    np.testing.assert_array_equal(a, b)


def test_boolean_masks_are_folds():
    X, y = make_classification(40, 5, random_state=0)
    masks = []
    for _, test in KFold(4).split(X):
        mask = np.zeros(40, dtype=bool)
        mask[test] = True
        masks.append((~mask, mask))
    by_mask = cross_val_losses(LogisticRegression(), X, y, cv=masks)
    with pytest.warns(UnshuffledFoldsWarning):  # the same unshuffled folds as the masks
        by_index = cross_val_losses(LogisticRegression(), X, y, cv=KFold(4))
    np.testing.assert_array_equal(by_mask["loss"].values, by_index["loss"].values)
    np.testing.assert_array_equal(by_mask["block"].values, by_index["block"].values)


class _FailsOnSmallTraining(Ridge):
    def fit(self, X, y, sample_weight=None):
        if len(X) < 20:
            raise RuntimeError("boom")
        return super().fit(X, y, sample_weight)


def test_a_failing_fit_says_which_training_set():
    X = np.random.default_rng(0).normal(size=(36, 2))
    folds = [(np.arange(12, 36), np.arange(12)), (np.arange(12), np.arange(12, 36))]
    with pytest.raises(RuntimeError, match="boom") as info:
        cross_val_losses(_FailsOnSmallTraining(), X, X[:, 0], cv=folds, batched=False)
    (note,) = info.value.__notes__
    assert "training set of 12 points" in note
    assert "rows 12, 13, 14, 15, 16, ..." in note


def test_log_loss_of_probability_zero_names_the_causes():
    X, y = make_classification(60, 4, random_state=0)
    from sklearn.tree import DecisionTreeClassifier

    with pytest.raises(ValueError, match="probability 0") as info:
        cross_val_losses(DecisionTreeClassifier(random_state=0), X, y, cv=CV, loss="log_loss")
    assert "decision tree" in str(info.value)
    assert "'brier'" in str(info.value)
