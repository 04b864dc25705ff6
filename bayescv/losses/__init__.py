"""The loss table: every per-point CV loss, with the block, source and row it came from.

A loss table is an :class:`xarray.Dataset` with

* dimension ``obs`` (one test point of one CV run) and, for several runs, a leading
  ``replicate`` dimension;
* data variable ``loss`` (float64, finite);
* coordinates ``block`` (the fold, or the held-out source, that tested the point),
  ``index`` (the point's row in the input data) and, when the data have sources,
  ``source``; all three have the same dimensions as ``loss``;
* attributes ``scheme`` (``"random"`` or ``"source"``), ``loss_name``, ``estimator``,
  ``bayescv_version``, ``created``, ``seed``, ``loss_range`` (``[low, high]``, the values
  the loss can take; :func:`loss_range`) and, with a ``replicate`` dimension,
  ``replicate_kind`` (``"repeat"``, ``"bootstrap"`` or ``"independent"``).

Within each replicate the points are ordered by block label, then as given, so that each
block is one contiguous run: :func:`bayescv.moments.block_moments` relies on it for speed.
Unequal block sizes are allowed everywhere; :func:`pivot` is the one view that needs them equal.

Besides :func:`from_arrays`, :func:`from_frame` and the CV runners of :mod:`bayescv.cv`,
tables come from results you already have: :func:`from_predictions` (out-of-fold predictions
of ``cross_val_predict`` and their folds; :func:`bayescv.cv.losses_from_predictions` takes
loss names) and :func:`from_elpd` (ArviZ's pointwise PSIS-LOO or WAIC).

Every builder validates: NaN, infinite or complex losses, missing (``None`` or NaN) labels,
blocks with fewer than two points, fewer than two blocks, mismatched lengths, duplicated
columns and empty input raise a :class:`ValueError` that names the problem; a missing column,
runs without ``replicate_kind`` or ``replicate_kind`` for one run raise its subclass
:class:`TableFormatError`, whose attributes say which.
"""

from bayescv.losses._builders import from_predictions
from bayescv.losses._differences import loss_differences
from bayescv.losses._elpd import from_elpd, has_pair_blocks
from bayescv.losses._errors import TableFormatError
from bayescv.losses._frame import from_frame, to_frame
from bayescv.losses._io import read_csv, read_netcdf, read_table, to_csv, to_netcdf
from bayescv.losses._range import effective_range, is_binary, loss_range
from bayescv.losses._schema import (
    REPLICATE_KINDS,
    SCHEMES,
    from_arrays,
    pivot,
    stack_replicates,
    validate,
)

__all__ = [
    "REPLICATE_KINDS",
    "SCHEMES",
    "TableFormatError",
    "effective_range",
    "from_arrays",
    "from_elpd",
    "from_frame",
    "from_predictions",
    "has_pair_blocks",
    "is_binary",
    "loss_differences",
    "loss_range",
    "pivot",
    "read_csv",
    "read_netcdf",
    "read_table",
    "stack_replicates",
    "to_csv",
    "to_frame",
    "to_netcdf",
    "validate",
]
