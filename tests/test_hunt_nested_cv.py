"""Defects found by using nested CV and the CV runner as a new user would (one test each)."""

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import Ridge

from bayescv.cli import main
from bayescv.cv import bootstrap_cv_losses, cross_val_losses
from bayescv.nested import nested_cv


@pytest.fixture
def regression():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 3))
    y = X @ [1.0, -1.0, 0.5] + rng.standard_normal(30)
    return X, y


def test_repeats_of_the_default_leave_one_source_out_are_refused(regression):
    # cv=None with groups is leave-one-source-out: one partition, so n_repeats=2 gave two
    # identical "independent" replicates (an explicit LeaveOneGroupOut() was refused).
    X, y = regression
    groups = np.arange(30) % 5
    with pytest.raises(ValueError, match="leave-one-source-out has a single partition"):
        cross_val_losses(Ridge(), X, y, groups=groups, n_repeats=2, random_state=0)
    # an int cv repeats shuffled GroupKFold: the replicates differ
    table = cross_val_losses(Ridge(), X, y, groups=groups, cv=3, n_repeats=2, random_state=0)
    assert table.sizes["replicate"] == 2
    assert not np.array_equal(table["index"][0], table["index"][1])
    # bootstrap replicates resample the data: leave-one-source-out stays the default there
    boot = bootstrap_cv_losses(Ridge(), X, y, groups=groups, n_bootstrap=2, random_state=0)
    assert boot.attrs["cv"] == "LeaveOneGroupOut()"


@pytest.mark.parametrize("runner", [cross_val_losses, bootstrap_cv_losses])
def test_zero_one_loss_on_a_continuous_target_is_refused_by_the_cv_runner(regression, runner):
    # A regressor's predictions never equal a continuous target: every zero-one loss was 1,
    # a table (and intervals "1 [1, 1]") that looks like a result. nested_cv refused it.
    X, y = regression
    kwargs = {"n_bootstrap": 2} if runner is bootstrap_cv_losses else {}
    with pytest.raises(ValueError, match=r"continuous target .* compares class labels"):
        runner(Ridge(), X, y, cv=3, loss="zero_one", random_state=0, **kwargs)


@pytest.mark.parametrize(("level", "shown"), [(0.975, "97.5%"), (0.999, "99.9%"), (0.9, "90%")])
def test_cli_nested_header_states_the_level_unrounded(tmp_path, capsys, regression, level, shown):
    # The header rounded the level to whole percent: --level 0.999 printed "100% interval".
    X, y = regression
    frame = pd.DataFrame(X, columns=["x1", "x2", "x3"]).assign(y=y)
    path = tmp_path / "data.csv"
    frame.to_csv(path, index=False)
    argv = ["nested", str(path), "--target", "y", "--n-splits", "3", "--n-repeats", "1"]
    assert main([*argv, "--level", str(level), "--no-progress"]) == 0
    header = capsys.readouterr().out.splitlines()[0]
    assert f": {shown} interval for err_xy" in header


def test_nested_cv_names_an_infinite_feature(regression):
    # nested_cv did not check X before the fits, as cross_val_losses does: an infinite
    # feature met in a training set was reported as one "whose squares overflow float64"
    # (advice: rescale the features), one met in a test set by scikit-learn's predict.
    X, y = regression
    X = X.copy()
    X[0, 1] = np.inf  # in the first training set: the fit fails first
    with pytest.raises(ValueError, match=r"X contains 1 infinite value\(s\)") as info:
        nested_cv(Ridge(), X, y, n_splits=3, n_repeats=1, random_state=0)
    assert "squares overflow" not in str(info.value)
