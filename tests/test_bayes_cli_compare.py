"""The ``bayescv bayes`` command and the paired comparison of two learners."""

import json

import numpy as np
import pytest

from bayescv import cv_intervals
from bayescv.bayes import fit, paired_comparison
from bayescv.bayes.simulate import simulate_losses
from bayescv.cli import main
from bayescv.losses import from_arrays, is_binary, to_frame

pytest.importorskip("pymc")

K = 5
# PyMC's sampler named: the default "auto" would compile nutpie (about 35 s) when installed.
FAST = {
    "draws": 300,
    "tune": 300,
    "chains": 2,
    "rhat_max": 1.05,
    "ess_min": 50,
    "sampler": "pymc",
}


@pytest.fixture(scope="module")
def csv_path(tmp_path_factory):
    table = simulate_losses(
        [30, 25, 40, 35, 20], mu=[0.3, 0.4, 0.2, 0.5, 0.35], nu=0.5, gamma_sd=0.05, rho=0.2,
        random_state=0,
    )  # fmt: skip
    path = tmp_path_factory.mktemp("bayes") / "losses.csv"
    frame = to_frame(table)[["loss", "block"]].rename(columns={"block": "school"})
    frame.to_csv(path, index=False)
    return path, float(table["loss"].mean())


def test_cli_prints_intervals_as_json_and_writes_plots(csv_path, tmp_path, capsys):
    path, mu_hat = csv_path
    argv = ["bayes", str(path), "--block-col", "school", "--scheme", "source"]
    argv += [
        "--draws",
        "300",
        "--tune",
        "300",
        "--chains",
        "2",
        "--random-state",
        "1",
        "--sampler",
        "pymc",
    ]
    assert main([*argv, "--format", "json", "--plot", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    # stdout is the JSON document alone (strict: no NaN); the note on the figures is on stderr
    result = json.loads(captured.out, parse_constant=lambda c: pytest.fail(f"bare {c}"))
    assert "wrote" in captured.err
    ci = result["intervals"]
    assert set(ci) == {"bayes_expected_cv", "bayes_ose", "bayes_new_source"}
    assert ci["bayes_new_source"]["target"] == "new_source"
    assert result["diagnostics"]["sampler"] == "pymc"
    assert ci["bayes_expected_cv"]["lower"] < mu_hat < ci["bayes_expected_cv"]["upper"]
    assert result["n_points"] == 150
    assert result["level"] == 0.95
    assert "expected_cv" in result["summary"]
    for name in ("ppc.png", "posterior.png"):
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_table_output(csv_path, capsys):
    path, _ = csv_path
    argv = ["bayes", str(path), "--block-col", "school", "--scheme", "source", "--draws", "300"]
    argv += ["--tune", "300", "--sampler", "pymc"]
    assert main([*argv, "--chains", "2", "--level", "0.9", "--kind", "hdi"]) == 0
    out = capsys.readouterr().out
    assert "90% intervals (posterior_hdi" in out
    assert "hdi_5%" in out  # the summary's HDI at the interval level, not ArviZ's 94 %
    assert "hdi_3%" not in out
    assert "bayes_ose" in out
    assert "bayes_new_source" in out
    assert "new_source: one new source" in out
    assert "r-hat max" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--block-col", "fold"], "no block column 'fold'"),
        (["--level", "1.5"], "--level"),
        (["--draws", "0"], "--draws"),
        (["--block-col", "school", "--loss-range", "1,0"], "--loss-range must have LOW < HIGH"),
        (["--block-col", "school", "--loss-range", "0,0.1"], "losses.csv: "),
    ],
)
def test_cli_bad_input_is_one_line_and_exit_2(csv_path, capsys, args, message):
    path, _ = csv_path
    assert main(["bayes", str(path), *args]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err
    assert "\n" not in err


def test_cli_loss_range_keeps_the_intervals_inside_it(csv_path, capsys):
    # Exponential losses of five sources with means 0.1 to 2: a plain CSV declares no range,
    # so the Gaussian model's new_source interval reaches below 0; --loss-range 0,inf (as
    # bayescv variance has it) keeps every bound at or above 0 and flags the one moved.
    rng = np.random.default_rng(0)
    means = np.repeat([0.1, 1.5, 0.2, 2.0, 0.3], 30)
    path = csv_path[0].with_name("positive.csv")
    table = from_arrays(rng.exponential(means), np.repeat(np.arange(5), 30), scheme="source")
    to_frame(table)[["loss", "block"]].to_csv(path, index=False)
    argv = ["bayes", str(path), "--scheme", "source", "--draws", "300"]
    argv += ["--tune", "300", "--chains", "2", "--sampler", "pymc", "--format", "json"]
    runs = {}
    # the normal population named: with the range [0, inf) declared, "auto" would take the
    # lognormal one, whose new_source is positive by construction (checked below)
    for extra in ([], ["--loss-range", "0,inf"]):
        assert main([*argv, *extra, "--population", "normal"]) == 0
        runs[bool(extra)] = json.loads(capsys.readouterr().out)["intervals"]
    assert runs[False]["bayes_new_source"]["lower"] < 0
    assert runs[True]["bayes_new_source"]["lower"] == 0.0
    assert "truncated_to_range" in runs[True]["bayes_new_source"]["flag"]
    assert runs[True]["bayes_ose"]["upper"] == pytest.approx(runs[False]["bayes_ose"]["upper"])
    # the default population for losses in [0, inf): lognormal, every bound above 0, unflagged
    assert main([*argv, "--loss-range", "0,inf"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["diagnostics"]["population"] == "lognormal"
    assert out["intervals"]["bayes_new_source"]["lower"] > 0
    assert "truncated_to_range" not in out["intervals"]["bayes_new_source"]["flag"]


def test_cli_missing_file(tmp_path, capsys):
    assert main(["bayes", str(tmp_path / "none.csv")]) == 2
    assert "none.csv: no such file" in capsys.readouterr().err


def test_paired_comparison_probabilities():
    # Learner B is worse by 0.3 on average on every source (A better); rope 0.05.
    rng = np.random.default_rng(0)
    sizes = [40, 30, 50, 35, 45]
    a = simulate_losses(sizes, mu=1.0, nu=0.04, gamma_sd=0.01, rho=0.1, random_state=1)
    shift = np.repeat([0.3, 0.25, 0.35, 0.3, 0.28], sizes)
    b = a.copy(data={"loss": a["loss"].values + shift + 0.05 * rng.standard_normal(shift.size)})
    _idata, summary = paired_comparison(a, b, rope=0.05, random_state=0, **FAST)
    assert list(summary["target"].values) == [
        "0", "1", "2", "3", "4", "expected_cv", "ose", "new_source",
    ]  # fmt: skip
    probs = summary[["p_better", "p_equivalent", "p_worse"]].to_array().sum("variable")
    np.testing.assert_allclose(probs, 1.0)
    assert float(summary["p_better"].sel(target="expected_cv")) > 0.99
    assert (summary["p_better"].sel(target=["0", "1", "2", "3", "4"]) > 0.95).all()
    # The one-new-source comparison carries the between-source spread τ² itself, the mean over
    # new sources (μ₀) about τ²/K: a wider interval than either the latter or the sources'.
    width = summary["upper"] - summary["lower"]
    assert float(width.sel(target="new_source")) > float(width.sel(target="expected_cv"))
    assert float(width.sel(target="new_source")) > float(width.sel(target="ose"))
    np.testing.assert_allclose(
        summary["mean"].sel(target="ose"), _idata.posterior["mu0"].values.mean()
    )
    # Equivalent learners: the mean difference falls in a generous ROPE.
    _, same = paired_comparison(
        a,
        a.copy(data={"loss": a["loss"].values + 0.01 * rng.standard_normal(shift.size)}),
        rope=0.05,
        random_state=0,
        **FAST,
    )
    assert float(same["p_equivalent"].sel(target="expected_cv")) > 0.95
    with pytest.raises(ValueError, match="rope"):
        paired_comparison(a, b, rope=-1.0)


def test_paired_comparison_of_0_1_losses_whose_differences_are_0_or_1():
    # Regression guard: A errs wherever B does and on more points, so every difference
    # e_A − e_B is 0 or 1: the difference table looked
    # like a 0-1 table, "auto" fitted the binomial model, and the summary failed (KeyError
    # 'mu_pooled'). Differences lie in [−1, 1]: the Gaussian model fits them.
    rng = np.random.default_rng(3)
    block = np.repeat(np.arange(5), 60)
    b = (rng.random(block.size) < 0.05).astype(float)
    a = np.maximum(b, (rng.random(block.size) < 0.10).astype(float))  # A errs more
    table_a = from_arrays(a, block, scheme="source", loss_name="zero_one")
    table_b = from_arrays(b, block, scheme="source", loss_name="zero_one")
    idata, summary = paired_comparison(table_a, table_b, rope=0.01, random_state=0, **FAST)
    assert idata.sample_stats.attrs["likelihood"] == "gaussian"
    assert float(summary["p_worse"].sel(target="expected_cv")) > 0.95
    assert float(summary["lower"].sel(target="expected_cv")) > 0  # A's loss is higher
    with pytest.raises(ValueError, match="same loss at every point"):
        paired_comparison(table_a, table_a, rope=0.01)


def test_a_table_declaring_a_range_beyond_0_1_is_not_a_0_1_table():
    # The same 0/1 values, once as 0-1 losses and once as differences of 0-1 losses
    # (declared range [-1, 1]): the score interval, which lives in [0, 1], only for the first.
    block = np.repeat(np.arange(4), 25)
    values = (np.arange(100) % 9 == 0).astype(float)
    zero_one = from_arrays(values, block, loss_name="zero_one")
    differences = from_arrays(values, block, loss_range=(-1, 1))
    assert is_binary(zero_one)
    assert not is_binary(differences)
    assert cv_intervals(zero_one, ["naive_points"]).attrs["kind"] == "score"
    assert cv_intervals(differences, ["naive_points"]).attrs["kind"] == "t"  # not 0-1: t
    with pytest.raises(ValueError, match=r"loss range \[-1.0, 1.0\]"):
        fit(differences, likelihood="binomial")


def test_cli_table_output_default_kind_prints_one_interval_per_target(csv_path, capsys):
    """With the default equal-tailed intervals the text output printed ArviZ's HDI columns
    beside them: two slightly different 95 % intervals for the same target. The HDI columns
    now appear only with --kind hdi (test_cli_table_output)."""
    path, _ = csv_path
    argv = ["bayes", str(path), "--block-col", "school", "--scheme", "source", "--draws", "300"]
    assert main([*argv, "--tune", "300", "--chains", "2"]) == 0
    out = capsys.readouterr().out
    assert "95% intervals (posterior_eti" in out
    assert "hdi_" not in out
    assert "r_hat" in out  # the diagnostics columns stay
