"""Scenarios with known truth: where the data come from, and what the right answers are.

A scenario draws a data set, ``sample(rng) -> (X, y, groups)``, and can say, for any model
fitted on it, what that model's error really is. :func:`bayescv.compare.run_study` uses
:meth:`Scenario.draw`, which returns the data together with a :class:`Population` that
computes those errors.

Designs (``design``), recorded by every study:

* ``"iid"``: points i.i.d. from one population (:class:`BatesLogistic`,
  :class:`GaussianLinear`);
* ``"sources_fixed"``: the sources are drawn once and kept; each replicate redraws only the
  points within them (Geras & Sutton 2013, §6). Truths: ``expected_cv`` and the true θ (over
  replicates), ``err_xy``, ``kfold_test_error``;
* ``"sources_redrawn"``: every replicate draws new sources. Truths: the new-source error
  ``ose_xy`` of the replicate's model and its mean over replicates, the population-level
  ``ose`` (Geras & Sutton 2013, eq. 3), besides ``err_xy`` and ``kfold_test_error``.

Per-replicate truths (see :data:`TRUTHS`): ``err_xy``, the error on fresh points from the
data's own sources of the model fitted on all the data (Err_XY of Bates et al. 2024);
``kfold_test_error``, the mean conditional error of the K fold models, each on fresh points
like its test points (Bayle et al. 2020); ``ose_xy``, the error of the full-data model on new
sources. Synthetic scenarios compute them exactly for linear learners
(:mod:`bayescv.compare._truth`) and on a large test sample otherwise; :class:`ResampledSources`
computes them exactly on the empirical distribution of each source.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from bayescv.compare._gaussian import _Gaussian
from bayescv.compare._resampled import ResampledSources
from bayescv.compare._scenario_base import (
    DESIGNS,
    TRUTHS,
    Draw,
    Population,
    Scenario,
    _positive,
)
from bayescv.compare._truth import bates_coefficient

__all__ = [
    "DESIGNS",
    "TRUTHS",
    "BatesLogistic",
    "Draw",
    "GaussianLinear",
    "MultiSourceErrorRate",
    "MultiSourceLinear",
    "MultiSourceLogistic",
    "Population",
    "ResampledSources",
    "Scenario",
    "bates_coefficient",
]


class BatesLogistic(_Gaussian):
    """The low-dimensional logistic setting of Bates et al. (2024), their Table 1.

    x ~ N(0, I_p), P(y = 1 | x) = expit(c (x₁ + x₂ + x₃)), c set for the Bayes error; n
    points, K-fold CV of an unregularised logistic regression, zero-one loss.

    Parameters
    ----------
    n : int, default 100
        Points per data set.
    p : int, default 20
        Features (the paper says 20; the authors' scripts used 10).
    bayes_error : float, default 0.33
        0.33 or 0.225 in the paper.
    n_splits : int, default 10
        K.
    n_test : int, default 10000
        Test points for the truths of non-linear learners (linear ones are exact).

    Examples
    --------
    >>> X, y, groups = BatesLogistic(n=50, p=5).sample(np.random.default_rng(0))
    >>> X.shape, sorted(set(y.tolist())), groups is None
    ((50, 5), [0, 1], True)
    """

    name = "bates-logistic"
    task = "classification"
    link = "logistic"

    def __init__(
        self,
        n: int = 100,
        p: int = 20,
        *,
        bayes_error: float = 0.33,
        n_splits: int = 10,
        n_test: int = 10_000,
    ) -> None:
        p = _positive(p, "p", 3)
        self.bayes_error = float(bayes_error)
        coef = np.zeros(p)
        coef[:3] = bates_coefficient(self.bayes_error)
        self._setup(
            coef=coef, intercept=0.0, sizes=[_positive(n, "n", 4)], heterogeneity=0.0,
            intercept_sd=0.0, covariate_shift=0.0, noise_sd=0.0, design="iid", scheme="random",
            n_splits=n_splits, source_seed=0, n_test=n_test, n_new_sources=1, cov=None,
        )  # fmt: skip

    def params(self) -> dict[str, Any]:
        """Return the settings."""
        return {
            "n": int(self.sizes[0]),
            "p": self.coef.size,
            "bayes_error": self.bayes_error,
            "n_splits": self.n_splits,
            "n_test": self.n_test,
        }


class GaussianLinear(_Gaussian):
    """Ordinary least squares on a Gaussian linear model; err_xy exact.

    x ~ N(0, Σ), y = xᵀβ + ε, ε ~ N(0, σ²). For a linear learner the error of the fitted
    (w, b) is σ² + (w − β)ᵀΣ(w − β) + b², with no test sample.

    Parameters
    ----------
    n : int, default 100
        Points per data set.
    coef : sequence of float, optional
        β; default 20 features, the first five 1 and the rest 0.
    noise_sd : float, default 1.0
        σ.
    cov : array-like of shape (p, p), optional
        Σ; default the identity.
    n_splits : int, default 10
        K.
    n_test : int, default 10000
        Test points for the truths of non-linear learners.

    Examples
    --------
    >>> X, y, _ = GaussianLinear(n=30).sample(np.random.default_rng(0))
    >>> X.shape
    (30, 20)
    """

    name = "gaussian-linear"
    task = "regression"
    link = "linear"

    def __init__(
        self,
        n: int = 100,
        *,
        coef: Sequence[float] | None = None,
        noise_sd: float = 1.0,
        cov: Any = None,
        n_splits: int = 10,
        n_test: int = 10_000,
    ) -> None:
        coef = np.r_[np.ones(5), np.zeros(15)] if coef is None else coef
        self._setup(
            coef=coef, intercept=0.0, sizes=[_positive(n, "n", 4)], heterogeneity=0.0,
            intercept_sd=0.0, covariate_shift=0.0, noise_sd=noise_sd, design="iid",
            scheme="random", n_splits=n_splits, source_seed=0, n_test=n_test, n_new_sources=1,
            cov=cov,
        )  # fmt: skip

    def params(self) -> dict[str, Any]:
        """Return the settings."""
        return {"n": int(self.sizes[0]), **self._base_params()}


class _MultiSource(_Gaussian):
    def __init__(
        self,
        n_sources: int = 10,
        points_per_source: int | Sequence[int] = 50,
        *,
        coef: Sequence[float] = (1.0, 1.0, 1.0, 0.0, 0.0),
        intercept: float = 0.0,
        heterogeneity: float = 0.5,
        intercept_sd: float = 0.5,
        covariate_shift: float = 0.0,
        noise_sd: float = 1.0,
        cov: Any = None,
        design: str = "sources_fixed",
        scheme: str = "source",
        n_splits: int | None = None,
        source_seed: int = 0,
        n_test: int = 10_000,
        n_new_sources: int = 200,
        noise_df: float | None = None,
    ) -> None:
        k = _positive(n_sources, "n_sources", 2)
        sizes = (
            np.broadcast_to(np.asarray(points_per_source), (k,))
            if np.ndim(points_per_source) == 0
            else np.asarray(points_per_source)
        )
        if sizes.shape != (k,):
            raise ValueError(f"points_per_source must be an int or {k} ints, got {sizes.shape}")
        if design == "iid":
            raise ValueError("multi-source scenarios use 'sources_fixed' or 'sources_redrawn'")
        self._setup(
            coef=coef, intercept=intercept, sizes=sizes, heterogeneity=heterogeneity,
            intercept_sd=intercept_sd, covariate_shift=covariate_shift, noise_sd=noise_sd,
            design=design, scheme=scheme, n_splits=n_splits, source_seed=source_seed, n_test=n_test,
            n_new_sources=n_new_sources, cov=cov, noise_df=noise_df,
        )  # fmt: skip

    def params(self) -> dict[str, Any]:
        """Return the settings."""
        sizes = self.sizes.tolist()
        return {
            "n_sources": self.sizes.size,
            "points_per_source": sizes[0] if len(set(sizes)) == 1 else sizes,
            **self._base_params(),
            "heterogeneity": self.heterogeneity,
            "intercept_sd": self.intercept_sd,
            "covariate_shift": self.covariate_shift,
            "design": self.design,
            "scheme": self.scheme,
            "source_seed": self.source_seed,
            "n_new_sources": self.n_new_sources,
        }


class MultiSourceLogistic(_MultiSource):
    """K sources with logistic outcomes around a common model.

    Source k has β_k = β + h·z_k, intercept a + s_a·ζ_k and feature mean m_k = s_x·ξ_k
    (z, ζ, ξ standard normal); x ~ N(m_k, Σ), P(y=1|x) = expit(xᵀβ_k + a_k).

    Parameters
    ----------
    n_sources : int, default 10
        K.
    points_per_source : int or sequence of int, default 50
        M (equal) or one size per source (unequal).
    coef : sequence of float, default (1, 1, 1, 0, 0)
        β.
    intercept : float, default 0.0
        a.
    heterogeneity : float, default 0.5
        h, the standard deviation of β_k around β: the heterogeneity knob.
    intercept_sd : float, default 0.5
        s_a.
    covariate_shift : float, default 0.0
        s_x.
    noise_sd : float, default 1.0
        Unused (logistic outcomes).
    cov : array-like, optional
        Σ; identity by default.
    design : {"sources_fixed", "sources_redrawn"}, default "sources_fixed"
        Keep the sources (drawn once from `source_seed`) or redraw them every replicate.
    scheme : {"source", "random"}, default "source"
        Leave one source out (CVS), or shuffled K-fold (CVR).
    n_splits : int, optional
        K for ``scheme="random"``; default the number of sources.
    source_seed : int, default 0
        Seed of the fixed sources.
    n_test : int, default 10000
        Test points per source for non-linear learners.
    n_new_sources : int, default 200
        New sources averaged for ``ose_xy``.

    Examples
    --------
    >>> sc = MultiSourceLogistic(4, [10, 20, 30, 40])
    >>> X, y, groups = sc.sample(np.random.default_rng(0))
    >>> X.shape, np.bincount(groups).tolist()
    ((100, 5), [10, 20, 30, 40])
    """

    name = "multi-source-logistic"
    task = "classification"
    link = "logistic"


class MultiSourceErrorRate(MultiSourceLogistic):
    """K logistic sources whose Bayes error is set: 0-1 losses at low error rates (issue 15).

    :class:`MultiSourceLogistic` with β = (c, c, c, 0, 0), c = :func:`bates_coefficient`
    of `bayes_error`, a heterogeneity of `heterogeneity` · c around it and no intercept
    spread. By default (5 % of c) every source has nearly the Bayes error `bayes_error`, and
    the learner's CV error sits a little above it. Measured
    (``benchmarks/results/loss_shapes_binary.md``, K = 10, leave one source out,
    ``LogisticRegression(C=1)``, mean CV error over 200 data sets): Bayes error 0.005 → 2.2 %
    (M = 50) and 1.8 % (M = 200); 0.04 → 4.7 % and 4.4 %; 0.18 → 18.5 % (M = 50). The
    sources' error rates then differ little (their logits have a standard deviation of about
    0.09 over new sources at 0.04, M = 50); ``heterogeneity=0.2`` spreads them (logit sd
    about 0.30, mean CV error about 8.5 %;
    ``benchmarks/results/binomial_tau_posterior.md``).

    Parameters
    ----------
    bayes_error : float, default 0.04
        The sources' Bayes error, in (0, 0.5).
    heterogeneity : float, default 0.05
        Standard deviation of each source's coefficients around c, as a fraction of c.
    n_sources, points_per_source, design, scheme, source_seed, n_test, n_new_sources
        As for :class:`MultiSourceLogistic`.

    Examples
    --------
    >>> sc = MultiSourceErrorRate(0.04, n_sources=3, points_per_source=20)
    >>> X, y, groups = sc.sample(np.random.default_rng(0))
    >>> X.shape, sc.params()["bayes_error"]
    ((60, 5), 0.04)
    """

    name = "multi-source-error-rate"

    def __init__(
        self,
        bayes_error: float = 0.04,
        n_sources: int = 10,
        points_per_source: int | Sequence[int] = 50,
        *,
        design: str = "sources_fixed",
        scheme: str = "source",
        source_seed: int = 0,
        n_test: int = 2000,
        n_new_sources: int = 200,
        heterogeneity: float = 0.05,
    ) -> None:
        if not 0 < bayes_error < 0.5:
            raise ValueError(f"bayes_error must be in (0, 0.5), got {bayes_error!r}")
        if not heterogeneity >= 0:
            raise ValueError(f"heterogeneity must be >= 0, got {heterogeneity!r}")
        self.bayes_error = float(bayes_error)
        c = bates_coefficient(self.bayes_error)
        super().__init__(
            n_sources, points_per_source, coef=(c, c, c, 0.0, 0.0),
            heterogeneity=heterogeneity * c, intercept_sd=0.0, design=design, scheme=scheme, source_seed=source_seed,
            n_test=n_test, n_new_sources=n_new_sources,
        )  # fmt: skip

    def params(self) -> dict[str, Any]:
        """Return the settings."""
        return {"bayes_error": self.bayes_error, **super().params()}

    def default_learner(self) -> Any:
        """Logistic regression with C = 1: unregularised, it diverges on separable folds."""
        from sklearn.linear_model import LogisticRegression

        return LogisticRegression(C=1.0, max_iter=5000)


class MultiSourceLinear(_MultiSource):
    """K sources with linear outcomes around a common model (see :class:`MultiSourceLogistic`).

    y = xᵀβ_k + a_k + ε with ε ~ N(0, noise_sd²); the learner's error is exact for linear
    learners. Parameters as for :class:`MultiSourceLogistic`, and ``noise_df``: with a number
    ν > 2 the noise is Student-t scaled to standard deviation ``noise_sd``,
    ε = noise_sd · sqrt((ν − 2)/ν) · T_ν (Var(T_ν) = ν/(ν − 2)), so the exact squared-error
    truths are unchanged while the squared errors get a heavy tail: their Pareto shape is
    2/ν, and for ν ≤ 4 their variance is infinite (issue 15's heavy-tail studies use ν = 3
    and 5 with unequal source sizes, ``points_per_source=[...]``).

    Examples
    --------
    >>> sc = MultiSourceLinear(3, 20, design="sources_redrawn")
    >>> sc.truth_names()
    ('err_xy', 'kfold_test_error', 'ose_xy', 'ose_cv')
    """

    name = "multi-source-linear"
    task = "regression"
    link = "linear"
