"""What an interval method of the registry may use for one replicate (:class:`Context`)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np
import xarray as xr

from bayescv._provenance import named_seed

__all__ = ["Context"]


class Context:
    """What a method may use for one replicate.

    Attributes
    ----------
    X, y : ndarray
        The replicate's data.
    groups : ndarray or None
        Source of each point.
    learner : estimator
        Unfitted learner (clone it before fitting).
    loss : bayescv.Loss
        The loss function.
    scheme : {"random", "source"}
        The CV scheme of the replicate.
    n_splits : int
        K of random K-fold CV (the number of sources for leave-one-source-out).
    level : float
        Nominal coverage.
    seed : int
        This method's own seed for the replicate.
    replicate_seed : int
        The replicate's seed for what methods share (:meth:`bootstrap_table`): the same for
        every method of the replicate. Default: the `seed` the context was built with
        (:meth:`with_seed` keeps it).
    moments : xarray.Dataset
        Block moments (n, S, Q, W along ``block``) of the replicate's CV run; accepted by
        :func:`bayescv.cv_intervals`.
    batched : bool or None
        The study's ``batched`` choice, for methods that refit (bootstrap, nested CV).

    Examples
    --------
    A study builds one per replicate; here one for a method that reads only the losses.
    Copies for other methods share the loss table and the replicate's seed:

    >>> from bayescv import block_moments, from_arrays
    >>> table = from_arrays([0.1, 0.4, 0.2, 0.3, 0.5, 0.2], [0, 0, 1, 1, 2, 2])
    >>> context = Context(
    ...     X=None, y=None, groups=None, learner=None, loss=None, scheme="random", n_splits=3,
    ...     level=0.9, seed=11, moments=block_moments(table), table=lambda: table,
    ... )
    >>> other = context.with_seed(12)
    >>> other.seed, other.replicate_seed, other.losses is context.losses
    (12, 11, True)
    >>> context.moments["n"].values.tolist()
    [2, 2, 2]
    """

    def __init__(
        self, *, X: Any, y: Any, groups: Any, learner: Any, loss: Any, scheme: str,
        n_splits: int, level: float, seed: int, moments: xr.Dataset,
        table: Callable[[], xr.Dataset], replicate_seed: int | None = None,
        batched: bool | None = None,
    ) -> None:  # fmt: skip
        self.X, self.y, self.groups, self.learner, self.loss = X, y, groups, learner, loss
        self.scheme, self.n_splits, self.level, self.seed = scheme, n_splits, level, seed
        self.replicate_seed = int(seed if replicate_seed is None else replicate_seed)
        self.moments = moments
        self.batched = batched
        # Shared by every copy made with with_seed (a shallow copy keeps this dict).
        self._cache: dict[str, Any] = {"table": table}

    @property
    def losses(self) -> xr.Dataset:
        """The replicate's loss table (:mod:`bayescv.losses`), built on first use."""
        if "losses" not in self._cache:
            self._cache["losses"] = self._cache["table"]()
        return self._cache["losses"]

    def bootstrap_table(self, n_bootstrap: int) -> xr.Dataset:
        """Bootstrap-replicated CV of the replicate's data, built once per size and shared.

        :func:`bayescv.bootstrap_cv_losses` with points resampled within sources and
        leave-one-source-out CV (CVS), or within the whole data set and `n_splits` random
        folds (CVR), seeded from :attr:`replicate_seed` (child ``"bootstrap"``, the seed the
        ``bootstrap`` method has always used), so every method of the replicate that asks
        for the same size gets the same table, in whatever order the methods run.

        Parameters
        ----------
        n_bootstrap : int
            Bootstrap replicates (≥ 2).

        Returns
        -------
        xarray.Dataset
            A loss table with dims ``(replicate, obs)``, ``replicate_kind="bootstrap"``.
        """
        if (
            isinstance(n_bootstrap, bool)
            or not isinstance(n_bootstrap, int | np.integer)
            or n_bootstrap < 2
        ):
            raise ValueError(f"n_bootstrap must be an integer >= 2, got {n_bootstrap!r}")
        key = f"bootstrap_{int(n_bootstrap)}"
        if key not in self._cache:
            from bayescv import cv

            source = self.scheme == "source"
            self._cache[key] = cv.bootstrap_cv_losses(
                self.learner, self.X, self.y,
                groups=self.groups if source else None,
                cv=None if source else self.n_splits, loss=self.loss,
                n_bootstrap=int(n_bootstrap),
                random_state=named_seed(self.replicate_seed, "bootstrap"),
                batched=self.batched,
            )  # fmt: skip
        return self._cache[key]

    def with_seed(self, seed: int) -> Context:
        """Return a copy with another method seed.

        The copy shares the loss table, the bootstrap tables and :attr:`replicate_seed`.

        Parameters
        ----------
        seed : int
            The method's seed.

        Returns
        -------
        Context
        """
        out = copy.copy(self)
        out.seed = int(seed)
        return out
