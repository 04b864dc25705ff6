"""Figures drawn from bayescv's xarray results alone.

This module imports no other part of the package, so any result, fresh or read back from
disk, can be plotted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import xarray as xr

__all__ = ["plot_block_losses"]


def _group_summary(table: xr.Dataset, by: str) -> pd.DataFrame:
    """Mean, standard error and count of the losses per `by` label (first replicate only)."""
    if by not in table.coords:
        raise ValueError(f"the table has no {by!r} coordinate; it has {sorted(table.coords)}")
    sel = table.isel(replicate=0) if "replicate" in table.dims else table
    frame = pd.DataFrame({by: sel[by].values, "loss": sel["loss"].values})
    out = frame.groupby(by)["loss"].agg(["mean", "std", "count"])
    out["se"] = out["std"] / np.sqrt(out["count"])
    return out


def plot_block_losses(
    tables: xr.Dataset | Mapping[str, xr.Dataset],
    *,
    by: str = "block",
    ax: Any = None,
) -> Any:
    """Mean loss per block or per source, with ±1 standard-error bars.

    Labels are sorted by the mean loss of the first table; a dashed line marks each table's
    overall CV error. For tables with a ``replicate`` dimension, the first replicate is shown.

    Parameters
    ----------
    tables : xarray.Dataset or mapping of str to xarray.Dataset
        One loss table, or several (e.g. ``{"CVS": ..., "CVR": ...}``) drawn side by side.
    by : {"block", "source"}, default "block"
        Coordinate to group the losses by.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; a new figure otherwise.

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on.
    """
    if isinstance(tables, xr.Dataset):
        tables = {tables.attrs.get("scheme", "losses"): tables}
    if not tables:
        raise ValueError("no tables to plot")
    summaries = {name: _group_summary(t, by) for name, t in tables.items()}
    order = next(iter(summaries.values())).sort_values("mean").index
    if ax is None:
        _, ax = plt.subplots(figsize=(max(6.0, 0.12 * len(order) + 3), 4), layout="constrained")
    x = np.arange(len(order))
    width = 0.8 / len(summaries)
    for i, (name, summary) in enumerate(summaries.items()):
        s = summary.reindex(order)
        offset = (i - (len(summaries) - 1) / 2) * width
        line = ax.errorbar(
            x + offset, s["mean"], yerr=s["se"], fmt="o", ms=3, capsize=0, lw=0.8, label=name
        )
        overall = np.average(summary["mean"], weights=summary["count"])
        ax.axhline(overall, ls="--", lw=0.8, color=line[0].get_color())
    loss_name = next(iter(tables.values())).attrs.get("loss_name", "loss")
    ax.set_xlabel(f"{by} (sorted by mean loss)")
    ax.set_ylabel(f"mean {loss_name} loss ± 1 SE")
    if len(order) <= 30:
        ax.set_xticks(x, [str(v) for v in order], rotation=90)
    else:
        ax.set_xticks([])
    ax.legend(title="dashed: overall CV error", fontsize="small")
    return ax
