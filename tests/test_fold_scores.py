"""Fold-score tables from the results users already have (scikit-learn, long frames, loss tables)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import RepeatedStratifiedKFold, cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier

from bayescv.fold_scores import (
    fold_differences,
    fold_table,
    from_cross_validate,
    from_long_frame,
    from_loss_tables,
    nb_ratio,
    validate_fold_table,
)
from bayescv.losses import from_arrays, stack_replicates


@pytest.fixture(scope="module")
def cv_results():
    X, y = load_breast_cancer(return_X_y=True)
    cv = RepeatedStratifiedKFold(n_splits=5, n_repeats=2, random_state=0)
    learners = {
        "lr": make_pipeline(StandardScaler(), LogisticRegression()),
        "tree": DecisionTreeClassifier(random_state=0),
    }
    return {
        name: cross_validate(
            est, X, y, cv=cv, return_indices=True, scoring=["accuracy", "neg_log_loss"]
        )
        for name, est in learners.items()
    }, y.size


def test_from_cross_validate_reads_scores_sizes_and_direction(cv_results):
    results, n = cv_results
    table = from_cross_validate(results, scoring="accuracy", runs=2)
    assert dict(table["loss"].sizes) == {"dataset": 1, "learner": 2, "repetition": 2, "fold": 5}
    # scikit-learn's scores are greater-is-better: the table holds their negatives.
    np.testing.assert_array_equal(
        table["loss"].sel(learner="lr").values.ravel(), -results["lr"]["test_accuracy"]
    )
    assert table.attrs["greater_is_better"] == 1
    assert table.attrs["sizes"] == "known"
    # Each repetition's test sets partition the data.
    np.testing.assert_array_equal(table["n_test"].sum("fold").values, [[n, n]])
    np.testing.assert_array_equal((table["n_test"] + table["n_train"]).values, n)
    with pytest.raises(ValueError, match="has no 'test_f1'"):
        from_cross_validate(results, scoring="f1")


def test_long_frame_equals_the_array_builder():
    rng = np.random.default_rng(0)
    scores = rng.uniform(0.6, 0.9, size=(3, 2, 2, 4))  # dataset, learner, run, fold
    rows = [
        {"dataset": f"d{d}", "learner": ["lr", "rf"][j], "repetition": r, "fold": k,
         "score": scores[d, j, r, k]}
        for d in range(3) for j in range(2) for r in range(2) for k in range(4)
    ]  # fmt: skip
    frame = pd.DataFrame(rows).sample(frac=1.0, random_state=0)  # order must not matter
    from_frame = from_long_frame(frame, metric="accuracy")
    ref = fold_table(
        scores.reshape(3, 2, 8), runs=2, learners=["lr", "rf"], datasets=["d0", "d1", "d2"],
        greater_is_better=True, metric="accuracy",
    )  # fmt: skip
    from_frame = from_frame.sel(dataset=ref["dataset"], learner=ref["learner"])
    np.testing.assert_array_equal(from_frame["loss"].values, ref["loss"].values)
    with pytest.raises(ValueError, match="have no score"):
        from_long_frame(frame.iloc[1:], metric="accuracy")
    with pytest.raises(ValueError, match="duplicated"):
        from_long_frame(pd.concat([frame, frame.iloc[:1]]), metric="accuracy")
    with pytest.raises(ValueError, match="which way"):
        from_long_frame(frame)
    with pytest.raises(ValueError, match="not a scikit-learn scorer"):
        from_long_frame(frame, metric="my_score")


def test_from_loss_tables_gives_block_means_and_sizes():
    rng = np.random.default_rng(1)
    block = np.repeat([0, 1, 2], [30, 30, 31])
    runs = [from_arrays(rng.normal(size=91), block) for _ in range(2)]
    other = [t.copy(data={"loss": t["loss"].values + 1}) for t in runs]
    a = stack_replicates(runs, replicate_kind="repeat")
    b = stack_replicates(other, replicate_kind="repeat")
    table = from_loss_tables({"a": a, "b": b})
    means = [[runs[r]["loss"].values[block == k].mean() for k in range(3)] for r in range(2)]
    np.testing.assert_allclose(table["loss"].sel(learner="a").values[0], means)
    np.testing.assert_allclose(fold_differences(table, "a", "b").values, -1.0)
    np.testing.assert_array_equal(table["n_test"].values[0], [[30, 30, 31]] * 2)
    np.testing.assert_allclose(nb_ratio(table), np.mean([30 / 61, 30 / 61, 31 / 60]))
    with pytest.raises(ValueError, match="share their CV splits"):
        from_loss_tables(
            [runs[0], from_arrays(rng.normal(size=91), np.repeat([0, 1, 2], [31, 30, 30]))]
        )


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="NaN"):
        fold_table([[0.1, np.nan]], greater_is_better=False)
    with pytest.raises(ValueError, match="not 3 runs"):
        fold_table([[0.1, 0.2, 0.3, 0.4]], runs=3, greater_is_better=False)
    with pytest.raises(ValueError, match="at least 2 folds"):
        fold_table([[0.1, 0.2]], runs=2, greater_is_better=False)
    with pytest.raises(ValueError, match="differ in shape"):
        fold_table({"a": [0.1, 0.2], "b": [0.1, 0.2, 0.3]}, greater_is_better=False)
    with pytest.raises(ValueError, match="not a fold-score table"):
        validate_fold_table(from_arrays([0.1, 0.2, 0.3, 0.4], [0, 0, 1, 1]))
    t = fold_table([[0.1, 0.2], [0.2, 0.3]], greater_is_better=False)
    with pytest.raises(ValueError, match="unknown learner"):
        fold_differences(t, "A", "Z")
    assert nb_ratio(t).tolist() == [1.0]  # unknown sizes: 1/(K − 1)


@pytest.mark.parametrize(
    ("scorer", "make"),
    [("accuracy", "classifier"), ("neg_mean_squared_error", "regressor"),
     ("neg_log_loss", "classifier")],
)  # fmt: skip
def test_scorer_names_give_the_per_point_loss_of_the_score(scorer, make):
    """A scorer that is a mean of per-point losses: fold means of the table = −score."""
    from sklearn.datasets import make_classification, make_regression
    from sklearn.linear_model import Ridge
    from sklearn.model_selection import KFold

    from bayescv.cv import cross_val_losses

    if make == "classifier":
        X, y = make_classification(120, 5, random_state=0)
        est, offset = LogisticRegression(), (1.0 if scorer == "accuracy" else 0.0)
    else:
        X, y = make_regression(120, 5, noise=5.0, random_state=0)
        est, offset = Ridge(), 0.0
    folds = KFold(4, shuffle=True, random_state=0)
    table = cross_val_losses(est, X, y, cv=folds, loss=scorer)
    scores = cross_validate(est, X, y, cv=folds, scoring=scorer)["test_score"]
    means = [table["loss"].values[table["block"].values == k].mean() for k in range(4)]
    # accuracy: loss = 1 − accuracy; negated errors: loss = −score.
    expected = offset - scores if scorer == "accuracy" else -scores
    np.testing.assert_allclose(means, expected, rtol=1e-10, atol=1e-12)


def test_scorers_without_per_point_losses_are_refused_with_the_way_out():
    from bayescv.cv import get_loss

    with pytest.raises(ValueError, match=r"not a mean of per-point losses.*from_cross_validate"):
        get_loss("roc_auc")


def test_score_range_declares_the_range_of_a_custom_score():
    # A custom score in [0, 1] (greater is better): its losses, the negated scores, lie in
    # [-1, 0], and compare_several keeps its intervals there.
    from bayescv import compare_several

    scores = {"a": [0.97, 0.99, 1.0, 0.98], "b": [0.80, 0.85, 0.90, 0.88]}
    table = fold_table(scores, greater_is_better=True, metric="my_auc", score_range=(0, 1))
    assert table.attrs["loss_range"] == [-1.0, 0.0]
    rows = compare_several(table, random_state=0)
    assert float(rows["lower"].min()) >= -1.0
    # Unbounded without the declaration: the interval of "a" reaches below -1.
    loose = compare_several(
        fold_table(scores, greater_is_better=True, metric="my_auc"), random_state=0
    )
    assert float(loose["lower"].sel(learner="a").squeeze()) < -1.0
    assert "truncated_to_range" in str(rows["flag"].sel(learner="a").values)


def test_score_range_passes_through_the_builders(cv_results):
    results, _ = cv_results
    # A custom name for accuracy: its range is declared, not looked up.
    renamed = {
        name: {("test_my_acc" if k == "test_accuracy" else k): v for k, v in res.items()}
        for name, res in results.items()
    }
    assert from_cross_validate(renamed, scoring="my_acc").attrs["loss_range"] == [
        -np.inf,
        np.inf,
    ]
    table = from_cross_validate(renamed, scoring="my_acc", score_range=(0, 1))
    assert table.attrs["loss_range"] == [-1.0, 0.0]
    frame = pd.DataFrame(
        {"learner": ["a", "a", "b", "b"], "fold": [0, 1, 0, 1], "score": [0.2, 0.3, 0.1, 0.4]}
    )
    long = from_long_frame(frame, greater_is_better=False, score_range=(0, 1))
    assert long.attrs["loss_range"] == [0.0, 1.0]  # losses keep the range as given


@pytest.mark.parametrize(
    ("score_range", "message"),
    [((1, 0), "low < high"), ((0, 0.95), "outside the declared score_range"), ("wide", "must be")],
)
def test_score_range_refuses_bad_declarations(score_range, message):
    with pytest.raises(ValueError, match=message):
        fold_table([[0.9, 0.97, 0.93]], greater_is_better=True, score_range=score_range)
