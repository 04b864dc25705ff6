"""Defects found by running real scikit-learn workflows through the public API.

Each test names what a user did and asserts what is right; every one failed before its fix.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LinearRegression, Ridge
from sklearn.model_selection import KFold, LeaveOneGroupOut, cross_val_score
from sklearn.tree import DecisionTreeRegressor

import bayescv
from bayescv.cv import get_loss, losses_on_folds


@pytest.fixture(scope="module")
def labelled():
    """40 points, 2 features, binary integer labels."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    return X, (X[:, 0] + 0.5 * rng.normal(size=40) > 0).astype(int)


# --- a regressor asked for the 0-1 loss on integer labels ----------------------------------


@pytest.mark.parametrize("regressor", [Ridge(), LinearRegression()], ids=["ridge", "ols"])
def test_zero_one_loss_of_a_regressors_continuous_predictions_is_refused(labelled, regressor):
    # Before: every loss was 1 (a continuous prediction never equals a label), a CV error
    # of exactly 1 with intervals around it. scikit-learn's accuracy scorer refuses it.
    X, y = labelled
    cv = KFold(5, shuffle=True, random_state=0)
    with pytest.raises(ValueError, match="continuous targets"):
        cross_val_score(regressor, X, y, cv=cv, scoring="accuracy", error_score="raise")
    with pytest.raises(ValueError, match=r"non-integer value\(s\).*not labels"):
        bayescv.cross_val_losses(regressor, X, y, cv=cv, loss="zero_one")
    with pytest.raises(ValueError, match=r"non-integer value\(s\)"):
        bayescv.cross_val_losses(regressor, X, y, cv=cv, loss="accuracy", batched=False)
    folds = list(cv.split(X))
    with pytest.raises(ValueError, match=r"non-integer value\(s\)"):
        losses_on_folds(regressor, X, y, folds, get_loss("zero_one"))


def test_zero_one_loss_of_a_regressor_predicting_labels_still_matches_sklearn(labelled):
    # A fully grown tree predicts the labels of its pure leaves: 0-1 losses are meaningful,
    # and their mean equals 1 - scikit-learn's accuracy over equal folds (40 = 5 x 8).
    X, y = labelled
    cv = KFold(5, shuffle=True, random_state=0)
    tree = DecisionTreeRegressor(random_state=0)
    table = bayescv.cross_val_losses(tree, X, y, cv=cv, loss="zero_one")
    expected = 1 - cross_val_score(tree, X, y, cv=cv, scoring="accuracy").mean()
    assert float(table["loss"].mean()) == pytest.approx(expected, abs=1e-12)


# --- source labels that are missing or of mixed types ----------------------------------------


