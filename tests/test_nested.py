import inspect
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from scipy import stats
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.datasets import make_classification, make_regression
from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge

import bayescv
from bayescv._provenance import child_seeds
from bayescv.intervals import ESTIMANDS
from bayescv.nested import bias_constant, nested_cv
from bayescv.nested._core import draw_folds

# --- helpers --------------------------------------------------------------------------


class OLS(RegressorMixin, BaseEstimator):
    """Ordinary least squares with an intercept; deterministic and fast."""

    def fit(self, X, y):
        design = np.column_stack([np.ones(len(X)), X])
        self.coef_ = np.linalg.lstsq(design, y, rcond=None)[0]
        return self

    def predict(self, X):
        return self.coef_[0] + np.asarray(X) @ self.coef_[1:]


FIT_LOG: list = []


class Recorder(RegressorMixin, BaseEstimator):
    """Predicts the training mean; logs the row ids (column 0 of X) it trains and predicts on."""

    def fit(self, X, y):
        self.train_ = frozenset(np.asarray(X)[:, 0].astype(int).tolist())
        self.mean_ = float(np.mean(y))
        FIT_LOG.append(("fit", self.train_))
        return self

    def predict(self, X):
        FIT_LOG.append(("predict", self.train_, np.asarray(X)[:, 0].astype(int)))
        return np.full(len(X), self.mean_)


def with_ids(n, seed=0):
    rng = np.random.default_rng(seed)
    X = np.column_stack([np.arange(n), rng.standard_normal((n, 2))])
    y = X[:, 1] + rng.standard_normal(n)
    return X, y


def linear_data(n, seed, p=2):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    return X, 0.5 + X @ np.linspace(1, -0.5, p) + rng.standard_normal(n)


def drop_volatile(ds):
    out = ds.copy()
    out.attrs = {k: v for k, v in ds.attrs.items() if k not in ("created", "wall_time_s")}
    return out


def reference_nested(X, y, n_splits, n_repeats, n_bias, seed, groups=None):
    """Bates et al.'s Algorithm 1 written out literally, with no fit shared: for each outer
    fold, a fresh (K-1)-fold inner CV (K - 1 fits) and the outer fit: K + K(K-1) fits. Folds
    come from the same seeds as nested_cv's. b_j and the naive SE are var/n over points, or
    the CR1 formula over sources."""
    k = n_splits
    if groups is None:
        units, n_units = np.arange(len(y)), len(y)
    else:
        _, units = np.unique(groups, return_inverse=True)
        n_units = units.max() + 1

    def fit_loss(train, test):
        return (OLS().fit(X[train], y[train]).predict(X[test]) - y[test]) ** 2

    def variance_of_mean(e, u):
        if groups is None:
            return np.var(e, ddof=1) / e.size
        labels = np.unique(u)
        sums = np.array([e[u == s].sum() for s in labels])
        counts = np.array([(u == s).sum() for s in labels])
        m = labels.size
        return m / (m - 1) * np.sum((sums - counts * e.mean()) ** 2) / e.size**2

    nested_root, bias_root = child_seeds(seed, 2)
    a, b, inner, outer, plain, all_inner, all_units, fits = [], [], [], [], [], [], [], 0
    for s in child_seeds(nested_root, n_repeats):
        fold = draw_folds(n_units, k, s)[units]
        out_all = []
        for j in range(k):
            inner_losses = []
            for i in range(k):
                if i == j:
                    continue
                train = np.flatnonzero((fold != i) & (fold != j))
                test = np.flatnonzero(fold == i)
                inner_losses.append(fit_loss(train, test))
                all_units.append(units[test])
                fits += 1
            e_in = np.concatenate(inner_losses)
            all_inner.append(e_in)
            test = np.flatnonzero(fold == j)
            e_out = fit_loss(np.flatnonzero(fold != j), test)
            fits += 1
            out_all.append(e_out)
            inner.append(e_in.mean())
            outer.append(e_out.mean())
            a.append((e_in.mean() - e_out.mean()) ** 2)
            b.append(variance_of_mean(e_out, units[test]))
        plain.append(np.concatenate(out_all).mean())
    for s in child_seeds(bias_root, n_bias):
        fold = draw_folds(n_units, k, s)[units]
        plain.append(
            np.concatenate(
                [fit_loss(np.flatnonzero(fold != j), np.flatnonzero(fold == j)) for j in range(k)]
            ).mean()
        )
    every, every_unit = np.concatenate(all_inner), np.concatenate(all_units)
    if groups is None:
        naive = np.std(every, ddof=1) / np.sqrt(len(y))
    else:
        sums = np.bincount(every_unit, weights=every)
        counts = np.bincount(every_unit)
        naive = np.sqrt(
            n_units / (n_units - 1) * np.sum((sums - counts * every.mean()) ** 2) / every.size**2
        )
    shape = (n_repeats, k)
    return {
        "a": np.reshape(a, shape),
        "b": np.reshape(b, shape),
        "err_inner": np.reshape(inner, shape),
        "err_outer": np.reshape(outer, shape),
        "mse": np.mean(a) - np.mean(b),
        "err_ncv": np.mean(inner),
        "err_cv": np.mean(plain),
        "naive_se": naive,
        "every_inner": every,
        "fits_unshared": fits,
    }


