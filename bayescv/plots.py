"""Figures drawn from bayescv's xarray results alone.

This module imports no other part of the package, so any result, fresh or read back from
disk, can be plotted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import xarray as xr

__all__ = ["plot_best", "plot_block_losses", "plot_comparison"]


#: Above this many blocks only every k-th tick label is shown, k = ceil(n / MAX_TICK_LABELS).
MAX_TICK_LABELS = 30
#: Tick labels longer than this many characters are shortened in the middle with "…".
MAX_LABEL_CHARS = 20


def _shorten(label: str, limit: int = MAX_LABEL_CHARS) -> str:
    """``label``, or its start and end joined by "…" when it is longer than `limit`."""
    if len(label) <= limit:
        return label
    head = limit // 2
    return f"{label[:head]}…{label[-(limit - head - 1) :]}"


#: Readable names of the built-in losses (:data:`bayescv.cv.LOSSES`) for axis labels.
_LOSS_LABELS = {
    "zero_one": "0-1 loss",
    "squared": "squared error",
    "absolute": "absolute error",
    "log_loss": "log loss",
    "brier": "Brier loss",
}


def _loss_label(name: Any) -> str | None:
    """Readable name of a table's ``loss_name`` ("0-1 loss" for ``"zero_one"``) for a label.

    A name bayescv does not know comes back as it is; None or ``"unknown"`` (no name) as None.
    """
    if name is None or str(name) == "unknown":
        return None
    return _LOSS_LABELS.get(str(name), str(name))


def _loss_noun(name: Any) -> str:
    """Name the loss as a noun phrase after "mean": "0-1 loss", "squared error", "pinball loss".

    :func:`_loss_label`'s name, followed by "loss" unless it already ends in "loss" or
    "error" ("squared error loss" would say it twice); just "loss" for no name.

    >>> [_loss_noun(n) for n in ("zero_one", "squared", "pinball", "hinge_loss", None)]
    ['0-1 loss', 'squared error', 'pinball loss', 'hinge_loss', 'loss']
    """
    label = _loss_label(name)
    if label is None:
        return "loss"
    return label if label.lower().endswith(("loss", "error")) else f"{label} loss"


#: Where the package's figures put a legend that must not cover data: right of the axes,
#: outside them. Above the axes it lay under any title the user set afterwards.
_LEGEND_RIGHT = {"loc": "upper left", "bbox_to_anchor": (1.01, 1.0), "frameon": False}


def _legend_right(ax: Any, width: int = 18, **kwargs: Any) -> None:
    """Legend right of the axes, its labels wrapped at `width` characters.

    Right of the axes, not above: a title the user sets goes above. Wrapped, so that a long
    learner name in a label does not squeeze the axes to a sliver.
    """
    import textwrap

    handles, labels = ax.get_legend_handles_labels()
    wrapped = [textwrap.fill(label, width) for label in labels]
    ax.legend(handles, wrapped, fontsize="small", **_LEGEND_RIGHT, **kwargs)


def _few_ticks(axis: Any, nbins: int = 5) -> None:
    """Put at most ``nbins + 1`` major ticks on `axis` (matplotlib's steps of 1, 2, 2.5, 5).

    Matplotlib's default locator counts ticks by the axis length alone, so labels such as
    "0.00125" or "-0.975" on a narrow panel ran into one another.
    """
    from matplotlib.ticker import MaxNLocator

    axis.set_major_locator(MaxNLocator(nbins=nbins, steps=[1, 2, 2.5, 5, 10]))


#: Learner names longer than this are shortened in the middle in comparison figures.
MAX_LEARNER_CHARS = 30


def _distinct_short(names: Any, limit: int, step: int) -> list[str]:
    """Names shortened by :func:`_shorten`, the limit grown by `step` until as distinct as given.

    Names that differ only in the middle ("hospital_001_region_north", "hospital_002_...")
    would all shorten to one label; the limit grows until no two distinct names look the same.
    """
    names = [str(n) for n in names]
    while len(set(out := [_shorten(n, limit) for n in names])) < len(set(names)):
        limit += step
    return out


def _learner_labels(names: Any) -> list[str]:
    """Learner names shortened by :func:`_shorten` to ``MAX_LEARNER_CHARS`` characters.

    The limit grows by 20 until the shortened names are as distinct as the names, so that a
    pipeline's repr leaves room for the plot and no two learners look the same.
    """
    return _distinct_short(names, MAX_LEARNER_CHARS, 20)


def _dataset_note(result: xr.Dataset, r: xr.Dataset) -> str:
    """Name the data set drawn when the result has several (the figure shows one), else ""."""
    if "dataset" in result.dims and result.sizes["dataset"] > 1:
        return f"data set {r['dataset'].item()} of {result.sizes['dataset']}: "
    return ""


def _block_ticks(ax: Any, labels: Any) -> None:
    """Tick the x axis at 0, 1, ... with the block labels, thinned and shortened by one rule.

    The one rule of :func:`plot_block_losses` and :func:`bayescv.bayes.plot_ppc` (their
    docstrings state it): above ``MAX_TICK_LABELS`` labels every k-th is shown, k = ceil(n /
    MAX_TICK_LABELS); labels longer than ``MAX_LABEL_CHARS`` keep their start and end around
    "…", more of them where that is needed to keep distinct labels distinct. Labels are turned
    upright unless few and short, in a smaller font when many.
    """
    text = _distinct_short(labels, MAX_LABEL_CHARS, 2)
    step = -(-len(text) // MAX_TICK_LABELS)  # ceil
    at = np.arange(0, len(text), step)
    crowded = len(text) > 12 or max((len(t) for t in text), default=0) > 4
    style = {"fontsize": "small"} if len(at) > 12 else {}
    ax.set_xticks(at, [text[i] for i in at], rotation=90 if crowded else 0, **style)


def _group_summary(table: xr.Dataset, by: str) -> pd.DataFrame:
    """Mean, standard error and count of the losses per `by` label (first replicate only)."""
    if by not in table.coords:
        raise ValueError(f"the table has no {by!r} coordinate; it has {sorted(table.coords)}")
    sel = table.isel(replicate=0) if "replicate" in table.dims else table
    frame = pd.DataFrame({by: sel[by].values, "loss": sel["loss"].values})
    out = frame.groupby(by)["loss"].agg(["mean", "std", "count"])
    out["se"] = out["std"] / np.sqrt(out["count"])
    return out


def _replicate_shown(table: xr.Dataset) -> str:
    """Name the first replicate of a table in words; "" for a table of one CV run."""
    if "replicate" not in table.dims:
        return ""
    n = table.sizes["replicate"]
    kind = table.attrs.get("replicate_kind")
    return {
        "repeat": f"run 1 of {n} of repeated CV",
        "bootstrap": f"bootstrap replicate 1 of {n} (not the observed CV)",
        "independent": f"independent data set 1 of {n}",
    }.get(kind, f"replicate 1 of {n} (kind {kind!r})")


def plot_block_losses(
    tables: xr.Dataset | Mapping[str, xr.Dataset],
    *,
    by: str = "block",
    ax: Any = None,
) -> Any:
    """Mean loss per block or per source, with ±1 standard-error bars.

    Labels are sorted by the mean loss of the first table, those it lacks placed after its own
    (sorted by the mean of the next table that has them), so every table's every label is
    drawn; a dashed line marks each table's overall CV error, the mean of all its points.

    A table with a ``replicate`` dimension is drawn from its first replicate alone, and the
    figure says so: the dashed line is that replicate's mean, never the CV error, and its
    legend entry and the title name the replicate by its ``replicate_kind`` ("run 1 of 5 of
    repeated CV", "bootstrap replicate 1 of 20 (not the observed CV)", "independent data set
    1 of 10").

    The y axis names the tables' ``loss_name`` readably: "mean 0-1 loss ± 1 SE" for
    ``"zero_one"``, "mean squared error ± 1 SE" for ``"squared"``, "mean pinball loss ± 1 SE"
    for a name bayescv does not know, "mean loss ± 1 SE" for none.

    Tick labels: above 30 blocks only every k-th label is shown (k = ceil(n / 30)), and labels
    longer than 20 characters are shortened in the middle with an ellipsis, keeping their start
    and end, longer where labels that differ only in the middle would look the same (the rule
    of :func:`bayescv.bayes.plot_ppc`).

    Parameters
    ----------
    tables : xarray.Dataset or mapping of str to xarray.Dataset
        One loss table, or several drawn side by side: ``{"CVS": cvs, "CVR": cvr},
        by="source"`` puts each source's losses under leave-one-source-out and random K-fold CV
        next to each other. Blocks of different CV schemes (sources and folds) are different
        things: with ``by="block"`` the tables must share their scheme.
    by : {"block", "source"}, default "block"
        Coordinate to group the losses by.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; a new figure otherwise.

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on.

    Raises
    ------
    ValueError
        For no tables, a table without the `by` coordinate, ``by="block"`` with tables of
        different CV schemes, or tables of different losses (``loss_name``), which share no
        y axis: draw each on its own axes.

    Examples
    --------
    Blocks 0 and 1 have mean loss 0.25, block 2 has 0.7:

    >>> import matplotlib.pyplot as plt
    >>> from bayescv.losses import from_arrays
    >>> ax = plot_block_losses(from_arrays([0.1, 0.4, 0.3, 0.2, 0.9, 0.5], [0, 0, 1, 1, 2, 2],
    ...                                    loss_name="squared"))
    >>> ax.get_xlabel(), [label.get_text() for label in ax.get_xticklabels()]
    ('block (sorted by mean loss)', ['0', '1', '2'])
    >>> ax.get_ylabel()
    'mean squared error ± 1 SE'
    >>> plt.close(ax.figure)
    """
    single = isinstance(tables, xr.Dataset)
    if single:
        # The one table's legend entry: its learner when recorded (the scheme says nothing).
        learner = str(tables.attrs.get("estimator", "unknown"))
        tables = {learner if learner not in ("", "unknown") else f"mean per {by}": tables}
    if not tables:
        raise ValueError("no tables to plot")
    schemes = {name: t.attrs.get("scheme") for name, t in tables.items()}
    if by == "block" and len(set(schemes.values())) > 1:
        raise ValueError(
            f"blocks of different CV schemes are not comparable ({schemes}): fold k of random "
            'K-fold is no relation of source k; pass by="source" to compare them per source'
        )
    losses = {str(t.attrs.get("loss_name", "unknown")) for t in tables.values()}
    if len(losses - {"unknown"}) > 1:
        raise ValueError(
            f"the tables are of different losses ({sorted(losses)}), on different scales: "
            "draw each on its own axes, plot_block_losses(table, ax=ax)"
        )
    summaries = {name: _group_summary(t, by) for name, t in tables.items()}
    # Every label of every table: those the first table lacks follow its own.
    order: list[Any] = []
    for summary in summaries.values():
        new = summary.loc[~summary.index.isin(order)]
        order += new.sort_values("mean").index.tolist()
    if ax is None:
        _, ax = plt.subplots(figsize=(max(6.0, 0.12 * len(order) + 3), 4.5), layout="constrained")
    x = np.arange(len(order))
    width = 0.8 / len(summaries)
    shown = {name: _replicate_shown(t) for name, t in tables.items()}
    for i, (name, summary) in enumerate(summaries.items()):
        s = summary.reindex(order)
        offset = (i - (len(summaries) - 1) / 2) * width
        line = ax.errorbar(
            x + offset, s["mean"], yerr=s["se"], fmt="o", ms=3, capsize=0, lw=0.8, label=name
        )
        overall = np.average(summary["mean"], weights=summary["count"])
        text = f"mean of {shown[name]}" if shown[name] else "overall CV error"
        ax.axhline(
            overall, ls="--", lw=0.8, color=line[0].get_color(),
            label=text if single else f"{name}: {text}",
        )  # fmt: skip
    notes = [note if single else f"{name}: {note}" for name, note in shown.items() if note]
    if notes:
        ax.set_title("shown: " + "; ".join(notes), fontsize="medium")
    loss_name = losses.pop() if len(losses) == 1 else "unknown"
    first = "" if single else f" of {next(iter(tables))}"
    ax.set_xlabel(f"{by} (sorted by mean loss{first})")
    ax.set_ylabel(f"mean {_loss_noun(loss_name)} ± 1 SE")  # "mean 0-1 loss", not zero_one
    _block_ticks(ax, order)
    ax.legend(fontsize="small")
    return ax


def _negated(result: xr.Dataset) -> str:
    """Return " (−accuracy)" for losses that are a greater-is-better score negated, else "".

    Without it an expected loss of −0.92 reads as a nonsense loss.
    """
    if result.attrs.get("greater_is_better") in (1, True):
        return f" (−{result.attrs.get('metric', 'score')})"
    return ""


def _one_dataset(result: xr.Dataset, dataset: Any) -> xr.Dataset:
    """Return the result's first data set, or the one named (a clear error for a wrong name)."""
    if dataset is None:
        return result.isel(dataset=0)
    labels = result["dataset"].values.tolist()
    if dataset not in labels:
        hint = f": the labels are text, pass dataset={str(dataset)!r}" * (str(dataset) in labels)
        raise ValueError(f"unknown dataset {dataset!r}; the result has {labels}{hint}")
    return result.sel(dataset=dataset)


def plot_comparison(result: xr.Dataset, *, dataset: Any = None, ax: Any = None) -> Any:
    """Posterior of the difference of two learners' expected losses, with the ROPE.

    Draws the Student-t posterior of a correlated t-test
    (:func:`bayescv.learner_comparison.correlated_ttest`), shades the three regions
    "a better", "equivalent" (inside ±rope) and "a worse" and writes their probabilities. A
    posterior of no width (every fold difference the same, up to rounding) is drawn as one
    line at its value, its probabilities in the legend.

    Parameters
    ----------
    result : xarray.Dataset
        A correlated t-test result (variables ``mean``, ``scale``, ``df``, ``p_better``,
        ``p_equivalent``, ``p_worse``; attrs ``rope``, ``a``, ``b``).
    dataset : label, optional
        Which data set to draw (default: the first).
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; a new figure otherwise.

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on.

    Examples
    --------
    The legend gives the test's three probabilities (A's accuracy is higher in every fold):

    >>> import matplotlib.pyplot as plt
    >>> from bayescv import correlated_ttest, fold_table
    >>> table = fold_table([[0.90, 0.80, 0.85, 0.82], [0.70, 0.75, 0.72, 0.71]],
    ...                    greater_is_better=True)
    >>> ax = plot_comparison(correlated_ttest(table, rope=0.01))
    >>> ax.get_legend_handles_labels()[1]
    ['A better: 0.951', 'equivalent: 0.015', 'B better: 0.034']
    >>> plt.close(ax.figure)
    """
    from scipy import stats

    missing = {"mean", "scale", "df", "p_better"} - set(getattr(result, "data_vars", ()))
    if missing:
        # compare_learners' rows, say: its correlated_t row lacks the posterior's parameters
        raise ValueError(
            f"not a correlated t-test result: it lacks {sorted(missing)}; plot the result of "
            "bayescv.correlated_ttest(table, rope=...), the posterior this plot draws"
        )
    r = _one_dataset(result, dataset)
    loc, scale, df = (float(r[v]) for v in ("mean", "scale", "df"))
    rope = float(result.attrs.get("rope", 0.0))
    a, b = _learner_labels([result.attrs.get("a", "a"), result.attrs.get("b", "b")])
    # Learner names on a line of their own: long ones (estimator reprs) ran off both edges.
    difference = f"{a} − {b}"
    if ax is None:
        width = max(6.0, 3.5 + 0.075 * len(difference))  # the legend takes the right 2.5 in
        _, ax = plt.subplots(figsize=(width, 3.5), layout="constrained")
    # Every fold difference equal: the posterior is a point mass. Up to rounding too (a scale
    # of 4e-17 for differences all -0.02): such a density drew as a spike at the axis' edge,
    # the region it lies in invisible.
    point_mass = scale <= 1e-9 * max(abs(loc), rope)
    if point_mass:
        ax.axvline(
            loc, color="C0", lw=2,
            label=(
                f"all mass at {loc:.3g}: {a} better {float(r['p_better']):.3f}, equivalent "
                f"{float(r['p_equivalent']):.3f}, {b} better {float(r['p_worse']):.3f}"
            ),
        )  # fmt: skip
        # No density to set the scale: a symmetric view that shows the mass and the ROPE.
        half = max(1.5 * rope, 2.0 * abs(loc)) or 1.0
        ax.set_xlim(-half, half)
    else:
        q_lo, q_hi = stats.t.ppf([0.001, 0.999], df, loc, scale)
        lo, hi = min(q_lo, -1.5 * rope), max(q_hi, 1.5 * rope)
        # Grids over the density itself too: one over a ROPE far wider than the posterior
        # would step over its peak, and ramp its tails down over many scales. The ROPE's
        # edges are on the grid, so that the regions meet there.
        t_lo, t_hi = np.clip(stats.t.ppf([1e-6, 1 - 1e-6], df, loc, scale), lo, hi)
        x = np.unique(np.r_[
            np.linspace(lo, hi, 400), np.linspace(q_lo, q_hi, 400),
            np.linspace(t_lo, t_hi, 400), -rope, rope,
        ])  # fmt: skip
        x = x[(x >= lo) & (x <= hi)]
        y = stats.t.pdf(x, df, loc, scale)
        ax.plot(x, y, color="k", lw=1)
        regions = [
            (x <= -rope, "C2", f"{a} better: {float(r['p_better']):.3f}"),
            (np.abs(x) <= rope, "C7", f"equivalent: {float(r['p_equivalent']):.3f}"),
            (x >= rope, "C3", f"{b} better: {float(r['p_worse']):.3f}"),
        ]
        for mask, color, label in regions:
            ax.fill_between(x, 0, y, where=mask, color=color, alpha=0.5, label=label, lw=0)
    for edge in {-rope, rope}:
        ax.axvline(edge, color="C1", ls="--", lw=1)
    ax.set_xlabel(
        f"difference of expected losses{_negated(result)},\n{difference}\n(negative: {a} better)"
    )
    ax.set_yticks([])
    # Outside the axes: inside, it would hide the density or the point mass. Right of them,
    # as above them it would lie under a title the user sets; the point mass's one long
    # entry goes above, where it does not squeeze the axes to a sliver.
    title = f"{_dataset_note(result, r)}ROPE ±{rope:g}"
    if not point_mass:
        _legend_right(ax, title=title)
    else:
        ax.legend(
            fontsize="small", title=title, loc="lower center", bbox_to_anchor=(0.5, 1.0),
            frameon=False,
        )  # fmt: skip
    return ax


def plot_best(result: xr.Dataset, *, dataset: Any = None, ax: Any = None) -> Any:
    """Probability that each learner is the best, and its expected loss with an interval.

    Parameters
    ----------
    result : xarray.Dataset
        Output of :func:`bayescv.learner_comparison.compare_several`.
    dataset : label, optional
        Which data set to draw (default: the first).
    ax : matplotlib.axes.Axes, optional
        Axes for the probabilities; the intervals go on a twin panel to the right when a new
        figure is made.

    Returns
    -------
    matplotlib.axes.Axes
        The axes of the probabilities.

    Examples
    --------
    Learners are listed by expected loss, best (A, highest accuracy) first:

    >>> import matplotlib.pyplot as plt
    >>> from bayescv import compare_several, fold_table
    >>> table = fold_table([[0.90, 0.80, 0.85, 0.82], [0.70, 0.75, 0.72, 0.71],
    ...                     [0.88, 0.79, 0.86, 0.80]], greater_is_better=True)
    >>> ax = plot_best(compare_several(table, random_state=0))
    >>> [label.get_text() for label in ax.get_yticklabels()]
    ['A', 'C', 'B']
    >>> plt.close(ax.figure)
    """
    missing = {"p_best", "p_equivalent_to_best", "mean", "lower", "upper"} - set(result.data_vars)
    if missing:
        raise ValueError(f"not a compare_several result: it lacks {sorted(missing)}")
    r = _one_dataset(result, dataset)
    names = _learner_labels(r["learner"].values)
    order = np.argsort(r["mean"].values)
    y = np.arange(len(names))
    if ax is None:
        _, (ax, ax2) = plt.subplots(
            1, 2, figsize=(9, 0.5 * len(names) + 1.5), sharey=True, layout="constrained"
        )
    else:
        ax2 = None
    ax.barh(y - 0.2, r["p_best"].values[order], height=0.4, label="P(best)")
    ax.barh(
        y + 0.2, r["p_equivalent_to_best"].values[order], height=0.4,
        label=f"P(within ROPE {result.attrs.get('rope', 0):g} of best)",
    )  # fmt: skip
    ax.set_yticks(y, [names[i] for i in order])
    ax.set_xlim(0, 1)
    ax.set_xlabel("posterior probability")
    ax.invert_yaxis()
    # Right of the axes: inside, it would hide the bars of a learner; above, it would lie
    # under a title the user sets.
    note = _dataset_note(result, r).rstrip(": ")
    _legend_right(ax, title=note or None, alignment="left")
    if ax2 is not None:
        m, lo, hi = (r[v].values[order] for v in ("mean", "lower", "upper"))
        ax2.errorbar(m, y, xerr=[m - lo, hi - m], fmt="o", capsize=3)
        level = 100 * float(result.attrs.get("level", 0.95))
        ax2.set_xlabel(f"expected loss{_negated(result)}\n({level:g}% interval)")
        _few_ticks(ax2.xaxis)  # a narrow panel: "-0.975" and its neighbours ran together
    return ax
