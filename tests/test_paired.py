"""Tests of bayescv.classical.paired: loss differences on shared splits and the paired tests.

References: the statistic is mean(h)/se and its p-value the normal (or t) tail (paired_comparison
docstring; scipy.stats as the oracle); Bayle et al.'s test rejects "A is not better" when
√N·mean(h)/σ̂_h < z_α, with σ̂²_out = (1/N) Σ (h_i − h̄)² and σ̂²_in the mean within-fold
variance (seeds README, Bayle et al. 2020).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from sklearn.dummy import DummyRegressor
from sklearn.linear_model import Ridge

import bayescv
from bayescv.classical.paired import ALTERNATIVES, paired_comparison
from bayescv.losses import from_arrays, loss_differences


@pytest.fixture(scope="module")
def learners(regression):
    X, y, _ = regression
    a = bayescv.cross_val_losses(Ridge(), X, y, cv=5, random_state=0)
    b = bayescv.cross_val_losses(DummyRegressor(), X, y, cv=5, random_state=0)
    return a, b


def pick(ds, name):
    return ds.sel(method_name=name)


# ------------------------------------------------------------------ loss_differences
def test_loss_differences_on_the_same_splits(learners):
    a, b = learners
    diff = loss_differences(a, b)
    np.testing.assert_array_equal(diff["loss"].values, a["loss"].values - b["loss"].values)
    np.testing.assert_array_equal(diff["block"].values, a["block"].values)
    np.testing.assert_array_equal(diff["index"].values, a["index"].values)
    assert diff.attrs["estimator"].startswith("A: ")
    assert "; B: " in diff.attrs["estimator"]
    assert diff.attrs["loss_name"].endswith("(A - B)")


def test_loss_differences_refuses_other_splits(regression, learners):
    X, y, _ = regression
    a, _ = learners
    other = bayescv.cross_val_losses(DummyRegressor(), X, y, cv=5, random_state=1)
    with pytest.raises(ValueError, match=r"differ in '(block|index)'"):
        loss_differences(a, other)
    rng = np.random.default_rng(0)
    blocks = np.repeat([0, 1, 2], 4)
    e = rng.normal(size=12)
    base = from_arrays(e, blocks)
    moved = from_arrays(e, np.repeat([0, 1, 2], [3, 5, 4]))  # different folds, same shape
    with pytest.raises(ValueError, match="differ in 'block'"):
        loss_differences(base, moved)
    reindexed = from_arrays(e, blocks, index=rng.permutation(12))  # same folds, other rows
    with pytest.raises(ValueError, match="differ in 'index'"):
        loss_differences(base, reindexed)
    with pytest.raises(ValueError, match="differ in shape"):
        loss_differences(base, from_arrays(rng.normal(size=15), np.repeat([0, 1, 2], 5)))
    with pytest.raises(TypeError, match="loss table"):
        loss_differences(base, e)


# ------------------------------------------------------------------ paired_comparison
@pytest.mark.parametrize("kind", ["normal", "t"])
def test_statistic_and_p_values_match_scipy(learners, kind):
    a, b = learners
    h = a["loss"].values - b["loss"].values
    results = {
        alt: paired_comparison(a, b, "all", kind=kind, alternative=alt) for alt in ALTERNATIVES
    }
    two, less, greater = results["two-sided"], results["less"], results["greater"]
    assert two.attrs["difference"] == "A - B"
    assert less.attrs["alternative"] == "less"
    for name in two["method_name"].values:
        row = pick(two, name)
        if not np.isfinite(row["se"]):
            assert np.isnan(row["p_value"])
            assert np.isnan(row["statistic"])
            continue
        z = float(row["estimate"] / row["se"])
        np.testing.assert_allclose(row["statistic"], z, rtol=1e-14)
        df = float(row["df"])
        ref = stats.norm if np.isinf(df) else stats.t(df)
        np.testing.assert_allclose(pick(less, name)["p_value"], ref.cdf(z), rtol=1e-10)
        np.testing.assert_allclose(pick(greater, name)["p_value"], ref.sf(z), rtol=1e-10)
        np.testing.assert_allclose(
            row["p_value"], 2 * min(ref.cdf(z), ref.sf(z)), rtol=1e-10, atol=1e-300
        )
        np.testing.assert_allclose(
            row["p_value"],
            2 * min(float(pick(less, name)["p_value"]), float(pick(greater, name)["p_value"])),
            rtol=1e-12,
            atol=1e-300,
        )
        if name != "nadeau_bengio":  # its estimate is the mean of the fold means
            np.testing.assert_allclose(row["estimate"], h.mean(), rtol=1e-12)
    # with the normal reference, only Nadeau–Bengio keeps finite df (it is a t procedure)
    if kind == "normal":
        assert np.isinf(pick(two, "naive_points")["df"])
        assert float(pick(two, "nadeau_bengio")["df"]) == 4


def test_bayle_one_sided_rejects_when_a_is_clearly_better(learners):
    a, b = learners
    h = a["loss"].values - b["loss"].values
    blocks = a["block"].values
    N = h.size
    out = paired_comparison(a, b, ["bayle_within", "bayle_all_pairs"], alternative="less")
    # Bayle et al.: σ̂²_out = mean (h − h̄)², σ̂²_in = mean over folds of the fold variance
    sigma2 = {
        "bayle_all_pairs": h.var(),
        "bayle_within": np.mean([h[blocks == k].var(ddof=1) for k in np.unique(blocks)]),
    }
    z_alpha = stats.norm.ppf(0.05)
    for name, s2 in sigma2.items():
        statistic = np.sqrt(N) * h.mean() / np.sqrt(s2)
        np.testing.assert_allclose(pick(out, name)["statistic"], statistic, rtol=1e-10)
        assert statistic < z_alpha  # rejects "A is not better than B" at 5%
        assert float(pick(out, name)["p_value"]) < 0.05
        assert pick(out, name)["target"] == "kfold_test_error"
    # the other way round, B (the constant) is not better than A
    reverse = paired_comparison(b, a, ["bayle_within", "bayle_all_pairs"], alternative="less")
    assert (reverse["p_value"] > 0.95).all()


def test_alternative_is_validated(learners):
    a, b = learners
    with pytest.raises(ValueError, match="alternative must be one of"):
        paired_comparison(a, b, alternative="two_sided")


def test_negative_variance_gives_nan_test_and_keeps_flag():
    # differences whose fold means are far apart and nearly constant within: θ_2 < 0
    rng = np.random.default_rng(1)
    blocks = np.repeat([0, 1, 2], 4)
    base = rng.normal(size=12)
    a = from_arrays(base + np.repeat([0.0, 5.0, 10.0], 4) + 0.01 * rng.normal(size=12), blocks)
    b = from_arrays(base, blocks)
    out = paired_comparison(a, b, ["theta_2", "theta_3"])
    row = pick(out, "theta_2")
    assert row["flag"] == "negative_variance"
    assert np.isnan(row["statistic"])
    assert np.isnan(row["p_value"])
    assert np.isfinite(pick(out, "theta_3")["p_value"])


def test_p_values_uniform_under_a_swap_symmetric_null():
    # A and B share the block effects and have iid point noise of one law: h is symmetric
    # about 0, so the two-sided p-values should be about uniform (small Monte Carlo).
    rng = np.random.default_rng(2020)
    R, K, M = 1000, 5, 12
    blocks = np.tile(np.repeat(np.arange(K), M), (R, 1))
    shared = np.repeat(rng.normal(size=(R, K)), M, axis=1)
    a = from_arrays(shared + rng.normal(size=(R, K * M)), blocks, replicate_kind="independent")
    b = from_arrays(shared + rng.normal(size=(R, K * M)), blocks, replicate_kind="independent")
    out = paired_comparison(a, b, ["bayle_all_pairs", "bayle_within"])
    assert out["p_value"].dims == ("replicate", "method_name")
    for name in ("bayle_all_pairs", "bayle_within"):
        p = pick(out, name)["p_value"].values
        assert stats.kstest(p, "uniform").pvalue > 0.01
        # 5% ± 3.6 Monte Carlo SE (sqrt(0.05·0.95/1000) ≈ 0.0069)
        assert 0.025 <= np.mean(p < 0.05) <= 0.075
