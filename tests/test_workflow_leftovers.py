"""Real scikit-learn workflows: clipped log loss, SVC probabilities, repeated CV without
indices, and leave-one-group-out fold scores."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss
from sklearn.model_selection import (
    KFold,
    LeaveOneGroupOut,
    RepeatedKFold,
    cross_val_predict,
    cross_validate,
)
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from sklearn.tree import DecisionTreeClassifier

from bayescv import compare_learners, cross_val_losses, from_cross_validate
from bayescv.cv import losses_from_predictions
from bayescv.cv.loss_functions import LOG_LOSS_CAP


@pytest.fixture(scope="module")
def cancer():
    X, y = load_breast_cancer(return_X_y=True)
    return X[:, :5], y


def test_neg_log_loss_clips_as_scikit_learn_and_says_how_many(cancer):
    # A decision tree's hard 0/1 probabilities: scikit-learn's log_loss clips them to
    # [eps, 1 - eps]; loss="neg_log_loss" gave an error before.
    X, y = cancer
    tree = DecisionTreeClassifier(random_state=0)
    cv = KFold(5, shuffle=True, random_state=0)
    with pytest.warns(UserWarning, match=r"neg_log_loss': \d+ of 569 test point\(s\).*clipped"):
        table = cross_val_losses(tree, X, y, cv=cv, loss="neg_log_loss")
    proba = cross_val_predict(tree, X, y, cv=cv, method="predict_proba")
    rows = table["index"].values
    # reference: sklearn.metrics.log_loss on each point's out-of-fold probabilities
    expected = [log_loss(y[[i]], proba[[i]], labels=[0, 1]) for i in rows]
    np.testing.assert_allclose(table["loss"].values, expected, rtol=1e-12)
    assert float(table["loss"].mean()) == pytest.approx(log_loss(y, proba), rel=1e-12)
    scores = cross_validate(tree, X, y, cv=cv, scoring="neg_log_loss")["test_score"]
    np.testing.assert_allclose(table["loss"].groupby("block").mean().values, -scores, rtol=1e-12)
    clipped = int((table["loss"].values == LOG_LOSS_CAP).sum())
    assert clipped > 0  # the clipped points, counted in the result as well as the warning
    assert table.attrs["n_clipped"] == clipped
    # the same numbers, and the same warning, from the out-of-fold predictions
    with pytest.warns(UserWarning, match="clipped"):
        again = losses_from_predictions(y, proba, cv, loss="neg_log_loss")
    np.testing.assert_allclose(np.sort(again["loss"].values), np.sort(table["loss"].values))
    # bayescv's own "log_loss" still refuses them, and names the scorer that clips
    with pytest.raises(ValueError, match=r"probability 0.*loss='neg_log_loss'"):
        cross_val_losses(tree, X, y, cv=cv, loss="log_loss")


@pytest.mark.parametrize("pipeline", [False, True])
def test_svc_without_probabilities_is_told_how_to_get_them(cancer, pipeline):
    X, y = cancer
    est = make_pipeline(StandardScaler(), SVC()) if pipeline else SVC()
    name = "svc__probability" if pipeline else "probability"
    with pytest.raises(ValueError, match=rf"lacks: set {name}=True.*CalibratedClassifierCV"):
        cross_val_losses(est, X, y, cv=3, loss="brier")


def test_repeated_cv_without_indices_is_read_as_one_run_with_a_warning(cancer):
    X, y = cancer
    cv = RepeatedKFold(n_splits=5, n_repeats=4, random_state=0)
    res = {
        "lr": cross_validate(make_pipeline(StandardScaler(), LogisticRegression()), X, y, cv=cv),
        "tree": cross_validate(DecisionTreeClassifier(max_depth=2, random_state=0), X, y, cv=cv),
    }
    with pytest.warns(UserWarning, match=r"20 folds are read as one run.*pass runs=R"):
        table = from_cross_validate(res)
    assert (table.sizes["repetition"], table.sizes["fold"]) == (1, 20)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert from_cross_validate(res, runs=4).sizes["repetition"] == 4
        assert from_cross_validate(res, runs=1).sizes["fold"] == 20
        # 3 folds cannot be several runs, and one run of 10 (cv=10, the usual case) is not
        # warned about: nothing to warn about
        for j in (3, 10):
            first = {k: {"test_score": v["test_score"][:j]} for k, v in res.items()}
            assert from_cross_validate(first).sizes["fold"] == j


def test_leave_one_group_out_fold_scores_are_flagged(cancer):
    X, y = cancer
    groups = np.arange(y.size) % 6
    res = {
        "lr": cross_validate(
            make_pipeline(StandardScaler(), LogisticRegression()),
            X, y, cv=LeaveOneGroupOut(), groups=groups,
        ),
        "tree": cross_validate(
            DecisionTreeClassifier(max_depth=2, random_state=0),
            X, y, cv=LeaveOneGroupOut(), groups=groups,
        ),
    }  # fmt: skip
    table = from_cross_validate(res, scheme="source")
    assert table.attrs["scheme"] == "source"
    default = compare_learners(table)
    assert default["method"].values.tolist() == ["naive_folds"]
    assert set(default["target"].values) == {"expected_cv"}
    named = compare_learners(table, methods=["correlated_t", "nadeau_bengio"])
    assert set(named["target"].values) == {"expected_cv"}
    assert all("random_kfold_only" in f for f in named["flag"].values)
    # the default stays random K-fold, with err as the target
    with pytest.raises(ValueError, match="scheme must be 'random' or 'source'"):
        from_cross_validate(res, scheme="groups")
