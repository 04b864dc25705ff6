"""A new user's first steps: ``bayescv variance``, ``bayescv demo`` and the CV runners.

Each test failed on the code before its fix:

* a leave-one-source-out table of 0-1 losses with few blocks was told that
  ``nadeau_bengio`` "held up", a method that assumes random K-fold CV and that
  ``cv_intervals`` leaves out of (or flags ``random_kfold_only`` on) a source table;
* ``bayescv variance --methods bootstrap`` answered with Python advice (``pass
  bootstrap=``) that no shell user can follow, and listed ``bootstrap`` among the methods
  it knows; ``paired_comparison(a, b, ["bootstrap"])`` advised an argument it does not take;
* ``bayescv demo`` (about a minute) printed nothing on stderr when its progress bars were
  hidden (stderr not a terminal), so a redirected run looked hung;
* ``cross_val_losses`` with ``TimeSeriesSplit`` refused the splitter without naming why
  or which splitters work.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import TimeSeriesSplit

from bayescv.classical import cv_intervals
from bayescv.classical.paired import paired_comparison
from bayescv.cli import main
from bayescv.cv import cross_val_losses
from bayescv.losses import from_arrays, to_csv


def _zero_one(k: int, scheme: str, n: int = 200, seed: int = 0):
    rng = np.random.default_rng(seed)
    blocks = np.repeat(np.arange(k), n // k)
    losses = (rng.random(n) < 0.2).astype(float)
    if scheme == "source":
        return from_arrays(losses, blocks, source=blocks, scheme="source")
    return from_arrays(losses, blocks)


def test_few_sources_note_does_not_send_the_reader_to_nadeau_bengio(tmp_path, capsys):
    source = _zero_one(4, "source")
    result = cv_intervals(source)
    # nadeau_bengio is not a row of a source table's default result ...
    assert "nadeau_bengio" not in result["method_name"].values
    note = result.attrs["note"]
    assert note.startswith("with K = 4 blocks, the score intervals of naive_folds")
    # ... so the line says where it held up, and that it does not apply here
    assert note.endswith("in random K-fold CV, but it applies to random folds, not to sources")
    # a random K-fold table keeps the line as it was
    random_note = cv_intervals(_zero_one(4, "random")).attrs["note"]
    assert random_note.endswith("nadeau_bengio, a t procedure, held up (96 and 97 %)")
    # bayescv variance says the same, in text and JSON
    path = tmp_path / "sources.csv"
    to_csv(source, path)
    assert main(["variance", str(path)]) == 0
    assert "not to sources" in capsys.readouterr().out
    assert main(["variance", str(path), "--format", "json"]) == 0
    warnings = json.loads(capsys.readouterr().out)["warnings"]
    assert any(
        w.startswith("with K = 4 blocks") and w.endswith("not to sources") for w in warnings
    )


@pytest.fixture
def loss_csv(tmp_path):
    path = tmp_path / "losses.csv"
    to_csv(_zero_one(10, "random"), path)
    return path


def test_variance_refuses_bootstrap_with_advice_a_shell_user_can_follow(loss_csv, capsys):
    assert main(["variance", str(loss_csv), "--methods", "bootstrap"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("bayescv variance: error: --methods bootstrap needs")
    assert "pass bootstrap=" not in err
    assert "bootstrap_cv_losses" in err
    # with --paired there is no bootstrap interval at all, in Python either
    assert main(["variance", "--paired", str(loss_csv), str(loss_csv), "--methods", "bootstrap"])
    assert "not available with --paired" in capsys.readouterr().err
    # an unknown name lists the methods this command can run: bootstrap is not one of them
    assert main(["variance", str(loss_csv), "--methods", "theta_b"]) == 2
    err = capsys.readouterr().err
    assert "(did you mean 'theta_B'?)" in err
    assert "bootstrap" not in err


def test_paired_comparison_does_not_advise_an_argument_it_lacks():
    table = _zero_one(10, "random")
    with pytest.raises(ValueError, match="paired_comparison has no 'bootstrap' method") as info:
        paired_comparison(table, table, ["naive_points", "bootstrap"])
    assert "pass bootstrap=" not in str(info.value)


def test_demo_says_each_stage_on_stderr_when_bars_are_hidden(monkeypatch, capsys):
    # capsys's stderr is no terminal: no progress bars, so one line per stage instead. The
    # coverage study is stubbed (its own tests run it); the CV runs are the real ones.
    monkeypatch.setattr("bayescv.compare.demo_study", lambda **kwargs: "study stub")
    assert main(["demo", "--no-bayes"]) == 0
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert lines == [
        "bayescv demo: leave-one-school-out CV (79 fits) and 10-fold CV...",
        "bayescv demo: coverage study: 200 simulated data sets, 10-fold CV of each...",
    ]
    assert captured.out.rstrip().endswith("study stub")


def test_time_series_split_refusal_says_why_and_what_works():
    X, y = make_classification(n_samples=100, random_state=0)
    with pytest.raises(ValueError, match="never tested in any fold") as info:
        cross_val_losses(LogisticRegression(), X, y, cv=TimeSeriesSplit(4), loss="zero_one")
    message = str(info.value)
    assert "as K-fold, group and repeated K-fold splitters do" in message
    assert "TimeSeriesSplit never tests its first training window" in message


def test_plain_csv_of_a_source_table_reads_the_same(tmp_path, capsys):
    """The note depends on the scheme the CLI reads, also from a plain CSV with --scheme."""
    table = _zero_one(5, "source")
    path = tmp_path / "plain.csv"
    pd.DataFrame({"block": table["block"].values, "loss": table["loss"].values}).to_csv(
        path, index=False
    )
    assert main(["variance", str(path), "--scheme", "source", "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["scheme"] == "source"
    assert any(w.endswith("not to sources") for w in report["warnings"])


def test_nested_refuses_a_one_class_target_before_fitting(tmp_path, capsys):
    """Before: 'fitting 2850 models...', then scikit-learn's message naming np.int64(0)."""
    X, _ = make_classification(n_samples=60, random_state=0)
    frame = pd.DataFrame(X[:, :3], columns=["a", "b", "c"]).assign(y=0)
    path = tmp_path / "one_class.csv"
    frame.to_csv(path, index=False)
    assert main(["nested", str(path), "--target", "y"]) == 2
    err = capsys.readouterr().err
    assert err.splitlines() == [
        "bayescv nested: error: target 'y' has one value (0) in all 60 rows: a classifier "
        "needs at least two classes"
    ]


def test_nested_without_errors_does_not_blame_negative_mse(tmp_path, capsys):
    """Separable classes: every 0-1 loss is 0, so MSE and naive SE are 0 and the running
    inflation is 0/0; the report used to say the MSE estimates were negative."""
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 30)
    a = np.where(y == 1, 5.0, -5.0) + 0.1 * rng.normal(size=y.size)
    path = tmp_path / "separable.csv"
    pd.DataFrame({"a": a, "b": rng.normal(size=y.size), "y": y}).to_csv(path, index=False)
    argv = ["nested", str(path), "--target", "y", "--n-repeats", "2", "--n-splits", "3"]
    assert main(argv) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if "inflation" in x)
    assert "naive SE 0 " in line  # the case: no loss differs from another
    assert line.endswith("no running value (every loss is the same: the naive SE is 0)")
