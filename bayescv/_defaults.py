"""Package-wide defaults shared by several modules (a leaf: imports nothing of the package)."""

from __future__ import annotations

__all__ = ["DEFAULT_N_BOOTSTRAP"]

#: Bootstrap-replicated CV runs B used by default everywhere: :func:`bayescv.bootstrap_cv_losses`,
#: the ``bootstrap`` interval method and the Bayesian model's ``bayes_hier`` of the comparison
#: module. 50 is the B the Bayesian calibration in the docs was run with (docs/bayes.md).
DEFAULT_N_BOOTSTRAP = 50
