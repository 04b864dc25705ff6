"""Hierarchical Bayesian model of CV errors over sources (PyMC).

The model sees per block only the sufficient statistics (n_k, ē_k, W_k), so a fit costs the
same for any number of losses, and one compiled model serves every loss table with the same
number of blocks. :func:`fit` returns an ArviZ ``InferenceData``; :func:`posterior_intervals`
turns it into the package's interval Dataset (targets ``expected_cv``, the sources at hand;
``ose``, the mean error over new sources; ``new_source``, the error of one new source);
:func:`predictive_check`, :func:`plot_ppc` and :func:`plot_population_check` check the fit; :func:`paired_comparison` compares
two learners on paired losses. See ``docs/bayes.md`` for the model, its priors and
parameterisation, and what one CV run can and cannot identify.

Importing this subpackage does not import PyMC; fitting with ``sampler="pymc"`` does. The
default sampler's compiled code is cached on disk (:func:`cache_dir`, :func:`clear_cache`;
``BAYESCV_CACHE_DIR`` moves the cache, ``BAYESCV_NO_CACHE=1`` turns it off).
"""

from bayescv.bayes._cache import cache_dir, clear_cache
from bayescv.bayes.checks import predictive_check
from bayescv.bayes.datasets import compare_datasets
from bayescv.bayes.fit import SAMPLERS, SamplingWarning, diagnose, fit, posterior_intervals
from bayescv.bayes.model import CompiledModel, clear_model_cache, get_model
from bayescv.bayes.paired import paired_comparison
from bayescv.bayes.plots import plot_ppc, plot_targets
from bayescv.bayes.population_plot import plot_population_check
from bayescv.bayes.priors import Priors
from bayescv.bayes.simulate import simulate_losses

__all__ = [
    "SAMPLERS",
    "CompiledModel",
    "Priors",
    "SamplingWarning",
    "cache_dir",
    "clear_cache",
    "clear_model_cache",
    "compare_datasets",
    "diagnose",
    "fit",
    "get_model",
    "paired_comparison",
    "plot_population_check",
    "plot_ppc",
    "plot_targets",
    "posterior_intervals",
    "predictive_check",
    "simulate_losses",
]
