"""Coverage studies on the inputs users bring: each test reproduces a defect of a new-user pass.

Reference values: the coverage of a replicate without an interval is undefined, not a miss
(``summarize`` leaves such replicates out of ``n_valid``), and a truth recorded per replicate
cannot be one number for the whole study.
"""

from __future__ import annotations

import matplotlib
import pytest

from bayescv.cli import main
from bayescv.compare import BatesLogistic, GaussianLinear, run_study, summarize
from bayescv.compare.plots import plot_intervals

matplotlib.use("Agg")

TINY = BatesLogistic(n=40, p=3, n_splits=4)


@pytest.fixture(scope="module")
def study():
    return run_study(TINY, methods=["naive_points", "theta_5"], n_replicates=3, random_state=0)


@pytest.mark.parametrize(
    ("truths", "message"),
    [
        ({"nope": 0.1}, "'nope' is not a target of a 'iid' study"),
        ({"ose": 0.3}, "'ose' is not a target of a 'iid' study"),
        ({"err_xy": 0.0}, "records 'err_xy' per replicate"),
    ],
)
def test_summarize_refuses_truths_it_cannot_use(study, truths, message):
    # They were ignored, and {"err_xy": 0.0} was recorded in the attrs as if used.
    with pytest.raises(ValueError, match=message):
        summarize(study, truths=truths)
    assert summarize(study, truths={"err": 0.2}).attrs["truths"].startswith('{"err": 0.2')


def test_interval_plot_counts_coverage_as_summarize_does(study):
    s = summarize(study).sel(method_name="theta_5", target="err_xy")
    ax = plot_intervals(study, method="theta_5", target="err_xy")
    n_valid = int(s["n_valid"])
    assert f"{100 * float(s['coverage']):.0f}% of {n_valid} cover err_xy" in ax.get_title()
    if n_valid < 3:
        assert f"{3 - n_valid} without an interval" in ax.get_title()


@pytest.mark.parametrize("chunk_size", [0, -1, 1.5])
def test_chunk_size_must_be_a_positive_integer(chunk_size):
    with pytest.raises(ValueError, match="chunk_size must be a positive integer"):
        run_study(GaussianLinear(), methods=["naive_points"], n_replicates=2,
                  chunk_size=chunk_size)  # fmt: skip


def test_scenario_and_learner_by_catalogue_name():
    st = run_study("gaussian-linear", "ridge", methods=["naive_points"], n_replicates=2,
                   random_state=0)  # fmt: skip
    assert st.attrs["scenario"] == "gaussian-linear"
    assert "Ridge" in st.attrs["learner"]
    with pytest.raises(TypeError, match="scenario must be a Scenario or a name"):
        run_study(3, methods=["naive_points"], n_replicates=2)


def test_one_replicate_is_refused_for_a_summary(capsys):
    one = run_study(TINY, methods=["naive_points"], n_replicates=1, random_state=0)
    with pytest.raises(ValueError, match="need at least 2"):
        summarize(one)  # gave five RuntimeWarnings and θ = nan ± nan
    argv = ["study", "--methods", "naive_points", "--n-replicates", "1", "--no-progress"]
    assert main(argv) == 2
    assert "needs at least 2 replicates" in capsys.readouterr().err


def test_the_wrong_kind_of_result_is_named(study):
    from bayescv.compare import summary_table
    from bayescv.compare.plots import plot_summary, plot_theta

    s = summarize(study)
    with pytest.raises(ValueError, match=r"expected a summary .* got a study"):
        summary_table(study)  # KeyError 'width_ratio' before
    with pytest.raises(ValueError, match=r"expected a study .* got a summary"):
        plot_theta(s)  # KeyError 'mu_hat' before
    with pytest.raises(ValueError, match=r"unknown target\(s\) \['nope'\]"):
        plot_summary(s, targets=["nope"])


def test_an_unfinished_store_says_so(tmp_path):
    from bayescv.compare import load_study
    from bayescv.compare._store import StudyStore

    store = StudyStore(tmp_path / "s.nc")
    store.parts.mkdir()
    store.manifest.write_text("{}")
    (store.parts / "part-000000.nc").write_bytes(b"")
    with pytest.raises(ValueError, match=r"not finished \(1 part file"):
        load_study(tmp_path / "s.nc")


def test_summary_mode_says_which_options_it_ignores(tmp_path, study, capsys):
    path = tmp_path / "s.nc"
    study.to_netcdf(path, engine="h5netcdf")  # the engine bayescv writes with
    assert main(["study", "--summary", str(path), "--n-replicates", "5"]) == 0
    assert "note: --n-replicates ignored" in capsys.readouterr().err


def test_summary_table_without_the_reference_method_shows_absolute_widths():
    st = run_study(TINY, methods=["theta_B", "bayle_within"], n_replicates=3, random_state=0)
    text = summary_table_of(st)
    assert "widths relative to" not in text  # naive_points, the reference, was not run
    assert "mean width" in text


def summary_table_of(st):
    from bayescv.compare import summary_table

    return summary_table(summarize(st))


def test_an_option_given_twice_is_refused(capsys):
    argv = ["study", "--methods", "closed_form", "--n-replicates", "2", "--no-progress",
            "--option", "closed_form.kind=t", "--option", "closed_form.kind=normal"]  # fmt: skip
    assert main(argv) == 2
    assert "closed_form.kind given twice" in capsys.readouterr().err
