"""Running cross-validation over scikit-learn estimators, keeping every per-point loss.

* :func:`cross_val_losses` runs random K-fold (CVR), leave-one-source-out (CVS) or any
  scikit-learn splitter, repeated if asked; :func:`bootstrap_cv_losses` runs the same CV on
  bootstrap resamples of the data. Both return a loss table (:mod:`bayescv.losses`).
  :func:`losses_from_predictions` builds the same table from ``cross_val_predict``
  output and its folds, without refitting.
* :func:`losses_on_folds` fits given (train, test) pairs, through the batched engine
  where the learner qualifies (nested CV uses it).
* :func:`balanced_group_folds` splits groups into folds of about equal size.
* :class:`UnshuffledFoldsWarning`: a ``KFold`` or ``StratifiedKFold`` passed as `cv` (or as
  the `folds` of predictions) does not shuffle, so its folds follow the stored order of the
  rows.
* :mod:`bayescv.cv.loss_functions`: the per-point losses (:data:`LOSSES`, :func:`get_loss`,
  :func:`make_loss`) and the prediction method each needs.
* :mod:`bayescv.cv.learners`: the one catalogue of learners chosen by name
  (:data:`LEARNERS`, :func:`make_learner`, :func:`learner_task`), used by the command line
  and the comparison module.

``_fold_losses`` (not public) is the fit-and-loss core every runner uses, the coverage
studies of :mod:`bayescv.compare` included: it is exported here so that they need no
import of this package's private modules.
"""

from bayescv.cv._fit import _fold_losses as _fold_losses  # for bayescv.compare
from bayescv.cv._fit import losses_on_folds
from bayescv.cv._predictions import losses_from_predictions
from bayescv.cv._runner import bootstrap_cv_losses, cross_val_losses
from bayescv.cv._splits import UnshuffledFoldsWarning, balanced_group_folds
from bayescv.cv.learners import LEARNERS, TASKS, learner_task, make_learner
from bayescv.cv.loss_functions import LOSSES, Loss, get_loss, make_loss

__all__ = [
    "LEARNERS",
    "LOSSES",
    "TASKS",
    "Loss",
    "UnshuffledFoldsWarning",
    "balanced_group_folds",
    "bootstrap_cv_losses",
    "cross_val_losses",
    "get_loss",
    "learner_task",
    "losses_from_predictions",
    "losses_on_folds",
    "make_learner",
    "make_loss",
]
