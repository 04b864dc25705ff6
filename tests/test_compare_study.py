import json
import threading
import warnings

import numpy as np
import pytest
import xarray as xr
from sklearn.base import clone
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LinearRegression

from bayescv._provenance import child_seeds
from bayescv.classical import INTERVAL_METHODS, cv_intervals
from bayescv.compare import (
    TIMING_VARIABLES,
    BatesLogistic,
    GaussianLinear,
    Method,
    MultiSourceLinear,
    MultiSourceLogistic,
    available_methods,
    register_method,
    run_study,
    unregister_method,
)
from bayescv.compare.summary import monte_carlo_truths
from bayescv.cv import cross_val_losses
from bayescv.intervals import interval_dataset

TINY = BatesLogistic(n=40, p=3, n_splits=4)


def drop_timing(ds: xr.Dataset) -> xr.Dataset:
    return ds.drop_vars(list(TIMING_VARIABLES))


def replicate_seeds(seed: int, n: int, i: int) -> list[int]:
    """data, cv, truth, methods, learner seeds of replicate i (see run_replicate)."""
    return child_seeds(child_seeds(seed, n)[i], 5)


def test_small_study_end_to_end():
    study = run_study(TINY, methods=["naive_points", "theta_3", "bayle_within"], n_replicates=4,
                      random_state=0)  # fmt: skip
    assert dict(study.sizes) == {"replicate": 4, "method_name": 3, "target": 2, "block": 4}
    assert study["method_target"].values.tolist() == ["err", "err", "kfold_test_error"]
    assert study["target"].values.tolist() == ["err_xy", "kfold_test_error"]
    assert np.isfinite(study["truth"]).all()
    assert np.isfinite(study["estimate"]).all()
    assert (study["lower"] < study["upper"]).all()
    assert set(np.unique(study["design"])) == {"iid"}
    assert study.attrs["seed"] == 0
    assert study.attrs["n_replicates"] == 4
    # the block statistics add up to the CV estimate
    mu = study["block_S"].sum("block") / study["block_n"].sum("block")
    np.testing.assert_allclose(mu, study["mu_hat"])
    assert (study["runtime"] >= 0).all()
    assert (study["time_total"] > 0).all()


@pytest.mark.parametrize("scenario", [MultiSourceLogistic(4, [10, 12, 14, 16]), TINY])
def test_closed_form_rows_equal_cv_intervals_on_the_same_data(scenario):
    # The runner's own CV loop and block moments against cross_val_losses + cv_intervals
    # on the same draw and folds: every closed-form interval must agree.
    study = run_study(scenario, methods="closed_form", n_replicates=2, random_state=3, truths=[])
    data_seed, cv_seed, *_ = replicate_seeds(3, 2, 1)
    draw = scenario.draw(np.random.default_rng(data_seed))
    folds = scenario.folds(draw, cv_seed)
    table = cross_val_losses(
        scenario.default_learner(), draw.X, draw.y, groups=draw.groups, cv=folds
    )
    ci = cv_intervals(table, list(INTERVAL_METHODS), level=study.attrs["level"])
    row = study.isel(replicate=1)
    for var in ("estimate", "lower", "upper", "se", "theta"):
        ours = row["theta_hat" if var == "theta" else var].values
        np.testing.assert_allclose(ours, ci[var].values, rtol=1e-10, equal_nan=True)
    assert row["mu_hat"].item() == pytest.approx(table["loss"].mean().item())


def test_truths_by_hand_for_ols():
    # GaussianLinear + OLS: err of (w, b) is σ² + |w − β|² + b² (identity covariance);
    # kfold_test_error is the size-weighted mean of the fold models' errors.
    sc = GaussianLinear(n=30, coef=[1.0, -1.0, 0.5], noise_sd=0.5, n_splits=3)
    study = run_study(sc, methods=["naive_points"], n_replicates=1, random_state=7)
    data_seed, cv_seed, *_ = replicate_seeds(7, 1, 0)
    draw = sc.draw(np.random.default_rng(data_seed))

    def err(model):
        return 0.25 + np.sum((model.coef_ - sc.coef) ** 2) + model.intercept_**2

    full = LinearRegression().fit(draw.X, draw.y)
    kfold = (
        sum(
            te.size * err(LinearRegression().fit(draw.X[tr], draw.y[tr]))
            for tr, te in sc.folds(draw, cv_seed)
        )
        / 30
    )
    truth = study["truth"].isel(replicate=0)
    assert truth.sel(target="err_xy").item() == pytest.approx(err(full))
    assert truth.sel(target="kfold_test_error").item() == pytest.approx(kfold)


