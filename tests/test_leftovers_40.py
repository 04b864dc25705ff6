"""Leftovers noticed in earlier rounds, each with what a user saw before."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from bayescv.cli import main
from bayescv.compare import BatesLogistic, run_study, summarize
from bayescv.compare._store import StudyStore

TINY = BatesLogistic(n=40, p=3, n_splits=4)
METHODS = ["naive_points", "theta_3"]


# --- Studies of other settings combined (before: summarised under one study's attrs) ---


def test_resuming_a_store_names_the_setting_and_both_values(tmp_path):
    # Resuming is how the package combines replicates of two runs; the message named only
    # the key ("other settings (level)"), not what is stored and what was asked.
    store = tmp_path / "s.nc"
    run_study(TINY, methods=METHODS, n_replicates=2, random_state=2, store=store, level=0.9)
    with pytest.raises(ValueError, match=r"other settings \(level\)") as info:
        run_study(TINY, methods=METHODS, n_replicates=3, random_state=2, store=store, level=0.8)
    assert "level 0.9 stored, 0.8 now" in str(info.value)
    with pytest.raises(ValueError, match="loss") as info:
        run_study(TINY, methods=METHODS, n_replicates=3, random_state=2, store=store,
                  level=0.9, loss="brier")  # fmt: skip
    assert '"zero_one" stored, "brier" now' in str(info.value)
    with pytest.raises(ValueError, match=r"other settings \(learner, learner_hash\)") as info:
        run_study(TINY, "decision-tree", methods=METHODS, n_replicates=3, random_state=2,
                  store=store, level=0.9)  # fmt: skip
    assert '"LogisticRegression' in str(info.value)
    assert '"DecisionTreeClassifier' in str(info.value)
    with pytest.raises(ValueError, match="scenario_params") as info:
        run_study(BatesLogistic(n=44, p=3, n_splits=4), methods=METHODS, n_replicates=3,
                  random_state=2, store=store, level=0.9)  # fmt: skip
    assert "scenario_params.n 40 stored, 44 now" in str(info.value)


def test_a_store_whose_parts_and_final_file_disagree_is_refused(tmp_path):
    # The final file holds a study at level 0.9, the parts' manifest one at level 0.8 (a
    # finished study copied over the path of an interrupted one). The manifest alone was
    # compared with the call, so the 0.9 replicates were loaded beside new 0.8 ones and the
    # whole reported as a study at level 0.8.
    store, other = tmp_path / "s.nc", tmp_path / "t.nc"
    run_study(TINY, methods=METHODS, n_replicates=2, random_state=2, store=store, level=0.9)
    done = run_study(TINY, methods=METHODS, n_replicates=2, random_state=2, store=other,
                     level=0.8)  # fmt: skip
    StudyStore(store).start(json.loads(done.attrs["settings"]))
    with pytest.raises(ValueError, match=r"other settings \(level\)") as info:
        run_study(TINY, methods=METHODS, n_replicates=3, random_state=2, store=store, level=0.8)
    assert "level 0.9 in" in str(info.value)
    assert "0.8 in" in str(info.value)


def test_stacked_studies_of_other_fold_counts_are_refused():
    # xr.concat keeps the first study's attrs, so level, learner and loss of the others are
    # lost; the number of CV blocks survives in block_n (NaN where a replicate had fewer),
    # and run_study itself refuses replicates of different block counts.
    four = run_study(TINY, methods=METHODS, n_replicates=3, random_state=0)
    five = run_study(BatesLogistic(n=40, p=3, n_splits=5), methods=METHODS, n_replicates=3,
                     random_state=1)  # fmt: skip
    stacked = xr.concat([four, five], dim="replicate", join="outer")
    stacked = stacked.assign_coords(replicate=np.arange(6))
    with pytest.raises(ValueError, match=r"number of CV blocks: 4 \(replicates \[0, 1, 2\]\)"):
        summarize(stacked)
    # Studies of one setting and different seeds still stack (the advice of the message
    # about repeated seeds).
    same = run_study(TINY, methods=METHODS, n_replicates=3, random_state=1)
    both = xr.concat([four, same], dim="replicate").assign_coords(replicate=np.arange(6))
    assert summarize(both).attrs["n_replicates"] == 6


# --- Cost note of a study whose replicates are all stored (before: printed, nothing ran) ---

_COSTLY = [
    "study", "--scenario", "bates-logistic", "--learner", "decision-tree", "--methods",
    "bootstrap", "--option", "bootstrap.n_bootstrap=2", "--no-progress",
]  # fmt: skip


def test_study_cost_note_counts_only_replicates_to_run(tmp_path, capsys):
    out = tmp_path / "study.nc"
    assert main([*_COSTLY, "--n-replicates", "2", "--out", str(out)]) == 0
    assert "dominates the run time of the 2 replicates to run" in capsys.readouterr().err
    # Every replicate stored: nothing is computed, so no run time to announce.
    assert main([*_COSTLY, "--n-replicates", "2", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "note:" not in captured.err
    assert "2 replicates" in captured.out  # the summary of the stored study
    # Two stored, three asked: one replicate runs.
    assert main([*_COSTLY, "--n-replicates", "3", "--out", str(out)]) == 0
    assert "dominates the run time of the 1 replicate to run;" in capsys.readouterr().err


# --- θ_1…θ_5 in the estimates of a source table (before: listed; their intervals were not) ---


@pytest.fixture
def source_csv(tmp_path):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {"loss": rng.standard_normal(200) ** 2, "fold": np.repeat(np.arange(5), 40)}
    )
    path = tmp_path / "x.csv"
    frame.to_csv(path, index=False)
    return path


def _rows(text):
    """The quantities of the estimates table: from its ``quantity`` heading to a blank line."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("quantity")) + 1
    rows = []
    for line in lines[start:]:
        if not line.strip():
            break
        rows.append(line.split()[0])
    return set(rows)


