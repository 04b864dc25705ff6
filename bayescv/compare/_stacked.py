"""Checks of a study stacked from several along ``replicate`` (with :func:`xarray.concat`).

A stacked study keeps the first study's attrs (xarray's ``combine_attrs="override"``), so its
level, scenario, learner and loss describe the first study only: stack only studies of the
same settings. What is recorded per replicate is checked here: the replicate labels, the
seeds (two studies of one ``random_state`` hold the same data sets), the number of CV blocks
(folds or sources), which :func:`bayescv.compare.run_study` keeps the same in every
replicate, and the id of the study's settings but the seed (``settings_id``, see
:mod:`bayescv.compare._settings`; a study read from files written before replicates recorded
it has none, and passes as before). The design and the CV scheme, also recorded per
replicate, are checked by :func:`bayescv.compare.check_design`.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import xarray as xr

from bayescv.compare._settings import settings_id

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
        blocks or of studies of different settings; the message names them.

    Examples
    --------
    >>> from bayescv.compare import BatesLogistic, run_study
    >>> study = run_study(BatesLogistic(n=40, p=3, n_splits=4), methods=["naive_points"],
    ...                   n_replicates=2, random_state=0)
    >>> check_stacked(xr.concat([study, study], dim="replicate"))
    Traceback (most recent call last):
    ...
    ValueError: replicate label(s) [0, 1] appear more than once: two studies stacked with xr.concat? Studies run with the same random_state hold the same replicates, which would count twice; stack only studies of the same settings run with different ones, then renumber: study.assign_coords(replicate=np.arange(study.sizes['replicate']))

    Studies of another level (or scenario, learner, loss, methods, options), renumbered:

    >>> other = run_study(BatesLogistic(n=40, p=3, n_splits=4), methods=["naive_points"],
    ...                   n_replicates=2, random_state=1, level=0.9)
    >>> stacked = xr.concat([study, other], dim="replicate")
    >>> check_stacked(stacked.assign_coords(replicate=np.arange(4)))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: the replicates come from 2 studies of different settings: ...
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
    _check_settings(study)


def _check_settings(study: xr.Dataset) -> None:
    """Refuse replicates of studies of different settings (``settings_id``), naming them."""
    if "settings_id" not in study.variables or study["settings_id"].dims != ("replicate",):
        return
    ids = study["settings_id"].values.astype(str)
    values, first = np.unique(ids, return_index=True)
    if values.size < 2:
        return
    labels = study["replicate"].values if "replicate" in study.coords else np.arange(ids.size)
    where = "; ".join(_with_replicates(ids, labels, values[np.argsort(first)]))
    attrs = study.attrs
    try:
        stored = json.loads(attrs.get("settings", "null"))
    except (TypeError, ValueError):  # attrs not written by run_study: no note on them
        stored = None
    described = settings_id(stored) if isinstance(stored, dict) else None
    note = ""
    if described in values.tolist():
        shown = ", ".join(
            f"{k} {attrs[k]}" for k in ("scenario", "learner", "loss_name", "level") if k in attrs
        )
        note = (
            f" The study's attrs ({shown}) describe only the first study stacked, settings "
            f"{described}, not the others."
        )
    raise ValueError(
        f"the replicates come from {values.size} studies of different settings: {where}: "
        "studies stacked with xr.concat? Their settings (level, scenario, learner, loss, "
        "methods, options, truths or a method's code) differ, and coverage would be "
        f"reported as if they were one.{note} "
        "Summarise each study on its own; stack only studies of the same settings run with "
        "different random_state values"
    )


def _check_block_counts(study: xr.Dataset) -> None:
    """Refuse replicates of different numbers of CV blocks (padded with NaN by xr.concat)."""
    if "block_n" not in study.data_vars or "replicate" not in study["block_n"].dims:
        return
    counts = np.isfinite(study["block_n"].transpose("replicate", ...).values).sum(axis=1)
    values = np.unique(counts)
    if values.size > 1:
        where = ", ".join(_with_replicates(counts, study["replicate"].values, values))
        raise ValueError(
            f"the replicates differ in their number of CV blocks: {where}: studies of "
            "different scenarios stacked with xr.concat? A study keeps one scenario (its "
            "attrs are the first study's); summarise each on its own"
        )


def _with_replicates(per_replicate: np.ndarray, labels: np.ndarray, values: Any) -> list[str]:
    """``"value (replicates [first six labels] …)"`` for each value, in the order given."""
    out = []
    for value in values:
        has = per_replicate == value
        more = " …" if has.sum() > 6 else ""
        out.append(f"{value} (replicates {labels[has][:6].tolist()}{more})")
    return out
