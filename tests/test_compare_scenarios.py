import numpy as np
import pytest
from scipy import special
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from bayescv.compare import (
    BatesLogistic,
    GaussianLinear,
    MultiSourceLinear,
    MultiSourceLogistic,
    ResampledSources,
    bates_coefficient,
)
from bayescv.compare._truth import linear_predictor, logistic_zero_one_error, squared_error
from bayescv.cv.loss_functions import get_loss

ZERO_ONE, SQUARED = get_loss("zero_one"), get_loss("squared")


def _identity_pipeline(model):
    """Same predictions, but no coef_: forces the test-sample truth."""
    return make_pipeline(FunctionTransformer(), model)


def test_bayes_rule_error_equals_bayes_error():
    # The Bayes rule 1[x·θ > 0] errs with probability E[min(σ(u), 1−σ(u))], which
    # bates_coefficient solves to equal the requested Bayes error (Bates et al., footnote 8).
    for target in (0.33, 0.225):
        c = bates_coefficient(target)
        beta = np.array([[c, c, c, 0.0]])
        err = logistic_zero_one_error(beta[0], 0.0, beta, np.zeros(1), np.zeros((1, 4)), np.eye(4))
        assert err[0] == pytest.approx(target, abs=1e-7)


def test_logistic_error_matches_monte_carlo():
    # Shifted means, intercepts and a correlated covariance: the exact integral against
    # 400k simulated points (MC sd of a rate near 0.3: 0.0007).
    rng = np.random.default_rng(1)
    cov = np.array([[1.0, 0.3], [0.3, 2.0]])
    beta = np.array([[1.0, -0.5], [0.2, 0.9]])
    a, mean = np.array([0.3, -0.2]), np.array([[0.5, 0.0], [-1.0, 0.4]])
    w, b = np.array([0.8, -0.1]), 0.25
    exact = logistic_zero_one_error(w, b, beta, a, mean, cov)
    chol = np.linalg.cholesky(cov)
    for s in range(2):
        X = mean[s] + rng.standard_normal((400_000, 2)) @ chol.T
        y = rng.random(len(X)) < special.expit(X @ beta[s] + a[s])
        mc = np.mean(y != (X @ w + b > 0))
        assert exact[s] == pytest.approx(mc, abs=4 * 0.0008)


def test_squared_error_matches_monte_carlo():
    rng = np.random.default_rng(2)
    beta, a, mean = np.array([[1.0, 2.0]]), np.array([0.5]), np.array([[1.0, -1.0]])
    w, b = np.array([0.7, 2.5]), 0.1
    exact = squared_error(w, b, beta, a, mean, np.eye(2), 1.5)
    X = mean[0] + rng.standard_normal((400_000, 2))
    y = X @ beta[0] + a[0] + 1.5 * rng.standard_normal(len(X))
    mc = (y - X @ w - b) ** 2
    assert exact[0] == pytest.approx(mc.mean(), abs=4 * mc.std() / np.sqrt(len(mc)))


def test_gaussian_linear_err_xy_is_the_analytic_formula():
    # Issue text: for OLS, err_xy = σ² + (β̂ − β)ᵀ Σ_x (β̂ − β) (+ b̂² for the intercept).
    sc = GaussianLinear(n=40, noise_sd=2.0)
    draw = sc.draw(np.random.default_rng(0))
    model = LinearRegression().fit(draw.X, draw.y)
    d = model.coef_ - sc.coef
    expected = 4.0 + d @ d + model.intercept_**2
    errors = draw.population.source_errors(model, SQUARED, np.random.default_rng(1))
    assert errors.shape == (1,)
    assert errors[0] == pytest.approx(expected, rel=1e-12)


