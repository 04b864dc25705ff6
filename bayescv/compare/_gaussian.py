"""The Gaussian machinery behind the synthetic scenarios of :mod:`bayescv.compare.scenarios`.

:class:`_Gaussian` draws sources around a common linear or logistic model and points within
them; :class:`_GaussianPopulation` computes the true errors of a fitted model on those sources
(exactly for linear learners, :mod:`bayescv.compare._truth`, else on a test sample). The public
scenarios subclass :class:`_Gaussian` in :mod:`bayescv.compare.scenarios`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special
from sklearn.linear_model import LinearRegression, LogisticRegression

from bayescv.compare._scenario_base import (
    DESIGNS,
    Draw,
    Population,
    Scenario,
    _check_choice,
    _positive,
)
from bayescv.compare._truth import linear_predictor, logistic_zero_one_error, squared_error
from bayescv.losses import SCHEMES

__all__: list[str] = []


@dataclass
class _Sources:
    """Coefficients, intercepts and feature means of the sources of a Gaussian scenario."""

    beta: np.ndarray  # (S, p)
    intercept: np.ndarray  # (S,)
    mean: np.ndarray  # (S, p)


class _Gaussian(Scenario):
    """Gaussian features, logistic or linear outcome, sources around a common model."""

    link = "linear"
    #: Degrees of freedom of Student-t noise; None for Gaussian noise.
    noise_df: float | None = None

    def _setup(
        self, *, coef: Any, intercept: float, sizes: Any, heterogeneity: float,
        intercept_sd: float, covariate_shift: float, noise_sd: float, design: str, scheme: str,
        n_splits: int | None, source_seed: int, n_test: int, n_new_sources: int, cov: Any,
        noise_df: float | None = None,
    ) -> None:  # fmt: skip
        self.coef = np.asarray(coef, dtype=float)
        if self.coef.ndim != 1 or self.coef.size == 0:
            raise ValueError("coef must be a non-empty 1-D sequence")
        p = self.coef.size
        self.intercept = float(intercept)
        self.sizes = np.asarray(sizes, dtype=np.int64)
        if np.any(self.sizes < 2):
            raise ValueError(f"every source needs at least 2 points, got {self.sizes.tolist()}")
        for name, value in (
            ("heterogeneity", heterogeneity), ("intercept_sd", intercept_sd),
            ("covariate_shift", covariate_shift), ("noise_sd", noise_sd),
        ):  # fmt: skip
            if not (np.isfinite(value) and value >= 0):
                raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
        if noise_df is not None and not (np.isfinite(noise_df) and noise_df > 2):
            raise ValueError(
                f"noise_df must be a number > 2 (the noise needs a finite variance for the "
                f"squared-error truths), got {noise_df!r}"
            )
        if noise_df is not None:  # an instance attribute only when set: the hashes of
            self.noise_df = float(noise_df)  # Gaussian-noise scenarios stay as they were
        self.heterogeneity, self.intercept_sd = float(heterogeneity), float(intercept_sd)
        self.covariate_shift, self.noise_sd = float(covariate_shift), float(noise_sd)
        self.design = _check_choice(design, DESIGNS, "design")
        self.scheme = _check_choice(scheme, SCHEMES, "scheme")
        self.n_splits = _positive(self.sizes.size if n_splits is None else n_splits, "n_splits", 2)
        if self.scheme == "source" and self.sizes.size < 2:
            raise ValueError("leave-one-source-out CV needs at least 2 sources")
        self.source_seed = _positive(source_seed, "source_seed", 0)
        self.n_test = _positive(n_test, "n_test")
        self.n_new_sources = _positive(n_new_sources, "n_new_sources")
        self.cov = np.eye(p) if cov is None else np.asarray(cov, dtype=float)
        if self.cov.shape != (p, p):
            raise ValueError(f"cov must be ({p}, {p}), got {self.cov.shape}")
        self._chol = np.linalg.cholesky(self.cov)
        self._index = np.repeat(np.arange(self.sizes.size), self.sizes)
        self._fixed = self._draw_sources(np.random.default_rng(self.source_seed), self.sizes.size)

    def _draw_sources(self, rng: np.random.Generator, k: int) -> _Sources:
        p = self.coef.size
        beta = self.coef + self.heterogeneity * rng.standard_normal((k, p))
        intercept = self.intercept + self.intercept_sd * rng.standard_normal(k)
        mean = self.covariate_shift * rng.standard_normal((k, p))
        if self.design == "iid":
            beta, intercept, mean = (
                self.coef[None, :],
                np.array([self.intercept]),
                np.zeros((1, p)),
            )
        return _Sources(beta, intercept, mean)

    def _points(self, src: _Sources, index: np.ndarray, rng: np.random.Generator):
        z = rng.standard_normal((index.size, self.coef.size))
        X = src.mean[index] + z @ self._chol.T
        lin = np.einsum("ij,ij->i", X, src.beta[index]) + src.intercept[index]
        if self.link == "logistic":
            y = (rng.random(index.size) < special.expit(lin)).astype(np.int64)
        else:
            y = lin + self.noise_sd * self._noise(index.size, rng)
        return X, y

    def _noise(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """Draw standard normal noise, or Student-t scaled to unit variance (Var(T_ν) = ν/(ν − 2))."""
        if self.noise_df is None:
            return rng.standard_normal(n)
        return rng.standard_t(self.noise_df, n) * np.sqrt((self.noise_df - 2) / self.noise_df)

    def draw(self, rng: np.random.Generator) -> Draw:
        """Draw one replicate (sources too, under ``"sources_redrawn"``): :meth:`Scenario.draw`."""
        redraw = self.design == "sources_redrawn"
        src = self._draw_sources(rng, self.sizes.size) if redraw else self._fixed
        X, y = self._points(src, self._index, rng)
        groups = None if self.design == "iid" else self._index.copy()
        return Draw(X, y, groups, _GaussianPopulation(self, src))

    def default_learner(self) -> Any:
        """Unregularised logistic regression, or ordinary least squares."""
        if self.link == "logistic":
            return LogisticRegression(C=np.inf, solver="newton-cholesky", max_iter=1000)
        return LinearRegression()

    def _base_params(self) -> dict[str, Any]:
        out: dict[str, Any] = {"coef": self.coef.tolist(), "intercept": self.intercept}
        if not np.array_equal(self.cov, np.eye(self.coef.size)):
            out["cov"] = self.cov.tolist()
        if self.link == "linear":
            out["noise_sd"] = self.noise_sd
            if self.noise_df is not None:
                out["noise_df"] = self.noise_df
        out.update(n_splits=self.n_splits, n_test=self.n_test)
        return out


class _GaussianPopulation(Population):
    def __init__(self, scenario: _Gaussian, src: _Sources) -> None:
        self.scenario, self.src = scenario, src
        self.weights = scenario.sizes / scenario.sizes.sum()
        self.source_index = scenario._index

    def _exact(self, model: Any, loss: Any, src: _Sources) -> np.ndarray | None:
        s = self.scenario
        lin = linear_predictor(model, loss.name, s.link)
        if lin is None:
            return None
        w, b = lin
        if s.link == "logistic":
            return logistic_zero_one_error(w, b, src.beta, src.intercept, src.mean, s.cov)
        return squared_error(w, b, src.beta, src.intercept, src.mean, s.cov, s.noise_sd)

    def _sampled(self, model: Any, loss: Any, src: _Sources, per: int, rng) -> np.ndarray:
        k = src.intercept.size
        index = np.repeat(np.arange(k), per)
        X, y = self.scenario._points(src, index, rng)
        pred = getattr(model, loss.response_method)(X)
        values = loss(y, pred, getattr(model, "classes_", None))
        return np.bincount(index, weights=values, minlength=k) / per

    def source_errors(self, model: Any, loss: Any, rng: np.random.Generator) -> np.ndarray:
        """Exact for linear learners, else on ``n_test`` fresh points per source."""
        exact = self._exact(model, loss, self.src)
        if exact is not None:
            return exact
        return self._sampled(model, loss, self.src, self.scenario.n_test, rng)

    def new_source_error(self, model: Any, loss: Any, rng: np.random.Generator) -> float:
        """Average over ``n_new_sources`` freshly drawn sources."""
        s = self.scenario
        if s.design == "iid":
            raise NotImplementedError(f"{type(s).__name__} is i.i.d.: it has no new sources")
        new = s._draw_sources(rng, s.n_new_sources)
        exact = self._exact(model, loss, new)
        if exact is None:
            exact = self._sampled(model, loss, new, max(s.n_test // s.n_new_sources, 20), rng)
        return float(exact.mean())
