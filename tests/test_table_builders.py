"""Loss tables from results users already have: repeated CV on their own splits,
``cross_val_predict`` output (:func:`bayescv.losses.from_predictions`) and ArviZ's pointwise
ELPD (:func:`bayescv.losses.from_elpd`); and the docs section that shows them."""

import re
import warnings
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
from scipy import stats
from sklearn.datasets import make_classification, make_regression
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.model_selection import (
    GroupKFold,
    KFold,
    LeaveOneGroupOut,
    RepeatedKFold,
    RepeatedStratifiedKFold,
    ShuffleSplit,
    StratifiedGroupKFold,
    cross_val_predict,
)

from bayescv.classical import cv_intervals
from bayescv.cv import bootstrap_cv_losses, cross_val_losses, get_loss, losses_from_predictions
from bayescv.losses import from_elpd, from_predictions, loss_differences, stack_replicates

DOC = Path(__file__).resolve().parents[1] / "docs" / "getting-started.md"


@pytest.fixture(scope="module")
def data():
    """60 points in 6 sources of 10, a regression and a binary classification target."""
    X, y_reg = make_regression(n_samples=60, n_features=3, noise=5.0, random_state=0)
    Xc, y_cls = make_classification(n_samples=60, n_features=4, random_state=0)
    groups = np.repeat(np.array(list("abcdef")), 10)
    return X, y_reg, Xc, y_cls, groups


def drop(attrs, *keys):
    return {k: v for k, v in attrs.items() if k not in ("created", *keys)}


def runs_of(splitter, X, y, groups=None, *, per):
    """The folds of a repeated splitter, cut into its runs of `per` folds."""
    folds = list(splitter.split(X, y, groups))
    return [folds[i : i + per] for i in range(0, len(folds), per)]


class RepeatedStratifiedGroupKFold:
    """A repeated group splitter as users write them: n_repeats shuffled StratifiedGroupKFolds."""

    def __init__(self, n_splits=3, n_repeats=2, random_state=None, *, announce=True):
        self.n_splits, self.random_state = n_splits, random_state
        if announce:  # without it, the runs are found by their test sets alone
            self.n_repeats = n_repeats
        self._repeats = n_repeats

    def split(self, X, y, groups=None):
        rng = np.random.default_rng(self.random_state)
        for _ in range(self._repeats):
            seed = int(rng.integers(2**31))
            cv = StratifiedGroupKFold(self.n_splits, shuffle=True, random_state=seed)
            yield from cv.split(X, y, groups)

    def get_n_splits(self, X=None, y=None, groups=None):
        return self.n_splits * self._repeats

    def __repr__(self):
        return f"RepeatedStratifiedGroupKFold(n_splits={self.n_splits}, n_repeats={self._repeats})"


class Scripted:
    """A splitter that yields given folds (and says n_repeats when told)."""

    def __init__(self, folds, n_repeats=None):
        self.folds = folds
        if n_repeats is not None:
            self.n_repeats = n_repeats

    def split(self, X, y=None, groups=None):
        yield from self.folds

    def __repr__(self):
        return "Scripted()"


# --- repeated CV on the user's own splits ---------------------------------------------------


