"""New-user hunt in the batched engine, the fold fitting core and the learner catalogue.

Every reference value is scikit-learn's own: a clone of the learner fitted on each training
set (:func:`_clone_loop`), or the error scikit-learn raises for the same input.
"""

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge
from sklearn.model_selection import KFold, StratifiedKFold, cross_val_predict
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import bayescv
from bayescv.cv import get_loss, losses_on_folds

_FOLDS = list(KFold(5, shuffle=True, random_state=0).split(np.zeros(60)))


def _data(seed=0, n=60):
    """Features on different scales and offsets (the scaler matters), a linear target."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)) * [1.0, 5.0, 2.0] + [3.0, -1.0, 10.0]
    y = X @ [1.0, 2.0, 3.0] + 5.0 + rng.normal(size=n)
    return X, y


def _clone_loop(est, X, y, folds, loss):
    """Per-point losses of a clone of `est` fitted on each training set, in fold order."""
    out = []
    for train, test in folds:
        model = clone(est).fit(X[train], y[train])
        pred = getattr(model, loss.response_method)(X[test])
        out.append(loss(y[test], pred, getattr(model, "classes_", None)))
    return out


@pytest.mark.parametrize(
    "model", [Ridge(fit_intercept=False), LinearRegression(fit_intercept=False)]
)
def test_scaler_then_model_without_intercept_matches_scikit_learn(model):
    """A StandardScaler before a model with fit_intercept=False centres the features but not
    the target; the batched engine fitted it as if the scaler did not centre (mean squared
    loss 1.26 where scikit-learn's fits give 25.6). Its losses must be scikit-learn's."""
    X, y = _data()
    est = make_pipeline(StandardScaler(), model)
    squared = get_loss("squared")
    got, engine = losses_on_folds(est, X, y, _FOLDS, squared)
    assert engine == "batched"
    for a, b in zip(got, _clone_loop(est, X, y, _FOLDS, squared), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-9)


def test_scaler_then_model_without_intercept_counts_bootstrap_copies():
    """Bootstrap copies count twice in the scaler's means too: batched and per-fit agree."""
    X, y = _data(1)
    est = make_pipeline(StandardScaler(), Ridge(fit_intercept=False))
    kw = {"cv": 5, "n_bootstrap": 3, "random_state": 0}
    fast = bayescv.bootstrap_cv_losses(est, X, y, **kw)
    slow = bayescv.bootstrap_cv_losses(est, X, y, batched=False, **kw)
    assert fast.attrs["fit_engine"] == "batched"
    np.testing.assert_allclose(fast["loss"].values, slow["loss"].values, rtol=1e-9)


def test_scaler_then_logistic_without_intercept_matches_scikit_learn():
    """Logistic regression on features centred per training set, without an intercept, is
    not the batched objective (log loss 0.519 against scikit-learn's 0.567): it goes to
    scikit-learn, whose fits are then exactly those of the clone loop."""
    X, y = _data(2)
    t = (y > np.median(y)).astype(int)
    est = make_pipeline(StandardScaler(), LogisticRegression(fit_intercept=False))
    log_loss = get_loss("log_loss")
    got, engine = losses_on_folds(est, X, t, _FOLDS, log_loss, batched=True)
    assert engine == "per-fit"
    for a, b in zip(got, _clone_loop(est, X, t, _FOLDS, log_loss), strict=True):
        np.testing.assert_array_equal(a, b)


def test_multiclass_logistic_regression_reports_the_per_fit_engine():
    """Only binary logistic regression is batched: with three classes every fold is fitted
    by scikit-learn, and the table's fit_engine said "batched" all the same."""
    X, y = _data(3)
    y3 = np.digitize(y, np.quantile(y, [1 / 3, 2 / 3]))
    table = bayescv.cross_val_losses(LogisticRegression(), X, y3, cv=5, batched=True)
    assert table.attrs["fit_engine"] == "per-fit"


@pytest.mark.parametrize(
    "est",
    [
        Ridge(fit_intercept="no"),
        LinearRegression(fit_intercept=0),
        Ridge(alpha="1"),
        LogisticRegression(C="1"),
        LogisticRegression(solver="foo"),
        make_pipeline(StandardScaler(with_mean="yes"), Ridge()),
    ],
    ids=repr,
)
def test_settings_scikit_learn_refuses_are_refused_on_the_batched_path(est):
    """scikit-learn's fit refuses these settings; the batched engine read fit_intercept="no"
    as True (an intercept the user turned off) or crashed in numpy (C="1": "'>' not
    supported"). Both paths now raise scikit-learn's own InvalidParameterError."""
    X, y = _data(4)
    target = (y > np.median(y)).astype(int) if "Logistic" in repr(est) else y
    for batched in (True, False):
        with pytest.raises(ValueError, match="parameter of"):
            bayescv.cross_val_losses(est, X, target, cv=5, batched=batched)


def test_losses_on_folds_reads_boolean_masks_and_negative_indices():
    """A boolean mask and negative indices select rows as numpy indexing (and the per-fit
    path) reads them; the batched engine counted a mask's True/False as rows 1 and 0 and
    refused negative indices."""
    X, y = _data(5)
    squared = get_loss("squared")
    reference, _ = losses_on_folds(Ridge(), X, y, _FOLDS, squared, batched=False)
    masks = []
    for train, _ in _FOLDS:
        mask = np.zeros(len(y), dtype=bool)
        mask[train] = True
        masks.append((mask, ~mask))
    negative = [(train - len(y), test - len(y)) for train, test in _FOLDS]
    for folds in (masks, negative):
        got, engine = losses_on_folds(Ridge(), X, y, folds, squared)
        assert engine == "batched"
        for a, b in zip(got, reference, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-9)


@pytest.mark.parametrize(
    ("folds", "match"),
    [
        ([(np.arange(10, 61), np.arange(10))], "out of range for 60 samples"),
        ([(np.arange(10, 60.0), np.arange(10))], "integer row indices or a boolean mask"),
        ([(np.ones(59, dtype=bool), np.arange(10))], r"boolean mask of shape \(59,\)"),
        ([(np.array([], dtype=int), np.arange(10))], "empty training set"),
    ],
    ids=["out_of_range", "floats", "short_mask", "empty_train"],
)
def test_losses_on_folds_names_bad_pairs(folds, match):
    """Rows out of range, float indices, a mask of the wrong length and an empty training
    set raise a ValueError naming the pair, on both engines (the batched one said "cannot
    reshape array of size 96" or "Eigenvalues did not converge")."""
    X, y = _data(6)
    for batched in (None, False):
        with pytest.raises(ValueError, match=match):
            losses_on_folds(Ridge(), X, y, folds, get_loss("squared"), batched=batched)


def test_losses_on_folds_refuses_x_and_y_of_different_lengths():
    """X and y of different lengths raise scikit-learn's check_consistent_length error on
    both engines (the batched one failed in matmul)."""
    X, y = _data(7)
    for batched in (None, False):
        with pytest.raises(ValueError, match="inconsistent numbers of samples"):
            losses_on_folds(Ridge(), X, y[:-1], _FOLDS[:1], get_loss("squared"), batched=batched)


def test_an_empty_test_set_gives_no_losses_on_both_engines():
    """A pair with no test rows has no losses: the batched engine returned an empty array,
    the per-fit path raised scikit-learn's "0 sample(s)" error from predict."""
    X, y = _data(8)
    folds = [(np.arange(60), np.array([], dtype=int))]
    for batched in (None, False):
        got, _ = losses_on_folds(Ridge(), X, y, folds, get_loss("squared"), batched=batched)
        assert got[0].shape == (0,)


@pytest.mark.parametrize("case", ["matrix", "no_features", "mixed_names"])
def test_inputs_scikit_learn_refuses_are_refused_by_default(case):
    """np.matrix, X without columns and column names mixing str and int are refused by
    scikit-learn's fit; the batched engine fitted them (an intercept-only model for no
    features), so the result depended on the engine."""
    import pandas as pd

    X, y = _data(9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PendingDeprecationWarning)  # np.matrix's own
        data = {
            "matrix": lambda: np.asmatrix(X),
            "no_features": lambda: X[:, :0],
            "mixed_names": lambda: pd.DataFrame(X, columns=["a", 1, "c"]),
        }[case]()
    errors = (TypeError, ValueError)
    for batched in (None, False):
        with pytest.raises(errors):
            bayescv.cross_val_losses(Ridge(), data, y, cv=5, batched=batched)


def _classification():
    rng = np.random.default_rng(10)
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] + rng.normal(size=60) > 0).astype(int)
    return X, y, StratifiedKFold(5, shuffle=True, random_state=0)


