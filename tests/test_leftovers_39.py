"""Leftovers noticed in earlier rounds, each with what a user saw before."""

from __future__ import annotations

import numpy as np
import pytest

from bayescv import compare_learners, cv_intervals, paired_comparison
from bayescv.cli import main
from bayescv.compare import get_method
from bayescv.intervals import score_bounds
from bayescv.losses import from_arrays, loss_differences


def _zero_one(rate, seed, n_blocks=10, size=20):
    rng = np.random.default_rng(seed)
    block = np.repeat(np.arange(n_blocks), size)
    return from_arrays((rng.random(block.size) < rate).astype(float), block)


# --- Near misses in names get a suggestion (before: the list of every name, nothing more) ---


@pytest.mark.parametrize(
    ("call", "suggested"),
    [
        (lambda: cv_intervals(_zero_one(0.1, 0), ["theta_b"]), "theta_B"),
        (lambda: cv_intervals(_zero_one(0.1, 0), kind="Score"), "score"),
        (lambda: get_method("nadeau-bengio"), "nadeau_bengio"),
        (
            lambda: compare_learners(
                [_zero_one(0.1, 0), _zero_one(0.2, 1)], methods=["naive_point"]
            ),
            "naive_points",
        ),
        (
            lambda: paired_comparison(_zero_one(0.1, 0), _zero_one(0.2, 1), alternative="les"),
            "less",
        ),
    ],
)
def test_unknown_names_suggest_the_closest(call, suggested):
    with pytest.raises(ValueError, match=f"did you mean '{suggested}'"):
        call()


def test_cli_names_the_method_meant(tmp_path, capsys):
    table = _zero_one(0.1, 0)
    path = tmp_path / "losses.csv"
    table.to_dataframe().reset_index()[["block", "loss"]].to_csv(path, index=False)
    assert main(["variance", str(path), "--methods", "theta_b"]) == 2
    assert "did you mean 'theta_B'?" in capsys.readouterr().err


def test_a_name_far_from_every_choice_gets_no_guess():
    with pytest.raises(ValueError, match="unknown interval method") as caught:
        cv_intervals(_zero_one(0.1, 0), ["bogus_estimator"])
    assert "did you mean" not in str(caught.value)


# --- The range of loss differences (before: two plain 0-1 tables gave (-inf, inf)) ---


def test_differences_of_plain_zero_one_tables_lie_in_minus_one_one():
    diff = loss_differences(_zero_one(0.1, 0), _zero_one(0.2, 1))
    assert diff.attrs["loss_range"] == [-1.0, 1.0]


def test_difference_range_is_a_minus_d_to_b_minus_c():
    # e^A in [0, 1], e^B in [0, inf): e^A - e^B in [-inf, 1], not the symmetric (-inf, inf).
    block = np.repeat(np.arange(4), 5)
    a = from_arrays(np.tile([0.0, 1.0], 10), block, loss_range=(0, 1))
    b = from_arrays(np.linspace(0.0, 3.0, 20), block, loss_range=(0, np.inf))
    assert loss_differences(a, b).attrs["loss_range"] == [-np.inf, 1.0]


def test_normal_interval_of_zero_one_differences_is_cut_at_plus_minus_one():
    # Two 0-1 learners disagreeing on most of 6 points: the normal interval of the mean
    # difference reaches past -1 and 1 at 99.99 %; now cut there and flagged.
    block = np.repeat(np.arange(3), 2)
    a = from_arrays(np.array([1.0, 0.0, 1.0, 0.0, 1.0, 1.0]), block)
    b = from_arrays(np.array([0.0, 1.0, 0.0, 0.0, 0.0, 1.0]), block)
    rows = paired_comparison(a, b, ["naive_points"], kind="normal", level=0.9999)
    lower, upper = float(rows["lower"].item()), float(rows["upper"].item())
    assert lower >= -1.0
    assert upper <= 1.0
    assert "truncated_to_range" in str(rows["flag"].item())


# --- No se beside bounds that used none (before: se 0 printed beside Wilson's bounds) ---


def test_rows_without_errors_report_no_standard_error():
    table = from_arrays(np.zeros(200), np.repeat(np.arange(10), 20))
    ci = cv_intervals(table)
    assert set(ci["flag"].values) == {"no_errors"}
    assert np.isnan(ci["se"].values).all()
    # The bounds themselves are Wilson's for 0 errors in N = 200: [0, z²/(N + z²)].
    z2 = 1.959963984540054**2
    np.testing.assert_allclose(ci["upper"].values, z2 / (200 + z2))


def test_score_bounds_give_no_se_at_no_errors_or_all_errors():
    se, _, _, flag = score_bounds([0.0, 0.1, 1.0], [0.0, 0.0009, 0.0], [100, 100, 100])
    assert flag.tolist() == ["no_errors", "", "all_errors"]
    assert np.isnan(se[[0, 2]]).all()
    assert se[1] == pytest.approx(0.03)


# --- bayescv bayes on a plain CSV of losses >= 0 (before: the normal population, silently) ---


def test_cli_names_the_loss_range_that_would_give_the_lognormal_population(tmp_path, capsys):
    import pandas as pd

    rng = np.random.default_rng(3)
    block = np.repeat(np.arange(8), 30)
    squared = rng.exponential(np.exp(rng.normal(0.0, 0.7, 8))[block])
    fast = ["--source-col", "block", "--no-progress", "--draws", "300", "--tune", "300"]
    path = tmp_path / "losses.csv"
    shown = {}
    for case, loss, extra in (
        ("plain", squared, []),
        ("declared", squared, ["--loss-range", "0,inf"]),
        ("signed", squared - 0.5, []),
    ):
        pd.DataFrame({"loss": loss, "block": block}).to_csv(path, index=False)
        assert main(["bayes", str(path), *fast, *extra]) == 0
        captured = capsys.readouterr()
        shown[case] = "give --loss-range 0,inf for the lognormal" in captured.err
        if case == "declared":
            assert "lognormal population of sources" in captured.out
    assert shown == {"plain": True, "declared": False, "signed": False}


