"""Figures of coverage studies, drawn from the xarray results alone.

Like :mod:`bayescv.plots`, whose label helpers it shares, this module needs no other part
of the package: it reads studies (:func:`bayescv.compare.run_study`), summaries
(:func:`bayescv.compare.summarize`) and decompositions (:func:`bayescv.compare.decompose`),
fresh or read back from disk.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import xarray as xr
from matplotlib.patches import Patch
from matplotlib.ticker import NullFormatter

from bayescv.compare._results import as_names, expect
from bayescv.plots import _loss_noun

__all__ = [
    "plot_coverage",
    "plot_decomposition",
    "plot_intervals",
    "plot_summary",
    "plot_theta",
]


def _methods(ds: xr.Dataset, methods: Sequence[str] | None) -> list[str]:
    names = ds["method_name"].values.tolist()
    if methods is None:
        return names
    methods = as_names(methods, "methods")  # "theta_B" is one name, not seven letters
    if not methods:  # an empty figure (and a matplotlib warning) otherwise
        raise ValueError(f"methods is empty: pass some of {names}, or None for all")
    missing = [m for m in methods if m not in names]
    if missing:
        raise ValueError(f"method(s) {missing} not in the result; it has {names}")
    return methods


def _settings(mapping: Mapping[Any, Any], what: str) -> list[Any]:
    """Return the mapping's keys, sorted: numbers (M, K, τ), as a numeric axis needs."""
    keys = list(mapping)
    bad = [k for k in keys if isinstance(k, bool) or not isinstance(k, int | float | np.number)]
    if bad:
        raise ValueError(
            f"the {what} must be keyed by the setting's number (M, K, ...), got {bad}: "
            "key them by number, {10: ..., 20: ...}, and name the setting with xlabel="
        )
    return sorted(keys)


def _dodged(xs: Sequence[Any], i: int, n: int) -> np.ndarray:
    """Positions of method `i` of `n` at the settings `xs`, shifted beside the others.

    Methods with equal coverage at a setting (naive_points and theta_A often are) drew one
    on top of the other, and a line in the legend was nowhere to be seen. The `n` methods
    spread over 4 % of the narrowest gap between settings per method (15 % at most), on the
    log scale where the axis is logarithmic; one setting counts as a gap of 1.
    """
    x = np.asarray(xs, dtype=float)
    log = x.min() > 0  # as _against_setting decides the scale
    t = np.log10(x) if log else x
    room = np.diff(t).min() if t.size > 1 else 1.0
    spread = min(0.04 * n, 0.15) * room
    shifted = t + (i - (n - 1) / 2) * spread / max(n - 1, 1)
    return 10**shifted if log else shifted