# --- the fits ---------------------------------------------------------------------------


def test_one_fit_per_distinct_training_set():
    FIT_LOG.clear()
    n, k = 23, 5
    X, y = with_ids(n)
    res = nested_cv(Recorder(), X, y, n_splits=k, n_repeats=2, n_bias_repeats=1, random_state=3)
    per_rep = k + k * (k - 1) // 2  # 15
    fits = [entry[1] for entry in FIT_LOG if entry[0] == "fit"]
    assert res.attrs["fits_per_replicate"] == per_rep
    assert res.attrs["n_fits"] == len(fits) == 2 * per_rep + k  # + one plain 5-fold CV
    sizes = res["fold_size"].values
    for r in range(2):  # sequential run: each repetition's fits are contiguous in the log
        train_sets = fits[r * per_rep : (r + 1) * per_rep]
        assert len(set(train_sets)) == per_rep  # no training set fitted twice
        expected = sorted(
            [n - sizes[r, i] - sizes[r, j] for i in range(k) for j in range(i + 1, k)]
            + [n - sizes[r, j] for j in range(k)]
        )
        assert sorted(len(t) for t in train_sets) == expected


def test_fit_count_at_ten_folds_is_55_per_repetition():
    FIT_LOG.clear()
    X, y = with_ids(40)
    res = nested_cv(Recorder(), X, y, n_repeats=3, n_bias_repeats=0, random_state=0)
    # K + K(K-1)/2 = 10 + 45 distinct training sets per repetition, not K + K(K-1) = 100
    assert res.attrs["fits_per_replicate"] == 55
    assert res.attrs["n_fits"] == 3 * 55 == sum(e[0] == "fit" for e in FIT_LOG)


def test_no_point_dropped_when_k_does_not_divide_n():
    FIT_LOG.clear()
    n, k = 23, 5
    X, y = with_ids(n)
    res = nested_cv(Recorder(), X, y, n_splits=k, n_repeats=3, n_bias_repeats=0, random_state=1)
    sizes = res["fold_size"].values
    assert (sizes.sum(axis=1) == n).all()
    assert (np.sort(sizes, axis=1) == [4, 4, 5, 5, 5]).all()  # 23 = 3 * 5 + 2 * 4
    predictions = [entry for entry in FIT_LOG if entry[0] == "predict"]
    per_rep = k + k * (k - 1) // 2
    for r in range(3):
        reps = predictions[r * per_rep : (r + 1) * per_rep]
        outer = [ids for _, train, ids in reps if len(train) >= n - 5]  # outer fits: 18 or 19
        inner = [ids for _, train, ids in reps if len(train) < n - 5]  # pair fits: 13 to 15
        assert len(outer) == k
        np.testing.assert_array_equal(np.sort(np.concatenate(outer)), np.arange(n))
        # every point is tested once in the inner CV of each of the other K - 1 outer folds
        np.testing.assert_array_equal(np.bincount(np.concatenate(inner)), np.full(n, k - 1))
        # ... and never by a model that trained on it
        assert all(not set(ids) & train for _, train, ids in reps)


