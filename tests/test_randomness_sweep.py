"""The randomness standard across the public API (docs/DESIGN "Habits").

One ``random_state`` argument decides every random choice: the same value gives the same
result whatever ``n_jobs``, whatever numpy's global state, and in a fresh interpreter with
another hash seed; a numpy Generator or RandomState is turned into one integer seed
(:func:`bayescv._provenance.resolve_seed`), so it reproduces the result of that integer.
Only provenance and timing attributes (``created``, ``wall_time_s``, ``n_jobs``, ``backend``)
and the timing variables of a study may differ.
"""

import contextlib
import hashlib
import os
import subprocess
import sys

import numpy as np
import pytest
import xarray as xr
from sklearn.datasets import make_classification, make_regression
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.model_selection import KFold, StratifiedKFold

from bayescv import bootstrap_cv_losses, cross_val_losses, nested_cv
from bayescv.compare import TIMING_VARIABLES, MultiSourceLinear, run_study
from bayescv.fold_scores import fold_table
from bayescv.learner_comparison import compare_several
from bayescv.shift import density_ratio_weights, importance_weighted_cv

_PROVENANCE = ("created", "wall_time_s", "n_jobs", "backend", "replicates_loaded")


@contextlib.contextmanager
def _global_seed(seed):
    """Seed numpy's global RandomState (what no result may read), restoring it afterwards."""
    saved = np.random.get_state()  # noqa: NPY002 - the legacy global state is the subject
    np.random.seed(seed)  # noqa: NPY002
    try:
        yield
    finally:
        np.random.set_state(saved)  # noqa: NPY002


def _without_provenance(ds):
    ds = ds.drop_vars([v for v in TIMING_VARIABLES if v in ds.variables]).copy()
    # a DataArray turned into a Dataset (the weights) keeps its attributes on the variable
    for attrs in (ds.attrs, *(ds[v].attrs for v in ds.data_vars)):
        for name in _PROVENANCE:
            attrs.pop(name, None)
    return ds


def _assert_same(a, b):
    xr.testing.assert_identical(_without_provenance(a), _without_provenance(b))


X_REG, Y_REG = make_regression(n_samples=40, n_features=3, noise=1.0, random_state=0)
X_CLF, Y_CLF = make_classification(n_samples=40, random_state=0)
GROUPS = np.repeat(np.arange(8), 5)


def _domains():
    rng = np.random.default_rng(0)
    return rng.normal(0, 1, (60, 1)), rng.normal(1, 1, (45, 1))


def _study(**kw):
    scenario = MultiSourceLinear(n_sources=4, points_per_source=10, n_test=200, n_new_sources=5)
    return run_study(scenario, Ridge(), ["naive_points", "theta_1"], 3, **kw)


def _several(random_state):
    scores = np.random.default_rng(0).normal(0.8, 0.05, (2, 3, 10))
    table = fold_table(scores, greater_is_better=True)
    return compare_several(table, n_draws=500, random_state=random_state)


