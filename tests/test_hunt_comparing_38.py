"""A new user's pass over comparing learners: defects found and fixed (hunt 38)."""

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from bayescv.cli import main
from bayescv.fold_scores import fold_table, from_cross_validate, from_long_frame, from_loss_tables
from bayescv.learner_comparison import compare_learners, compare_several, correlated_ttest
from bayescv.losses import from_arrays, from_elpd, to_csv


def _cv_dict(scores, test_sets=None):
    """A stand-in for cross_validate's dict (test_score, with indices when given)."""
    res = {"fit_time": np.zeros(len(scores)), "test_score": np.asarray(scores, dtype=float)}
    if test_sets is not None:
        n = sum(len(t) for t in test_sets)
        res["indices"] = {
            "train": [np.setdiff1d(np.arange(n), t) for t in test_sets],
            "test": [np.asarray(t) for t in test_sets],
        }
    return res


# --- fold-level rows: differences equal up to rounding -----------------------------------


def test_frequentist_fold_rows_flag_differences_equal_up_to_rounding():
    # Before: correlated_t said zero_variance, while nadeau_bengio and naive_folds on the same
    # folds printed p-values of 1e-48 (a variance of rounding errors) and no flag.
    # Every fold loss of B is A's plus 0.02: in exact arithmetic each difference is −0.02,
    # so the sample variance is 0 and no t statistic exists (the documented zero_variance).
    a = np.array([0.1, 0.2, 0.3, 0.15, 0.25])
    table = fold_table([a, a + 0.02], greater_is_better=False)
    rows = compare_learners(table).to_dataframe().set_index("method")
    for method in ("correlated_t", "nadeau_bengio", "naive_folds"):
        assert rows.loc[method, "flag"] == "zero_variance"
        assert rows.loc[method, "lower"] == rows.loc[method, "upper"]
        assert rows.loc[method, "estimate"] == pytest.approx(-0.02, abs=1e-15)
    assert np.isnan(rows.loc[["nadeau_bengio", "naive_folds"], "p_value"]).all()


def test_frequentist_fold_rows_of_reduced_loss_tables_flag_a_constant_shift():
    # Before: losses shifted by the dyadic 0.25 (exact at every point) gave fold means whose
    # differences varied by ulps, and nadeau_bengio printed p = 2e-48 with no flag.
    rng = np.random.default_rng(0)
    losses, blocks = rng.integers(0, 8, 40) / 8, np.repeat(np.arange(4), 10)
    a, b = from_arrays(losses, blocks), from_arrays(losses + 0.25, blocks)
    rows = compare_learners({"a": a, "b": b}, methods=["nadeau_bengio", "naive_folds"])
    assert rows["flag"].values.tolist() == ["zero_variance", "zero_variance"]
    assert np.isnan(rows["p_value"].values).all()


def test_hierarchical_datasets_does_not_fit_differences_equal_up_to_rounding(monkeypatch):
    # Before: only exactly equal differences skipped the model; ones equal up to rounding
    # were sent to MCMC, with a scale of 1e-17 to fit.
    pytest.importorskip("pymc")
    import bayescv.bayes

    def refuse(*args, **kwargs):
        raise AssertionError("the model over data sets was fitted to rounding errors")

    monkeypatch.setattr(bayescv.bayes, "compare_datasets", refuse)
    a = np.array([[0.1, 0.2, 0.3, 0.15], [0.3, 0.35, 0.4, 0.45]])
    table = fold_table(np.stack([a, a + 0.02], axis=1), greater_is_better=False)
    rows = compare_learners(table, methods=["hierarchical_datasets"])
    assert set(rows["flag"].values) == {"zero_variance"}


# --- inputs that are not what compare_learners takes -------------------------------------


@pytest.fixture(scope="module")
def loo():
    """PSIS-LOO of two normal models of the same 40 points, from stand-in posterior draws."""
    az = pytest.importorskip("arviz")
    rng = np.random.default_rng(0)
    y = rng.normal(size=40)

    def idata(sigma):
        mu = rng.normal(y.mean(), 0.15, size=(2, 200))
        log_lik = stats.norm.logpdf(y, mu[..., None], sigma)
        return az.from_dict(posterior={"mu": mu}, log_likelihood={"y": log_lik})

    return {name: az.loo(idata(s), pointwise=True) for name, s in (("A", 1.0), ("B", 1.5))}


def test_an_arviz_loo_result_is_pointed_to_from_elpd(loo):
    # Before: "learner 'A' is a ELPDData ... bayescv.fold_table builds one from arrays of
    # fold scores", the wrong builder for pointwise elpd.
    with pytest.raises(TypeError, match=r"bayescv\.from_elpd\(elpd, blocks='pairs'\)"):
        compare_learners(loo)


def _pair_tables():
    rng = np.random.default_rng(1)
    return {n: from_elpd(rng.normal(-1.0, 0.5, 40), blocks="pairs") for n in ("a", "b", "c")}


def test_fold_level_methods_refuse_a_table_of_point_pairs():
    # Before: compare_several and correlated_ttest read the pairs of points of PSIS-LOO
    # tables as 20 CV folds (which compare_learners refuses, as from_elpd documents).
    table = from_loss_tables(_pair_tables())
    assert table.attrs["block_kind"] == "point_pairs"
    for run in (compare_several, correlated_ttest):
        with pytest.raises(ValueError, match=r"pairs of points.*not CV folds"):
            run(table)
    # compare_learners still gives the one method that applies
    assert compare_learners(_pair_tables())["method"].values.tolist() == ["naive_points"] * 2


