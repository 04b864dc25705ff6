"""Bad input at the public entry points that take losses, fold scores or their options.

Each row is an input that was silently wrong or crashed with an unhelpful message before this
sweep: it must now raise the named exception, with words that name the problem or the way
out. The Bayesian rows must refuse before any sampling (the sampler is replaced by one that
fails the test).
"""

from __future__ import annotations

import importlib

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from bayescv import classical
from bayescv.fold_scores import fold_table, from_long_frame, validate_fold_table
from bayescv.learner_comparison import compare_learners, compare_several, correlated_ttest
from bayescv.losses import from_arrays, stack_replicates
from bayescv.moments import block_moments, block_sums

BLOCKS = np.repeat([0, 1, 2], 4)


def _table(loss_name: str = "unknown", blocks=BLOCKS, seed: int = 0) -> xr.Dataset:
    rng = np.random.default_rng(seed)
    return from_arrays(rng.random(len(blocks)), blocks, loss_name=loss_name)


def _edited(value: float) -> xr.Dataset:
    """A valid table whose fourth loss was edited afterwards (the builders refuse it)."""
    table = _table().copy(deep=True)
    table["loss"].values[3] = value
    return table


def _folds() -> xr.Dataset:
    rng = np.random.default_rng(1)
    return fold_table(rng.random((3, 10)), learners=["a", "b", "c"], greater_is_better=False)


# ------------------------------------------------------------ losses edited after building


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize(
    "call",
    [
        lambda t: classical.cv_intervals(t, ["naive_points"]),  # inf: OverflowError before
        classical.variance_estimates,  # NaN: NaN thetas without a flag before
        block_moments,  # NaN: NaN sums before
    ],
    ids=["cv_intervals", "variance_estimates", "block_moments"],
)
def test_a_non_finite_loss_is_refused_by_name(call, value):
    with pytest.raises(ValueError, match=r"1 NaN or infinite value\(s\), the first at position 3"):
        call(_edited(value))


def test_block_sums_refuse_an_infinite_loss_instead_of_overflowing():
    with pytest.raises(ValueError, match="NaN or infinite"):
        block_sums(np.array([1.0, np.inf, 2.0, 3.0]), np.array([0, 2]))


def test_an_empty_table_is_refused_by_name():
    with pytest.raises(ValueError, match="empty input"):
        classical.cv_intervals(_table().isel(obs=slice(0, 0)))


def test_a_block_of_one_point_in_an_edited_table_is_named():
    table = _table().assign_coords(block=("obs", np.r_[7, np.ones(11, int)]))
    with pytest.raises(ValueError, match=r"block\(s\) \[7\] have 1 point.*fewer folds"):
        classical.cv_intervals(table, ["naive_points"])


def test_equal_size_expectation_on_unequal_sizes_names_the_way_out():
    with pytest.raises(ValueError, match=r"needs equal block sizes.*theta_A_weighted"):
        classical.expected_estimates([3, 4, 5], 0.3, 0.2, 0.0, 0.0, estimators=["theta_A"])


# ------------------------------------------------------------------ bootstrap of other data


@pytest.mark.parametrize(
    ("boot_blocks", "boot_loss", "words"),
    [
        (np.repeat([5, 6, 7], 4), "squared", "has blocks"),  # another partition
        (BLOCKS, "absolute", r"another loss \('absolute'\)"),  # another loss
    ],
)
def test_a_bootstrap_table_of_other_data_is_refused(boot_blocks, boot_loss, words):
    observed = _table("squared")
    reps = [_table(boot_loss, boot_blocks, seed=s) for s in range(3)]
    boot = stack_replicates(reps, replicate_kind="bootstrap")
    with pytest.raises(ValueError, match=words):
        classical.cv_intervals(observed, ["bootstrap"], bootstrap=boot)


# ----------------------------------------------------------------------- fold-score tables


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"greater_is_better": "False"}, "greater_is_better must be True or False"),
        ({"greater_is_better": False, "runs": 2.5}, "runs must be a positive integer"),
        ({"greater_is_better": False, "runs": True}, "runs must be a positive integer"),
        ({"greater_is_better": False, "n_test": np.full(10, 5.0)}, "n_test and n_train"),
    ],
)
def test_fold_table_options_that_were_silently_misread(kwargs, words):
    scores = np.random.default_rng(2).random((2, 10))
    with pytest.raises(ValueError, match=words):
        fold_table(scores, **kwargs)


