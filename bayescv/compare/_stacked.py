"""Checks of a study stacked from several along ``replicate`` (with :func:`xarray.concat`).

A stacked study keeps the first study's attrs (xarray's ``combine_attrs="override"``), so its
level, scenario, learner and loss describe the first study only, and nothing per replicate
records them: stack only studies of the same settings. What is recorded per replicate is
checked here: the replicate labels, the seeds (two studies of one ``random_state`` hold the
same data sets) and the number of CV blocks (folds or sources), which
:func:`bayescv.compare.run_study` keeps the same in every replicate. The design and the CV
scheme, also recorded per replicate, are checked by :func:`bayescv.compare.check_design`.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

__all__ = ["check_stacked"]


def check_stacked(study: xr.Dataset) -> None:
    """Refuse a study stacked from studies that must not be summarised together.

    Parameters
    ----------
    study : xarray.Dataset
        A study, perhaps several stacked along ``replicate``.

    Raises
    ------
    ValueError
        For repeated replicate labels or seeds, or replicates of different numbers of CV
        blocks; the message names them.

    Examples
    --------
    >>> from bayescv.compare import BatesLogistic, run_study
    >>> study = run_study(BatesLogistic(n=40, p=3, n_splits=4), methods=["naive_points"],
    ...                   n_replicates=2, random_state=0)
    >>> check_stacked(xr.concat([study, study], dim="replicate"))
    Traceback (most recent call last):
    ...
    ValueError: replicate label(s) [0, 1] appear more than once: two studies stacked with xr.concat? Studies run with the same random_state hold the same replicates, which would count twice; stack only studies of the same settings run with different ones, then renumber: study.assign_coords(replicate=np.arange(study.sizes['replicate']))
    """
    _check_block_counts(study)
    if "replicate" not in study.coords:
        return
    labels, counts = np.unique(study["replicate"].values, return_counts=True)
    if (counts > 1).any():
        repeated = labels[counts > 1]
        raise ValueError(
            f"replicate label(s) {repeated[:5].tolist()}{' …' if repeated.size > 5 else ''} "
            "appear more than once: two studies stacked with xr.concat? Studies run with the "
            "same random_state hold the same replicates, which would count twice; stack only "
            "studies of the same settings run with different ones, then renumber: "
            "study.assign_coords(replicate=np.arange(study.sizes['replicate']))"
        )
    # Renumbered, two studies of one random_state still hold the same data sets: same seeds.
    if "seed" in study.data_vars:
        seeds = study["seed"].values
        repeated = np.unique(seeds, return_counts=True)
        again = np.isin(seeds, repeated[0][repeated[1] > 1])
        if again.any():
            labels = study["replicate"].values[again][:6].tolist()
            raise ValueError(
                f"{int((repeated[1] - 1).sum())} replicate(s) repeat another's seed (replicates "
                f"{labels}), so the same data set would count twice: studies stacked with "
                "xr.concat that were run with the same random_state? Stack only studies of "
                "the same settings run with different random_state values (in one large "
                "study two 32-bit seeds can also coincide by chance: drop one, "
                "study.drop_sel(replicate=...))"
            )


def _check_block_counts(study: xr.Dataset) -> None:
    """Refuse replicates of different numbers of CV blocks (padded with NaN by xr.concat)."""
    if "block_n" not in study.data_vars or "replicate" not in study["block_n"].dims:
        return
    counts = np.isfinite(study["block_n"].transpose("replicate", ...).values).sum(axis=1)
    values = np.unique(counts)
    if values.size > 1:
        labels = study["replicate"].values
        where = ", ".join(
            f"{int(v)} (replicates {labels[counts == v][:6].tolist()}"
            f"{' …' if (counts == v).sum() > 6 else ''})"
            for v in values
        )
        raise ValueError(
            f"the replicates differ in their number of CV blocks: {where}: studies of "
            "different scenarios stacked with xr.concat? A study keeps one scenario (its "
            "attrs are the first study's); summarise each on its own"
        )
