"""scikit-learn scorers in fold-score tables: their direction and the range of their values.

Every scikit-learn scorer returns greater-is-better values (errors come negated, as
``neg_mean_squared_error``); a bounded one's values have a known range (accuracy in [0, 1]).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bayescv.losses._range import as_range, check_within

__all__ = ["check_scorer_range", "direction", "given_range", "is_scorer_name", "scorer_range"]


def direction(metric: str | None, greater_is_better: bool | None) -> tuple[str, bool]:
    """Return the metric's name and direction (a scikit-learn scorer name gives its own)."""
    if greater_is_better is not None:
        if not greater_is_better and metric is not None and is_scorer_name(metric):
            # Read as losses, a scorer's values would turn "better" around (and lose its range).
            raise ValueError(
                f"{metric!r} is a scikit-learn scorer, whose values are greater-is-better "
                "(scikit-learn negates errors, as 'neg_mean_squared_error'): leave "
                "greater_is_better out, or give a lower-is-better metric another name "
                "(metric='error')"
            )
        return metric or "score", bool(greater_is_better)
    if metric is None:
        raise ValueError(
            "say which way the scores point: greater_is_better=True (accuracy, R², a "
            "scikit-learn scorer's output) or False (an error or a loss), or give `metric`, "
            "a scikit-learn scorer name"
        )
    if not is_scorer_name(metric):
        raise ValueError(
            f"unknown metric {metric!r}: not a scikit-learn scorer name; pass "
            "greater_is_better=True or False to say which way it points"
        )
    # Every scikit-learn scorer returns "greater is better" values (errors come negated,
    # as "neg_mean_squared_error").
    return metric, True


def is_scorer_name(metric: Any) -> bool:
    """Whether `metric` names a scikit-learn scorer, whose values are greater-is-better.

    Parameters
    ----------
    metric : object
        A metric's or a loss table's ``loss_name``.

    Returns
    -------
    bool
        Whether it is in :func:`sklearn.metrics.get_scorer_names`.

    Examples
    --------
    >>> is_scorer_name("accuracy"), is_scorer_name("zero_one")
    (True, False)
    """
    from sklearn.metrics import get_scorer_names

    return isinstance(metric, str) and metric in get_scorer_names()


#: scikit-learn scorers whose values lie in [0, 1] (by name, or name prefix before "_").
_UNIT_SCORERS = ("accuracy", "balanced_accuracy", "top_k_accuracy", "average_precision",
                 "roc_auc", "f1", "precision", "recall", "jaccard")  # fmt: skip


def scorer_range(metric: str) -> tuple[float, float]:
    """Return the values a scikit-learn scorer's output can take, ``(-inf, inf)`` if unknown.

    Scores in [0, 1] (accuracy, ROC AUC, F1, precision, recall, Jaccard and their averaged
    variants), negated errors at most 0 (``neg_*``; the Brier score in [−2, 0]: scikit-learn's
    multiclass Brier score sums over the classes, in [0, 2], and a fold score does not say
    how many classes there were), and R², explained variance and D² at most 1.

    Parameters
    ----------
    metric : str
        A scorer name (:func:`sklearn.metrics.get_scorer_names`).

    Returns
    -------
    tuple of float

    Examples
    --------
    >>> scorer_range("accuracy"), scorer_range("f1_macro"), scorer_range("neg_brier_score")
    ((0.0, 1.0), (0.0, 1.0), (-2.0, 0.0))
    >>> scorer_range("r2")
    (-inf, 1.0)
    """
    if metric == "neg_brier_score":
        return (-2.0, 0.0)
    if metric.startswith("neg_"):
        return (-np.inf, 0.0)
    if metric in ("r2", "explained_variance") or metric.startswith("d2_"):
        return (-np.inf, 1.0)
    if any(metric == name or metric.startswith(name + "_") for name in _UNIT_SCORERS):
        return (0.0, 1.0)
    return (-np.inf, np.inf)


def check_scorer_range(values: np.ndarray, metric: str, bounds: tuple[float, float]) -> None:
    """Refuse scores outside their scikit-learn scorer's range (accuracy in percent, say).

    Intervals are kept inside the range, so such scores would be cut to it silently. A
    rounding error of 1e-9 is let through.
    """
    low, high = bounds
    check_within(
        values, bounds, what="score(s)", where="(data set, learner, fold)", tolerance=1e-9,
        described=f"[{low}, {high}], the range of the scikit-learn scorer {metric!r}",
        hint=": for scores on another scale (percent, say) pass score_range, or rescale them",
    )  # fmt: skip


def given_range(score_range: Any, values: np.ndarray) -> tuple[float, float]:
    """Return the declared range of the scores, checked to hold them."""
    low, high = as_range(score_range, name="score_range")
    check_within(values, (low, high), "score_range", "score(s)", "(data set, learner, fold)")
    return low, high