CALLS = {
    "cross_val_losses": lambda **kw: cross_val_losses(
        LogisticRegression(), X_CLF, Y_CLF, cv=4, n_repeats=2, **kw
    ),
    "bootstrap_cv_losses": lambda **kw: bootstrap_cv_losses(
        Ridge(), X_REG, Y_REG, groups=GROUPS, n_bootstrap=3, **kw
    ),
    "nested_cv": lambda **kw: nested_cv(Ridge(), X_REG, Y_REG, n_splits=3, n_repeats=2, **kw),
    "density_ratio_weights": lambda **kw: density_ratio_weights(
        *_domains(), cv=3, **kw
    ).to_dataset(),
    "run_study": lambda **kw: _study(**kw),
    "compare_several": _several,
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_global_numpy_state_does_not_change_a_seeded_result(name):
    # np.random.seed changes only the global RandomState, which no result may read.
    with _global_seed(1):
        first = CALLS[name](random_state=7)
    with _global_seed(2):
        second = CALLS[name](random_state=7)
    _assert_same(first, second)


@pytest.mark.parametrize(
    "name", ["cross_val_losses", "nested_cv", "density_ratio_weights", "compare_several"]
)
def test_a_generator_reproduces_the_integer_it_draws(name):
    # resolve_seed asks a Generator for one integer in [0, 2**63): the same integer passed
    # directly must give the same result; a RandomState likewise with randint(2**63 - 1).
    drawn = int(np.random.default_rng(5).integers(2**63))
    _assert_same(
        CALLS[name](random_state=drawn), CALLS[name](random_state=np.random.default_rng(5))
    )
    drawn = int(np.random.RandomState(5).randint(np.iinfo(np.int64).max, dtype=np.int64))
    _assert_same(
        CALLS[name](random_state=drawn), CALLS[name](random_state=np.random.RandomState(5))
    )


def test_density_ratio_weights_seed_an_unseeded_shuffling_splitter():
    # An int cv is StratifiedKFold(cv, shuffle=True) seeded from random_state; the same
    # splitter given unseeded must be seeded the same way, not from numpy's global state
    # (before the fix it drew its folds from np.random, so two calls differed).
    xs, xt = _domains()
    splitter = StratifiedKFold(3, shuffle=True)
    with _global_seed(1):
        given = density_ratio_weights(xs, xt, cv=splitter, random_state=4)
    with _global_seed(2):
        again = density_ratio_weights(xs, xt, cv=splitter, random_state=4)
    from_int = density_ratio_weights(xs, xt, cv=3, random_state=4)
    np.testing.assert_array_equal(given.values, again.values)
    np.testing.assert_array_equal(given.values, from_int.values)
    assert splitter.random_state is None  # the user's splitter is copied, not changed


def test_density_ratio_weights_keep_a_seeded_or_non_shuffling_splitter():
    # A splitter with its own seed, or one that does not shuffle, is used as given.
    xs, xt = _domains()
    seeded = StratifiedKFold(3, shuffle=True, random_state=11)
    a = density_ratio_weights(xs, xt, cv=seeded, random_state=1)
    b = density_ratio_weights(xs, xt, cv=seeded, random_state=2)
    np.testing.assert_array_equal(a.values, b.values)  # the splitter's seed decides
    plain = KFold(3)
    c = density_ratio_weights(xs, xt, cv=plain, random_state=1)
    d = density_ratio_weights(xs, xt, cv=plain, random_state=2)
    np.testing.assert_array_equal(c.values, d.values)  # no shuffle: nothing to seed


def test_importance_weighted_cv_with_an_unseeded_weight_splitter_is_reproducible():
    xs, xt = _domains()
    ys = xs[:, 0] ** 2 + np.random.default_rng(1).normal(0, 0.5, xs.shape[0])

    def run(n_jobs, global_seed):
        with _global_seed(global_seed):
            return importance_weighted_cv(
                Ridge(), xs, ys, xt, cv=3, weight_cv=StratifiedKFold(3, shuffle=True),
                random_state=9, n_jobs=n_jobs,
            )  # fmt: skip

    _assert_same(run(1, 1), run(2, 2))


def test_run_study_does_not_depend_on_n_jobs_or_how_results_are_flushed():
    # Replicates come back from joblib in any order and are written in pieces whose sizes
    # depend on timing (flush_interval): the study sorts them by replicate.
    one = _study(random_state=3, n_jobs=1)
    two = _study(random_state=3, n_jobs=2, chunk_size=1, flush_interval=0)
    _assert_same(one, two)


_FRESH = """
import hashlib, numpy as np
from sklearn.datasets import make_regression
from sklearn.linear_model import Ridge
from bayescv import bootstrap_cv_losses
X, y = make_regression(n_samples=40, n_features=3, noise=1.0, random_state=0)
t = bootstrap_cv_losses(Ridge(), X, y, cv=4, n_bootstrap=3, random_state=7)
parts = [t["loss"].values, t["block"].values, t["index"].values]
print(hashlib.sha256(b"".join(np.ascontiguousarray(p).tobytes() for p in parts)).hexdigest())
"""


def test_a_fresh_interpreter_with_another_hash_seed_gives_the_same_table():
    t = bootstrap_cv_losses(Ridge(), X_REG, Y_REG, cv=4, n_bootstrap=3, random_state=7)
    parts = [t["loss"].values, t["block"].values, t["index"].values]
    here = hashlib.sha256(b"".join(np.ascontiguousarray(p).tobytes() for p in parts))
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", _FRESH], capture_output=True, text=True,
        check=True, env=env,
    )  # fmt: skip
    assert out.stdout.strip() == here.hexdigest()


