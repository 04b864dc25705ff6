"""Small defects left by the last review: each test failed on the code before its fix.

Reference values are exact expectations: the rows and pairs the tests construct, the x
positions of the settings given, and scikit-learn's own acceptance of a ``random_state``
(its estimator's fit is the reference for what :func:`make_learner` must accept).
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import argparse

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
import xarray as xr
from sklearn.ensemble import RandomForestRegressor
from sklearn.linear_model import Ridge

import bayescv.losses
from bayescv.cli import main
from bayescv.cli._checks import read_losses
from bayescv.compare import MultiSourceLinear, decompose, run_study, summarize
from bayescv.compare.plots import plot_coverage, plot_decomposition, plot_intervals
from bayescv.cv import get_loss, losses_on_folds, make_learner
from bayescv.losses import (
    TableFormatError,
    from_arrays,
    from_frame,
    read_csv,
    read_table,
    stack_replicates,
    to_csv,
    to_netcdf,
)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


ONE_RUN = "block,loss\n0,1\n0,2\n1,3\n1,4\n"
TWO_RUNS = "replicate,block,loss\n0,a,1\n0,a,2\n0,b,3\n0,b,4\n1,a,1\n1,a,2\n1,b,3\n1,b,4\n"


# 1: replicate_kind on a table of one run --------------------------------------------------


def test_replicate_kind_for_one_run_is_refused_by_every_builder(tmp_path):
    # before: each stored attrs["replicate_kind"] on a table without a replicate dimension
    one = _write(tmp_path / "one.csv", ONE_RUN)
    to_netcdf(from_arrays([1.0, 2, 3, 4], [0, 0, 1, 1]), tmp_path / "one.nc")
    calls = {
        "read_table csv": lambda: read_table(one, replicate_kind="repeat"),
        "read_table nc": lambda: read_table(tmp_path / "one.nc", replicate_kind="repeat"),
        "from_arrays": lambda: from_arrays([1.0, 2, 3, 4], [0, 0, 1, 1], replicate_kind="repeat"),
        "from_frame": lambda: from_frame(pd.read_csv(one), replicate_kind="bootstrap"),
    }
    for what, call in calls.items():
        with pytest.raises(
            TableFormatError, match=r"one (CV )?run.*leave replicate_kind out"
        ) as info:
            call()
        assert info.value.extra_attribute == "replicate_kind", what
    # runs with their kind are read as before
    runs = read_table(_write(tmp_path / "runs.csv", TWO_RUNS), replicate_kind="repeat")
    assert dict(runs.sizes) == {"replicate": 2, "obs": 4}


def test_one_run_taken_out_of_several_still_round_trips(tmp_path):
    # table.isel(replicate=0) keeps attrs["replicate_kind"]: its CSV must still be readable
    runs = stack_replicates(
        [from_arrays([1.0, 2, 3, 4], [0, 0, 1, 1]), from_arrays([2.0, 1, 4, 3], [0, 0, 1, 1])],
        replicate_kind="repeat",
    )
    one = runs.isel(replicate=0, drop=True)
    to_csv(one, tmp_path / "one.csv")
    assert read_csv(tmp_path / "one.csv").identical(one)
    rebuilt = read_table(tmp_path / "one.csv", scheme="source")
    assert rebuilt.attrs["scheme"] == "source"
    np.testing.assert_array_equal(rebuilt["loss"].values, one["loss"].values)


def test_cli_says_to_leave_replicate_kind_out_for_one_run(tmp_path, capsys):
    a = _write(tmp_path / "a.csv", ONE_RUN)
    b = _write(tmp_path / "b.csv", ONE_RUN)
    assert main(["compare", str(a), str(b), "--replicate-kind", "repeat"]) == 2
    err = capsys.readouterr().err
    assert "--replicate-kind repeat is for a file of several CV runs" in err
    assert "leave the option out" in err


def test_netcdf_runs_written_without_their_kind_read_with_replicate_kind(tmp_path, capsys):
    # A NetCDF of runs that lacks the attribute: the message advises --replicate-kind, so the
    # option must work (before, the file was validated before the option was applied).
    runs = [from_arrays([1.0, 2, 3, 4 + r], [0, 0, 1, 1]) for r in range(3)]
    table = stack_replicates(runs, replicate_kind="repeat")
    bare = table.copy()
    del bare.attrs["replicate_kind"]
    path = tmp_path / "runs.nc"
    bare.to_netcdf(path)
    with pytest.raises(TableFormatError) as info:
        read_table(path)
    assert info.value.missing_attribute == "replicate_kind"
    read = read_table(path, replicate_kind="repeat")
    assert read.attrs["replicate_kind"] == "repeat"
    np.testing.assert_array_equal(read["loss"].values, table["loss"].values)
    other = tmp_path / "other.nc"
    bare.assign(loss=bare["loss"] + 1).to_netcdf(other)
    argv = ["compare", str(path), str(other), "--replicate-kind", "repeat", "--format", "json"]
    assert main(argv) == 0, capsys.readouterr().err


def test_bayes_cli_says_a_one_run_bootstrap_file_is_not_replicates(tmp_path, capsys):
    a = _write(tmp_path / "a.csv", ONE_RUN)
    b = _write(tmp_path / "b.csv", ONE_RUN)
    assert main(["bayes", str(a), "--bootstrap", str(b)]) == 2
    err = capsys.readouterr().err
    assert "--bootstrap needs a file of several bootstrap runs" in err
    assert "holds one CV run" in err


# 8: the CLI reads the reader's refusals from attributes, not from their text ---------------


def _args(**options):
    base = {"loss_col": "loss", "block_col": "block", "source_col": None, "scheme": None}
    return argparse.Namespace(**{**base, **options})


def test_table_format_error_is_public_and_carries_what_is_missing(tmp_path):
    assert "TableFormatError" in bayescv.losses.__all__
    assert issubclass(TableFormatError, ValueError)
    path = _write(tmp_path / "t.csv", ONE_RUN)
    with pytest.raises(TableFormatError) as info:
        read_table(path, loss="err")
    assert info.value.missing_column == ("loss", "err")
    assert info.value.advice == ""
    spaced = _write(tmp_path / "s.csv", "block, loss\n0,1\n0,2\n1,3\n1,4\n")
    with pytest.raises(TableFormatError) as info:
        read_table(spaced)
    assert info.value.missing_column == ("loss", "loss")
    assert "spaces around its commas" in info.value.advice
    runs = _write(tmp_path / "runs.csv", TWO_RUNS)
    with pytest.raises(TableFormatError, match=f"^{runs}: a table with a 'replicate'") as info:
        read_table(runs)  # the path is put in front, the kind and attributes kept
    assert info.value.missing_attribute == "replicate_kind"
    with pytest.raises(TableFormatError) as info:
        from_arrays(np.ones((2, 4)), [0, 0, 1, 1])
    assert info.value.missing_attribute == "replicate_kind"


def test_read_losses_turns_the_attributes_into_options(tmp_path, monkeypatch):
    path = _write(tmp_path / "t.csv", ONE_RUN)
    # messages as before the change (tests/test_cli*.py check them too)
    with pytest.raises(
        ValueError, match=r"\['block', 'loss'\]; name the loss column with --loss-col$"
    ):
        read_losses(path, _args(loss_col="err"))
    spaced = _write(tmp_path / "s.csv", "block, loss\n0,1\n0,2\n1,3\n1,4\n")
    with pytest.raises(ValueError, match="spaces around its commas") as info:
        read_losses(spaced, _args())
    assert "--loss-col" not in str(info.value)  # its own way out, no other

    # the attributes decide, whatever the text says
    def refuse(*args, **kwargs):
        raise TableFormatError("some other wording", missing_column=("block", "fold"))

    monkeypatch.setattr(bayescv.losses, "read_table", refuse)
    with pytest.raises(
        ValueError, match=r"^some other wording; name the block column with --block-col$"
    ):
        read_losses(path, _args())

    def unkind(*args, **kwargs):
        raise TableFormatError("reworded", missing_attribute="replicate_kind")

    monkeypatch.setattr(bayescv.losses, "read_table", unkind)
    with pytest.raises(ValueError, match="--replicate-kind repeat, bootstrap or independent"):
        read_losses(path, _args(replicate_kind=None))
    with pytest.raises(ValueError, match="this command reads one run"):
        read_losses(path, _args())


# 2: a continuous column as the source column of `bayescv nested` --------------------------


def test_nested_cli_refuses_a_source_column_of_one_row_per_source(tmp_path, capsys):
    rng = np.random.default_rng(0)
    n = 40
    frame = pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.normal(size=n)})
    frame["y"] = frame["x1"] + rng.normal(size=n)
    frame["site"] = np.repeat(np.arange(10), 4)
    path = tmp_path / "d.csv"
    frame.to_csv(path, index=False)
    argv = ["nested", str(path), "--target", "y", "--no-progress", "--n-repeats", "1"]
    assert main([*argv, "--source-col", "x1"]) == 2  # before: 40 sources from 40 rows
    err = capsys.readouterr().err
    assert "source column 'x1' has 40 distinct values in 40 rows" in err
    assert "leave --source-col out" in err
    assert main([*argv, "--source-col", "site", "--n-splits", "3", "--format", "json"]) == 0
    assert '"n_sources": 10' in capsys.readouterr().out


# 3-5: the study plots say what they cannot draw ------------------------------------------


@pytest.fixture(scope="module")
def study(small_bates_study):
    return small_bates_study


def test_coverage_plot_marks_and_names_a_setting_without_coverage(study):
    s = summarize(study)
    gap = s.copy(deep=True)
    gap["coverage"].loc[{"method_name": "theta_B", "target": "err_xy"}] = np.nan
    ax = plot_coverage({10: s, 20: gap, 40: s}, target="err_xy")
    marks = [line for line in ax.lines if line.get_marker() == "x"]
    assert len(marks) == 1
    # at setting 20, shifted a little as every method is (methods of equal coverage side by
    # side, tests/test_hunt_notebooks.py)
    assert marks[0].get_xdata()[0] == pytest.approx(20.0, rel=0.05)
    colour = ax.containers[1].lines[0].get_color()  # theta_B, the second method
    assert marks[0].get_color() == colour
    notes = [t.get_text() for t in ax.texts]
    assert any("no coverage" in t and "theta_B at 20" in t for t in notes), notes
    assert not plot_coverage({10: s, 20: s}, target="err_xy").texts  # nothing to say


def _flagged(study, flags):
    values = study["flag"].values.astype(object)
    for replicate, flag in flags.items():
        values[replicate, 1] = flag  # method 1: theta_B
    return study.assign(flag=(study["flag"].dims, values.astype(str)))


def test_interval_plot_marks_flagged_intervals(study):
    assert not any(study["flag"].values.ravel())
    ax = plot_intervals(study, method="theta_B", target="err_xy")
    assert not any(t.get_text().startswith("flagged") for t in ax.get_legend().get_texts())
    flags = {0: "not_converged", 2: "not_converged,truncated_to_range"}
    ax = plot_intervals(_flagged(study, flags), method="theta_B", target="err_xy")
    (marks,) = [c for c in ax.collections if c.get_label().startswith("flagged")]
    assert marks.get_label() == "flagged: not_converged (2), truncated_to_range (1)"
    # at the x positions of replicates 0 and 2 once sorted by the truth, mid-interval
    part = study.sel(method_name="theta_B")
    order = np.argsort(part["truth"].sel(target="err_xy").values)
    where = np.flatnonzero(np.isin(order, list(flags)))
    mid = ((part["lower"] + part["upper"]) / 2).values[order][where]
    np.testing.assert_allclose(marks.get_offsets(), np.c_[where, mid])
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert marks.get_label() in legend


def test_decomposition_plot_shows_a_term_of_zero():
    st = run_study(MultiSourceLinear(3, 5), methods=["theta_A"], n_replicates=5, truths=[],
                   random_state=0)  # fmt: skip
    dec = decompose(st)
    zero = dec.copy(deep=True)
    zero["gamma_term"] = xr.zeros_like(zero["gamma_term"])
    ax = plot_decomposition({10: dec, 20: zero})
    marks = [line for line in ax.lines if line.get_marker() == "v"]
    assert len(marks) == 1
    # at setting 20, shifted a little as every method is (methods of equal coverage side by
    # side, tests/test_hunt_notebooks.py)
    assert marks[0].get_xdata()[0] == pytest.approx(20.0, rel=0.05)
    gamma = next(line for line in ax.lines if line.get_label() == "γ term")
    assert marks[0].get_color() == gamma.get_color()
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "triangle on the x axis: term exactly 0" in legend
    ax = plot_decomposition({10: dec, 20: dec})
    assert not [line for line in ax.lines if line.get_marker() == "v"]


# 6: make_learner refuses at once a random_state that scikit-learn's fit refuses ----------


def _sklearn_takes(random_state):
    """scikit-learn's own answer: does a forest fit with this random_state."""
    try:
        RandomForestRegressor(n_estimators=2, random_state=random_state).fit(
            np.arange(8.0).reshape(4, 2), np.arange(4.0)
        )
    except (TypeError, ValueError):
        return False
    return True


