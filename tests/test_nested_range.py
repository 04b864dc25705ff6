"""Nested CV keeps its estimate and interval inside the loss's range (defects 1 and 2).

The bias-corrected centre ``err_ncv − c·(err_ncv − err_cv)`` is an extrapolation with
c > 1: it can leave the range of the loss, which the error itself cannot. And a table of
0-1 losses without a single error has zero estimated variance, where the interval must
still say how large the error rate could be (Wilson's bound, as :func:`bayescv.cv_intervals`
gives).
"""

import numpy as np
import pytest
from scipy import stats
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.datasets import load_iris, make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from bayescv.nested import bias_constant, nested_cv
from bayescv.nested._core import nested_bounds

# --- helpers --------------------------------------------------------------------------


class SignRule(ClassifierMixin, BaseEstimator):
    """Predicts ``x0 > 0``, the label of :func:`sign_data`: right on every point, or wrong
    on every point when trained on at least `wrong_from` rows (None: never)."""

    def __init__(self, wrong_from=None):
        self.wrong_from = wrong_from

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        self.flip_ = self.wrong_from is not None and len(X) >= self.wrong_from
        return self

    def predict(self, X):
        return ((np.asarray(X)[:, 0] > 0) ^ self.flip_).astype(int)


class CopyRule(RegressorMixin, BaseEstimator):
    """Predicts ``x0``, which is the target of :func:`sign_data`'s regression twin: exact when
    trained on at least `exact_from` rows (None: always), else 0."""

    def __init__(self, exact_from=None):
        self.exact_from = exact_from

    def fit(self, X, y):
        self.exact_ = self.exact_from is None or len(X) >= self.exact_from
        return self

    def predict(self, X):
        x0 = np.asarray(X)[:, 0]
        return x0 if self.exact_ else np.zeros_like(x0)


def sign_data(n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 2))
    return X, (X[:, 0] > 0).astype(int)


def wilson(n_errors, n, level):
    """Wilson's (1927) score interval for n_errors in n Bernoulli trials: the p solving
    |p̂ − p| = z·sqrt(p(1 − p)/n). At 0 errors it is [0, z²/(n + z²)]; at n, [n/(n + z²), 1]."""
    z = stats.norm.ppf(0.5 + level / 2)
    p = n_errors / n
    centre = (p + z**2 / (2 * n)) / (1 + z**2 / n)
    half = z / (1 + z**2 / n) * np.sqrt(p * (1 - p) / n + z**2 / (4 * n**2))
    return centre - half, centre + half


def values(res):
    return tuple(res[v].item() for v in ("estimate", "lower", "upper", "se", "flag"))


# --- defect 1: the bias-corrected centre outside the range -----------------------------


@pytest.mark.parametrize("seed", [8, 35])
def test_negative_centre_of_a_zero_one_loss_is_moved_to_zero_and_flagged(seed):
    # The tester's case: k-NN on well-separated classes. The plain CV (training on 4n/5
    # points) makes no error, the inner CV (3n/5 points) one: err_cv = 0 < err_ncv, so the
    # centre (1 − c)·err_ncv + c·err_cv is below 0 (it was returned as the estimate).
    X, y = make_classification(
        n_samples=60, n_features=5, class_sep=2.0, flip_y=0.0, random_state=seed
    )
    res = nested_cv(KNeighborsClassifier(3), X, y, n_splits=5, n_repeats=3, random_state=seed)
    estimate, lower, upper, se, flag = values(res)
    err_ncv, err_cv = float(res["err_ncv"]), float(res["err_cv"])
    centre = err_ncv - bias_constant(5) * (err_ncv - err_cv)  # the documented formula
    assert float(res["estimate_unbounded"]) == pytest.approx(centre)
    assert centre < 0  # the case under test
    assert estimate == 0.0  # the nearest point of the zero-one loss's range [0, 1]
    assert "estimate_outside_range" in flag.split(",")
    assert lower <= estimate <= upper
    # the interval is formed about the moved centre, then cut to the range
    assert (lower, upper) == pytest.approx((0.0, 0.0 + stats.norm.ppf(0.975) * se))


def test_centre_above_one_is_moved_to_one():
    # Wrong on every point when trained on 3n/4 rows (the outer fits), right when trained on
    # n/2 (the inner fits): err_ncv = 0 and err_cv = 1 exactly, so the centre is
    # 0 − c·(0 − 1) = c = 1 + (1/2)^1.5 > 1. Without clipping the inflation, the variance is
    # (K−1)/K · mse with mse = mean(a) − mean(b) = (0 − 1)² − 0 = 1.
    X, y = sign_data(40)
    res = nested_cv(
        SignRule(wrong_from=30), X, y, n_splits=4, n_repeats=2, n_bias_repeats=0,
        inflation_bounds=None, random_state=0,
    )  # fmt: skip
    estimate, lower, upper, se, flag = values(res)
    assert (float(res["err_ncv"]), float(res["err_cv"])) == (0.0, 1.0)
    assert float(res["estimate_unbounded"]) == pytest.approx(1 + 0.5**1.5)
    assert se == pytest.approx(np.sqrt(3 / 4))
    assert estimate == 1.0
    # 1 − 1.96·0.866 < 0: both sides cut to [0, 1], and both moves flagged
    assert (lower, upper) == (0.0, 1.0)
    assert set(flag.split(",")) == {"estimate_outside_range", "truncated_to_range"}