# --- the numbers ------------------------------------------------------------------------


@pytest.mark.parametrize("grouped", [False, True])
def test_matches_literal_algorithm_without_shared_fits(grouped):
    n, k, reps, n_bias = 23, 5, 3, 2
    X, y = linear_data(n, seed=4)
    groups = np.repeat(np.arange(11), [3, 3, 2, 2, 2, 2, 2, 2, 2, 2, 1]) if grouped else None
    res = nested_cv(
        OLS(), X, y, groups=groups, n_splits=k, n_repeats=reps, n_bias_repeats=n_bias,
        random_state=11,
    )  # fmt: skip
    ref = reference_nested(X, y, k, reps, n_bias, seed=11, groups=groups)
    assert ref["fits_unshared"] == reps * (k + k * (k - 1))  # 75 against 45 shared
    for name in ("a", "b", "err_inner", "err_outer"):
        np.testing.assert_allclose(res[name].values, ref[name], rtol=1e-10, err_msg=name)
    for name in ("mse", "err_ncv", "err_cv", "naive_se"):
        np.testing.assert_allclose(float(res[name]), ref[name], rtol=1e-10, err_msg=name)
    assert res["target"].item() == ("ose" if grouped else "err_xy")
    assert res["target"].item() in ESTIMANDS


def test_interval_equals_the_authors_formula_when_k_divides_n():
    # R code (nestedcv::nested_cv): infl = sqrt(max(0, mean(a - b))) / (sd(ho_errs) / sqrt(n_sub)),
    # n_sub = floor(n (K-1) / K), clipped to [1, sqrt(K)]; bias = (mean(ho_errs) - mean(cv_means))
    # * (1 + ((K-2)/K)^1.5); interval est -/+ qnorm(1 - alpha/2) * sd(ho_errs) / sqrt(n) * infl.
    n, k = 25, 5
    X, y = linear_data(n, seed=2)
    res = nested_cv(
        OLS(), X, y, n_splits=k, n_repeats=4, n_bias_repeats=2, level=0.90, random_state=5
    )
    ref = reference_nested(X, y, k, 4, 2, seed=5)
    sd = np.std(ref["every_inner"], ddof=1)
    n_sub = math.floor(n * (k - 1) / k)
    infl = min(max(np.sqrt(max(0.0, ref["mse"])) / (sd / np.sqrt(n_sub)), 1.0), np.sqrt(k))
    bias = (ref["err_inner"].mean() - ref["err_cv"]) * (1 + ((k - 2) / k) ** 1.5)
    est = ref["err_inner"].mean() - bias
    half = stats.norm.ppf(0.95) * sd / np.sqrt(n) * infl
    np.testing.assert_allclose(res["estimate"].item(), est, rtol=1e-10)
    np.testing.assert_allclose(res["lower"].item(), est - half, rtol=1e-10)
    np.testing.assert_allclose(res["upper"].item(), est + half, rtol=1e-10)
    np.testing.assert_allclose(float(res["inflation"]), infl, rtol=1e-10)