@pytest.mark.parametrize("kind", ["RepeatedKFold", "RepeatedStratifiedKFold", "group", "found"])
def test_repeated_splitter_equals_stacked_single_runs(data, kind):
    X, y_reg, Xc, y_cls, groups = data
    if kind == "RepeatedKFold":
        est, X, y, g = Ridge(), X, y_reg, None
        cv, per = RepeatedKFold(n_splits=4, n_repeats=3, random_state=0), 4
    elif kind == "RepeatedStratifiedKFold":
        est, X, y, g = LogisticRegression(), Xc, y_cls, None
        cv, per = RepeatedStratifiedKFold(n_splits=3, n_repeats=3, random_state=1), 3
    else:  # sources kept whole; with and without an n_repeats attribute
        est, X, y, g = LogisticRegression(), Xc, y_cls, groups
        cv = RepeatedStratifiedGroupKFold(3, 3, random_state=2, announce=kind == "group")
        per = 3
    table = cross_val_losses(est, X, y, groups=g, cv=cv, random_state=0)
    runs = runs_of(cv, X, y, g, per=per)
    singles = [cross_val_losses(est, X, y, groups=g, cv=run, random_state=0) for run in runs]
    stacked = stack_replicates(singles, replicate_kind="repeat")
    assert table.sizes == {"replicate": 3, "obs": 60}
    assert table.attrs["replicate_kind"] == "repeat"
    xr.testing.assert_identical(table.drop_attrs(), stacked.drop_attrs())
    assert drop(table.attrs, "cv") == drop(stacked.attrs, "cv")
    assert table.attrs["cv"] == repr(cv)
    # the same runs as an explicit list of runs: identical, attributes included
    from_list = cross_val_losses(est, X, y, groups=g, cv=runs, random_state=0)
    xr.testing.assert_identical(from_list.drop_attrs(), stacked.drop_attrs())
    assert drop(from_list.attrs) == drop(stacked.attrs)


def test_repetitions_differ_and_each_partitions(data):
    X, y, *_ = data
    table = cross_val_losses(Ridge(), X, y, cv=RepeatedKFold(n_splits=3, n_repeats=2))
    for row in table["index"].values:
        np.testing.assert_array_equal(np.sort(row), np.arange(60))
    first, second = (
        row[blk == 0]
        for row, blk in zip(table["index"].values, table["block"].values, strict=True)
    )
    assert set(first) != set(second)
    # random_state=None on the splitter: seeded from cross_val_losses' random_state
    a = cross_val_losses(Ridge(), X, y, cv=RepeatedKFold(n_splits=3, n_repeats=2), random_state=5)
    b = cross_val_losses(Ridge(), X, y, cv=RepeatedKFold(n_splits=3, n_repeats=2), random_state=5)
    xr.testing.assert_identical(a.drop_attrs(), b.drop_attrs())


def test_flat_list_of_complete_partitions_gives_one_replicate_each(data):
    X, y, *_ = data
    runs = runs_of(RepeatedKFold(n_splits=3, n_repeats=2, random_state=0), X, y, per=3)
    flat = cross_val_losses(Ridge(), X, y, cv=[f for run in runs for f in run], random_state=0)
    nested = cross_val_losses(Ridge(), X, y, cv=runs, random_state=0)
    xr.testing.assert_identical(flat.drop_attrs(), nested.drop_attrs())


def test_repeated_splitter_keeps_every_fold_model(data):
    X, y, *_ = data
    cv = RepeatedKFold(n_splits=3, n_repeats=2, random_state=0)
    table = cross_val_losses(Ridge(), X, y, cv=cv, return_estimator=True)
    assert table["estimator"].dims == ("replicate", "fold")
    assert table["estimator"].shape == (2, 3)


@pytest.mark.parametrize(
    ("cv", "match"),
    [
        (ShuffleSplit(n_splits=3, random_state=0), r"ShuffleSplit.*do not partition"),
        (Scripted([(np.arange(30, 60), np.arange(30)), (np.arange(20), np.arange(20, 60))]),
         r"Scripted\(\) do not partition.*test set 1 tests 10 point\(s\), the first row 20"),
        (Scripted([(np.arange(30, 60), np.arange(30)), (np.arange(30), np.arange(30, 60)),
                   (np.arange(30, 60), np.arange(30))]),
         r"never tested in the last repetition \(test set 2\)"),
        (Scripted([(np.arange(30, 60), np.arange(30)), (np.arange(30), np.arange(30, 60)),
                   (np.arange(20, 60), np.arange(20)), (np.arange(20), np.arange(20, 50))],
                  n_repeats=2),
         r"repetition 1 of Scripted\(\) do not partition the data: 10 point\(s\) never tested"),
        (Scripted([(np.arange(30, 60), np.arange(30)), (np.arange(30), np.arange(30, 60)),
                   (np.arange(30, 60), np.arange(30))], n_repeats=2),
         r"gave 3 splits, which do not divide into its n_repeats=2"),
        ([[(np.arange(30, 60), np.arange(30)), (np.arange(30), np.arange(30, 60))],
          [(np.arange(30, 60), np.arange(30)), (np.arange(30), np.arange(31, 60))]],
         r"run 1 of the explicit list of runs do not partition.*1 point\(s\) never tested"),
        ([[(np.arange(30, 60), np.arange(30)), (np.arange(31), np.arange(30, 60))]],
         r"fold 1 of run 0 of the explicit list of runs: training and test sets overlap"),
    ],
    ids=["ShuffleSplit", "twice", "never", "n_repeats-run", "n_repeats-count", "run", "overlap"],
)  # fmt: skip
def test_repetitions_that_do_not_partition_are_refused(data, cv, match):
    X, y, *_ = data
    with pytest.raises(ValueError, match=match):
        cross_val_losses(Ridge(), X, y, cv=cv)