@pytest.mark.parametrize(
    "random_state",
    [None, 0, 7, 2**32 - 1, np.int64(5), np.uint32(3), -1, 2**32, 1.5, "3",
     np.random.RandomState(0), np.random.default_rng(0)],
    ids=lambda v: type(v).__name__ if isinstance(v, np.random.RandomState | np.random.Generator)
    else repr(v),
)  # fmt: skip
def test_make_learner_accepts_the_random_states_scikit_learn_takes(random_state):
    # before: -1, 2**32, 1.5, "3" and a Generator were accepted and failed at fit
    takes = _sklearn_takes(random_state)
    if takes:
        model = make_learner("random-forest", task="regression", random_state=random_state)
        assert model.get_params()["random_state"] is random_state
    else:
        with pytest.raises(
            (TypeError, ValueError), match=r"random_state of .random-forest. must be"
        ):
            make_learner("random-forest", task="regression", random_state=random_state)


def test_make_learner_checks_the_seed_of_the_learners_that_take_one():
    with pytest.raises(ValueError, match=r"random_state of 'decision-tree' .* got -1"):
        make_learner("decision-tree", task="classification", random_state=-1)
    with pytest.raises(TypeError, match=r"int\(rng.integers\(2\*\*32\)\)"):
        make_learner("gradient-boosting", task="regression", random_state=np.random.default_rng(0))
    # a learner without randomness ignores it: bayescv nested passes it its own seed, which
    # nested_cv checks (tests/test_bad_input_cli.py)
    assert make_learner("ridge", task="regression", random_state=-1) is not None


