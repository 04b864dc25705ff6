"""Which kind of result a function was given (a study or its summary), and lists of names.

:data:`VALID_TARGETS` (the targets each design can cover) is here for both
:mod:`bayescv.compare.summary` and the summary table.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import xarray as xr

__all__ = ["VALID_TARGETS", "as_names", "expect"]

#: Targets that can be covered under each design.
VALID_TARGETS = {
    "iid": ("err_xy", "kfold_test_error", "err", "expected_cv"),
    "sources_fixed": ("err_xy", "kfold_test_error", "err", "expected_cv"),
    "sources_redrawn": ("err_xy", "kfold_test_error", "ose_xy", "ose_cv", "err", "ose"),
}


def expect(ds: Any, what: str) -> None:
    """Raise a ValueError unless `ds` is a study (``"study"``) or a summary (``"summary"``).

    Parameters
    ----------
    ds : object
        What the caller was given.
    what : {"study", "summary"}
        What it needs.
    """
    is_summary = isinstance(ds, xr.Dataset) and "coverage" in ds.data_vars
    is_study = isinstance(ds, xr.Dataset) and "replicate" in ds.dims and "lower" in ds.data_vars
    if (what == "summary" and is_summary) or (what == "study" and is_study):
        return
    given = "a summary" if is_summary else "a study" if is_study else type(ds).__name__
    how = "bayescv.compare.summarize(study)" if what == "summary" else "bayescv.compare.run_study"
    raise ValueError(f"expected a {what} (from {how}), got {given}")


def as_names(value: str | Iterable[str], what: str) -> list[str]:
    """Return a selection of names as a list: one name given as a string is one name.

    ``list("err")`` would be ``["e", "r", "r"]``: a bare string (``targets="err"``) is taken
    as the one name it is, as ``run_study(methods="theta_B")`` takes it.

    Parameters
    ----------
    value : str or iterable of str
        One name, or several.
    what : str
        What the names are (the argument's name), for the error message.

    Returns
    -------
    list of str

    Raises
    ------
    ValueError
        For a name given twice.

    Examples
    --------
    >>> as_names("err", "targets"), as_names(("err", "ose"), "targets")
    (['err'], ['err', 'ose'])
    """
    names = [value] if isinstance(value, str) else list(value)
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"{what}: {twice} given more than once; give each name once")
    return names