def test_compare_several_records_the_seed_that_repeats_its_draws():
    # random_state=None drew fresh entropy; the seed it recorded must give the same draws.
    first = _several(None)
    _assert_same(first, _several(first.attrs["seed"]))


def test_from_predictions_refuses_a_splitter_that_would_draw_other_folds():
    # cross_val_predict(cv=KFold(shuffle=True)) split once from the global state: splitting
    # again would pair each prediction with another fold, silently.
    from bayescv.cv import losses_from_predictions

    y = np.array([0, 1] * 10)
    for folds in (
        KFold(4, shuffle=True),
        StratifiedKFold(4, shuffle=True, random_state=np.random.RandomState(0)),
    ):
        with pytest.raises(ValueError, match="would not give again the folds"):
            losses_from_predictions(y, y, folds, loss="zero_one")
    seeded = losses_from_predictions(y, y, KFold(4, shuffle=True, random_state=0), loss="zero_one")
    # An unshuffled KFold gives its folds again (accepted), with the warning that they
    # follow the stored order of the rows.
    from bayescv.cv import UnshuffledFoldsWarning

    with pytest.warns(UnshuffledFoldsWarning, match="run cross_val_predict again"):
        plain = losses_from_predictions(y, y, KFold(4), loss="zero_one")
    assert seeded.sizes["obs"] == plain.sizes["obs"] == y.size


def test_seed_unset_sets_only_the_seeds_left_none():
    from sklearn.ensemble import RandomForestRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from bayescv._provenance import seed_unset

    mine = RandomForestRegressor(random_state=3)
    assert seed_unset(mine, 5) == (mine, False)  # the user's seed is kept, no clone
    pipe = make_pipeline(StandardScaler(), RandomForestRegressor())
    seeded, changed = seed_unset(pipe, 5)
    assert changed
    assert seeded.get_params()["randomforestregressor__random_state"] == 5
    assert pipe.get_params()["randomforestregressor__random_state"] is None  # not changed


def _forest_calls():
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

    forest = RandomForestRegressor(n_estimators=4, max_depth=3)
    return {
        "cross_val_losses": lambda **kw: cross_val_losses(forest, X_REG, Y_REG, cv=3, **kw),
        "bootstrap_cv_losses": lambda **kw: bootstrap_cv_losses(
            forest, X_REG, Y_REG, groups=GROUPS, n_bootstrap=2, **kw
        ),
        "nested_cv": lambda **kw: nested_cv(forest, X_REG, Y_REG, n_splits=3, n_repeats=1, **kw),
        "density_ratio_weights": lambda **kw: density_ratio_weights(
            *_domains(), classifier=RandomForestClassifier(n_estimators=4), cv=3, **kw
        ).to_dataset(),
    }


@pytest.mark.parametrize("name", ["cross_val_losses", "bootstrap_cv_losses", "nested_cv",
                                  "density_ratio_weights"])  # fmt: skip
def test_one_random_state_reproduces_an_unseeded_randomised_model(name):
    # A forest left unseeded drew from numpy's global state: the same random_state gave
    # other losses from call to call and with other n_jobs. Its seed now comes from
    # random_state, recorded in the result.
    call = _forest_calls()[name]
    with _global_seed(1):
        first = call(random_state=7, n_jobs=1)
    with _global_seed(2):
        second = call(random_state=7, n_jobs=2)
    _assert_same(first, second)
    if name == "density_ratio_weights":  # the weights' own attributes
        assert isinstance(first["weight"].attrs["classifier_seed"], int)
        return
    assert isinstance(first.attrs["estimator_seed"], int)
    # the learner as the user gave it, not the seeded clone
    assert "random_state" not in first.attrs["estimator"]
