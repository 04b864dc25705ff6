"""Comparing learners from the results users have: defects found by a user's-hands pass."""

from __future__ import annotations

import json

import numpy as np
import pytest

import bayescv
from bayescv.cli import main
from bayescv.fold_scores import fold_table, from_cross_validate, from_loss_tables
from bayescv.losses import from_arrays, to_csv


def _accuracies(seed: int = 0):
    """Per-point 0/1 correctness of three learners on the same 5 folds of 100 points."""
    rng = np.random.default_rng(seed)
    block = np.repeat(np.arange(5), 20)
    correct = {
        name: (rng.random(100) < p).astype(float)
        for name, p in (("good", 0.95), ("bad", 0.6), ("mid", 0.8))
    }
    return correct, block


# --- a scikit-learn scorer's name with greater_is_better=False -------------------------------


def test_a_scorer_name_read_as_losses_is_refused():
    # scikit-learn's scorers all return greater-is-better values; read as losses, the learner
    # with the higher accuracy came out worse, and the range [0, 1] was dropped.
    results = {
        "lr": {"test_score": np.array([0.95, 0.97, 0.96, 0.94, 0.98])},
        "tree": {"test_score": np.array([0.90, 0.91, 0.92, 0.89, 0.93])},
    }
    with pytest.raises(ValueError, match="'accuracy' is a scikit-learn scorer"):
        from_cross_validate(results, scoring="accuracy", greater_is_better=False)
    with pytest.raises(ValueError, match="leave greater_is_better out"):
        fold_table([[0.9, 0.8], [0.7, 0.6]], metric="roc_auc", greater_is_better=False)
    # A lower-is-better metric under its own name is read as losses, as before.
    t = fold_table([[0.1, 0.2], [0.3, 0.4]], metric="error", greater_is_better=False)
    assert t["loss"].values.ravel().tolist() == [0.1, 0.2, 0.3, 0.4]
    # The scorer's own direction: lr's higher accuracy makes it better (difference < 0).
    out = bayescv.correlated_ttest(from_cross_validate(results, scoring="accuracy"))
    assert float(out["mean"].item()) == pytest.approx(-0.05)  # -(0.96 - 0.91): negated accuracies
    assert float(out["p_better"].item()) > 0.99


def test_scores_of_different_lengths_name_the_learners_and_the_fix():
    with pytest.raises(ValueError, match=r"'lr' \(5,\), 'tree' \(10,\).*same splits"):
        fold_table({"lr": np.full(5, 0.9), "tree": np.full(10, 0.8)}, metric="accuracy")


# --- compare_several and correlated_ttest take the loss tables compare_learners takes ---------


def test_compare_several_and_the_t_test_take_loss_tables():
    # Reference: the documented reduction of loss tables to a fold table (from_loss_tables),
    # which compare_learners and the CLI apply; the same draws with the same seed.
    correct, block = _accuracies()
    tables = {k: from_arrays(1 - v, block, loss_name="zero_one") for k, v in correct.items()}
    ref = bayescv.compare_several(from_loss_tables(tables), rope=0.01, random_state=3)
    out = bayescv.compare_several(tables, rope=0.01, random_state=3)
    for var in ("mean", "lower", "upper", "p_best", "p_better"):
        np.testing.assert_array_equal(out[var].values, ref[var].values)
    assert out["p_best"].sel(learner="good").item() > 0.9
    listed = bayescv.compare_several(list(tables.values()), random_state=3)
    assert listed["learner"].values.tolist() == ["A", "B", "C"]
    t_ref = bayescv.correlated_ttest(from_loss_tables(tables), "good", "bad", rope=0.01)
    t_out = bayescv.correlated_ttest(tables, "good", "bad", rope=0.01)
    assert float(t_out["p_better"].item()) == float(t_ref["p_better"].item())
    assert float(t_out["mean"].item()) == pytest.approx(-(correct["good"] - correct["bad"]).mean())


def test_a_mapping_that_is_not_loss_tables_is_told_the_way():
    with pytest.raises(ValueError, match="from_loss_tables"):
        bayescv.fold_scores.validate_fold_table({"a": 1})


# --- loss tables that hold scores --------------------------------------------------------------


def test_loss_tables_named_as_a_scorer_are_refused():
    # Tables of per-point accuracy (1 = correct) read as losses turn "better" around.
    correct, block = _accuracies()
    tables = {k: from_arrays(v, block, loss_name="accuracy") for k, v in correct.items()}
    with pytest.raises(ValueError, match=r"greater-is-better.*negate them"):
        bayescv.compare_learners(tables)
    with pytest.raises(ValueError, match="greater-is-better"):
        from_loss_tables(tables)


def _write(tmp_path, tables):
    paths = []
    for name, t in tables.items():
        to_csv(t, tmp_path / f"{name}.csv")
        paths.append(str(tmp_path / f"{name}.csv"))
    return paths


def test_cli_refuses_scores_given_as_losses_and_losses_given_as_scores(tmp_path, capsys):
    correct, block = _accuracies()
    scores = {k: from_arrays(v, block, loss_name="accuracy") for k, v in correct.items()}
    paths = _write(tmp_path, scores)
    assert main(["compare", *paths, "--rope", "0.01"]) == 2
    err = capsys.readouterr().err
    assert "'accuracy'" in err
    assert "--greater-is-better" in err
    # Given as scores, the learner with the higher accuracy is better.
    assert main(["compare", *paths[:2], "--greater-is-better", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    row = next(r for r in rows if r["method"] == "correlated_t")
    assert (row["a"], row["b"]) == ("good", "bad")
    assert row["p_better"] > 0.9  # the first learner, 0.95 against 0.6
    # 0-1 losses negated by --greater-is-better would turn "better" around.
    losses = {k: from_arrays(1 - v, block, loss_name="zero_one") for k, v in correct.items()}
    (tmp_path / "losses").mkdir()
    lpaths = _write(tmp_path / "losses", losses)
    assert main(["compare", *lpaths, "--greater-is-better"]) == 2
    assert "leave it out" in capsys.readouterr().err
    assert main(["compare", *lpaths[:2], "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert next(r for r in rows if r["method"] == "correlated_t")["p_better"] > 0.9


def test_a_missing_score_names_the_scoring_that_reads_each_one():
    # scoring="test_r2" looked for 'test_test_r2' and listed the keys with their prefix,
    # which the user had just tried; the message now says what scoring= takes.
    result = {"test_neg_mean_squared_error": np.array([-3.0, -4.0]), "test_r2": [0.4, 0.5]}
    with pytest.raises(ValueError, match="pass scoring='neg_mean_squared_error' or 'r2'"):
        from_cross_validate({"ridge": result, "dummy": result}, scoring="test_r2")
