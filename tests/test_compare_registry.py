import importlib
import importlib.util
import inspect

import numpy as np
import pytest

from bayescv.classical import INTERVAL_METHODS
from bayescv.compare import (
    Method,
    available_methods,
    get_method,
    register_method,
    registry,
    resolve_methods,
    unavailable_methods,
    unregister_method,
)


def test_every_closed_form_method_is_registered_as_one_batch():
    closed = available_methods("losses")
    assert set(INTERVAL_METHODS) <= set(closed)
    assert len({(get_method(n).func, get_method(n).batch) for n in INTERVAL_METHODS}) == 1
    assert [m.name for m in resolve_methods("closed_form")] == list(closed)
    assert get_method("bootstrap").cost == "refit"


@pytest.mark.parametrize(
    ("name", "random", "source"),
    [
        ("theta_3", "err", "expected_cv"),
        ("theta_B", "err", "expected_cv"),
        ("naive_points", "err", "expected_cv"),
        ("bayle_within", "kfold_test_error", "kfold_test_error"),
        ("bootstrap", "err", "expected_cv"),
    ],
)
def test_targets_follow_the_scheme(name, random, source):
    # the targets of bayescv.classical's module docs
    method = get_method(name)
    assert method.targets("random") == {name: random}
    assert method.targets("source") == {name: source}


def test_lazy_entries_are_present_or_explained():
    names, missing = available_methods(), unavailable_methods()
    for name in ("nested_cv", "bayes_hier"):
        assert (name in names) != (name in missing)
    nested = importlib.import_module("bayescv.nested")
    assert ("nested_cv" in names) == callable(getattr(nested, "nested_cv", None))
    if "nested_cv" in names:
        assert get_method("nested_cv").targets("source") == {"nested_cv": "ose"}


def test_a_failing_lazy_loader_makes_the_method_absent(monkeypatch):
    def broken():
        raise ImportError("module being written")

    monkeypatch.setitem(registry._LAZY, "half_done", broken)
    assert "half_done" not in available_methods()
    assert unavailable_methods()["half_done"] == "ImportError: module being written"
    with pytest.raises(ValueError, match="not available: ImportError: module being written"):
        get_method("half_done")
    assert "half_done" not in [m.name for m in resolve_methods("all")]


def test_a_lazy_loader_with_a_bug_raises_instead_of_hiding_the_method(monkeypatch):
    # Only a missing package makes a method absent: any other error is a bug and surfaces
    # wherever the registry is listed, instead of the method vanishing from "all".
    def buggy():
        return {}["typo"]

    monkeypatch.setitem(registry._LAZY, "buggy", buggy)
    with pytest.raises(KeyError, match="typo"):
        available_methods()
    with pytest.raises(KeyError, match="typo"):
        resolve_methods("all")
    with pytest.raises(KeyError, match="typo"):
        get_method("buggy")


@pytest.mark.parametrize("package", ["pymc", "numba"])  # arviz is a core dependency
def test_bayes_hier_is_unavailable_without_the_packages_it_needs(monkeypatch, package):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == package else real(name, *a)
    )
    assert "bayes_hier" not in available_methods()
    assert "bayes_hier" not in [m.name for m in resolve_methods("all")]
    reason = unavailable_methods()["bayes_hier"]
    assert reason == (
        f"ImportError: bayes_hier needs {package}, which is not installed: "
        "pip install 'bayescv[bayes]'"
    )
    with pytest.raises(ValueError, match=f"'bayes_hier' is not available: .*needs {package}"):
        get_method("bayes_hier")


def test_option_names_of_the_methods():
    assert get_method("theta_A").option_names == ("kind",)
    assert get_method("theta_A").option_key == "closed_form"
    assert get_method("bootstrap").option_names == ("n_bootstrap", "kind")
    if "nested_cv" in available_methods():
        names = get_method("nested_cv").option_names
        assert {"n_repeats", "n_splits", "bias_correction"} <= set(names)
        assert not {"random_state", "groups", "loss", "level"} & set(names)  # the study's
    if "bayes_hier" in available_methods():
        names = get_method("bayes_hier").option_names
        assert {"n_bootstrap", "draws", "tune", "chains", "sampler"} <= set(names)
        assert not {"random_state", "bootstrap", "losses"} & set(names)
    # a function taking **options accepts any name; declared options override the signature
    assert Method("any", lambda ctx, names, **kw: None, "err").option_names is None
    assert Method("few", lambda ctx, names, **kw: None, "err", options=("a",)).option_names == (
        "a",
    )


