"""Comparing learners from the inputs users bring: the method choice, ties, shapes, errors.

Each test here reproduces a defect found by trying the comparison API as a new user would
(methods="all" refused every input; tied learners got P(best) 1 and 0; repeated
``cross_validate`` results read as one long run; fold sizes in a documented shape refused;
KeyErrors and IndexErrors instead of messages). Reference values are identities: tied learners
are exchangeable, so they share P(best) equally; the runs of a repeated splitter are the
number of times each point is tested; the Nadeau–Bengio ratio of folds of 20 test and 80
training points is 20/80.
"""

from __future__ import annotations

import matplotlib
import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import RepeatedStratifiedKFold, ShuffleSplit, cross_validate
from sklearn.tree import DecisionTreeClassifier

from bayescv.fold_scores import fold_table, from_cross_validate, from_long_frame, nb_ratio
from bayescv.learner_comparison import compare_learners, compare_several, correlated_ttest
from bayescv.losses import from_arrays, from_elpd
from bayescv.plots import plot_best, plot_comparison

matplotlib.use("Agg")

X_FOLDS = np.array([0.81, 0.84, 0.80, 0.86, 0.83, 0.82, 0.85, 0.79, 0.84, 0.83])


def _two_learners():
    return fold_table({"a": X_FOLDS, "b": X_FOLDS - 0.02}, metric="accuracy")


def test_methods_all_runs_what_the_input_allows():
    one = compare_learners(_two_learners(), methods="all")
    assert one["method"].values.tolist() == ["correlated_t", "nadeau_bengio", "naive_folds"]
    rng = np.random.default_rng(0)
    blocks = np.repeat(np.arange(5), 20)
    a = from_arrays(rng.normal(1.0, 0.3, 100), blocks)
    b = from_arrays(a["loss"].values + rng.normal(0.1, 0.1, 100), blocks)
    rows = compare_learners({"a": a, "b": b}, methods="all", random_state=0)
    assert "hierarchical_datasets" not in rows["method"].values  # one data set
    assert {"naive_points", "bayle_within", "hierarchical_sources"} <= set(rows["method"].values)


def test_elpd_paired_blocks_get_the_point_level_method_only():
    rng = np.random.default_rng(1)
    tables = {n: from_elpd(rng.normal(-1.0, 0.5, 40), blocks="pairs") for n in ("c", "nc")}
    rows = compare_learners(tables)
    assert rows["method"].values.tolist() == ["naive_points"]
    assert compare_learners(tables, methods="all")["method"].values.tolist() == ["naive_points"]
    with pytest.raises(ValueError, match="consecutive pairs of points"):
        compare_learners(tables, methods=["correlated_t"])


def test_identical_learners_over_several_data_sets_keep_every_row():
    scores = np.stack([X_FOLDS, X_FOLDS - 0.03])  # two data sets
    table = fold_table({"a": scores, "b": scores}, metric="accuracy")
    rows = compare_learners(table, rope=0.01)
    hier = rows.where(rows["method"] == "hierarchical_datasets", drop=True)
    assert hier["dataset"].values.tolist() == ["0", "1", "new_dataset"]
    assert set(hier["flag"].values) == {"zero_variance"}
    assert np.isnan(hier["p_better"].values).all()
    assert {"correlated_t", "nadeau_bengio", "naive_folds"} <= set(rows["method"].values)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"methods": []}, "no methods given"),
        ({"pairs": []}, "pairs is empty"),
        ({"pairs": ("b", "a")}, r"for one pair write pairs=\[\(a, b\)\]"),
        ({"pairs": [("a", "a")]}, "two different learners"),
        ({"rope": "0.01"}, "rope must be a finite number"),
        ({"rope": True}, "rope must be a finite number"),
        ({"methods": "naive_points"}, "needs every point's loss"),
    ],
)
def test_bad_comparison_arguments_get_clear_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        compare_learners(_two_learners(), **kwargs)


def test_one_learner_is_refused_clearly():
    with pytest.raises(ValueError, match="at least two learners"):
        compare_learners(fold_table({"a": X_FOLDS}, metric="accuracy"))


def test_tied_learners_share_the_probability_of_being_best():
    two = compare_several(fold_table({"a": X_FOLDS, "b": X_FOLDS}, metric="accuracy"))
    np.testing.assert_array_equal(two["p_best"].values, [[0.5, 0.5]])
    four = compare_several(
        fold_table({"a": X_FOLDS, "b": X_FOLDS, "c": X_FOLDS, "d": X_FOLDS - 0.05},
                   metric="accuracy"),
        random_state=0,
    )  # fmt: skip
    np.testing.assert_allclose(four["p_best"].values, [[1 / 3, 1 / 3, 1 / 3, 0.0]])
    np.testing.assert_array_equal(four["p_equivalent_to_best"].values, [[1, 1, 1, 0]])
    # the pairwise table of the same result agrees: a tie at rope 0 splits evenly
    assert four["p_better"].sel(learner="a", other="b").item() == 0.5


