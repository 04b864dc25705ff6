"""Defects found using the closed-form intervals from Python, against docs/estimators.md."""

import re
import warnings

import numpy as np
import pytest
from scipy import stats

import bayescv
from bayescv.losses import from_arrays
from bayescv.tails import HeavyTailWarning

BLOCKS = np.repeat(np.arange(5), 20)


def _squared_table():
    rng = np.random.default_rng(0)
    return from_arrays(rng.normal(size=100) ** 2, BLOCKS, loss_range=(0, np.inf))


def test_log_kind_reports_the_normal_quantile_it_uses_as_infinite_df():
    # The `df` variable is "degrees of freedom used; inf for normal quantiles" (cv_intervals'
    # Returns). log_bounds uses z for every row, so a t df there misstates the quantile.
    table = _squared_table()
    ci = bayescv.cv_intervals(table, ["naive_points", "theta_A", "nadeau_bengio"], kind="log")
    assert np.isinf(ci["df"].values).all()
    # The bounds are μ̂·exp(±z·sqrt(θ̂)/μ̂) with the normal z (docs, "When normal intervals fail").
    row = ci.sel(method_name="theta_A")
    mu, se = float(row["estimate"]), float(row["se"])
    z = stats.norm.ppf(0.975)
    assert float(row["upper"]) == pytest.approx(mu * np.exp(z * se / mu), rel=1e-12)


def test_score_rows_without_errors_report_the_normal_quantile_they_use():
    # At p̂ = 0 score_bounds uses the normal quantile for every row (Wilson's bound for 0 in
    # N, z²/(N + z²)), Nadeau–Bengio's too; its df said K − 1.
    ci = bayescv.cv_intervals(from_arrays(np.zeros(100), BLOCKS))
    nb = ci.sel(method_name="nadeau_bengio")
    z2 = stats.norm.ppf(0.975) ** 2
    assert float(nb["upper"]) == pytest.approx(z2 / (100 + z2), rel=1e-12)
    assert np.isinf(float(nb["df"]))
    # Away from the edge it keeps its t quantile on K − 1 = 4 d.f.
    e = np.zeros(100)
    e[[3, 30, 61]] = 1.0
    ci = bayescv.cv_intervals(from_arrays(e, BLOCKS))
    assert float(ci.sel(method_name="nadeau_bengio")["df"]) == 4.0


def test_log_heavy_tail_advice_does_not_claim_an_interval_that_was_not_asked_for():
    rng = np.random.default_rng(5)
    table = from_arrays(
        rng.standard_t(1.5, size=600) ** 2, np.repeat(np.arange(3), 200), loss_range=(0, np.inf)
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", HeavyTailWarning)
        bayescv.cv_intervals(table, ["naive_points", "theta_4"], kind="log")
    (message,) = [str(w.message) for w in caught if w.category is HeavyTailWarning]
    assert "Of the log-scale intervals asked for, the one" not in message
    assert "cv_intervals(losses, ['theta_B_weighted'], kind='log')" in message
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", HeavyTailWarning)
        bayescv.cv_intervals(table, ["naive_points", "theta_B"], kind="log")
    (message,) = [str(w.message) for w in caught if w.category is HeavyTailWarning]
    assert "Of the log-scale intervals asked for, the one measured to hold up" in message


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"mu": [0.1, 0.2]}, "mu must be a scalar or hold one value per block (3"),
        ({"sigma2": [1.0, 2.0]}, "sigma2 must be a scalar or hold one value per block (3"),
        ({"gamma": [0.1, 0.2, 0.3]}, "gamma must be a scalar or a (3, 3) matrix, got (3,)"),
    ],
)
def test_expected_estimates_names_the_argument_of_the_wrong_length(kwargs, named):
    # Was numpy's "operands could not be broadcast together ..." (mu, sigma2), or "gamma must
    # be symmetric" for a vector of K values, which names neither argument nor shape.
    args = {"mu": 0.1, "sigma2": 1.0, "omega": 0.1, "gamma": 0.0, **kwargs}
    with pytest.raises(ValueError, match=re.escape(named)):
        bayescv.expected_estimates([3, 3, 3], **args)


def test_expected_estimates_keeps_scalars_and_per_block_values():
    # θ for equal sizes n = 3, K = 3, N = 9 (Geras & Sutton 2013, eq. 7):
    # (N σ² + K M (M − 1) ω + K (K − 1) M² γ) / N² = (9 + 18·0.1 + 54·0.02) / 81.
    ds = bayescv.expected_estimates([3, 3, 3], [0.1, 0.2, 0.3], [1.0], 0.1, 0.02)
    assert ds.attrs["theta"] == pytest.approx((9 + 1.8 + 1.08) / 81, rel=1e-12)