def gaussian_cv_mse_target(n_points, n_splits, n_sim, seed, beta, alpha, sigma):
    """Monte Carlo E[(CV - Err_XY)^2] for OLS with intercept, x ~ N(0, I), n_points points,
    random n_splits-fold CV with equal folds. Err_XY is exact: for a new (x, y),
    E[(y - a_hat - x'b_hat)^2 | data] = sigma^2 + (a_hat - alpha)^2 + |b_hat - beta|^2."""
    rng = np.random.default_rng(seed)
    p = beta.size
    X = rng.standard_normal((n_sim, n_points, p))
    y = alpha + X @ beta + sigma * rng.standard_normal((n_sim, n_points))
    A = np.concatenate([np.ones((n_sim, n_points, 1)), X], axis=2)

    def ols(design, target):
        gram = design.transpose(0, 2, 1) @ design
        return np.linalg.solve(gram, design.transpose(0, 2, 1) @ target[..., None])[..., 0]

    coef = ols(A, y)
    err_xy = sigma**2 + (coef[:, 0] - alpha) ** 2 + ((coef[:, 1:] - beta) ** 2).sum(axis=1)
    # the rows are i.i.d., so consecutive blocks of the rows form a uniformly random partition
    size = n_points // n_splits
    cv = np.zeros(n_sim)
    for f in range(n_splits):
        test = np.arange(f * size, (f + 1) * size)
        train = np.setdiff1d(np.arange(n_points), test)
        c = ols(A[:, train], y[:, train])
        cv += (((A[:, test] @ c[..., None])[..., 0] - y[:, test]) ** 2).sum(axis=1)
    sq = (cv / n_points - err_xy) ** 2
    return sq.mean(), sq.std(ddof=1) / np.sqrt(n_sim)


