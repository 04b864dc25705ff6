"""Attributes in a CSV header line: JSON, which has no inf or NaN, written and read back."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["decode_nonfinite", "encode_nonfinite", "has_nonfinite", "json_value"]


def json_value(value: Any) -> Any:
    """Attribute value in a JSON-serialisable form (numpy scalars and arrays to Python).

    A table read back from NetCDF holds list attributes (``loss_range``) as arrays.
    """
    if isinstance(value, np.ndarray):
        return value.tolist()
    return value.item() if isinstance(value, np.generic) else value


def has_nonfinite(value: Any) -> bool:
    """Whether the value, or an item of a list or tuple, is inf, -inf or NaN."""
    if isinstance(value, list | tuple):
        return any(has_nonfinite(v) for v in value)
    return isinstance(value, float) and not math.isfinite(value)


def encode_nonfinite(value: Any) -> Any:
    """Return the value with inf, -inf and NaN as strings (JSON has no such numbers)."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)  # "inf", "-inf", "nan"
    if isinstance(value, list | tuple):
        return [encode_nonfinite(v) for v in value]
    return value


def decode_nonfinite(value: Any) -> Any:
    """Undo :func:`encode_nonfinite` (files written before hold JSON's ``Infinity`` instead)."""
    if isinstance(value, str) and value in ("inf", "-inf", "nan"):
        return float(value)
    return [decode_nonfinite(v) for v in value] if isinstance(value, list) else value
