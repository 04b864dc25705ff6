"""Checks of the tables :func:`bayescv.classical.cv_intervals` is given."""

from __future__ import annotations

import numpy as np
import xarray as xr

from bayescv.classical._block_stats import block_stats
from bayescv.losses._differences import check_bootstrap_of

__all__ = ["bootstrap_mu", "check_table"]


def check_table(table: object, name: str) -> None:
    """TypeError, naming the builders, unless `table` is an xarray.Dataset."""
    if not isinstance(table, xr.Dataset):
        kind = type(table).__name__
        hint = "bayescv.from_frame(frame, loss=..., block=..., source=...)"
        if not hasattr(table, "columns"):
            hint = "bayescv.from_arrays(loss, block, source=...)"
        raise TypeError(
            f"{name} must be a loss table (xarray.Dataset), got {kind}; build one with {hint}"
        )


def bootstrap_mu(losses: xr.Dataset, bootstrap: xr.Dataset | None) -> np.ndarray:
    """μ̂ of every replicate of `bootstrap`, checked to be replicates of the CV of `losses`."""
    if bootstrap is not None:
        check_table(bootstrap, "bootstrap")
    if bootstrap is None or "replicate" not in bootstrap.dims:
        raise ValueError("bootstrap= must be a loss table with a replicate dim")
    if bootstrap.attrs.get("replicate_kind") != "bootstrap":
        raise ValueError(
            "bootstrap= must have replicate_kind='bootstrap', got "
            f"{bootstrap.attrs.get('replicate_kind')!r}"
        )
    if bootstrap.sizes["replicate"] < 2:
        raise ValueError("the bootstrap table needs at least 2 replicates")
    if "replicate" in losses.dims and losses.attrs.get("replicate_kind") == "independent":
        raise ValueError("the bootstrap method applies to one observed table, not a stack")
    check_bootstrap_of(losses, bootstrap)
    blocks = [np.unique(t["block"].values).tolist() for t in (losses, bootstrap)]
    if blocks[0] != blocks[1]:
        raise ValueError(
            f"the bootstrap table has blocks {blocks[1][:8]}, the observed {blocks[0][:8]}: "
            "bootstrap the same CV of the same data"
        )
    return block_stats(bootstrap).mu_hat
