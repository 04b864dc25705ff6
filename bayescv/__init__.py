"""bayescv: how much to trust a cross-validation error estimate.

Run CV over any scikit-learn estimator keeping every per-point loss
(:func:`cross_val_losses`, :func:`bootstrap_cv_losses`), hold them in a validated
xarray loss table (:mod:`bayescv.losses`) and reduce them to per-block sufficient
statistics (:func:`block_moments`).
"""

from bayescv._provenance import package_version
from bayescv.cv import balanced_group_folds, bootstrap_cv_losses, cross_val_losses
from bayescv.datasets import load_dataframe, load_star
from bayescv.loss_functions import LOSSES, Loss, get_loss, make_loss
from bayescv.losses import (
    from_arrays,
    from_frame,
    pivot,
    read_csv,
    read_netcdf,
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
    "cross_val_losses",
    "from_arrays",
    "from_frame",
    "get_loss",
    "load_dataframe",
    "load_star",
    "make_loss",
    "pivot",
    "read_csv",
    "read_netcdf",
    "stack_replicates",
    "to_csv",
    "to_frame",
    "to_netcdf",
    "validate",
]
