"""Numbers in, and the weights of a loss table's points: private to :mod:`bayescv.shift`."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

__all__ = ["real_array", "weights_at"]


def real_array(values: Any, name: str) -> np.ndarray:
    """`values` as a float64 array; a ValueError for complex or non-numeric input.

    Parameters
    ----------
    values : array-like
        Numbers.
    name : str
        What they are, for the message.

    Returns
    -------
    ndarray
        The values as float64.
    """
    arr = np.asarray(values)
    if arr.dtype.kind == "c":
        raise ValueError(f"{name} must be real, got complex values")
    try:
        return np.asarray(arr, dtype=float)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name} must be real numbers ({error})") from None


def weights_at(weights: Any, index: np.ndarray) -> np.ndarray:
    """Weights of a loss table's points, looked up by its ``index`` coord (row numbers).

    A DataArray with an ``index`` coord is matched by label; other weights are one per row
    of the original data, ``weights[i]`` the weight of row ``i``. A pandas Series is taken
    by position only when its index is the positions 0 … n − 1: with any other index
    (a frame's labels, or rows in another order) position and label disagree, and taking it
    by position gave points other points' weights, silently.

    Parameters
    ----------
    weights : array-like, pandas.Series or xarray.DataArray
        The weights.
    index : ndarray of int
        The table's ``index`` coord: the row of the data each loss belongs to.

    Returns
    -------
    ndarray
        The weight of each loss, in the shape of `index`.

    Raises
    ------
    ValueError
        For weights that do not cover the table's rows, or a Series whose index is not
        0 … n − 1.
    """
    if isinstance(weights, xr.DataArray) and "index" in weights.coords:
        if weights.ndim != 1:
            raise ValueError(f"weights must be 1-D, got dims {weights.dims}")
        labels = pd.Index(np.asarray(weights["index"].values))
        if not labels.is_unique:
            raise ValueError("the weights' index coord has duplicates")
        pos = labels.get_indexer(index.ravel())
        if (pos < 0).any():
            raise ValueError(
                f"{int((pos < 0).sum())} point(s) of the loss table have no weight "
                "(their index is not in the weights' index coord)"
            )
        return real_array(weights.values, "weights")[pos].reshape(index.shape)
    if isinstance(weights, pd.Series) and not weights.index.equals(pd.RangeIndex(len(weights))):
        head = ", ".join(str(v) for v in weights.index[:3])
        raise ValueError(
            f"weights is a pandas Series indexed [{head}, ...], not 0 to {len(weights) - 1}: "
            "a loss table's points are rows of the data, by position, and a Series of other "
            "labels would be matched by position, not by label; pass weights.to_numpy() if "
            "it is in the data's row order, or weights.reindex(X.index).to_numpy() (X the "
            "data the table was computed on) to match it by label"
        )
    w = real_array(weights.values if isinstance(weights, xr.DataArray) else weights, "weights")
    if w.ndim != 1:
        raise ValueError(
            f"with a loss table, weights must be 1-D (one per row of the data), got shape {w.shape}"
        )
    if index.max() + 1 != w.size or index.min() < 0:
        raise ValueError(
            f"mismatched lengths: the loss table indexes rows 0 to {int(index.max())} but there "
            f"are {w.size} weights (one per row of the original data; for weights of other "
            "rows, pass a DataArray with an 'index' coord, matched by label)"
        )
    return w[index]
