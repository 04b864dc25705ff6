"""The interval methods of :func:`bayescv.classical.cv_intervals`: names, defaults, targets.

Re-exported by :mod:`bayescv.classical.intervals`.
"""

from __future__ import annotations

from collections.abc import Sequence

from bayescv._names import did_you_mean
from bayescv.classical.estimators import ESTIMATORS

__all__ = [
    "INTERVAL_METHODS",
    "RANDOM_KFOLD_ONLY",
    "default_methods",
    "interval_target",
    "method_names",
]

#: Interval methods of :func:`bayescv.classical.cv_intervals`: every estimator plus Nadeau–Bengio.
INTERVAL_METHODS = (*ESTIMATORS, "nadeau_bengio")

#: Methods that assume random K-fold CV: left out of source tables' defaults and ``"all"``,
#: flagged ``"random_kfold_only"`` when named on one.
RANDOM_KFOLD_ONLY = ("theta_1", "theta_2", "theta_3", "theta_4", "theta_5", "nadeau_bengio")

_RANDOM_DEFAULT = (
    "naive_points", "naive_folds", "theta_1", "theta_2", "theta_3", "theta_4", "theta_5",
    "bayle_within", "bayle_all_pairs", "nadeau_bengio",
)  # fmt: skip
_SOURCE_DEFAULT = (
    "naive_points", "naive_folds", "theta_gamma", "theta_A", "theta_B",
    "theta_A_weighted", "theta_B_weighted", "bayle_within", "bayle_all_pairs",
)  # fmt: skip


def interval_target(method: str, scheme: str) -> str:
    """Return the estimand an interval method targets for a CV scheme (see the module docs).

    Parameters
    ----------
    method : str
        An interval method name (:data:`INTERVAL_METHODS` or ``"bootstrap"``).
    scheme : {"random", "source"}
        The CV scheme of the loss table.

    Returns
    -------
    str
        ``"kfold_test_error"``, ``"expected_cv"`` or ``"err"``.

    Examples
    --------
    >>> interval_target("theta_A", "random"), interval_target("theta_A", "source")
    ('err', 'expected_cv')
    >>> interval_target("bayle_within", "source")
    'kfold_test_error'
    """
    if method.startswith("bayle_"):
        return "kfold_test_error"
    return "expected_cv" if scheme == "source" else "err"


def default_methods(scheme: str) -> tuple[str, ...]:
    """Return the interval methods :func:`cv_intervals` uses by default for a scheme.

    Parameters
    ----------
    scheme : {"random", "source"}
        The CV scheme of the loss table.

    Returns
    -------
    tuple of str
        Method names. For ``"source"`` neither :data:`RANDOM_KFOLD_ONLY` nor ``theta_omega``
        (negative on most data sets; see the module docs).

    Examples
    --------
    >>> "theta_omega" in default_methods("random"), "theta_omega" in default_methods("source")
    (False, False)
    >>> "nadeau_bengio" in default_methods("random"), "nadeau_bengio" in default_methods("source")
    (True, False)
    """
    return _SOURCE_DEFAULT if scheme == "source" else _RANDOM_DEFAULT


def method_names(methods: Sequence[str] | str | None, scheme: str, has_boot: bool) -> list:
    """Return the methods `methods` names (None: the defaults; "all"), checked."""
    known, boot = (*INTERVAL_METHODS, "bootstrap"), ["bootstrap"] if has_boot else []
    if methods is None:
        names = list(default_methods(scheme)) + boot
    elif isinstance(methods, str) and methods == "all":
        skip = RANDOM_KFOLD_ONLY if scheme == "source" else ()
        names = [m for m in INTERVAL_METHODS if m not in skip] + boot
    else:
        names = [methods] if isinstance(methods, str) else list(methods)
    unknown = [m for m in names if m not in known]
    if unknown:
        raise ValueError(
            f"unknown interval method(s) {unknown}; known: {list(known)}"
            f"{did_you_mean(unknown[0], known)}"
        )
    if "bootstrap" in names and not has_boot:
        raise ValueError(
            "method 'bootstrap' needs bootstrap-replicated CV runs of the same estimator and "
            "data: pass bootstrap=bayescv.cv.bootstrap_cv_losses(...)"
        )
    if has_boot and "bootstrap" not in names:  # the table would go unused, silently
        raise ValueError(
            f"bootstrap= was given, but the methods {names} do not use it: add 'bootstrap' "
            "to them, or leave bootstrap= out"
        )
    if not names:
        raise ValueError("no interval methods requested")
    return names
