"""Coverage studies as a researcher runs them: their own scenario, known truths, the CLI.

Each test reproduces a defect found by using :mod:`bayescv.compare` with default arguments.
"""

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression

from bayescv.cli import main
from bayescv.compare import (
    BatesLogistic,
    Draw,
    GaussianLinear,
    Population,
    Scenario,
    _replicate,
    run_study,
    summarize,
)

TINY = BatesLogistic(n=40, p=3, n_splits=4)


class _OnePopulation(Population):
    """y = x + ε, ε ~ N(0, 1): the squared error of w, b is 1 + (1 − w)² + b²."""

    def __init__(self, n: int) -> None:
        self.weights = np.ones(1)
        self.source_index = np.zeros(n, dtype=np.int64)

    def source_errors(self, model, loss, rng):
        w, b = float(model.coef_[0]), float(model.intercept_)
        return np.array([1.0 + (1.0 - w) ** 2 + b**2])


class UserScenario(Scenario):
    """A scenario as docs/compare.md says to write one; ``design``/``params`` overridable."""

    name = "user-scenario"
    n_splits = 4

    def __init__(self, n: int = 24) -> None:
        self.n = n

    def draw(self, rng):
        x = rng.standard_normal((self.n, 1))
        y = x[:, 0] + rng.standard_normal(self.n)
        return Draw(x, y, None, _OnePopulation(self.n))

    def default_learner(self):
        return LinearRegression()

    def params(self):
        return {"n": self.n}


def test_user_scenario_runs_and_its_truth_is_exact():
    study = run_study(UserScenario(), methods=["naive_points"], n_replicates=3, random_state=0)
    assert study.attrs["scenario"] == "user-scenario"
    # err_xy of each replicate is 1 + (1 − w)² + b² of the OLS fit on its own data
    truth = study["truth"].sel(target="err_xy").values
    assert np.all(truth >= 1.0)


def test_a_known_truth_is_used_when_the_study_has_no_per_replicate_truth():
    # Before: summarize(study, truths={"err": ...}) of a study run with truths=[] dropped the
    # known Err silently (and targets=["err"] said "the study has no truth for ['err']").
    study = run_study(TINY, methods=["naive_points"], n_replicates=6, random_state=0, truths=[])
    known = 0.4
    summary = summarize(study, truths={"err": known})
    assert "err" in summary["target"].values.tolist()
    lower, upper = study["lower"].values[:, 0], study["upper"].values[:, 0]
    # coverage is the share of replicates whose interval holds the truth (its definition)
    expected = np.mean((lower <= known) & (known <= upper))
    assert float(summary["coverage"].sel(method_name="naive_points", target="err")) == expected
    assert '"err": 0.4' in summary.attrs["truths"]
    only = summarize(study, targets=["err"], truths={"err": known})
    assert only["target"].values.tolist() == ["err"]


@pytest.mark.parametrize(
    ("attr", "value", "words"),
    [
        ("design", "fixed", "UserScenario.design must be one of"),
        ("scheme", "loso", "UserScenario.scheme must be one of ['random', 'source']"),
    ],
)
def test_a_misspelt_design_or_scheme_is_refused_before_any_replicate(attr, value, words):
    # Before: design "fixed" ran every replicate, then summarize raised KeyError: 'fixed';
    # scheme "loso" failed inside the first replicate with the loss table's message.
    scenario = UserScenario()
    setattr(scenario, attr, value)
    scenario.draw = None  # nothing may run
    with pytest.raises(ValueError, match=words.replace("[", r"\[").replace("]", r"\]")):
        run_study(scenario, methods=["naive_points"], n_replicates=2, random_state=0)


def test_summarize_names_an_unknown_design():
    study = run_study(TINY, methods=["naive_points"], n_replicates=3, random_state=0)
    study = study.assign_coords(design=("replicate", np.full(3, "fixed")))
    with pytest.raises(ValueError, match="the study's design 'fixed' is none of"):
        summarize(study)


def test_params_that_are_not_json_are_refused_with_the_way_out():
    # Before: TypeError: Object of type int64 is not JSON serializable, from json, naming
    # neither the scenario nor params().
    scenario = UserScenario()
    scenario.params = lambda: {"n": np.int64(24)}
    with pytest.raises(TypeError, match=r"UserScenario.params\(\) must return a JSON-serial"):
        run_study(scenario, methods=["naive_points"], n_replicates=2, random_state=0)


