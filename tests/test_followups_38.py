"""Follow-ups of a user's-hands pass: point differences equal up to rounding, a scorer name on
single-scorer ``cross_validate`` results, and repeated tables in ``bayescv variance``."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from bayescv.classical import cv_intervals, paired_comparison, variance_estimates
from bayescv.cli import main
from bayescv.fold_scores import from_cross_validate
from bayescv.learner_comparison import compare_learners
from bayescv.losses import from_arrays, stack_replicates, to_csv

BLOCKS = np.repeat(np.arange(5), 6)


def _uniform(seed: int, n: int = 30) -> np.ndarray:
    return np.random.default_rng(seed).uniform(0.0, 1.0, n)


# 1: point differences equal up to rounding ------------------------------------------------


@pytest.mark.parametrize("kind", ["normal", "t"])
def test_losses_shifted_by_a_constant_have_zero_variance_at_the_point_level(kind):
    # before: naive_points and bayle_within had se ~1e-17 and a p-value of 0, with no flag
    la = _uniform(0)
    a, b = from_arrays(la, BLOCKS), from_arrays(la + 0.1, BLOCKS)
    out = paired_comparison(a, b, "all", kind=kind)
    # Every difference is la − (la + 0.1) = −0.1 up to rounding: the estimate is their mean.
    for method in ("naive_points", "bayle_within", "naive_folds", "theta_A", "nadeau_bengio"):
        row = out.sel(method_name=method)
        assert str(row["flag"].values) == "zero_variance", method
        assert np.isnan(float(row["p_value"])), method
        assert float(row["se"]) == float(row["theta"]) == 0.0
        assert float(row["lower"]) == float(row["estimate"]) == float(row["upper"])
        assert float(row["estimate"]) == pytest.approx(-0.1, abs=1e-15)
    # θ_1 = μ̂² (its definition), not 0 for equal differences: its row keeps its value.
    theta_1 = out.sel(method_name="theta_1")
    assert float(theta_1["theta"]) == pytest.approx(0.01, rel=1e-12)
    assert str(theta_1["flag"].values) == ""


def test_point_and_fold_rows_of_compare_learners_agree_on_shifted_losses():
    # before: the fold rows were flagged zero_variance, the point rows had p-values of 0
    la = _uniform(1)
    methods = ["naive_points", "bayle_within", "nadeau_bengio", "naive_folds"]
    tables = {"a": from_arrays(la, BLOCKS), "b": from_arrays(la + 0.1, BLOCKS)}
    rows = compare_learners(tables, methods=methods).to_dataframe().set_index("method")
    for method in methods:
        assert rows.loc[method, "flag"] == "zero_variance", method
        assert np.isnan(rows.loc[method, "p_value"]), method


@pytest.mark.parametrize("replicate_kind", ["repeat", "independent"])
def test_replicated_shifted_losses_have_zero_variance(replicate_kind):
    # before: each run's rounding gave the rows a variance of ~1e-34 and p-values of 0
    runs = [_uniform(s) for s in (2, 3)]
    a = stack_replicates([from_arrays(r, BLOCKS) for r in runs], replicate_kind=replicate_kind)
    b = stack_replicates(
        [from_arrays(r + 0.25, BLOCKS) for r in runs], replicate_kind=replicate_kind
    )
    out = paired_comparison(a, b, ["naive_points", "bayle_within"])
    assert set(np.ravel(out["flag"].values)) == {"zero_variance"}
    assert np.isnan(out["p_value"].values).all()


def test_score_path_of_0_1_losses_is_unaffected():
    # before and after: h = 1 everywhere is an exact constant, read by the score interval
    a, b = from_arrays(np.ones(30), BLOCKS), from_arrays(np.zeros(30), BLOCKS)
    out = paired_comparison(a, b, ["naive_points", "bayle_within", "theta_1"])
    assert out.attrs["kind"] == "score"
    z2 = stats.norm.ppf(0.975) ** 2
    n = 30
    for method in ("naive_points", "bayle_within"):
        row = out.sel(method_name=method)
        assert str(row["flag"].values) == "b_lower_everywhere"  # every h = a - b = 1
        # Wilson's lower bound at q̂ = 1 is n/(n + z²); mapped back by 2q − 1.
        assert float(row["lower"]) == pytest.approx((n - z2) / (n + z2), rel=1e-12)
        assert float(row["upper"]) == 1.0
    # θ_1 = μ̂² = 1: statistic μ̂/|μ̂| = 1, two-sided p = 2(1 − Φ(1)).
    assert float(out["p_value"].sel(method_name="theta_1")) == pytest.approx(
        2 * stats.norm.sf(1.0), rel=1e-12
    )


# 2: a scorer name on single-scorer cross_validate results ---------------------------------


def _single(scores):
    return {"test_score": np.asarray(scores, float), "fit_time": np.ones(len(scores))}


def test_single_scorer_results_take_the_scorers_name():
    # before: "leave scoring out", and left out the metric was "score", unbounded
    one = _single([0.9, 0.8, 0.85])
    table = from_cross_validate({"a": one, "b": _single([0.7, 0.75, 0.8])}, scoring="accuracy")
    assert table.attrs["metric"] == "accuracy"
    # accuracy lies in [0, 1]; the table holds its negatives, in [−1, 0]
    assert table.attrs["loss_range"] == [-1.0, 0.0]
    np.testing.assert_array_equal(
        table["loss"].sel(learner="a").values.ravel(), -one["test_score"]
    )
    # a one-name list is that name
    listed = from_cross_validate({"a": one, "b": one}, scoring=["accuracy"])
    assert listed.attrs["metric"] == "accuracy"


def test_single_scorer_names_that_cannot_be_read_are_refused():
    one = _single([0.9, 0.8, 0.85])
    with pytest.raises(ValueError, match="'acc' is not a scikit-learn scorer name"):
        from_cross_validate({"a": one, "b": one}, scoring="acc")
    with pytest.raises(ValueError, match=r"must be one scorer name.*holds one metric"):
        from_cross_validate({"a": one, "b": one}, scoring=["accuracy", "f1"])
    # the name brings the range, which percent scores are outside of
    pct = _single([90.0, 80.0, 85.0])
    with pytest.raises(ValueError, match="range of the scikit-learn scorer 'accuracy'"):
        from_cross_validate({"a": pct, "b": pct}, scoring="accuracy")


# 3: `bayescv variance` on repeated tables --------------------------------------------------


def _runs(replicate_kind, shift=0.0):
    rng = np.random.default_rng(7)
    runs = [
        from_arrays(rng.gamma(2.0, 1.0, 30) + shift, rng.permutation(BLOCKS)) for _ in range(3)
    ]
    return stack_replicates(runs, replicate_kind=replicate_kind)


def _close(got, expected) -> bool:
    """The CLI's JSON numbers (null for NaN: strict JSON) equal the API's, to rounding."""
    got = [np.nan if g is None else g for g in np.atleast_1d(np.asarray(got, dtype=object))]
    expected = np.atleast_1d(np.asarray(expected, dtype=float))
    return got == pytest.approx(list(expected), rel=1e-12, nan_ok=True)


def _same_intervals(got: dict, api) -> None:
    for method in api["method_name"].values:
        row = api.sel(method_name=method)
        assert _close(got["estimates"][method], row["estimate"])
        assert _close(got["intervals"][method], [row["lower"], row["upper"]])
        assert got["flags"][method] == str(row["flag"].values)


def test_variance_reads_repeated_cv_as_cv_intervals_does(tmp_path, capsys):
    # before: "the file holds several CV runs; `bayescv variance` reads one run"
    table = _runs("repeat")
    to_csv(table, tmp_path / "runs.csv")
    assert main(["variance", str(tmp_path / "runs.csv"), "--format", "json"]) == 0
    got = json.loads(capsys.readouterr().out)
    api = cv_intervals(table)
    _same_intervals(got, api)
    assert got["replicate_kind"] == "repeat"
    assert got["runs"] == 3
    assert got["N"] == 30
    # cv_intervals' reading of repeats: μ̂ and θ̂ the means of the runs'
    per_run = variance_estimates(table)
    assert got["mu_hat"] == pytest.approx(float(per_run["mu_hat"].mean()), rel=1e-12)
    assert got["theta_B"] == pytest.approx(
        float(per_run["theta"].sel(estimator="theta_B").mean()), rel=1e-12
    )
    # A plain CSV with a replicate column says what its runs are with --replicate-kind.
    frame = pd.DataFrame(
        {
            "replicate": np.repeat([0, 1, 2], 30),
            "block": table["block"].values.ravel(),
            "loss": table["loss"].values.ravel(),
        }
    )
    frame.to_csv(tmp_path / "plain.csv", index=False)
    argv = ["variance", str(tmp_path / "plain.csv"), "--format", "json"]
    assert main(argv) == 2
    assert "--replicate-kind" in capsys.readouterr().err
    assert main([*argv, "--replicate-kind", "repeat"]) == 0
    _same_intervals(json.loads(capsys.readouterr().out), api)


def test_variance_reports_each_independent_data_set(tmp_path, capsys):
    # before: refused as "several CV runs"
    table = _runs("independent")
    to_csv(table, tmp_path / "sets.csv")
    assert main(["variance", str(tmp_path / "sets.csv"), "--format", "json"]) == 0
    got = json.loads(capsys.readouterr().out)
    api = cv_intervals(table)
    assert got["replicate_kind"] == "independent"
    assert list(got["replicates"]) == ["0", "1", "2"]
    for r, report in got["replicates"].items():
        _same_intervals(report, api.sel(replicate=int(r)))


def test_variance_paired_on_repeated_cv_matches_the_api(tmp_path, capsys):
    # before: refused as "several CV runs"
    a, b = _runs("repeat"), _runs("repeat", shift=0.2)
    b["loss"] = b["loss"] + np.random.default_rng(1).normal(0, 0.1, b["loss"].shape)
    to_csv(a, tmp_path / "a.csv")
    to_csv(b, tmp_path / "b.csv")
    argv = ["variance", "--paired", str(tmp_path / "a.csv"), str(tmp_path / "b.csv")]
    assert main([*argv, "--format", "json"]) == 0
    got = json.loads(capsys.readouterr().out)["methods"]
    api = paired_comparison(a, b)
    for method in api["method_name"].values:
        row = api.sel(method_name=method)
        assert _close(got[method]["p_value"], row["p_value"])
        assert got[method]["flag"] == str(row["flag"].values)


def test_variance_refuses_bootstrap_replicates_naming_the_method(tmp_path, capsys):
    # the one method that reads them, 'bootstrap', needs the observed run beside them
    to_csv(_runs("bootstrap"), tmp_path / "boot.csv")
    assert main(["variance", str(tmp_path / "boot.csv")]) == 2
    err = capsys.readouterr().err
    assert "bootstrap replicates" in err
    assert "'bootstrap' method" in err
