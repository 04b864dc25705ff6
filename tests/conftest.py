import os

import numpy as np
import pytest
from hypothesis import settings
from sklearn.datasets import make_classification, make_regression

# Property tests draw the same examples on every run, so CI passes or fails on the code, not
# on the draw; set HYPOTHESIS_PROFILE=explore locally to search with fresh random examples.
settings.register_profile("ci", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(scope="session")
def classification():
    """103 points (not divisible by 10) in 7 sources of unequal size."""
    X, y = make_classification(n_samples=103, n_features=5, n_informative=3, random_state=0)
    groups = np.repeat(np.array(list("abcdefg")), [20, 17, 15, 15, 14, 12, 10])
    return X, y, groups


@pytest.fixture(scope="session")
def regression():
    X, y = make_regression(n_samples=90, n_features=4, noise=5.0, random_state=1)
    groups = np.repeat(np.arange(6), 15)
    return X, y, groups


@pytest.fixture(scope="session")
def small_bates_study():
    """A 6-replicate study of two closed-form methods, for the plotting tests (not mutated)."""
    from bayescv.compare import BatesLogistic, run_study

    return run_study(BatesLogistic(n=40, p=3, n_splits=4), methods=["naive_points", "theta_B"],
                     n_replicates=6, random_state=0)  # fmt: skip
