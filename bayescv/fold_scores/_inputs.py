"""What the fold-score builders take from users: pandas rows matched by label, numbers checked.

Positions are not labels: a DataFrame of ``cross_validate`` output sorted by its score, or
two learners' Series in different orders, would pair the wrong folds if read row by row. The
builders read such inputs by their labels, or refuse them with a message saying why.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "as_numbers",
    "check_indices_everywhere",
    "cross_validate_dicts",
    "missing_score",
    "numeric_column",
    "one_scoring",
    "score_key",
    "series_in_one_order",
]


def cross_validate_dicts(results: Mapping[Any, Any]) -> dict[Any, Any]:
    """Return `results` with each DataFrame of ``cross_validate`` output as its dict of columns.

    ``pd.DataFrame(cross_validate(...))`` numbers its rows 0 … K−1, one per fold; rows sorted
    or shuffled since are put back in that order. A frame with another index cannot be
    matched to the other learners' folds, and is refused. With ``return_indices=True``
    pandas refuses to build the frame (the ``indices`` dict does not align with the folds),
    so a frame has no sizes.

    Parameters
    ----------
    results : mapping
        ``{learner: cross_validate result or DataFrame of one}``.

    Returns
    -------
    dict
        The same keys; frames as ``{column: array}`` in fold order, other values as given.

    Raises
    ------
    ValueError
        For a frame with an ``indices`` column, or whose index is not the fold numbers.

    Examples
    --------
    >>> frame = pd.DataFrame({"test_score": [0.9, 0.8, 0.7]}, index=[2, 0, 1])
    >>> cross_validate_dicts({"lr": frame})["lr"]["test_score"].tolist()
    [0.8, 0.7, 0.9]
    """
    out = {}
    for name, res in results.items():
        columns = getattr(res, "columns", None)
        if columns is None or not hasattr(res, "to_numpy") or isinstance(res, Mapping):
            out[name] = res
            continue
        if "indices" in columns:
            raise ValueError(
                f"the DataFrame of {name!r} has an 'indices' column; pass the dict that "
                "cross_validate returned, whose indices give the fold sizes"
            )
        labels = np.asarray(res.index)
        if not (
            labels.dtype.kind in "iu" and np.array_equal(np.sort(labels), np.arange(len(res)))
        ):
            raise ValueError(
                f"the DataFrame of {name!r} has the index {labels[:5].tolist()}"
                f"{' …' if len(labels) > 5 else ''}, not the fold numbers 0 … {len(res) - 1} "
                "that pandas.DataFrame(cross_validate(...)) gives: its rows cannot be matched "
                "to the other learners' folds (if they are in fold order, pass "
                "frame.reset_index(drop=True))"
            )
        res = res.sort_index()
        out[name] = {str(c): res[c].to_numpy() for c in columns}
    return out


def check_indices_everywhere(results: Mapping[Any, Any]) -> None:
    """Refuse results of which some have ``indices`` and others not: unchecked splits."""
    has = {name: isinstance(r, Mapping) and "indices" in r for name, r in results.items()}
    if any(has.values()) and not all(has.values()):
        without = [str(name) for name, h in has.items() if not h]
        raise ValueError(
            f"the results of {without} have no 'indices' while the others have: their test "
            "folds cannot be checked against the others'; run every learner with "
            "cross_validate(..., return_indices=True) and pass the dicts it returns"
        )


def one_scoring(scoring: Any) -> str | None:
    """Return `scoring` as one name (a list of one name is that name), or a clear error.

    A fold-score table holds one metric: several names are refused, naming them.
    """
    if scoring is None or isinstance(scoring, str):
        return scoring
    names = list(scoring) if isinstance(scoring, list | tuple) else None
    if names is not None and len(names) == 1 and isinstance(names[0], str):
        return names[0]
    raise ValueError(
        f"scoring must be one scorer name, got {scoring!r}: a fold-score table holds one "
        "metric; build one table per scorer (scoring='accuracy', then scoring='f1', say)"
    )


def score_key(name: Any, res: Mapping[str, Any], scoring: str | None) -> str:
    """Return the key of `res` holding the score `scoring` names, or a clear error.

    ``test_<scoring>`` for several scorers; for one scorer, whose score is ``test_score``
    whatever it is, a scikit-learn scorer name says which metric that is.
    """
    key = "test_score" if scoring is None else f"test_{scoring}"
    if key in res:
        return key
    found = sorted(k for k in res if k.startswith("test_"))
    if found == ["test_score"]:
        from sklearn.metrics import get_scorer_names

        if scoring in get_scorer_names():
            return "test_score"
        raise ValueError(
            f"the result of {name!r} has one scorer's score, 'test_score', and "
            f"scoring={scoring!r} is not a scikit-learn scorer name "
            "(sklearn.metrics.get_scorer_names()): pass the name of the scorer cross_validate "
            "ran with, or leave scoring out"
        )
    raise ValueError(missing_score(name, key, res))


def missing_score(name: Any, key: str, res: Mapping[str, Any]) -> str:
    """Return the message for a result without `key`, with the `scoring` that reads it."""
    found = sorted(k for k in res if k.startswith("test_"))
    if not found:
        way = f"it has only {sorted(res)}, no test scores"
    else:  # several scorers: their scores are test_<name>, read by scoring=<name>
        way = f"it has {found}: pass scoring=" + " or ".join(repr(k[5:]) for k in found)
    return f"the result of {name!r} has no {key!r}: {way}"


def series_in_one_order(scores: Mapping[Any, Any]) -> dict[Any, Any]:
    """Return a mapping of pandas Series with every Series in the first one's index order.

    Series with the same index labels in another order are reordered to the first's; Series
    whose labels differ are refused (their folds cannot be matched). Other values are left
    as they are, read by position.

    Parameters
    ----------
    scores : mapping
        ``{learner: scores}``.

    Returns
    -------
    dict

    Raises
    ------
    ValueError
        For Series whose index labels differ from the first Series' or repeat.

    Examples
    --------
    >>> a = pd.Series([0.9, 0.8], index=["f0", "f1"])
    >>> b = pd.Series([0.7, 0.6], index=["f1", "f0"])
    >>> series_in_one_order({"a": a, "b": b})["b"].tolist()
    [0.6, 0.7]
    """
    series = {k: v for k, v in scores.items() if isinstance(v, pd.Series)}
    if len(series) < 2:
        return dict(scores)
    first_name, first = next(iter(series.items()))
    out = dict(scores)
    for name, s in series.items():
        if s.index.equals(first.index):
            continue
        same = s.index.is_unique and first.index.is_unique and set(s.index) == set(first.index)
        if not same:
            raise ValueError(
                f"the scores of {name!r} and {first_name!r} are pandas Series with different "
                f"index labels ({s.index[:5].tolist()} and {first.index[:5].tolist()}): "
                "their folds cannot be matched; give every learner the same fold labels"
            )
        out[name] = s.reindex(first.index)
    return out


def as_numbers(values: Any, what: str = "scores") -> np.ndarray:
    """Return `values` as a float array; text that is not a number is refused by value.

    Parameters
    ----------
    values : array-like
        Numbers, or strings of numbers (as a CSV read without types gives them).
    what : str, default "scores"
        What they are, for the message.

    Returns
    -------
    ndarray of float

    Raises
    ------
    ValueError
        Naming the first value that is not a number.

    Examples
    --------
    >>> as_numbers(["0.5", 1]).tolist()
    [0.5, 1.0]
    """
    try:
        return np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        pass
    arr = np.asarray(values, dtype=object)
    for position, value in np.ndenumerate(arr):
        if not _number(value):
            where = list(position) if arr.ndim > 1 else position[0]
            raise ValueError(
                f"{what} must be numbers, but the value at position {where} is {value!r} "
                f"(a {type(value).__name__})"
            ) from None
    return np.asarray(arr.tolist(), dtype=float)


def _number(value: Any) -> bool:
    if isinstance(value, numbers.Number):
        return True
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True


def numeric_column(
    frame: pd.DataFrame, column: str, keys: list[str], described: str = ""
) -> pd.Series:
    """Return a column as floats; an entry that is not a number is refused with its row.

    Missing entries (None, NaN, ``pd.NA``) become NaN, for the caller's message about them.

    Parameters
    ----------
    frame : pandas.DataFrame
        The long frame.
    column : str
        The score column.
    keys : list of str
        The columns that say where a row is (data set, learner, repetition, fold).
    described : str, optional
        What `keys` are, for the message (default: their names).

    Returns
    -------
    pandas.Series of float

    Raises
    ------
    ValueError
        Naming how many entries are not numbers, the first of them and its row.

    Examples
    --------
    >>> df = pd.DataFrame({"score": ["0.9", "n/a"], "fold": [0, 1]})
    >>> numeric_column(df, "score", ["fold"])
    Traceback (most recent call last):
    ...
    ValueError: column 'score' has 1 entry(ies) that are not numbers, the first 'n/a' in row 1, at [1] (fold)
    """
    raw = frame[column].astype(object)
    values = pd.to_numeric(raw, errors="coerce")
    bad = values.isna() & raw.notna()
    if bad.any():
        first = _plain(frame.index[bad.to_numpy()][0])
        row = frame[bad.to_numpy()].iloc[0]
        raise ValueError(
            f"column {column!r} has {int(bad.sum())} entry(ies) that are not numbers, the "
            f"first {row[column]!r} in row {first!r}, at {[_plain(v) for v in row[keys]]} "
            f"({described or ', '.join(keys)})"
        )
    return values.astype(float)


def _plain(value: Any) -> Any:
    """Return a NumPy scalar as the Python scalar it holds (for messages: 5, not np.int64(5))."""
    return value.item() if isinstance(value, np.generic) else value
