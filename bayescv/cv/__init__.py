"""Running cross-validation over scikit-learn estimators, keeping every per-point loss.

* :func:`cross_val_losses` runs random K-fold (CVR), leave-one-source-out (CVS) or any
  scikit-learn splitter, repeated if asked; :func:`bootstrap_cv_losses` runs the same CV on
  bootstrap resamples of the data. Both return a loss table (:mod:`bayescv.losses`).
* :func:`balanced_group_folds` splits sources into folds of about equal size.
* :mod:`bayescv.cv.loss_functions`: the per-point losses (:data:`LOSSES`, :func:`get_loss`,
  :func:`make_loss`) and the prediction method each needs.
* :mod:`bayescv.cv.learners`: the one catalogue of learners chosen by name, used by the
  command line and the comparison module.
"""

from bayescv.cv._runner import balanced_group_folds, bootstrap_cv_losses, cross_val_losses
from bayescv.cv.learners import MODEL_NAMES, TASKS, make_model, model_task
from bayescv.cv.loss_functions import LOSSES, Loss, get_loss, make_loss

__all__ = [
    "LOSSES",
    "MODEL_NAMES",
    "TASKS",
    "Loss",
    "balanced_group_folds",
    "bootstrap_cv_losses",
    "cross_val_losses",
    "get_loss",
    "make_loss",
    "make_model",
    "model_task",
]
