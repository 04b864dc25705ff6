"""What the built-in methods of :mod:`bayescv.compare.registry` do for one replicate.

Each is a registry method's ``func(context, names, **options) -> interval Dataset``; the
registry declares their names, targets and costs.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

import numpy as np
import xarray as xr

from bayescv._defaults import DEFAULT_N_BOOTSTRAP
from bayescv.classical import cv_intervals
from bayescv.compare._context import Context
from bayescv.intervals import combine_intervals, interval_dataset
from bayescv.tails import add_tail_flags, pooled_tail_shape

__all__ = ["BAYES_TARGETS", "bayes_hier", "bootstrap", "closed_form", "nested"]


def closed_form(context: Context, names: Sequence[str], *, kind: str = "auto") -> xr.Dataset:
    """Every requested closed-form interval from one call, flagged for heavy tails."""
    out = cv_intervals(context.moments, list(names), level=context.level, kind=kind)
    return add_tail_flags(out, pooled_tail_shape(context.losses)["khat_pooled"].values)


def bootstrap(
    context: Context,
    names: Sequence[str],
    *,
    n_bootstrap: int = DEFAULT_N_BOOTSTRAP,
    kind: str = "auto",
) -> xr.Dataset:
    """Bootstrap-replicated CV: within-source resampling, ``n_bootstrap`` × K refits.

    The replicated table comes from :meth:`Context.bootstrap_table`: ``bayes_hier`` with the
    same ``n_bootstrap`` in the same study reuses it instead of refitting.
    """
    boot = context.bootstrap_table(n_bootstrap)
    out = cv_intervals(
        context.moments, ["bootstrap"], level=context.level, kind=kind, bootstrap=boot
    )
    return add_tail_flags(out, pooled_tail_shape(context.losses)["khat_pooled"].values)


def nested(context: Context, names: Sequence[str], **options: Any) -> xr.Dataset:
    """Nested CV of Bates et al. (2024) (:func:`bayescv.nested.nested_cv`); grouped under CVS.

    Options are passed on (``n_repeats``, ``bias_correction``, ...). Default ``n_splits``:
    the study's K for random CV; for CVS ``min(10, n_sources // 2)`` (two sources per fold).
    """
    from bayescv.nested import nested_cv

    grouped = context.scheme == "source"
    options.setdefault("batched", context.batched)
    if "n_splits" not in options:
        n_units = np.unique(context.groups).size if grouped else context.n_splits
        options["n_splits"] = min(10, n_units // 2) if grouped else context.n_splits
    return nested_cv(
        context.learner, context.X, context.y, groups=context.groups if grouped else None,
        loss=context.loss, level=context.level, random_state=context.seed, **options,
    )  # fmt: skip


#: Rows of the Bayesian model and their targets: the sources at hand (μ̂'s expectation), the
#: mean error over new sources (μ₀; Geras & Sutton 2013, eq. 3), and the error of one new source (μ₀ + τ z,
#: predictive; no scenario computes a truth for it, so studies report no coverage of it).
BAYES_TARGETS = {
    "bayes_expected_cv": "expected_cv",
    "bayes_ose": "ose",
    "bayes_new_source": "new_source",
}


def bayes_hier(
    context: Context,
    names: Sequence[str],
    *,
    n_bootstrap: int = DEFAULT_N_BOOTSTRAP,
    **options: Any,
) -> xr.Dataset:
    """Hierarchical Bayesian model (:mod:`bayescv.bayes`): posterior intervals.

    Calls ``bayes.fit(losses, bootstrap=table, random_state=seed, **options)`` (options such
    as ``draws``, ``tune``, ``chains``, ``sampler``, ``n_jobs``) and
    ``bayes.posterior_intervals(idata, level=level)``: rows ``bayes_expected_cv`` and, for CVS,
    ``bayes_ose`` and ``bayes_new_source`` (under random CV those rows are NaN, flagged
    ``not_applicable``).

    `n_bootstrap` bootstrap-replicated CV runs (:meth:`Context.bootstrap_table`, shared with
    the ``bootstrap`` method when it runs with the same ``n_bootstrap``; both default to 50,
    so a study running both fits the replicates once) inform the sampling
    covariance of the block means; with ``n_bootstrap=0`` the one observed table is fitted
    alone and the split of its scatter between Γ and τ² rests on the prior (``docs/bayes.md``).
    ``n_jobs`` defaults to 1: a study runs one replicate per worker, and nutpie's parallel
    chains would oversubscribe the machine.
    """
    if (
        isinstance(n_bootstrap, bool)
        or not isinstance(n_bootstrap, int | np.integer)
        or n_bootstrap < 0
        or n_bootstrap == 1
    ):
        raise ValueError(
            f"n_bootstrap must be 0 (the observed table alone) or an integer >= 2, "
            f"got {n_bootstrap!r}"
        )
    if "bootstrap" in options:
        raise ValueError(
            "bayes_hier builds its bootstrap table itself: pass n_bootstrap, not bootstrap"
        )
    options.setdefault("n_jobs", 1)
    boot = context.bootstrap_table(n_bootstrap) if n_bootstrap else None
    bayes = importlib.import_module("bayescv.bayes")
    idata = bayes.fit(context.losses, bootstrap=boot, random_state=context.seed, **options)
    result = bayes.posterior_intervals(idata, level=context.level)
    missing = [n for n in names if n not in result["method_name"].values]
    if not missing:
        return result
    # the random-CV model has no new-source target: its row is NaN, flagged
    nan = [np.nan] * len(missing)
    absent = interval_dataset(
        missing, estimate=nan, lower=nan, upper=nan, se=nan, level=context.level,
        target=[BAYES_TARGETS[n] for n in missing],
        flag=[f"not_applicable: no {BAYES_TARGETS[n]} target under {context.scheme} CV" for n in missing],
    )  # fmt: skip
    return combine_intervals(result[["estimate", "lower", "upper", "se", "flag"]], absent)
