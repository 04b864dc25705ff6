"""Defects found by using bayescv.shift as a new user would (each test failed before its fix)."""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.model_selection import GroupKFold, KFold, RepeatedKFold

from bayescv import cross_val_losses
from bayescv._provenance import child_seeds
from bayescv.shift import (
    density_ratio_weights,
    importance_weighted_cv,
    importance_weighted_cvs,
    target_risk_intervals,
)


def regression(n=60, seed=0):
    """A curve fit by a line, source features N(0, 1), and the exact weights toward N(1, 1)."""
    rng = np.random.default_rng(seed)
    x = rng.normal(0.0, 1.0, (n, 1))
    y = x[:, 0] ** 2 + rng.normal(0.0, 0.5, n)
    return x, y, np.exp(x[:, 0] - 0.5)


def three_sources(n=40, seed=0):
    rng = np.random.default_rng(seed)
    groups = np.repeat(["a", "b", "c"], n)
    x = rng.normal(np.repeat([-0.5, 0.0, 0.5], n), 1.0)[:, None]
    return x, x[:, 0] ** 2 + rng.normal(0.0, 0.5, 3 * n), groups


def test_repeated_cv_keeps_every_repetition():
    # importance_weighted_cv squeezed the replicate dim of a repeated-CV table away, silently
    # reporting the first repetition only (and a source_risk_se √R too small).
    x, y, w = regression()
    cv = RepeatedKFold(n_splits=3, n_repeats=2, random_state=0)
    ds = importance_weighted_cv(LinearRegression(), x, y, weights=w, cv=cv, random_state=0)
    # the same table and weights through target_risk_intervals (the CV seed is the first child)
    table = cross_val_losses(LinearRegression(), x, y, cv=cv, random_state=child_seeds(0, 2)[0])
    expected = target_risk_intervals(table, w)
    assert ds["estimate"].dims == ("replicate", "method_name")
    np.testing.assert_allclose(ds["estimate"].values, expected["estimate"].values)
    np.testing.assert_allclose(ds["se"].values, expected["se"].values)
    loss = table["loss"].values  # (replicate, point): naive SE per repetition, averaged
    assert ds.attrs["source_risk"] == pytest.approx(loss.mean())
    assert ds.attrs["source_risk_se"] == pytest.approx(
        (loss.std(axis=1, ddof=1) / np.sqrt(loss.shape[1])).mean()
    )
    var = (expected["se"] ** 2).mean("replicate")  # mean variance over the repetitions
    ratio = var.sel(method_name="iw_control_variate") / var.sel(method_name="iw")
    assert ds.attrs["variance_ratio"] == pytest.approx(float(ratio))


def test_repeated_cv_is_refused_by_the_per_source_check():
    # importance_weighted_cvs crashed inside xarray ("conflicting sizes for dimension").
    x, y, groups = three_sources()
    cv = RepeatedKFold(n_splits=3, n_repeats=2, random_state=0)
    with pytest.raises(ValueError, match="needs a single-run cv"):
        importance_weighted_cvs(LinearRegression(), x, y, groups, cv=cv, random_state=0)


def test_unnormalised_weights_are_warned_about_once():
    # The weights were checked before the CV fits and again with the losses: two warnings.
    x, y, w = regression()
    with pytest.warns(UserWarning, match="look unnormalised") as record:
        importance_weighted_cv(LinearRegression(), x, y, weights=3 * w, cv=3, random_state=0)
    assert len([r for r in record if "unnormalised" in str(r.message)]) == 1
    assert record[0].filename == __file__


def test_weight_cv_as_a_list_of_splits_gets_a_short_error():
    # The message printed every index array of the list (hundreds of lines).
    x, _, _ = regression()
    xt = x + 1.0
    splits = list(KFold(3).split(np.vstack([x, xt])))
    with pytest.raises(ValueError, match="int or a splitter, got a list") as info:
        density_ratio_weights(x, xt, cv=splits)
    assert len(str(info.value)) < 300


@pytest.mark.parametrize("missing", [np.nan, None])
def test_missing_source_labels_are_refused(missing):
    # NaN became a source with no points ("120 source and 0 target points"); None a TypeError.
    x, y, groups = three_sources()
    groups = groups.astype(object)
    groups[-1] = missing
    with pytest.raises(ValueError, match="groups has 1 missing label"):
        importance_weighted_cvs(LinearRegression(), x, y, groups, cv=3, random_state=0)


def test_an_error_names_the_held_out_source():
    # "3 source and 50 target points" did not say which source was held out.
    x, y, groups = three_sources()
    groups = groups.copy()
    groups[:37] = "b"  # source "a" keeps 3 points, fewer than the 5 weight folds
    with pytest.raises(ValueError, match="with source 'a' held out as the target"):
        importance_weighted_cvs(LinearRegression(), x, y, groups, cv=3, random_state=0)