def check_mse_unbiased(n_datasets, n_repeats, n_sim):
    """Bates et al. Theorem 4: E[mean(a) - mean(b)] = MSE of (K-1)-fold CV on n(K-1)/K points
    about their own Err_XY. Gaussian linear model, OLS: the right side is computed with exact
    Err_XY (formula above) over n_sim data sets; the left side averages nested_cv's mse over
    n_datasets data sets of n points."""
    n, k, sigma, alpha, beta = 40, 5, 1.0, 0.5, np.array([1.0, -0.5])
    target, target_se = gaussian_cv_mse_target(n - n // k, k - 1, n_sim, 99, beta, alpha, sigma)
    rng = np.random.default_rng(2024)
    mse, a, b_ddof0 = [], [], []
    for d in range(n_datasets):
        X = rng.standard_normal((n, 2))
        y = alpha + X @ beta + sigma * rng.standard_normal(n)
        res = nested_cv(
            OLS(), X, y, n_splits=k, n_repeats=n_repeats, n_bias_repeats=0, random_state=d
        )
        mse.append(float(res["mse"]))
        a.append(float(res["a"].mean()))
        m = res["fold_size"].values
        b_ddof0.append(float((res["a"] - res["b"] * (m - 1) / m).mean()))
    mse = np.array(mse)
    est_se = mse.std(ddof=1) / np.sqrt(n_datasets)  # data sets are independent
    tol = 4 * np.hypot(est_se, target_se)  # |z| > 4 has probability 6e-5 if unbiased
    assert abs(mse.mean() - target) < tol, (mse.mean(), target, tol)
    # the check has power: omitting b, or a b with ddof=0 (a slip of the order of
    # E[b]/n_j), would fail it
    assert abs(np.mean(a) - target) > tol
    assert abs(np.mean(b_ddof0) - target) > tol
    return mse.mean(), target, est_se, target_se


def test_mse_estimate_is_unbiased_on_a_gaussian_linear_model():
    # 300 data sets x 10 repetitions: MC se of the mean mse about 6% of the target
    # (within-data-set split noise dominates its variance, hence repetitions).
    _, target, est_se, _ = check_mse_unbiased(300, 10, 100_000)
    assert est_se < 0.1 * target  # the tolerance is tight enough to mean something


@pytest.mark.slow
def test_mse_estimate_is_unbiased_large_monte_carlo():
    _, target, est_se, _ = check_mse_unbiased(3000, 10, 400_000)
    assert est_se < 0.025 * target


# --- options ----------------------------------------------------------------------------


def test_bias_constants_as_published():
    # authors' R code: 1 + ((K-2)/K)^1.5; paper text: 1 + (K-2)/K
    assert bias_constant(10, "code") == pytest.approx(1 + 0.8**1.5)
    assert bias_constant(10, "paper") == pytest.approx(1.8)
    assert bias_constant(5, None) == 0.0
    with pytest.raises(ValueError, match="bias_correction"):
        bias_constant(10, "other")


@pytest.mark.parametrize("choice", ["code", "paper", None])
def test_bias_correction_applied_to_the_estimate(choice):
    X, y = linear_data(30, seed=1)
    res = nested_cv(OLS(), X, y, n_splits=5, n_repeats=2, bias_correction=choice, random_state=0)
    c = bias_constant(5, choice)
    ncv, cv = float(res["err_ncv"]), float(res["err_cv"])
    assert ncv != cv
    assert float(res["bias"]) == pytest.approx(c * (ncv - cv))
    assert res["estimate"].item() == pytest.approx(ncv - c * (ncv - cv))
    assert res.attrs["bias_constant"] == c
    assert res.attrs["bias_correction"] == ("none" if choice is None else choice)


def test_err_cv_pools_outer_folds_and_extra_repetitions():
    X, y = linear_data(30, seed=1)
    res = nested_cv(OLS(), X, y, n_splits=5, n_repeats=5, random_state=0)
    assert res.sizes["bias_replicate"] == 1  # ceil(5 / 5), the authors' default
    pooled = np.concatenate([res["err_cv_replicate"].values, res["err_cv_bias"].values])
    assert float(res["err_cv"]) == pytest.approx(pooled.mean())
    # each repetition's outer folds are one K-fold CV: its error is the size-weighted mean
    sizes = res["fold_size"].values
    np.testing.assert_allclose(
        res["err_cv_replicate"].values, (res["err_outer"] * sizes).sum("fold") / sizes.sum(1)
    )


def test_inflation_clipping():
    X, y = linear_data(30, seed=7)
    kw = {"n_splits": 5, "n_repeats": 3, "random_state": 2}
    code = nested_cv(OLS(), X, y, **kw)
    raw = nested_cv(OLS(), X, y, inflation_bounds=None, **kw)
    unit = nested_cv(OLS(), X, y, inflation_bounds=(1, 1), **kw)
    naive, mse = float(code["naive_se"]), float(code["mse"])
    assert 1 <= float(code["inflation"]) <= math.sqrt(5)
    assert code["se"].item() == pytest.approx(float(code["inflation"]) * naive)
    assert unit["se"].item() == pytest.approx(naive)  # bounds (1, 1): the naive interval
    assert float(code["inflation_raw"]) == pytest.approx(code["inflation_running"].values[-1])
    if mse >= 0:  # the paper's unclipped se = sqrt((K-1)/K * mse)
        assert raw["se"].item() == pytest.approx(math.sqrt(0.8 * mse))
    else:
        assert np.isnan(raw["se"].item())
        assert raw["flag"].item() == "negative_variance"


def test_negative_mse_without_clipping_is_flagged_not_hidden():
    # a noiseless linear model: all held-out errors are ~0 and mse is a tiny difference;
    # search a few seeds for a negative one (it is negative about half the time)
    X, y = linear_data(30, seed=0)
    for seed in range(20):
        res = nested_cv(
            OLS(), X, y, n_splits=5, n_repeats=1, inflation_bounds=None, random_state=seed
        )
        if float(res["mse"]) < 0:
            break
    else:
        pytest.fail("no negative mse in 20 seeds")
    assert np.isnan(res["lower"].item())
    assert res["flag"].item() == "negative_variance"
    clipped = nested_cv(OLS(), X, y, n_splits=5, n_repeats=1, random_state=seed)
    assert clipped["se"].item() == pytest.approx(float(clipped["naive_se"]))  # lower bound 1
    assert clipped["flag"].item() == "negative_mse"  # the width is the clip's (it read "")
    # bounds (0, ∞): a zero width, which read "zero_variance" alone, as if the mse were 0
    floor = nested_cv(
        OLS(), X, y, n_splits=5, n_repeats=1, inflation_bounds=(0, np.inf), random_state=seed
    )
    assert set(floor["flag"].item().split(",")) == {"zero_variance", "negative_mse"}


def test_longer_run_extends_a_shorter_one():
    X, y = linear_data(30, seed=3)
    short = nested_cv(OLS(), X, y, n_splits=5, n_repeats=2, n_bias_repeats=1, random_state=8)
    long = nested_cv(OLS(), X, y, n_splits=5, n_repeats=4, n_bias_repeats=2, random_state=8)
    for name in ("a", "b", "err_inner", "mse_running", "inflation_running"):
        np.testing.assert_array_equal(short[name].values, long[name].values[:2])
    assert short["err_cv_bias"].values[0] == long["err_cv_bias"].values[0]


def test_identical_for_n_jobs_1_and_2():
    X, y = linear_data(40, seed=5)
    groups = np.repeat(np.arange(10), 4)
    kw = {"n_splits": 4, "n_repeats": 4, "random_state": 123}
    for g in (None, groups):
        one = nested_cv(LinearRegression(), X, y, groups=g, n_jobs=1, **kw)
        two = nested_cv(LinearRegression(), X, y, groups=g, n_jobs=2, **kw)
        xr.testing.assert_identical(drop_volatile(one), drop_volatile(two))


def test_grouped_folds_keep_sources_whole():
    FIT_LOG.clear()
    n = 40
    X, y = with_ids(n)
    groups = np.repeat(np.arange(8), 5)
    res = nested_cv(Recorder(), X, y, groups=groups, n_splits=3, n_repeats=2, random_state=0)
    for entry in FIT_LOG:
        if entry[0] == "predict":
            tested = set(groups[entry[2]].tolist())
            trained = {groups[i] for i in entry[1]}
            assert not tested & trained
    assert res.attrs["n_sources"] == 8
    assert "new sources" in res.attrs["target_detail"]
    with pytest.raises(ValueError, match="at least two sources in every outer fold"):
        nested_cv(Recorder(), X, y, groups=groups, n_splits=5)


def test_classifier_defaults_to_zero_one_loss():
    X, y = make_classification(n_samples=60, n_features=4, random_state=0)
    res = nested_cv(LogisticRegression(), X, y, n_splits=3, n_repeats=2, random_state=0)
    assert res.attrs["loss_name"] == "zero_one"
    assert 0 <= float(res["err_ncv"]) <= 1
    assert ((res["a"] >= 0) & (res["a"] <= 1)).all()
    logl = nested_cv(
        LogisticRegression(), X, y, n_splits=3, n_repeats=1, loss="log_loss", random_state=0
    )
    assert logl.attrs["loss_name"] == "log_loss"
    with pytest.raises(ValueError, match="predict_proba"):
        nested_cv(LinearRegression(), X, y, n_splits=3, loss="log_loss")


def test_result_round_trips_through_netcdf(tmp_path):
    X, y = linear_data(24, seed=0)
    res = nested_cv(OLS(), X, y, n_splits=4, n_repeats=2, random_state=0)
    path = tmp_path / "nested.nc"
    res.to_netcdf(path, engine="h5netcdf")
    with xr.open_dataset(path, engine="h5netcdf") as back:
        xr.testing.assert_allclose(back.load(), res)
        assert back.attrs["n_fits"] == res.attrs["n_fits"]
        assert back["a"].attrs["description"].startswith("(inner CV error")


def test_progress_bar_counts_repetitions(capsys):
    X, y = linear_data(24, seed=0)
    nested_cv(OLS(), X, y, n_splits=4, n_repeats=2, n_bias_repeats=1, progress=True)
    err = capsys.readouterr().err
    assert "nested CV" in err
    assert "3/3" in err


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n_splits": 2}, "n_splits must be an integer >= 3"),
        ({"n_repeats": 0}, "n_repeats must be an integer >= 1"),
        ({"n_bias_repeats": -1}, "n_bias_repeats"),
        ({"level": 1.5}, "level"),
        ({"bias_correction": "both"}, "bias_correction"),
        ({"inflation_bounds": (2, 1)}, "lo <= hi"),
        ({"inflation_bounds": "paper"}, "inflation_bounds"),
        ({"n_splits": 13}, "at least 2 \\* n_splits = 26 points"),
    ],
)
def test_bad_options_raise(kwargs, match):
    X, y = linear_data(25, seed=0)
    with pytest.raises(ValueError, match=match):
        nested_cv(OLS(), X, y, **kwargs)