def test_sampled_truth_agrees_with_exact_truth():
    # A pipeline hides coef_, so the population falls back to n_test fresh points.
    sc = MultiSourceLogistic(3, 30, covariate_shift=0.5, n_test=40_000)
    draw = sc.draw(np.random.default_rng(0))
    model = LogisticRegression().fit(draw.X, draw.y)
    assert linear_predictor(model, "zero_one", "logistic") is not None
    wrapped = _identity_pipeline(LogisticRegression()).fit(draw.X, draw.y)
    assert linear_predictor(wrapped, "zero_one", "logistic") is None
    exact = draw.population.source_errors(model, ZERO_ONE, np.random.default_rng(1))
    sampled = draw.population.source_errors(wrapped, ZERO_ONE, np.random.default_rng(1))
    np.testing.assert_allclose(sampled, exact, atol=4 * 0.5 / np.sqrt(40_000))


def test_bates_logistic_data():
    sc = BatesLogistic()
    X, y, groups = sc.sample(np.random.default_rng(0))
    assert X.shape == (100, 20)
    assert set(np.unique(y)) == {0, 1}
    assert groups is None
    assert sc.design == "iid"
    assert sc.scheme == "random"
    assert sc.n_splits == 10
    assert np.count_nonzero(sc.coef) == 3
    assert sc.truth_names() == ("err_xy", "kfold_test_error")


def test_sources_fixed_keeps_sources_and_redrawn_changes_them():
    fixed = MultiSourceLinear(4, [5, 6, 7, 8])
    d1, d2 = fixed.draw(np.random.default_rng(1)), fixed.draw(np.random.default_rng(2))
    np.testing.assert_array_equal(d1.population.src.beta, d2.population.src.beta)
    assert not np.array_equal(d1.X, d2.X)
    assert np.bincount(d1.groups).tolist() == [5, 6, 7, 8]
    redrawn = MultiSourceLinear(4, 6, design="sources_redrawn")
    r1, r2 = redrawn.draw(np.random.default_rng(1)), redrawn.draw(np.random.default_rng(2))
    assert not np.array_equal(r1.population.src.beta, r2.population.src.beta)
    model = LinearRegression().fit(r1.X, r1.y)
    assert np.isfinite(r1.population.new_source_error(model, SQUARED, np.random.default_rng(0)))
    iid = GaussianLinear(n=20, coef=[1.0, 0.0]).draw(np.random.default_rng(0))
    with pytest.raises(NotImplementedError, match="no new sources"):
        iid.population.new_source_error(
            LinearRegression().fit(iid.X, iid.y), SQUARED, np.random.default_rng(0)
        )


def test_heterogeneity_zero_makes_sources_identical():
    sc = MultiSourceLogistic(3, 10, heterogeneity=0.0, intercept_sd=0.0)
    np.testing.assert_array_equal(sc._fixed.beta, np.tile(sc.coef, (3, 1)))


def test_folds_leave_one_source_out_and_random():
    sc = MultiSourceLinear(3, 4)
    draw = sc.draw(np.random.default_rng(0))
    folds = sc.folds(draw, 0)
    assert [np.unique(draw.groups[te]).tolist() for _, te in folds] == [[0], [1], [2]]
    random = MultiSourceLinear(3, 4, scheme="random", n_splits=4)
    folds = random.folds(random.draw(np.random.default_rng(0)), 0)
    assert len(folds) == 4
    assert sorted(np.concatenate([te for _, te in folds])) == list(range(12))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"design": "iid"}, "sources_fixed"),
        ({"points_per_source": [3, 4]}, "points_per_source"),
        ({"heterogeneity": -1.0}, "heterogeneity"),
        ({"scheme": "loo"}, "scheme must be"),
        ({"points_per_source": 1}, "at least 2"),
    ],
)
def test_multi_source_rejects_bad_settings(kwargs, match):
    with pytest.raises(ValueError, match=match):
        MultiSourceLogistic(3, **{"points_per_source": 5, **kwargs})


@pytest.fixture
def frame_data():
    rng = np.random.default_rng(0)
    groups = np.repeat(np.array(["a", "b", "c", "d", "e"]), [8, 10, 12, 9, 11])
    X = rng.normal(size=(groups.size, 2))
    y = X @ [1.0, -1.0] + rng.normal(size=groups.size) + (groups == "c") * 3.0
    return X, y, groups