def test_zero_one_loss_of_scores_is_refused():
    """decision_function scores never equal a label: every 0-1 loss was silently 1.0."""
    X, y, cv = _classification()
    scores = cross_val_predict(LogisticRegression(), X, y, cv=cv, method="decision_function")
    with pytest.raises(ValueError, match="not labels of y_true"):
        bayescv.losses_from_predictions(y, scores, cv, loss="zero_one")
    labels = cross_val_predict(LogisticRegression(), X, y, cv=cv)
    table = bayescv.losses_from_predictions(y, labels, cv, loss="zero_one")
    assert float(table["loss"].mean()) == float(np.mean(labels != y))  # the 0-1 loss itself


def test_probability_losses_refuse_scores_and_classes_that_miss_labels():
    """Columns outside [0, 1] (scores, log-probabilities) and classes that do not name the
    labels of y_true read as "the true class got probability 0"; now named for what they
    are."""
    X, y, cv = _classification()
    scores = cross_val_predict(LogisticRegression(), X, y, cv=cv, method="decision_function")
    with pytest.raises(ValueError, match=r"probabilities in \[0, 1\]"):
        bayescv.losses_from_predictions(y, np.c_[-scores, scores], cv, loss="log_loss")
    proba = cross_val_predict(LogisticRegression(), X, y, cv=cv, method="predict_proba")
    with pytest.raises(ValueError, match="not in classes"):
        bayescv.losses_from_predictions(y, proba, cv, loss="log_loss", classes=["no", "yes"])
    with pytest.raises(ValueError, match="must not repeat"):
        bayescv.losses_from_predictions(y, proba, cv, loss="brier", classes=[0, 0])


