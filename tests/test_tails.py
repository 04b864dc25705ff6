"""The heavy-tail diagnostic, its flags, and the studentized bootstrap interval (issue 15)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats

from bayescv.classical import cv_intervals, paired_comparison
from bayescv.compare import MultiSourceLinear
from bayescv.losses import from_arrays, stack_replicates
from bayescv.tails import (
    KHAT_INFINITE_VARIANCE,
    MIN_TAIL_POINTS,
    HeavyTailWarning,
    add_tail_flags,
    tail_flag,
    tail_shape,
)


@pytest.mark.parametrize("shape", [0.3, 0.6, 0.9])
def test_khat_recovers_the_pareto_shape_within_its_standard_error(shape):
    # Generalized Pareto draws of known shape ξ: k̂ within 3 standard errors (1 + k̂)/sqrt(n_tail)
    # of ξ (the asymptotic sd of the shape's MLE; Smith 1987).
    values = stats.genpareto.rvs(c=shape, size=4000, random_state=np.random.default_rng(11))
    table = from_arrays(values, np.repeat([0, 1], 2000))
    out = tail_shape(table)
    k, se = float(out["khat_pooled"]), float(out["khat_pooled_se"])
    assert abs(k - shape) < 3 * se
    assert np.all(np.abs(out["khat"].values - shape) < 3 * out["khat_se"].values)
    assert int(out["n_tail_pooled"]) == int(np.ceil(min(4000 / 5, 3 * np.sqrt(4000))))


def test_khat_does_not_depend_on_a_shift():
    # The GPD is fitted to exceedances over the cutoff, so a shift of the losses changes nothing.
    values = stats.genpareto.rvs(c=0.5, size=1000, random_state=np.random.default_rng(1))
    block = np.repeat([0, 1], 500)
    a = float(tail_shape(from_arrays(values, block))["khat_pooled"])
    b = float(tail_shape(from_arrays(values + 7.0, block))["khat_pooled"])
    assert a == pytest.approx(b, abs=1e-9)


def test_layout_per_replicate_and_block_and_what_gets_no_khat():
    rng = np.random.default_rng(2)
    runs = [from_arrays(rng.pareto(3, 600), np.repeat([0, 1, 2], 200)) for _ in range(2)]
    out = tail_shape(stack_replicates(runs, replicate_kind="independent"))
    assert out["khat"].dims == ("replicate", "block")
    assert out["khat_pooled"].dims == ("replicate",)
    assert np.isfinite(out["khat"]).all()
    # fewer than MIN_TAIL_POINTS losses per block: no per-block k̂, a pooled one
    small = tail_shape(from_arrays(rng.pareto(3, 400), np.repeat(np.arange(4), 100)))
    assert np.isnan(small["khat"]).all()
    assert np.isfinite(small["khat_pooled"])
    assert MIN_TAIL_POINTS > 100
    # all equal, or bounded on both sides (0-1 losses): no k̂
    assert np.isnan(tail_shape(from_arrays(np.ones(400), np.repeat([0, 1], 200)))["khat_pooled"])
    zero_one = from_arrays((rng.random(400) < 0.3).astype(float), np.repeat([0, 1], 200),
                           loss_name="zero_one")  # fmt: skip
    out = tail_shape(zero_one)
    assert np.isnan(out["khat_pooled"])
    assert "bounded" in out.attrs["note"]


def test_flags_and_thresholds():
    assert tail_flag([0.2, 0.6, 0.9, np.nan]).tolist() == ["", "heavy_tail", "very_heavy_tail", ""]
    ds = cv_intervals(from_arrays(np.arange(8.0), np.repeat([0, 1], 4)), ["naive_points"])
    flagged = add_tail_flags(ds, 0.8)
    assert flagged["flag"].values.tolist() == ["very_heavy_tail"]
    assert flagged.attrs["khat"] == 0.8


def test_heavy_tailed_table_flags_every_row_and_warns_once():
    rng = np.random.default_rng(3)
    # Pareto with tail index 1.2: k = 1/1.2 ≈ 0.83, the variance is infinite.
    table = from_arrays(rng.pareto(1.2, 2000), np.repeat(np.arange(10), 200),
                        scheme="source", loss_name="squared")  # fmt: skip
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ci = cv_intervals(table)
    heavy = [w for w in caught if issubclass(w.category, HeavyTailWarning)]
    assert len(heavy) == 1
    assert "under-cover" in str(heavy[0].message)
    assert all("heavy_tail" in f for f in ci["flag"].values.tolist())
    assert ci.attrs["khat"] > KHAT_INFINITE_VARIANCE


def test_light_tailed_table_is_not_flagged():
    rng = np.random.default_rng(4)
    table = from_arrays(rng.normal(size=1000) ** 2, np.repeat(np.arange(5), 200),
                        scheme="source", loss_name="squared")  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("error", HeavyTailWarning)
        ci = cv_intervals(table)
    assert not any("heavy_tail" in f for f in ci["flag"].values.tolist())


def test_paired_differences_look_at_both_tails():
    rng = np.random.default_rng(5)
    block = np.repeat(np.arange(4), 250)
    a = from_arrays(rng.normal(size=1000) ** 2, block)
    b = from_arrays(rng.pareto(1.2, 1000), block)  # heavy upper tail of B: lower tail of A − B
    with pytest.warns(HeavyTailWarning):
        out = paired_comparison(a, b, ["naive_points"])
    assert "heavy_tail" in str(out["flag"].item())


def test_student_t_noise_scenario_keeps_its_variance():
    # ε = noise_sd sqrt((ν − 2)/ν) T_ν has variance noise_sd² (Var(T_ν) = ν/(ν − 2)).
    sc = MultiSourceLinear(2, 50_000, noise_df=3, noise_sd=2.0, heterogeneity=0.0,
                           intercept_sd=0.0, coef=(0.0,))  # fmt: skip
    _, y, _ = sc.sample(np.random.default_rng(0))
    assert np.var(y) == pytest.approx(4.0, rel=0.1)  # heavy tails: a loose tolerance
    assert stats.kurtosis(y) > 3  # far from the Gaussian's 0
    assert sc.params()["noise_df"] == 3.0
    with pytest.raises(ValueError, match="noise_df"):
        MultiSourceLinear(noise_df=2)
    assert "noise_df" not in MultiSourceLinear().params()


def test_log_kind_is_the_delta_method_interval_of_log_mu():
    # exp(log μ̂ ± z sqrt(θ̂)/μ̂): the normal interval of log μ̂ (delta method), mapped back.
    rng = np.random.default_rng(6)
    table = from_arrays(rng.pareto(2.5, 600), np.repeat(np.arange(6), 100),
                        scheme="source", loss_name="squared")  # fmt: skip
    log = cv_intervals(table, ["theta_B", "naive_points"], kind="log")
    normal = cv_intervals(table, ["theta_B", "naive_points"], kind="normal")
    z = stats.norm.ppf(0.975)
    mu, se = log["estimate"].values, np.sqrt(log["theta"].values)
    assert np.allclose(log["lower"], mu * np.exp(-z * se / mu))
    assert np.allclose(log["upper"], mu * np.exp(z * se / mu))
    assert np.allclose(log["theta"], normal["theta"])
    assert log.attrs["kind"] == "log"
    assert (log["lower"] > 0).all()
    # asymmetric: further up than down
    assert ((log["upper"] - log["estimate"]) > (log["estimate"] - log["lower"])).all()
    with pytest.raises(ValueError, match="at least 0"):
        cv_intervals(from_arrays([-1.0, 1.0, 2.0, 3.0], [0, 0, 1, 1]), kind="log")