def test_brier_uses_the_problems_classes_for_every_held_out_source():
    # A class present in one source only: with that source held out, the others are a
    # binary problem, and their CV losses and the true risk used the binary Brier
    # (1 - p_true)² while the other rows used the three-class sum (twice as large).
    rng = np.random.default_rng(0)
    groups = np.repeat(["a", "b", "c"], 80)
    x = rng.normal(np.repeat([-0.3, 0.0, 0.3], 80), 1.0)[:, None]
    y = np.where(x[:, 0] + rng.normal(0.0, 1.0, 240) > 0, "hi", "lo").astype(object)
    y[(groups == "c") & (x[:, 0] > 0.8)] = "top"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tiny class: scikit-learn may warn
        ds = importance_weighted_cvs(
            LogisticRegression(), x, y, groups, cv=5, loss="brier", random_state=0
        )
    held_out = groups == "c"
    model = LogisticRegression().fit(x[~held_out], y[~held_out])
    proba = model.predict_proba(x[held_out])  # columns "hi", "lo"; "top" has probability 0
    onehot = np.stack([y[held_out] == c for c in ("hi", "lo", "top")], axis=1).astype(float)
    expected = ((np.c_[proba, np.zeros(len(proba))] - onehot) ** 2).sum(axis=1).mean()
    assert ds["true_risk"].sel(source="c").item() == pytest.approx(expected)


def test_per_source_check_warns_once_about_far_off_weights_and_names_the_sources():
    # One unnamed warning per affected held-out source: the user could not tell which.
    rng = np.random.default_rng(0)
    groups = np.repeat(["a", "b", "c"], 60)
    x = rng.normal(np.repeat([-3.0, 0.0, 3.0], 60), 1.0)[:, None]
    y = x[:, 0] ** 2 + rng.normal(0.0, 0.5, 180)
    with pytest.warns(UserWarning, match="look unnormalised") as record:
        ds = importance_weighted_cvs(LinearRegression(), x, y, groups, cv=3, random_state=0)
    messages = [str(r.message) for r in record if "look unnormalised" in str(r.message)]
    flagged = ["mean_weight_not_1" in f for f in ds["flag"].sel(method_name="iw").values]
    assert flagged == [True, False, True]
    assert len(messages) == 1
    assert "held-out source(s) 'a', 'c'" in messages[0]


@pytest.mark.parametrize("weight", ["balanced", {0: 1.0, 1: 3.0}])
def test_a_raw_domain_classifier_with_class_weights_is_refused(weight):
    # class_weight="balanced" already undoes the domains' sizes; with the factor n_S/n_T on
    # top and no recalibration, 400 source against 100 target points gave weights averaging
    # 3.97, not 1. Recalibrated (the default for a user's classifier), the probabilities
    # follow the domain sizes again: mean weight 0.99 with or without class weights.
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from bayescv.shift import density_ratio_weights

    rng = np.random.default_rng(0)
    xs, xt = rng.normal(0, 1, (400, 1)), rng.normal(0.3, 1, (100, 1))
    clf = make_pipeline(StandardScaler(), LogisticRegression(class_weight=weight))
    with pytest.raises(ValueError, match="logisticregression__class_weight"):
        density_ratio_weights(xs, xt, classifier=clf, calibration="none", random_state=0)
    calibrated = density_ratio_weights(xs, xt, classifier=clf, random_state=0)
    assert abs(calibrated.attrs["mean_weight"] - 1) < 0.1


def test_group_splitter_takes_groups():
    """``cv=GroupKFold(3)`` needs the rows' groups: before, importance_weighted_cv had no
    `groups` and sklearn raised "The 'groups' parameter should not be None". The result must
    equal target_risk_intervals on cross_val_losses with the same splitter and groups
    (GroupKFold is deterministic, so the CV seed plays no part)."""
    x, y, w = regression()
    groups = np.repeat(np.arange(12), 5)
    ds = importance_weighted_cv(
        LinearRegression(), x, y, weights=w, cv=GroupKFold(3), groups=groups, random_state=0
    )
    table = cross_val_losses(LinearRegression(), x, y, cv=GroupKFold(3), groups=groups)
    expected = target_risk_intervals(table, w)
    np.testing.assert_allclose(ds["estimate"].values, expected["estimate"].values, rtol=1e-12)
    with pytest.raises(ValueError, match="pass cv=GroupKFold"):
        importance_weighted_cv(LinearRegression(), x, y, weights=w, groups=groups)


def test_series_weights_must_follow_the_rows_of_a_frame():
    """Weights are taken by position; a Series indexed in another order than X_source's
    frame was silently misaligned (each row got another row's weight)."""
    x, y, w = regression()
    frame = pd.DataFrame(x, index=np.arange(len(y))[::-1])
    series = pd.Series(w, index=np.arange(len(y)))
    with pytest.raises(ValueError, match="index differs from X_source's"):
        importance_weighted_cv(LinearRegression(), frame, y, weights=series, cv=3)
    ds = importance_weighted_cv(
        LinearRegression(), frame, y, weights=series.reindex(frame.index), cv=3, random_state=0
    )
    assert np.isfinite(ds["estimate"].values).all()