def test_several_learners_draws_match_the_pairwise_closed_form():
    # For distinct learners P(a best) of two learners is P(μ_a < μ_b), the closed form.
    rng = np.random.default_rng(3)
    x = rng.normal(0.2, 0.02, 10)
    table = fold_table([x, x + rng.normal(0.005, 0.01, 10)], greater_is_better=False)
    out = compare_several(table, n_draws=40_000, random_state=0)
    closed = correlated_ttest(table)["p_better"].item()
    assert out["p_best"].values[0, 0] == pytest.approx(closed, abs=4 * 0.5 / np.sqrt(40_000))


def test_compare_several_checks_level():
    with pytest.raises(ValueError, match=r"level must be a number in \(0, 1\)"):
        compare_several(_two_learners(), level=2)


@pytest.mark.parametrize("shape", [(10,), (2, 5), (1, 2, 5), (5,), (1, 10)])
def test_fold_sizes_in_every_documented_shape(shape):
    t = fold_table(
        {"a": X_FOLDS, "b": X_FOLDS - 0.02}, runs=2, n_test=np.full(shape, 20.0),
        n_train=np.full(shape, 80.0), metric="accuracy",
    )  # fmt: skip
    assert t.attrs["sizes"] == "known"
    assert nb_ratio(t).tolist() == [20 / 80]


def test_fold_sizes_of_a_wrong_shape_say_what_fits():
    with pytest.raises(ValueError, match=r"give shape \(J,\) = \(10,\)"):
        fold_table({"a": X_FOLDS, "b": X_FOLDS}, runs=2, n_test=np.ones(3),
                   n_train=np.ones(3), metric="accuracy")  # fmt: skip


@pytest.fixture(scope="module")
def cancer():
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    return X[:, :5], y


def _results(cancer, cv):
    X, y = cancer
    learners = [("lr", LogisticRegression(max_iter=2000)),
                ("tree", DecisionTreeClassifier(max_depth=2, random_state=0))]  # fmt: skip
    return {n: cross_validate(e, X, y, cv=cv, return_indices=True) for n, e in learners}


def test_repeated_cross_validate_results_give_their_runs(cancer):
    res = _results(cancer, RepeatedStratifiedKFold(n_splits=5, n_repeats=3, random_state=0))
    table = from_cross_validate(res)
    assert (table.sizes["repetition"], table.sizes["fold"]) == (3, 5)
    with pytest.raises(ValueError, match="partition the data 3 time"):
        from_cross_validate(res, runs=1)
    # A splitter whose test sets do not partition the data is one run of all its splits.
    shuffled = from_cross_validate(_results(cancer, ShuffleSplit(4, random_state=0)))
    assert (shuffled.sizes["repetition"], shuffled.sizes["fold"]) == (1, 4)


def test_scores_instead_of_cross_validate_dicts_are_refused_clearly():
    with pytest.raises(ValueError, match=r"use bayescv\.fold_table"):
        from_cross_validate({"a": X_FOLDS, "b": X_FOLDS})


def test_long_frame_errors_name_the_problem():
    frame = pd.DataFrame({
        "learner": ["a"] * 6 + ["b"] * 6, "repetition": [0, 0, 0, 1, 1, 1] * 2,
        "fold": [0, 1, 2, 3, 4, 5] * 2, "score": np.linspace(0.7, 0.9, 12),
    })  # fmt: skip
    with pytest.raises(ValueError, match="fold labels must restart in every repetition"):
        from_long_frame(frame, metric="accuracy")
    with pytest.raises(ValueError, match="column 'nope' not in the frame"):
        from_long_frame(frame, metric="accuracy", n_test="nope")


def test_plots_name_an_unknown_data_set_and_draw_a_point_mass():
    result = correlated_ttest(
        fold_table({"a": [1.0, 2, 3], "b": [1.0, 2, 3]}, greater_is_better=False), rope=0.5
    )
    ax = plot_comparison(result)  # every difference 0: a point mass, no warning
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["all mass at 0: a better 0.000, equivalent 1.000, b better 0.000"]
    with pytest.raises(ValueError, match="unknown dataset 'x'"):
        plot_comparison(result, dataset="x")
    with pytest.raises(ValueError, match="unknown dataset 'x'"):
        plot_best(compare_several(_two_learners()), dataset="x")


def test_leave_one_source_out_tables_keep_random_kfold_methods_out_by_default():
    # As cv_intervals does: ρ = n_test/n_train is the fold correlation of random K-fold CV.
    rng = np.random.default_rng(4)
    src = np.repeat(np.arange(6), 30)
    a = from_arrays(rng.normal(1, 0.3, 180), src, source=src, scheme="source")
    b = from_arrays(a["loss"].values + rng.normal(0.1, 0.1, 180), src, source=src,
                    scheme="source")  # fmt: skip
    rows = compare_learners({"a": a, "b": b})
    assert not {"correlated_t", "nadeau_bengio"} & set(rows["method"].values)
    named = compare_learners({"a": a, "b": b}, methods=["correlated_t", "naive_folds"])
    assert named["flag"].values.tolist() == ["random_kfold_only", ""]
    assert set(named["target"].values) == {"expected_cv"}
