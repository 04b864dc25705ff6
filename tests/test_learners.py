import numpy as np
import pytest
from sklearn.base import clone, is_classifier, is_regressor
from sklearn.datasets import make_classification, make_regression
from sklearn.linear_model import LogisticRegression

from bayescv.cv import LEARNERS, TASKS, learner_task, make_learner

CLASSIFIERS = [n for n in LEARNERS if learner_task(n) != "regression"]
REGRESSORS = [n for n in LEARNERS if learner_task(n) != "classification"]
RANDOMISED = ["decision-tree", "random-forest", "gradient-boosting"]


@pytest.fixture(scope="module")
def data():
    # overlapping classes, no collinear features: the unpenalised logistic MLE is finite
    Xc, yc = make_classification(
        n_samples=60, n_features=4, n_redundant=0, flip_y=0.3, class_sep=0.5, random_state=0
    )
    Xr, yr = make_regression(n_samples=60, n_features=4, noise=1.0, random_state=0)
    return {"classification": (Xc, yc), "regression": (Xr, yr)}


@pytest.mark.parametrize(
    ("name", "task"),
    [(n, "classification") for n in CLASSIFIERS] + [(n, "regression") for n in REGRESSORS],
)
def test_every_name_fits_its_task(name, task, data):
    model = make_learner(name, task=task, random_state=0)
    assert (is_classifier if task == "classification" else is_regressor)(model)
    X, y = data[task]
    pred = clone(model).fit(X, y).predict(X)
    assert pred.shape == y.shape
    if task == "classification":
        assert set(np.unique(pred)) <= set(np.unique(y))


def test_names_and_tasks_are_complete():
    assert LEARNERS == (
        "logistic", "unpenalized-logistic", "ridge", "linear", "decision-tree",
        "random-forest", "gradient-boosting", "k-neighbors",
    )  # fmt: skip
    assert TASKS == ("classification", "regression")
    assert learner_task("logistic") == "classification"
    assert learner_task("unpenalized-logistic") == "classification"
    assert learner_task("linear") == "regression"
    assert all(learner_task(n) is None for n in ("ridge", "k-neighbors", *RANDOMISED))


def test_a_name_with_one_task_needs_no_task():
    assert type(make_learner("linear")).__name__ == "LinearRegression"
    assert make_learner("logistic")[-1].max_iter == 1000
    with pytest.raises(ValueError, match="'ridge' does classification and regression: pass task="):
        make_learner("ridge")


@pytest.mark.parametrize("name", RANDOMISED)
def test_random_state_reaches_randomised_learners(name, data):
    model = make_learner(name, task="regression", random_state=7)
    assert model.get_params()["random_state"] == 7
    X, y = data["regression"]
    a = make_learner(name, task="regression", random_state=7).fit(X, y).predict(X)
    b = make_learner(name, task="regression", random_state=7).fit(X, y).predict(X)
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(
    ("name", "task", "last"),
    [
        ("logistic", "classification", "logisticregression"),
        ("ridge", "classification", "ridgeclassifier"),
        ("ridge", "regression", "ridge"),
        ("k-neighbors", "regression", "kneighborsregressor"),
    ],
)
def test_scale_dependent_learners_standardise(name, task, last):
    # the module's table: ridge (both tasks), logistic and k-neighbors are scaled
    steps = make_learner(name, task=task).named_steps
    assert list(steps) == ["standardscaler", last]


def test_unpenalized_logistic_is_the_maximum_likelihood_fit(data):
    # C=inf: no penalty, the fit of Bates, Hastie & Tibshirani's experiments
    model = make_learner("unpenalized-logistic")
    assert model.get_params()["C"] == np.inf
    X, y = data["classification"]
    reference = LogisticRegression(C=np.inf, solver="newton-cholesky", max_iter=1000).fit(X, y)
    np.testing.assert_allclose(model.fit(X, y).coef_, reference.coef_)


def test_fresh_instance_each_call():
    assert make_learner("ridge", task="regression") is not make_learner("ridge", task="regression")


@pytest.mark.parametrize(
    ("name", "task", "match"),
    [
        ("lasso", "regression", "unknown learner 'lasso'; expected one of logistic, "),
        ("ridge", "ranking", "task must be one of"),
        ("logistic", "regression", "'logistic' is for classification only; for regression use "),
        ("linear", "classification", "'linear' is for regression only; for classification use "),
    ],
)
def test_bad_names_and_tasks_raise(name, task, match):
    with pytest.raises(ValueError, match=match):
        make_learner(name, task=task)
    if name == "lasso":
        with pytest.raises(ValueError, match="unknown learner"):
            learner_task(name)
