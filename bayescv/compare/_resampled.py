"""The protocol of Geras & Sutton (2013, §6) on a real multi-source data set."""

from __future__ import annotations

from typing import Any

import joblib
import numpy as np
from sklearn.linear_model import LogisticRegression, Ridge

from bayescv.compare._scenario_base import (
    DESIGNS,
    Draw,
    Population,
    Scenario,
    _check_choice,
    _positive,
)
from bayescv.losses import SCHEMES

__all__ = ["ResampledSources"]


class ResampledSources(Scenario):
    """Resample points within the sources of a real data set (Geras & Sutton 2013, §6).

    The empirical distribution of each source is its population, so every truth is exact:
    the error of a model on a source is its mean loss over all of that source's rows.

    * ``design="sources_fixed"``: the training sources are fixed (all of them, or
      `n_sources` chosen once with `source_seed`); each replicate draws
      `points_per_source` points with replacement within each (Geras & Sutton 2013, §6.2: "1000 data sets,
      sampling from empirical distributions of each domain").
    * ``design="sources_redrawn"``: each replicate draws `n_sources` sources without
      replacement; the sources left out are the new sources (``ose_xy`` is the mean over
      them of the model's per-source error, each source weighted equally; Geras & Sutton 2013, §6.1).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Numeric features.
    y : array-like of shape (n_samples,)
        Target.
    groups : array-like of shape (n_samples,)
        Source of each row.
    n_sources : int, optional
        Training sources per replicate. Default: all sources (fixed design), all but one
        (redrawn design).
    points_per_source : int, optional
        Points drawn from each training source; default each source's own size.
    design : {"sources_fixed", "sources_redrawn"}, default "sources_fixed"
        Sampling design.
    scheme : {"source", "random"}, default "source"
        Leave one source out, or shuffled K-fold.
    n_splits : int, optional
        K for ``scheme="random"``; default the number of training sources.
    source_seed : int, default 0
        Seed choosing the fixed sources when `n_sources` is less than all.
    task : {"regression", "classification"}, optional
        Default: classification when y holds at most 20 distinct integers or labels.
    label : str, default "data"
        Name of the data set, recorded by studies.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X, y, g = rng.normal(size=(60, 2)), rng.normal(size=60), np.repeat([1, 2, 3], 20)
    >>> sc = ResampledSources(X, y, g, points_per_source=8)
    >>> Xs, ys, gs = sc.sample(np.random.default_rng(1))
    >>> Xs.shape, sorted(set(gs.tolist()))
    ((24, 2), [1, 2, 3])
    """

    name = "resampled-sources"

    def __init__(
        self,
        X: Any,
        y: Any,
        groups: Any,
        *,
        n_sources: int | None = None,
        points_per_source: int | None = None,
        design: str = "sources_fixed",
        scheme: str = "source",
        n_splits: int | None = None,
        source_seed: int = 0,
        task: str | None = None,
        label: str = "data",
    ) -> None:
        self.X = np.asarray(X, dtype=float)
        self.y = np.asarray(y)
        self.groups = np.asarray(groups)
        if self.X.ndim != 2 or not (len(self.X) == len(self.y) == len(self.groups)):
            raise ValueError("X must be 2-D and X, y, groups of the same length")
        self.design = _check_choice(design, DESIGNS[1:], "design")
        self.scheme = _check_choice(scheme, SCHEMES, "scheme")
        self.labels, codes = np.unique(self.groups, return_inverse=True)
        self._rows = [np.flatnonzero(codes == j) for j in range(self.labels.size)]
        total = self.labels.size
        default = total if self.design == "sources_fixed" else total - 1
        self.n_sources = _positive(default if n_sources is None else n_sources, "n_sources", 2)
        if self.n_sources > total or (
            self.design == "sources_redrawn" and self.n_sources >= total
        ):
            raise ValueError(
                f"n_sources={self.n_sources} is too many for {total} sources "
                "(the redrawn design needs at least one source left over as a new source)"
            )
        self.points_per_source = (
            None
            if points_per_source is None
            else _positive(points_per_source, "points_per_source", 2)
        )
        self.n_splits = _positive(self.n_sources if n_splits is None else n_splits, "n_splits", 2)
        self.source_seed = _positive(source_seed, "source_seed", 0)
        if task is None:
            kind = self.y.dtype.kind
            few = np.unique(self.y).size <= 20
            task = "classification" if kind in "bOUS" or (kind in "iu" and few) else "regression"
        self.task = _check_choice(task, ("regression", "classification"), "task")
        self.label = str(label)
        self._hash = joblib.hash((self.X, self.y, self.groups))
        rng = np.random.default_rng(self.source_seed)
        chosen = np.arange(total)
        if self.n_sources < total:
            chosen = np.sort(rng.choice(total, self.n_sources, replace=False))
        self._fixed = chosen

    @classmethod
    def star(cls, *, target: str = "total", **kwargs: Any) -> ResampledSources:
        """Build the scenario on the Tennessee STAR data shipped with bayescv (79 schools).

        Parameters
        ----------
        target : {"total", "math", "reading"}, default "total"
            Score to predict (see :func:`bayescv.load_star`).
        **kwargs
            Passed to the constructor.

        Returns
        -------
        ResampledSources
        """
        from bayescv.datasets import load_star

        star = load_star(target=target)
        return cls(
            star.data.to_numpy(float), star.target.to_numpy(float), star.groups.to_numpy(),
            label=f"STAR ({target})", **kwargs,
        )  # fmt: skip

    @classmethod
    def from_frame(
        cls, frame: Any, *, target: str, source: str, features: Any = None, **kwargs: Any
    ) -> ResampledSources:
        """Build the scenario on a user's DataFrame (see :func:`bayescv.load_dataframe`).

        Parameters
        ----------
        frame : pandas.DataFrame
            One row per point.
        target, source : str
            Target and source columns.
        features : sequence of str, optional
            Feature columns (categorical ones are one-hot encoded).
        **kwargs
            Passed to the constructor.

        Returns
        -------
        ResampledSources
        """
        from bayescv.datasets import load_dataframe

        b = load_dataframe(frame, target=target, source=source, features=features)
        kwargs.setdefault("label", "user data")
        return cls(b.data.to_numpy(float), b.target.to_numpy(), b.groups.to_numpy(), **kwargs)

    def _sizes(self, chosen: np.ndarray) -> np.ndarray:
        if self.points_per_source is not None:
            return np.full(chosen.size, self.points_per_source, dtype=np.int64)
        return np.array([self._rows[j].size for j in chosen], dtype=np.int64)

    def draw(self, rng: np.random.Generator) -> Draw:
        """Draw sources (redrawn design), then points within each: :meth:`Scenario.draw`."""
        if self.design == "sources_redrawn":
            chosen = np.sort(rng.choice(self.labels.size, self.n_sources, replace=False))
        else:
            chosen = self._fixed
        sizes = self._sizes(chosen)
        rows = np.concatenate(
            [
                self._rows[j][rng.integers(self._rows[j].size, size=m)]
                for j, m in zip(chosen, sizes, strict=True)
            ]
        )
        index = np.repeat(np.arange(chosen.size), sizes)
        groups = self.labels[chosen][index]
        return Draw(self.X[rows], self.y[rows], groups, _EmpiricalPopulation(self, chosen, sizes))

    def default_learner(self) -> Any:
        """Ridge regression, or L2-penalised logistic regression for classification."""
        if self.task == "classification":
            return LogisticRegression(max_iter=1000)
        return Ridge()

    def params(self) -> dict[str, Any]:
        """Return the settings (with a hash of the data)."""
        return {
            "data": self.label,
            "n_samples": int(self.X.shape[0]),
            "n_features": int(self.X.shape[1]),
            "n_sources_total": int(self.labels.size),
            "n_sources": self.n_sources,
            "points_per_source": self.points_per_source,
            "design": self.design,
            "scheme": self.scheme,
            "n_splits": self.n_splits,
            "source_seed": self.source_seed,
            "task": self.task,
            "data_hash": self._hash,
        }


