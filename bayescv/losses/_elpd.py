"""Loss tables from ArviZ's pointwise expected log predictive density (PSIS-LOO or WAIC).

:func:`from_elpd` turns pointwise elpd into a table of negative log predictive densities;
:func:`has_pair_blocks` tells such a table, whose blocks are pairs of points, from one whose
blocks are folds. Both are re-exported by :mod:`bayescv.losses`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from bayescv.losses._schema import from_arrays

__all__ = ["from_elpd", "has_pair_blocks"]

_ELPD_SCALES = {"log": 1.0, "negative_log": -1.0, "deviance": -2.0}
_ELPD_METHODS = {"loo": "PSIS-LOO", "waic": "WAIC"}


def from_elpd(elpd_data: Any, *, blocks: Any = None) -> xr.Dataset:
    """Build a loss table of negative log predictive densities from pointwise ELPD values.

    loss_i = −elpd_i, the negative log predictive density of point i (unbounded both ways:
    a density above 1 gives a negative loss), so that the table's mean is −elpd / N and
    every interval method of the package applies. ArviZ reports the *sum* elpd over the N
    points and its standard error ``se = sqrt(N · var(elpd_i))`` (variance with ddof 0);
    this table's estimate is the *mean*, so N times the naive standard error of
    :func:`bayescv.classical.cv_intervals` (method ``"naive_points"``, ddof 1) is ArviZ's
    ``se`` up to the factor sqrt(N / (N − 1)): ``se_ArviZ = sqrt(N (N − 1)) · se_naive``.
    Likewise, for two models on the same points, :func:`bayescv.losses.loss_differences`
    gives a table whose naive standard error relates so to the ``dse`` of
    :func:`arviz.compare` (Vehtari, Gelman & Gabry 2017).

    Parameters
    ----------
    elpd_data : arviz.ELPDData or array-like of shape (n_points,)
        ``az.loo(idata, pointwise=True)`` or ``az.waic(idata, pointwise=True)`` (the
        pointwise values ``loo_i`` or ``waic_i`` on its ``scale``, converted to the log
        scale; observations with several dimensions are flattened in C order), or pointwise
        elpd values on the log scale that you computed yourself, for example by K-fold CV
        (ArviZ 0.x has no K-fold helper).
    blocks : array-like of shape (n_points,) or "pairs"
        Block label of each point: the fold of each point for pointwise elpd from K-fold CV.
        PSIS-LOO and WAIC have no folds (LOO holds out every point alone, which a loss table
        cannot hold: every block needs at least two points), so they need it said:
        ``"pairs"`` pairs consecutive points into blocks ``0, 0, 1, 1, ...`` (the last block
        takes three points when N is odd), and the ``blocks`` attribute records it. Only
        methods that ignore blocks are meaningful on such a table, ``"naive_points"`` above
        all; fold-level methods (``naive_folds``, the θ estimators, Bayle's and
        Nadeau–Bengio's intervals) would read the arbitrary pairs as folds, which is why this
        is not a silent default.

    Returns
    -------
    xarray.Dataset
        A loss table with dim ``obs`` (``index`` is the point's position), scheme
        ``"random"``, ``loss_name`` ``"neg_elpd_loo"``, ``"neg_elpd_waic"`` or
        ``"neg_elpd"``, ``loss_range`` ``[-inf, inf]`` and attributes ``elpd_method``,
        ``blocks`` (prose), ``block_kind`` (``"point_pairs"`` with ``blocks="pairs"``, else
        ``"given"``) and, from an ELPDData, ``n_samples``, ``elpd_warning`` (ArviZ's warning
        flag, 0 or 1) and ``pareto_k_max`` (PSIS-LOO).

    Raises
    ------
    ValueError
        When `elpd_data` has no pointwise values (call ArviZ with ``pointwise=True``), an
        unknown ``scale``, NaN or infinite values, fewer than four points with
        ``blocks="pairs"``, `blocks` of the wrong length, or a bad loss table
        (:func:`bayescv.losses.validate`: every block needs at least two points).

    References
    ----------
    Vehtari, A., Gelman, A. & Gabry, J. (2017). Practical Bayesian model evaluation using
    leave-one-out cross-validation and WAIC. Statistics and Computing 27(5), 1413–1432.
    doi:10.1007/s11222-016-9696-4

    Examples
    --------
    Pointwise elpd values of your own K-fold CV, with the fold of each point:

    >>> import numpy as np
    >>> elpd_i = np.array([-1.2, -0.8, -1.0, -2.1, -0.9, -1.4])
    >>> table = from_elpd(elpd_i, blocks=[0, 0, 1, 1, 2, 2])
    >>> table["loss"].values.tolist(), table.attrs["loss_name"]
    ([1.2, 0.8, 1.0, 2.1, 0.9, 1.4], 'neg_elpd')

    With ArviZ's PSIS-LOO, for point-level methods:
    ``from_elpd(az.loo(idata, pointwise=True), blocks="pairs")``.
    """
    attrs: dict[str, Any] = {}
    kind = _elpd_kind(elpd_data)
    if kind is None:
        values = np.asarray(getattr(elpd_data, "values", elpd_data))
        method, name = "pointwise elpd", "neg_elpd"
    else:
        scale = str(elpd_data["scale"]) if "scale" in elpd_data.index else "log"
        if scale not in _ELPD_SCALES:
            raise ValueError(f"unknown ELPD scale {scale!r}; expected one of {list(_ELPD_SCALES)}")
        pointwise = elpd_data[f"{kind}_i"]
        values = np.asarray(getattr(pointwise, "values", pointwise)) / _ELPD_SCALES[scale]
        method, name = _ELPD_METHODS[kind], f"neg_elpd_{kind}"
        attrs["elpd_scale"] = scale
        if "n_samples" in elpd_data.index:
            attrs["n_samples"] = int(elpd_data["n_samples"])
        if "warning" in elpd_data.index:
            attrs["elpd_warning"] = int(bool(elpd_data["warning"]))
        if "pareto_k" in elpd_data.index:
            k = np.asarray(getattr(elpd_data["pareto_k"], "values", elpd_data["pareto_k"]))
            attrs["pareto_k_max"] = float(np.max(k))
    if values.dtype.kind not in "iuf":
        raise ValueError(f"pointwise elpd values must be real numbers, got dtype {values.dtype}")
    values = values.astype(float).ravel()
    n = values.size
    if n == 0:
        raise ValueError("empty input: no pointwise elpd values")
    bad = ~np.isfinite(values)
    if bad.any():
        raise ValueError(
            f"pointwise elpd contains {int(bad.sum())} NaN or infinite value(s), the first at "
            f"point {int(np.flatnonzero(bad)[0])}"
        )
    if blocks is None:
        raise ValueError(
            "say which points share a block: blocks=<the fold of each point> for pointwise "
            "elpd from K-fold CV, or blocks='pairs' (PSIS-LOO, WAIC: no folds) to pair "
            "consecutive points, for point-level methods such as naive_points only"
        )
    if isinstance(blocks, str) and blocks != "pairs":
        raise ValueError(
            f"blocks must be 'pairs' or the block label of each point, got {blocks!r}"
        )
    if isinstance(blocks, str):
        if n < 4:
            raise ValueError(
                f"{n} point(s): pairing points into blocks needs at least four (two blocks "
                "of two); pass blocks"
            )
        block = np.minimum(np.arange(n) // 2, n // 2 - 1)
        attrs["blocks"] = (
            "consecutive pairs of points, not folds: only point-level methods such as "
            "naive_points are meaningful"
        )
        attrs["block_kind"] = "point_pairs"  # read by compare_learners; `blocks` is prose
    else:
        block = np.asarray(blocks)
        if block.ndim != 1 or len(block) != n:
            raise ValueError(
                f"mismatched lengths: {n} pointwise elpd values but blocks has shape {block.shape}"
            )
        attrs["blocks"] = "given"
        attrs["block_kind"] = "given"
    return from_arrays(
        -values,
        block,
        scheme="random",
        loss_name=name,
        loss_range=(-np.inf, np.inf),
        attrs={"elpd_method": method, **attrs},
    )


def _elpd_kind(elpd_data: Any) -> str | None:
    """``"loo"`` or ``"waic"`` for an ArviZ ELPDData (a pandas Series), None for plain values."""
    index = getattr(elpd_data, "index", None)
    if index is None or not hasattr(elpd_data, "dtype") or getattr(elpd_data, "ndim", 0) != 1:
        return None
    keys = [str(k) for k in index]
    found = [k for k in ("loo", "waic") if f"elpd_{k}" in keys]
    if not found:
        return None
    kind = found[0]
    if f"{kind}_i" not in keys:
        raise ValueError(
            f"this ELPDData has no pointwise values ({kind}_i): compute it with "
            f"az.{kind}(idata, pointwise=True)"
        )
    return kind


def has_pair_blocks(table: xr.Dataset) -> bool:
    """Whether a table's blocks are consecutive pairs of points, not CV folds.

    :func:`from_elpd` with ``blocks="pairs"`` (pointwise elpd of PSIS-LOO or WAIC, which have
    no folds) pairs consecutive points so that the table is valid; a method that reads the
    blocks as folds must refuse such a table.

    Parameters
    ----------
    table : xarray.Dataset
        A loss table.

    Returns
    -------
    bool
        From the ``block_kind`` attribute; for a table stored before that attribute existed,
        from the prose of its ``blocks`` attribute.

    Examples
    --------
    >>> import numpy as np
    >>> from bayescv.losses import from_arrays, from_elpd
    >>> has_pair_blocks(from_elpd(np.array([-1.0, -0.5, -2.0, -0.3]), blocks="pairs"))
    True
    >>> has_pair_blocks(from_arrays([0.1, 0.4, 0.3, 0.2], [0, 0, 1, 1]))
    False
    """
    if "block_kind" in table.attrs:
        return table.attrs["block_kind"] == "point_pairs"
    return str(table.attrs.get("blocks", "")).startswith("consecutive pairs")
