"""New-user hunt of the ``bayescv`` command line: silent misreadings and ignored options.

Each test writes its input the way a user would (pandas' ``to_csv``, a hand-written CSV) and
checks the command against the Python API's own result for the same table, or against an
exact count of what the file holds.
"""

import json

import numpy as np
import pandas as pd
import pytest

from bayescv.classical import cv_intervals
from bayescv.cli import main
from bayescv.learner_comparison import compare_learners
from bayescv.losses import read_table


def _losses(path, seed=0, shift=0.0, n_blocks=5, size=8, **extra):
    rng = np.random.default_rng(seed)
    block = np.repeat(np.arange(n_blocks), size)
    loss = rng.gamma(2.0, 1.0, block.size) + shift
    pd.DataFrame({"block": block, "loss": loss, **extra}).to_csv(path, index=False)
    return path


def _classification_data(rng, n=60):
    x = rng.normal(size=(n, 2))
    y = (x[:, 0] + rng.normal(size=n) > 0).astype(int)
    return pd.DataFrame({"x1": x[:, 0], "x2": x[:, 1], "y": y})


NESTED_FAST = ["--target", "y", "--n-splits", "3", "--n-repeats", "2", "--format", "json"]


def test_nested_refuses_the_row_index_that_to_csv_writes(tmp_path, capsys):
    """``DataFrame.to_csv(path)`` writes the row index as a column with no name.

    pandas reads it back as ``Unnamed: 0``, and ``bayescv nested`` used it as a feature (the
    JSON said 3 features for a frame of 2): on data sorted by class the row number predicts
    the label. It must be refused, naming the way out; the same frame written with
    ``index=False`` runs with its 2 feature columns (x1, x2: every column but the target).
    """
    frame = _classification_data(np.random.default_rng(0))
    frame.to_csv(tmp_path / "with_index.csv")
    assert main(["nested", str(tmp_path / "with_index.csv"), *NESTED_FAST]) == 2
    err = capsys.readouterr().err
    assert err.startswith("bayescv nested: error: ")
    assert "no name" in err
    assert "index=False" in err
    frame.to_csv(tmp_path / "plain.csv", index=False)
    assert main(["nested", str(tmp_path / "plain.csv"), *NESTED_FAST]) == 0
    assert json.loads(capsys.readouterr().out)["n_features"] == 2


def test_nested_refuses_a_repeated_column_name(tmp_path, capsys):
    """A header ``x1,y,y`` was read as columns x1, y and y.1, and y.1 (a copy of the target)
    was fitted as a feature: an error rate near 0 from a leak. It must be refused."""
    frame = _classification_data(np.random.default_rng(1))
    lines = ["x1,y,y"] + [f"{a},{b},{b}" for a, b in zip(frame.x1, frame.y, strict=True)]
    (tmp_path / "dup.csv").write_text("\n".join(lines) + "\n")
    assert main(["nested", str(tmp_path / "dup.csv"), *NESTED_FAST]) == 2
    err = capsys.readouterr().err
    assert "'y' more than once" in err
    assert "Traceback" not in err


def test_nested_names_a_semicolon_delimited_file(tmp_path, capsys):
    """A semicolon-delimited export is one column to pandas; the message says why the target
    is missing and how to save the file (as ``bayescv variance`` already does)."""
    _classification_data(np.random.default_rng(2)).to_csv(
        tmp_path / "semi.csv", sep=";", index=False
    )
    assert main(["nested", str(tmp_path / "semi.csv"), *NESTED_FAST]) == 2
    assert "semicolon-delimited" in capsys.readouterr().err