def test_register_and_resolve_errors():
    method = Method("mine", lambda ctx, names: None, "err")
    register_method(method)
    try:
        with pytest.raises(ValueError, match="exists"):
            register_method(method)
        register_method(method, replace=True)
        assert get_method("mine") is method
        with pytest.raises(ValueError, match="listed twice"):
            resolve_methods(["mine", "mine"])
    finally:
        unregister_method("mine")
    with pytest.raises(ValueError, match="register_method"):
        unregister_method("theta_A")
    with pytest.raises(ValueError, match="exists"):
        register_method(Method("theta_A", lambda ctx, names: None, "err"))
    with pytest.raises(ValueError, match="cost"):
        Method("x", lambda ctx, names: None, "err", cost="cheap")
    with pytest.raises(ValueError, match="unknown method 'nope'"):
        resolve_methods("nope")


# ------------------------------------------------------------- the Bayesian model's entry
def test_bayes_rows_and_their_targets():
    # docs/bayes.md: expected_cv for the sources at hand, ose = μ₀ for the mean over new
    # sources (Geras & Sutton 2013, eq. 3), new_source = μ₀ + τz for one new source; all known estimands.
    from bayescv.intervals import ESTIMANDS

    assert registry.BAYES_TARGETS == {
        "bayes_expected_cv": "expected_cv",
        "bayes_ose": "ose",
        "bayes_new_source": "new_source",
    }
    assert set(registry.BAYES_TARGETS.values()) <= set(ESTIMANDS)
    if "bayes_hier" in available_methods():
        method = get_method("bayes_hier")
        assert method.output_names == tuple(registry.BAYES_TARGETS)
        assert method.targets("source") == registry.BAYES_TARGETS
        assert "n_bootstrap" in method.description


@pytest.mark.parametrize("n_bootstrap", [1, -2, 2.5, True])
def test_bayes_hier_refuses_a_bad_n_bootstrap(n_bootstrap):
    with pytest.raises(ValueError, match="n_bootstrap must be 0"):
        registry.bayes_hier(None, ["bayes_expected_cv"], n_bootstrap=n_bootstrap)
    with pytest.raises(ValueError, match="pass n_bootstrap, not bootstrap"):
        registry.bayes_hier(None, ["bayes_expected_cv"], bootstrap=object())


def _context(regression, seed=5):
    from sklearn.linear_model import Ridge

    from bayescv import block_moments, cross_val_losses
    from bayescv.cv.loss_functions import get_loss

    X, y, groups = regression
    table = cross_val_losses(Ridge(), X, y, groups=groups, random_state=0)
    return registry.Context(
        X=X, y=y, groups=groups, learner=Ridge(), loss=get_loss("squared", Ridge()),
        scheme="source", n_splits=6, level=0.9, seed=seed, moments=block_moments(table),
        table=lambda: table,
    )  # fmt: skip


def test_bootstrap_table_is_built_once_per_size_and_shared_by_seeded_copies(
    regression, monkeypatch
):
    import zlib

    from bayescv import cv

    calls = []
    real = cv.bootstrap_cv_losses
    monkeypatch.setattr(
        cv, "bootstrap_cv_losses", lambda *a, **k: calls.append(k) or real(*a, **k)
    )
    context = _context(regression)
    one = context.with_seed(101)
    other = context.with_seed(202)
    assert (one.replicate_seed, other.replicate_seed) == (5, 5)
    first = one.bootstrap_table(3)
    assert other.bootstrap_table(3) is first  # another method of the replicate: no refit
    assert len(calls) == 1
    # The seed is the replicate's child named "bootstrap", by the study's rule for per-method
    # seeds (SeedSequence(root, spawn_key=(crc32(name),))): the seed the bootstrap method drew
    # its table from before the table was shared.
    rule = np.random.SeedSequence(5, spawn_key=(zlib.crc32(b"bootstrap"),))
    assert calls[0]["random_state"] == int(rule.generate_state(1, np.uint32)[0])
    assert first.sizes["replicate"] == 3
    assert first.attrs["replicate_kind"] == "bootstrap"
    assert one.bootstrap_table(4).sizes["replicate"] == 4  # another size: its own table
    assert len(calls) == 2
    with pytest.raises(ValueError, match="n_bootstrap must be an integer >= 2"):
        one.bootstrap_table(1)