def test_class_labels_on_a_continuous_target_are_refused_before_any_fit():
    # with_ids's y is a line plus Gaussian noise: type_of_target gives 'continuous'. A
    # regressor's predictions never equal it, so its zero-one losses were all 1 and the
    # interval "1 [1, 1]"; a classifier failed only inside its first fit.
    X, y = with_ids(30)
    FIT_LOG.clear()
    with pytest.raises(ValueError, match="loss 'zero_one' compares class labels"):
        nested_cv(Recorder(), X, y, n_splits=3, loss="zero_one")
    assert FIT_LOG == []  # refused before any fit
    with pytest.raises(ValueError, match=r"continuous target .*not class labels.*classifier"):
        nested_cv(LogisticRegression(), X, y, n_splits=3)
    # Integer-valued targets are class labels to scikit-learn (type_of_target 'multiclass'),
    # but a regressor's continuous predictions of them are not: every 0-1 loss would be 1.
    # Like scikit-learn's accuracy scorer, the first fold refuses them.
    with pytest.raises(ValueError, match=r"non-integer value.*not labels"):
        nested_cv(Recorder(), X, np.round(y), n_splits=3, n_repeats=1, loss="zero_one")


def test_docs_page_states_the_default_level_and_a_writer_that_works(tmp_path):
    # docs/nested.md said "level 0.90 by default" (the signature's default is 0.95) and that
    # the result "can be written with bayescv.to_netcdf", which is for loss tables.
    page = (Path(__file__).resolve().parents[1] / "docs" / "nested.md").read_text("utf-8")
    default = inspect.signature(nested_cv).parameters["level"].default
    assert re.findall(r"level ([0-9.]+) by\s+default", page) == [f"{default:.2f}"]
    X, y = linear_data(24, seed=0)
    res = nested_cv(OLS(), X, y, n_splits=4, n_repeats=1, random_state=0)
    assert "`result.to_netcdf(path)`" in page
    res.to_netcdf(tmp_path / "page.nc")  # the writer the page names
    with xr.open_dataset(tmp_path / "page.nc") as back:
        assert back["estimate"].item() == res["estimate"].item()
    with pytest.raises(ValueError, match="no 'loss' variable"):
        bayescv.to_netcdf(res, tmp_path / "table.nc")
    # wherever the page names bayescv.to_netcdf, it says what it is for
    named = re.findall(r"bayescv\.to_netcdf[^.]*", " ".join(page.split()))
    assert named
    assert all("is for loss tables" in n for n in named)


