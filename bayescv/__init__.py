"""bayescv: how much to trust a cross-validation error estimate.

Run CV over any scikit-learn estimator keeping every per-point loss
(:func:`cross_val_losses`, :func:`bootstrap_cv_losses`), hold them in a validated
xarray loss table (:mod:`bayescv.losses`) and reduce them to per-block sufficient
statistics (:func:`block_moments`). Estimate the variance of a CV estimate in closed form
(:func:`variance_estimates`, :mod:`bayescv.classical.estimators`), build intervals for the CV error
(:func:`cv_intervals`) and compare two learners on the same splits (:func:`paired_comparison`).
"""

from bayescv._provenance import package_version
from bayescv.classical import bootstrap_interval, cv_intervals, variance_estimates
from bayescv.classical.estimators import gs_moments, quadratic_estimator
from bayescv.classical.expectations import expected_estimates, true_variance
from bayescv.classical.paired import paired_comparison
from bayescv.cv import balanced_group_folds, bootstrap_cv_losses, cross_val_losses
from bayescv.cv.loss_functions import LOSSES, Loss, get_loss, make_loss
from bayescv.datasets import load_dataframe, load_star
from bayescv.intervals import combine_intervals, interval_dataset
from bayescv.losses import (
    from_arrays,
    from_frame,
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
from bayescv.moments import block_moments, block_sums

__version__ = package_version()

__all__ = [
    "LOSSES",
    "Loss",
    "__version__",
    "balanced_group_folds",
    "block_moments",
    "block_sums",
    "bootstrap_cv_losses",
    "bootstrap_interval",
    "combine_intervals",
    "cross_val_losses",
    "cv_intervals",
    "expected_estimates",
    "from_arrays",
    "from_frame",
    "get_loss",
    "gs_moments",
    "interval_dataset",
    "load_dataframe",
    "load_star",
    "make_loss",
    "paired_comparison",
    "pivot",
    "quadratic_estimator",
    "read_csv",
    "read_netcdf",
    "read_table",
    "stack_replicates",
    "to_csv",
    "to_frame",
    "to_netcdf",
    "true_variance",
    "validate",
    "variance_estimates",
]