@pytest.mark.parametrize(
    ("name", "task", "suggestion"),
    [
        ("Ridge", "regression", "did you mean 'ridge'"),
        ("random_forest", "regression", "did you mean 'random-forest'"),
        ("logisitc", None, "did you mean 'logistic'"),
        ("ridge", "Regression", "did you mean 'regression'"),
        ("ridge", "classifier", "did you mean 'classification'"),
    ],
)
def test_make_learner_suggests_the_name_meant(name, task, suggestion):
    """A near miss (case, '_' for '-', a typo) is named in the error, as difflib finds it."""
    with pytest.raises(ValueError, match=suggestion):
        bayescv.make_learner(name, task=task)


def test_make_learner_refuses_a_non_string_name_with_a_value_error():
    """An unhashable name raised TypeError("unhashable type: 'list'") from the dict lookup."""
    with pytest.raises(ValueError, match="unknown learner"):
        bayescv.make_learner(["ridge"], task="regression")


def test_make_learner_without_task_names_both_tasks():
    """The error for a two-task name says which values task= takes."""
    with pytest.raises(ValueError, match="task='classification' or task='regression'"):
        bayescv.make_learner("ridge")


def test_catalogue_learners_match_their_clone_loop():
    """Every catalogue learner, through cross_val_losses on default settings, gives the
    per-point losses of scikit-learn's fits of the same learner on the same folds."""
    X, y = _data(11)
    t = (y > np.median(y)).astype(int)
    for name in bayescv.cv.learners.LEARNERS:
        for task, target in (("regression", y), ("classification", t)):
            try:
                est = bayescv.make_learner(name, task=task, random_state=0)
            except ValueError:
                continue  # a name for the other task only
            loss = get_loss("squared" if task == "regression" else "zero_one")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # convergence notes of the unpenalised fit
                got, _ = losses_on_folds(est, X, target, _FOLDS, loss)
                ref = _clone_loop(est, X, target, _FOLDS, loss)
            for a, b in zip(got, ref, strict=True):
                np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12, err_msg=name)