@pytest.mark.parametrize(
    ("scores", "words"),
    [
        (np.zeros((2, 6)) + 1j, "must be real"),
        ([[0.1, 0.2, 0.3], [0.1, 0.2]], "ragged"),
        (np.zeros((0, 6)), "empty input"),
        (np.zeros((0, 2, 6)), "empty input"),
    ],
    ids=["complex", "ragged", "no learner", "no data set"],
)
def test_fold_table_scores_that_were_cast_or_accepted(scores, words):
    with pytest.raises(ValueError, match=words):
        fold_table(scores, greater_is_better=False)


def _long() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    return pd.DataFrame(
        {"learner": ["a"] * 5 + ["b"] * 5, "fold": list(range(5)) * 2, "score": rng.random(10)}
    )


@pytest.mark.parametrize(
    ("column", "value"), [("fold", np.nan), ("learner", None)], ids=["NaN fold", "None learner"]
)
def test_from_long_frame_refuses_a_row_without_its_label(column, value):
    # Before: a NaN fold dropped the row and filled its cell with 0; None gave a KeyError.
    frame = _long()
    frame.loc[0, column] = value
    with pytest.raises(ValueError, match=f"column '{column}' has 1 missing label"):
        from_long_frame(frame, greater_is_better=True)


def test_from_long_frame_refuses_an_empty_frame():
    with pytest.raises(ValueError, match="empty input"):
        from_long_frame(_long().iloc[:0], greater_is_better=True)


def test_a_loss_table_given_as_a_fold_table_gets_the_recipe():
    with pytest.raises(ValueError, match="from_loss_tables"):
        validate_fold_table(_table())


# --------------------------------------------------------------------- learner comparisons


@pytest.mark.parametrize("level", ["0.9", None])
@pytest.mark.parametrize(
    "call",
    [
        lambda t, level: compare_learners(t, level=level),
        lambda t, level: correlated_ttest(t, level=level),
        lambda t, level: compare_several(t, level=level, n_draws=10),
    ],
    ids=["compare_learners", "correlated_ttest", "compare_several"],
)
def test_a_level_that_is_not_a_number_gets_a_value_error(call, level):
    with pytest.raises(ValueError, match=r"level must be a number in \(0, 1\)"):
        call(_folds(), level)


@pytest.mark.parametrize("n_draws", [2.5, "10"])
def test_compare_several_refuses_a_count_of_draws_that_is_not_an_integer(n_draws):
    with pytest.raises(ValueError, match="n_draws must be an integer"):
        compare_several(_folds(), n_draws=n_draws)


# --------------------------------------------------------------- Bayesian, before sampling


@pytest.fixture
def no_sampling(monkeypatch):
    """Make any fit fail the test: refusals must come before the sampler."""
    pytest.importorskip("pymc")
    # The modules themselves: bayescv.bayes binds the names fit and paired_comparison.
    datasets, fit_module, paired = (
        importlib.import_module(f"bayescv.bayes.{name}") for name in ("datasets", "fit", "paired")
    )

    def sampled(*args, **kwargs):
        raise AssertionError("sampled before refusing the input")

    monkeypatch.setattr(paired, "fit", sampled)
    monkeypatch.setattr(fit_module, "collapse", sampled)
    monkeypatch.setattr(datasets, "datasets_stats", sampled)


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"rope": "0.1"}, "rope must be a finite number"),  # TypeError before
        ({"rope": True}, "rope must be a finite number"),  # fitted with rope 1 before
        ({"rope": 0.0, "level": 1.5}, "level must be a number in"),  # after the fit before
    ],
)
def test_bayes_paired_comparison_checks_rope_and_level_first(no_sampling, kwargs, words):
    from bayescv.bayes import paired_comparison

    with pytest.raises(ValueError, match=words):
        paired_comparison(_table(), _table(seed=1), **kwargs)