def test_resampled_sources_errors_are_exact_means(frame_data):
    X, y, groups = frame_data
    sc = ResampledSources(X, y, groups, n_sources=3, points_per_source=6, source_seed=1)
    assert sc.task == "regression"
    assert sc.truth_names() == ("err_xy", "kfold_test_error")
    draw = sc.draw(np.random.default_rng(0))
    chosen = sc.labels[sc._fixed]
    assert sorted(set(draw.groups.tolist())) == sorted(chosen.tolist())
    model = LinearRegression().fit(draw.X, draw.y)
    errors = draw.population.source_errors(model, SQUARED, np.random.default_rng(0))
    for k, label in enumerate(chosen):
        rows = groups == label
        assert errors[k] == pytest.approx(np.mean((y[rows] - model.predict(X[rows])) ** 2))


def test_resampled_sources_redrawn_uses_left_out_sources(frame_data):
    X, y, groups = frame_data
    sc = ResampledSources(X, y, groups, n_sources=4, design="sources_redrawn")
    draw = sc.draw(np.random.default_rng(3))
    left = sorted(set(groups) - set(draw.groups))
    assert len(left) == 1
    model = LinearRegression().fit(draw.X, draw.y)
    rows = groups == left[0]
    expected = np.mean((y[rows] - model.predict(X[rows])) ** 2)
    ose = draw.population.new_source_error(model, SQUARED, np.random.default_rng(0))
    assert ose == pytest.approx(expected)
    with pytest.raises(ValueError, match="too many"):
        ResampledSources(X, y, groups, n_sources=5, design="sources_redrawn")


def test_resampled_sources_from_frame_and_task_inference(frame_data):
    import pandas as pd

    X, y, groups = frame_data
    frame = pd.DataFrame({"x1": X[:, 0], "x2": X[:, 1], "y": (y > 0).astype(int), "site": groups})
    sc = ResampledSources.from_frame(frame, target="y", source="site")
    assert sc.task == "classification"
    assert sc.n_sources == 5
    assert sc.label == "user data"
    assert (
        sc.params()["data_hash"]
        == ResampledSources.from_frame(frame, target="y", source="site").params()["data_hash"]
    )


def test_error_rate_family_sets_the_bayes_error_of_its_sources():
    from bayescv.compare import MultiSourceErrorRate, bates_coefficient
    from bayescv.compare._truth import logistic_zero_one_error

    sc = MultiSourceErrorRate(0.05, n_sources=4, points_per_source=30)
    assert sc.params()["bayes_error"] == 0.05
    c = bates_coefficient(0.05)
    assert np.allclose(sc.coef, [c, c, c, 0.0, 0.0])
    # The Bayes rule of the common model errs at 5 % on it (bates_coefficient's definition):
    # the exact error of the linear rule with the true coefficients (Bates et al. 2024, §5).
    exact = logistic_zero_one_error(
        sc.coef, 0.0, sc.coef[None, :], np.zeros(1), np.zeros((1, 5)), np.eye(5)
    )
    assert float(exact[0]) == pytest.approx(0.05, abs=1e-3)
    with pytest.raises(ValueError, match="bayes_error"):
        MultiSourceErrorRate(0.6)


def test_error_rate_family_spreads_its_sources_by_heterogeneity():
    from bayescv.compare import MultiSourceErrorRate

    # heterogeneity is the sd of the coefficients around c as a fraction of c: the sources'
    # coefficients are c + heterogeneity * c * z with z standard normal (the parent's draw).
    default = MultiSourceErrorRate(0.05, n_sources=400, design="sources_redrawn")
    spread = MultiSourceErrorRate(0.05, n_sources=400, design="sources_redrawn", heterogeneity=0.2)
    c = default.coef[0]
    assert default.heterogeneity == pytest.approx(0.05 * c)
    beta = spread._draw_sources(np.random.default_rng(0), 400).beta[:, :3]
    # 1200 draws: the sample sd is within 5 % of its value with overwhelming probability
    # (its relative se is 1/sqrt(2 * 1200) = 2 %).
    assert np.std(beta - c) == pytest.approx(0.2 * c, rel=0.06)
    with pytest.raises(ValueError, match="heterogeneity"):
        MultiSourceErrorRate(0.05, heterogeneity=-0.1)
