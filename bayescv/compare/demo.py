"""A short coverage study for ``bayescv demo``."""

from __future__ import annotations

import os
from pathlib import Path

import xarray as xr

from bayescv.compare.scenarios import BatesLogistic
from bayescv.compare.study import run_study
from bayescv.compare.summary import summarize, summary_table

__all__ = ["DEMO_METHODS", "demo_study", "save_demo_plot"]

#: Methods of the demo study: closed-form only, so that it runs in well under two minutes.
DEMO_METHODS = (
    "naive_points",
    "naive_folds",
    "theta_3",
    "theta_5",
    "bayle_within",
    "nadeau_bengio",
)


def demo_study(
    *,
    random_state: int | None = 0,
    n_jobs: int | None = None,
    progress: bool = False,
    n_replicates: int = 200,
    out: str | os.PathLike | None = None,
) -> str:
    """Run the demo study and return its printed summary.

    200 replicates of the logistic setting of Bates et al. (2024) (n = 100, p = 20, Bayes error 33%,
    10-fold CV of an unregularised logistic regression), six closed-form interval methods,
    nominal coverage 90%: about 20 s on one core.

    Parameters
    ----------
    random_state : int or None, default 0
        Seed of the study.
    n_jobs : int, optional
        Parallel workers.
    progress : bool, default False
        Show a progress bar.
    n_replicates : int, default 200
        Replicates.
    out : path-like, optional
        Directory; writes ``study.nc`` and ``study.png`` there.

    Returns
    -------
    str
        The text to print: a heading and :func:`bayescv.compare.summary_table`.

    Examples
    --------
    A short run (the default 200 replicates take about 20 s):

    >>> text = demo_study(n_replicates=5)
    >>> text.splitlines()[0]
    'Coverage study: how often do the intervals contain the truth?'
    """
    study = run_study(
        BatesLogistic(), None, list(DEMO_METHODS), n_replicates, level=0.90,
        random_state=random_state, n_jobs=n_jobs, progress=progress,
    )  # fmt: skip
    text = (
        "Coverage study: how often do the intervals contain the truth?\n"
        "Setting of Bates et al. (2024): logistic regression, n = 100, p = 20, Bayes error 33%, 10-fold CV.\n"
        "err_xy: error of the model fitted on the data set (exact); err: its mean over data sets.\n\n"
        + summary_table(summarize(study))
    )
    if out is not None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        study.to_netcdf(out / "study.nc", engine="h5netcdf")
        save_demo_plot(study, out / "study.png")
        text += f"\n\nwrote {out / 'study.nc'} and {out / 'study.png'}"
    return text


def save_demo_plot(study: xr.Dataset, path: str | os.PathLike) -> Path:
    """Draw the demo figure: naive CV intervals against err_xy, and coverage per method.

    Parameters
    ----------
    study : xarray.Dataset
        The demo study (any study with ``naive_points`` and the truth ``err_xy``).
    path : path-like
        PNG file to write.

    Returns
    -------
    pathlib.Path
        The path written.

    Notes
    -----
    The figure is a :class:`matplotlib.figure.Figure` drawn on its own canvas: neither
    pyplot's current backend nor its list of open figures changes.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from bayescv.compare import BatesLogistic
    >>> study = run_study(BatesLogistic(n=40, p=3, n_splits=4), methods=["naive_points"],
    ...                   n_replicates=3, random_state=0)
    >>> path = save_demo_plot(study, pathlib.Path(tempfile.mkdtemp()) / "study.png")
    >>> path.name, path.stat().st_size > 0
    ('study.png', True)
    """
    from matplotlib.figure import Figure

    from bayescv.compare.plots import plot_intervals, plot_summary

    fig = Figure(figsize=(13, 4.5), layout="constrained")
    left, right = fig.subplots(1, 2)
    plot_intervals(study, method="naive_points", target="err_xy", ax=left)
    summary = summarize(study, targets=["err_xy", "err"])
    plot_summary(summary, ax=right)
    right.set_title(f"coverage of err_xy and err (nominal {100 * summary.attrs['level']:g}%)")
    path = Path(path)
    fig.savefig(path, dpi=110)
    return path
