"""Fold-score tables from scikit-learn's ``cross_validate``, long DataFrames and loss tables."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayescv.fold_scores._inputs import (
    check_indices_everywhere,
    cross_validate_dicts,
    numeric_column,
    one_scoring,
    score_key,
)
from bayescv.fold_scores._scorers import is_scorer_name
from bayescv.fold_scores._table import fold_table
from bayescv.losses import effective_range, has_pair_blocks, validate

__all__ = ["from_cross_validate", "from_long_frame", "from_loss_tables"]


def from_cross_validate(
    results: Mapping[str, Mapping[str, Any]],
    *,
    scoring: str | None = None,
    runs: int | None = None,
    greater_is_better: bool = True,
    score_range: Sequence[float] | None = None,
    scheme: str = "random",
) -> xr.Dataset:
    """Build a fold-score table from :func:`sklearn.model_selection.cross_validate` outputs.

    Parameters
    ----------
    results : mapping
        ``{learner name: cross_validate(...) result}``, every learner run on the same splits;
        a result may also be ``pandas.DataFrame(cross_validate(...))`` (one row per fold,
        read in the order of its index, the fold numbers 0 … K−1). With
        ``return_indices=True`` (scikit-learn ≥ 1.3) the fold sizes are read from the
        result's ``indices``, and the learners' test folds checked to be the same; otherwise
        the sizes are taken as equal. Give the indices for every learner or for none.
    scoring : str, optional
        Which score, and its name: the result's ``test_<scoring>`` for several scorers
        (``cross_validate(..., scoring=["accuracy", "f1"])``). For one scorer, whose score
        ``cross_validate`` names ``test_score`` whatever it is, a scikit-learn scorer name
        (``"accuracy"``, ``"neg_log_loss"``) says which metric ``test_score`` holds: the
        table gets its name, its direction and its range (accuracy in [0, 1]), as from
        the key of several scorers. Default: ``test_score``, named ``"score"``, unbounded
        unless `score_range` says.
    runs : int, optional
        Repetitions of K-fold CV in the results (as a repeated splitter yields them). Default:
        read from the ``indices`` when the results have them (R runs whose test sets each
        partition the data, every point tested R times), else 1. **Without**
        ``return_indices=True``, pass it for a repeated splitter (``RepeatedKFold``,
        ``RepeatedStratifiedKFold``): read as one run of R·K folds, the results would give
        intervals far too narrow. Results without indices cannot say, so when their J folds
        are more than 10 and could be R ≥ 2 runs of K ≥ 2 folds (J not prime; RepeatedKFold's
        default gives 50) and `runs` is not given, a ``UserWarning`` says that they are read
        as one run; ``runs=1`` says so and silences it. One run of 10 folds or fewer, the
        usual ``cv=5`` or ``cv=10``, is read without a warning.
    greater_is_better : bool, default True
        scikit-learn's scorers all return greater-is-better values (errors come negated);
        pass False only for a custom scorer that does not (refused with `scoring` a
        scikit-learn scorer name).
    score_range : (float, float), optional
        The values a custom scorer can take (see :func:`fold_table`); a scikit-learn
        scorer's range is known.
    scheme : {"random", "source"}, default "random"
        ``"source"`` when the folds held out whole groups (``cv=LeaveOneGroupOut()`` or
        ``GroupKFold`` with ``groups=``): the fold table records it (``attrs["scheme"]``), and
        :func:`bayescv.compare_learners` then targets ``expected_cv`` and runs
        ``correlated_t`` and ``nadeau_bengio``, built for random K-fold CV, only when named,
        flagged ``random_kfold_only``.

    Returns
    -------
    xarray.Dataset
        The fold-score table (see the module docs).

    Raises
    ------
    ValueError
        When a result is not a ``cross_validate`` dict or lacks the score, `scoring` names
        several scorers, or names no scikit-learn scorer for a single scorer's
        ``test_score``, a score is NaN (a
        failed fit), the learners' test folds differ, some results have ``indices`` and
        others not, a DataFrame's index is not the fold numbers, `runs` contradicts the results'
        indices, every point is tested R > 1 times but not in R consecutive partitions (folds
        interleaved across runs; `runs` not given), or as :func:`fold_table`.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.model_selection import cross_validate
    >>> from sklearn.neighbors import KNeighborsClassifier
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> res = {name: cross_validate(est, X, y, cv=5, return_indices=True)
    ...        for name, est in [("knn", KNeighborsClassifier()),
    ...                          ("tree", DecisionTreeClassifier(random_state=0))]}
    >>> table = from_cross_validate(res)
    >>> table.attrs["sizes"], table["n_test"].values.ravel().tolist()
    ('known', [30.0, 30.0, 30.0, 30.0, 30.0])
    """
    if not isinstance(results, Mapping) or not results:
        raise ValueError(
            "results must be a non-empty mapping {learner name: cross_validate result}"
        )
    scoring = one_scoring(scoring)
    scores, n_test, n_train, test_sets = {}, None, None, None
    results = cross_validate_dicts(results)  # frames: rows put in fold order
    check_indices_everywhere(results)
    for name, res in results.items():
        if not isinstance(res, Mapping):
            raise ValueError(
                f"the result of {name!r} is a {type(res).__name__}, not the dict that "
                "sklearn.model_selection.cross_validate returns; for arrays of fold scores "
                "use bayescv.fold_table"
            )
        key = score_key(name, res, scoring)
        scores[str(name)] = np.asarray(res[key], dtype=float)
        failed = np.flatnonzero(~np.isfinite(scores[str(name)])).tolist()
        if failed:
            raise ValueError(
                f"the {key!r} of {name!r} is NaN or infinite on fold(s) {failed}: "
                "cross_validate scores a failed fit as error_score (NaN by default); fix the "
                "failing fits (cross_validate(..., error_score='raise') shows why)"
            )
        if "indices" in res:
            te = np.array([len(t) for t in res["indices"]["test"]], dtype=float)
            tr = np.array([len(t) for t in res["indices"]["train"]], dtype=float)
            if n_test is not None and not (
                np.array_equal(te, n_test)
                and np.array_equal(tr, n_train)
                and _same_sets(res["indices"]["test"], test_sets)
            ):
                raise ValueError(
                    f"the test folds of {name!r} differ from the other learners': run every "
                    "learner on the same splits (the same cv object with a fixed random_state, "
                    "or a list of folds)"
                )
            n_test, n_train = te, tr
            test_sets = res["indices"]["test"]
    inferred = (
        None
        if test_sets is None
        else _repeated_partitions(test_sets, refuse_interleaved=runs is None)
    )
    n_folds = len(next(iter(scores.values())))
    if runs is None and test_sets is None and scheme == "random" and _composite(n_folds):
        warnings.warn(
            f"the results have no indices (cross_validate(..., return_indices=True)), so "
            f"their {n_folds} folds are read as one run of {n_folds}-fold CV; if they are R "
            "runs of a repeated splitter (RepeatedKFold, RepeatedStratifiedKFold: R·K folds) "
            "pass runs=R, as one run they give intervals far too narrow; runs=1 confirms one run",
            UserWarning,
            stacklevel=2,
        )
    if runs is None:
        runs = inferred or 1
    elif inferred is not None and int(runs) != inferred:
        raise ValueError(
            f"runs={runs}, but the results' test sets partition the data {inferred} time(s), "
            f"in {len(test_sets) // inferred} folds each: pass runs={inferred} (or leave it out)"
        )
    metric = scoring or "score"
    return fold_table(
        scores, runs=runs, n_test=n_test, n_train=n_train,
        greater_is_better=greater_is_better, metric=metric, score_range=score_range,
        scheme=scheme,
    )  # fmt: skip


def _composite(n: int) -> bool:
    """Whether `n` folds, more than 10, could be R ≥ 2 runs of K ≥ 2 folds.

    Up to 10 folds the usual single run (``cv=5``, ``cv=10``) is far likelier than a
    repeated splitter's 2 x 5, and a warning on every plain run would teach users to ignore it.
    """
    return n > 10 and any(n % r == 0 for r in range(2, int(np.sqrt(n)) + 1))


def _same_sets(sets: Sequence[Any], others: Sequence[Any]) -> bool:
    """Whether two lists of test sets hold the same points, fold by fold (order within a fold free)."""
    return len(sets) == len(others) and all(
        np.array_equal(np.sort(np.ravel(s)), np.sort(np.ravel(o)))
        for s, o in zip(sets, others, strict=True)
    )


def _repeated_partitions(test_sets: Sequence[Any], *, refuse_interleaved: bool) -> int | None:
    """R when the test sets are R consecutive runs that each partition the same points.

    None when the points are not all tested equally often (ShuffleSplit and the like), or are
    tested R > 1 times but not in R consecutive partitions; then, with `refuse_interleaved`, a
    ValueError: folds listed fold by fold across runs, read as one run, would pair the wrong
    folds in ``naive_folds`` (overlapping test sets by design, as LeavePOut's, take runs=1).
    """
    sets = [np.asarray(t).ravel() for t in test_sets]
    if not sets or any(t.size == 0 for t in sets):
        return None
    counts = np.bincount(np.concatenate(sets))
    tested = counts[counts > 0]
    R = int(tested[0])
    if not (tested == R).all():
        return None
    K = len(sets) // R
    consecutive = len(sets) % R == 0 and all(
        np.unique(run := np.concatenate(sets[r * K : (r + 1) * K])).size == run.size == tested.size
        for r in range(R)
    )
    if consecutive:
        return R
    if R > 1 and refuse_interleaved:
        raise ValueError(
            f"every point is tested {R} times, but the {len(sets)} test sets are not {R} "
            "consecutive runs that each partition the data (folds listed fold by fold across "
            "runs?): order the results run by run, as RepeatedKFold yields them, or pass "
            "runs=1 if the test sets overlap by design (LeavePOut)"
        )
    return None


def from_long_frame(
    frame: pd.DataFrame,
    *,
    score: str = "score",
    learner: str = "learner",
    fold: str = "fold",
    dataset: str | None = "dataset",
    repetition: str | None = "repetition",
    n_test: str | None = None,
    n_train: str | None = None,
    greater_is_better: bool | None = None,
    metric: str | None = None,
    score_range: Sequence[float] | None = None,
    scheme: str = "random",
) -> xr.Dataset:
    """Build a fold-score table from a long DataFrame, one row per (data set, learner, run, fold).

    Parameters
    ----------
    frame : pandas.DataFrame
        The results.
    score, learner, fold : str
        Column names of the score, the learner and the fold.
    dataset, repetition : str or None
        Column names of the data set and the CV repetition; a column that is absent (or None)
        means one data set, one run.
    n_test, n_train : str, optional
        Columns of the fold sizes.
    greater_is_better : bool, optional
        Direction of the scores (see :func:`fold_table`).
    metric : str, optional
        The score's name, or a scikit-learn scorer name that gives the direction.
    score_range : (float, float), optional
        The values the scores can take, for a metric bayescv does not know (see
        :func:`fold_table`).
    scheme : {"random", "source"}, default "random"
        ``"source"`` when the folds held out whole groups (leave-one-group-out): the fold
        table records it (``attrs["scheme"]``), and :func:`bayescv.compare_learners` then
        targets ``expected_cv`` and runs ``correlated_t`` and ``nadeau_bengio``, built for
        random K-fold CV, only when named, flagged ``random_kfold_only``.

    Returns
    -------
    xarray.Dataset
        The fold-score table; data sets and learners in order of first appearance. Data-set
        labels keep an integer dtype (``dataset=10`` selects data set 10); others become
        strings, as do learner names.

    Raises
    ------
    ValueError
        For an empty frame, missing columns (or ones that are levels of the index), missing
        labels (None or NaN) in the data set, learner, repetition or fold column, duplicated
        or missing (data set, learner, run, fold) cells, NaN scores or ones that are not
        numbers, fold sizes that differ between the learners of a fold, or as
        :func:`fold_table`.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"dataset": ["d1"] * 4 + ["d2"] * 4,
    ...                    "learner": ["lr", "lr", "rf", "rf"] * 2,
    ...                    "fold": [0, 1] * 4,
    ...                    "score": [0.9, 0.8, 0.85, 0.8, 0.7, 0.75, 0.6, 0.7]})
    >>> t = from_long_frame(df, metric="accuracy")
    >>> dict(t["loss"].sizes)
    {'dataset': 2, 'learner': 2, 'repetition': 1, 'fold': 2}
    """
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"expected a pandas DataFrame, got {type(frame).__name__}")
    for col in (score, learner, fold, dataset, repetition, n_test, n_train):
        if col is not None and col not in frame.columns and col in frame.index.names:
            raise ValueError(f"{col!r} is a level of the frame's index: pass frame.reset_index()")
    for col in (score, learner, fold, *(c for c in (n_test, n_train) if c is not None)):
        if col not in frame.columns:
            raise ValueError(f"column {col!r} not in the frame (columns: {list(frame.columns)})")
    if frame.empty:
        raise ValueError("empty input: the frame has no rows")
    df = frame.copy()
    for col, name in ((dataset, "_dataset"), (repetition, "_repetition")):
        df[name] = df[col] if col is not None and col in df.columns else 0
    keys = ["_dataset", learner, "_repetition", fold]
    for key, col in zip(keys, (dataset, learner, repetition, fold), strict=True):
        missing = df[key].isna()
        if missing.any():  # pandas would drop such rows from the cube, or misplace them
            raise ValueError(
                f"column {col!r} has {int(missing.sum())} missing label(s) (None or NaN), the "
                f"first in row {df.index[missing][0]!r}: every score needs its data set, "
                "learner, repetition and fold"
            )
    if df.duplicated(keys).any():
        raise ValueError(
            f"duplicated (data set, learner, repetition, fold) rows: {df[df.duplicated(keys)][keys].head(3).values.tolist()}"
        )
    df[score] = values = numeric_column(df, score, keys, "data set, learner, repetition, fold")
    if not np.isfinite(values).all():
        bad = df[~np.isfinite(values.to_numpy())][keys].head(3).values.tolist()
        raise ValueError(
            f"{int((~np.isfinite(values)).sum())} rows have a NaN or infinite {score!r}, for "
            f"example {bad} (data set, learner, repetition, fold): fix or remove the failed "
            "runs (every learner needs a score on every fold of every data set)"
        )
    cube = df.set_index(keys)[score].astype(float).to_xarray()
    if cube.isnull().any():
        empty = cube.isnull().to_series()
        first = [list(k) for k in empty[empty].index[:3]]
        # Fold labels that run on across repetitions give each run folds the others lack.
        runs_on = df.groupby("_repetition")[fold].agg(frozenset).nunique() > 1
        hint = (
            "; fold labels must restart in every repetition (0..K−1 in each run), not run on "
            "across runs"
            if runs_on
            else ""
        )
        raise ValueError(
            f"{int(empty.sum())} (data set, learner, repetition, fold) cells have no score, "
            f"for example {first}: every learner needs a score on every fold of every data "
            f"set{hint}"
        )
    order = {c: pd.unique(df[c]) for c in ("_dataset", learner)}
    cube = cube.sel({"_dataset": order["_dataset"], learner: order[learner]})
    values = cube.values.reshape(cube.shape[0], cube.shape[1], -1)
    runs = cube.shape[2]
    sizes = {}
    for name, col in (("n_test", n_test), ("n_train", n_train)):
        if col is None:
            sizes[name] = None
            continue
        if (df.groupby(["_dataset", "_repetition", fold])[col].nunique() > 1).any():
            raise ValueError(
                f"the learners' {col!r} differ on some fold: the learners of a data set must "
                "share its splits"
            )
        first = df[df[learner] == order[learner][0]].set_index(["_dataset", "_repetition", fold])
        arr = first[col].astype(float).to_xarray().sel(_dataset=order["_dataset"])
        sizes[name] = arr.values.reshape(arr.shape[0], -1)
    table = fold_table(
        values, runs=runs, learners=[str(x) for x in order[learner]],
        datasets=[str(x) for x in order["_dataset"]], n_test=sizes["n_test"],
        n_train=sizes["n_train"], greater_is_better=greater_is_better, metric=metric,
        score_range=score_range, scheme=scheme,
    )  # fmt: skip
    labels = np.asarray(order["_dataset"])
    if dataset is not None and dataset in frame.columns and labels.dtype.kind in "biu":
        # The user's integer labels, so that result.sel(dataset=10) finds data set 10.
        table = table.assign_coords(dataset=labels)
    return table


def from_loss_tables(
    tables: Mapping[str, xr.Dataset] | Sequence[xr.Dataset],
    *,
    learners: Sequence[str] | None = None,
) -> xr.Dataset:
    """Reduce per-point loss tables of learners on the same splits to a fold-score table.

    Parameters
    ----------
    tables : mapping or sequence of xarray.Dataset
        Loss tables (one CV run, or repeated CV with ``replicate_kind="repeat"``), one per
        learner, with the same blocks and block sizes.
    learners : sequence of str, optional
        Names when `tables` is a sequence.

    Returns
    -------
    xarray.Dataset
        The fold-score table: each block's mean loss, its size as ``n_test`` and the rest of the
        run as ``n_train`` (the data seen in training, for CV that partitions the data); the
        attribute ``loss_range`` is the tables' (:func:`bayescv.losses.effective_range`), and
        ``scheme`` is ``"source"`` when a table's is; ``block_kind`` is ``"point_pairs"``
        when a table's blocks are pairs of points (:func:`bayescv.losses.has_pair_blocks`).

    Raises
    ------
    ValueError
        For tables whose losses (``loss_name``), blocks, points per block or sizes differ,
        bootstrap or independent replicates, or a ``loss_name`` that is a scikit-learn
        scorer's (``"accuracy"``: scores, greater-is-better, not losses).

    Examples
    --------
    >>> from bayescv.losses import from_arrays
    >>> a = from_arrays([0.1, 0.3, 0.2, 0.6], [0, 0, 1, 1])
    >>> b = from_arrays([0.2, 0.2, 0.4, 0.4], [0, 0, 1, 1])
    >>> t = from_loss_tables({"a": a, "b": b})
    >>> t["loss"].sel(learner="a").values.ravel().tolist(), t["n_train"].values.ravel().tolist()
    ([0.2, 0.4], [2.0, 2.0])
    """
    if isinstance(tables, Mapping):
        learners = [str(k) for k in tables] if learners is None else learners
        tables = list(tables.values())
    tables = list(tables)
    if len(tables) < 1:
        raise ValueError("need at least one loss table")
    means, sizes = [], None
    for t in tables:
        validate(t)
        if is_scorer_name(name := t.attrs.get("loss_name")):
            # A scorer's values are greater-is-better: read as losses, "better" turns around.
            raise ValueError(
                f"a loss table holds {name!r}, a scikit-learn scorer's values, which are "
                "greater-is-better: read as losses they would turn 'better' around; negate "
                "them into losses, table.assign(loss=-table['loss']).assign_attrs("
                f"loss_name='negated {name}') (at the shell: --greater-is-better)"
            )
        _check_same_splits(tables[0], t)
        kind = t.attrs.get("replicate_kind") if "replicate" in t.dims else None
        if kind not in (None, "repeat"):
            raise ValueError(
                f"a table with replicate_kind={kind!r} is not repeated CV of one data set"
            )
        loss = t["loss"] if kind else t["loss"].expand_dims("replicate")
        block = t["block"] if kind else t["block"].expand_dims("replicate")
        per_run_means, per_run_sizes = [], []
        for r in range(loss.sizes["replicate"]):
            frame = pd.DataFrame({"b": block.values[r], "l": loss.values[r]})
            g = frame.groupby("b", sort=True)["l"]
            per_run_means.append(g.mean().to_numpy())
            per_run_sizes.append(g.size().to_numpy().astype(float))
        try:
            m, n = np.array(per_run_means), np.array(per_run_sizes)
        except ValueError:
            raise ValueError("runs with different numbers of blocks: not supported") from None
        if sizes is not None and not np.array_equal(n, sizes):
            raise ValueError("the tables' blocks differ: learners must share their CV splits")
        means.append(m.ravel())
        sizes = n
    n_total = sizes.sum(axis=1, keepdims=True)
    out = fold_table(
        np.stack(means), runs=sizes.shape[0], learners=learners,
        n_test=sizes.ravel(), n_train=(n_total - sizes).ravel(), greater_is_better=False,
        metric=tables[0].attrs.get("loss_name", "loss"),
        scheme="source" if any(t.attrs.get("scheme") == "source" for t in tables) else "random",
    )  # fmt: skip
    # The values a fold mean can take, for intervals of one learner's expected loss: the
    # widest of the tables' ranges (0-1 tables that declare none: [0, 1]).
    ranges = np.array([effective_range(t) for t in tables])
    out.attrs["loss_range"] = [float(ranges[:, 0].min()), float(ranges[:, 1].max())]
    if any(has_pair_blocks(t) for t in tables):  # PSIS-LOO, WAIC: pairs of points, no folds
        out.attrs["block_kind"] = "point_pairs"  # validate_fold_table refuses it
    return out


def _check_same_splits(first: xr.Dataset, table: xr.Dataset) -> None:
    """Refuse a loss table whose loss or fold of some point differs from the first table's.

    Equal block sizes are not enough: two shuffled K-fold runs with different seeds have them
    too, and their fold means are not paired. The check is on each point's (run, ``index``,
    ``block``), whatever the order of the rows; tables without ``index`` are checked on sizes.
    """
    names = [t.attrs.get("loss_name") for t in (first, table)]
    if None not in names and names[0] != names[1]:
        raise ValueError(
            f"the tables hold different losses ({names[0]!r} and {names[1]!r}): compare "
            "learners on the same loss"
        )
    if "index" not in first.coords or "index" not in table.coords:
        return
    points = []
    for t in (first, table):
        index = np.atleast_2d(t["index"].values)
        run = np.broadcast_to(np.arange(index.shape[0])[:, None], index.shape)
        order = np.lexsort((index.ravel(), run.ravel()))
        points.append((index.ravel()[order], np.atleast_2d(t["block"].values).ravel()[order]))
    (index_a, block_a), (index_b, block_b) = points
    if not (np.array_equal(index_a, index_b) and np.array_equal(block_a, block_b)):
        raise ValueError(
            "the tables' folds hold different points: learners must share their CV splits "
            "(the same cv object with a fixed random_state, or a list of folds)"
        )
