import importlib

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