def _error_bar(p: np.ndarray, se: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return the ends of the error bar: ±2 MC s.e. in [0, 1], or the bound at 0 % or 100 %.

    At a coverage of 0 or 1, sqrt(p (1 − p) / n) is 0 and the bar would vanish as if the
    coverage were exact; there it reaches the exact one-sided 95 % bound of
    :func:`bayescv.compare.summary_table`, 1 − 0.05^(1/n) from the end (≈ 3/n).
    """
    low, high = np.clip(p - 2 * se, 0.0, 1.0), np.clip(p + 2 * se, 0.0, 1.0)
    with np.errstate(divide="ignore"):
        bound = 0.05 ** (1 / np.asarray(n, dtype=float))
    low = np.where((p == 1) & (n > 0), bound, low)
    high = np.where((p == 0) & (n > 0), 1 - bound, high)
    return low, high


def _against_setting(ax: Any, xs: Sequence[Any], xlabel: str, ylabel: str) -> Any:
    """Finish a plot against a setting: x axis ticked at the settings, labels, legend.

    The axis is logarithmic when every setting is positive (M and K grow geometrically), else
    linear: a setting of 0 (no heterogeneity) has no place on a log axis and would vanish.
    """
    if min(xs) > 0:
        ax.set_xscale("log")
    ax.set_xticks(xs, [str(x) for x in xs])
    ax.xaxis.set_minor_formatter(NullFormatter())  # no stray "3×10¹" between the settings
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize="small")
    return ax


def plot_coverage(
    summaries: Mapping[Any, xr.Dataset],
    *,
    target: str,
    methods: Sequence[str] | None = None,
    xlabel: str = "M (points per source)",
    ax: Any = None,
) -> Any:
    """Coverage of one target against a setting (M, K, ...), with ±2 MC standard errors.

    As Fig. 6 of Geras & Sutton (2013) plots estimators against M; the dashed line is the nominal
    coverage. Each method has its own colour and marker pair (ten colours, then a new marker),
    and the methods are drawn side by side, a little apart around each setting's tick, so that
    methods of equal coverage do not hide one another.
    A setting without a coverage (NaN: no replicate with an interval) breaks the method's line;
    it is marked by an x on the x axis and named in a note.

    The error bars are the summary's ``coverage_se`` (the binomial sqrt(p (1 − p) / n), the
    "±" of :func:`bayescv.compare.summary_table`) twice on either side, clipped to [0, 1]:
    no coverage lies outside, and near 100 % the bar would otherwise reach past it. At 0 % or
    100 %, where that error is 0, the bar reaches the table's exact one-sided 95 % bound,
    1 − 0.05^(1/n) from the end (n: ``n_valid``).

    Parameters
    ----------
    summaries : mapping of number to xarray.Dataset
        One summary per setting, e.g. ``{10: summarize(study_10), 20: ...}``.
    target : str
        Target whose coverage is drawn.
    methods : sequence of str, optional
        Methods, each in every summary; default those of the first summary.
    xlabel : str, default "M (points per source)"
        Label of the x axis.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on.

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    ValueError
        For no summaries, keys that are not numbers, summaries of different nominal levels, a
        method missing from one of them, or a summary without `target`.

    Notes
    -----
    The x axis is logarithmic when every setting is positive, else linear.
    """
    if not summaries:
        raise ValueError("no summaries to plot")
    xs = _settings(summaries, "summaries")
    first = summaries[xs[0]]
    levels = {x: float(summaries[x].attrs.get("level", np.nan)) for x in xs}
    if len({None if np.isnan(v) else v for v in levels.values()}) > 1:
        raise ValueError(
            f"the summaries are of different nominal levels ({levels}): coverage is "
            "compared with one nominal line; run the studies at one level"
        )
    names = _methods(first, methods)
    for x in xs:
        has = summaries[x]["method_name"].values.tolist()
        missing = [m for m in names if m not in has]
        if missing:
            raise ValueError(
                f"the summary for {x} lacks method(s) {missing}; it has {has}. Pass methods= "
                "common to all summaries"
            )
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4), layout="constrained")
    markers = "osD^vP*Xph"
    gaps = []
    for i, name in enumerate(names):
        p, se, n = [], [], []
        for x in xs:
            s = summaries[x].sel(method_name=name)
            if target not in s["target"].values:
                raise ValueError(f"the summary for {x} has no target {target!r}")
            p.append(float(s["coverage"].sel(target=target)))
            se.append(float(s["coverage_se"].sel(target=target)))
            n.append(int(s["n_valid"].sel(target=target)))
        at = _dodged(xs, i, len(names))
        p, se = np.asarray(p), np.asarray(se)
        low, high = _error_bar(p, se, np.asarray(n))
        ax.errorbar(at, p, yerr=[p - low, high - p], color=f"C{i % 10}",
                    marker=markers[i // 10 % len(markers)], ms=4, capsize=2, label=name)  # fmt: skip
        none = np.isnan(p)
        if none.any():  # no coverage (no replicate with an interval): an x on the x axis
            ax.plot(at[none], np.zeros(none.sum()), ls="none",
                    marker="x", color=f"C{i % 10}", transform=ax.get_xaxis_transform(),
                    clip_on=False)  # fmt: skip
            gaps.append(
                f"{name} at {', '.join(str(x) for x, n in zip(xs, none, strict=True) if n)}"
            )
    if gaps:  # the line breaks there: say why
        ax.text(0.01, 0.04, "no coverage (no replicate with an interval), x on the axis: "
                + "; ".join(gaps), transform=ax.transAxes, fontsize="small", va="bottom",
                wrap=True)  # fmt: skip
    level = float(first.attrs.get("level", np.nan))
    ax.axhline(level, ls="--", color="0.4", lw=1, label=f"nominal {100 * level:g}%")
    return _against_setting(ax, xs, xlabel, f"coverage of {target} (±2 MC s.e.)")


def plot_theta(study: xr.Dataset, *, methods: Sequence[str] | None = None, ax: Any = None) -> Any:
    """Distributions of θ̂ per method against the true θ = Var(μ̂) over replicates.

    Each box is over the replicates where the method's θ̂ is finite; a method with fewer says
    so under its name ("12 of 30 θ̂", or "no θ̂" for an empty box).

    Parameters
    ----------
    study : xarray.Dataset
        A study.
    methods : sequence of str, optional
        Methods to draw; default all.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on.

    Returns
    -------
    matplotlib.axes.Axes
    """
    expect(study, "study")
    names = _methods(study, methods)
    truth = float(np.var(study["mu_hat"].values, ddof=1))
    data = [study["theta_hat"].sel(method_name=m).values for m in names]
    n = study.sizes["replicate"]
    data = [d[np.isfinite(d)] for d in data]
    # A box over fewer replicates (failed or undefined θ̂) is named as such, an empty one too.
    ticks = [
        name if d.size == n else f"{name}\n({d.size} of {n} θ̂)" if d.size else f"{name}\n(no θ̂)"
        for name, d in zip(names, data, strict=True)
    ]
    if ax is None:
        _, ax = plt.subplots(figsize=(max(5.0, 0.6 * len(names) + 2), 4), layout="constrained")
    ax.boxplot(data, showmeans=True, showfliers=False)
    ax.set_xticks(np.arange(1, len(names) + 1), ticks, rotation=45, ha="right")
    ax.axhline(truth, color="C3", lw=1.5, label=f"true θ = Var(μ̂) = {truth:.3g}")
    ax.set_ylabel("θ̂ (variance of the CV estimate)")
    ax.legend(fontsize="small")
    return ax


def plot_decomposition(
    decompositions: Mapping[Any, xr.Dataset],
    *,
    xlabel: str = "M (points per source)",
    ax: Any = None,
    label: str = "",
) -> Any:
    """σ/ω/γ terms of the true θ against a setting (Fig. 4 of Geras & Sutton 2013).

    The y axis is logarithmic, so each term is drawn at its absolute value; a negative term
    (ω or γ terms from negatively correlated blocks) is circled in white, with a legend entry
    saying so, so that it is not read as a positive contribution. A term of exactly 0, which
    has no place on a log axis, is a triangle on the x axis, with a legend entry too.

    Parameters
    ----------
    decompositions : mapping of number to xarray.Dataset
        One :func:`bayescv.compare.decompose` result per setting; the x axis is logarithmic
        when every setting is positive, else linear.
    xlabel : str, default "M (points per source)"
        Label of the x axis.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on (draw CVR and CVS on two axes, or on one with `label`).
    label : str, default ""
        Prefix of the legend entries (e.g. ``"CVS "``).

    Returns
    -------
    matplotlib.axes.Axes
    """
    if not decompositions:
        raise ValueError("no decompositions to plot")
    xs = _settings(decompositions, "decompositions")
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4), layout="constrained")
    names = {
        "sigma2_term": "σ² term",
        "omega_term": "ω term",
        "gamma_term": "γ term",
        "theta": "θ",
    }
    negative_drawn = zero_drawn = False
    for key, text in names.items():
        values = np.array([float(decompositions[x][key]) for x in xs])
        style = {"color": "k", "lw": 2} if key == "theta" else {}
        (line,) = ax.plot(xs, np.abs(values), marker="o", ms=4, label=f"{label}{text}", **style)
        neg = values < 0
        if neg.any():  # the log axis shows |term|: mark where the term takes variance away
            ax.scatter(
                np.asarray(xs, dtype=float)[neg], -values[neg], s=40, facecolors="white",
                edgecolors=line.get_color(), zorder=3,
                label=None if negative_drawn else "open: negative term, drawn as |term|",
            )  # fmt: skip
            negative_drawn = True
        zero = values == 0
        if zero.any():  # no place on the log axis: on the x axis instead
            ax.plot(
                np.asarray(xs, dtype=float)[zero], np.zeros(zero.sum()), ls="none", marker="v",
                mfc="white", color=line.get_color(), transform=ax.get_xaxis_transform(),
                clip_on=False, label=None if zero_drawn else "triangle on the x axis: term exactly 0",
            )  # fmt: skip
            zero_drawn = True
    ax.set_yscale("log")
    return _against_setting(ax, xs, xlabel, "|contribution to Var(μ̂)|")


def plot_intervals(
    study: xr.Dataset,
    *,
    method: str,
    target: str,
    max_replicates: int = 100,
    ax: Any = None,
) -> Any:
    """One method's intervals over replicates, coloured by whether they cover the truth.

    Each interval is a vertical line with a cap at either end, so that an interval of zero
    width (lower = upper) shows as one cap. An interval the study flagged (its ``flag``, such as
    ``"not_converged"`` or ``"truncated_to_range"``) has an orange x at its middle, and the
    legend counts the flags. The title names the estimand the method's intervals are for
    (``method_target``), which need not be the `target` drawn.

    Parameters
    ----------
    study : xarray.Dataset
        A study with per-replicate truth `target`.
    method : str
        The method.
    target : str
        A per-replicate truth (``err_xy``, ``kfold_test_error``, ``ose_xy``, ``ose_cv``).
    max_replicates : int, default 100
        Draw the first replicates only (a positive integer); the x label then says how many
        of the study's these are ("first 100 of 200"), since the coverage in the title is
        theirs, not the summary's. When none of them has an interval the title says so ("no
        intervals to show") and only the truths are drawn.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on.

    Returns
    -------
    matplotlib.axes.Axes
    """
    expect(study, "study")
    _methods(study, [method])
    known = study["target"].values.tolist()
    if target not in known:
        raise ValueError(
            f"the study has no per-replicate truth {target!r}; it has {known} (coverage of "
            "a Monte Carlo truth such as err: plot_summary(summarize(study)))"
        )
    if (
        isinstance(max_replicates, bool)
        or not isinstance(max_replicates, int | np.integer)
        or max_replicates < 1
    ):
        raise ValueError(f"max_replicates must be a positive integer, got {max_replicates!r}")
    part = study.isel(replicate=slice(0, max_replicates)).sel(method_name=method)
    truth = part["truth"].sel(target=target).values
    lower, upper = part["lower"].values, part["upper"].values
    order = np.argsort(truth)
    covered = (lower <= truth) & (truth <= upper)
    # As summarize counts: replicates without an interval (or a truth) are not misses.
    defined = np.isfinite(lower) & np.isfinite(upper) & np.isfinite(truth)
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4), layout="constrained")
    x = np.arange(order.size)
    for mask, colour, text in ((covered, "C0", "covers"), (defined & ~covered, "C3", "misses")):
        idx = mask[order]
        if idx.any():  # no legend entry for what is not drawn
            lo, hi = lower[order][idx], upper[order][idx]
            ax.vlines(x[idx], lo, hi, color=colour, lw=1.2, label=text)
            # End caps: an interval of zero width (lower = upper) has no line to show.
            ax.scatter(np.r_[x[idx], x[idx]], np.r_[lo, hi], marker="_", s=30, color=colour,
                       linewidths=1.2)  # fmt: skip
    flags = part["flag"].values.astype(str) if "flag" in part else np.full(order.size, "")
    flagged = (defined & (np.char.str_len(flags) > 0))[order]
    if flagged.any():  # drawn, but the method said something is wrong with it
        counts = Counter(f for flag in flags[order][flagged] for f in flag.split(",") if f)
        ax.scatter(x[flagged], ((lower + upper) / 2)[order][flagged], marker="x", s=25,
                   color="C1", zorder=3, label="flagged: " + ", ".join(
                       f"{f} ({c})" for f, c in sorted(counts.items())))  # fmt: skip
    ax.plot(x, truth[order], "k.", ms=3, label=target)
    level = float(study.attrs.get("level", np.nan))
    n_defined = int(defined.sum())
    # the estimand the method's intervals are for, which need not be the truth drawn
    own = str(part["method_target"].item()) if "method_target" in part.coords else ""
    name = f"{method} (for {own})" if own else method
    if n_defined:
        undefined = f"; {order.size - n_defined} without an interval" * (n_defined < order.size)
        ax.set_title(
            f"{name}: {100 * covered[defined].mean():.0f}% of {n_defined} cover {target} "
            f"(nominal {100 * level:g}%{undefined})"
        )
    else:  # as plot_theta leaves a method without estimates empty
        ax.set_title(f"{name}: no intervals to show ({order.size} replicates without one)")
    total = study.sizes["replicate"]
    first = f"first {order.size} of {total} replicates" if order.size < total else "replicate"
    ax.set_xlabel(f"{first} (sorted by {target})")
    ax.set_ylabel(_loss_noun(study.attrs.get("loss_name")))  # "pinball loss", not "pinball"
    ax.legend(fontsize="small")
    return ax


def plot_summary(
    summary: xr.Dataset,
    *,
    targets: Sequence[str] | None = None,
    methods: Sequence[str] | None = None,
    ax: Any = None,
) -> Any:
    """Coverage of each method for each target, with ±2 MC standard errors.

    A method with undefined intervals in some replicates (``undefined`` of the summary) says
    so under its name, and a bar without a coverage (no replicate with an interval) reads
    "none" where it would stand. The bar of the target each method's intervals are for (its
    ``method_target``) is outlined.

    The error bars are, as in :func:`plot_coverage`, the summary's ``coverage_se`` twice on
    either side, clipped to [0, 1]: near 100 % the bar would otherwise reach past it; at 0 %
    or 100 %, where that error is 0, they reach the exact one-sided 95 % bound. The y
    axis runs from 0 to a little above 1, so that a bar ending at 100 % shows whole.

    Parameters
    ----------
    summary : xarray.Dataset
        From :func:`bayescv.compare.summarize`.
    targets : sequence of str, optional
        Targets; default all of the summary.
    methods : sequence of str, optional
        Methods, one group of bars each in this order; default all of the summary.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on.

    Returns
    -------
    matplotlib.axes.Axes
    """
    expect(summary, "summary")
    names = _methods(summary, methods)
    known = summary["target"].values.tolist()
    targets = known if targets is None else as_names(targets, "targets")
    if not targets:
        raise ValueError(f"targets is empty: pass some of {known}, or None for all")
    unknown = [t for t in targets if t not in known]
    if unknown:
        raise ValueError(f"unknown target(s) {unknown}; the summary has {known}")
    if ax is None:
        _, ax = plt.subplots(figsize=(max(5.0, 0.9 * len(names) + 2), 4), layout="constrained")
    x = np.arange(len(names))
    width = 0.8 / max(len(targets), 1)
    for i, target in enumerate(targets):
        part = summary.sel(method_name=names, target=target)
        offset = (i - (len(targets) - 1) / 2) * width
        coverage, se = part["coverage"].values, part["coverage_se"].values
        # ±2 MC s.e. in [0, 1], the exact bound at 0 or 100 %, as plot_coverage's
        low, high = _error_bar(coverage, se, part["n_valid"].values)
        # the bar of the target a method's intervals are for is outlined
        own = part["method_target"].values == target if "method_target" in part.coords else 0
        ax.bar(x + offset, coverage, width, yerr=[coverage - low, high - coverage],
               capsize=2, label=target, edgecolor="k", linewidth=1.5 * own)  # fmt: skip
        for at in (x + offset)[np.isnan(coverage)]:  # no interval in any replicate
            ax.text(at, 0.02, "none", rotation=90, ha="center", va="bottom", fontsize="small")
    level = float(summary.attrs.get("level", np.nan))
    ax.axhline(level, ls="--", color="0.3", lw=1, label=f"nominal {100 * level:g}%")
    undefined = summary["undefined"].sel(method_name=names).values
    ticks = [
        f"{name}\n({100 * u:.0f}% undefined)" if u > 0 else name
        for name, u in zip(names, undefined, strict=True)
    ]
    ax.set_xticks(x, ticks, rotation=30, ha="right")
    ax.set_xlim(-0.5, len(names) - 0.5)  # all methods, those without a bar too
    ax.set_ylim(0, 1.05)  # every (clipped) error bar whole, its cap at 100 % too
    ax.set_ylabel("coverage (±2 MC s.e.)")
    # Right of the axes: inside, it would hide the bars of low coverage; above, it lay under
    # any title set afterwards (ax.set_title), the two unreadable.
    handles = ax.get_legend_handles_labels()[0]
    if "method_target" in summary.coords:  # the outline's legend entry, no bar of its own
        handles.append(Patch(fc="none", ec="k", lw=1.5, label="outlined: the method's target"))
    ax.legend(handles=handles, fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0),
              frameon=False)  # fmt: skip
    return ax
