"""Every shown interval says its level and, in words, the estimand it targets.

A sweep of the outputs (CLI text, plots) against the project's rule "say which estimand every
interval targets": the text tables printed target codes (``err``, ``kfold_test_error``) with
no words, the paired and learner-comparison tables gave no level, and the study plots drew
coverage of a truth without saying which one the method's intervals are for.
"""

import json

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from bayescv import ESTIMANDS
from bayescv.cli import main
from bayescv.cli._checks import TARGET_WORDS, target_legend


def _write(path, losses, blocks):
    pd.DataFrame({"block": blocks, "loss": losses}).to_csv(path, index=False)
    return str(path)


@pytest.fixture
def zero_one(tmp_path):
    """Three learners' 0-1 losses on the same 5 folds of 10 points; B equals A at every point."""
    rng = np.random.default_rng(2)
    blocks = np.repeat(np.arange(5), 10)
    a = (rng.random(50) < 0.2).astype(float)
    c = a.copy()
    c[:3] = 1 - c[:3]
    return [_write(tmp_path / f"{n}.csv", x, blocks) for n, x in (("A", a), ("B", a), ("C", c))]


def test_every_estimand_has_words():
    # a target added to bayescv.ESTIMANDS must be explained in the text the commands print
    assert set(TARGET_WORDS) == set(ESTIMANDS)
    line = target_legend(["err", "kfold_test_error", "err", ""])
    assert line == (
        f"targets: err = {TARGET_WORDS['err']}; "
        f"kfold_test_error = {TARGET_WORDS['kfold_test_error']}"
    )
    assert target_legend([]) == ""


def test_variance_table_says_what_each_target_is(tmp_path, capsys):
    rng = np.random.default_rng(0)
    path = _write(tmp_path / "t.csv", rng.normal(size=20) ** 2, np.repeat(np.arange(5), 4))
    assert main(["variance", path, "--format", "json"]) == 0
    targets = set(json.loads(capsys.readouterr().out)["targets"].values())
    assert main(["variance", path]) == 0
    out = capsys.readouterr().out
    legend = [line for line in out.splitlines() if line.startswith("targets: ")]
    assert len(legend) == 1
    for target in targets:  # err and kfold_test_error (Bayle et al.'s rows)
        assert f"{target} = {TARGET_WORDS[target]}" in legend[0]


def test_paired_table_states_its_level_and_targets(zero_one, capsys):
    a, _, c = zero_one
    assert main(["variance", "--paired", a, c, "--level", "0.9"]) == 0
    out = capsys.readouterr().out
    assert "90% score intervals" in out.splitlines()[0]
    assert "targets: err = " in out


