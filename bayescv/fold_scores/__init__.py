"""Fold-score tables: one number per learner and CV fold, from the results users already have.

Many comparisons need only each fold's mean loss and size (the Nadeau–Bengio test, the
correlated Bayesian t-test, the hierarchical comparison over data sets), and many users have
only those: the output of :func:`sklearn.model_selection.cross_validate`, a data set × fold
table as baycomp takes, a spreadsheet of scores. A fold-score table holds them:

* an :class:`xarray.Dataset` with data variable ``loss`` of dims
  (``dataset``, ``learner``, ``repetition``, ``fold``): the fold's mean loss, **lower is
  better** (scores given with ``greater_is_better=True`` are negated, so every comparison reads
  one way; ``attrs["greater_is_better"]`` records the direction of the user's numbers);
* ``n_test`` and ``n_train`` (dims ``dataset``, ``repetition``, ``fold``): the fold's test and
  training set sizes, NaN when unknown (then the Nadeau–Bengio ratio n_test/n_train is taken as
  1/(K − 1), equal folds, as baycomp does; ``attrs["sizes"]`` says ``"assumed equal"``);
* attrs ``kind`` = ``"fold_scores"``, ``metric`` (the score's name), ``greater_is_better``,
  ``sizes`` and ``scheme`` (``"random"`` K-fold, or ``"source"`` when the folds are held-out
  sources, as :mod:`bayescv.losses` tables record it).

The learners of one data set are assumed to share its splits (paired folds). Per-point loss
tables reduce to a fold-score table with :func:`from_loss_tables`; the reverse is impossible,
so methods that need every point's loss (Bayle et al.'s, the θ estimators, the Bayesian model
over sources) refuse a fold-score table with a message saying so.
"""

from bayescv.fold_scores._builders import from_cross_validate, from_long_frame, from_loss_tables
from bayescv.fold_scores._table import (
    fold_differences,
    fold_table,
    is_fold_table,
    nb_ratio,
    validate_fold_table,
)

__all__ = [
    "fold_differences",
    "fold_table",
    "from_cross_validate",
    "from_long_frame",
    "from_loss_tables",
    "is_fold_table",
    "nb_ratio",
    "validate_fold_table",
]