def test_n_repeats_with_a_repeated_splitter_is_refused(data):
    X, y, *_ = data
    with pytest.raises(ValueError, match=r"n_repeats=2 with RepeatedKFold.*repeats the CV itself"):
        cross_val_losses(Ridge(), X, y, cv=RepeatedKFold(n_splits=3, n_repeats=2), n_repeats=2)
    runs = runs_of(RepeatedKFold(n_splits=3, n_repeats=2, random_state=0), X, y, per=3)
    with pytest.raises(ValueError, match="fixed"):
        cross_val_losses(Ridge(), X, y, cv=runs, n_repeats=2)
    hidden = RepeatedStratifiedGroupKFold(3, 2, announce=False)  # found only when split
    Xc, yc, groups = data[2], data[3], data[4]
    with pytest.raises(ValueError, match="repeats the CV itself"):
        cross_val_losses(LogisticRegression(), Xc, yc, groups=groups, cv=hidden, n_repeats=2)
    with pytest.raises(ValueError, match="one partition per resample"):
        bootstrap_cv_losses(Ridge(), X, y, cv=RepeatedKFold(n_splits=3), n_bootstrap=2)


# --- from_predictions ------------------------------------------------------------------------


def assert_same_losses(built, ran):
    """Same losses, blocks, rows and sources, and the same loss, range, scheme and splits."""
    # Least squares run batched by default (bayescv.cv._batched): equal to rounding.
    xr.testing.assert_allclose(built.drop_attrs(), ran.drop_attrs(), rtol=1e-10, atol=1e-12)
    for name in ("block", "index"):
        np.testing.assert_array_equal(built[name].values, ran[name].values)
    for key in ("loss_name", "loss_range", "scheme", "cv", "n_splits"):
        assert built.attrs[key] == ran.attrs[key], key


@pytest.mark.parametrize(
    ("task", "loss", "method"),
    [
        ("regression", "squared", "predict"),
        ("regression", "absolute", "predict"),
        ("classification", "zero_one", "predict"),
        ("classification", "log_loss", "predict_proba"),
        ("classification", "brier", "predict_proba"),
    ],
)
def test_cross_val_predict_round_trip(data, task, loss, method):
    X, y_reg, Xc, y_cls, _ = data
    est, X, y = (Ridge(), X, y_reg) if task == "regression" else (LogisticRegression(), Xc, y_cls)
    cv = KFold(5, shuffle=True, random_state=0)
    pred = cross_val_predict(est, X, y, cv=cv, method=method)
    built = losses_from_predictions(y, pred, cv, loss=loss, estimator=est)
    ran = cross_val_losses(est, X, y, cv=cv, loss=loss)
    assert_same_losses(built, ran)
    assert built.attrs["estimator"] == ran.attrs["estimator"]
    # the same folds as a list of (train, test), or as the fold label of every sample
    folds = list(cv.split(X))
    labels = np.empty(len(y), dtype=int)
    for k, (_, test) in enumerate(folds):
        labels[test] = k
    for given in (folds, labels):
        other = losses_from_predictions(y, pred, given, loss=loss)
        xr.testing.assert_identical(other.drop_attrs(), built.drop_attrs())


