"""The Bayesian model as a notebook user meets it: defects found by using it, and their fixes.

- ``plot_targets`` given a loss table instead of a fit raised an ``AttributeError``; a bad
  ``level`` left an empty figure open in the notebook before the error.
- ``compile_seconds`` in ``idata.sample_stats.attrs`` repeated, on every later fit of a
  process, the seconds its first fit had spent compiling (7 s with an empty cache), so a
  0.2 s fit read as one that compiled for 7 s.
- docs/bayes.md said ``arviz.plot_ppc(idata, var_names=["ybar"])`` works; on a fit of the
  binomial model (the default for 0-1 losses) ArviZ fails on it, and ``"y"`` is what works.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import bayescv

pytest.importorskip("nutpie")

DOCS = Path(__file__).resolve().parents[1] / "docs" / "bayes.md"
BLOCK = np.repeat(np.arange(5), 40)


@pytest.fixture(scope="module")
def gaussian_fit():
    from bayescv.bayes import fit

    rng = np.random.default_rng(0)
    table = bayescv.from_arrays(rng.normal(1.0, 0.3, 200) + 0.1 * BLOCK, BLOCK, scheme="source")
    return table, fit(table, random_state=1, population="normal")


@pytest.fixture(scope="module")
def binomial_fit():
    from bayescv.bayes import fit

    rng = np.random.default_rng(1)
    table = bayescv.from_arrays((rng.random(200) < 0.2).astype(float), BLOCK, scheme="source")
    return table, fit(table, random_state=3)


def test_plot_targets_names_a_loss_table_passed_for_a_fit(gaussian_fit):
    import matplotlib.pyplot as plt

    from bayescv.bayes import plot_targets

    table, _ = gaussian_fit
    before = plt.get_fignums()
    with pytest.raises(TypeError, match=r"InferenceData that bayescv\.bayes\.fit returns"):
        plot_targets(table)
    assert plt.get_fignums() == before


def test_plot_targets_checks_level_before_opening_a_figure(gaussian_fit):
    import matplotlib.pyplot as plt

    from bayescv.bayes import plot_targets

    _, idata = gaussian_fit
    before = plt.get_fignums()
    with pytest.raises(ValueError, match="level"):
        plot_targets(idata, level=95)
    assert plt.get_fignums() == before  # no empty figure left behind in the notebook


@pytest.mark.parametrize("which", ["gaussian", "binomial"])
def test_compile_seconds_is_this_fits_own(which, gaussian_fit, binomial_fit, monkeypatch):
    # A later fit of the process loads nothing: whatever the first fit spent compiling (set
    # here to 1000 s in the callbacks' record), this fit's compile_seconds cannot exceed its
    # own fit_seconds, of which it is a part.
    from bayescv.bayes import _binomial_density, _density, fit

    table, _ = gaussian_fit if which == "gaussian" else binomial_fit
    density = _density if which == "gaussian" else _binomial_density
    monkeypatch.setitem(density.callbacks(), "seconds", 1000.0)
    kwargs = {"population": "normal"} if which == "gaussian" else {}
    attrs = fit(table, random_state=2, **kwargs).sample_stats.attrs
    assert attrs["sampler"] == "nutpie"
    assert attrs["likelihood"] == which
    assert 0 <= attrs["compile_seconds"] <= attrs["fit_seconds"] < 1000


def test_docs_name_the_arviz_ppc_variable_that_works_for_the_binomial_model(binomial_fit):
    import arviz as az
    import matplotlib.pyplot as plt

    _, idata = binomial_fit
    assert idata.sample_stats.attrs["likelihood"] == "binomial"
    text = " ".join(DOCS.read_text(encoding="utf-8").split())
    section = text[text.index("## Posterior predictive checks") :]
    binomial = re.search(r"binomial model pass `var_names=\[\"(\w+)\"\]`", section)
    assert binomial is not None, "docs/bayes.md names no arviz.plot_ppc variable for 0-1 fits"
    axes = az.plot_ppc(idata, var_names=[binomial.group(1)], num_pp_samples=50, random_seed=0)
    plt.close(np.ravel(axes)[0].figure)


def test_bayes_command_help_states_every_default():
    # `bayescv bayes --help` gave the defaults of --draws, --chains, --level, ... but not
    # those of --block-col, --tune, --kind and --format.
    import argparse

    from bayescv.cli import bayes as command

    parser = argparse.ArgumentParser()
    command.register(parser.add_subparsers())
    (sub,) = parser._subparsers._group_actions[0].choices.values()
    silent = []
    for action in sub._actions:
        has_default = action.default not in (None, False, argparse.SUPPRESS)
        if action.option_strings and has_default and "default" not in (action.help or ""):
            silent.append(action.option_strings[0])
    assert silent == []