def test_pandas_input_and_estimator_left_unfitted():
    X, y = linear_data(30, seed=6)
    groups = np.repeat(np.arange(10), 3)
    model = LinearRegression()
    kw = {"n_splits": 3, "n_repeats": 2, "random_state": 1}
    arrays = nested_cv(model, X, y, groups=groups, **kw)
    frames = nested_cv(
        model, pd.DataFrame(X), pd.Series(y), groups=pd.Series(groups).astype(str), **kw
    )
    xr.testing.assert_allclose(drop_volatile(arrays), drop_volatile(frames))
    assert not hasattr(model, "coef_")  # every fit was on a clone


# --- batched fits (issue 19) ------------------------------------------------------------


def test_batched_fits_equal_the_per_fit_path():
    # Reference: the same repetitions fitted one scikit-learn call at a time.
    X, y = linear_data(60, seed=11)
    kw = {"n_splits": 5, "n_repeats": 10, "random_state": 4}
    fast = nested_cv(LinearRegression(), X, y, **kw)
    slow = nested_cv(LinearRegression(), X, y, batched=False, **kw)
    assert (fast.attrs["fit_engine"], slow.attrs["fit_engine"]) == ("batched", "per-fit")
    for name in ("a", "b", "err_inner", "err_outer", "err_cv_bias", "estimate", "se"):
        np.testing.assert_allclose(fast[name].values, slow[name].values, rtol=1e-8, atol=1e-12)


