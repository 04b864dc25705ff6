"""Comparing learners: two or more, on one data set or several, from the results users have.

* :func:`compare_learners`: every applicable test for pairs of learners, one row each, each
  row naming its target; the CLI's ``bayescv compare``;
* :func:`correlated_ttest`: the Bayesian correlated t-test (Corani & Benavoli 2015) in closed
  form, with a region of practical equivalence;
* :func:`compare_several`: the probability that each of several learners is the best (and
  practically equivalent to the best), and every pair's posterior probabilities.

Inputs are per-point loss tables (:mod:`bayescv.losses`) or fold-score tables
(:mod:`bayescv.fold_scores`); plots are in :mod:`bayescv.plots`
(:func:`bayescv.plots.plot_comparison`, :func:`bayescv.plots.plot_best`).
"""

from bayescv.learner_comparison._correlated_t import correlated_ttest, t_posterior_probabilities
from bayescv.learner_comparison._entry import COMPARISON_METHODS, DEFAULT_METHODS, compare_learners
from bayescv.learner_comparison._several import compare_several

__all__ = [
    "COMPARISON_METHODS",
    "DEFAULT_METHODS",
    "compare_learners",
    "compare_several",
    "correlated_ttest",
    "t_posterior_probabilities",
]
