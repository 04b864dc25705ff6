"""Comparing learners as a new scikit-learn / baycomp user tries it: defects found and fixed.

Each test reproduces one defect: unpaired folds accepted, a DataFrame read transposed, the
direction of "better" turned around, or a message that did not say the way out.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_iris
from sklearn.model_selection import KFold, cross_validate
from sklearn.tree import DecisionTreeClassifier

import bayescv
from bayescv.cli import main
from bayescv.fold_scores import fold_table, from_cross_validate, from_long_frame, from_loss_tables
from bayescv.losses import from_arrays


def _fake_result(scores, **extra):
    """A cross_validate-shaped dict (no fitting: the builders read only these keys)."""
    return {"fit_time": np.ones(len(scores)), "test_score": np.asarray(scores), **extra}


def test_from_cross_validate_refuses_learners_on_different_splits():
    # Two shuffled 5-fold runs of 150 points have the same fold sizes (30 each) but different
    # test sets: their fold scores are not paired, and were compared as if they were.
    X, y = load_iris(return_X_y=True)
    tree = DecisionTreeClassifier(random_state=0)
    results = {
        f"seed{s}": cross_validate(
            tree, X, y, cv=KFold(5, shuffle=True, random_state=s), return_indices=True
        )
        for s in (0, 1)
    }
    with pytest.raises(ValueError, match=r"test folds of 'seed1' differ .* same splits"):
        from_cross_validate(results)
    same = {"a": results["seed0"], "b": results["seed0"]}
    assert from_cross_validate(same).attrs["sizes"] == "known"


def test_from_cross_validate_says_which_scoring_to_pass():
    several = {"test_accuracy": np.ones(3), "test_f1": np.ones(3)}
    with pytest.raises(ValueError, match="pass scoring='accuracy' or 'f1'"):
        from_cross_validate({"a": several, "b": several})
    # cross_validate(..., scoring="accuracy") names its one score test_score, not
    # test_accuracy: the same scoring passed here names that score's metric (accuracy's
    # losses, its negation, lie in [-1, 0]); a name that is no scorer is refused.
    one = _fake_result([0.9, 0.8, 0.85])
    table = from_cross_validate({"a": one, "b": one}, scoring="accuracy")
    assert table.attrs["metric"] == "accuracy"
    assert list(table.attrs["loss_range"]) == [-1.0, 0.0]
    with pytest.raises(ValueError, match="not_a_scorer"):
        from_cross_validate({"a": one, "b": one}, scoring="not_a_scorer")


def test_from_cross_validate_names_the_learner_and_fold_of_a_failed_fit():
    # cross_validate's default error_score=np.nan puts NaN where a fit failed.
    results = {"a": _fake_result([0.9, np.nan, 0.8]), "b": _fake_result([0.9, 0.7, 0.8])}
    with pytest.raises(ValueError, match=r"'test_score' of 'a' is NaN .* fold\(s\) \[1\]"):
        from_cross_validate(results)


def _tables_on_splits(seeds):
    """Loss tables of one learner on shuffled 4-fold splits of 40 points, one per seed."""
    losses = np.linspace(0.0, 1.0, 40)
    tables = {}
    for s in seeds:
        block = np.empty(40, dtype=int)
        for k, (_, test) in enumerate(KFold(4, shuffle=True, random_state=s).split(losses)):
            block[test] = k
        tables[f"seed{s}"] = from_arrays(losses, block, loss_name="squared")
    return tables


def test_from_loss_tables_refuses_folds_that_hold_different_points():
    # Same block sizes (10 each), different points per block: the fold means are not paired.
    tables = _tables_on_splits([0, 1])
    with pytest.raises(ValueError, match="folds hold different points"):
        from_loss_tables(tables)
    with pytest.raises(ValueError, match="folds hold different points"):
        bayescv.compare_learners(tables, methods="correlated_t")


def test_from_loss_tables_accepts_the_same_folds_in_another_row_order():
    (table,) = _tables_on_splits([0]).values()
    order = np.argsort(table["block"].values, kind="stable")
    shuffled = table.isel(obs=order)
    out = from_loss_tables({"a": table, "b": shuffled})
    # A fold's mean does not depend on the order of its rows: the two rows are equal.
    a, b = out["loss"].sel(learner="a").values, out["loss"].sel(learner="b").values
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-15)


def test_from_loss_tables_refuses_different_losses():
    a = from_arrays([0.1, 0.3, 0.2, 0.6], [0, 0, 1, 1], loss_name="squared")
    b = from_arrays([0.2, 0.2, 0.4, 0.4], [0, 0, 1, 1], loss_name="absolute")
    with pytest.raises(ValueError, match="different losses \\('squared' and 'absolute'\\)"):
        from_loss_tables({"a": a, "b": b})


def test_cli_compare_refuses_tables_on_different_splits(tmp_path, capsys):
    paths = []
    for name, table in _tables_on_splits([0, 1]).items():
        paths.append(str(tmp_path / f"{name}.csv"))
        bayescv.to_csv(table, paths[-1])
    assert main(["compare", *paths, "--methods", "correlated_t"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "folds hold different points" in err


def test_fold_table_reads_a_dataframe_as_a_column_per_learner():
    # A (folds x learners) DataFrame was read as an (L, J) array: 5 "learners" of 2 folds.
    frame = pd.DataFrame({"lr": [0.9, 0.8, 0.85, 0.88, 0.86], "tree": [0.8, 0.78, 0.79, 0.8, 0.7]})
    table = fold_table(frame, metric="accuracy")
    # Identity: the same numbers given as the documented mapping {learner: fold scores}.
    expected = fold_table({c: frame[c].to_numpy() for c in frame}, metric="accuracy")
    assert table["learner"].values.tolist() == ["lr", "tree"]
    assert table["loss"].identical(expected["loss"])


def test_compare_learners_points_cross_validate_results_to_the_builder():
    X, y = load_iris(return_X_y=True)
    results = {
        s: cross_validate(DecisionTreeClassifier(random_state=s), X, y, cv=3) for s in (0, 1)
    }
    with pytest.raises(TypeError, match=r"bayescv\.from_cross_validate"):
        bayescv.compare_learners(results)
    with pytest.raises(TypeError, match=r"bayescv\.fold_table"):
        bayescv.compare_learners([[0.9, 0.8, 0.7], [0.8, 0.8, 0.6]])


def _long(n_datasets=1):
    rows = [
        {"dataset": f"d{d}", "learner": learner, "repetition": r, "fold": f,
         "score": 0.8 + 0.01 * f + (0.02 if learner == "x" else 0.0) + 0.001 * r}
        for d in range(n_datasets) for r in range(2) for f in range(3) for learner in "xy"
    ]  # fmt: skip
    return pd.DataFrame(rows)


def test_long_frame_says_a_score_is_nan_not_that_fold_labels_run_on():
    frame = _long()
    frame.loc[0, "score"] = np.nan
    with pytest.raises(ValueError, match="1 rows have a NaN or infinite 'score'") as info:
        from_long_frame(frame, metric="accuracy")
    assert "restart" not in str(info.value)
    # A missing row, fold labels 0..K-1 in every run: no advice about fold labels either.
    with pytest.raises(ValueError, match="cells have no score") as info:
        from_long_frame(_long().drop(index=3), metric="accuracy")
    assert "restart" not in str(info.value)


def test_long_frame_refuses_fold_sizes_that_differ_between_learners():
    frame = _long().assign(n_test=10, n_train=20)
    frame.loc[frame["learner"] == "y", "n_test"] = 15  # the second learner's were dropped
    with pytest.raises(ValueError, match="'n_test' differ on some fold"):
        from_long_frame(frame, metric="accuracy", n_test="n_test", n_train="n_train")


def test_a_neg_scorer_name_with_positive_values_is_refused():
    # scikit-learn's neg_* scorers return the negated error, <= 0; positive values under that
    # name are the error itself, and reading them as greater-is-better inverted "better".
    frame = _long().assign(score=lambda f: f["score"] - 0.5)  # "MSE" values, all positive
    with pytest.raises(ValueError, match="pass greater_is_better=False"):
        from_long_frame(frame, metric="neg_mean_squared_error")
    table = from_long_frame(frame, greater_is_better=False, metric="mean_squared_error")
    # x has the higher error on every fold, so the first learner is worse (loss = the value).
    out = bayescv.correlated_ttest(table)
    assert float(out["mean"].item()) == pytest.approx(0.02)


def test_learner_names_with_a_fold_table_are_refused_not_ignored():
    table = fold_table({"lr": [0.9, 0.8, 0.85], "tree": [0.8, 0.78, 0.79]}, metric="accuracy")
    with pytest.raises(ValueError, match=r"carries its learners' names"):
        bayescv.compare_learners(table, learners=["tree", "lr"], methods=["naive_folds"])


def test_cli_table_of_one_data_set_has_no_dataset_column(tmp_path, capsys):
    a = _tables_on_splits([0])["seed0"]
    b = a.copy(data={"loss": a["loss"].values ** 2})
    paths = [str(tmp_path / "a.csv"), str(tmp_path / "b.csv")]
    bayescv.to_csv(a, paths[0])
    bayescv.to_csv(b, paths[1])
    assert main(["compare", *paths, "--methods", "correlated_t"]) == 0
    header = capsys.readouterr().out.splitlines()[1].split()
    assert header[:2] == ["method", "a"]  # a "dataset" column of "0" came second


def _shuffle_split_table(sizes=True):
    """Two learners on 2 data sets, 10 ShuffleSplit splits of 100 points (20 test, 50 train)."""
    rng = np.random.default_rng(0)
    a = rng.normal(0.8, 0.03, (2, 10))
    scores = np.stack([a, a - rng.normal(0.01, 0.02, (2, 10))], axis=1)
    known = {"n_test": np.full(10, 20.0), "n_train": np.full(10, 50.0)} if sizes else {}
    return fold_table(
        scores, learners=["A", "B"], datasets=["d0", "d1"], greater_is_better=True, **known
    )


def test_hierarchical_datasets_takes_the_correlated_t_ratio_from_known_fold_sizes(monkeypatch):
    # compare_datasets used rho = 1/K = 0.1 here whatever the sizes, while correlated_t used
    # n_test/n_train = 0.4: the model over data sets gave intervals about 2/3 as wide.
    import xarray as xr

    import bayescv.bayes
    from bayescv.bayes.datasets_model import datasets_stats

    seen = {}

    def fake(x, *, names, rho, **kwargs):
        seen["rho"] = rho
        zeros = ("dataset", np.zeros(len(names)))
        cols = ("delta_mean", "delta_lower", "delta_upper", "p_better", "p_equivalent", "p_worse")
        return xr.Dataset(
            {**{c: zeros for c in cols}, **{f"delta0_{s}": 0.0 for s in ("mean", "lower", "upper")},
             **{f"new_dataset_p_{s}": 0.0 for s in ("better", "equivalent", "worse")}},
            coords={"dataset": names},
        )  # fmt: skip

    monkeypatch.setattr(bayescv.bayes, "compare_datasets", fake)
    table = _shuffle_split_table()
    out = bayescv.compare_learners(table, methods=["hierarchical_datasets"])
    # ρ/(1 − ρ) = n_test/n_train = 20/50 (the correlated t's scale², docs/comparing.md)
    # gives ρ = 0.4/1.4.
    np.testing.assert_allclose(seen["rho"], [0.4 / 1.4] * 2, rtol=1e-12)
    np.testing.assert_allclose(out.attrs["hierarchical_datasets_rho"], [0.4 / 1.4] * 2)
    assert out.attrs["hierarchical_datasets_rho_source"] == "n_test/n_train"
    # Sizes assumed equal: baycomp's default ρ = 1/K, left to compare_datasets.
    out = bayescv.compare_learners(
        _shuffle_split_table(sizes=False), methods=["hierarchical_datasets"]
    )
    assert seen["rho"] is None
    assert out.attrs["hierarchical_datasets_rho"] == [0.1, 0.1]
    assert out.attrs["hierarchical_datasets_rho_source"] == "1/K"
    # The model's ρ enters as data (no recompiled density): the default stays 1/K, a given
    # ρ is used as is, and the variance of the mean σ² c2 / J over c1 = 1 − ρ is
    # 1/J + ρ/(1 − ρ), the correlated t's factor (c2 = 1 + (J − 1)ρ; the module's identity).
    x = table["loss"].values[:, 0, 0] - table["loss"].values[:, 1, 0]
    np.testing.assert_array_equal(datasets_stats(x).rho, [0.1, 0.1])
    rho = datasets_stats(x, rho=0.4 / 1.4).rho
    np.testing.assert_allclose((1 + 9 * rho) / (10 * (1 - rho)), 1 / 10 + 0.4, rtol=1e-12)
    with pytest.raises(ValueError, match="rho must be"):
        datasets_stats(x, rho=1.0)


def test_from_cross_validate_reads_a_dataframe_of_cross_validate_output():
    # pd.DataFrame(cross_validate(...)) was refused, pointing to fold_table.
    results = {
        "a": _fake_result([0.8, 0.9, 0.85], score_time=np.ones(3)),
        "b": _fake_result([0.7, 0.75, 0.8], score_time=np.ones(3)),
    }
    frames = {name: pd.DataFrame(res) for name, res in results.items()}
    import xarray as xr

    xr.testing.assert_identical(from_cross_validate(frames), from_cross_validate(results))
    # With return_indices=True pandas itself refuses the dict (the indices do not align
    # with the folds), so a frame never carries sizes; a hand-made 'indices' column is refused.
    indexed = _fake_result([0.8, 0.9], indices={"train": [[0], [1]], "test": [[1], [0]]})
    with pytest.raises(ValueError, match="Mixing dicts"):
        pd.DataFrame(indexed)
    odd = pd.DataFrame({"test_score": [0.8, 0.9], "indices": [0, 1]})
    with pytest.raises(ValueError, match="'indices' column"):
        from_cross_validate({"a": odd, "b": odd})


@pytest.mark.parametrize("scheme", ["random", "source"])
def test_bayle_within_on_identical_learners_depends_on_the_loss_not_the_scheme(scheme):
    # Reported: ±0.0067 (no_disagreements) on random K-fold tables, [0, 0] (zero_variance) on
    # leave-one-source-out ones. The scheme plays no part: 0-1 losses get ±z²/(N + z²)
    # (docs/estimators.md), other losses the degenerate normal interval [0, 0] flagged
    # zero_variance (bayescv.intervals.normal_bounds).
    from scipy import stats

    rng = np.random.default_rng(0)
    blocks = np.arange(569) % 5
    zero_one = (rng.random(569) < 0.1).astype(float)
    z2 = stats.norm.ppf(0.975) ** 2
    for loss, bound, flag in [
        (zero_one, z2 / (569 + z2), "no_disagreements"),  # 3.84/572.84 = 0.0067
        (zero_one * 0.5 + 0.1, 0.0, "zero_variance"),
    ]:
        t = from_arrays(loss, blocks, scheme=scheme)
        out = bayescv.compare_learners({"x": t, "y": t.copy()}, methods=["bayle_within"])
        np.testing.assert_allclose([out["lower"].item(), out["upper"].item()], [-bound, bound])
        assert out["flag"].item() == flag


def test_from_cross_validate_refuses_folds_interleaved_across_runs():
    """Two 5-fold runs listed fold by fold (run 0 fold 0, run 1 fold 0, ...): every point is
    tested twice, but the first five test sets do not partition the data; read as one run of
    10 folds, naive_folds would have paired the wrong folds. Run by run, they give runs=2."""
    X, y = load_iris(return_X_y=True)
    runs = [list(KFold(5, shuffle=True, random_state=s).split(X)) for s in (0, 1)]
    interleaved = [fold for pair in zip(*runs, strict=True) for fold in pair]
    by_run = runs[0] + runs[1]
    learners = {"tree": DecisionTreeClassifier(random_state=0), "tree2": DecisionTreeClassifier()}
    res = {
        k: cross_validate(m, X, y, cv=interleaved, return_indices=True)
        for k, m in learners.items()
    }
    with pytest.raises(ValueError, match="not 2 consecutive runs that each partition"):
        from_cross_validate(res)
    assert from_cross_validate(res, runs=1).sizes["fold"] == 10  # the user's explicit reading
    res = {k: cross_validate(m, X, y, cv=by_run, return_indices=True) for k, m in learners.items()}
    assert from_cross_validate(res).sizes["repetition"] == 2