def test_redrawn_design_has_ose_truth_and_cvs_kfold_uses_the_held_out_source():
    sc = MultiSourceLinear(3, 8, design="sources_redrawn", n_new_sources=50)
    study = run_study(sc, methods=["theta_A"], n_replicates=2, random_state=0)
    assert study["target"].values.tolist() == ["err_xy", "kfold_test_error", "ose_xy", "ose_cv"]
    assert np.isfinite(study["truth"]).all()
    # ose_cv: the fold models (each trained on 2 of the 3 sources) on new sources; ose_xy:
    # the model trained on all 3. Different models, so different errors.
    cv, xy = (study["truth"].sel(target=t).values for t in ("ose_cv", "ose_xy"))
    assert not np.allclose(cv, xy)
    # The study-level `ose` is the mean of `ose_cv` (summary.MONTE_CARLO_TARGETS).
    mc = monte_carlo_truths(study)
    assert mc["truth"].sel(target="ose").item() == pytest.approx(cv.mean())
    assert study["method_target"].item() == "expected_cv"
    with pytest.raises(ValueError, match="cannot compute"):
        run_study(MultiSourceLinear(3, 8), methods=["theta_A"], n_replicates=1, truths=["ose_xy"])


def test_results_do_not_depend_on_n_jobs():
    kwargs = {
        "methods": ["naive_points", "theta_5", "bootstrap"], "n_replicates": 6,
        "random_state": 11, "method_options": {"bootstrap": {"n_bootstrap": 3}},
    }  # fmt: skip
    one = run_study(TINY, n_jobs=1, **kwargs)
    two = run_study(TINY, n_jobs=2, chunk_size=2, **kwargs)
    xr.testing.assert_equal(drop_timing(one), drop_timing(two))
    assert one.attrs["settings"] == two.attrs["settings"]


def test_learner_without_seed_is_seeded_per_replicate():
    forest = RandomForestClassifier(n_estimators=3)
    a = run_study(TINY, forest, ["naive_points"], 2, random_state=1, truths=["err_xy"])
    b = run_study(TINY, clone(forest), ["naive_points"], 2, random_state=1, truths=["err_xy"])
    xr.testing.assert_equal(drop_timing(a), drop_timing(b))


def _failing(context, names):
    raise RuntimeError("boom")


def _warning(context, names):
    warnings.warn("careful", UserWarning, stacklevel=1)
    return interval_dataset(names, estimate=[0.5], lower=[0.4], upper=[0.6], se=[0.05],
                            level=context.level, target="err")  # fmt: skip


def test_method_errors_raise_or_are_recorded_and_warnings_are_recorded():
    register_method(Method("failing", _failing, "err", "losses"))
    register_method(Method("warning", _warning, "err", "losses"))
    try:
        with pytest.raises(RuntimeError, match="boom"):
            run_study(TINY, methods=["failing"], n_replicates=1, random_state=0)
        study = run_study(TINY, methods=["naive_points", "failing", "warning"], n_replicates=2,
                          random_state=0, error_score=np.nan)  # fmt: skip
    finally:
        unregister_method("failing")
        unregister_method("warning")
    flags = study["flag"].sel(method_name="failing").values
    assert all(f == "error: RuntimeError: boom" for f in flags)
    assert np.isnan(study["estimate"].sel(method_name="failing")).all()
    assert np.isfinite(study["estimate"].sel(method_name="naive_points")).all()
    assert all("UserWarning: careful" in w for w in study["warnings"].values)
    assert "failing" not in available_methods()