needs_bayes = pytest.mark.skipif(
    "bayes_hier" not in available_methods(), reason="bayescv.bayes not available"
)
# PyMC's sampler named: "auto" would compile nutpie (about 35 s) when installed.
SHARED_OPTIONS = {
    "bootstrap": {"n_bootstrap": 4},
    "bayes_hier": {"n_bootstrap": 4, "draws": 150, "tune": 150, "chains": 2, "sampler": "pymc"},
}


@needs_bayes
def test_bootstrap_and_bayes_hier_share_one_bootstrap_table_per_replicate(monkeypatch):
    from bayescv import cv
    from bayescv.bayes import fit as bayes_fit
    from bayescv.compare import MultiSourceLinear, run_study, summarize, summary_table

    scenario = MultiSourceLinear(5, 10)
    alone = run_study(scenario, methods=["bootstrap"], n_replicates=2, random_state=3,
                      method_options={"bootstrap": SHARED_OPTIONS["bootstrap"]},
                      truths=[])  # fmt: skip
    tables, seen = [], []
    real = cv.bootstrap_cv_losses

    def counting(*args, **kwargs):
        tables.append(real(*args, **kwargs))
        return tables[-1]

    def spying(losses, *, bootstrap=None, **kwargs):
        seen.append(bootstrap)
        return bayes_fit(losses, bootstrap=bootstrap, **kwargs)

    monkeypatch.setattr(cv, "bootstrap_cv_losses", counting)
    monkeypatch.setattr("bayescv.bayes.fit", spying)
    both = run_study(scenario, methods=["bayes_hier", "bootstrap"], n_replicates=2,
                     random_state=3, method_options=SHARED_OPTIONS, n_jobs=1)  # fmt: skip
    assert len(tables) == 2  # one table per replicate, not one per method
    assert len(seen) == 2
    assert all(s is t for s, t in zip(seen, tables, strict=True))  # the fit got that table
    # Sharing changes nothing for the bootstrap method: its rows are those of a study without
    # the Bayesian model (same study seed). To rounding: that study computes no truths, so its
    # fold models are not kept and its least-squares fits run batched (bayescv.cv._batched).
    for var in ("estimate", "lower", "upper"):
        np.testing.assert_allclose(
            rtol=1e-12,
            actual=both[var].sel(method_name="bootstrap").values,
            desired=alone[var].sel(method_name="bootstrap").values,
        )
    assert both["method_name"].values.tolist() == [
        "bayes_expected_cv", "bayes_ose", "bayes_new_source", "bootstrap",
    ]  # fmt: skip
    assert both["method_target"].values.tolist() == [
        "expected_cv", "ose", "new_source", "expected_cv",
    ]  # fmt: skip
    # No scenario has a truth for new_source: summaries report no coverage of its declared
    # target and do not fail.
    summary = summarize(both)
    assert "new_source" not in summary["target"].values
    assert np.isnan(float(summary["estimate_bias"].sel(method_name="bayes_new_source")))
    assert "bayes_new_source" in summary_table(summary)


def test_bootstrap_and_bayes_hier_default_to_the_same_table_size():
    # The shared table is built once only when both ask for the same B: the defaults agree,
    # so a study running both methods with their defaults fits the replicates once.
    default = lambda f: inspect.signature(f).parameters["n_bootstrap"].default  # noqa: E731
    assert default(registry.bootstrap) == default(registry.bayes_hier) == 50


@needs_bayes
@pytest.mark.slow
def test_shared_bootstrap_results_do_not_depend_on_n_jobs():
    from bayescv.compare import MultiSourceLinear, run_study

    kwargs = {"methods": ["bootstrap", "bayes_hier"], "n_replicates": 2, "random_state": 9,
              "method_options": SHARED_OPTIONS, "truths": []}  # fmt: skip
    one = run_study(MultiSourceLinear(5, 10), n_jobs=1, **kwargs)
    two = run_study(MultiSourceLinear(5, 10), n_jobs=2, **kwargs)
    for var in ("estimate", "lower", "upper", "se", "flag"):
        np.testing.assert_array_equal(one[var].values, two[var].values)
