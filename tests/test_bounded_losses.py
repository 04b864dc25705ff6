"""Bounded losses: declared ranges, score intervals for 0-1 losses, constant tables (issue 15)."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize, stats
from sklearn.dummy import DummyClassifier
from sklearn.linear_model import LogisticRegression, Ridge

from bayescv import bootstrap_cv_losses, cross_val_losses, make_loss
from bayescv.classical import INTERVAL_METHODS, cv_intervals, paired_comparison
from bayescv.intervals import normal_bounds, score_bounds
from bayescv.losses import (
    from_arrays,
    is_binary,
    loss_differences,
    loss_range,
    read_netcdf,
    stack_replicates,
    to_netcdf,
)

Z = stats.norm.ppf(0.975)


def _wilson_by_root_finding(errors: int, n: int) -> tuple[float, float]:
    """Wilson's (1927) interval: the p with |p̂ − p| = z sqrt(p(1 − p)/n), found numerically."""
    p_hat = errors / n
    g = lambda p: (p_hat - p) ** 2 - Z**2 * p * (1 - p) / n  # noqa: E731
    lower = 0.0 if errors == 0 else optimize.brentq(g, 1e-12, p_hat)
    upper = 1.0 if errors == n else optimize.brentq(g, p_hat, 1 - 1e-12)
    return lower, upper


# --------------------------------------------------------------------------- score bounds


def test_wilson_upper_bound_for_no_errors_is_z2_over_n_plus_z2():
    # 0 errors in 100 points: upper = z² / (n + z²) = 3.8415 / 103.8415 = 0.0370
    # (Wilson 1927; Brown, Cai & DasGupta 2001, eq. 4).
    _, lower, upper, flag = score_bounds(0.0, 0.0, 100)
    assert lower == 0.0
    assert upper == pytest.approx(Z**2 / (100 + Z**2), rel=1e-12)
    assert upper == pytest.approx(0.0370, abs=5e-5)
    assert flag == "no_errors"
    _, lower, upper, flag = score_bounds(1.0, 0.0, 100)
    assert upper == 1.0
    assert lower == pytest.approx(1 - Z**2 / (100 + Z**2), rel=1e-12)
    assert flag == "all_errors"


@pytest.mark.parametrize(("errors", "n"), [(1, 50), (7, 200), (30, 60), (199, 200)])
def test_score_interval_with_independent_variance_is_wilsons(errors, n):
    # With θ̂ = p̂(1 − p̂)/N the effective size is N: the plain Wilson interval.
    p = errors / n
    _, lower, upper, flag = score_bounds(p, p * (1 - p) / n, n)
    expected = _wilson_by_root_finding(errors, n)
    assert (float(lower), float(upper)) == pytest.approx(expected, abs=1e-9)
    assert flag == ""


def test_score_interval_keeps_the_dependence_through_theta():
    # A θ̂ four times the independent one is an effective size of N/4.
    p, n = 0.05, 400
    _, lo4, hi4, _ = score_bounds(p, 4 * p * (1 - p) / n, n)
    expected = _wilson_by_root_finding(5, 100)  # p̂ = 0.05 in N/4 = 100 points
    assert (float(lo4), float(hi4)) == pytest.approx(expected, abs=1e-9)


def test_normal_bounds_truncate_to_the_range_with_a_flag():
    _, lower, _, flag = normal_bounds([0.01, 0.5], [0.0004, 0.0001], bounds=(0.0, 1.0))
    assert lower[0] == 0.0
    assert flag.tolist() == ["truncated_to_range", ""]
    assert lower[1] == pytest.approx(0.5 - Z * 0.01)


# --------------------------------------------------------------------------- ranges