RANDOM_ONLY = {"theta_1", "theta_2", "theta_3", "theta_4", "theta_5"}


def test_source_table_estimates_leave_out_the_random_kfold_thetas(source_csv, capsys):
    # bayescv.classical.RANDOM_KFOLD_ONLY: θ_1…θ_5 assume a random partition of points
    # (Grandvalet & Bengio 2006), so cv_intervals leaves them out of a source table's
    # intervals; θ^ω, θ^γ, θ_A, θ_B are the source estimators (Geras & Sutton 2013).
    argv = ["variance", str(source_csv), "--scheme", "source", "--block-col", "fold"]
    assert main(argv) == 0
    rows = _rows(capsys.readouterr().out)
    assert not rows & RANDOM_ONLY
    assert {"theta_A", "theta_B", "theta_omega", "theta_gamma", "se_points"} <= rows
    assert main([*argv, "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    for key in RANDOM_ONLY:  # the keys stay (one JSON layout), null as in the table's absence
        assert out[key] is None
    assert all(out[key] is not None for key in ("theta_A", "theta_omega", "theta_gamma"))
    # the random scheme is as before: θ_1…θ_5 listed and in the JSON
    random = ["variance", str(source_csv), "--scheme", "random", "--block-col", "fold"]
    assert main(random) == 0
    assert _rows(capsys.readouterr().out) >= RANDOM_ONLY
    assert main([*random, "--format", "json"]) == 0
    assert all(v is not None for k, v in json.loads(capsys.readouterr().out).items()
               if k in RANDOM_ONLY)  # fmt: skip


def test_unequal_source_table_note_names_no_random_kfold_theta(tmp_path, capsys):
    # The unequal-sizes note named theta_1 … theta_5 on a source table, rows it never shows.
    rng = np.random.default_rng(1)
    sizes = [40, 40, 40, 40, 30]
    frame = pd.DataFrame(
        {"loss": rng.standard_normal(190) ** 2, "fold": np.repeat(np.arange(5), sizes)}
    )
    path = tmp_path / "u.csv"
    frame.to_csv(path, index=False)
    argv = ["variance", str(path), "--scheme", "source", "--block-col", "fold"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "theta_omega, theta_gamma, theta_A, theta_B need equal block sizes" in text
    assert "theta_1" not in text
    assert main([*argv, "--format", "json"]) == 0
    warned = json.loads(capsys.readouterr().out)["warnings"]
    assert not any("theta_1" in w or "theta_5" in w for w in warned)


# --- bayescv nested off a terminal (before: silent for the whole run) ---


@pytest.fixture
def nested_csv(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 2))
    frame = pd.DataFrame(X, columns=["x1", "x2"])
    frame["y"] = X @ [1.0, -0.5] + rng.standard_normal(30)
    path = tmp_path / "d.csv"
    frame.to_csv(path, index=False)
    return path


def test_nested_says_how_many_fits_when_no_bar_is_shown(nested_csv, capsys, monkeypatch):
    # Under pytest stderr is not a terminal, so no bar: one line says what will run.
    # 2 nested repetitions of 3-fold CV fit K + K(K-1)/2 = 6 models each, and the
    # ceil(2/5) = 1 plain-CV repetition 3: 15, the n_fits the result reports.
    argv = ["nested", str(nested_csv), "--target", "y", "--n-splits", "3", "--n-repeats", "2"]
    assert main([*argv, "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["n_fits"] == 15
    lines = captured.err.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("bayescv nested: fitting 15 models (n_repeats=2")
    assert "n_splits=3" in lines[0]
    # with a bar, the bar says it: no line
    monkeypatch.setattr("bayescv.cli.nested.show_progress", lambda args: True)
    assert main([*argv, "--format", "json"]) == 0
    assert "fitting" not in capsys.readouterr().err
    # bad input is refused before the line: nothing is announced that never starts
    assert main([*argv[:-2], "--n-repeats", "0"]) == 2
    assert "fitting" not in capsys.readouterr().err
    assert main([*argv[:-4], "--n-splits", "20"]) == 2  # 30 points < 2 * 20
    assert "fitting" not in capsys.readouterr().err