def test_compare_datasets_refuses_a_level_that_is_not_a_number(no_sampling):
    from bayescv.bayes import compare_datasets

    with pytest.raises(ValueError, match="level must be a number in"):
        compare_datasets(np.zeros((3, 10)), level="0.9")


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"priors": "weak"}, TypeError, "priors must be a bayescv.bayes.Priors"),
        ({"rhat_max": "1.01"}, ValueError, "rhat_max must be a number >= 1"),
        ({"ess_min": -1.0}, ValueError, "ess_min must be a number >= 0"),
    ],
)
def test_fit_checks_its_options_before_sampling(no_sampling, kwargs, error, words):
    from bayescv.bayes import fit

    with pytest.raises(error, match=words):
        fit(_table(), likelihood="gaussian", **kwargs)


@pytest.mark.parametrize("name", ["posterior_intervals", "predictive_check"])
def test_a_loss_table_given_for_a_fit_result_names_fit(name):
    pytest.importorskip("pymc")
    import bayescv.bayes

    with pytest.raises(TypeError, match=r"for a loss table call fit\(table\) first"):
        getattr(bayescv.bayes, name)(_table())


# Left by the sweep, fixed after it: each was accepted (silently wrong) or crashed unhelpfully.


def test_complex_differences_are_refused_by_the_datasets_model():
    from bayescv.bayes.datasets_model import datasets_stats

    real = np.arange(15.0).reshape(3, 5) % 4
    with pytest.raises(ValueError, match="diff must be real differences"):
        datasets_stats(real + 0j)  # numpy would drop the imaginary part with a warning only
    with pytest.raises(ValueError, match="data set 1 must be real differences"):
        datasets_stats([real[0], real[1] + 1j])


def test_from_elpd_names_its_blocks_choices_for_a_misspelt_string():
    from bayescv.losses import from_elpd

    with pytest.raises(ValueError, match="blocks must be 'pairs' or the block label"):
        from_elpd(np.ones(6), blocks="Pairs")


def test_a_missing_fold_label_is_called_a_fold_label():
    from bayescv.cv import losses_from_predictions

    y = np.array([0, 1] * 6)
    folds = np.repeat([0.0, 1.0], 6)
    folds[3] = np.nan
    with pytest.raises(ValueError, match=r"^folds \(one fold label per sample\).*row 3"):
        losses_from_predictions(y, y, folds, loss="zero_one")


def test_a_bootstrap_table_that_no_method_uses_is_refused():
    boot = stack_replicates([_table(seed=s) for s in range(3)], replicate_kind="bootstrap")
    with pytest.raises(ValueError, match="do not use it: add 'bootstrap'"):
        classical.cv_intervals(_table(), ["naive_points"], bootstrap=boot)
    out = classical.cv_intervals(_table(), ["naive_points", "bootstrap"], bootstrap=boot)
    assert out["method_name"].values.tolist() == ["naive_points", "bootstrap"]


def test_a_mapping_of_tables_with_learners_is_refused_rather_than_renamed():
    tables = {"lr": _table(seed=1), "tree": _table(seed=2)}
    with pytest.raises(ValueError, match=r"keys \['lr', 'tree'\] already name"):
        compare_learners(tables, learners=["tree", "lr"], methods=["naive_points"])


def test_add_tail_flags_names_what_it_takes():
    from bayescv.tails import add_tail_flags

    with pytest.raises(TypeError, match="takes an interval Dataset"):
        add_tail_flags(_table(), 0.8)


def test_get_loss_without_an_estimator_gives_the_documented_default():
    # The docstring: None gives "squared" for anything that is not a classifier; an absent
    # estimator raised AttributeError inside scikit-learn's is_classifier.
    from bayescv.cv import get_loss

    assert get_loss(None).name == "squared"


def test_a_loss_is_called_on_arrays_even_when_given_lists():
    # __call__ documents array-like inputs: a user loss written for arrays gets arrays.
    from bayescv.cv import Loss

    loss = Loss("sq", lambda t, p: (t - p) ** 2)
    np.testing.assert_array_equal(loss([1.0, 2.0], [0.0, 0.0]), [1.0, 4.0])  # (1-0)², (2-0)²