def test_the_tail_flags_import_is_not_timed_as_a_method(monkeypatch):
    # Before: the closed-form batch imported ArviZ (for the heavy-tail k̂ of unbounded
    # losses) on its first call in each worker, adding about 2.4 s to that replicate's
    # runtime: "ms/rep" of naive_points read 822 for 3 replicates of multi-source-student-t.
    calls = []
    monkeypatch.setattr(_replicate, "_import_arviz", lambda: calls.append(1))
    run_study(GaussianLinear(n=30, n_splits=3), methods=["naive_points"], n_replicates=2, n_jobs=1)
    assert calls  # squared losses are unbounded: imported before the methods are timed
    calls.clear()
    run_study(TINY, methods=["naive_points"], n_replicates=2, n_jobs=1)
    assert not calls  # zero-one losses are bounded: no k̂, no import


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--level", "1.5"], "--level must be a number in (0, 1), got 1.5"),
        (["--random-state", "-1"], "--random-state must be in [0, 2**63), got -1"),
    ],
)
def test_cli_refuses_a_bad_level_or_seed_before_announcing_the_run(argv, words, capsys):
    # Before: the note on the costly methods of "--methods all" came first, then the error.
    code = main(["study", "--n-replicates", "3", "--no-progress", *argv])
    captured = capsys.readouterr()
    assert code == 2
    assert captured.err == f"bayescv study: error: {words}\n"


def test_cli_takes_method_names_with_spaces_after_the_commas(capsys):
    # Before: --methods "naive_points, theta_A" failed: unknown method ' theta_A'.
    argv = ["study", "--methods", "naive_points, theta_A", "--n-replicates", "2", "--no-progress"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "naive_points" in out
    assert "theta_A" in out


def test_a_varying_number_of_sources_is_refused_with_the_way_out():
    # Before: "replicates differ in their number of CV blocks: [2, 3]", without what to do.
    class VaryingSources(UserScenario):
        design, scheme = "sources_redrawn", "source"

        def draw(self, rng):
            k = int(rng.integers(2, 4))  # 2 or 3 sources of 8 points
            x = rng.standard_normal((8 * k, 1))
            return Draw(x, x[:, 0], np.repeat(np.arange(k), 8), _OnePopulation(8 * k))

    kwargs = {"methods": ["naive_points"], "n_replicates": 8, "truths": [], "random_state": 0}
    # written together (one flush) or apart (flushed after each replicate, then concatenated)
    for flush_interval in (60.0, 0.0):
        with pytest.raises(ValueError, match="draw the same number of sources"):
            run_study(VaryingSources(), flush_interval=flush_interval, **kwargs)


class _RedrawnSources(UserScenario):
    """Two sources redrawn per replicate, held out in turn; no new_source_error written."""

    name = "user-redrawn"
    design, scheme, n_splits = "sources_redrawn", "source", 2

    def draw(self, rng):
        draw = super().draw(rng)
        return Draw(draw.X, draw.y, np.repeat([0, 1], self.n // 2), draw.population)


def test_a_population_without_new_sources_names_the_truths_to_ask_for():
    with pytest.raises(NotImplementedError, match=r"implement new_source_error.*'err_xy'"):
        run_study(_RedrawnSources(), methods=["naive_points"], n_replicates=2, random_state=0)
    study = run_study(
        _RedrawnSources(), methods=["naive_points"], n_replicates=2, random_state=0,
        truths=["err_xy", "kfold_test_error"],
    )  # fmt: skip
    assert study["truth"].sel(target="err_xy").notnull().all()


def test_a_study_already_stored_draws_no_empty_progress_bar(tmp_path, capsys):
    store = tmp_path / "s.nc"
    run_study(TINY, methods=["naive_points"], n_replicates=2, random_state=0, store=store)
    capsys.readouterr()
    again = run_study(
        TINY, methods=["naive_points"], n_replicates=2, random_state=0, store=store,
        progress=True,
    )  # fmt: skip
    assert again.sizes["replicate"] == 2
    assert "0rep" not in capsys.readouterr().err  # tqdm wrote "study: 0rep [...]" here