def _two_rows(context, names):
    return interval_dataset(names, estimate=[0.1, 0.2], lower=[0.0, 0.1], upper=[0.2, 0.3],
                            se=[0.1, 0.1], level=context.level, target=["err", "err_xy"])  # fmt: skip


def test_multi_output_method_with_targets_per_output():
    method = Method("pair", _two_rows, {"pair_a": "err", "pair_b": "err_xy"}, "posterior",
                    outputs=("pair_a", "pair_b"))  # fmt: skip
    register_method(method)
    try:
        study = run_study(TINY, methods=["pair"], n_replicates=1, random_state=0)
    finally:
        unregister_method("pair")
    assert study["method_name"].values.tolist() == ["pair_a", "pair_b"]
    assert study["method_target"].values.tolist() == ["err", "err_xy"]
    assert study["method_cost"].values.tolist() == ["posterior", "posterior"]
    np.testing.assert_allclose(study["theta_hat"].values, [[0.01, 0.01]])


def test_bad_arguments():
    with pytest.raises(ValueError, match="n_replicates"):
        run_study(TINY, methods=["naive_points"], n_replicates=0)
    with pytest.raises(ValueError, match="backend"):
        run_study(TINY, methods=["naive_points"], n_replicates=1, backend="spark")
    with pytest.raises(ValueError, match="unknown method"):
        run_study(TINY, methods=["nope"], n_replicates=1)
    with pytest.raises(ValueError, match="level"):
        run_study(TINY, methods=["naive_points"], n_replicates=1, level=1.5)


@pytest.mark.skipif("nested_cv" not in available_methods(), reason="bayescv.nested not available")
def test_nested_cv_entry_in_a_small_study():
    study = run_study(
        BatesLogistic(n=40, p=3, n_splits=4), methods=["naive_points", "nested_cv"],
        n_replicates=2, random_state=0, method_options={"nested_cv": {"n_repeats": 2}},
    )  # fmt: skip
    row = study.sel(method_name="nested_cv")
    assert row["method_target"].item() == "err_xy"
    assert row["method_cost"].item() == "refit"
    assert np.isfinite(row["estimate"]).all()
    assert (row["lower"] < row["upper"]).all()
    # nested CV never gives a narrower interval than naive CV with the default clipping
    naive = study.sel(method_name="naive_points")
    assert ((row["upper"] - row["lower"]) >= 0.999 * (naive["upper"] - naive["lower"])).all()


BAYES_OPTIONS = {
    "bayes_hier": {"draws": 150, "tune": 150, "chains": 2, "sampler": "pymc", "n_bootstrap": 0}
}


@pytest.mark.skipif("bayes_hier" not in available_methods(), reason="bayescv.bayes not available")
@pytest.mark.parametrize("cv", ["source", pytest.param("random", marks=pytest.mark.slow)])
def test_bayes_hier_entry_in_a_small_study(cv):
    # a PyMC fit per replicate (about 7 s each, with compilation); the CVR model is slow-marked
    study = run_study(MultiSourceLinear(4, 8, scheme=cv, n_splits=4), methods=["bayes_hier"],
                      n_replicates=1, random_state=0, method_options=BAYES_OPTIONS)  # fmt: skip
    rows = ["bayes_expected_cv", "bayes_ose", "bayes_new_source"]
    assert study["method_name"].values.tolist() == rows
    assert study["method_target"].values.tolist() == ["expected_cv", "ose", "new_source"]
    expected_cv = study.sel(method_name="bayes_expected_cv")
    assert np.isfinite(expected_cv["estimate"]).all()
    assert (expected_cv["lower"] < expected_cv["upper"]).all()
    new = study.sel(method_name="bayes_new_source")
    if cv == "source":  # the predictive for one new source carries tau^2: wider than these sources
        assert (
            (new["upper"] - new["lower"]) > (expected_cv["upper"] - expected_cv["lower"])
        ).all()
    else:
        assert np.isnan(new["estimate"]).all()
        assert new["flag"].item().startswith("not_applicable")


