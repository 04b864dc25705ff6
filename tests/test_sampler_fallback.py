"""sampler="auto" falls back to PyMC's NUTS quietly only when nutpie is not installed."""

import warnings

import pytest

from bayescv.bayes import _samplers


def _failing_import(error):
    def fake(name):
        if name == "nutpie":
            raise error
        raise AssertionError(f"unexpected import of {name}")

    return fake


def test_nutpie_not_installed_falls_back_without_a_warning(monkeypatch):
    missing = ModuleNotFoundError("No module named 'nutpie'", name="nutpie")
    monkeypatch.setattr(_samplers, "import_quietly", _failing_import(missing))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _samplers.resolve_sampler("auto") == "pymc"


@pytest.mark.parametrize(
    "error",
    [
        ModuleNotFoundError("No module named 'pyarrow'", name="pyarrow"),
        ImportError("numpy.core.multiarray failed to import"),
    ],
    ids=["a_dependency_missing", "a_binary_clash"],
)
def test_a_broken_nutpie_falls_back_with_a_warning_that_says_why(monkeypatch, error):
    monkeypatch.setattr(_samplers, "import_quietly", _failing_import(error))
    with pytest.warns(RuntimeWarning, match="nutpie is installed but cannot be imported") as rec:
        assert _samplers.resolve_sampler("auto") == "pymc"
    assert str(error) in str(rec[0].message)


def test_a_named_sampler_is_not_imported_here(monkeypatch):
    monkeypatch.setattr(_samplers, "import_quietly", _failing_import(AssertionError("called")))
    assert _samplers.resolve_sampler("pymc") == "pymc"
    assert _samplers.resolve_sampler("nutpie") == "nutpie"
