"""Fitted models from the batched engine: scikit-learn's own fits, attribute for attribute.

Reference: the per-fit path (``batched=False``), which fits each fold with scikit-learn
(``Ridge``'s direct solver; ``LogisticRegression(solver="newton-cholesky", tol=1e-12)``,
whose optimum the batched Newton steps reach).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import make_classification, make_regression
from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import bayescv.cv._batched as engine
import bayescv.cv._fit as cv_fit
from bayescv.compare import MultiSourceLinear, run_study
from bayescv.cv import cross_val_losses


def _models(est, X, y, batched, **kw):
    table = cross_val_losses(
        est, X, y, cv=5, random_state=0, return_estimator=True, batched=batched, **kw
    )
    return table, list(table["estimator"].values)


@pytest.mark.parametrize(
    "est", [Ridge(alpha=2.0), make_pipeline(StandardScaler(), Ridge(alpha=2.0))]
)
def test_fitted_ridge_models_equal_scikit_learns(est):
    X, y = make_regression(90, 6, noise=2.0, random_state=1)
    X = X + 5.0  # the scaler's means matter
    fast, batched = _models(est, X, y, None)
    slow, per_fit = _models(est, X, y, False)
    assert (fast.attrs["fit_engine"], slow.attrs["fit_engine"]) == ("batched", "per-fit")
    X_new = np.random.default_rng(2).normal(size=(7, 6))
    for a, b in zip(batched, per_fit, strict=True):
        assert type(a) is type(b)
        np.testing.assert_allclose(a.predict(X_new), b.predict(X_new), rtol=1e-9)
        model_a, model_b = (m[-1] if hasattr(m, "steps") else m for m in (a, b))
        np.testing.assert_allclose(model_a.coef_, model_b.coef_, rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(model_a.intercept_, model_b.intercept_, rtol=1e-9)
        assert (model_a.solver_, model_a.n_iter_) == (model_b.solver_, model_b.n_iter_)
        assert model_a.n_features_in_ == model_b.n_features_in_ == 6
        if hasattr(a, "steps"):
            scaler_a, scaler_b = a[0], b[0]
            for name in ("mean_", "var_", "scale_"):
                np.testing.assert_allclose(
                    getattr(scaler_a, name), getattr(scaler_b, name), rtol=1e-12
                )
            assert scaler_a.n_samples_seen_ == scaler_b.n_samples_seen_ == 72


def test_fitted_logistic_models_equal_scikit_learns_at_its_optimum():
    X, y = make_classification(150, 6, flip_y=0.1, random_state=3)
    for est in (
        LogisticRegression(C=1.0, solver="newton-cholesky", tol=1e-12),
        make_pipeline(
            StandardScaler(), LogisticRegression(C=0.5, solver="newton-cholesky", tol=1e-12)
        ),
    ):
        fast, batched = _models(est, X, y, True, loss="log_loss")
        _, per_fit = _models(est, X, y, False, loss="log_loss")
        assert fast.attrs["fit_engine"] == "batched"
        for a, b in zip(batched, per_fit, strict=True):
            np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X), atol=1e-7)
            model_a, model_b = (m[-1] if hasattr(m, "steps") else m for m in (a, b))
            np.testing.assert_allclose(model_a.coef_, model_b.coef_, atol=1e-6)
            np.testing.assert_allclose(model_a.intercept_, model_b.intercept_, atol=1e-6)
            np.testing.assert_array_equal(model_a.classes_, model_b.classes_)
            assert model_a.coef_.shape == (1, 6)
            assert model_a.intercept_.shape == (1,)
            assert model_a.n_iter_.dtype == model_b.n_iter_.dtype
            assert model_a.n_iter_.shape == (1,)
            assert model_a.n_iter_[0] >= 1


def test_dataframe_models_know_their_feature_names():
    X, y = make_regression(60, 3, noise=1.0, random_state=4)
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    for est in (Ridge(), make_pipeline(StandardScaler(), Ridge())):
        table, batched = _models(est, frame, pd.Series(y), None)
        _, per_fit = _models(est, frame, pd.Series(y), False)
        assert table.attrs["fit_engine"] == "batched"
        for a, b in zip(batched, per_fit, strict=True):
            first_a = a[0] if hasattr(a, "steps") else a
            first_b = b[0] if hasattr(b, "steps") else b
            np.testing.assert_array_equal(first_a.feature_names_in_, first_b.feature_names_in_)
            # Predicting a DataFrame warns about feature names when they are missing or
            # wrong, and warnings are errors in this suite.
            np.testing.assert_allclose(a.predict(frame), b.predict(frame), rtol=1e-9)


def test_linear_regression_models_take_the_per_fit_path():
    X, y = make_regression(50, 3, random_state=5)
    reason = engine.batching_reason(LinearRegression(), "predict", auto=True, models=True)
    assert "rank_" in reason
    assert engine.batching_reason(LinearRegression(), "predict", auto=True) == ""
    table, models = _models(LinearRegression(), X, y, None)
    assert table.attrs["fit_engine"] == "per-fit"
    assert all(hasattr(m, "singular_") for m in models)


def test_a_study_whose_truths_need_fold_models_is_batched_with_the_same_truths(monkeypatch):
    # kfold_test_error evaluates the K fold models on new points: with models built by the
    # batched engine the truths equal those of the per-fit path (to rounding).
    calls = []
    spy = engine.batched_predictions

    def counting(*args, **kwargs):
        calls.append(kwargs.get("models"))
        return spy(*args, **kwargs)

    monkeypatch.setattr(cv_fit, "batched_predictions", counting)
    scenario = MultiSourceLinear(n_sources=5, points_per_source=30)
    args = (scenario, make_pipeline(StandardScaler(), Ridge()), ["naive_points"], 4)
    kw = {"truths": ["kfold_test_error"], "random_state": 0}
    fast = run_study(*args, batched=None, **kw)
    assert calls == [True] * 4  # one batch of fold models per replicate
    slow = run_study(*args, batched=False, **kw)
    assert len(calls) == 4
    np.testing.assert_allclose(fast["truth"].values, slow["truth"].values, rtol=1e-9)
    np.testing.assert_allclose(fast["estimate"].values, slow["estimate"].values, rtol=1e-9)