def test_warning_records_of_overlapping_threads_stay_apart_and_restore_the_filters():
    # Replicates overlapping on threads enter and leave in any order (here A in, B in, A out,
    # B out: one catch_warnings block per replicate would leave B's recorder installed).
    # Each thread records its own warnings; afterwards the filters and showwarning are as
    # before, and a warning outside a replicate reaches the user's filters again.
    from bayescv.compare._replicate import _RECORDER

    filters, show = list(warnings.filters), warnings.showwarning
    a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()
    records: dict[str, list[str]] = {}

    def replicate(name, entered, wait_for, done=None):
        with _RECORDER.record() as caught:
            entered.set()
            assert wait_for.wait(10)
            warnings.warn(f"from {name}", UserWarning, stacklevel=1)
            warnings.warn(f"from {name}", UserWarning, stacklevel=1)  # recorded twice
        records[name] = caught
        if done is not None:
            done.set()

    a = threading.Thread(target=replicate, args=("a", a_in, b_in, a_out))
    b = threading.Thread(target=replicate, args=("b", b_in, a_out))
    a.start()
    assert a_in.wait(10)
    b.start()
    a.join(10)
    b.join(10)
    assert records == {"a": ["UserWarning: from a"] * 2, "b": ["UserWarning: from b"] * 2}
    assert warnings.filters == filters
    assert warnings.showwarning is show
    with pytest.raises(UserWarning, match="outside"):  # pytest's "error" filter is back
        warnings.warn("outside", UserWarning, stacklevel=1)


def test_save_demo_plot_leaves_the_pyplot_backend_and_figures_alone(tmp_path, monkeypatch):
    import matplotlib
    import matplotlib.pyplot as plt

    from bayescv.compare.demo import save_demo_plot

    def refuse(*args, **kwargs):
        raise AssertionError("matplotlib.use called by library code")

    study = run_study(TINY, methods=["naive_points"], n_replicates=3, random_state=0)
    backend, figures = matplotlib.get_backend(), plt.get_fignums()
    monkeypatch.setattr(matplotlib, "use", refuse)
    path = save_demo_plot(study, tmp_path / "demo.png")
    assert path.read_bytes().startswith(b"\x89PNG")
    assert matplotlib.get_backend() == backend
    assert plt.get_fignums() == figures


def test_batched_study_equals_the_per_fit_study():
    # batched=True fits the CV folds, the bootstrap refits and nested CV in batch; the
    # per-fit reference is scikit-learn's newton-cholesky at tol=1e-12 (the same optimum).
    from sklearn.linear_model import LogisticRegression

    scenario = BatesLogistic(n=80, p=3, n_splits=4)
    learner = LogisticRegression(C=np.inf, solver="newton-cholesky", tol=1e-12, max_iter=1000)
    kw = {
        "methods": ["naive_points", "bootstrap", "nested_cv"],
        "n_replicates": 3,
        "truths": [],
        "method_options": {"bootstrap": {"n_bootstrap": 4}, "nested_cv": {"n_repeats": 2}},
        "random_state": 5,
    }
    fast = run_study(scenario, learner, batched=True, **kw)
    slow = run_study(scenario, learner, batched=False, **kw)
    for name in ("estimate", "lower", "upper", "mu_hat"):
        np.testing.assert_allclose(fast[name].values, slow[name].values, rtol=1e-9)
    assert json.loads(fast.attrs["settings"])["batched"] is True
    # Unset, the settings (and so the stores written before the option) do not change.
    plain = run_study(scenario, learner, methods=["naive_points"], n_replicates=1, truths=[])
    assert "batched" not in json.loads(plain.attrs["settings"])


def test_save_demo_plot_states_the_study_level(tmp_path, monkeypatch):
    """The demo figure's title said "nominal 90%" for any study passed to it; it now states
    the study's own level (here 0.8)."""
    from matplotlib.figure import Figure

    from bayescv.compare.demo import save_demo_plot

    drawn = []
    monkeypatch.setattr(Figure, "savefig", lambda fig, *args, **kwargs: drawn.append(fig))
    study = run_study(TINY, methods=["naive_points"], n_replicates=3, level=0.8, random_state=0)
    save_demo_plot(study, tmp_path / "demo.png")
    assert drawn[0].axes[1].get_title() == "coverage of err_xy and err (nominal 80%)"
