import numpy as np
import pytest
from sklearn.base import clone, is_classifier, is_regressor
from sklearn.datasets import make_classification, make_regression

from bayescv.cv.learners import MODEL_NAMES, TASKS, make_model, model_task

CLASSIFIERS = ["logistic", "ridge", "random-forest", "gradient-boosting"]
REGRESSORS = ["ridge", "linear", "random-forest", "gradient-boosting"]


@pytest.fixture(scope="module")
def data():
    Xc, yc = make_classification(n_samples=40, n_features=4, random_state=0)
    Xr, yr = make_regression(n_samples=40, n_features=4, noise=1.0, random_state=0)
    return {"classification": (Xc, yc), "regression": (Xr, yr)}


@pytest.mark.parametrize(
    ("name", "task"),
    [(n, "classification") for n in CLASSIFIERS] + [(n, "regression") for n in REGRESSORS],
)
def test_every_name_fits_its_task(name, task, data):
    model = make_model(name, task=task, random_state=0)
    assert (is_classifier if task == "classification" else is_regressor)(model)
    X, y = data[task]
    pred = clone(model).fit(X, y).predict(X)
    assert pred.shape == y.shape
    if task == "classification":
        assert set(np.unique(pred)) <= set(np.unique(y))


def test_names_and_tasks_are_complete():
    assert set(CLASSIFIERS) | set(REGRESSORS) == set(MODEL_NAMES)
    assert TASKS == ("classification", "regression")
    assert model_task("logistic") == "classification"
    assert model_task("linear") == "regression"
    assert all(model_task(n) is None for n in ("ridge", "random-forest", "gradient-boosting"))


@pytest.mark.parametrize("name", ["random-forest", "gradient-boosting"])
def test_random_state_reaches_randomised_models(name, data):
    model = make_model(name, task="regression", random_state=7)
    assert model.get_params()["random_state"] == 7
    X, y = data["regression"]
    a = make_model(name, task="regression", random_state=7).fit(X, y).predict(X)
    b = make_model(name, task="regression", random_state=7).fit(X, y).predict(X)
    np.testing.assert_array_equal(a, b)


def test_penalised_linear_models_standardise():
    steps = make_model("logistic", task="classification").named_steps
    assert list(steps) == ["standardscaler", "logisticregression"]
    assert steps["logisticregression"].max_iter == 1000


def test_fresh_instance_each_call():
    assert make_model("ridge", task="regression") is not make_model("ridge", task="regression")


@pytest.mark.parametrize(
    ("name", "task", "match"),
    [
        ("lasso", "regression", "unknown model 'lasso'; expected one of logistic, ridge"),
        ("ridge", "ranking", "task must be one of"),
        ("logistic", "regression", "'logistic' is for classification only"),
        ("linear", "classification", "'linear' is for regression only"),
    ],
)
def test_bad_names_and_tasks_raise(name, task, match):
    with pytest.raises(ValueError, match=match):
        make_model(name, task=task)
    if name == "lasso":
        with pytest.raises(ValueError, match="unknown model"):
            model_task(name)
