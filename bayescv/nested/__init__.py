"""Nested cross-validation intervals for the prediction error (Bates, Hastie & Tibshirani 2024).

:func:`nested_cv` is the method; :func:`bias_constant` the two published bias corrections.
The numerical core (fold draws, one replicate's fits, the summaries) is in ``_core``.
"""

from bayescv.nested._interval import BIAS_CORRECTIONS, bias_constant, nested_cv

__all__ = ["BIAS_CORRECTIONS", "bias_constant", "nested_cv"]
