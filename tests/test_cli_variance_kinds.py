"""``bayescv variance --kind log`` and ``--loss-range``.

Reference values: the log-scale interval μ̂ · exp(± z sqrt(θ̂) / μ̂) of
:func:`bayescv.intervals.log_bounds` (docs/estimators.md, "When normal intervals fail"),
computed here by hand for ``naive_points`` (θ̂ = sample variance / N, Bates, Hastie &
Tibshirani 2024, eq. 5), and the library's own ``cv_intervals`` for the other methods.
"""

import json

import numpy as np
import pandas as pd
import pytest

from bayescv.classical import cv_intervals
from bayescv.cli import main
from bayescv.losses import from_arrays, to_csv

Z = 1.959963984540054  # standard normal 0.975 quantile


def plain_csv(tmp_path, sizes=(10, 10, 10, 10), seed=0):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "block": np.repeat(np.arange(len(sizes)), sizes),
            "loss": rng.gamma(2.0, 1.0, sum(sizes)),
        }
    )
    path = tmp_path / f"losses{seed}.csv"
    frame.to_csv(path, index=False)
    return path, frame


def one_line_error(capsys, argv):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("bayescv variance: error:")
    return lines[0]


def test_kind_log_gives_the_log_scale_interval(tmp_path, capsys):
    path, frame = plain_csv(tmp_path)
    argv = ["variance", str(path), "--kind", "log", "--loss-range", "0,inf", "--format", "json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["interval_kind"] == "log"
    mu = frame["loss"].mean()
    se = frame["loss"].std(ddof=1) / np.sqrt(len(frame))
    lower, upper = out["intervals"]["naive_points"]
    assert lower == pytest.approx(mu * np.exp(-Z * se / mu), rel=1e-12)
    assert upper == pytest.approx(mu * np.exp(Z * se / mu), rel=1e-12)
    assert upper - mu > mu - lower  # reaches further up than down


def test_kind_log_reads_the_range_a_bayescv_table_declares(tmp_path, capsys):
    rng = np.random.default_rng(1)
    table = from_arrays(rng.gamma(2.0, 1.0, 30), np.repeat([0, 1, 2], [9, 10, 11]))
    table.attrs["loss_name"] = "squared"  # a built-in loss: range [0, inf)
    to_csv(table, tmp_path / "t.csv")
    argv = ["variance", str(tmp_path / "t.csv"), "--kind", "log", "--format", "json"]
    assert main([*argv, "--methods", "naive_points,theta_B_weighted"]) == 0
    out = json.loads(capsys.readouterr().out)
    expected = cv_intervals(table, ["naive_points", "theta_B_weighted"], kind="log")
    for method in ("naive_points", "theta_B_weighted"):
        bounds = expected.sel(method_name=method)
        assert out["intervals"][method] == pytest.approx(
            [bounds["lower"].item(), bounds["upper"].item()], rel=1e-12
        )


def test_kind_log_without_a_range_names_the_option_to_declare_it(tmp_path, capsys):
    path, _ = plain_csv(tmp_path)
    line = one_line_error(capsys, ["variance", str(path), "--kind", "log"])
    assert "--loss-range 0,inf" in line


def test_kind_log_is_refused_with_paired(tmp_path, capsys):
    # paired_comparison has no log scale: the differences A - B can be negative.
    path_a, _ = plain_csv(tmp_path, seed=1)
    path_b, _ = plain_csv(tmp_path, seed=2)
    line = one_line_error(
        capsys, ["variance", "--paired", str(path_a), str(path_b), "--kind", "log"]
    )
    assert "--kind log is not available with --paired" in line


def test_loss_range_bounds_normal_intervals(tmp_path, capsys):
    # Five errors in 40 points as losses 0 or 0.5 (so not read as 0-1 losses): the normal
    # interval of theta_1 (θ̂_1 = μ̂², sd = μ̂) reaches below 0, truncated with a flag.
    frame = pd.DataFrame({"block": np.repeat(np.arange(4), 10), "loss": 0.0})
    frame.loc[[0, 11, 22, 33, 34], "loss"] = 0.5
    path = tmp_path / "rare.csv"
    frame.to_csv(path, index=False)
    argv = ["variance", str(path), "--format", "json", "--methods", "theta_1", "--kind", "normal"]
    assert main(argv) == 0
    free = json.loads(capsys.readouterr().out)
    assert free["intervals"]["theta_1"][0] == pytest.approx(0.0625 * (1 - Z))
    assert main([*argv, "--loss-range", "0,0.5"]) == 0
    bounded = json.loads(capsys.readouterr().out)
    assert bounded["intervals"]["theta_1"] == [0.0, pytest.approx(0.0625 * (1 + Z))]
    assert bounded["flags"]["theta_1"] == "truncated_to_range"


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("0,x", "--loss-range must be LOW,HIGH"),
        ("0,1,2", "--loss-range must be LOW,HIGH"),
        ("1,0", "LOW < HIGH"),
        ("0,1", "outside the declared loss_range"),  # gamma losses above 1
    ],
)
def test_bad_loss_range_is_one_line_and_exit_2(tmp_path, capsys, text, needle):
    path, _ = plain_csv(tmp_path)
    assert needle in one_line_error(capsys, ["variance", str(path), f"--loss-range={text}"])
