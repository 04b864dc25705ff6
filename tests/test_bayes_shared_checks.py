"""Argument checks shared by :func:`bayescv.bayes.fit`, :func:`bayescv.bayes.compare_datasets`
and the learner comparisons: one check per argument, so every entry point refuses the same
values with the same message.

Reference values: joblib's ``effective_n_jobs`` (−1 means all CPUs); the messages of
:func:`bayescv.fold_scores._table.check_rope` and :func:`bayescv.bayes._samplers.check_n_jobs`.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from joblib import effective_n_jobs

from bayescv.bayes import compare_datasets, fit
from bayescv.bayes._samplers import check_n_jobs
from bayescv.fold_scores import fold_table
from bayescv.fold_scores._table import check_rope
from bayescv.learner_comparison import correlated_ttest
from bayescv.losses import from_arrays

pytest.importorskip("nutpie")

#: A small fit whose diagnostics are not checked: for tests of the arguments only.
FAST = {"draws": 100, "tune": 100, "chains": 2, "ess_min": 0.0, "rhat_max": math.inf}

BAD_N_JOBS = [0, 1.5, True, np.True_, "2", np.float64(2.0)]
BAD_ROPES = ["0.01", np.True_, True, None, [0.1], -0.1, np.nan, np.inf, 1 + 0j]


def _diff() -> np.ndarray:
    """The input of :func:`compare_datasets`' docstring example: 6 data sets, 10-fold CV."""
    return np.random.default_rng(0).normal(-0.5, 1.0, size=(6, 10))


def _fold_table():
    return fold_table(
        [[0.81, 0.84, 0.80, 0.86, 0.83], [0.78, 0.80, 0.79, 0.81, 0.80]],
        learners=["lr", "tree"],
        greater_is_better=True,
    )


def _loss_table():
    return from_arrays(np.random.default_rng(0).gamma(2, 1, 150), np.repeat(np.arange(5), 30))


def test_check_n_jobs_has_joblibs_meaning():
    assert check_n_jobs(None) is None
    assert check_n_jobs(-1) == effective_n_jobs(-1)
    assert check_n_jobs(1) == 1
    two = check_n_jobs(np.int64(2))
    assert two == 2
    assert type(two) is int


@pytest.mark.parametrize("bad", BAD_N_JOBS, ids=repr)
def test_check_n_jobs_refuses(bad):
    with pytest.raises(ValueError, match="n_jobs must be a non-zero integer"):
        check_n_jobs(bad)


def test_compare_datasets_runs_on_every_cpu_with_the_draws_of_one():
    # The default sampler settings: n_jobs=-1 crashed inside nutpie ("can't convert negative
    # int to unsigned"). The draws do not depend on n_jobs.
    diff = _diff()
    every_cpu = compare_datasets(diff, rope=0.05, random_state=0, n_jobs=-1)
    one = compare_datasets(diff, rope=0.05, random_state=0, n_jobs=1)
    for name in ("p_better", "delta_mean", "delta0_mean", "new_dataset_p_better"):
        np.testing.assert_array_equal(every_cpu[name].values, one[name].values)
    assert every_cpu.attrs["problems"] == ""


@pytest.mark.parametrize("bad", BAD_N_JOBS, ids=repr)
def test_fit_and_compare_datasets_refuse_the_same_n_jobs(bad):
    # 0 hung compare_datasets; 1.5 failed inside nutpie; True ran on one core.
    messages = []
    for call in (
        lambda: fit(_loss_table(), n_jobs=bad),
        lambda: compare_datasets(_diff(), n_jobs=bad, **FAST),
    ):
        with pytest.raises(ValueError, match="n_jobs must be a non-zero integer") as info:
            call()
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_check_rope_returns_a_float():
    for rope in (0, 0.05, np.float32(0.25), np.int64(1)):
        out = check_rope(rope)
        assert type(out) is float
        assert out == float(rope)


@pytest.mark.parametrize("bad", BAD_ROPES, ids=repr)
def test_compare_datasets_and_correlated_ttest_refuse_the_same_rope(bad):
    # A string gave compare_datasets a TypeError from numpy; np.True_ was taken as a rope of 1.
    expected = f"rope must be a finite number >= 0, got {bad!r}"
    for call in (
        lambda: check_rope(bad),
        lambda: compare_datasets(_diff(), rope=bad, **FAST),
        lambda: correlated_ttest(_fold_table(), rope=bad),
    ):
        with pytest.raises(ValueError, match=re.escape(expected)):
            call()