def test_variance_refuses_alternative_without_paired(tmp_path, capsys):
    """``--alternative less`` on one table was accepted and ignored (the intervals of one
    table are two-sided, and no test is run): an option silently dropped."""
    path = _losses(tmp_path / "t.csv")
    assert main(["variance", str(path), "--alternative", "less"]) == 2
    assert "--paired" in capsys.readouterr().err
    # the paired default stays two-sided: a two-sided p-value is twice the smaller tail
    b = _losses(tmp_path / "b.csv", seed=1, shift=0.3)
    runs = {}
    for alt in ([], ["--alternative", "less"]):
        assert main(["variance", "--paired", str(path), str(b), "--format", "json", *alt]) == 0
        runs[bool(alt)] = json.loads(capsys.readouterr().out)["methods"]["naive_points"]
    assert runs[False]["estimate"] < 0  # A has the lower losses
    assert runs[False]["p_value"] == pytest.approx(2 * runs[True]["p_value"], rel=1e-9)


def test_variance_json_carries_each_intervals_target_and_se(tmp_path, capsys):
    """The table shows each interval's target (err or kfold_test_error) and SE; the JSON had
    neither. Both must equal ``cv_intervals(read_table(path))`` for the same file."""
    path = _losses(tmp_path / "t.csv")
    assert main(["variance", str(path), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    api = cv_intervals(read_table(path))
    for m in api["method_name"].values:
        assert out["targets"][str(m)] == str(api["target"].sel(method_name=m).item())
        se = float(api["se"].sel(method_name=m))
        assert out["se"][str(m)] == (pytest.approx(se, rel=1e-12) if np.isfinite(se) else None)
    assert out["targets"]["bayle_within"] == "kfold_test_error"


def test_study_refuses_a_scheduler_without_the_dask_backend(capsys):
    """``--scheduler ADDRESS`` with the default joblib backend was ignored: the study ran
    here, not on the cluster named."""
    argv = ["study", "--scheduler", "tcp://127.0.0.1:1", "--n-replicates", "2"]
    assert main([*argv, "--methods", "naive_points"]) == 2
    assert "--backend dask" in capsys.readouterr().err


def test_study_summary_says_that_level_is_ignored(tmp_path, capsys):
    """``--summary`` reads a stored study whose intervals were built at its own level;
    ``--level 0.8`` there was ignored without a word (the note named other options only)."""
    store = tmp_path / "s.nc"
    argv = ["study", "--n-replicates", "2", "--methods", "naive_points", "--out", str(store)]
    assert main([*argv, "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["study", "--summary", str(store), "--level", "0.8"]) == 0
    captured = capsys.readouterr()
    assert "--level" in captured.err
    assert "ignored" in captured.err
    assert "nominal coverage 95%" in captured.out  # the stored level, as the study was run


def test_compare_table_says_which_p_values_are_one_sided(tmp_path, capsys):
    """Bayle's test is one-sided; the text table printed its p-value beside two-sided ones
    with no column saying so (the JSON had ``alternative``). Each row's alternative must be
    the one ``compare_learners`` gives for the same tables."""
    a, b = _losses(tmp_path / "a.csv"), _losses(tmp_path / "b.csv", seed=1, shift=0.3)
    assert main(["compare", str(a), str(b)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "alternative" in lines[1].split()
    api = compare_learners({"a": read_table(a), "b": read_table(b)}).to_dataframe()
    for line, (_, row) in zip(lines[2:], api.iterrows(), strict=False):
        assert line.split()[0] == row["method"]
        assert (row["alternative"] or "-") in line.split()


def test_missing_column_names_the_option_that_picks_it(tmp_path, capsys):
    """A CSV with columns fold, err: the error named the missing 'loss' column but not the
    CLI's way out, --loss-col; with it (and --block-col) the file reads as the API reads it."""
    frame = pd.read_csv(_losses(tmp_path / "t.csv"))
    frame.rename(columns={"block": "fold", "loss": "err"}).to_csv(tmp_path / "r.csv", index=False)
    assert main(["variance", str(tmp_path / "r.csv")]) == 2
    assert "--loss-col" in capsys.readouterr().err
    argv = ["variance", str(tmp_path / "r.csv"), "--loss-col", "err", "--block-col", "fold"]
    assert main([*argv, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["mu_hat"] == pytest.approx(frame["loss"].mean())


def test_numeric_labels_written_differently_are_not_merged(tmp_path, capsys):
    """Blocks '01' and '1' were read as the number 1 and merged: K = 1 block of 4 where the
    file has 2 blocks of 2. Refused now; consistently padded labels ('001', '002') still read
    as their 2 distinct blocks."""
    (tmp_path / "m.csv").write_text("block,loss\n01,0.5\n01,0.7\n1,0.1\n1,0.2\n")
    assert main(["variance", str(tmp_path / "m.csv")]) == 2
    err = capsys.readouterr().err
    assert "['01', '1']" in err
    assert "non-numeric" in err
    (tmp_path / "p.csv").write_text("block,loss\n001,0.5\n001,0.7\n002,0.1\n002,0.2\n")
    assert main(["variance", str(tmp_path / "p.csv"), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["K"] == 2


def test_compare_reads_repeated_cv_with_replicate_kind(tmp_path, capsys):
    """A CSV of repeated CV (a 'replicate' column) failed with a message about an attribute
    no CLI user can set. ``--replicate-kind repeat`` reads it, with the API's result."""
    paths = []
    for name, shift in (("a", 0.0), ("b", 0.3)):
        runs = [
            pd.read_csv(_losses(tmp_path / f"{name}{r}.csv", seed=r, shift=shift)) for r in (0, 1)
        ]
        frame = pd.concat([run.assign(replicate=r) for r, run in enumerate(runs)])
        frame.to_csv(tmp_path / f"{name}.csv", index=False)
        paths.append(tmp_path / f"{name}.csv")
    assert main(["compare", *map(str, paths)]) == 2
    assert "--replicate-kind" in capsys.readouterr().err
    assert main(["variance", str(paths[0])]) == 2  # runs of unknown kind: says which to pass
    assert "--replicate-kind" in capsys.readouterr().err
    argv = ["compare", *map(str, paths), "--replicate-kind", "repeat", "--format", "json"]
    assert main(argv) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    tables = {n: read_table(p, replicate_kind="repeat") for n, p in zip("ab", paths, strict=True)}
    api = compare_learners(tables).to_dataframe()
    assert [r["estimate"] for r in rows] == pytest.approx(api["estimate"].tolist(), rel=1e-12)


def test_replicate_kind_on_one_run_is_refused(tmp_path, capsys):
    """``--replicate-kind`` on a file of one CV run was accepted and ignored."""
    a, b = _losses(tmp_path / "a.csv"), _losses(tmp_path / "b.csv", seed=1)
    assert main(["compare", str(a), str(b), "--replicate-kind", "repeat"]) == 2
    assert "no 'replicate' column" in capsys.readouterr().err


def test_kind_log_message_names_the_declared_range(tmp_path, capsys):
    """With ``--loss-range -1,inf`` the refusal of ``--kind log`` said the file 'declares no
    such range' although the user had just declared one; it names that range now."""
    path = _losses(tmp_path / "t.csv")
    assert main(["variance", str(path), "--loss-range=-1,inf", "--kind", "log"]) == 2
    assert "[-1, inf]" in capsys.readouterr().err


def test_methods_with_spaces_after_commas(tmp_path, capsys):
    """``--methods "naive_points, theta_1"`` was refused as an unknown method ' theta_1' by
    ``variance`` and ``compare`` (``study`` reads it); the rows must be those of the API's
    ``cv_intervals(table, ["naive_points", "theta_1"])``."""
    path = _losses(tmp_path / "t.csv")
    assert (
        main(["variance", str(path), "--methods", "naive_points, theta_1", "--format", "json"])
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    api = cv_intervals(read_table(path), ["naive_points", "theta_1"])
    assert list(out["intervals"]) == [str(m) for m in api["method_name"].values]
    b = _losses(tmp_path / "b.csv", seed=1)
    argv = ["compare", str(path), str(b), "--methods", "correlated_t, nadeau_bengio"]
    assert main([*argv, "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [r["method"] for r in rows] == ["correlated_t", "nadeau_bengio"]


def test_a_study_given_as_a_loss_table_is_named(tmp_path, capsys):
    """A study store passed to ``bayescv variance`` gave "loss table has no 'loss'
    variable"; it now says what the file is and which command reads it. And ``study
    --summary`` of a CSV no longer advises to 'move it away', advice for resuming a run."""
    store = tmp_path / "s.nc"
    argv = ["study", "--n-replicates", "2", "--methods", "naive_points", "--out", str(store)]
    assert main([*argv, "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["variance", str(store)]) == 2
    assert f"bayescv study --summary {store}" in capsys.readouterr().err
    path = _losses(tmp_path / "t.csv")
    assert main(["study", "--summary", str(path)]) == 2
    err = capsys.readouterr().err
    assert "move it away" not in err
    assert "bayescv study --out" in err


def test_nested_keeps_source_ids_written_differently_apart(tmp_path, capsys):
    """Source IDs '007' and '7' are different sites; pandas read them as the number 7, so
    ``bayescv nested --source-col`` grouped 24 sites as 12. The count must be the file's
    number of distinct labels, 24."""
    rng = np.random.default_rng(5)
    sites = [f"{i % 12:03d}" if i % 24 < 12 else f"{i % 12}" for i in range(120)]
    frame = pd.DataFrame({"x1": rng.normal(size=120), "y": rng.normal(size=120), "site": sites})
    frame.to_csv(tmp_path / "d.csv", index=False)
    argv = ["nested", str(tmp_path / "d.csv"), "--target", "y", "--source-col", "site"]
    assert main([*argv, "--n-splits", "3", "--n-repeats", "2", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["n_sources"] == frame["site"].nunique() == 24


def test_compare_json_best_carries_the_interval_the_table_shows(tmp_path, capsys):
    """The table of which learner is best shows each mean's interval; the JSON had the mean
    only. Its bounds must be ``compare_several``'s for the same tables."""
    from bayescv.fold_scores import from_loss_tables
    from bayescv.learner_comparison import compare_several

    paths = [_losses(tmp_path / f"{n}.csv", seed=i, shift=0.2 * i) for i, n in enumerate("abc")]
    assert main(["compare", *map(str, paths), "--format", "json"]) == 0
    best = json.loads(capsys.readouterr().out)["best"]
    tables = {p.stem: read_table(p) for p in paths}
    api = compare_several(from_loss_tables(tables), random_state=0).isel(dataset=0)
    for name in "abc":
        for key in ("lower", "upper"):
            assert best[name][key] == pytest.approx(float(api[key].sel(learner=name)), rel=1e-12)


def test_compare_names_with_spaces_after_commas(tmp_path, capsys):
    """``--names "logit, tree"`` named the second learner ' tree' (a leading space in every
    row and key); an empty name ('a,') was accepted. Names are the comma-separated words."""
    a, b = _losses(tmp_path / "a.csv"), _losses(tmp_path / "b.csv", seed=1)
    assert main(["compare", str(a), str(b), "--names", "logit, tree", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert {(r["a"], r["b"]) for r in rows} == {("logit", "tree")}
    assert main(["compare", str(a), str(b), "--names", "a,"]) == 2
    assert "empty name" in capsys.readouterr().err


def test_variance_with_two_tables_names_the_way_to_compare_them(tmp_path, capsys):
    """Two tables without --paired were refused as 'expected 1 CSV file(s), got 2' with no
    way out; the message names --paired and ``bayescv compare``, which run on them."""
    a, b = _losses(tmp_path / "a.csv"), _losses(tmp_path / "b.csv", seed=1)
    assert main(["variance", str(a), str(b)]) == 2
    assert "--paired" in capsys.readouterr().err
    assert main(["variance", "--paired", str(a), str(b)]) == 0
