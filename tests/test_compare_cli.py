import pytest
import xarray as xr

from bayescv.cli import main
from bayescv.compare import Method, load_study, register_method, unregister_method
from bayescv.intervals import interval_dataset


def test_study_runs_writes_and_summarises(tmp_path, capsys):
    out = tmp_path / "study.nc"
    code = main([
        "study", "--scenario", "multi-source-linear", "--n-replicates", "3",
        "--methods", "naive_points,theta_A,theta_B", "--random-state", "1", "--out", str(out),
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
    assert study["method_name"].values.tolist() == ["naive_points", "theta_A", "theta_B"]
    assert study.attrs["seed"] == 1
    assert study.attrs["design"] == "sources_redrawn"
    assert main(["study", "--summary", str(out)]) == 0
    summary = capsys.readouterr().out
    assert summary.splitlines()[0] == text.splitlines()[0]


def test_study_method_options_and_learner(capsys):
    code = main([
        "study", "--scenario", "bates-logistic", "--n-replicates", "2", "--learner", "decision-tree",
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
        (["--learner", "linear"], "learner 'linear' is for regression only"),
        (["--learner", "ols"], "unknown learner 'ols'"),
        (["--design", "sources_redrawn"], "is i.i.d."),
        (["--option", "nested_cv=3"], "METHOD.KEY=VALUE"),
        (["--summary", "missing.nc"], "missing.nc: no such file"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(argv, message, capsys):
    assert main(["study", *argv, "--n-replicates", "1", "--no-progress"]) == 2
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
    # the learners are the one catalogue of bayescv.cv
    assert "learners: logistic, unpenalized-logistic, ridge, linear, decision-tree" in text


def test_summary_of_a_file_that_is_not_a_study(tmp_path, capsys):
    path = tmp_path / "other.nc"
    xr.Dataset({"x": ("a", [1.0])}).to_netcdf(path, engine="h5netcdf")
    assert main(["study", "--summary", str(path)]) == 2
    assert "not a study" in capsys.readouterr().err


def test_every_method_run_failing_exits_1_with_one_line(tmp_path, capsys):
    # a valid option name with a value every run refuses: the study runs, records each
    # failure in 'flag', and the command says so instead of printing a table of NaNs
    out = tmp_path / "s.nc"
    code = main(["study", "--methods", "naive_points,theta_A", "--n-replicates", "2",
                 "--option", "closed_form.kind=nope", "--out", str(out),
                 "--no-progress"])  # fmt: skip
    assert code == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1
    assert captured.err.startswith("bayescv study: every method run failed (4 of 4)")
    assert f"study written to {out}" in captured.err
    assert "kind must be one of ('auto', 'score', 'normal', 't', 'log')" in captured.err
    assert load_study(out)["flag"].str.startswith("error").all()


def _failing(context, names):
    # fails in some replicates only (summaries of a method that never ran are another matter)
    if context.replicate_seed % 2:
        raise RuntimeError("boom")
    return interval_dataset(names, estimate=[0.5], lower=[0.4], upper=[0.6], se=[0.05],
                            level=context.level, target="err")  # fmt: skip


def test_some_method_runs_failing_still_exit_0(capsys):
    register_method(Method("failing", _failing, "err"))
    try:
        code = main(["study", "--methods", "naive_points,failing", "--n-replicates", "4",
                     "--random-state", "0", "--no-progress"])  # fmt: skip
    finally:
        unregister_method("failing")
    assert code == 0
    assert "2 method run(s) failed" in capsys.readouterr().out
