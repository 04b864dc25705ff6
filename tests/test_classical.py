"""Tests of bayescv.classical: variance_estimates, cv_intervals, bootstrap_interval.

References: intervals μ̂ ± q·sqrt(θ̂) with q the normal or t quantile (scipy.stats, as the
cv_intervals docstring states, with its documented degrees of freedom); θ_3 = squared
standard error of the block means and θ_4 = σ²_in/N (seeds README identities); the naive
standard error of Bates et al. eq. 5; Nadeau & Bengio's corrected resampled t,
(1/J + n_test/n_train)·S² with J − 1 df (Nadeau & Bengio 2003; Bouckaert & Frank 2004 for
J = R·K folds); the bootstrap variance var(μ̂_b, ddof=1) (bootstrap_interval docstring).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from sklearn.linear_model import Ridge

import bayescv
import bayescv.classical.estimators as est
from bayescv._defaults import DEFAULT_N_BOOTSTRAP
from bayescv.classical import (
    INTERVAL_METHODS,
    RANDOM_KFOLD_ONLY,
    bootstrap_interval,
    cv_intervals,
    default_methods,
    interval_target,
    variance_estimates,
)
from bayescv.classical.estimators import ESTIMATORS
from bayescv.losses import from_arrays, stack_replicates
from bayescv.moments import largest_loss

EQUAL_ONLY = [name for name, spec in ESTIMATORS.items() if spec.equal_sizes]
ANY_SIZES = [name for name, spec in ESTIMATORS.items() if not spec.equal_sizes]


def table_for(K=4, M=6, seed=0, *, scheme=None, spread=0.7):
    rng = np.random.default_rng(seed)
    blocks = np.repeat(np.arange(K), M)
    e = 0.4 + rng.normal(0, spread, K)[blocks] + rng.normal(size=K * M)
    return from_arrays(e, blocks, scheme=scheme), e.reshape(K, M)


def se2_block_means(e2d) -> float:
    """θ_3 = θ^γ = (standard error of the K block means)² (seeds README)."""
    return float(e2d.mean(axis=1).var(ddof=1) / e2d.shape[0])


def naive_points(e) -> float:
    """Bates et al. eq. 5, squared: Σ (e_i − μ̂)² / (N(N−1))."""
    e = np.ravel(e)
    return float(e.var(ddof=1) / e.size)


# ------------------------------------------------------------- variance_estimates
def test_variance_estimates_matches_each_estimator():
    table, e2d = table_for()
    ds = variance_estimates(table)
    assert ds["estimator"].values.tolist() == list(ESTIMATORS)
    assert ds["theta"].dims == ("estimator",)
    for name in ESTIMATORS:
        expected = ESTIMATORS[name].func(est.block_stats(table))[0]
        np.testing.assert_allclose(ds["theta"].sel(estimator=name), expected, rtol=1e-14)
        assert ds["bias_formula"].sel(estimator=name) == ESTIMATORS[name].bias
        assert ds["assumption"].sel(estimator=name) == ESTIMATORS[name].assumption
        assert ds["note"].sel(estimator=name) == ""
    np.testing.assert_allclose(ds["theta"].sel(estimator="theta_3"), se2_block_means(e2d))
    np.testing.assert_allclose(
        ds["theta"].sel(estimator="naive_points"), naive_points(e2d), rtol=1e-12
    )
    np.testing.assert_allclose(ds["mu_hat"], e2d.mean(), rtol=1e-14)
    assert (ds.attrs["K"], ds.attrs["N"], ds.attrs["M"]) == (4, 24, 6)
    assert ds.attrs["scheme"] == "random"


def test_variance_estimates_unequal_sizes_nan_with_note():
    rng = np.random.default_rng(1)
    blocks = np.repeat([0, 1, 2], [3, 5, 4])
    table = from_arrays(rng.normal(size=12), blocks)
    ds = variance_estimates(table)
    for name in EQUAL_ONLY:
        assert np.isnan(ds["theta"].sel(estimator=name))
        assert "equal block sizes" in str(ds["note"].sel(estimator=name).item())
    for name in ANY_SIZES:
        assert np.isfinite(ds["theta"].sel(estimator=name))
        assert ds["note"].sel(estimator=name) == ""
    assert "M" not in ds.attrs
    assert (ds.attrs["K"], ds.attrs["N"]) == (3, 12)


def test_variance_estimates_independent_replicates():
    tables = [table_for(seed=s)[0] for s in range(3)]
    stacked = stack_replicates(tables, replicate_kind="independent")
    ds = variance_estimates(stacked)
    assert ds["theta"].dims == ("replicate", "estimator")
    for r, table in enumerate(tables):
        alone = variance_estimates(table)
        np.testing.assert_allclose(ds["theta"].isel(replicate=r), alone["theta"], rtol=1e-13)
        np.testing.assert_allclose(ds["mu_hat"].isel(replicate=r), alone["mu_hat"], rtol=1e-14)


# ------------------------------------------------------------------- cv_intervals
@pytest.mark.parametrize("level", [0.95, 0.8])
def test_bounds_are_estimate_plus_minus_z_root_theta(level):
    table, e2d = table_for(seed=1, spread=0.0)  # a seed where every θ̂ > 0
    ci = cv_intervals(table, "all", level=level, kind="normal")
    assert (ci["theta"] > 0).all()
    assert ci["method_name"].values.tolist() == list(INTERVAL_METHODS)
    z = stats.norm.ppf(0.5 + level / 2)
    theta = variance_estimates(table)["theta"]
    for name in ESTIMATORS:
        row = ci.sel(method_name=name)
        assert row["flag"] == ""
        np.testing.assert_allclose(row["theta"], theta.sel(estimator=name), rtol=1e-14)
        np.testing.assert_allclose(row["estimate"], e2d.mean(), rtol=1e-14)
        se = np.sqrt(float(row["theta"]))
        np.testing.assert_allclose(row["se"], se, rtol=1e-14)
        np.testing.assert_allclose(row["lower"], e2d.mean() - z * se, rtol=1e-13)
        np.testing.assert_allclose(row["upper"], e2d.mean() + z * se, rtol=1e-13)
        assert np.isinf(row["df"])
    assert ci.attrs["level"] == level
    assert ci.attrs["kind"] == "normal"
    # a hand-computed one: θ_3 is the squared standard error of the fold means
    half = z * np.sqrt(se2_block_means(e2d))
    np.testing.assert_allclose(
        ci["upper"].sel(method_name="theta_3"), e2d.mean() + half, rtol=1e-12
    )


def test_t_quantiles_use_documented_df():
    table, _e2d = table_for(K=5, M=4, seed=11, spread=0.0)  # a seed where every θ̂ > 0
    K, N = 5, 20
    ci = cv_intervals(table, "all", kind="t", level=0.9)
    assert (ci["theta"] > 0).all()
    documented = {"naive_points": N - 1, "bayle_all_pairs": N - 1, "bayle_within": N - K}
    for name in ESTIMATORS:
        df = documented.get(name, K - 1)  # K − 1 for the block-level estimators
        row = ci.sel(method_name=name)
        assert float(row["df"]) == df
        q = stats.t.ppf(0.95, df)
        np.testing.assert_allclose(
            row["upper"] - row["estimate"], q * np.sqrt(float(row["theta"])), rtol=1e-12
        )
    assert ci.attrs["kind"] == "t"


def test_negative_theta_is_flagged_not_clipped():
    # Block means far apart, tiny within-block spread: θ_2 = θ^ω = mean W_k/(M(M−1)) − D/K < 0.
    rng = np.random.default_rng(4)
    K, M = 3, 4
    blocks = np.repeat(np.arange(K), M)
    apart = np.repeat([0.0, 10.0, 20.0], M) + 0.01 * rng.normal(size=K * M)
    # Equal block means, spread within: θ_5 = (wbar/(NM))(1 − (N+M−1)/(M−1)) < 0 (D = 0).
    level = np.tile([0.0, 1.0, 2.0, 3.0], K)
    for e, names in [(apart, ["theta_2", "theta_omega"]), (level, ["theta_5"])]:
        ci = cv_intervals(from_arrays(e, blocks), [*names, "theta_3"])
        for name in names:
            row = ci.sel(method_name=name)
            assert float(row["theta"]) < 0  # kept as computed, not clipped to 0
            assert row["flag"] == "negative_variance"
            assert np.isnan(row["lower"])
            assert np.isnan(row["upper"])
            assert np.isnan(row["se"])
            np.testing.assert_allclose(row["estimate"], e.mean(), rtol=1e-14)
    theta_5 = float(cv_intervals(from_arrays(level, blocks), ["theta_5"])["theta"][0])
    N = K * M
    wbar = 5.0  # Σ (x − 1.5)² over {0, 1, 2, 3}
    np.testing.assert_allclose(theta_5, wbar / (N * M) * (1 - (N + M - 1) / (M - 1)), rtol=1e-12)


def test_targets_per_scheme():
    random_table, _ = table_for(seed=5)
    source_table, _ = table_for(seed=5, scheme="source")
    ci = cv_intervals(random_table, "all")
    for name in INTERVAL_METHODS:
        expected = "kfold_test_error" if name.startswith("bayle_") else "err"
        assert ci["target"].sel(method_name=name) == expected
        assert interval_target(name, "random") == expected
    ci = cv_intervals(source_table)
    assert ci["method_name"].values.tolist() == list(default_methods("source"))
    for name in default_methods("source"):
        expected = "kfold_test_error" if name.startswith("bayle_") else "expected_cv"
        assert ci["target"].sel(method_name=name) == expected
    assert ci.attrs["target"] == "expected_cv, kfold_test_error"
    assert ci.attrs["scheme"] == "source"
    assert cv_intervals(random_table)["method_name"].values.tolist() == list(
        default_methods("random")
    )


def test_independent_replicates_match_each_table_alone():
    tables = [table_for(seed=s)[0] for s in (10, 11, 12)]
    stacked = stack_replicates(tables, replicate_kind="independent")
    ci = cv_intervals(stacked, "all", kind="t")
    assert ci["estimate"].dims == ("replicate", "method_name")
    assert ci["replicate"].values.tolist() == [0, 1, 2]
    for r, table in enumerate(tables):
        alone = cv_intervals(table, "all", kind="t")
        for var in ("estimate", "lower", "upper", "se", "theta", "df"):
            np.testing.assert_allclose(ci[var].isel(replicate=r), alone[var], rtol=1e-12)
        assert ci["flag"].isel(replicate=r).values.tolist() == alone["flag"].values.tolist()


def test_repeat_averages_estimate_and_theta():
    rng = np.random.default_rng(6)
    R, K, M = 3, 4, 5
    e = rng.normal(0.5, 1.0, size=K * M)
    runs = [rng.permutation(np.repeat(np.arange(K), M)) for _ in range(R)]  # new partitions
    table = from_arrays(np.tile(e, (R, 1)), np.stack(runs), replicate_kind="repeat")
    ci = cv_intervals(table, ["theta_3", "naive_points", "nadeau_bengio"], level=0.9)
    assert ci["estimate"].dims == ("method_name",)
    fold_means = [[e[run == k].mean() for k in range(K)] for run in runs]
    # θ̂ is the mean of the runs' θ̂ (cv_intervals docstring); θ_3 = se² of the fold means
    theta_3 = np.mean([np.var(f, ddof=1) / K for f in fold_means])
    z = stats.t.ppf(0.95, K - 1)  # the default kind for losses not 0-1: t on K − 1 d.f.
    row = ci.sel(method_name="theta_3")
    np.testing.assert_allclose(row["estimate"], e.mean(), rtol=1e-13)
    np.testing.assert_allclose(row["theta"], theta_3, rtol=1e-12)
    np.testing.assert_allclose(row["lower"], e.mean() - z * np.sqrt(theta_3), rtol=1e-12)
    np.testing.assert_allclose(ci["theta"].sel(method_name="naive_points"), naive_points(e))
    # Nadeau–Bengio over J = R·K folds: (1/J + n_test/n_train) S², t with J − 1 df
    J = R * K
    S2 = np.var(np.ravel(fold_means), ddof=1)
    variance = (1 / J + M / (K * M - M)) * S2
    nb = ci.sel(method_name="nadeau_bengio")
    np.testing.assert_allclose(nb["theta"], variance, rtol=1e-12)
    assert float(nb["df"]) == J - 1
    np.testing.assert_allclose(
        nb["upper"], np.mean(fold_means) + stats.t.ppf(0.95, J - 1) * np.sqrt(variance)
    )


@pytest.mark.parametrize("kind", ["normal", "t"])
def test_nadeau_bengio_single_run_by_hand(kind):
    table, e2d = table_for(K=5, M=6, seed=7)
    K, M = e2d.shape
    ci = cv_intervals(table, ["nadeau_bengio"], kind=kind)
    S2 = e2d.mean(axis=1).var(ddof=1)
    variance = (1 / K + M / (K * M - M)) * S2  # Nadeau & Bengio's corrected variance
    row = ci.sel(method_name="nadeau_bengio")
    np.testing.assert_allclose(row["theta"], variance, rtol=1e-12)
    assert float(row["df"]) == K - 1  # always a t procedure, whatever `kind`
    half = stats.t.ppf(0.975, K - 1) * np.sqrt(variance)
    np.testing.assert_allclose(row["upper"] - row["lower"], 2 * half, rtol=1e-12)
    assert row["target"] == "err"


def test_bootstrap_from_a_hand_made_table():
    table, e2d = table_for(seed=8)
    rng = np.random.default_rng(8)
    B = 6
    boot_losses = rng.normal(0.4, 1.0, size=(B, e2d.size))
    boot = from_arrays(
        boot_losses, np.tile(np.repeat(np.arange(4), 6), (B, 1)), replicate_kind="bootstrap"
    )
    mu_b = boot_losses.mean(axis=1)
    for kind, df in [("normal", np.inf), ("t", B - 1)]:
        ci = bootstrap_interval(table, boot, level=0.9, kind=kind)
        row = ci.sel(method_name="bootstrap")
        np.testing.assert_allclose(row["theta"], np.var(mu_b, ddof=1), rtol=1e-12)
        np.testing.assert_allclose(row["estimate"], e2d.mean(), rtol=1e-14)
        assert float(row["df"]) == df
        q = stats.norm.ppf(0.95) if kind == "normal" else stats.t.ppf(0.95, B - 1)
        np.testing.assert_allclose(row["upper"], e2d.mean() + q * np.std(mu_b, ddof=1), rtol=1e-12)
    # with the defaults, cv_intervals appends "bootstrap" when bootstrap= is given
    both = cv_intervals(table, bootstrap=boot)
    assert both["method_name"].values.tolist() == [*default_methods("random"), "bootstrap"]


def test_bootstrap_from_bootstrap_cv_losses(regression):
    X, y, _ = regression
    observed = bayescv.cross_val_losses(Ridge(), X, y, cv=3, random_state=0)
    boot = bayescv.bootstrap_cv_losses(Ridge(), X, y, cv=3, n_bootstrap=4, random_state=0)
    assert boot.attrs["replicate_kind"] == "bootstrap"
    ci = bootstrap_interval(observed, boot)
    mu_b = boot["loss"].values.mean(axis=1)
    np.testing.assert_allclose(ci["theta"].sel(method_name="bootstrap"), np.var(mu_b, ddof=1))
    np.testing.assert_allclose(
        ci["estimate"].sel(method_name="bootstrap"), observed["loss"].values.mean(), rtol=1e-14
    )
    assert ci["target"].sel(method_name="bootstrap") == "err"


# ----------------------------------------------------------------- 6. bad input
def test_errors():
    table, _ = table_for()
    rng = np.random.default_rng(0)
    blocks = np.tile(np.repeat(np.arange(4), 6), (3, 1))
    boot = from_arrays(rng.normal(size=(3, 24)), blocks, replicate_kind="bootstrap")
    indep = from_arrays(rng.normal(size=(3, 24)), blocks, replicate_kind="independent")
    with pytest.raises(ValueError, match="bootstrap replicates"):
        cv_intervals(boot)
    with pytest.raises(ValueError, match="pass bootstrap="):
        cv_intervals(table, ["bootstrap"])
    with pytest.raises(ValueError, match="unknown interval method"):
        cv_intervals(table, ["theta_9"])
    with pytest.raises(ValueError, match="unknown interval method"):
        cv_intervals(table, "theta_1 ")
    with pytest.raises(ValueError, match="no interval methods"):
        cv_intervals(table, [])
    with pytest.raises(ValueError, match="kind must be"):
        cv_intervals(table, kind="cauchy")
    with pytest.raises(ValueError, match="level"):
        cv_intervals(table, level=1.5)
    with pytest.raises(ValueError, match="replicate_kind='bootstrap'"):
        bootstrap_interval(table, indep)
    with pytest.raises(ValueError, match="replicate dim"):
        bootstrap_interval(table, table)
    with pytest.raises(ValueError, match="at least 2 replicates"):
        bootstrap_interval(table, boot.isel(replicate=[0]))
    with pytest.raises(ValueError, match="not a stack"):
        cv_intervals(indep, ["bootstrap"], bootstrap=boot)


def test_unequal_sizes_in_intervals():
    rng = np.random.default_rng(9)
    table = from_arrays(rng.normal(size=13), np.repeat([0, 1, 2], [3, 6, 4]))
    ci = cv_intervals(table, ["theta_3", "theta_A_weighted", "naive_folds"])
    row = ci.sel(method_name="theta_3")
    assert np.isnan(row["theta"])
    assert np.isnan(row["lower"])
    assert np.isnan(row["upper"])
    for name in ("theta_A_weighted", "naive_folds"):
        assert ci["flag"].sel(method_name=name) == ""
        assert np.isfinite(ci["lower"].sel(method_name=name))
    # cv_intervals sets flag "unequal_block_sizes" for an estimator that needs equal sizes
    # (bayescv/classical.py, the loop over names); the flag should say so.
    assert row["flag"] == "unequal_block_sizes"


# ---------------------------------------------------------------- methods per scheme


def test_all_on_a_source_table_leaves_out_random_kfold_methods():
    source_table, _ = table_for(seed=6, scheme="source")
    random_table, _ = table_for(seed=6)
    names = cv_intervals(source_table, "all")["method_name"].values.tolist()
    assert names == [m for m in INTERVAL_METHODS if m not in RANDOM_KFOLD_ONLY]
    assert set(RANDOM_KFOLD_ONLY) == {"theta_1", "theta_2", "theta_3", "theta_4", "theta_5",
                                      "nadeau_bengio"}  # fmt: skip
    assert not set(RANDOM_KFOLD_ONLY) & set(default_methods("source"))
    # random tables keep every method
    assert cv_intervals(random_table, "all")["method_name"].values.tolist() == list(
        INTERVAL_METHODS
    )


def test_random_kfold_methods_named_on_a_source_table_are_flagged():
    source_table, _ = table_for(seed=6, scheme="source")
    random_table, _ = table_for(seed=6)
    names = ["theta_3", "nadeau_bengio", "theta_A", "naive_points"]
    on_source = cv_intervals(source_table, names)
    on_random = cv_intervals(random_table, names)
    flags = dict(zip(names, on_source["flag"].values.tolist(), strict=True))
    assert flags == {"theta_3": "random_kfold_only", "nadeau_bengio": "random_kfold_only",
                     "theta_A": "", "naive_points": ""}  # fmt: skip
    assert (on_random["flag"] == "").all()
    # the numbers are computed all the same (same losses, same formulas): only the flag differs
    for var in ("estimate", "lower", "upper", "theta"):
        np.testing.assert_allclose(on_source[var], on_random[var], rtol=1e-14)


def test_random_kfold_flag_joins_other_flags():
    # θ_2 negative (block means far apart, see test_negative_theta_is_flagged_not_clipped)
    blocks = np.repeat(np.arange(3), 4)
    apart = np.repeat([0.0, 10.0, 20.0], 4) + 0.01 * np.tile([1.0, -1.0, 2.0, -2.0], 3)
    ci = cv_intervals(from_arrays(apart, blocks, scheme="source"), ["theta_2"])
    assert ci["flag"].item() == "random_kfold_only,negative_variance"


def test_theta_omega_not_a_source_default_but_available():
    table, _ = table_for(seed=7, scheme="source")
    assert "theta_omega" not in default_methods("source")
    assert "theta_omega" not in cv_intervals(table)["method_name"].values
    assert "theta_omega" in cv_intervals(table, "all")["method_name"].values
    row = cv_intervals(table, ["theta_omega"])
    assert row["flag"].item() in ("", "negative_variance")


# ---------------------------------------------------------------- centres


def test_naive_folds_and_nadeau_bengio_centred_on_mean_of_fold_means():
    # blocks [1, 3] (mean 2) and [0, 0, 0, 4] (mean 1): m = 1.5, while μ̂ = 8/6.
    table = from_arrays([1.0, 3.0, 0.0, 0.0, 0.0, 4.0], [0, 0, 1, 1, 1, 1])
    ci = cv_intervals(table, ["naive_folds", "nadeau_bengio", "naive_points"], level=0.9)
    naive = ci.sel(method_name="naive_folds")
    # Σ_k (ē_k − m)² / (K(K − 1)) = (0.25 + 0.25) / 2 = 0.25: the variance of m (Bates eq. 9)
    z = stats.t.ppf(0.95, 1)  # the default kind for losses not 0-1: t on K − 1 = 1 d.f.
    assert float(naive["estimate"]) == 1.5
    np.testing.assert_allclose(float(naive["theta"]), 0.25, rtol=1e-15)
    np.testing.assert_allclose([naive["lower"], naive["upper"]], [1.5 - 0.5 * z, 1.5 + 0.5 * z])
    assert float(ci["estimate"].sel(method_name="nadeau_bengio")) == 1.5
    np.testing.assert_allclose(float(ci["estimate"].sel(method_name="naive_points")), 8 / 6)


def test_naive_folds_centre_is_mu_hat_for_equal_sizes():
    table, e = table_for(seed=8)
    ci = cv_intervals(table, ["naive_folds", "naive_points"])
    np.testing.assert_allclose(ci["estimate"].values, e.mean(), rtol=1e-14)


def test_default_n_bootstrap_is_50():
    assert DEFAULT_N_BOOTSTRAP == 50


# ---------------------------------------------------------------- no silent non-finite value


# Scales of the losses: tiny (squares underflow), ordinary, near the overflow limit of
# largest_loss (about 3.4e153 / sqrt(N)) on both sides, and far beyond it.
EXPONENTS = st.sampled_from([-300, -150, -10, 0, 10, 100, 150, 152, 153, 154, 200, 300])


@st.composite
def finite_tables(draw):
    n_blocks = draw(st.integers(2, 5))
    sizes = draw(st.lists(st.integers(2, 6), min_size=n_blocks, max_size=n_blocks))
    scale = 10.0 ** draw(EXPONENTS)
    blocks = []
    for size in sizes:
        kind = draw(st.sampled_from(["constant", "spread", "any"]))
        if kind == "constant":
            value = draw(st.floats(-1.0, 1.0, allow_nan=False)) * scale
            blocks.append([value] * size)
        elif kind == "spread":
            unit = st.floats(-1.0, 1.0, allow_nan=False)
            blocks.append([draw(unit) * scale for _ in range(size)])
        else:  # anything finite, up to the float64 maximum
            anything = st.floats(allow_nan=False, allow_infinity=False, width=64)
            blocks.append([draw(anything) for _ in range(size)])
    losses = np.concatenate(blocks)
    labels = np.repeat(np.arange(n_blocks), sizes)
    scheme = draw(st.sampled_from(["random", "source"]))
    return from_arrays(losses, labels, scheme=scheme)


@settings(max_examples=150, deadline=None)
@given(table=finite_tables(), kind=st.sampled_from(["normal", "t"]))
def test_every_method_gives_finite_bounds_or_a_flag(table, kind):
    # Warnings are errors here: an overflow inside any formula fails the test too.
    peak = float(np.abs(table["loss"].values).max())
    if peak > largest_loss(table.sizes["obs"]):
        with pytest.raises(ValueError, match=r"overflow float64.*rescale them"):
            cv_intervals(table, "all", kind=kind)
        return
    ci = cv_intervals(table, "all", kind=kind)
    flagged = ci["flag"] != ""
    for var in ("estimate", "lower", "upper", "se", "theta"):
        finite = np.isfinite(ci[var])
        assert bool((finite | flagged).all()), (var, ci[var].values, ci["flag"].values)
    # a flagged bound is NaN, never ±inf
    for var in ("lower", "upper"):
        assert not np.isinf(ci[var]).any()
    assert bool((ci["lower"] <= ci["upper"]).where(~flagged, True).all())
