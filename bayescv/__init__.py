"""bayescv: how much to trust a cross-validation error estimate.

Run CV over any scikit-learn estimator keeping every per-point loss
(:func:`cross_val_losses`, :func:`bootstrap_cv_losses`), hold them in a validated xarray loss
table (:mod:`bayescv.losses`), and say how uncertain the CV estimate is:

* closed-form variance estimates and the intervals on them (:func:`variance_estimates`,
  :func:`cv_intervals`; :mod:`bayescv.classical`), and paired comparisons of two learners on
  the same splits (:func:`paired_comparison`);
* nested CV intervals (:func:`nested_cv`; Bates, Hastie & Tibshirani 2024);
* the hierarchical Bayesian model over sources (:mod:`bayescv.bayes`, needs ``bayescv[bayes]``);
* importance-weighted CV under covariate shift (:func:`importance_weighted_cv`;
  :mod:`bayescv.shift`);
* comparisons of two or more learners, on one data set or several, from per-point losses or
  from the fold scores users already have (:func:`compare_learners`, :func:`correlated_ttest`,
  :func:`compare_several`; :mod:`bayescv.learner_comparison`, :mod:`bayescv.fold_scores`);
* coverage studies of all of them against known truth (:func:`run_study`; :mod:`bayescv.compare`).

Every interval names the estimand it targets (:data:`ESTIMANDS`).
"""

from bayescv import (
    bayes,
    classical,
    compare,
    cv,
    fold_scores,
    learner_comparison,
    losses,
    nested,
    shift,
)
from bayescv._provenance import package_version
from bayescv.classical import (
    bootstrap_interval,
    cv_intervals,
    expected_estimates,
    paired_comparison,
    true_variance,
    variance_estimates,
)
from bayescv.compare import load_study, run_study, summarize
from bayescv.cv import (
    LEARNERS,
    LOSSES,
    Loss,
    balanced_group_folds,
    bootstrap_cv_losses,
    cross_val_losses,
    get_loss,
    losses_from_predictions,
    make_learner,
    make_loss,
)
from bayescv.datasets import load_dataframe, load_star
from bayescv.fold_scores import fold_table, from_cross_validate, from_long_frame
from bayescv.intervals import ESTIMANDS, combine_intervals, interval_dataset
from bayescv.learner_comparison import compare_learners, compare_several, correlated_ttest
from bayescv.losses import (
    from_arrays,
    from_elpd,
    from_frame,
    loss_differences,
    pivot,
    read_csv,
    read_netcdf,
    read_table,
    stack_replicates,
    to_csv,
    to_frame,
    to_netcdf,
    validate,
)
from bayescv.moments import block_moments
from bayescv.nested import nested_cv
from bayescv.shift import importance_weighted_cv

__version__ = package_version()

__all__ = [
    "ESTIMANDS",
    "LEARNERS",
    "LOSSES",
    "Loss",
    "__version__",
    "balanced_group_folds",
    "bayes",
    "block_moments",
    "bootstrap_cv_losses",
    "bootstrap_interval",
    "classical",
    "combine_intervals",
    "compare",
    "compare_learners",
    "compare_several",
    "correlated_ttest",
    "cross_val_losses",
    "cv",
    "cv_intervals",
    "expected_estimates",
    "fold_scores",
    "fold_table",
    "from_arrays",
    "from_cross_validate",
    "from_elpd",
    "from_frame",
    "from_long_frame",
    "get_loss",
    "importance_weighted_cv",
    "interval_dataset",
    "learner_comparison",
    "load_dataframe",
    "load_star",
    "load_study",
    "loss_differences",
    "losses",
    "losses_from_predictions",
    "make_learner",
    "make_loss",
    "nested",
    "nested_cv",
    "paired_comparison",
    "pivot",
    "read_csv",
    "read_netcdf",
    "read_table",
    "run_study",
    "shift",
    "stack_replicates",
    "summarize",
    "to_csv",
    "to_frame",
    "to_netcdf",
    "true_variance",
    "validate",
    "variance_estimates",
]
