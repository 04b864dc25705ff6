import json
import re

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from bayescv.cli import main


@pytest.fixture
def csv(tmp_path):
    rng = np.random.default_rng(0)
    n = 48
    X = rng.standard_normal((n, 3))
    frame = pd.DataFrame(X, columns=["x1", "x2", "x3"])
    frame["label"] = (X[:, 0] + rng.standard_normal(n) > 0).astype(int)
    frame["score"] = X @ [1.0, -1.0, 0.5] + rng.standard_normal(n)
    frame["school"] = np.repeat(np.arange(100, 112), 4)
    path = tmp_path / "data.csv"
    frame.to_csv(path, index=False)
    return path, frame


def run_json(capsys, argv):
    assert main([*argv, "--format", "json", "--no-progress"]) == 0
    return json.loads(capsys.readouterr().out)


def fail(capsys, argv):
    assert main([*argv, "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert err.startswith("bayescv nested: error: ")
    return err


def test_json_classification_with_source(csv, capsys):
    path, _ = csv
    out = run_json(
        capsys,
        ["nested", str(path), "--target", "label", "--source-col", "school", "--n-splits", "3",
         "--n-repeats", "2", "--random-state", "4"],
    )  # fmt: skip
    assert out["learner"] == "logistic"  # auto: a two-valued target is a classification
    assert out["task"] == "classification"
    assert out["loss"] == "zero_one"
    assert out["target"] == "ose"  # grouped: new sources
    assert out["n_features"] == 4  # x1, x2, x3 and score: all but target and source
    assert out["n_sources"] == 12
    # 2 repetitions * (3 + 3) fits + ceil(2/5) = 1 plain 3-fold CV
    assert out["n_fits"] == 15
    assert out["lower"] <= out["estimate"] <= out["upper"]
    assert out["bias_constant"] == pytest.approx(1 + (1 / 3) ** 1.5)
    assert len(out["inflation_running"]) == 2
    assert out["seed"] == 4


def test_table_regression_and_netcdf(csv, capsys, tmp_path):
    path, _ = csv
    nc = tmp_path / "out" / "nested.nc"
    argv = ["nested", str(path), "--target", "score", "--learner", "linear", "--n-splits", "4",
            "--n-repeats", "3", "--bias-correction", "paper", "--out", str(nc), "--no-progress"]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "95% interval for err_xy" in out
    assert "LinearRegression()" in out
    assert "c = 1.5" in out  # paper constant 1 + (4 - 2) / 4
    assert "fits       34 in" in out  # 3 * (4 + 6) + 1 * 4
    with xr.open_dataset(nc, engine="h5netcdf") as result:
        assert result.attrs["bias_correction"] == "paper"
        assert f"{result['estimate'].item():.4g}" in out


def test_options_reach_nested_cv(csv, capsys):
    path, _ = csv
    out = run_json(
        capsys,
        ["nested", str(path), "--target", "score", "--learner", "ridge", "--n-splits", "4",
         "--n-repeats", "2", "--n-bias-repeats", "0", "--bias-correction", "none", "--no-clip",
         "--level", "0.8", "--loss", "absolute", "--n-jobs", "1"],
    )  # fmt: skip
    assert out["level"] == 0.8
    assert out["loss"] == "absolute"
    assert out["bias"] == 0.0
    assert out["estimate"] == out["err_ncv"]
    assert out["inflation_bounds"] is None
    assert out["n_bias_repeats"] == 0
    assert out["n_fits"] == 2 * (4 + 6)
    assert out["fit_engine"] == "batched"  # ridge on numeric columns: batched by default


@pytest.mark.parametrize(("engine", "expected"), [("batched", "batched"), ("per-fit", "per-fit")])
def test_engine_option_reaches_nested_cv(csv, capsys, engine, expected):
    path, _ = csv
    base = ["nested", str(path), "--target", "label", "--n-splits", "4", "--n-repeats", "2"]
    out = run_json(capsys, [*base, "--engine", engine])
    assert out["fit_engine"] == expected
    auto = run_json(capsys, base)
    assert auto["fit_engine"] == "per-fit"  # logistic regression is batched only on request


@pytest.mark.parametrize(
    ("extra", "match"),
    [
        (["--target", "nope"], "target column 'nope' is not in"),
        (["--target", "label", "--source-col", "site"], "source column 'site' is not in"),
        (["--target", "score", "--learner", "logistic"], "non-integer values"),
        (
            ["--target", "label", "--learner", "linear", "--task", "classification"],
            "for regression only",
        ),
        (["--target", "label", "--n-splits", "30"], "at least 2 \\* --n-splits = 60 points"),
        (["--target", "label", "--source-col", "school", "--n-splits", "7"], "two sources"),
    ],
)
def test_bad_input_exits_2_with_one_line(csv, capsys, extra, match):
    path, _ = csv
    err = fail(capsys, ["nested", str(path), *extra, "--n-repeats", "1"])
    assert re.search(match, err), err


@pytest.mark.parametrize("loss", ["zero_one", "log_loss", "brier"])
def test_class_label_loss_on_a_regression_target_is_refused(csv, capsys, loss):
    # 'score' is continuous (type_of_target: 'continuous'): a regressor's predictions never
    # equal it, so every zero-one loss was 1 and "estimate 1 [1, 1]" came out with status 0.
    path, _ = csv
    err = fail(capsys, ["nested", str(path), "--target", "score", "--loss", loss])
    assert f"--loss {loss} compares class labels" in err
    assert "'score' is a regression target" in err


def test_class_label_loss_on_an_integer_regression_target_is_refused(csv, capsys, tmp_path):
    # Integer-valued but many-valued, like the diabetes progression score (214 values in 442
    # rows): the task is regression (more than two numbers), so a zero-one loss is refused.
    _, frame = csv
    path = tmp_path / "counts.csv"
    frame.assign(score=np.round(frame["score"] * 3)).to_csv(path, index=False)
    err = fail(capsys, ["nested", str(path), "--target", "score", "--loss", "zero_one"])
    assert "--loss zero_one compares class labels" in err


def test_classifier_on_a_many_valued_integer_target_is_refused(csv, capsys, tmp_path):
    # --learner logistic on the diabetes score fitted a 214-class logistic regression for
    # minutes. Here 'score' rounded to thirds: integer-valued (type_of_target: 'multiclass'),
    # with more distinct values than rows per fold, 48 / 4 = 12 (so fewer rows per class
    # than folds), which no set of class labels in a 4-fold CV looks like.
    _, frame = csv
    path = tmp_path / "counts.csv"
    counts = np.round(frame["score"] * 3)
    frame.assign(score=counts).to_csv(path, index=False)
    n_values = counts.nunique()
    assert n_values > 48 / 4  # the case under test
    argv = ["nested", str(path), "--target", "score", "--learner", "logistic", "--n-splits", "4"]
    err = fail(capsys, argv)
    assert f"target 'score' has {n_values} distinct values in 48 rows" in err
    assert "--task classification" in err  # the way to insist
    # Binary labels pass the same rule: 2 classes of 48 rows is 24 rows per class, >= 4.
    out = run_json(capsys, ["nested", str(path), "--target", "label", "--learner", "logistic",
                            "--n-splits", "4", "--n-repeats", "1"])  # fmt: skip
    assert out["task"] == "classification"


def test_non_numeric_features_and_missing_values(csv, capsys, tmp_path):
    _, frame = csv
    words = tmp_path / "words.csv"
    frame.assign(note="text", city="x").to_csv(words, index=False)
    err = fail(capsys, ["nested", str(words), "--target", "label"])
    assert "non-numeric feature column(s): note, city" in err
    holes = frame.copy()
    holes.loc[3, "x2"] = np.nan
    holes_path = tmp_path / "holes.csv"
    holes.to_csv(holes_path, index=False)
    assert "missing values in column(s): x2" in fail(
        capsys, ["nested", str(holes_path), "--target", "label"]
    )
    assert "cannot read" in fail(capsys, ["nested", str(tmp_path / "none.csv"), "--target", "y"])


def test_string_target_is_a_classification(csv, capsys):
    path, frame = csv
    frame = frame.assign(label=np.where(frame["label"] == 1, "yes", "no"))
    frame.to_csv(path, index=False)
    out = run_json(
        capsys,
        ["nested", str(path), "--target", "label", "--source-col", "school", "--n-splits", "3",
         "--n-repeats", "1", "--learner", "ridge"],
    )  # fmt: skip
    assert out["task"] == "classification"
    assert "RidgeClassifier" in out["estimator"]
    with pytest.raises(SystemExit) as exc:
        main(["nested", str(path), "--target", "label", "--learner", "svm"])
    assert exc.value.code == 2  # argparse: invalid choice


def test_help_lists_the_options(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["nested", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for option in ("--target", "--source-col", "--learner", "--n-splits", "--n-repeats", "--level",
                   "--loss", "--random-state", "--n-jobs", "--bias-correction", "--format",
                   "--no-progress"):  # fmt: skip
        assert option in out


def test_no_progress_bar_where_stderr_is_not_a_terminal(csv, capsys, monkeypatch):
    """A progress bar written into a pipe or a log file (CI, ``2>&1 | tee``) leaves every
    redraw as text: ``bayescv demo`` printed about 100 bar states into a log. The CLI follows
    tqdm's rule and hides the bar unless stderr is a terminal (capsys's stderr is not)."""
    path, _ = csv
    argv = ["nested", str(path), "--target", "score", "--n-splits", "3", "--n-repeats", "2"]
    assert main(argv) == 0
    assert "%|" not in capsys.readouterr().err
    monkeypatch.setattr("sys.stderr.isatty", lambda: True, raising=False)
    assert main(argv) == 0
    assert "%|" in capsys.readouterr().err  # on a terminal the bar is drawn