def _missing(kind: str, n: int) -> object:
    labels = np.array(["s1", "s2", "s3", "s4"] * (n // 4), dtype=object)
    if kind == "none":
        labels[3] = None
        return labels
    if kind == "nan":
        labels[3] = np.nan
        return pd.Series(labels)
    if kind == "float":
        codes = np.arange(n, dtype=float) % 4
        codes[3] = np.nan
        return codes
    return pd.Series(pd.Categorical(np.where(np.arange(n) == 3, None, labels)))


@pytest.mark.parametrize("kind", ["none", "nan", "float", "categorical"])
@pytest.mark.parametrize("cv", [None, 2, KFold(4)], ids=["logo", "int", "kfold"])
def test_missing_source_labels_are_refused_naming_groups(labelled, kind, cv):
    # Before: scikit-learn's "Input contains NaN" or "'<' not supported between ... 'str'"
    # from inside a splitter, or (a splitter ignoring groups) every fold fitted and then
    # "'source' labels contain NaN", naming no argument the user passed.
    X, y = labelled
    groups = _missing(kind, len(y))
    with pytest.raises(ValueError, match=r"groups has 1 missing label\(s\).*row 3"):
        bayescv.cross_val_losses(Ridge(), X, y.astype(float), groups=groups, cv=cv)


def test_missing_source_labels_are_refused_by_the_bootstrap_runner(labelled):
    X, y = labelled
    with pytest.raises(ValueError, match=r"groups has 1 missing label\(s\)"):
        bayescv.bootstrap_cv_losses(
            Ridge(), X, y.astype(float), groups=_missing("none", len(y)), n_bootstrap=2
        )


@pytest.mark.parametrize(
    "cv", [None, LeaveOneGroupOut(), KFold(4)], ids=["default", "logo", "kfold"]
)
def test_source_labels_of_mixed_types_are_refused(labelled, cv):
    # Before: TypeError "'<' not supported between instances of 'int' and 'str'".
    X, y = labelled
    groups = np.array(["s1", "s2", "s3", "s4"] * 10, dtype=object)
    groups[5] = 7
    with pytest.raises(ValueError, match=r"groups mixes label types .*\(int, str\)"):
        bayescv.cross_val_losses(Ridge(), X, y.astype(float), groups=groups, cv=cv)


def test_source_labels_of_one_type_still_give_leave_one_source_out(labelled):
    # Object, categorical and gapped integer labels: one block per source, and the mean of
    # the block means equals scikit-learn's LeaveOneGroupOut cross_val_score (a mean of fold
    # means).
    X, y = labelled
    yf = y.astype(float)
    names = np.array(["s1", "s2", "s3", "s4"] * 10, dtype=object)
    for groups in (names, pd.Series(pd.Categorical(names)), np.array([3, 7, 100, 42] * 10)):
        table = bayescv.cross_val_losses(Ridge(), X, yf, groups=groups)
        expected = -cross_val_score(
            Ridge(), X, yf, groups=groups, cv=LeaveOneGroupOut(), scoring="neg_mean_squared_error"
        ).mean()
        assert table.attrs["scheme"] == "source"
        assert np.unique(table["block"].values).size == 4
        means = table["loss"].groupby("block").mean().values
        assert float(means.mean()) == pytest.approx(expected, rel=1e-12)


# --- a target with a missing value -----------------------------------------------------------


@pytest.mark.parametrize("task", ["classifier", "regressor", "labels"])
def test_a_missing_target_is_refused_by_row_before_any_fit(labelled, task):
    # Before: for a classifier, scikit-learn's type_of_target warned "invalid value
    # encountered in cast" (an error under warnings-as-errors) and the first fit said
    # "Input y contains NaN" without a row; now one ValueError names the row.
    from sklearn.linear_model import LogisticRegression

    X, y = labelled
    if task == "labels":
        target = pd.Series(np.where(y == 1, "yes", "no"), dtype=object)
        target[3] = None
        estimator = LogisticRegression()
    else:
        target = y.astype(float)
        target[3] = np.nan
        estimator = LogisticRegression() if task == "classifier" else Ridge()
    with pytest.raises(ValueError, match=r"y has 1 point\(s\) with a missing .* row 3"):
        bayescv.cross_val_losses(estimator, X, target, cv=5, random_state=0)


# --- multiclass Brier scores: their range is [0, 2], not [0, 1] ------------------------------


def test_multiclass_neg_brier_fold_scores_keep_the_difference_inside_its_interval():
    # scikit-learn's multiclass Brier score sums over the classes (in [0, 2]): a dummy that
    # guesses one class at random scores -4/3 per fold on iris. Before, the fold table took
    # the range [-1, 0] and cut every interval of the difference to [1, 1], around an
    # estimate of 1.27 that lay outside it.
    from sklearn.datasets import load_iris
    from sklearn.dummy import DummyClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_validate

    from bayescv.fold_scores import from_cross_validate
    from bayescv.learner_comparison import compare_learners

    X, y = load_iris(return_X_y=True)
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    learners = {
        "dummy": DummyClassifier(strategy="stratified", random_state=0),
        "lr": LogisticRegression(max_iter=1000),
    }
    res = {
        name: cross_validate(e, X, y, cv=cv, scoring=["neg_brier_score"], return_indices=True)
        for name, e in learners.items()
    }
    assert (res["dummy"]["test_neg_brier_score"] < -1).all()  # the premise: beyond [-1, 0]
    table = from_cross_validate(res, scoring="neg_brier_score")
    assert table.attrs["loss_range"] == [0.0, 2.0]
    out = compare_learners(table).to_dataframe()
    # the estimate is the mean fold difference of scikit-learn's scores (lr - dummy)
    expected = np.mean(res["lr"]["test_neg_brier_score"] - res["dummy"]["test_neg_brier_score"])
    assert np.allclose(out["estimate"], expected, rtol=1e-12)
    assert (out["lower"] < out["estimate"]).all()
    assert (out["estimate"] < out["upper"]).all()
    assert not out["flag"].str.contains("truncated").any()


def test_a_brier_table_without_a_declared_range_takes_the_multiclass_range():
    # A hand-built (or CSV) table named "brier" does not say how many classes there were:
    # its range is the one holding both, [0, 2], the same intervals as declaring it. Before,
    # [0, 1]: losses up to 1.5 passed and the interval was cut at 1.
    losses = [1.5, 0.2, 1.2, 0.9, 1.4, 0.1, 1.1, 0.3]
    blocks = [0, 0, 0, 0, 1, 1, 1, 1]
    plain = bayescv.from_arrays(losses, blocks, loss_name="brier")
    declared = bayescv.from_arrays(losses, blocks, loss_name="brier", loss_range=(0.0, 2.0))
    got = bayescv.cv_intervals(plain, ["naive_points"]).sel(method_name="naive_points")
    ref = bayescv.cv_intervals(declared, ["naive_points"]).sel(method_name="naive_points")
    assert float(got["upper"]) > 1.0
    assert float(got["upper"]) == pytest.approx(float(ref["upper"]), rel=1e-12)
    assert str(got["flag"].values) == ""


def test_accuracy_fold_scores_in_percent_are_refused():
    # Before: accepted under the range [0, 1] of "accuracy", and every interval of their
    # difference was cut to [-1, 1] (with only a truncation flag).
    from bayescv.fold_scores import fold_table

    with pytest.raises(ValueError, match=r"outside \[0.0, 1.0\], the range of .*'accuracy'"):
        fold_table([[85.0, 80.0, 82.0], [70.0, 75.0, 72.0]], metric="accuracy")
    scaled = fold_table([[85.0, 80.0, 82.0], [70.0, 75.0, 72.0]], metric="accuracy",
                        score_range=(0, 100))  # fmt: skip
    assert scaled.attrs["loss_range"] == [-100.0, 0.0]
