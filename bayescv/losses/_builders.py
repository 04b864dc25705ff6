"""Loss tables from results users already have: CV predictions and pointwise ELPD.

:func:`from_predictions` turns :func:`sklearn.model_selection.cross_val_predict`-style
predictions (one per sample) and the splits that made them into the table
:func:`bayescv.cv.cross_val_losses` would have built; :func:`from_elpd` turns ArviZ's
pointwise expected log predictive density (PSIS-LOO or WAIC) into a table of negative log
predictive densities. Both are re-exported by :mod:`bayescv.losses`.

This module sits below :mod:`bayescv.cv` and knows none of its losses: :func:`from_predictions`
takes any callable ``loss(y_true, y_pred) -> per-point array``, and
:func:`bayescv.cv.losses_from_predictions` is the same function with losses chosen by name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import xarray as xr
from sklearn.utils.metadata_routing import get_routing_for_object

from bayescv.losses._schema import from_arrays

__all__ = ["from_elpd", "from_predictions", "has_pair_blocks"]

#: ArviZ's ``scale`` of an ELPDData and the factor from the log scale to it.
_ELPD_SCALES = {"log": 1.0, "negative_log": -1.0, "deviance": -2.0}
_ELPD_METHODS = {"loo": "PSIS-LOO", "waic": "WAIC"}


def from_predictions(
    y_true: Any,
    y_pred: Any,
    folds: Any,
    *,
    loss: Callable[..., Any],
    groups: Any = None,
    X: Any = None,
    classes: Any = None,
    loss_name: str | None = None,
    loss_range: Any = None,
    attrs: Mapping[str, Any] | None = None,
) -> xr.Dataset:
    """Build a loss table from out-of-fold predictions and the splits that produced them.

    The table is the one :func:`bayescv.cv.cross_val_losses` builds when it runs the same
    folds: the same losses, ``block`` labels (the fold number in the order of `folds`, or the
    held-out source when every test fold holds exactly one source), ``index`` and
    ``source``. For losses chosen by name (``"squared"``, ``"log_loss"``, ...) use
    :func:`bayescv.cv.losses_from_predictions`, which calls this function.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,) or (n_samples, n_outputs)
        True targets.
    y_pred : array-like of shape (n_samples,) or (n_samples, n_columns)
        One out-of-fold prediction per sample, in the rows of `y_true`, as
        :func:`~sklearn.model_selection.cross_val_predict` returns them: class labels,
        values, probabilities of shape (n_samples, n_classes) or decision values, whatever
        `loss` needs.
    folds : splitter, list of (train, test) or array-like of shape (n_samples,)
        The splits that produced `y_pred`, whose test sets must partition the samples (one
        run of CV, as ``cross_val_predict`` requires): a scikit-learn splitter (called as
        ``folds.split(X, y_true, groups)``, `groups` given only if it uses them; set its
        ``random_state`` to get the folds ``cross_val_predict`` used), an explicit list of
        (train, test) index pairs, or the fold label of every sample (which become the
        ``block`` labels).
    loss : callable
        ``loss(y_true, y_pred) -> ndarray of shape (n_samples,)``, the loss of each point.
        A :class:`bayescv.cv.Loss` works too (its name, range and, for losses of
        probabilities, `classes` are used).
    groups : array-like of shape (n_samples,), optional
        Source label of each sample, recorded as the ``source`` coordinate and given to a
        splitter that uses groups.
    X : array-like of shape (n_samples, n_features), optional
        Features, only for a splitter that looks at them (none of scikit-learn's does);
        otherwise a placeholder of the right length is passed.
    classes : array-like, optional
        The class of each column of a probability `y_pred`, for a :class:`bayescv.cv.Loss`
        that needs them. Default ``np.unique(y_true)``: ``cross_val_predict`` orders the
        columns so.
    loss_name : str, optional
        Recorded as ``loss_name``. Default: the loss's ``name`` or ``__name__``.
    loss_range : (float, float), optional
        The values the loss can take (:func:`bayescv.losses.loss_range`). Default: the
        loss's ``range`` if it has one, else the range of a built-in `loss_name`.
    attrs : mapping, optional
        Further attributes, for example ``{"estimator": repr(model)}``.

    Returns
    -------
    xarray.Dataset
        A loss table (:mod:`bayescv.losses`) with dim ``obs``; attributes ``cv`` (the
        splits) and ``n_splits`` as :func:`bayescv.cv.cross_val_losses` records them.

    Raises
    ------
    ValueError
        On mismatched lengths, NaN or infinite predictions or targets, a loss name (use
        :func:`bayescv.cv.losses_from_predictions`), a loss of the wrong shape or a NaN or
        infinite loss, test folds that do not partition the samples (a sample in no test
        fold or in two), a fold whose training and test sets overlap, or a bad loss table
        (:func:`bayescv.losses.validate`).
    TypeError
        If `loss` is not callable.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_regression
    >>> from sklearn.linear_model import Ridge
    >>> from sklearn.model_selection import KFold, cross_val_predict
    >>> X, y = make_regression(n_samples=40, n_features=3, noise=1.0, random_state=0)
    >>> cv = KFold(4, shuffle=True, random_state=0)
    >>> pred = cross_val_predict(Ridge(), X, y, cv=cv)
    >>> def squared(y_true, y_pred):
    ...     return (y_true - y_pred) ** 2
    >>> table = from_predictions(y, pred, cv, loss=squared, loss_range=(0, np.inf))
    >>> table.sizes["obs"], np.unique(table["block"]).tolist()
    (40, [0, 1, 2, 3])
    """
    y_true = np.asarray(y_true)
    y_pred = np.asarray(y_pred)
    if y_true.ndim == 0 or y_true.size == 0:
        raise ValueError("empty input: y_true needs one target per sample")
    n = len(y_true)
    if y_pred.ndim == 0 or len(y_pred) != n:
        raise ValueError(
            f"mismatched lengths: y_true has {n} samples but y_pred has shape {y_pred.shape}; "
            "give one out-of-fold prediction per sample"
        )
    _check_finite(y_pred, "y_pred")
    _check_finite(y_true, "y_true")
    source = None if groups is None else np.asarray(groups)
    if source is not None and (source.ndim != 1 or len(source) != n):
        raise ValueError(
            f"mismatched lengths: y_true has {n} samples but groups has shape {source.shape}"
        )
    values = _pointwise(loss, y_true, y_pred, classes)

    if hasattr(folds, "split"):
        splits = _split(folds, X, y_true, source, n)
        desc = repr(folds)
    else:
        labels, splits = _explicit(folds, n)
        desc = "fold labels" if labels is not None else "explicit (train, test) list"
    if splits is None:  # fold labels: the blocks as given
        order, block = np.arange(n), labels
        n_splits = int(np.unique(labels).size)
    else:
        tests = _check_partition(splits, n, desc)
        order = np.concatenate(tests)
        by_source = source is not None and all(np.unique(source[t]).size == 1 for t in tests)
        block = np.concatenate([
            np.full(t.size, source[t[0]] if by_source else k) for k, t in enumerate(tests)
        ])  # fmt: skip
        n_splits = len(tests)
    if loss_range is None and hasattr(loss, "range"):
        loss_range = loss.range
    return from_arrays(
        values[order],
        block,
        source=None if source is None else source[order],
        index=order,
        loss_name=loss_name or getattr(loss, "name", None) or getattr(loss, "__name__", "custom"),
        loss_range=loss_range,
        attrs={"cv": desc, "n_splits": n_splits, **(attrs or {})},
    )


def _check_finite(values: np.ndarray, name: str) -> None:
    """Refuse NaN or infinite numbers, naming the first row that holds one."""
    if values.dtype.kind not in "fc":
        return
    bad = ~np.isfinite(values.reshape(len(values), -1)).all(axis=1)
    if bad.any():
        raise ValueError(
            f"{name} contains NaN or infinite values in {int(bad.sum())} sample(s), the first "
            f"at row {int(np.flatnonzero(bad)[0])}"
        )


def _pointwise(loss: Any, y_true: np.ndarray, y_pred: np.ndarray, classes: Any) -> np.ndarray:
    """Return the loss of every sample, checked for shape and finiteness."""
    if isinstance(loss, str):
        raise ValueError(
            f"loss {loss!r} is a name: bayescv.losses.from_predictions takes a callable "
            "loss(y_true, y_pred); bayescv.cv.losses_from_predictions takes the names"
        )
    if not callable(loss):
        raise TypeError(f"loss must be a callable loss(y_true, y_pred), not {type(loss).__name__}")
    if getattr(loss, "needs_classes", False):
        values = loss(y_true, y_pred, np.unique(y_true) if classes is None else classes)
    else:
        values = loss(y_true, y_pred)
    values = np.asarray(values, dtype=float)
    n = len(y_true)
    name = getattr(loss, "name", None) or getattr(loss, "__name__", "custom")
    if values.shape != (n,):
        raise ValueError(
            f"loss {name!r} returned shape {values.shape}; a per-point loss returns one value "
            f"per sample, shape ({n},)"
        )
    bad = ~np.isfinite(values)
    if bad.any():
        hint = (
            " (a log loss is infinite where the true class got probability 0)"
            if np.isposinf(values).any()
            else ""
        )
        raise ValueError(
            f"loss {name!r} is NaN or infinite for {int(bad.sum())} sample(s), the first at row "
            f"{int(np.flatnonzero(bad)[0])}{hint}"
        )
    return values


def _split(splitter: Any, X: Any, y: np.ndarray, groups: Any, n: int) -> list[tuple[Any, Any]]:
    """Call ``splitter.split``, giving `groups` only if it uses them (scikit-learn warns otherwise)."""
    consumes = not hasattr(splitter, "get_metadata_routing") or get_routing_for_object(
        splitter
    ).consumes("split", ["groups"])
    features = np.zeros((n, 1)) if X is None else X
    return list(splitter.split(features, y, groups if consumes else None))


def _depth(value: Any) -> int:
    """Nesting depth along first elements: 1 for a list of labels, 3 for (train, test) pairs."""
    depth = 0
    while isinstance(value, np.ndarray | Sequence) and not isinstance(value, str | bytes):
        if isinstance(value, np.ndarray) and value.ndim == 0:
            break
        depth += 1
        if len(value) == 0:
            break
        value = value[0]
    return depth


def _explicit(folds: Any, n: int) -> tuple[np.ndarray | None, list[tuple[Any, Any]] | None]:
    """(fold labels, None) for an array of labels; (None, pairs) for a list of (train, test)."""
    if not isinstance(folds, np.ndarray | Sequence) or isinstance(folds, str | bytes):
        if hasattr(folds, "__iter__") and not isinstance(folds, str | bytes):
            folds = list(folds)  # a generator of (train, test), or a pandas Series of labels
        else:
            raise ValueError(
                "folds must be a splitter, a list of (train, test) index pairs or the fold "
                f"label of every sample, got {type(folds).__name__}"
            )
    depth = _depth(folds)
    if depth == 1:
        labels = np.asarray(folds)
        if labels.ndim != 1 or len(labels) != n:
            raise ValueError(
                f"mismatched lengths: y_true has {n} samples but the fold labels have shape "
                f"{labels.shape}"
            )
        return labels, None
    if depth == 3:
        return None, list(folds)
    if depth >= 4:
        raise ValueError(
            "folds looks like a list of runs (each a list of (train, test)); out-of-fold "
            "predictions come from one run, whose test sets partition the samples: build one "
            "table per run and stack them with bayescv.losses.stack_replicates"
        )
    raise ValueError(
        "folds must be a splitter, a list of (train, test) index pairs or the fold label of "
        "every sample"
    )


def _check_partition(splits: list[tuple[Any, Any]], n: int, desc: str) -> list[np.ndarray]:
    """Return the test sets as int arrays; refuse ones that do not partition ``range(n)``."""
    tests, trains = [], []
    for k, pair in enumerate(splits):
        try:
            train, test = pair
            trains.append(np.asarray(train, dtype=np.int64).ravel())
            tests.append(np.asarray(test, dtype=np.int64).ravel())
        except (TypeError, ValueError) as error:
            raise ValueError(
                f"fold {k} of {desc} is not a (train, test) pair of index arrays ({error})"
            ) from None
    if len(tests) < 2:
        raise ValueError(f"CV needs at least two folds, got {len(tests)} from {desc}")
    tested = np.concatenate(tests)
    if tested.size and (tested.min() < 0 or tested.max() >= n):
        raise ValueError(f"test indices of {desc} out of range for {n} samples")
    counts = np.bincount(tested, minlength=n)
    never, twice = np.flatnonzero(counts == 0), np.flatnonzero(counts > 1)
    if never.size or twice.size:
        parts = []
        if never.size:
            parts.append(f"{never.size} sample(s) in no test fold (the first, row {never[0]})")
        if twice.size:
            parts.append(f"{twice.size} in several test folds (the first, row {twice[0]})")
        raise ValueError(
            f"the test folds of {desc} do not partition the samples: {' and '.join(parts)}; "
            "out-of-fold predictions need each sample tested exactly once"
        )
    for k, (train, test) in enumerate(zip(trains, tests, strict=True)):
        if np.isin(test, train).any():
            raise ValueError(f"fold {k} of {desc}: training and test sets overlap")
    return tests


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
    if isinstance(blocks, str) and blocks == "pairs":
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
    """
    if "block_kind" in table.attrs:
        return table.attrs["block_kind"] == "point_pairs"
    return str(table.attrs.get("blocks", "")).startswith("consecutive pairs")
