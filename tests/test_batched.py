"""The batched fitting engine: the same solutions as scikit-learn, used where it may be.

Reference: scikit-learn itself, run per fold (``LinearRegression`` and ``Ridge`` with their
direct solvers; ``LogisticRegression`` with ``solver="newton-cholesky", tol=1e-12``, whose
optimum the batched Newton steps reach).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification, make_regression
from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge
from sklearn.model_selection import KFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MinMaxScaler, StandardScaler

import bayescv.cv._batched as engine
import bayescv.cv._batched_algebra as algebra
import bayescv.cv._fit as cv_fit
from bayescv.cv import bootstrap_cv_losses, cross_val_losses, get_loss


def _folds(n, k=10, seed=0):
    return list(KFold(k, shuffle=True, random_state=seed).split(np.zeros(n)))


@pytest.mark.parametrize("est", [LinearRegression(), Ridge(alpha=0.1), Ridge(alpha=30.0)])
@pytest.mark.parametrize("intercept", [True, False])
def test_least_squares_equal_scikit_learn(est, intercept):
    X, y = make_regression(120, 15, noise=3.0, random_state=1)
    X = X + 10.0  # a large mean: the centring must hold up
    folds = _folds(120)
    w = engine._counts(folds, 120)
    alpha = getattr(est, "alpha", 0.0)
    coef, b = engine._least_squares(X, y, w, alpha, intercept)
    for k, (tr, _) in enumerate(folds):
        ref = est.set_params(fit_intercept=intercept).fit(X[tr], y[tr])
        np.testing.assert_allclose(coef[k], ref.coef_, rtol=0, atol=1e-6)
        np.testing.assert_allclose(b[k], ref.intercept_, rtol=0, atol=1e-6)


@pytest.fixture
def woodbury_calls(monkeypatch):
    """Count the fits solved by the Woodbury path (it must be the one under test)."""
    calls = []

    def spy(Xa, y, left_out, penalty):
        calls.append(left_out.shape[0])
        return algebra.ridge_by_woodbury(Xa, y, left_out, penalty)

    monkeypatch.setattr(engine, "ridge_by_woodbury", spy)
    return calls


def test_ridge_by_woodbury_equals_each_training_sets_normal_equations(woodbury_calls, monkeypatch):
    # Unequal folds (105 rows in 10 folds: 10 or 11 left out) and a training set of all rows
    # (none left out); reference: each training set's own Gram matrix, solved directly.
    X, y = make_regression(105, 12, noise=2.0, random_state=3)
    folds = [*_folds(105), (np.arange(105), np.arange(5))]
    w = engine._counts(folds, 105)
    for intercept in (False, True):
        coef, b = engine._least_squares(X, y, w, 2.0, intercept)
        ref_coef, ref_b = engine._normal_equations(X, y, w, 2.0, intercept)
        np.testing.assert_allclose(coef, ref_coef, rtol=0, atol=1e-10)
        np.testing.assert_allclose(b, ref_b, rtol=0, atol=1e-10)
    # A fit's arithmetic is its own: the same folds in a different batch, bit for bit.
    coef_some, b_some = engine._least_squares(X, y, w[[3, 10, 7]], 2.0, True)
    np.testing.assert_array_equal(coef_some, coef[[3, 10, 7]])
    np.testing.assert_array_equal(b_some, b[[3, 10, 7]])
    # Nor on the slices a batch is solved in (here one fit each).
    monkeypatch.setattr(algebra, "SLICE_BYTES", 1)
    coef_sliced, b_sliced = engine._least_squares(X, y, w, 2.0, True)
    np.testing.assert_array_equal(coef_sliced, coef)
    np.testing.assert_array_equal(b_sliced, b)
    assert woodbury_calls == [11, 11, 3, 11]


def test_ridge_by_woodbury_at_high_leverage_and_its_fallback(monkeypatch, woodbury_calls):
    # Row 0 alone carries feature 5: without it, the Woodbury system has leverage 1 − 1e-8
    # (1/(1 − h) = 1e8). The training set's own system is as ill-conditioned, and the
    # solution is as accurate as scikit-learn's.
    rng = np.random.default_rng(4)
    X = np.column_stack([rng.normal(size=(60, 5)), np.r_[1e3, np.zeros(59)]])
    y = X[:, :5] @ rng.normal(size=5) + rng.normal(size=60)
    folds = _folds(60)  # 6 rows out, 7 coefficients: the Woodbury path
    w = engine._counts(folds, 60)
    coef, b = engine._least_squares(X, y, w, 1e-2, True)
    assert woodbury_calls == [10]
    for k, (tr, _) in enumerate(folds):
        ref = Ridge(alpha=1e-2).fit(X[tr], y[tr])
        np.testing.assert_allclose(coef[k], ref.coef_, rtol=0, atol=1e-6)
        np.testing.assert_allclose(b[k], ref.intercept_, rtol=0, atol=1e-6)
    # A fit that fails its residual check is solved by its own normal equations.
    monkeypatch.setattr(algebra, "MAX_RESIDUAL", -1.0)
    Xa = np.hstack([X - X.mean(axis=0), np.ones((60, 1))])
    beta, ok = algebra.ridge_by_woodbury(Xa, y - y.mean(), w == 0, np.r_[np.full(6, 1e-2), 0.0])
    assert not ok.any()
    assert np.isnan(beta).all()
    coef, b = engine._least_squares(X, y, w, 1e-2, True)
    assert woodbury_calls == [10, 10]
    ref_coef, ref_b = engine._normal_equations(X, y, w, 1e-2, True)
    np.testing.assert_array_equal(coef, ref_coef)
    np.testing.assert_array_equal(b, ref_b)


@pytest.mark.parametrize("C", [0.01, 1.0, 100.0])
@pytest.mark.parametrize("intercept", [True, False])
def test_logistic_equals_scikit_learn_at_its_optimum(C, intercept):
    X, y = make_classification(150, 10, flip_y=0.1, random_state=2)
    folds = _folds(150)
    coef, b, ok = engine._logistic(X, y.astype(float), engine._counts(folds, 150), C, intercept)
    assert ok.any()
    for k, (tr, _) in enumerate(folds):
        if not ok[k]:
            continue
        ref = LogisticRegression(
            C=C, fit_intercept=intercept, solver="newton-cholesky", tol=1e-12, max_iter=1000
        ).fit(X[tr], y[tr])
        np.testing.assert_allclose(coef[k], ref.coef_[0], rtol=0, atol=1e-6)
        np.testing.assert_allclose(b[k], ref.intercept_[0] if intercept else 0.0, atol=1e-6)


def test_unpenalised_logistic_equals_scikit_learn_where_the_optimum_is_unique():
    # C=inf: the maximum-likelihood fit. Checked on data sets from well separated to noisy;
    # fits without a finite or unique optimum must be flagged, never returned.
    checked = 0
    for seed in range(6):
        X, y = make_classification(
            90, 8, n_informative=3, n_redundant=0, flip_y=0.1 * seed, class_sep=0.5 + 0.3 * seed,
            random_state=seed,
        )  # fmt: skip
        folds = _folds(90, seed=seed)
        coef, b, ok = engine._logistic(X, y.astype(float), engine._counts(folds, 90), np.inf, True)
        for k, (tr, _) in enumerate(folds):
            if not ok[k]:
                continue
            ref = LogisticRegression(
                C=np.inf, solver="newton-cholesky", tol=1e-12, max_iter=1000
            ).fit(X[tr], y[tr])
            np.testing.assert_allclose(coef[k], ref.coef_[0], rtol=0, atol=1e-6)
            np.testing.assert_allclose(b[k], ref.intercept_[0], rtol=0, atol=1e-6)
            checked += 1
    assert checked >= 40  # most of the 60 fits have a unique optimum


def test_unpenalised_logistic_without_a_unique_optimum_is_left_to_scikit_learn():
    X, y = make_classification(90, 4, flip_y=0.2, random_state=9)
    collinear = np.column_stack([X, X[:, 0] - X[:, 1]])  # a flat direction of the likelihood
    separable = np.r_[np.linspace(-3, -1, 45), np.linspace(1, 3, 45)][:, None]
    y_sep = np.r_[np.zeros(45), np.ones(45)]
    folds = _folds(90)
    for data, target in ((collinear, y), (separable, y_sep)):
        _coef, _b, ok = engine._logistic(
            data, target.astype(float), engine._counts(folds, 90), np.inf, True
        )
        assert not ok.any()
    # The penalised fit of the same collinear data is unique, and batched.
    _c, _b, ok = engine._logistic(collinear, y.astype(float), engine._counts(folds, 90), 1.0, True)
    assert ok.all()


def test_bootstrap_copies_count_as_weights():
    X, y = make_regression(60, 5, noise=1.0, random_state=3)
    rng = np.random.default_rng(0)
    rows = rng.integers(0, 60, 60)
    folds = [(rows[:40], np.arange(40, 60))]
    coef, _b = engine._least_squares(X, y, engine._counts(folds, 60), 1.0, True)
    ref = Ridge(alpha=1.0).fit(X[rows[:40]], y[rows[:40]])
    np.testing.assert_allclose(coef[0], ref.coef_, atol=1e-8)


@pytest.mark.parametrize(
    ("est", "loss", "batched"),
    [
        (Ridge(alpha=2.0), "squared", None),
        (LinearRegression(), "absolute", None),
        (LogisticRegression(C=1.0), "zero_one", True),
        (LogisticRegression(C=0.5), "log_loss", True),
        (LogisticRegression(C=0.5), "brier", True),
    ],
)
def test_tables_equal_the_per_fit_path(est, loss, batched):
    if isinstance(est, LogisticRegression):
        X, y = make_classification(200, 8, flip_y=0.05, random_state=4)
        reference = LogisticRegression(C=est.C, solver="newton-cholesky", tol=1e-12)
    else:
        X, y = make_regression(200, 8, noise=2.0, random_state=4)
        reference = est
    fast = cross_val_losses(
        est, X, y, cv=5, n_repeats=2, loss=loss, random_state=0, batched=batched
    )
    slow = cross_val_losses(
        reference, X, y, cv=5, n_repeats=2, loss=loss, random_state=0, batched=False
    )
    assert fast.attrs["fit_engine"] == "batched"
    assert slow.attrs["fit_engine"] == "per-fit"
    np.testing.assert_array_equal(fast["block"].values, slow["block"].values)
    np.testing.assert_array_equal(fast["index"].values, slow["index"].values)
    np.testing.assert_allclose(fast["loss"].values, slow["loss"].values, rtol=1e-6, atol=1e-8)


def test_bootstrap_tables_equal_the_per_fit_path():
    X, y = make_regression(80, 5, noise=2.0, random_state=5)
    kw = {"n_bootstrap": 4, "cv": 4, "random_state": 0, "loss": "squared"}
    fast = bootstrap_cv_losses(Ridge(), X, y, **kw)
    slow = bootstrap_cv_losses(Ridge(), X, y, batched=False, **kw)
    assert fast.attrs["fit_engine"] == "batched"
    np.testing.assert_allclose(fast["loss"].values, slow["loss"].values, rtol=1e-8, atol=1e-10)


def test_memory_chunks_give_the_same_answer(monkeypatch):
    X, y = make_regression(100, 6, noise=2.0, random_state=6)
    whole = cross_val_losses(Ridge(), X, y, cv=10, random_state=0)
    monkeypatch.setattr(engine, "MEMORY_BUDGET", 1)  # one fold per chunk
    chunked = cross_val_losses(Ridge(), X, y, cv=10, random_state=0)
    np.testing.assert_allclose(chunked["loss"].values, whole["loss"].values, rtol=1e-12)


def test_others_take_the_per_fit_path_and_say_why():
    X, y = make_classification(90, 4, random_state=7)
    assert "not one of" in engine.batching_reason(
        make_pipeline(MinMaxScaler(), Ridge()), "predict", auto=False
    )
    assert "batched=True" in engine.batching_reason(LogisticRegression(), "predict", auto=True)
    assert engine.batching_reason(LogisticRegression(C=np.inf), "predict", auto=False) == ""
    assert "L2" in engine.batching_reason(
        LogisticRegression(l1_ratio=1.0, solver="saga"), "predict", auto=False
    )
    assert engine.batching_reason(LogisticRegression(), "predict_proba", auto=False) == ""
    # Auto: logistic regression stays per-fit, and the table says so.
    table = cross_val_losses(LogisticRegression(), X, y, cv=3, random_state=0)
    assert table.attrs["fit_engine"] == "per-fit"
    # Multiclass with batched=True: every fold falls back to scikit-learn, same table.
    X3, y3 = make_classification(90, 6, n_informative=4, n_classes=3, random_state=7)
    a = cross_val_losses(LogisticRegression(), X3, y3, cv=3, random_state=0, batched=True)
    b = cross_val_losses(LogisticRegression(), X3, y3, cv=3, random_state=0, batched=False)
    np.testing.assert_array_equal(a["loss"].values, b["loss"].values)
    with pytest.raises(ValueError, match="batched must be"):
        cross_val_losses(Ridge(), X, y.astype(float), cv=3, batched="yes")


def test_ill_conditioned_least_squares_fall_back_to_scikit_learn():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(60, 4))
    X = np.column_stack([X, X[:, 0] + X[:, 1]])  # rank 4: minimum-norm solution needed
    y = X[:, 0] + rng.normal(size=60)
    fast = cross_val_losses(LinearRegression(), X, y, cv=5, random_state=0)
    slow = cross_val_losses(LinearRegression(), X, y, cv=5, random_state=0, batched=False)
    np.testing.assert_allclose(fast["loss"].values, slow["loss"].values, rtol=1e-8, atol=1e-10)


def test_separable_data_is_left_to_scikit_learn_with_its_warning():
    X = np.r_[np.linspace(-3, -1, 20), np.linspace(1, 3, 20)][:, None]
    y = np.r_[np.zeros(20), np.ones(20)].astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = cross_val_losses(LogisticRegression(C=1e6), X, y, cv=4, random_state=0, batched=True)
        b = cross_val_losses(
            LogisticRegression(C=1e6, solver="newton-cholesky", tol=1e-12), X, y, cv=4,
            random_state=0, batched=False,
        )  # fmt: skip
    np.testing.assert_array_equal(a["loss"].values, b["loss"].values)  # zero-one: all right


def test_numeric_dataframes_are_batched_like_arrays():
    import pandas as pd

    X, y = make_regression(80, 4, noise=1.0, random_state=10)
    frame = pd.DataFrame(X, columns=list("abcd")).astype({"a": "int64"})
    array = frame.to_numpy(dtype=float)
    a = cross_val_losses(Ridge(), frame, pd.Series(y), cv=4, random_state=0)
    b = cross_val_losses(Ridge(), array, y, cv=4, random_state=0, batched=False)
    assert a.attrs["fit_engine"] == "batched"
    np.testing.assert_allclose(a["loss"].values, b["loss"].values, rtol=1e-9)
    # A text column cannot be batched: scikit-learn's path, and the table says so.
    mixed = frame.assign(e=["x"] * 80)
    engine_name, reason = cv_fit.fit_engine(
        Ridge(), get_loss("squared"), None, False, None, mixed, y
    )
    assert engine_name == "per-fit"
    assert "DataFrame" in reason


def test_losses_on_folds_reports_its_engine_and_matches_the_runner():
    from bayescv.cv import losses_on_folds

    X, y = make_regression(60, 3, noise=1.0, random_state=11)
    squared = get_loss("squared")
    assert losses_on_folds(Ridge(), X, y, [], squared) == ([], "batched")
    pipe = make_pipeline(MinMaxScaler(), Ridge())
    assert losses_on_folds(pipe, X, y, [], squared) == ([], "per-fit")
    folds = _folds(60, k=4)
    got, engine_name = losses_on_folds(Ridge(), X, y, folds, squared)
    table = cross_val_losses(Ridge(), X, y, cv=KFold(4, shuffle=True, random_state=0))
    assert engine_name == "batched"
    np.testing.assert_allclose(np.concatenate(got), table["loss"].values, rtol=1e-12)


@pytest.mark.parametrize("model", [Ridge(alpha=3.0), LinearRegression()])
def test_scaled_least_squares_pipelines_equal_scikit_learn(model):
    # The catalogue's "ridge" is StandardScaler + Ridge: the scaler refitted on every training
    # set (bootstrap copies counted), a constant column left unscaled (scale 1) as in
    # scikit-learn's _handle_zeros_in_scale.
    X, y = make_regression(150, 5, noise=3.0, random_state=12)
    X = np.column_stack([X * [1.0, 10.0, 100.0, 0.1, 5.0] + 3.0, np.full(150, 2.0)])
    pipe = make_pipeline(StandardScaler(), model)
    for run in (cross_val_losses, bootstrap_cv_losses):
        kw = {"cv": 5, "random_state": 0} | (
            {"n_bootstrap": 3} if run is bootstrap_cv_losses else {}
        )
        fast, slow = run(pipe, X, y, **kw), run(pipe, X, y, batched=False, **kw)
        assert fast.attrs["fit_engine"] == "batched"
        np.testing.assert_allclose(fast["loss"].values, slow["loss"].values, rtol=1e-9, atol=1e-9)


def test_scaled_logistic_pipeline_equals_scikit_learn_at_its_optimum():
    X, y = make_classification(200, 6, flip_y=0.2, class_sep=0.5, random_state=13)
    X = X * [1.0, 10.0, 100.0, 0.1, 1.0, 5.0]
    pipe = make_pipeline(StandardScaler(), LogisticRegression(C=0.5))
    ref = make_pipeline(
        StandardScaler(), LogisticRegression(C=0.5, solver="newton-cholesky", tol=1e-12)
    )
    fast = cross_val_losses(pipe, X, y, cv=5, loss="log_loss", random_state=0, batched=True)
    slow = cross_val_losses(ref, X, y, cv=5, loss="log_loss", random_state=0, batched=False)
    assert fast.attrs["fit_engine"] == "batched"
    np.testing.assert_allclose(fast["loss"].values, slow["loss"].values, rtol=1e-8)
    partial = make_pipeline(StandardScaler(with_mean=False), Ridge())
    assert "with_mean" in engine.batching_reason(partial, "predict", auto=True)


def test_features_too_large_to_square_take_the_per_fit_path():
    # Gram matrices sum n squares: features near sqrt(max float) would overflow them, and
    # scikit-learn's path names that problem (tests/test_bad_input_tables.py).
    X, y = make_regression(40, 2, random_state=14)
    for bad in (X * 1e200, np.where(np.eye(40, 2) > 0, np.nan, X)):
        name, reason = cv_fit.fit_engine(Ridge(), get_loss("squared"), None, False, None, bad, y)
        assert name == "per-fit"
        assert "too large" in reason