# 7: losses_on_folds refuses test rows that are training rows of their pair ----------------


@pytest.mark.parametrize("batched", [None, False])
def test_losses_on_folds_refuses_a_leaking_pair(batched):
    X = np.arange(20.0).reshape(10, 2)
    y = X[:, 0] + 1.0
    squared = get_loss("squared")
    good = (np.arange(5, 10), np.arange(5))
    leak = (np.arange(0, 8), np.arange(5, 10))  # rows 5, 6, 7 on both sides
    with pytest.raises(ValueError, match=r"pair 1 of folds tests 3 row\(s\) it also trains on"):
        losses_on_folds(Ridge(), X, y, [good, leak], squared, batched=batched)
    mask = np.zeros(10, dtype=bool)
    mask[[2, 3]] = True  # a boolean mask, resolved to rows before the check
    with pytest.raises(ValueError, match=r"pair 0 of folds tests 2 row\(s\).*rows 2, 3"):
        losses_on_folds(Ridge(), X, y, [(np.arange(8), mask)], squared, batched=batched)
    # a bootstrap training set repeats rows; its out-of-bag test rows are still fitted
    boot = (np.array([0, 0, 1, 2, 2, 3, 4]), np.arange(5, 10))
    losses, engine = losses_on_folds(Ridge(), X, y, [boot], squared, batched=batched)
    assert engine == ("per-fit" if batched is False else "batched")
    assert losses[0].shape == (5,)
