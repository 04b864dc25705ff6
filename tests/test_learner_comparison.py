"""Comparing learners: the correlated t-test, several learners, the entry point, the CLI.

Reference values: the correlated t-test's posterior is Student t with J − 1 d.f., location
the mean difference and scale² = s²(1/J + n_test/n_train) (Corani & Benavoli 2015; baycomp's
``CorrelatedTTest.compute_statistics``), checked here against the formula and against baycomp
itself (a test-only dependency); several learners reduce to it for two (a contrast of a
multivariate t is a t with the same d.f.); the frequentist rows equal
:func:`bayescv.classical.paired_comparison` on the same per-point tables.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from scipy import stats

from bayescv.classical import paired_comparison
from bayescv.cli import main
from bayescv.fold_scores import fold_table, from_loss_tables
from bayescv.learner_comparison import compare_learners, compare_several, correlated_ttest
from bayescv.losses import from_arrays, stack_replicates, to_csv


def _scores(seed: int, runs: int = 1, k: int = 10, shift: float = 0.01):
    rng = np.random.default_rng(seed)
    common = rng.normal(0.8, 0.03, runs * k)
    x = common + rng.normal(0, 0.01, runs * k)
    y = common + shift + rng.normal(0, 0.01, runs * k)
    return x, y


@pytest.mark.parametrize(("runs", "rope"), [(1, 0.0), (1, 0.01), (10, 0.0), (10, 0.005)])
def test_correlated_t_matches_the_closed_form(runs, rope):
    x, y = _scores(1, runs)
    out = correlated_ttest(fold_table([x, y], runs=runs, greater_is_better=True), rope=rope)
    diff = y - x  # losses are negated scores: loss(x) - loss(y) = y - x
    J, K = diff.size, diff.size // runs
    scale = np.sqrt(np.var(diff, ddof=1) * (1 / J + 1 / (K - 1)))
    left = stats.t.cdf(-rope, J - 1, diff.mean(), scale)
    right = stats.t.sf(rope, J - 1, diff.mean(), scale)
    np.testing.assert_allclose(out["p_better"].item(), left, rtol=0, atol=1e-12)
    np.testing.assert_allclose(out["p_worse"].item(), right, rtol=0, atol=1e-12)
    np.testing.assert_allclose(out["scale"].item(), scale, rtol=1e-12)


@pytest.mark.parametrize(("runs", "rope"), [(1, 0.0), (1, 0.01), (10, 0.0), (10, 0.005)])
def test_correlated_t_equals_baycomp(runs, rope):
    baycomp = pytest.importorskip("baycomp")
    x, y = _scores(2, runs)
    ours = correlated_ttest(fold_table([x, y], runs=runs, greater_is_better=True), rope=rope)
    theirs = baycomp.CorrelatedTTest.probs(x, y, rope=rope, runs=runs)
    mine = [ours["p_better"].item(), ours["p_worse"].item()]
    if rope > 0:
        mine.insert(1, ours["p_equivalent"].item())
    np.testing.assert_allclose(mine, theirs, rtol=0, atol=1e-9)


def test_known_fold_sizes_give_the_nadeau_bengio_ratio():
    x, y = _scores(3)
    n_test = np.r_[np.full(5, 11.0), np.full(5, 10.0)]
    out = correlated_ttest(
        fold_table([x, y], greater_is_better=True, n_test=n_test, n_train=105 - n_test)
    )
    diff = y - x
    scale = np.sqrt(np.var(diff, ddof=1) * (1 / 10 + np.mean(n_test / (105 - n_test))))
    np.testing.assert_allclose(out["scale"].item(), scale, rtol=1e-12)


def test_identical_learners_get_a_flagged_point_mass():
    x, _ = _scores(4)
    out = correlated_ttest(fold_table([x, x], greater_is_better=True), rope=0.01)
    assert out["flag"].item() == "zero_variance"
    assert out["p_equivalent"].item() == 1.0
    out0 = correlated_ttest(fold_table([x, x], greater_is_better=True))
    assert out0["p_better"].item() == out0["p_worse"].item() == 0.5


def test_several_learners_reduce_to_the_correlated_t_for_each_pair():
    rng = np.random.default_rng(5)
    base = rng.normal(0.3, 0.03, 20)
    losses = [base + rng.normal(s, 0.01, 20) for s in (0.0, 0.005, 0.03)]
    table = fold_table(losses, runs=2, learners=["a", "b", "c"], greater_is_better=False)
    several = compare_several(table, rope=0.002, random_state=0, n_draws=40_000)
    for a, b in [("a", "b"), ("b", "c"), ("c", "a")]:
        pair = correlated_ttest(table, a, b, rope=0.002)
        got = several.sel(learner=a, other=b)
        for name in ("p_better", "p_equivalent", "p_worse"):
            np.testing.assert_allclose(got[name].item(), pair[name].item(), atol=1e-12)
    # Two learners: P(a best) is P(a better) at rope 0, up to Monte Carlo error
    # (sd ≤ 0.5/sqrt(40000) = 0.0025).
    two = table.sel(learner=["a", "b"])
    p = compare_several(two, random_state=1, n_draws=40_000)["p_best"].sel(learner="a").item()
    assert abs(p - correlated_ttest(two)["p_better"].item()) < 4 * 0.0025
    assert np.isclose(several["p_best"].sum().item(), 1.0)


def _point_tables(seed: int, runs: int = 1):
    rng = np.random.default_rng(seed)
    block = np.repeat(np.arange(5), 20)
    out = {"a": [], "b": []}
    for _ in range(runs):
        base = rng.normal(1.0, 0.3, 100)
        out["a"].append(from_arrays(base + rng.normal(0, 0.1, 100), block))
        out["b"].append(from_arrays(base + 0.05 + rng.normal(0, 0.1, 100), block))
    if runs == 1:
        return {k: v[0] for k, v in out.items()}
    return {k: stack_replicates(v, replicate_kind="repeat") for k, v in out.items()}


@pytest.mark.parametrize("runs", [1, 3])
def test_frequentist_rows_equal_the_classical_paired_comparison(runs):
    tables = _point_tables(6, runs)
    rows = compare_learners(tables, methods=["nadeau_bengio", "naive_folds", "bayle_within"])
    # The rows use t quantiles (K − 1 d.f. for naive_folds, the k-fold paired t of mlxtend).
    classical = paired_comparison(
        tables["a"], tables["b"], ["nadeau_bengio", "naive_folds"], kind="t"
    )
    bayle = paired_comparison(tables["a"], tables["b"], ["bayle_within"], alternative="less")
    for i, method in enumerate(["nadeau_bengio", "naive_folds"]):
        ref = classical.sel(method_name=method)
        for var in ("estimate", "lower", "upper", "p_value"):
            np.testing.assert_allclose(rows[var].values[i], ref[var].item(), rtol=1e-10)
    np.testing.assert_allclose(rows["p_value"].values[2], bayle["p_value"].item(), rtol=1e-12)
    assert rows["target"].values.tolist() == ["err", "err", "kfold_test_error"]


def test_fold_table_refuses_point_level_methods_and_bad_input():
    x, y = _scores(7)
    table = fold_table([x, y], greater_is_better=True)
    with pytest.raises(ValueError, match="needs every point's loss"):
        compare_learners(table, methods=["bayle_within"])
    with pytest.raises(ValueError, match="unknown methods"):
        compare_learners(table, methods=["t_test"])
    with pytest.raises(ValueError, match="rope"):
        compare_learners(table, rope=-1)
    with pytest.raises(ValueError, match="at least two data sets"):
        compare_learners(table, methods=["hierarchical_datasets"])
    with pytest.raises(ValueError, match="unknown learner"):
        compare_learners(table, pairs=[("A", "C")])


def test_rows_say_which_way_better_points():
    x, y = _scores(8, shift=0.05)  # y has the higher score: B is better
    rows = compare_learners(fold_table([x, y], metric="accuracy"))
    assert rows.attrs["greater_is_better"] == 1
    assert "negated" in rows.attrs["better"]
    first = rows.isel(row=0)
    assert first["method"].item() == "correlated_t"
    assert first["p_worse"].item() > 0.99
    assert first["estimate"].item() > 0


def test_cli_compare_json(tmp_path, capsys):
    tables = _point_tables(9)
    rng = np.random.default_rng(9)
    tables["c"] = tables["a"].copy(
        data={"loss": tables["a"]["loss"].values + rng.normal(0.2, 0.1, 100)}
    )
    paths = []
    for name, t in tables.items():
        to_csv(t, tmp_path / f"{name}.csv")
        paths.append(str(tmp_path / f"{name}.csv"))
    assert main(["compare", *paths, "--rope", "0.01", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    methods = {r["method"] for r in out["rows"]}
    assert {"correlated_t", "nadeau_bengio", "bayle_within"} <= methods
    for r in out["rows"]:
        assert {"method", "p_better", "p_equivalent", "p_worse", "target"} <= set(r)
        if r["method"] == "correlated_t":
            assert abs(r["p_better"] + r["p_equivalent"] + r["p_worse"] - 1) < 1e-12
    assert set(out["best"]) == {"a", "b", "c"}
    ref = compare_several(from_loss_tables(tables), rope=0.01, random_state=0)
    assert out["best"]["c"]["p_best"] == pytest.approx(ref["p_best"].sel(learner="c").item())
    assert main(["compare", paths[0]]) == 2
    assert "at least two" in capsys.readouterr().err


def test_plots_draw_the_regions(monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    from bayescv.plots import plot_best, plot_comparison

    x, y = _scores(10)
    table = fold_table([x, y, y + 0.01], greater_is_better=True)
    ax = plot_comparison(correlated_ttest(table, rope=0.005))
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any(lbl.startswith("A better") for lbl in labels)
    assert len(labels) == 3
    ax = plot_best(compare_several(table, random_state=0))
    assert [t.get_text() for t in ax.get_yticklabels()] != []
    with pytest.raises(ValueError, match="not a correlated t-test result"):
        plot_comparison(table)


def test_hierarchical_datasets_rows_through_the_entry_point():
    """Rows per data set plus the new data set; the sign follows the loss difference a − b."""
    pytest.importorskip("nutpie")
    rng = np.random.default_rng(11)
    scores = []
    for _ in range(4):
        common = rng.normal(0.8, 0.04, 20)
        scores.append([common + 0.05 + rng.normal(0, 0.01, 20), common])  # A more accurate
    table = fold_table(np.array(scores), runs=2, greater_is_better=True)
    rows = compare_learners(table, methods=["hierarchical_datasets"], rope=0.01, random_state=0)
    assert rows["dataset"].values.tolist() == ["0", "1", "2", "3", "new_dataset"]
    assert (rows["estimate"].values < 0).all()  # loss A − B = −(accuracy A − accuracy B)
    assert (rows["p_better"].values[:4] > 0.95).all()
    assert rows["target"].values.tolist()[-1] == "new_dataset"
    sums = rows["p_better"] + rows["p_equivalent"] + rows["p_worse"]
    np.testing.assert_allclose(sums.values, 1.0, atol=1e-9)


def test_hierarchical_sources_rows_name_their_targets():
    pytest.importorskip("nutpie")
    rng = np.random.default_rng(12)
    block = np.repeat(np.arange(6), 40)
    base = rng.normal(1.0, 0.2, 240) + np.repeat(rng.normal(0, 0.1, 6), 40)
    a = from_arrays(base, block, scheme="source")
    b = from_arrays(base + rng.normal(0.2, 0.05, 240), block, scheme="source")
    rows = compare_learners(
        {"a": a, "b": b}, methods=["hierarchical_sources"], rope=0.01, random_state=0
    )
    assert rows["target"].values.tolist() == ["expected_cv", "ose", "new_source"]
    assert rows["p_better"].values[0] > 0.99  # a has the lower loss by 0.2


def test_learners_without_disagreement_keep_every_row():
    # Two classifiers that never err (a separable problem): the model over sources has no
    # difference to fit; its row is flagged, and the other methods' rows still come back.
    block = np.repeat(np.arange(5), 20)
    a = from_arrays(np.zeros(100), block, loss_name="zero_one")
    methods = ["naive_folds", "bayle_within", "hierarchical_sources"]
    rows = compare_learners({"a": a, "b": a.copy()}, methods=methods, rope=0.01)
    assert rows["method"].values.tolist() == methods
    last = rows.isel(row=-1)
    assert str(last["flag"].values) == "no_disagreements"
    assert np.isnan(float(last["lower"]))
    assert np.isnan(float(last["p_better"]))
    assert str(rows["flag"].values[1]) == "no_disagreements"  # bayle_within's own flag


def test_cli_compare_greater_is_better_reads_scores(tmp_path, capsys):
    """Per-point scores: "a" scores 0.05 less than "b", so with higher-is-better b is better.

    Reference: the same comparison of the negated scores as losses (compare_learners,
    compare_several); the best table reports each learner's expected score, sign restored.
    """
    tables = _point_tables(9)  # read as scores now
    tables["c"] = tables["a"].copy(data={"loss": tables["a"]["loss"].values - 0.2})
    paths = []
    for name, t in tables.items():
        to_csv(t, tmp_path / f"{name}.csv")
        paths.append(str(tmp_path / f"{name}.csv"))
    argv = ["compare", *paths, "--greater-is-better", "--format", "json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["greater_is_better"] is True
    assert "higher expected score" in out["better"]
    negated = {k: t.assign(loss=-t["loss"]) for k, t in tables.items()}
    ref = compare_learners(negated, random_state=0)
    row = next(r for r in out["rows"] if r["method"] == "correlated_t" and r["b"] == "b")
    expected = ref.where((ref["method"] == "correlated_t") & (ref["b"] == "b"), drop=True)[
        "p_better"
    ].item()
    assert row["p_better"] == pytest.approx(expected)
    assert row["p_worse"] > 0.9
    best = compare_several(from_loss_tables(negated), random_state=0).isel(dataset=0)
    assert out["best"]["b"]["mean"] == pytest.approx(-best["mean"].sel(learner="b").item())
    assert out["best"]["b"]["mean"] == pytest.approx(tables["b"]["loss"].mean().item(), abs=0.05)
    assert main(["compare", *paths, "--greater-is-better"]) == 0
    text = capsys.readouterr().out
    assert "expected negated scores" in text
    assert "highest expected score" in text


def test_fold_level_intervals_stay_inside_the_range_of_the_differences():
    # Accuracy differences lie in [-1, 1]. Five folds alternating between the two learners
    # give t intervals of half-width about 2 (2.776 · sd 1.095 · sqrt(1/5 + 1/4) for the
    # correlated t), far past that range: every fold-level row is cut to it and flagged,
    # while the probabilities stay those of the untruncated t posterior.
    from scipy import stats

    from bayescv import compare_learners
    from bayescv.learner_comparison import correlated_ttest

    t = fold_table(
        {"a": [1.0, 0.0, 1.0, 0.0, 1.0], "b": [0.0, 1.0, 0.0, 1.0, 0.0]}, metric="accuracy"
    )
    rows = compare_learners(t, random_state=0)
    assert set(rows["method"].values) == {"correlated_t", "nadeau_bengio", "naive_folds"}
    assert (rows["lower"].values == -1.0).all()
    assert (rows["upper"].values == 1.0).all()
    assert set(rows["flag"].values) == {"truncated_to_range"}
    out = correlated_ttest(t)
    x = np.array([-1.0, 1.0, -1.0, 1.0, -1.0])  # a − b in losses (negated accuracies)
    scale = x.std(ddof=1) * np.sqrt(1 / 5 + 1 / 4)
    expected = stats.t.cdf(0.0, 4, x.mean(), scale)
    assert float(out["p_better"].item()) == pytest.approx(expected, abs=1e-12)


def test_model_over_data_sets_keeps_its_intervals_inside_the_range_of_the_differences():
    # Accuracy differences lie in [-1, 1], but the model over data sets is normal on the
    # real line: on fold accuracies of 0 and 1 its δ_i intervals reached 1.11 (seed 0).
    from bayescv import compare_learners

    rng = np.random.default_rng(0)
    a = rng.choice([0.0, 1.0], (5, 10))
    t = fold_table({"a": a, "b": 1.0 - a}, metric="accuracy")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a SamplingWarning is not what this test is about
        rows = compare_learners(t, methods=["hierarchical_datasets"], random_state=0)
    lower, upper = rows["lower"].values, rows["upper"].values
    assert np.nanmin(lower) >= -1.0
    assert np.nanmax(upper) <= 1.0
    moved = np.array(["truncated_to_range" in f for f in rows["flag"].values])
    assert moved.any()  # this input does reach past the range
    assert np.all((lower[moved] == -1.0) | (upper[moved] == 1.0))
