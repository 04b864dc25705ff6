"""Defects found using the closed-form intervals and loss tables as a new user would.

Each test reproduces one defect with default arguments where the docs show them; every
reference value says where it comes from.
"""

import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import bayescv
from bayescv.cli import main
from bayescv.intervals import log_bounds
from bayescv.losses import from_arrays, from_frame

Z975 = stats.norm.ppf(0.975)


def unequal_folds(n=569, k=10, seed=0):
    """A random K-fold table whose N is not divisible by K: folds of 56 and 57 points."""
    rng = np.random.default_rng(seed)
    return from_arrays(rng.exponential(size=n), np.arange(n) % k)


# ------------------------------------------------ unequal block sizes with the defaults


def test_default_intervals_on_unequal_folds_say_which_gave_none_and_the_way_out():
    ci = bayescv.cv_intervals(unequal_folds())
    flagged = [
        str(m)
        for m, f in zip(ci["method_name"].values, ci["flag"].values, strict=True)
        if "unequal_block_sizes" in f
    ]
    assert flagged == ["theta_1", "theta_2", "theta_3", "theta_4", "theta_5"]
    note = ci.attrs["note"]
    assert note.startswith("theta_1, theta_2, theta_3, theta_4, theta_5 need equal block sizes")
    assert "56 to 57 points" in note  # 569 = 9·57 + 56: nine folds of 57, one of 56
    assert "theta_A_weighted" in note
    assert "theta_B_weighted" in note
    # the way out the note names gives intervals
    weighted = bayescv.cv_intervals(unequal_folds(), ["theta_A_weighted", "theta_B_weighted"])
    assert np.isfinite(weighted["lower"]).all()
    assert "note" not in weighted.attrs
    # equal sizes: nothing to say
    equal = bayescv.cv_intervals(unequal_folds(n=570))
    assert "note" not in equal.attrs


def test_variance_estimates_note_names_the_block_sizes():
    ds = bayescv.variance_estimates(unequal_folds())
    assert ds["note"].sel(estimator="theta_3").item() == (
        "theta_3 needs equal block sizes; the blocks hold 56 to 57 points"
    )


def write_csv(path, table):
    frame = pd.DataFrame({"block": table["block"].values, "loss": table["loss"].values})
    frame.to_csv(path, index=False)
    return str(path)


