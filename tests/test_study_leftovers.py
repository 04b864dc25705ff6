"""Defects of a new-user pass: the study header's scenario name, store names, unused
categories of a categorical feature, and the cost note of ``bayescv study``.
"""

import pandas as pd
import pytest

import bayescv.compare
from bayescv.cli import main
from bayescv.compare import BatesLogistic, MultiSourceLinear, run_study, summarize, summary_table
from bayescv.compare._scenario_base import scenario_hash
from bayescv.compare.catalog import make_scenario
from bayescv.datasets import load_dataframe

TINY = BatesLogistic(n=40, p=3, n_splits=4)
NAIVE = ["naive_points"]


# ---------------------------------------------------------------- 1. the scenario's name
def test_cli_header_names_the_catalogue_scenario(capsys):
    # multi-source-student-t builds a MultiSourceLinear; the header said multi-source-linear
    code = main(["study", "--scenario", "multi-source-student-t", "--n-replicates", "2",
                 "--methods", "naive_points", "--no-progress"])  # fmt: skip
    assert code == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("multi-source-student-t: design sources_fixed, CV source, 2 ")


def test_study_attrs_name_the_catalogue_scenario():
    by_name = run_study("bates-logistic-22", methods=NAIVE, n_replicates=2, random_state=0)
    assert by_name.attrs["scenario"] == "bates-logistic-22"
    assert summary_table(summarize(by_name)).startswith("bates-logistic-22: design iid")
    # an object from make_scenario keeps its catalogue name too
    built = make_scenario("multi-source-student-t")
    study = run_study(built, methods=NAIVE, n_replicates=2, random_state=0)
    assert study.attrs["scenario"] == "multi-source-student-t"
    # the class and its parameters stay recorded (noise_df=3 tells the two apart)
    assert '"noise_df": 3.0' in study.attrs["scenario_params"]
    assert '"scenario_class": "MultiSourceLinear"' in study.attrs["settings"]


def test_a_scenario_built_directly_keeps_its_own_name():
    study = run_study(TINY, methods=NAIVE, n_replicates=2, random_state=0)
    assert study.attrs["scenario"] == "bates-logistic"
    assert summary_table(summarize(study)).startswith("bates-logistic: design iid")


def test_the_catalogue_name_leaves_the_scenario_hash_alone():
    # stores written before the name was recorded, or from an object built directly, resume
    built = MultiSourceLinear(points_per_source=list(range(20, 120, 10)), noise_df=3.0)
    assert scenario_hash(make_scenario("multi-source-student-t")) == scenario_hash(built)


# ---------------------------------------------------------------- 2. store names
@pytest.mark.parametrize("name", ["x.csv", "results", "study.nc.bak"])
def test_run_study_refuses_a_store_that_is_not_nc_or_zarr(tmp_path, name):
    with pytest.raises(ValueError, match=r"must end in \.nc \(NetCDF\) or \.zarr"):
        run_study(TINY, methods=NAIVE, n_replicates=2, random_state=0, store=tmp_path / name)
    assert list(tmp_path.iterdir()) == []  # nothing written, not even a lock


def test_cli_refuses_a_store_that_is_not_nc_or_zarr(tmp_path, capsys):
    out = tmp_path / "x.csv"
    argv = ["study", "--methods", "naive_points", "--n-replicates", "2", "--no-progress",
            "--out", str(out)]  # fmt: skip
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1
    assert captured.err.startswith(f"bayescv study: error: --out {out}: ")
    assert "must end in .nc (NetCDF) or .zarr" in captured.err
    assert list(tmp_path.iterdir()) == []


def test_a_nc_store_is_still_written(tmp_path):
    store = tmp_path / "s.nc"
    run_study(TINY, methods=NAIVE, n_replicates=2, random_state=0, store=store)
    assert store.is_file()
    assert bayescv.compare.load_study(store).sizes["replicate"] == 2


# ---------------------------------------------------------------- 3. unused categories
@pytest.mark.parametrize("categories", [["a", "b", "c"], ["c", "a", "b"]])
def test_unused_categories_of_a_feature_give_no_column(categories):
    # "c" never occurs: dropped before encoding, whether it was the first level or not
    values = ["a", "b", "a", "b", "b", "a"]
    frame = pd.DataFrame({
        "g": pd.Categorical(values, categories=categories),
        "x": [0.1, 0.4, 0.2, 0.9, 0.5, 0.3],
        "y": [1.0, 2.0, 1.5, 2.5, 2.2, 1.1],
    })  # fmt: skip
    used = frame.assign(g=pd.Categorical(values, categories=["a", "b"]))
    got = load_dataframe(frame, target="y")
    expected = load_dataframe(used, target="y")
    assert got.feature_names == expected.feature_names == ["x", "g_b"]
    pd.testing.assert_frame_equal(got.data, expected.data)
    assert (got.data.abs().sum() > 0).all()  # no all-zero column
    assert got.frame is frame  # the user's frame is returned unchanged


# ---------------------------------------------------------------- 4. the cost note
class _Stop(ValueError):
    """Raised instead of running the study: the note is printed before the run."""


def _note(monkeypatch, capsys, *argv):
    def stop(*args, **kwargs):
        raise _Stop("not run in this test")

    monkeypatch.setattr(bayescv.compare, "run_study", stop)
    assert main(["study", "--no-progress", *argv]) == 2  # the stub's error, after the note
    err = capsys.readouterr().err
    notes = [line for line in err.splitlines() if line.startswith("note:")]
    assert err.splitlines()[-1] == "bayescv study: error: not run in this test"
    return notes


def test_default_study_note_gives_replicates_and_the_cheap_alternative(monkeypatch, capsys):
    notes = _note(monkeypatch, capsys)
    assert 1 <= len(notes) <= 2
    text = " ".join(notes)
    assert "100 replicates" in text
    for name in ("bootstrap", "nested_cv"):
        assert name in text
    assert "`--methods closed_form`" in text
    assert "seconds to minutes" in text
    assert "--n-replicates" in text
    assert "options: " not in text  # method options are for --list, not the note


def test_note_follows_the_replicates_asked_for(monkeypatch, capsys):
    notes = _note(monkeypatch, capsys, "--n-replicates", "7", "--methods", "nested_cv")
    assert "7 replicates" in " ".join(notes)
    assert "100 replicates" not in " ".join(notes)


def test_no_note_for_closed_form_methods(monkeypatch, capsys):
    assert _note(monkeypatch, capsys, "--methods", "closed_form") == []