@pytest.mark.parametrize("cv", [GroupKFold(3), LeaveOneGroupOut()], ids=repr)
def test_round_trip_with_sources(data, cv):
    _, _, Xc, y, groups = data
    pred = cross_val_predict(LogisticRegression(), Xc, y, groups=groups, cv=cv)
    built = losses_from_predictions(y, pred, cv, loss="zero_one", groups=groups)
    ran = cross_val_losses(LogisticRegression(), Xc, y, groups=groups, cv=cv, loss="zero_one")
    assert_same_losses(built, ran)
    assert built.attrs["scheme"] == "source"
    if isinstance(cv, LeaveOneGroupOut):  # one source per fold: the source names the block
        np.testing.assert_array_equal(built["block"].values, built["source"].values)


def test_multiclass_probabilities_and_a_missing_class():
    X, y = make_classification(n_samples=45, n_classes=3, n_informative=3, random_state=0)
    cv = KFold(3, shuffle=True, random_state=0)
    proba = cross_val_predict(LogisticRegression(), X, y, cv=cv, method="predict_proba")
    for loss in ("log_loss", "brier"):
        built = losses_from_predictions(y, proba, cv, loss=loss)
        assert_same_losses(built, cross_val_losses(LogisticRegression(), X, y, cv=cv, loss=loss))
    assert built.attrs["loss_range"] == [0.0, 2.0]  # multiclass Brier (loss_range_for)


def test_layer_one_takes_any_callable_and_a_loss_object(data):
    X, y, *_ = data
    cv = KFold(4, shuffle=True, random_state=0)
    pred = cross_val_predict(Ridge(), X, y, cv=cv)

    def squared(y_true, y_pred):
        return (y_true - y_pred) ** 2

    plain = from_predictions(y, pred, cv, loss=squared)
    assert plain.attrs["loss_name"] == "squared"
    assert "loss_range" not in plain.attrs  # a plain callable declares none...
    np.testing.assert_array_equal(plain["loss"].values, (y - pred)[plain["index"].values] ** 2)
    ranged = from_predictions(y, pred, cv, loss=squared, loss_range=(0, np.inf))
    assert ranged.attrs["loss_range"] == [0.0, np.inf]  # ...unless told
    as_object = from_predictions(y, pred, cv, loss=get_loss("squared"))
    xr.testing.assert_identical(as_object.drop_attrs(), plain.drop_attrs())
    assert as_object.attrs["loss_range"] == [0.0, np.inf]
    custom = losses_from_predictions(y, pred, cv, loss=squared)  # a callable in the wrapper too
    xr.testing.assert_identical(custom.drop_attrs(), plain.drop_attrs())


def _folds(n=20, k=4):
    rows = np.arange(n)
    return [(np.setdiff1d(rows, t), t) for t in np.array_split(rows, k)]


@pytest.mark.parametrize(
    ("change", "match"),
    [
        (lambda a: {**a, "y_pred": a["y_pred"][:-1]}, "mismatched lengths: y_true has 20"),
        (lambda a: {**a, "y_pred": np.where(np.arange(20) == 7, np.nan, a["y_pred"])},
         "y_pred contains NaN or infinite values in 1 sample.*row 7"),
        (lambda a: {**a, "folds": a["folds"][:-1]},
         r"do not partition the samples: 5 sample\(s\) in no test fold \(the first, row 15\)"),
        (lambda a: {**a, "folds": [*a["folds"], (np.arange(2, 20), np.arange(2))]},
         r"2 in several test folds \(the first, row 0\)"),
        (lambda a: {**a, "folds": [(np.arange(20), t) for _, t in a["folds"]]},
         "fold 0 of explicit .* training and test sets overlap"),
        (lambda a: {**a, "folds": np.arange(19) % 4}, "fold labels have shape"),
        (lambda a: {**a, "folds": [a["folds"], a["folds"]]}, "list of runs"),
        (lambda a: {**a, "groups": np.zeros(19)}, "groups has shape"),
        (lambda a: {**a, "loss": "mystery"}, "unknown loss 'mystery'"),
        (lambda a: {**a, "loss": "log_loss"}, r"needs class probabilities of shape \(n_samples, 20\)"),
    ],
    ids=["length", "nan", "missing", "twice", "overlap", "labels", "runs", "groups", "name",
         "proba"],
)  # fmt: skip
def test_bad_predictions_are_refused(change, match):
    rng = np.random.default_rng(0)
    args = {"y_true": rng.normal(size=20), "y_pred": rng.normal(size=20), "folds": _folds(),
            "loss": "squared", "groups": None}  # fmt: skip
    args = change(args)
    with pytest.raises(ValueError, match=match):
        losses_from_predictions(args.pop("y_true"), args.pop("y_pred"), args.pop("folds"), **args)