def test_cli_bayes_says_the_fits_warnings_as_lines_with_its_own_options(tmp_path, capsys):
    # Before: the heavy-tail warning came out as Python's report, "…/cli/bayes.py:178:
    # HeavyTailWarning: …" and the source line under it, advising a Python call.
    import pandas as pd

    rng = np.random.default_rng(1)
    block = np.repeat(np.arange(8), 60)
    path = tmp_path / "heavy.csv"
    pd.DataFrame({"loss": rng.pareto(1.2, block.size), "block": block}).to_csv(path, index=False)
    fast = ["--no-progress", "--draws", "300", "--tune", "300"]
    assert main(["bayes", str(path), *fast]) == 0
    err = capsys.readouterr().err
    assert "warning: the losses have a heavy upper tail" in err
    assert "bayescv variance FILE --methods theta_B_weighted --kind log" in err
    assert "HeavyTailWarning" not in err
    assert "cv_intervals(" not in err


def test_blocks_of_one_source_each_under_other_labels_do_not_warn():
    # The check behind fit's warning on folds of several sources: blocks labelled otherwise
    # than their sources (strings against integers) but holding one source each pass it.
    import warnings

    from bayescv.bayes._lognormal import warn_pooled_sources

    source = np.repeat(np.arange(6), 5)
    one_each = from_arrays(
        np.ones(30), np.array([f"fold {s}" for s in source]), source=source, scheme="source"
    )
    two_each = from_arrays(np.ones(30), source // 2, source=source, scheme="source")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_pooled_sources(one_each, "source", stacklevel=1)
    with pytest.warns(UserWarning, match="hold up to 2 sources each"):
        warn_pooled_sources(two_each, "source", stacklevel=1)


def test_study_method_groups_mix_with_names():
    # Before: ["closed_form", "bootstrap"] (`bayescv study --methods closed_form,bootstrap`)
    # said "unknown method 'closed_form'"; the group worked only on its own.
    from bayescv.compare import available_methods, resolve_methods

    names = [m.name for m in resolve_methods(["closed_form", "bootstrap"])]
    assert names == [*available_methods("losses"), "bootstrap"]
    # a method both grouped and named counts once; named twice is still refused
    assert [m.name for m in resolve_methods(["closed_form", "theta_B"])] == list(
        available_methods("losses")
    )
    with pytest.raises(ValueError, match="listed twice"):
        resolve_methods(["theta_B", "theta_B"])


def test_true_theta_of_two_replicates_has_no_error_and_truths_must_be_finite():
    # Before: from 2 replicates the true θ's Monte Carlo error printed "± 3.6e-10" (both
    # squared deviations are equal, so their sd is 0 up to rounding), and a NaN truth was
    # accepted, giving every coverage as n/a.
    from bayescv.compare import GaussianLinear, run_study, summarize, summary_table

    small = GaussianLinear(n=40, coef=[1.0, 1.0], n_splits=4)
    study = run_study(small, methods=["naive_points"], n_replicates=2, random_state=0)
    summary = summarize(study)
    assert np.isnan(summary["theta_true_se"].item())
    assert "± n/a (fewer than 3 replicates)" in summary_table(summary)
    three = summarize(run_study(small, methods=["naive_points"], n_replicates=3, random_state=0))
    assert three["theta_true_se"].item() > 0
    with pytest.raises(ValueError, match="'err' must be a finite number"):
        summarize(study, truths={"err": np.nan})


def test_study_cost_note_agrees_with_one_method():
    # Before: "note: bootstrap dominate the run time of the 5 replicates".
    from bayescv.cli.study import _cost_note
    from bayescv.compare import resolve_methods

    one = _cost_note(resolve_methods(["bootstrap"]), 5)
    assert "bootstrap dominates the run time of the 5 replicates" in one
    two = _cost_note(resolve_methods(["bootstrap", "nested_cv"]), 5)
    assert "bootstrap, nested_cv dominate the run time" in two


def test_a_user_method_at_another_level_is_refused():
    # Before: a user method that ignored context.level (intervals always at 95 %) ran in a
    # 90 % study, and its coverage was read against 90 % without a word.
    from bayescv.compare import (
        GaussianLinear,
        Method,
        register_method,
        run_study,
        unregister_method,
    )
    from bayescv.intervals import interval_dataset

    def fixed_level(context, names):
        mu = float(context.moments["S"].sum() / context.moments["n"].sum())
        return interval_dataset(names, estimate=[mu], lower=[mu - 1], upper=[mu + 1],
                                se=[0.5], level=0.95, target="err")  # fmt: skip

    small = GaussianLinear(n=40, coef=[1.0, 1.0], n_splits=4)
    register_method(Method("fixed_level", fixed_level, "err"))
    try:
        with pytest.raises(ValueError, match=r"level 0\.95; the study.s is 0\.9"):
            run_study(small, methods=["fixed_level"], n_replicates=2, level=0.9, random_state=0)
        # at the study's own level it runs
        run_study(small, methods=["fixed_level"], n_replicates=2, level=0.95, random_state=0)
    finally:
        unregister_method("fixed_level")