def test_cli_gives_no_best_table_for_tables_of_point_pairs(tmp_path, capsys):
    # Before: with three elpd tables, `bayescv compare` printed a "which learner is best"
    # table computed by the correlated t over pairs of points taken as folds.
    paths = []
    for name, table in _pair_tables().items():
        to_csv(table, tmp_path / f"{name}.csv")
        paths.append(str(tmp_path / f"{name}.csv"))
    assert main(["compare", *paths]) == 0
    captured = capsys.readouterr()
    assert "which learner is best" not in captured.out
    assert "no table of which learner is best" in captured.err
    assert main(["compare", *paths, "--format", "json"]) == 0
    assert "best" not in json.loads(capsys.readouterr().out)


def test_cli_says_heavy_tails_as_lines_not_python_warnings(tmp_path, capsys):
    # Before: HeavyTailWarning came out as a Python warning with a source path and the line
    # `res = classical_paired(` (and under -W error, as a traceback).
    rng = np.random.default_rng(0)
    blocks = np.repeat(np.arange(5), 40)
    heavy = rng.pareto(1.1, 200)  # tail index 1.1: no finite variance
    to_csv(from_arrays(heavy, blocks, loss_range=(0, np.inf)), tmp_path / "a.csv")
    to_csv(from_arrays(np.full(200, 0.5), blocks, loss_range=(0, np.inf)), tmp_path / "b.csv")
    assert main(["compare", str(tmp_path / "a.csv"), str(tmp_path / "b.csv")]) == 0
    err = capsys.readouterr().err
    assert "warning: the losses have a heavy upper tail" in err
    assert "HeavyTailWarning" not in err
    assert "classical_paired" not in err


# --- from_cross_validate: results whose folds cannot be matched --------------------------


def test_from_cross_validate_refuses_results_with_and_without_indices():
    # Before: a learner without indices (its splits unknown) was paired with one whose
    # indices were checked, silently: the check was skipped for it.
    folds = [np.arange(0, 5), np.arange(5, 10)]
    results = {"lr": _cv_dict([0.9, 0.8], folds), "tree": _cv_dict([0.7, 0.75])}
    with pytest.raises(ValueError, match=r"\['tree'\] have no 'indices'"):
        from_cross_validate(results)


def test_from_cross_validate_reads_a_sorted_dataframe_in_fold_order():
    # Before: a frame sorted by its score was read row by row, pairing fold 2 of one learner
    # with fold 0 of the other.
    lr = pd.DataFrame(_cv_dict([0.9, 0.7, 0.8]))
    tree = pd.DataFrame(_cv_dict([0.6, 0.65, 0.5]))
    plain = from_cross_validate({"lr": lr, "tree": tree})
    # The same folds, the rows in another order: the identical table (rows are labelled).
    shuffled = from_cross_validate(
        {"lr": lr.sort_values("test_score"), "tree": tree.sort_values("test_score")}
    )
    np.testing.assert_array_equal(shuffled["loss"].values, plain["loss"].values)
    with pytest.raises(ValueError, match="not the fold numbers 0 … 2"):
        from_cross_validate({"lr": lr.set_axis(["a", "b", "c"]), "tree": tree})


# --- fold_table and from_long_frame: pandas and strings ----------------------------------


def test_fold_table_matches_pandas_series_by_their_labels():
    # Before: Series were read by position, so learners listed in different fold orders
    # were paired fold 0 with fold 2.
    a = pd.Series([0.9, 0.8, 0.7], index=["f0", "f1", "f2"])
    b = pd.Series([0.5, 0.6, 0.4], index=["f2", "f0", "f1"])
    table = fold_table({"a": a, "b": b}, metric="accuracy")
    # b's scores in a's fold order (f0, f1, f2), negated (accuracy is greater-is-better)
    assert table["loss"].sel(learner="b").values.ravel().tolist() == [-0.6, -0.4, -0.5]
    with pytest.raises(ValueError, match="different index labels"):
        fold_table({"a": a, "b": b.set_axis(["x", "y", "z"])}, metric="accuracy")


def test_fold_table_names_a_score_that_is_not_a_number():
    # Before: "could not convert string to float: np.str_('x')", with no word of where.
    with pytest.raises(ValueError, match=r"scores must be numbers.*position \[0, 1\] is 'x'"):
        fold_table([["0.8", "x", "0.9"], ["0.6", "0.7", "0.65"]], metric="accuracy")


def _long():
    rows = [
        {"dataset": d, "learner": lr, "fold": f, "score": 0.8 + 0.01 * f + (lr == "a") * 0.02}
        for d in ("d1", "d2")
        for lr in ("a", "b")
        for f in range(3)
    ]
    return pd.DataFrame(rows)


def test_from_long_frame_names_the_row_of_a_score_that_is_not_a_number():
    # Before: "could not convert string to float: 'n/a'", without the column or the row.
    frame = _long().astype({"score": object})
    frame.loc[4, "score"] = "n/a"
    with pytest.raises(
        ValueError, match=r"column 'score'.*'n/a' in row 4, at \['d1', 'b', 0, 1\]"
    ):
        from_long_frame(frame, metric="accuracy")


def test_from_long_frame_says_a_missing_column_is_an_index_level():
    # Before: "column 'learner' not in the frame (columns: ['fold', 'score'])", for a frame
    # whose learner is in its MultiIndex, as groupby results have it.
    frame = _long().set_index(["dataset", "learner"])
    with pytest.raises(
        ValueError, match=r"'learner' is a level of the frame's index.*reset_index"
    ):
        from_long_frame(frame, metric="accuracy")
    # A data set in the index was read as "one data set" before, then refused as duplicates.
    with pytest.raises(ValueError, match=r"'dataset' is a level of the frame's index"):
        from_long_frame(_long().set_index("dataset"), metric="accuracy")
