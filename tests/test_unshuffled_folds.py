"""The warning for a KFold or StratifiedKFold passed as ``cv`` that does not shuffle.

scikit-learn's ``KFold(k)`` and ``StratifiedKFold(k)`` default to ``shuffle=False`` and cut the
rows into folds in their stored order; the data here are sorted by class, as many data sets
are, so those folds are not a random partition.
"""

import re
import warnings

import numpy as np
import pytest
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.model_selection import (
    GroupKFold,
    KFold,
    LeaveOneGroupOut,
    RepeatedKFold,
    StratifiedKFold,
)

from bayescv import bootstrap_cv_losses, cross_val_losses, importance_weighted_cv
from bayescv.cv import UnshuffledFoldsWarning

N = 32
X = np.random.default_rng(0).normal(size=(N, 2))
Y = np.repeat([0, 1], N // 2)  # sorted by class
# Pairs of rows share a source (and a class): a bootstrap within sources keeps each pair's
# copies next to each other, and 4 unshuffled folds of 8 rows (4 per class) cut the rows
# only between pairs, so no copy lands in both a training and a test set.
PAIRS = np.repeat(np.arange(N // 2), 2)
UNSHUFFLED = [KFold(4), StratifiedKFold(4)]
IDS = ["KFold", "StratifiedKFold"]


class _FitRefuses(RegressorMixin, BaseEstimator):
    """A regressor whose ``fit`` raises, to show that nothing was fitted before a warning."""

    def fit(self, X, y):
        raise RuntimeError("fit was called")

    def predict(self, X):  # pragma: no cover - never reached: fit raises first
        return np.zeros(len(X))


def _only(record, category=UnshuffledFoldsWarning):
    """The one warning of `category` among those recorded (failing if there are more)."""
    (caught,) = [w for w in record if issubclass(w.category, category)]
    return caught


@pytest.mark.parametrize("cv", UNSHUFFLED, ids=IDS)
def test_cross_val_losses_warns_once_at_the_callers_line(cv):
    """An unshuffled KFold or StratifiedKFold warns once, naming the splitter and the fix.

    The warning must point at the user's call (this file), not at the package, and say that
    the folds follow the stored order and what to pass instead.
    """
    with pytest.warns(UnshuffledFoldsWarning, match=re.escape(repr(cv))) as record:
        table = cross_val_losses(LogisticRegression(), X, Y, cv=cv, random_state=0)
    caught = _only(record)
    assert caught.filename == __file__
    message = str(caught.message)
    assert "stored order" in message
    assert "random order" in message
    assert f"{type(cv).__name__}(n_splits=4, shuffle=True)" in message
    assert "int cv" in message
    assert table.attrs["cv"] == repr(cv)  # the splitter is still used as given


@pytest.mark.parametrize("cv", UNSHUFFLED, ids=IDS)
def test_bootstrap_cv_losses_warns_once_at_the_callers_line(cv):
    """bootstrap_cv_losses warns once per call, not once per resample, at the user's line.

    Its advice is an int cv: a shuffled KFold would put copies of one point in both the
    training and the test set, which bootstrap_cv_losses refuses.
    """
    with pytest.warns(UnshuffledFoldsWarning, match=re.escape(repr(cv))) as record:
        table = bootstrap_cv_losses(
            LogisticRegression(), X, Y, groups=PAIRS, cv=cv, n_bootstrap=3, random_state=0
        )
    caught = _only(record)
    assert caught.filename == __file__
    assert "int cv" in str(caught.message)
    assert "shuffle=True" not in str(caught.message)
    assert table.sizes["replicate"] == 3


@pytest.mark.parametrize(
    "run",
    [
        lambda: cross_val_losses(_FitRefuses(), X, Y, cv=KFold(4)),
        lambda: bootstrap_cv_losses(_FitRefuses(), X, Y, groups=PAIRS, cv=KFold(4)),
    ],
    ids=["cross_val_losses", "bootstrap_cv_losses"],
)
def test_the_warning_comes_before_any_fit(run):
    """Raised as an error, the warning stops the call before the first fit.

    A user who turns warnings into errors must not wait for every fold to be fitted; the
    estimator's ``fit`` raises, so reaching it would give a RuntimeError instead.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnshuffledFoldsWarning)
        with pytest.raises(UnshuffledFoldsWarning):
            run()


def test_a_call_through_another_function_still_points_at_the_user():
    """importance_weighted_cv runs cross_val_losses for the user: the warning points here.

    The package's own frames are skipped however deep the call, so the warning names the
    line that passed the splitter.
    """
    with pytest.warns(UnshuffledFoldsWarning) as record:
        importance_weighted_cv(
            Ridge(), X, Y.astype(float), weights=np.ones(N), cv=KFold(4), random_state=0
        )
    assert _only(record).filename == __file__


@pytest.mark.parametrize(
    ("cv", "groups"),
    [
        (4, None),
        (KFold(4, shuffle=True, random_state=0), None),
        (StratifiedKFold(4, shuffle=True), None),
        (list(KFold(4).split(X)), None),
        (GroupKFold(4), PAIRS),
        (LeaveOneGroupOut(), np.repeat(np.arange(4), N // 4)),
        (RepeatedKFold(n_splits=4, n_repeats=2, random_state=0), None),
    ],
    ids=["int", "shuffled", "shuffled-unseeded", "list", "GroupKFold", "LOGO", "repeated"],
)
def test_no_warning_for_other_cv(cv, groups):
    """Only an unshuffled KFold or StratifiedKFold warns.

    An int is shuffled by the package; a shuffling splitter is random; a list of (train,
    test) pairs cannot be told from a random partition; group splitters are meant to follow
    the groups; a repeated splitter shuffles.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cross_val_losses(LogisticRegression(), X, Y, groups=groups, cv=cv, random_state=0)


def test_no_warning_for_int_cv_in_bootstrap():
    """bootstrap_cv_losses with an int cv (its random, copy-keeping folds) does not warn."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bootstrap_cv_losses(LogisticRegression(), X, Y, cv=4, n_bootstrap=2, random_state=0)


@pytest.mark.parametrize("cv", UNSHUFFLED, ids=IDS)
def test_repeats_of_an_unshuffled_splitter_are_refused_without_a_warning(cv):
    """n_repeats > 1 with an unshuffled splitter keeps its ValueError and does not warn first.

    Every repeat would repeat the same partition, which is an error; a warning before it
    would say less, and would hide the error where warnings are errors.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="does not shuffle, so every replicate would repeat"):
            cross_val_losses(LogisticRegression(), X, Y, cv=cv, n_repeats=2)


def test_losses_from_predictions_warns_for_unshuffled_folds_and_says_to_predict_again():
    """Predictions made on unshuffled folds: the warning, pointed at the caller, advises
    running cross_val_predict again with a shuffled splitter; a shuffled one is silent."""
    from bayescv.cv import losses_from_predictions

    y = np.array([0, 1] * 10)
    with pytest.warns(UnshuffledFoldsWarning, match="run cross_val_predict again") as caught:
        losses_from_predictions(y, y, StratifiedKFold(4), loss="zero_one")
    assert len(caught) == 1
    assert caught[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        losses_from_predictions(y, y, KFold(4, shuffle=True, random_state=0), loss="zero_one")
        losses_from_predictions(y, y, np.repeat(np.arange(4), 5), loss="zero_one")