def test_compare_table_states_its_level_and_targets(zero_one, capsys):
    assert main(["compare", *zero_one, "--level", "0.8"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "80% intervals" in lines[0]
    assert any(line.startswith("targets: err = ") for line in lines)
    best = next(line for line in lines if line.startswith("which learner is best"))
    assert "80% interval" in best
    # the flagged rows keep their flag beside the numbers (A and B never disagree)
    rows = [line for line in lines if " A B " in line]
    assert rows
    assert all(line.rstrip().endswith(("zero_variance", "no_disagreements")) for line in rows)


def test_demo_intervals_say_what_their_target_is(tmp_path):
    from bayescv.cli.demo import _intervals
    from bayescv.losses import read_table

    rng = np.random.default_rng(0)
    src = np.repeat(np.arange(6), [3, 4, 5, 3, 4, 5])
    path = tmp_path / "src.csv"
    pd.DataFrame({"block": src, "source": src, "loss": rng.exponential(size=src.size)}).to_csv(
        path, index=False
    )
    table = read_table(path, loss="loss", block="block", source="source")
    text = _intervals({"CVS": table})
    assert text.splitlines()[-1] == f"targets: expected_cv = {TARGET_WORDS['expected_cv']}"


def test_plot_intervals_names_the_target_of_the_method(small_bates_study):
    from bayescv.compare.plots import plot_intervals

    own = str(small_bates_study["method_target"].sel(method_name="theta_B").item())
    ax = plot_intervals(small_bates_study, method="theta_B", target="err_xy")
    title = ax.get_title()
    plt.close("all")
    assert own != "err_xy"  # the truth drawn is not what the intervals are for
    assert title.startswith(f"theta_B (for {own}): ")
    assert "cover err_xy" in title


def test_plot_summary_outlines_the_target_of_each_method(small_bates_study):
    from bayescv.compare import summarize
    from bayescv.compare.plots import plot_summary

    summary = summarize(small_bates_study)
    targets = ["err_xy", "err"]
    ax = plot_summary(summary, targets=targets)
    widths = np.array([p.get_linewidth() for p in ax.patches]).reshape(len(targets), -1)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    plt.close("all")
    own = summary["method_target"].values
    for row, target in zip(widths, targets, strict=True):
        np.testing.assert_array_equal(row > 0, own == target)
    assert "outlined: the method's target" in labels


def test_nested_json_numbers_are_finite_or_null():
    # JSON has no NaN or infinity: json.dumps would write the invalid tokens NaN/Infinity.
    import json
    import math

    from bayescv.cli.nested import _float

    assert [_float(v) for v in (1.5, math.nan, math.inf, -math.inf)] == [1.5, None, None, None]
    json.dumps([_float(math.inf)], allow_nan=False)  # raises ValueError on a non-finite float


def test_variance_says_a_flag_shared_by_every_row_once(tmp_path, capsys):
    # An error-free 0-1 table flags every method "no_errors": one warning line names them
    # all, where there was one line per method.
    path = _write(tmp_path / "zeros.csv", np.zeros(20), np.repeat(np.arange(4), 5))
    assert main(["variance", str(path), "--loss-range", "0,1"]) == 0
    warned = capsys.readouterr().out.split("warnings:")[1].splitlines()
    lines = [line for line in warned if line.strip().endswith("no errors")]
    assert len(lines) == 1
    assert "naive_points" in lines[0]
    assert "theta_1" in lines[0]


def test_best_learner_intervals_stay_in_the_losses_range_and_say_so(tmp_path, capsys):
    # At an error rate near 0 the t interval of a learner's mean fold loss reaches below 0;
    # for 0-1 losses it is moved onto [0, 1] (bayescv.losses.effective_range) and flagged.
    from bayescv.fold_scores import from_loss_tables
    from bayescv.learner_comparison import compare_several
    from bayescv.losses import from_arrays

    rng = np.random.default_rng(3)
    blocks = np.repeat(np.arange(5), 20)
    tables = {
        n: from_arrays((rng.random(100) < p).astype(float), blocks)
        for n, p in (("a", 0.02), ("b", 0.2), ("c", 0.25))
    }
    folds = from_loss_tables(tables)
    assert folds.attrs["loss_range"] == [0.0, 1.0]
    out = compare_several(folds, random_state=0)
    unclipped = out["mean"] - (out["upper"] - out["mean"])  # the symmetric t interval's lower
    low = out.sel(learner="a", dataset=out["dataset"][0])
    assert float(unclipped.sel(learner="a").min()) < 0  # the case: it did reach below 0
    assert float(low["lower"]) == 0.0
    assert str(low["flag"].item()) == "truncated_to_range"
    assert str(out["flag"].sel(learner="b").item()) == ""
    paths = [_write(tmp_path / f"{n}.csv", t["loss"].values, blocks) for n, t in tables.items()]
    assert main(["compare", *paths, "--format", "json"]) == 0  # three learners: which is best
    best = json.loads(capsys.readouterr().out)["best"]
    assert best["a"]["flag"] == "truncated_to_range"
    assert best["a"]["lower"] == 0.0


def test_scores_of_a_bounded_scorer_keep_their_range_through_compare_several():
    # Accuracy is in [0, 1], so its negation (the table's loss) is in [-1, 0]: a learner with
    # accuracies near 1 must not get an expected accuracy interval above 1.
    from bayescv.fold_scores import fold_table
    from bayescv.learner_comparison import compare_several

    near_one = np.r_[np.ones(9), 0.9]  # mean 0.99, sd 0.032: t half-width 0.033 reaches 1.02
    table = fold_table([near_one, near_one - 0.1, near_one - 0.12], metric="accuracy")
    assert table.attrs["loss_range"] == [-1.0, 0.0]
    out = compare_several(table, random_state=0).isel(dataset=0)
    assert float(out["lower"].min()) >= -1.0  # expected loss -accuracy >= -1: accuracy <= 1
    assert str(out["flag"].sel(learner="A").item()) == "truncated_to_range"
    unnamed = fold_table([near_one, near_one - 0.1], greater_is_better=True)
    assert unnamed.attrs["loss_range"] == [-np.inf, np.inf]  # no scorer name, no range
