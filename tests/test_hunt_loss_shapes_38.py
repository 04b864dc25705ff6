"""A new user's pass over loss shapes in the closed-form path: 0-1, bounded and heavy-tailed."""

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from bayescv import cv_intervals, from_arrays, paired_comparison
from bayescv.cli import main
from bayescv.tails import pooled_tail_shape, tail_shape

Z2 = stats.norm.ppf(0.975) ** 2


def test_losses_named_squared_must_not_be_negative():
    # Before: signed residuals named "squared" were accepted, and every interval was cut
    # at 0 (the built-in range) around a negative estimate, [0, 0] with mu_hat = -0.5.
    residuals = [-0.4, -0.6, -0.5, -0.5]
    with pytest.raises(ValueError, match=r"range \[0, inf\] of the built-in loss 'squared'"):
        from_arrays(residuals, [0, 0, 1, 1], loss_name="squared")
    # the squares are fine, and a declared range still overrides the built-in one
    from_arrays(np.square(residuals), [0, 0, 1, 1], loss_name="squared")
    from_arrays(residuals, [0, 0, 1, 1], loss_name="squared", loss_range=(-1, 1))


def test_loss_range_that_is_no_pair_is_named():
    # Before: loss_range="0,1" (as --loss-range is written) raised "could not convert
    # string to float: ','", which does not say which argument was wrong.
    with pytest.raises(ValueError, match=r"loss_range must be \[low, high\], got '0,1'"):
        from_arrays([0.1, 0.2, 0.3, 0.4], [0, 0, 1, 1], loss_range="0,1")


def test_zero_one_column_without_declared_range_gets_no_khat():
    # Before: tail_shape of a plain column of 0s and 1s fitted a Pareto shape to it
    # (k-hat about -3, note ""), though a 0-1 loss, bounded in [0, 1], has no tail.
    rng = np.random.default_rng(0)
    losses = (rng.random(1000) < 0.02).astype(float)
    table = from_arrays(losses, np.repeat(np.arange(10), 100))
    for result in (tail_shape(table), pooled_tail_shape(table)):
        assert np.isnan(result["khat_pooled"])
        assert result.attrs["note"] == "losses bounded in [0, 1]: no heavy tail"
    assert np.isnan(cv_intervals(table).attrs["khat"])


def test_paired_replicate_without_disagreements_gets_wilson_bound():
    # Before: in a stack of independent data sets, one where the two learners never
    # disagree got the degenerate interval [0, 0], flagged only "zero_variance".
    rng = np.random.default_rng(1)
    n = 300
    blocks = np.tile(np.repeat(np.arange(5), 60), (2, 1))
    a = (rng.random((2, n)) < 0.05).astype(float)
    b = a.copy()
    b[1] = rng.random(n) < 0.1
    out = paired_comparison(
        from_arrays(a, blocks, replicate_kind="independent"),
        from_arrays(b, blocks, replicate_kind="independent"),
        ["naive_points", "theta_B"],
    )
    agree = out.sel(replicate=0)
    # Wilson (1927) for 0 disagreements in N points: upper bound z²/(N + z²).
    np.testing.assert_allclose(agree["upper"], Z2 / (n + Z2), rtol=1e-12)
    np.testing.assert_allclose(agree["lower"], -Z2 / (n + Z2), rtol=1e-12)
    assert set(agree["flag"].values.tolist()) == {"no_disagreements"}
    assert "no_disagreements" not in out.sel(replicate=1)["flag"].values.tolist()


def test_score_interval_stays_inside_a_narrower_declared_range():
    # Before: kind="score" on a loss declared in [0.5, 1] gave theta_1 the bounds
    # [0.055, 0.96], below the range's low end, without a flag.
    rng = np.random.default_rng(0)
    losses = rng.choice([0.5, 1.0], 300, p=[0.9, 0.1])
    table = from_arrays(losses, np.repeat(np.arange(5), 60), loss_range=(0.5, 1))
    ci = cv_intervals(table, ["naive_points", "theta_1"], kind="score")
    assert (ci["lower"] >= 0.5).all()
    assert (ci["upper"] <= 1).all()
    # θ_1 = μ̂² is far wider than the others: its score interval reaches past 0.5
    assert ci["flag"].sel(method_name="theta_1").item() == "truncated_to_range"


def test_cli_json_gives_each_interval_its_estimate(tmp_path, capsys):
    # Before: the JSON gave [lower, upper] but no estimate, and naive_folds' interval is
    # centred on the unweighted mean of the block means, not on mu_hat, for unequal sizes.
    rng = np.random.default_rng(3)
    sizes = [10, 20, 30, 40]
    frame = pd.DataFrame(
        {"block": np.repeat(np.arange(4), sizes), "loss": rng.gamma(2.0, 1.0, sum(sizes))}
    )
    path = tmp_path / "losses.csv"
    frame.to_csv(path, index=False)
    assert main(["variance", str(path), "--format", "json", "--kind", "normal"]) == 0

    def refuse(token):
        raise AssertionError(f"not strict JSON: {token}")

    out = json.loads(capsys.readouterr().out, parse_constant=refuse)
    # Bates, Hastie & Tibshirani (2024), eq. 9: centred on m, the mean of the block means
    m = frame.groupby("block")["loss"].mean().mean()
    assert out["estimates"]["naive_folds"] == pytest.approx(m, rel=1e-12)
    assert out["estimates"]["naive_points"] == pytest.approx(frame["loss"].mean(), rel=1e-12)
    lower, upper = out["intervals"]["naive_folds"]
    assert (lower + upper) / 2 == pytest.approx(m, rel=1e-12)  # symmetric normal interval
    assert set(out["estimates"]) == set(out["intervals"])
