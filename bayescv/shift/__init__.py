"""Evaluation under covariate shift: importance-weighted CV with a control variate.

When a target domain has features but no labels, and ``p(y | x)`` is the same in both
domains (covariate shift), the risk on the target equals the source risk weighted by the
density ratio ``w(x) = p_T(x) / p_S(x)`` (Kouw & Loog, "A control variate for evaluation
under covariate shift"). This subpackage

* estimates ``w`` with a cross-fitted domain classifier (:func:`density_ratio_weights`);
* turns per-point losses and weights into the importance-weighted risk ``R_W``
  (:func:`importance_weighted_risk`) and its control-variate version ``R_β``
  (:func:`control_variate_risk`), never more variable at the optimal β (an estimated β
  can miss it on few points), each with a standard error, a
  normal interval and the effective sample size of the weights as a diagnostic;
* runs CV on labelled source data weighted toward unlabelled target data
  (:func:`importance_weighted_cv`) and, for data from several sources, checks the method
  on each held-out source against its true loss (:func:`importance_weighted_cvs`);
* provides a two-Gaussian example with exact answers (:class:`GaussianShift`).

Results use the package's interval Dataset (methods ``"iw"`` and ``"iw_control_variate"``,
target ``"target_risk"``).
"""

from bayescv.shift._common import BETAS
from bayescv.shift.cv import importance_weighted_cv, importance_weighted_cvs
from bayescv.shift.risk import (
    METHODS,
    control_variate_risk,
    importance_weighted_risk,
    loo_betas,
    optimal_beta,
    target_risk_intervals,
)
from bayescv.shift.scenario import GaussianShift
from bayescv.shift.weights import (
    CALIBRATIONS,
    LowEffectiveSampleSizeWarning,
    density_ratio_weights,
    effective_sample_size,
)

__all__ = [
    "BETAS",
    "CALIBRATIONS",
    "METHODS",
    "GaussianShift",
    "LowEffectiveSampleSizeWarning",
    "control_variate_risk",
    "density_ratio_weights",
    "effective_sample_size",
    "importance_weighted_cv",
    "importance_weighted_cvs",
    "importance_weighted_risk",
    "loo_betas",
    "optimal_beta",
    "target_risk_intervals",
]