def test_layer_one_refuses_names_and_bad_losses():
    y, pred = np.arange(8.0), np.arange(8.0) + 1
    folds = _folds(8, 2)
    with pytest.raises(ValueError, match="losses_from_predictions takes the names"):
        from_predictions(y, pred, folds, loss="squared")
    with pytest.raises(TypeError, match="callable"):
        from_predictions(y, pred, folds, loss=3)
    with pytest.raises(ValueError, match=r"returned shape \(\)"):
        from_predictions(y, pred, folds, loss=lambda t, p: 1.0)
    proba = np.tile([[1.0, 0.0]], (8, 1))
    labels = np.array([0, 1] * 4)
    with pytest.raises(ValueError, match=r"log_loss.*infinite for 4 sample.*row 1.*probability 0"):
        losses_from_predictions(labels, proba, folds, loss="log_loss")


# --- from_elpd ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def elpd():
    """PSIS-LOO of two normal models of the same 40 points, from stand-in posterior draws."""
    az = pytest.importorskip("arviz")
    rng = np.random.default_rng(0)
    y = rng.normal(size=40)

    def idata(sigma):
        mu = rng.normal(y.mean(), 0.15, size=(2, 200))  # posterior draws of the mean
        log_lik = stats.norm.logpdf(y, mu[..., None], sigma)
        return az.from_dict(posterior={"mu": mu}, log_likelihood={"y": log_lik})

    models = {"narrow": idata(1.0), "wide": idata(1.5)}
    return az, models, {name: az.loo(m, pointwise=True) for name, m in models.items()}


def test_naive_se_is_arviz_se_of_elpd_loo(elpd):
    _, _, loo = elpd
    table = from_elpd(loo["narrow"], blocks="pairs")
    n = table.sizes["obs"]
    np.testing.assert_array_equal(table["loss"].values, -loo["narrow"]["loo_i"].values)
    assert table.attrs["loss_name"] == "neg_elpd_loo"
    assert table.attrs["loss_range"] == [-np.inf, np.inf]
    assert table.attrs["elpd_method"] == "PSIS-LOO"
    assert table.attrs["pareto_k_max"] == pytest.approx(float(loo["narrow"]["pareto_k"].max()))
    ci = cv_intervals(table, ["naive_points"]).sel(method_name="naive_points")
    # the table's estimate is the mean loss; ArviZ's elpd the sum of elpd_i
    assert -n * ci["estimate"].item() == pytest.approx(loo["narrow"]["elpd_loo"], rel=1e-12)
    # ArviZ: se = sqrt(N var(elpd_i)), variance with ddof 0; naive: sqrt(var_ddof1 / N)
    assert np.sqrt(n * (n - 1)) * ci["se"].item() == pytest.approx(loo["narrow"]["se"], rel=1e-12)
    # with the folds of K-fold CV as blocks, the naive SE is the same
    by_fold = from_elpd(loo["narrow"], blocks=np.arange(n) % 4)
    se_folds = cv_intervals(by_fold, ["naive_points"])["se"].item()
    assert se_folds == pytest.approx(ci["se"].item(), rel=1e-12)