def test_negative_centre_of_a_squared_loss_is_moved_to_zero():
    # Exact predictions from 3n/4 training rows, zero from n/2: the outer losses are 0, the
    # inner ones y², so err_cv = 0 < err_ncv and the centre (1 − c)·err_ncv is negative;
    # the squared error's range is [0, inf).
    X, _ = sign_data(40)
    res = nested_cv(CopyRule(exact_from=30), X, X[:, 0], n_splits=4, n_repeats=2, random_state=0)
    estimate, lower, upper, se, flag = values(res)
    err_ncv = float(res["err_ncv"])
    assert float(res["err_cv"]) == 0.0
    assert float(res["estimate_unbounded"]) == pytest.approx((1 - bias_constant(4)) * err_ncv)
    assert estimate == 0.0
    assert lower == 0.0 <= upper
    assert upper == pytest.approx(stats.norm.ppf(0.975) * se)
    assert "estimate_outside_range" in flag.split(",")


def test_a_centre_inside_the_range_is_not_moved():
    # Identity: inside the range the estimate is the centre itself, with no flag for it.
    X, y = make_classification(n_samples=60, n_features=4, random_state=0)
    res = nested_cv(LogisticRegression(), X, y, n_splits=3, n_repeats=2, random_state=0)
    assert res["estimate"].item() == float(res["estimate_unbounded"])
    assert "estimate_outside_range" not in res["flag"].item()


@pytest.mark.parametrize(("centre", "expected"), [(-0.3, 0.0), (0.4, 0.4), (1.2, 1.0)])
def test_nested_bounds_keep_lower_estimate_upper_ordered(centre, expected):
    # The estimate is the projection of the centre onto [0, 1]; the interval is
    # estimate ± z·sqrt(0.01) cut to [0, 1], z the normal quantile of 0.95 (level 0.9).
    estimate, se, lower, upper, flag = nested_bounds(
        centre, 0.01, level=0.9, loss_range=(0.0, 1.0), edge="", n_units=50
    )
    z = stats.norm.ppf(0.95)
    assert estimate == expected
    assert se == pytest.approx(0.1)
    assert lower <= estimate <= upper
    assert (lower, upper) == pytest.approx(
        (max(expected - z * 0.1, 0), min(expected + z * 0.1, 1))
    )
    assert ("estimate_outside_range" in flag) == (expected != centre)


def test_nested_bounds_leave_a_nan_centre_undefined():
    # A NaN centre is not "moved": normal_bounds flags it and gives NaN bounds.
    estimate, _, lower, upper, flag = nested_bounds(
        float("nan"), 0.01, level=0.9, loss_range=(0.0, 1.0), edge="", n_units=50
    )
    assert np.isnan([estimate, lower, upper]).all()
    assert flag == "undefined_estimate"


# --- defect 2: no errors at all ------------------------------------------------------------


@pytest.mark.parametrize("level", [0.95, 0.9])
def test_perfect_classifier_gets_wilsons_bound_for_zero_errors(level):
    # Iris setosa against the rest is separable: no fit errs on any point. Wilson's interval
    # for 0 errors in N = 150 points is [0, z²/(N + z²)], about 3.84/154 = 0.025 at 95 %.
    X, y = load_iris(return_X_y=True)
    model = make_pipeline(StandardScaler(), LogisticRegression())
    # A seed: with unseeded splits an inner fold of about 67 points now and then let one
    # point cross the boundary (a fresh-clone CI run saw err_ncv = 1/300).
    res = nested_cv(
        model, X, (y == 0).astype(int), n_splits=3, n_repeats=1, level=level, random_state=0
    )
    estimate, lower, upper, _, flag = values(res)
    z = stats.norm.ppf(0.5 + level / 2)
    assert (float(res["err_ncv"]), float(res["err_cv"])) == (0.0, 0.0)
    assert (estimate, lower) == (0.0, 0.0)
    assert upper == pytest.approx(z**2 / (150 + z**2), rel=1e-12)
    assert upper == pytest.approx(wilson(0, 150, level)[1], rel=1e-12)
    assert flag == "no_errors"


@pytest.mark.parametrize(
    ("wrong_from", "flag", "n_errors"), [(None, "no_errors", 0), (0, "all_errors", 60)]
)
def test_zero_one_tables_at_the_edges_get_wilsons_interval(wrong_from, flag, n_errors):
    # Always right (0 errors) or always wrong (N errors) in N = 60 points: Wilson's
    # interval [0, z²/(N + z²)] or [N/(N + z²), 1].
    X, y = sign_data(60)
    res = nested_cv(SignRule(wrong_from), X, y, n_splits=5, n_repeats=2, random_state=0)
    estimate, lower, upper, _, got = values(res)
    assert got == flag
    assert estimate == n_errors / 60
    assert (lower, upper) == pytest.approx(wilson(n_errors, 60, 0.95), rel=1e-12, abs=1e-15)
    assert lower < upper  # not the degenerate [0, 0] or [1, 1]


def test_with_sources_the_bound_counts_sources():
    # The interval is for new sources, whose unit of independence is the source: Wilson's
    # bound for 0 errors in m = 12 sources, z²/(m + z²), not in the 60 points.
    X, y = sign_data(60)
    groups = np.repeat(np.arange(12), 5)
    res = nested_cv(SignRule(), X, y, groups=groups, n_splits=3, n_repeats=1, random_state=0)
    z = stats.norm.ppf(0.975)
    assert res["flag"].item() == "no_errors"
    assert res["upper"].item() == pytest.approx(z**2 / (12 + z**2), rel=1e-12)


def test_error_free_squared_losses_keep_the_degenerate_interval():
    # Wilson's bound is for 0-1 losses only: exact predictions under the squared error
    # (range [0, inf), not a 0-1 loss) leave the zero-variance interval [0, 0], flagged.
    X, _ = sign_data(40)
    res = nested_cv(CopyRule(), X, X[:, 0], n_splits=4, n_repeats=1, random_state=0)
    estimate, lower, upper, _, flag = values(res)
    assert (estimate, lower, upper) == (0.0, 0.0, 0.0)
    assert flag == "zero_variance"