class _EmpiricalPopulation(Population):
    def __init__(self, scenario: ResampledSources, chosen: np.ndarray, sizes: np.ndarray):
        self.scenario, self.chosen = scenario, chosen
        self.weights = sizes / sizes.sum()
        self.source_index = np.repeat(np.arange(chosen.size), sizes)

    def _errors(self, model: Any, loss: Any, sources: np.ndarray) -> np.ndarray:
        s = self.scenario
        rows = [s._rows[j] for j in sources]
        flat = np.concatenate(rows)
        pred = getattr(model, loss.response_method)(s.X[flat])
        values = loss(s.y[flat], pred, getattr(model, "classes_", None))
        which = np.repeat(np.arange(len(rows)), [r.size for r in rows])
        return np.bincount(which, weights=values) / np.bincount(which)

    def source_errors(self, model: Any, loss: Any, rng: np.random.Generator) -> np.ndarray:
        """Mean loss over every row of each training source (exact)."""
        return self._errors(model, loss, self.chosen)

    def new_source_error(self, model: Any, loss: Any, rng: np.random.Generator) -> float:
        """Mean over the left-out sources of the per-source mean loss (exact)."""
        others = np.setdiff1d(np.arange(self.scenario.labels.size), self.chosen)
        if others.size == 0:
            raise ValueError("no source is left over to serve as a new source")
        return float(self._errors(model, loss, others).mean())
