"""Which interval kind, and which methods, apply to a loss table."""

from __future__ import annotations

from typing import Any

import xarray as xr

from bayescv._names import did_you_mean
from bayescv.classical.estimators import ESTIMATORS
from bayescv.losses import effective_range, has_pair_blocks, is_binary, loss_range

__all__ = ["FEW_BLOCKS", "KINDS", "few_blocks_note", "pair_table_methods", "resolve_kind"]

KINDS = ("auto", "score", "normal", "t", "log")
#: Block counts at or below which the score interval's block-level rows under-covered
#: (measured at K = 3 and 5: ``benchmarks/results/small_k_quantile.md``).
FEW_BLOCKS = 5
#: The methods of ``cv_intervals`` whose variance is not built from the K block means.
_POINT_LEVEL = ("naive_points", "bayle_within", "bayle_all_pairs", "nadeau_bengio", "bootstrap")


def resolve_kind(kind: str, losses: xr.Dataset) -> str:
    """Return the interval kind to use for `losses`.

    ``"auto"`` is ``"score"`` for 0-1 tables, else ``"t"``: a block-level variance
    estimate rests on K block means, and with K = 3 or 5 the normal quantile under-covered
    by up to 30 points where t on K − 1 d.f. did not (``benchmarks/results/small_k_quantile.md``).

    Parameters
    ----------
    kind : str
        One of :data:`KINDS`.
    losses : xarray.Dataset
        A loss table or its block moments.

    Returns
    -------
    str

    Raises
    ------
    ValueError
        For an unknown kind, ``"log"`` on losses that can be negative, ``"score"`` on losses
        outside [0, 1].
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}{did_you_mean(kind, KINDS)}")
    if kind == "auto":
        return "score" if is_binary(losses) else "t"
    # A 0-1 table is in [0, 1] whether or not it declares a range (effective_range).
    if kind == "log" and effective_range(losses)[0] < 0:
        raise ValueError(
            "kind='log' is for losses that are at least 0; this table's loss range starts at "
            f"{loss_range(losses)[0]} (declare it with loss_range= if the losses are positive)"
        )
    if kind == "score":
        low, high = loss_range(losses)
        if not (low >= 0 and high <= 1) and not is_binary(losses):
            raise ValueError(
                "kind='score' is for losses in [0, 1] (0-1 or Brier losses); this table's "
                f"loss range is [{low}, {high}]"
            )
    return kind


def pair_table_methods(losses: xr.Dataset, methods: Any, has_boot: bool) -> Any:
    """Return the interval methods to use on `losses`, whose blocks may be pairs of points.

    ``from_elpd(..., blocks="pairs")`` (pointwise elpd of PSIS-LOO or WAIC, which have no
    folds) pairs consecutive points into blocks. Every block-level method would read those
    arbitrary pairs as folds, so on such a table the default and ``"all"`` are the methods
    that ignore blocks, ``naive_points`` (and ``bootstrap`` when a bootstrap table is given),
    and a block-level method named explicitly is refused. Other tables: `methods` unchanged.

    Parameters
    ----------
    losses : xarray.Dataset
        A loss table.
    methods : str, sequence of str or None
        The `methods` argument of :func:`bayescv.cv_intervals`.
    has_boot : bool
        Whether a bootstrap table was given.

    Returns
    -------
    str, list of str or None

    Raises
    ------
    ValueError
        For a block-level method named on a table of point pairs.
    """
    if not has_pair_blocks(losses):
        return methods
    if methods is None or (isinstance(methods, str) and methods == "all"):
        return ["naive_points", *(["bootstrap"] if has_boot else [])]
    names = [methods] if isinstance(methods, str) else list(methods)
    blockwise = [
        m for m in names if m != "naive_points" and (m in ESTIMATORS or m == "nadeau_bengio")
    ]
    if blockwise:
        raise ValueError(
            f"interval method(s) {blockwise} need CV folds, and this table's blocks are "
            "consecutive pairs of points (pointwise elpd, from_elpd(..., blocks='pairs')): "
            "only 'naive_points' applies; for pointwise elpd from K-fold CV pass the fold of "
            "every point, from_elpd(..., blocks=folds)"
        )
    return methods


def few_blocks_note(kind: str, n_blocks: int, names: Any, scheme: str = "random") -> str:
    """One line when score intervals of block-level methods rest on few blocks, else ``""``.

    The score interval keeps the normal quantile; with K ≤ :data:`FEW_BLOCKS` blocks its
    block-level rows under-covered (``naive_folds`` 71.0 % at K = 3 and 80.8 % at K = 5,
    nominal 95 %, for a logistic regression on 200 points in random K-fold CV), while
    ``nadeau_bengio``, a t procedure, did not (95.8 and 97.0 %). On a source table the line
    does not send the reader to ``nadeau_bengio``: it assumes random K-fold CV, and
    :func:`bayescv.cv_intervals` leaves it out there (flag ``random_kfold_only``).

    Parameters
    ----------
    kind : str
        The interval kind used.
    n_blocks : int
        The number of blocks K.
    names : sequence of str
        The methods of the result.
    scheme : {"random", "source"}, default "random"
        The CV scheme of the table.

    Returns
    -------
    str

    Examples
    --------
    >>> few_blocks_note("score", 5, ["naive_points", "naive_folds"])[:57]
    'with K = 5 blocks, the score intervals of naive_folds use'
    >>> few_blocks_note("t", 5, ["naive_folds"]), few_blocks_note("score", 10, ["naive_folds"])
    ('', '')
    >>> few_blocks_note("score", 4, ["theta_A"], scheme="source").endswith("not to sources")
    True
    """
    block_level = [str(name) for name in names if str(name) not in _POINT_LEVEL]
    if kind != "score" or n_blocks > FEW_BLOCKS or not block_level:
        return ""
    measured = (
        f"with K = {n_blocks} blocks, the score intervals of {', '.join(block_level)} use a "
        "normal quantile, and at K = 3 and 5 most such rows under-covered (naive_folds 71 "
        "and 81 % at nominal 95 %; docs, 'Few blocks: why t'); nadeau_bengio, a t procedure, "
        "held up (96 and 97 %)"
    )
    if scheme == "source":
        return measured + " in random K-fold CV, but it applies to random folds, not to sources"
    return measured
