"""Density-ratio weights from a cross-fitted domain classifier (bayescv.shift.weights).

Reference: for x ~ N(0, 1) in the source and N(δ, 1) in the target the true ratio is
w(x) = N(x; δ, 1) / N(x; 0, 1) = exp(δ x - δ² / 2) (GaussianShift.density_ratio, checked
against scipy in test_shift_scenario.py). Its logarithm is linear in x, so logistic
regression is the correct model and its weights are √n-consistent.
"""

import numpy as np
import pandas as pd
import pytest
from joblib import parallel_config
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.model_selection import KFold
from sklearn.naive_bayes import GaussianNB
from sklearn.svm import SVC

from bayescv.shift import GaussianShift, density_ratio_weights


def gaussian_domains(n_source, n_target, shift, seed):
    rng = np.random.default_rng(seed)
    return rng.normal(0, 1, (n_source, 1)), rng.normal(shift, 1, (n_target, 1))


def test_weights_approach_the_true_ratio_as_n_grows():
    # n_T = n_S / 4, so the prior correction n_S / n_T = 4 matters. For a correctly
    # specified parametric model the RMS error of log w shrinks like n^(-1/2): the slope of
    # log(error) on log(n) is -0.5 (measured -0.51 with 6 seeds). Each mean over 4 seeds has
    # a relative error of about 20%, so over a 64-fold range of n the slope's error is about
    # 0.06; the test allows ±0.25.
    sc = GaussianShift(shift=0.5)
    sizes = np.array([125, 500, 2000, 8000])
    errors = []
    for n in sizes:
        per_seed = []
        for seed in range(4):
            xs, xt = gaussian_domains(n, n // 4, 0.5, seed)
            w = density_ratio_weights(xs, xt, random_state=seed)
            log_error = np.log(w.values) - np.log(sc.density_ratio(xs[:, 0]))
            per_seed.append(np.sqrt(np.mean(log_error**2)))
        errors.append(np.mean(per_seed))
    slope = np.polyfit(np.log(sizes), np.log(errors), 1)[0]
    assert -0.75 < slope < -0.25, (slope, errors)
    assert errors[-1] < 0.05  # within 5% of the true ratio at n = 8000


def test_prior_correction_gives_unit_weights_without_shift():
    # Same distribution, ten times more source points: P(target | x) ≈ 1/11 everywhere,
    # and only the factor n_S / n_T = 10 brings the weights back to 1 (else ≈ 0.1).
    xs, xt = gaussian_domains(2000, 200, 0.0, 1)
    w = density_ratio_weights(xs, xt, random_state=1)
    assert w.attrs["prior_ratio"] == 10.0
    assert abs(w.attrs["mean_weight"] - 1) < 0.05
    assert np.abs(np.log(w.values)).max() < 0.5


class Memoriser(ClassifierMixin, BaseEstimator):
    """P(target) = 0.1 for a row it was trained on, 0.5 for a new one."""

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        self.seen_ = {tuple(row) for row in np.asarray(X)}
        return self

    def predict_proba(self, X):
        seen = np.array([tuple(row) in self.seen_ for row in np.asarray(X)])
        p_target = np.where(seen, 0.1, 0.5)
        return np.column_stack([1 - p_target, p_target])


def test_weights_are_cross_fitted():
    # Every source point must be scored by a classifier that never saw it: P(target) = 0.5,
    # so w = (n_S / n_T of the training folds) · 1 = 1 here (equal domain sizes).
    xs, xt = gaussian_domains(40, 40, 1.0, 2)
    w = density_ratio_weights(xs, xt, classifier=Memoriser(), calibration="none", cv=4)
    np.testing.assert_allclose(w.values, 1.0)


def test_calibration_choice_is_recorded():
    xs, xt = gaussian_domains(150, 150, 0.5, 3)
    default = density_ratio_weights(xs, xt, random_state=0)
    assert default.attrs["calibration"] == "none"
    assert "LogisticRegression" in default.attrs["classifier"]
    nb = density_ratio_weights(xs, xt, classifier=GaussianNB(), random_state=0)
    assert nb.attrs["calibration"] == "sigmoid"  # "auto" calibrates any other classifier
    raw = density_ratio_weights(xs, xt, classifier=GaussianNB(), calibration="none")
    assert raw.attrs["calibration"] == "none"
    for w in (default, nb, raw):
        assert np.isfinite(w.values).all()
        assert (w.values > 0).all()
    # Isotonic calibration is a step function that reaches probability 0 or 1 at the
    # extremes: an infinite weight is then refused, never clipped silently.
    outcome = None
    try:
        iso = density_ratio_weights(
            xs, xt, classifier=GaussianNB(), calibration="isotonic", random_state=0
        )
    except ValueError as err:
        outcome = str(err)
    if outcome is None:
        assert iso.attrs["calibration"] == "isotonic"
        assert np.isfinite(iso.values).all()
    else:
        assert "infinite weight" in outcome


def test_result_layout_and_reproducibility():
    xs, xt = gaussian_domains(120, 80, 0.5, 4)
    a = density_ratio_weights(xs, xt, random_state=7)
    with parallel_config(backend="threading"):  # no process start-up cost in the test
        b = density_ratio_weights(xs, xt, random_state=7, n_jobs=2)
    np.testing.assert_array_equal(a.values, b.values)  # independent of n_jobs
    assert a.dims == ("obs",)
    assert a.name == "weight"
    np.testing.assert_array_equal(a["index"].values, np.arange(120))
    assert a.attrs["seed"] == 7
    assert a.attrs["cv"] == 5
    assert (a.attrs["n_source"], a.attrs["n_target"]) == (120, 80)
    assert a.attrs["ess"] == pytest.approx(a.values.sum() ** 2 / (a.values**2).sum())
    assert a.attrs["ess_fraction"] == pytest.approx(a.attrs["ess"] / 120)
    c = density_ratio_weights(xs, xt, random_state=8)
    assert not np.array_equal(a.values, c.values)  # other folds, other fits


def test_dataframes_are_accepted():
    xs, xt = gaussian_domains(60, 60, 0.5, 5)
    frames = density_ratio_weights(
        pd.DataFrame(xs, columns=["x"]), pd.DataFrame(xt, columns=["x"]), random_state=0
    )
    arrays = density_ratio_weights(xs, xt, random_state=0)
    np.testing.assert_allclose(frames.values, arrays.values)
    with pytest.raises(ValueError, match="different columns"):
        density_ratio_weights(pd.DataFrame(xs, columns=["x"]), pd.DataFrame(xt, columns=["z"]))


class Overconfident(Memoriser):
    """P(source) = 0 for every point."""

    def predict_proba(self, X):
        n = len(X)
        return np.column_stack([np.zeros(n), np.ones(n)])


class OneDomainFolds:
    """Splits so that one training fold holds only source points."""

    def split(self, X, y):
        n = len(y)
        source = np.flatnonzero(y == 0)
        yield np.setdiff1d(np.arange(n), source), source
        yield source, np.setdiff1d(np.arange(n), source)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"classifier": SVC()}, "predict_proba"),
        ({"calibration": "platt"}, "calibration must be"),
        ({"cv": 1}, "at least 2"),
        ({"cv": "five"}, "int or a splitter"),
        ({"cv": 100}, "at least cv=100"),
        ({"classifier": Overconfident(), "calibration": "none"}, "infinite weight"),
        ({"cv": OneDomainFolds()}, "lacks one of the domains"),
        ({"cv": KFold(2).split(np.zeros((10, 1)))}, "int or a splitter"),
    ],
)
def test_bad_settings_are_refused(kwargs, match):
    xs, xt = gaussian_domains(30, 30, 0.5, 6)
    with pytest.raises(ValueError, match=match):
        density_ratio_weights(xs, xt, **kwargs)


def test_bad_shapes_are_refused():
    xs, xt = gaussian_domains(30, 30, 0.5, 7)
    with pytest.raises(ValueError, match="features"):
        density_ratio_weights(xs, np.hstack([xt, xt]))
    with pytest.raises(ValueError, match="2-D"):
        density_ratio_weights(xs[:, 0], xt[:, 0])
