import pytest
import xarray as xr

from bayescv.cli import main
from bayescv.compare import load_study


def test_study_runs_writes_and_summarises(tmp_path, capsys):
    out = tmp_path / "study.nc"
    code = main([
        "study", "--scenario", "multi-source-linear", "--replicates", "3",
        "--methods", "naive_points,theta_A,theta_B", "--seed", "1", "--out", str(out),
        "--no-progress", "--design", "sources_redrawn",
    ])  # fmt: skip
    assert code == 0
    captured = capsys.readouterr()
    text = captured.out
    assert "note:" not in captured.err  # closed-form methods only: no cost note
    assert "multi-source-linear: design sources_redrawn, CV source, 3 replicates" in text
    assert "coverage % of every target" in text
    assert f"wrote {out}" in text
    study = load_study(out)
    assert study["method"].values.tolist() == ["naive_points", "theta_A", "theta_B"]
    assert study.attrs["seed"] == 1
    assert study.attrs["design"] == "sources_redrawn"
    assert main(["study", "--summary", str(out)]) == 0
    summary = capsys.readouterr().out
    assert summary.splitlines()[0] == text.splitlines()[0]


def test_study_method_options_and_learner(capsys):
    code = main([
        "study", "--scenario", "bates-logistic", "--replicates", "2", "--learner", "tree",
        "--methods", "bootstrap", "--option", "bootstrap.n_bootstrap=2", "--no-progress",
    ])  # fmt: skip
    assert code == 0
    captured = capsys.readouterr()
    assert "bootstrap" in captured.out
    # a refit method is announced with its cost before the run (stderr, not the table)
    assert captured.err.startswith("note: bootstrap: bootstrap-replicated CV, B x K refits")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--scenario", "nope"], "unknown scenario 'nope'"),
        (["--methods", "naive_points,nope"], "unknown method 'nope'"),
        (["--learner", "ols"], "learner 'ols' does not do classification"),
        (["--design", "sources_redrawn"], "is i.i.d."),
        (["--option", "nested_cv=3"], "METHOD.KEY=VALUE"),
        (["--summary", "missing.nc"], "missing.nc: no such file"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(argv, message, capsys):
    assert main(["study", *argv, "--replicates", "1", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert message in err
    assert err.startswith("bayescv study: error:")


def test_list(capsys):
    assert main(["study", "--list"]) == 0
    text = capsys.readouterr().out
    assert "bates-logistic" in text
    assert "theta_B" in text
    assert "losses" in text


def test_summary_of_a_file_that_is_not_a_study(tmp_path, capsys):
    path = tmp_path / "other.nc"
    xr.Dataset({"x": ("a", [1.0])}).to_netcdf(path, engine="h5netcdf")
    assert main(["study", "--summary", str(path)]) == 2
    assert "not a study" in capsys.readouterr().err