def test_ranges_are_recorded_and_carried(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] > 0).astype(int)
    zero_one = cross_val_losses(LogisticRegression(), X, y, cv=3, random_state=0)
    assert loss_range(zero_one) == (0.0, 1.0)
    assert is_binary(zero_one)
    squared = cross_val_losses(Ridge(), X, X[:, 1], cv=3, random_state=0)
    assert loss_range(squared) == (0.0, np.inf)
    three = np.arange(60) % 3
    brier = cross_val_losses(LogisticRegression(), X, three, cv=3, loss="brier", random_state=0)
    assert loss_range(brier) == (0.0, 2.0)  # sum over three classes
    to_netcdf(zero_one, tmp_path / "t.nc")
    assert loss_range(read_netcdf(tmp_path / "t.nc")) == (0.0, 1.0)
    stacked = stack_replicates([zero_one, zero_one], replicate_kind="repeat")
    assert loss_range(stacked) == (0.0, 1.0)
    # A difference of two losses in [0, 1] lies in [-1, 1].
    assert loss_range(loss_differences(zero_one, zero_one)) == (-1.0, 1.0)
    capped = make_loss(lambda t, p: np.minimum((t - p) ** 2, 4.0), name="capped", range=(0, 4))
    table = cross_val_losses(Ridge(), X, X[:, 1], cv=3, loss=capped, random_state=0)
    assert loss_range(table) == (0.0, 4.0)
    unbounded = cross_val_losses(Ridge(), X, X[:, 1], cv=3, loss=lambda t, p: t - p)
    assert loss_range(unbounded) == (-np.inf, np.inf)


def test_a_loss_outside_its_declared_range_is_refused():
    with pytest.raises(ValueError, match="outside the declared loss_range"):
        from_arrays([0.0, 2.0, 1.0, 0.0], [0, 0, 1, 1], loss_range=(0, 1))
    with pytest.raises(ValueError, match="low < high"):
        make_loss(lambda t, p: t - p, range=(1, 0))


def test_normal_intervals_of_a_bounded_loss_are_truncated_and_flagged():
    # Squared errors near 0 with one large one: μ̂ − 1.96 se < 0.
    loss = np.r_[np.full(19, 0.01), 5.0, np.full(20, 0.01)]
    table = from_arrays(loss, np.repeat([0, 1], 20), loss_name="squared")
    ci = cv_intervals(table, ["naive_points"])
    row = ci.sel(method_name="naive_points")
    assert float(row["lower"]) == 0.0
    assert "truncated_to_range" in str(row["flag"].item())
    assert ci.attrs["kind"] == "t"  # auto: t quantiles, truncated the same way


# --------------------------------------------------------------------------- constant tables


@pytest.mark.parametrize("value", [0.0, 1.0])
@pytest.mark.parametrize("scheme", ["random", "source"])
def test_constant_tables_get_proper_flagged_intervals_from_every_method(value, scheme):
    n = 200
    table = from_arrays(np.full(n, value), np.repeat(np.arange(5), 40), scheme=scheme)
    methods = list(INTERVAL_METHODS)
    ci = cv_intervals(table, methods)
    assert ci.attrs["kind"] == "score"
    width = (ci["upper"] - ci["lower"]).values
    bound = Z**2 / (n + Z**2)  # Wilson's bound for 0 errors in N points, about 3.84/N
    assert np.allclose(width, bound)
    expected = "no_errors" if value == 0 else "all_errors"
    assert all(expected in f for f in ci["flag"].values.tolist())


def test_constant_table_through_the_bootstrap_row():
    X = np.random.default_rng(1).normal(size=(80, 2))
    y = np.zeros(80, dtype=int)  # one class: the classifier never errs
    groups = np.repeat(np.arange(4), 20)
    learner = DummyClassifier()
    table = cross_val_losses(learner, X, y, groups=groups)
    boot = bootstrap_cv_losses(learner, X, y, groups=groups, n_bootstrap=5, random_state=0)
    ci = cv_intervals(table, ["bootstrap", "theta_B"], bootstrap=boot)
    assert np.allclose(ci["upper"], Z**2 / (80 + Z**2))
    assert set(ci["flag"].values.tolist()) == {"no_errors"}


