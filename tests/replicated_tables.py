"""Loss tables of every replicate kind from real CV runs, shared by the Bayesian tests.

A ridge regression on a small data set: random K-fold (K = 4 folds of 20, 19, 19, 19) or
leave-one-source-out (five sources of unequal size, each with its own offset). Kinds:
``"single"`` (one run), ``"repeat"`` (repeated CV of the same data), ``"independent"``
(the same CV on independently drawn data sets) and ``"bootstrap"`` (one run plus bootstrap
replicates of it).
"""

import numpy as np
from sklearn.ensemble import BaggingRegressor
from sklearn.linear_model import Ridge

from bayescv import bootstrap_cv_losses, cross_val_losses, stack_replicates

#: Sources of unequal size (CVS, K = 5); random K-fold uses K = 4 folds.
SIZES = np.array([20, 17, 15, 14, 11])
SOURCES = np.array(list("abcde"))
N_FOLDS = 4
COEF = np.array([1.0, -0.5, 0.3])
SHIFT = np.array([0.0, 0.8, -0.5, 0.3, 1.2])


def data(seed, scheme):
    """A small regression data set; CVS: five sources with their own offsets."""
    rng = np.random.default_rng(seed)
    code = np.repeat(np.arange(SIZES.size), SIZES)
    X = rng.normal(size=(code.size, COEF.size))
    y = X @ COEF + 0.5 * rng.normal(size=code.size)
    if scheme == "source":
        y = y + SHIFT[code]
    return X, y, SOURCES[code]


def split(scheme, groups):
    """The CV arguments of a scheme: the groups (CVS) or the number of folds (CVR)."""
    return {"groups": groups} if scheme == "source" else {"cv": N_FOLDS}


def cv(estimator, seed, scheme, **kw):
    """One CV run of `estimator` on the data set of `seed`."""
    X, y, groups = data(seed, scheme)
    return cross_val_losses(estimator, X, y, random_state=seed, **split(scheme, groups), **kw)


def make_tables(scheme, kind):
    """(observed, bootstrap) loss tables of one replicate kind ("none" is "single")."""
    observed = cv(Ridge(), 0, scheme)
    assert observed.attrs["scheme"] == scheme
    if kind in ("single", "none"):
        return observed, None
    if kind == "bootstrap":
        X, y, groups = data(0, scheme)
        boot = bootstrap_cv_losses(
            Ridge(), X, y, n_bootstrap=6, random_state=1, **split(scheme, groups)
        )
        return observed, boot
    if kind == "independent":
        runs = [cv(Ridge(), seed, scheme) for seed in range(3)]
        return stack_replicates(runs, replicate_kind="independent"), None
    # Repeated CV of the same data: random K-fold re-partitions; leave-one-source-out has
    # one partition, so the runs differ by a randomised learner.
    if scheme == "random":
        return cv(Ridge(), 0, scheme, n_repeats=3), None
    runs = [
        cv(BaggingRegressor(Ridge(), n_estimators=3, random_state=r), 0, scheme) for r in range(3)
    ]
    return stack_replicates(runs, replicate_kind="repeat"), None