def test_cli_names_the_unequal_sizes_once_with_the_option_to_use(tmp_path, capsys):
    path = write_csv(tmp_path / "u.csv", unequal_folds())
    assert main(["variance", path]) == 0
    text = capsys.readouterr().out
    (line,) = [line for line in text.splitlines() if "need equal block sizes" in line]
    assert "56 to 57 points" in line
    assert "--methods theta_A_weighted,theta_B_weighted" in line
    assert main(["variance", path, "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert "--methods theta_A_weighted,theta_B_weighted" in out["warnings"][0]


def test_cli_paired_says_which_rows_unequal_sizes_left_empty(tmp_path, capsys):
    a = write_csv(tmp_path / "a.csv", unequal_folds(seed=1))
    b = write_csv(tmp_path / "b.csv", unequal_folds(seed=2))
    assert main(["variance", "--paired", a, b]) == 0
    text = capsys.readouterr().out
    (line,) = [line for line in text.splitlines() if "need equal block sizes" in line]
    assert line.strip().startswith("- theta_1, theta_2, theta_3, theta_4, theta_5 need")
    assert main(["variance", "--paired", a, b, "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert "--methods theta_A_weighted,theta_B_weighted" in out["warnings"][0]


# ------------------------------------------------ heavy tails in the CLI


def test_cli_heavy_tail_is_one_line_with_the_cli_options(tmp_path, capsys):
    # Pareto(1.2) losses: tail index 1/1.2, k = 0.83 > 0.5 (as in tests/test_tails.py).
    rng = np.random.default_rng(0)
    path = write_csv(tmp_path / "h.csv", from_arrays(rng.pareto(1.2, 1000), np.arange(1000) % 10))
    # warnings are errors here: a raw HeavyTailWarning from the CLI would fail the test
    assert main(["variance", path]) == 0
    text = capsys.readouterr().out
    heavy = [line for line in text.splitlines() if "heavy" in line and line.startswith("  -")]
    assert len(heavy) == 1, heavy  # said once, not once per interval row
    assert "--methods theta_B_weighted --kind log" in heavy[0]
    assert "cv_intervals(" not in text
    assert main(["variance", path, "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert sum("heavy" in w for w in out["warnings"]) == 1
    assert all("heavy_tail" in f for f in out["flags"].values())  # every row still flagged


# ------------------------------------------------ kind="log"


def test_log_interval_of_an_undeclared_zero_one_table():
    # docs/estimators.md: "A column of 0s and 1s is read as a 0-1 loss in [0, 1] either way."
    e = np.zeros(40)
    e[[3, 17, 22, 31]] = 1
    ci = bayescv.cv_intervals(from_arrays(e, np.arange(40) % 4), ["naive_points"], kind="log")
    p, se = e.mean(), e.std(ddof=1) / np.sqrt(40)  # Bates et al. 2024, eq. 5
    # log_bounds: μ̂ · exp(± z · sqrt(θ̂)/μ̂)
    assert float(ci["lower"][0]) == pytest.approx(p * np.exp(-Z975 * se / p), rel=1e-12)
    assert float(ci["upper"][0]) == pytest.approx(p * np.exp(Z975 * se / p), rel=1e-12)


def test_cli_log_interval_of_a_zero_one_csv(tmp_path, capsys):
    e = np.zeros(40)
    e[[3, 17, 22, 31]] = 1
    path = write_csv(tmp_path / "z.csv", from_arrays(e, np.arange(40) % 4))
    assert main(["variance", path, "--kind", "log", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["interval_kind"] == "log"


def test_log_interval_stays_inside_the_declared_range():
    # Brier-like losses in [0, 1] with a high mean: μ̂ · exp(z sqrt(θ̂)/μ̂) exceeds 1.
    e = np.array([1, 1, 0.2, 1, 0.9, 0, 1, 1, 0.1, 1, 1, 0.4])
    table = from_arrays(e, np.arange(12) % 3, loss_range=(0, 1))
    ci = bayescv.cv_intervals(table, ["theta_1"], kind="log")
    mu, theta = e.mean(), e.mean() ** 2  # θ_1 = μ̂² (Geras & Sutton 2013, Table 2)
    assert mu * np.exp(Z975 * np.sqrt(theta) / mu) > 1  # the unclipped bound, e^z·μ̂ = 5.4
    assert float(ci["upper"][0]) == 1.0
    assert float(ci["lower"][0]) == pytest.approx(mu * np.exp(-Z975), rel=1e-12)
    assert ci["flag"].item() == "truncated_to_range"


def test_log_bounds_of_a_zero_mean_say_the_estimate_has_no_log_scale():
    # docstring: '"undefined_estimate" also for μ̂ ≤ 0 (no log scale)', whatever θ̂ is
    _, lower, upper, flag = log_bounds([0.0, 0.0, -1.0], [0.0, 0.01, 0.1])
    assert flag.tolist() == ["undefined_estimate"] * 3
    assert np.isnan(lower).all()
    assert np.isnan(upper).all()


# ------------------------------------------------ loss tables from DataFrames


def test_from_frame_keeps_the_rows_of_a_filtered_frame():
    data = pd.DataFrame({"loss": np.linspace(0, 1, 30), "fold": np.arange(30) % 3})
    frame = data[data.index >= 18]  # rows 18..29 of the user's data
    table = from_frame(frame, loss="loss", block="fold")
    assert sorted(table["index"].values.tolist()) == list(range(18, 30))
    rows = dict(zip(table["index"].values.tolist(), table["loss"].values.tolist(), strict=True))
    assert rows[25] == data.loc[25, "loss"]
    bad = frame.assign(loss=frame["loss"].where(frame.index != 23))
    with pytest.raises(ValueError, match=r"at index 23 \(the table.s position"):
        from_frame(bad, loss="loss", block="fold")
    # a default index, and an explicit index column, are as before
    assert from_frame(data, loss="loss", block="fold")["index"].values.max() == 29


def test_from_frame_numbers_the_rows_of_concatenated_per_fold_frames():
    # pd.concat of per-fold frames repeats the labels 0, 1, 2: they are not row numbers
    folds = [pd.DataFrame({"loss": [0.1, 0.2, 0.3], "fold": k}) for k in range(2)]
    table = from_frame(pd.concat(folds), loss="loss", block="fold")
    assert sorted(table["index"].values.tolist()) == list(range(6))


def test_from_frame_keeps_the_rows_of_each_run_of_a_stacked_frame():
    # two repeated-CV runs of the same six rows (labels 100..105), run 1 listed first
    index = np.r_[np.arange(100, 106), np.arange(100, 106)]
    frame = pd.DataFrame(
        {"loss": np.arange(12.0), "fold": np.tile([0, 1], 6), "run": np.repeat([1, 0], 6)},
        index=index,
    )
    table = from_frame(frame, loss="loss", block="fold", replicate="run", replicate_kind="repeat")
    # each run sorted by fold, then as given: rows 100, 102, 104 (fold 0), 101, 103, 105
    expected = [100, 102, 104, 101, 103, 105]
    np.testing.assert_array_equal(table["index"].values, [expected, expected])
    np.testing.assert_array_equal(table["loss"].values[0], [6, 8, 10, 7, 9, 11])  # run 0


@pytest.mark.parametrize("paired", [False, True])
def test_cli_stops_quietly_when_its_reader_goes_away(tmp_path, paired):
    # `bayescv variance --paired a.csv b.csv | head`: the closed pipe made the CLI print
    # "error: [Errno 32] Broken pipe" (the table was printed inside its OSError handler).
    rng = np.random.default_rng(0)
    paths = []
    for name in "ab":
        paths.append(str(tmp_path / f"{name}.csv"))
        bayescv.to_csv(from_arrays(rng.exponential(size=60), np.arange(60) % 3), paths[-1])
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first write: EPIPE, deterministically
    args = ["variance", "--paired", *paths] if paired else ["variance", paths[0]]
    done = subprocess.run(
        [sys.executable, "-m", "bayescv", *args], stdout=write, stderr=subprocess.PIPE, text=True
    )
    os.close(write)
    assert done.returncode == 1  # main()'s BrokenPipeError exit, not the 2 of an error
    assert done.stderr == ""


def test_small_tables_do_not_import_arviz_for_a_tail_they_cannot_estimate():
    # k̂ needs 200 losses (bayescv.tails.MIN_TAIL_POINTS); below that ArviZ's import (seconds
    # on a first import) bought nothing.
    code = (
        "import sys, numpy as np, bayescv\n"
        "t = bayescv.from_arrays(np.arange(1.0, 61.0), np.arange(60) % 3)\n"
        "bayescv.cv_intervals(t)\n"
        "print('arviz' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_a_csv_of_bool_losses_as_pandas_writes_them_is_read_as_0_and_1(tmp_path):
    wrong = np.arange(40) % 7 == 0  # six errors in 40 points
    frame = pd.DataFrame({"loss": wrong, "block": np.arange(40) % 4})
    frame.to_csv(tmp_path / "bool.csv", index=False)  # writes True / False
    table = bayescv.read_csv(tmp_path / "bool.csv")
    # identity: the same losses given as a bool array, which from_arrays reads as 1 and 0
    expected = from_arrays(wrong, frame["block"].to_numpy())
    np.testing.assert_array_equal(np.sort(table["loss"].values), np.sort(expected["loss"].values))
    assert float(table["loss"].mean()) == 6 / 40
    frame.assign(loss=frame["loss"].astype(object).where(frame.index != 3, 0.5)).to_csv(
        tmp_path / "mixed.csv", index=False
    )
    with pytest.raises(ValueError, match=r"non-numeric loss 'True'"):
        bayescv.read_csv(tmp_path / "mixed.csv")