def test_paired_comparison_of_identical_learners_is_not_degenerate():
    n = 300
    block = np.repeat(np.arange(6), 50)
    loss = (np.random.default_rng(2).random(n) < 0.1).astype(float)
    a = from_arrays(loss, block, scheme="source", loss_name="zero_one")
    out = paired_comparison(a, a)
    bound = Z**2 / (n + Z**2)
    assert np.allclose(out["lower"], -bound)
    assert np.allclose(out["upper"], bound)
    assert set(out["flag"].values.tolist()) == {"no_disagreements"}


def test_paired_score_bounds_stay_in_minus_one_one():
    block = np.repeat(np.arange(5), 20)
    a = from_arrays(np.ones(100), block, loss_name="zero_one")
    b = from_arrays(np.r_[np.zeros(98), 1.0, 1.0], block, loss_name="zero_one")
    out = paired_comparison(a, b)
    assert out.attrs["kind"] == "score"
    finite = np.isfinite(out["lower"].values)
    assert finite.sum() >= 5
    assert (out["lower"].values[finite] >= -1).all()
    assert (out["upper"].values[finite] <= 1).all()


def test_cli_variance_on_a_table_without_errors(tmp_path):
    path = tmp_path / "zeros.csv"
    pd.DataFrame({"loss": np.zeros(200), "block": np.repeat(np.arange(5), 40)}).to_csv(
        path, index=False
    )
    run = subprocess.run(
        [sys.executable, "-m", "bayescv", "variance", str(path), "--format", "json"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    out = json.loads(run.stdout)
    bound = Z**2 / (200 + Z**2)
    assert out["interval_kind"] == "score"
    for name, (lower, upper) in out["intervals"].items():
        assert (lower, upper) == (0.0, pytest.approx(bound))
        assert out["flags"][name] == "no_errors"


# --------------------------------------------------------------------------- property


@st.composite
def zero_one_tables(draw):
    k = draw(st.integers(2, 6))
    sizes = draw(st.lists(st.integers(2, 15), min_size=k, max_size=k))
    rate = draw(st.sampled_from([0.0, 0.01, 0.1, 0.5, 0.9, 1.0]))
    seed = draw(st.integers(0, 2**31 - 1))
    losses = (np.random.default_rng(seed).random(sum(sizes)) < rate).astype(float)
    scheme = draw(st.sampled_from(["random", "source"]))
    return from_arrays(losses, np.repeat(np.arange(k), sizes), scheme=scheme)


@settings(max_examples=60, deadline=None)
@given(zero_one_tables())
def test_every_method_keeps_zero_one_bounds_inside_0_1(table):
    skip = ("nadeau_bengio",) if table.attrs["scheme"] == "source" else ()
    ci = cv_intervals(table, [m for m in INTERVAL_METHODS if m not in skip])
    finite = np.isfinite(ci["lower"].values)
    assert (ci["lower"].values[finite] >= 0).all()
    assert (ci["upper"].values[finite] <= 1).all()
    assert (ci["lower"].values[finite] <= ci["upper"].values[finite]).all()


def test_gaussian_posterior_bounds_are_truncated_to_the_loss_range():
    # Squared errors near 0 with one outlier: the normal model's posterior reaches below 0.
    pytest.importorskip("pymc")
    from bayescv.bayes import fit, posterior_intervals

    rng = np.random.default_rng(0)
    loss = np.r_[np.full(39, 0.01), 8.0, rng.exponential(0.05, 40)]
    table = from_arrays(loss, np.repeat([0, 1, 2, 3], 20), scheme="source", loss_name="squared")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a SamplingWarning is possible; bounds are checked
        idata = fit(table, random_state=0, draws=300, tune=300)
    ci = posterior_intervals(idata)
    assert idata.sample_stats.attrs["loss_range"] == [0.0, np.inf]
    assert (ci["lower"] >= 0).all()
    truncated = ["truncated_to_range" in f for f in ci["flag"].values.tolist()]
    assert truncated[0]  # bayes_expected_cv reached below 0 and was moved onto it