def test_loss_differences_give_arviz_compare_dse(elpd):
    az, models, loo = elpd
    diff = loss_differences(
        from_elpd(loo["narrow"], blocks="pairs"), from_elpd(loo["wide"], blocks="pairs")
    )
    with (
        warnings.catch_warnings()
    ):  # arviz 0.23 calls sort_values(inplace=True), which pandas 3.1 deprecates
        warnings.filterwarnings("ignore", message=".*inplace", category=DeprecationWarning)
        compared = az.compare(models)
    n = diff.sizes["obs"]
    ci = cv_intervals(diff, ["naive_points"]).sel(method_name="naive_points")
    other = compared.index[1]
    assert np.sqrt(n * (n - 1)) * ci["se"].item() == pytest.approx(
        compared.loc[other, "dse"], rel=1e-10
    )
    # loss A - B = elpd_B - elpd_A: its sum is minus ArviZ's elpd_diff of the worse model
    sign = 1 if other == "wide" else -1
    assert sign * n * ci["estimate"].item() == pytest.approx(
        -compared.loc[other, "elpd_diff"], rel=1e-10
    )


def test_every_arviz_scale_gives_the_same_table(elpd):
    az, models, loo = elpd
    base = from_elpd(loo["narrow"], blocks="pairs")
    for scale in ("negative_log", "deviance"):
        other = from_elpd(az.loo(models["narrow"], pointwise=True, scale=scale), blocks="pairs")
        np.testing.assert_allclose(other["loss"].values, base["loss"].values, rtol=1e-12)
        assert other.attrs["elpd_scale"] == scale
    waic = from_elpd(az.waic(models["narrow"], pointwise=True), blocks="pairs")
    assert waic.attrs["loss_name"] == "neg_elpd_waic"
    np.testing.assert_allclose(waic["loss"].values, base["loss"].values, rtol=0.01)


def test_default_blocks_pair_points_and_arrays_are_accepted():
    values = -np.linspace(0.5, 1.5, 9)
    with pytest.raises(ValueError, match="say which points share a block"):
        from_elpd(values)
    table = from_elpd(values, blocks="pairs")
    assert table["block"].values.tolist() == [0, 0, 1, 1, 2, 2, 3, 3, 3]
    assert "pairs" in table.attrs["blocks"]
    assert table.attrs["loss_name"] == "neg_elpd"
    np.testing.assert_array_equal(table["loss"].values, -values)
    folds = xr.DataArray(values).pipe(from_elpd, blocks=np.arange(9) % 3)
    assert folds.attrs["blocks"] == "given"


@pytest.mark.parametrize(
    ("values", "kwargs", "match"),
    [
        ([-1.0, np.nan, -1.0, -1.0], {"blocks": "pairs"}, "NaN or infinite value.*point 1"),
        ([-1.0, -2.0, -1.5], {"blocks": "pairs"}, "needs at least four"),
        ([-1.0] * 6, {"blocks": [0, 0, 1]}, "mismatched lengths: 6 pointwise elpd"),
        ([-1.0] * 6, {"blocks": [0, 0, 1, 1, 1, 2]}, "fewer than two points"),
        (["a", "b", "c", "d"], {"blocks": "pairs"}, "real numbers"),
    ],
)
def test_bad_elpd_is_refused(values, kwargs, match):
    with pytest.raises(ValueError, match=match):
        from_elpd(np.asarray(values), **kwargs)


def test_elpd_without_pointwise_values_is_refused(elpd):
    az, models, _ = elpd
    with pytest.raises(ValueError, match=r"no pointwise values \(loo_i\).*pointwise=True"):
        from_elpd(az.loo(models["narrow"], pointwise=False), blocks="pairs")


# --- the docs section ----------------------------------------------------------------------------


def test_docs_section_runs():
    pytest.importorskip("arviz")
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## From results you already have", 1)[1].split("\n## ", 1)[0]
    cells = re.findall(r"```\{code-cell\} ipython3\n(.*?)```", section, flags=re.S)
    assert len(cells) == 3
    namespace = {}
    for code in cells:
        exec(compile(code, str(DOC), "exec"), namespace)
    assert namespace["repeated"].sizes["replicate"] == 3