def test_batched_unpenalised_logistic_equals_scikit_learns_tight_fit():
    # Bates et al.'s learner: LogisticRegression(C=inf), zero-one loss. Per-fit reference:
    # scikit-learn's newton-cholesky at tol=1e-12, whose optimum the batched Newton reaches.
    X, y = make_classification(
        120, 4, n_informative=3, n_redundant=0, class_sep=0.5, random_state=3
    )
    kw = {"n_splits": 5, "n_repeats": 9, "random_state": 2}
    fast = nested_cv(LogisticRegression(C=np.inf), X, y, batched=True, **kw)
    ref = LogisticRegression(C=np.inf, solver="newton-cholesky", tol=1e-12, max_iter=1000)
    slow = nested_cv(ref, X, y, batched=False, **kw)
    assert fast.attrs["fit_engine"] == "batched"
    for name in ("a", "b", "err_inner", "err_outer", "estimate", "lower", "upper"):
        np.testing.assert_allclose(fast[name].values, slow[name].values, rtol=1e-10)


def test_batched_results_do_not_depend_on_blocks_or_n_jobs():
    # Repetitions are fitted 8 at a time; a repetition's numbers must not depend on which
    # others share its block, nor on how blocks are spread over processes.
    X, y = linear_data(40, seed=6)
    kw = {"n_splits": 4, "random_state": 9, "n_bias_repeats": 0}
    short = nested_cv(LinearRegression(), X, y, n_repeats=3, **kw)
    long = nested_cv(LinearRegression(), X, y, n_repeats=19, **kw)
    two = nested_cv(LinearRegression(), X, y, n_repeats=19, n_jobs=2, **kw)
    for name in ("a", "b", "err_inner", "err_outer"):
        np.testing.assert_array_equal(short[name].values, long[name].values[:3])
    xr.testing.assert_identical(drop_volatile(long), drop_volatile(two))


def test_heavy_tailed_losses_flag_the_nested_interval_and_warn():
    # Squared errors of Student-t noise with 2 d.f. have tail shape k = 2/2 = 1 (infinite
    # variance), far above the 0.5 threshold; Gaussian noise gives k = 0.
    from bayescv.tails import HeavyTailWarning

    rng = np.random.default_rng(0)
    X = rng.standard_normal((400, 3))
    heavy = X @ [1.0, 2.0, 3.0] + rng.standard_t(2, size=400)
    light = X @ [1.0, 2.0, 3.0] + rng.standard_normal(400)
    kw = {"n_splits": 5, "n_repeats": 2, "random_state": 0}
    with pytest.warns(HeavyTailWarning, match="heavy upper tail"):
        res = nested_cv(LinearRegression(), X, heavy, **kw)
    assert "heavy_tail" in res["flag"].item()
    assert res.attrs["khat"] > 0.5
    calm = nested_cv(LinearRegression(), X, light, **kw)
    assert calm["flag"].item() == ""
    assert calm.attrs["khat"] < 0.5


def test_a_negative_mse_gives_nan_inflation_not_zero():
    # The MSE estimate mean(a) - mean(b) can be negative (one repetition, small n); the
    # inflation sqrt((K-1)/K * mse) / naive_se is then undefined. It was reported as 0,
    # which reads as "no inflation"; the interval itself is NaN, flagged negative_variance.
    X, y = make_regression(n_samples=30, n_features=3, noise=5, random_state=16)
    out = nested_cv(Ridge(), X, y, n_splits=3, n_repeats=1, random_state=16, inflation_bounds=None)
    assert float(out["mse"]) < 0
    assert "negative_variance" in str(out["flag"].values)
    assert np.isnan(float(out["inflation_raw"]))
    assert np.isnan(out["inflation_running"].values).all()


@pytest.mark.parametrize("missing", [np.nan, None])
def test_missing_group_labels_are_refused(missing):
    X, y = make_regression(n_samples=30, n_features=3, noise=5, random_state=0)
    groups = np.repeat(np.arange(10), 3).astype(object)
    groups[0] = missing
    with pytest.raises(ValueError, match="1 missing label"):
        nested_cv(Ridge(), X, y, groups=groups, n_splits=3, n_repeats=1, random_state=0)
