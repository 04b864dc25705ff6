"""Figures of a fitted hierarchical model: predictive checks and the posterior of each target.

Both draw on matplotlib axes they are given (or a new figure) and return the axes; they use
only the ``InferenceData`` of :func:`bayescv.bayes.fit`, so a saved fit can be drawn too.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bayescv.bayes._posterior import reports_median
from bayescv.bayes.checks import predictive_check, replicated_statistics
from bayescv.bayes.fit import posterior_intervals

__all__ = ["plot_ppc", "plot_targets"]


def plot_ppc(idata, *, group: str = "posterior", level: float = 0.95, axes: Any = None) -> Any:
    """Draw the predictive check: per-block means, within-block variances, spread.

    The replicated statistics are labelled by the predictive distribution drawn ("posterior
    predictive" or "prior predictive"). Tick labels: above 30 blocks only every k-th label is
    shown (k = ceil(n / 30)), and labels longer than 20 characters are shortened in the middle
    with an ellipsis, keeping their start and end, longer where labels that differ only in
    the middle would look the same (the rule of :func:`bayescv.plots.plot_block_losses`).
    A posterior check of a fit whose diagnostics failed (the rows of
    :func:`~bayescv.bayes.posterior_intervals` flagged ``not_converged``) says so in red on
    the spread panel. Where a predictive interval of the block means leaves the loss's range
    (the Gaussian model gives blocks of squared errors near 0 intervals reaching below 0),
    the region outside the range is shaded and its edge drawn, "edge of the loss range" in
    the legend, as :func:`plot_targets` does: no block's mean loss can lie there.

    Parameters
    ----------
    idata : arviz.InferenceData
        A result of :func:`bayescv.bayes.fit`.
    group : {"posterior", "prior"}, default "posterior"
        Which predictive distribution.
    level : float, default 0.95
        Coverage of the predictive intervals drawn.
    axes : sequence of three matplotlib Axes, optional
        Where to draw; a new 1 x 3 figure otherwise.

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
        The three axes.

    Raises
    ------
    ValueError
        If `axes` is not three axes, for an unknown `group` or a `level` outside (0, 1).

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import numpy as np
    >>> from bayescv.bayes import fit
    >>> from bayescv.losses import from_arrays
    >>> rng = np.random.default_rng(0)
    >>> block = np.repeat(np.arange(5), 40)
    >>> table = from_arrays(rng.normal(1.0, 0.3, 200) + 0.1 * block, block, scheme="source")
    >>> axes = plot_ppc(fit(table, random_state=1))
    >>> len(axes), [ax.get_title() for ax in axes[:2]]
    (3, ['mean loss per source', 'within-source variance'])
    >>> plt.close(axes[0].figure)
    """
    import matplotlib.pyplot as plt

    from bayescv.plots import _block_ticks, _loss_label

    if axes is not None:
        axes = np.atleast_1d(np.asarray(axes, dtype=object)).ravel()
        if axes.size != 3:
            raise ValueError(
                "plot_ppc draws three panels (block means, within-block variances, spread) "
                f"and needs three axes; got {axes.size}"
            )
    check = predictive_check(idata, group=group, level=level)
    if axes is None:
        _, axes = plt.subplots(1, 3, figsize=(13, 4.5), layout="constrained")
    axes = np.asarray(axes).ravel()
    predictive = f"{group} predictive"
    # Blocks are sources under leave-one-source-out CV, folds under random K-fold.
    unit = "source" if idata.sample_stats.attrs.get("scheme") == "source" else "fold"
    titles = {"mean": f"mean loss per {unit}", "within_var": f"within-{unit} variance"}
    label = _loss_label(idata.sample_stats.attrs.get("loss_name"))  # "0-1 loss", not zero_one
    named = f" ({label})" if label else ""
    ylabels = {"mean": f"mean loss{named}", "within_var": f"variance of the losses{named}"}
    loss_range = [float(v) for v in idata.sample_stats.attrs.get("loss_range", (-np.inf, np.inf))]
    for ax, stat in zip(axes[:2], ("mean", "within_var"), strict=True):
        if stat not in check["statistic"].values:
            # The binomial model: a 0-1 loss's variance p (1 − p) is fixed by its mean.
            ax.text(
                0.5,
                0.5,
                f"0-1 losses: the within-{unit}\nvariance p(1 − p) is fixed\nby the error rate",
                ha="center",
                va="center",
                transform=ax.transAxes,
            )
            ax.set_axis_off()
            continue
        sub = check.where(check["statistic"] == stat, drop=True)
        x = np.arange(sub.sizes["check"])
        mid = sub["predictive_mean"].values
        err = np.vstack([mid - sub["lower"].values, sub["upper"].values - mid])
        ax.errorbar(
            x, mid, yerr=err, fmt="o", color="0.6", label=f"{predictive} ({100 * level:g}%)"
        )
        ax.plot(x, sub["observed"].values, "x", color="C3", label="observed")
        if stat == "mean":
            lowest, highest = np.min(sub["lower"].values), np.max(sub["upper"].values)
            _shade_outside_range(ax, lowest, highest, loss_range, axis="y")
        _block_ticks(ax, sub["block"].values)
        ax.set_title(titles[stat])
        ax.set_xlabel(f"{unit} (block)")
        ax.set_ylabel(ylabels[stat])
    # Above the panel: inside, it would hide error bars wherever it went.
    axes[0].legend(
        loc="lower center", bbox_to_anchor=(0.5, 1.08), ncols=2, fontsize="small", frameon=False
    )
    rep = replicated_statistics(idata, group)["spread"]
    spread = check.sel(check="spread")
    axes[2].hist(rep, bins=40, color="0.7", label=predictive)
    axes[2].axvline(float(spread["observed"]), color="C3", label="observed")
    axes[2].set_title(f"spread of {unit} means (p = {float(spread['p_value']):.2f})")
    axes[2].set_xlabel(f"standard deviation across {unit}s")
    axes[2].set_ylabel(f"{predictive} draws")
    axes[2].legend(loc="best")
    if group == "posterior" and idata.sample_stats.attrs.get("problems"):
        axes[2].set_ylim(top=1.25 * axes[2].get_ylim()[1])  # room above the bars
        _say_flagged(axes[2], "not_converged")
    return axes


def plot_targets(idata, *, level: float = 0.95, axes: Any = None) -> Any:
    """Histograms of the posterior of each target with its equal-tailed interval.

    The bounds marked (dashed) are those of :func:`posterior_intervals` (moved onto the loss's
    range where they fall outside it), the solid line the row's estimate (the posterior mean;
    the median for a lognormal or logit-normal population's ``ose`` and ``new_source``); the
    legend names it and gives the level. Posterior draws outside the range, which the Gaussian model gives for losses near
    their lower bound, are shaded, with the range's edge drawn. A panel whose row
    :func:`posterior_intervals` flags (``not_converged``, ``heavy_tail``, ...) says so in red
    in its top left corner; θ, which has no row, carries the flags of the fit (all but
    ``truncated_to_range``).

    Parameters
    ----------
    idata : arviz.InferenceData
        A result of :func:`bayescv.bayes.fit`.
    level : float, default 0.95
        Coverage of the interval marked.
    axes : sequence of matplotlib Axes, optional
        One per target (``expected_cv``; for CVS ``ose`` and ``new_source``; and ``theta``),
        in that order; new ones otherwise.

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
        The axes drawn on.

    Raises
    ------
    TypeError
        If `idata` is not a result of :func:`bayescv.bayes.fit` (a loss table, say).
    ValueError
        If `axes` is not one axes per target of the fit, or `level` is outside (0, 1).

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import numpy as np
    >>> from bayescv.bayes import fit
    >>> from bayescv.losses import from_arrays
    >>> rng = np.random.default_rng(0)
    >>> block = np.repeat(np.arange(5), 40)
    >>> table = from_arrays(rng.normal(1.0, 0.3, 200) + 0.1 * block, block, scheme="source")
    >>> axes = plot_targets(fit(table, random_state=1), level=0.9)
    >>> len(axes), axes[0].get_title(), axes[0].get_legend_handles_labels()[1]
    (4, 'expected_cv (sources at hand)', ['90% equal-tailed interval', 'posterior mean'])
    >>> plt.close(axes[0].figure)
    """
    import matplotlib.pyplot as plt

    from bayescv.plots import _few_ticks, _loss_label

    # First, before any figure exists: it checks `idata` (a loss table passed by mistake gets
    # the package's TypeError, not an AttributeError) and `level`.
    intervals = posterior_intervals(idata, level=level)
    names = [
        v for v in ("expected_cv", "ose", "new_source", "theta") if v in idata.posterior.data_vars
    ]
    if axes is None:
        _, axes = plt.subplots(
            1, len(names), figsize=(4.3 * len(names), 3.6), constrained_layout=True
        )
    axes = np.atleast_1d(np.asarray(axes, dtype=object)).ravel()
    if axes.size != len(names):
        raise ValueError(
            f"plot_targets needs one axes per target of the fit, {len(names)} for {names}; "
            f"got {axes.size}"
        )
    # Under random K-fold (CVR) there are no sources: expected_cv is over the data at hand.
    at_hand = "sources" if idata.sample_stats.attrs.get("scheme") == "source" else "data"
    titles = {
        "expected_cv": f"expected_cv ({at_hand} at hand)",
        "ose": "ose (mean over new sources)",
        "new_source": "new_source (one new source)",
        "theta": "θ: variance of the CV estimate",
    }
    # The bounds marked are posterior_intervals' (moved onto the loss's range, as the table
    # shows them); draws outside the range (a Gaussian model of squared errors) are shaded.
    loss_name = str(idata.sample_stats.attrs.get("loss_name", "unknown"))
    if loss_name.startswith("difference of"):  # bayescv.bayes.paired_comparison's fit
        axis_label = "difference of expected losses, A − B\n(negative: A better)"
    else:
        label = _loss_label(loss_name)  # "0-1 loss", not zero_one
        axis_label = "expected loss" + (f" ({label})" if label else "")
    rows = {str(t): i for i, t in enumerate(intervals["target"].values)}
    # θ has no row: the flags that concern the whole fit (convergence, tails) apply to it.
    fit_flags = sorted(
        {f for v in intervals["flag"].values for f in str(v).split(",") if f}
        - {"truncated_to_range"}
    )
    low, high = (float(v) for v in idata.sample_stats.attrs.get("loss_range", (-np.inf, np.inf)))
    population = idata.sample_stats.attrs.get("population")
    for ax, name in zip(axes, names, strict=True):
        draws = np.asarray(idata.posterior[name].values).ravel()
        counts, _, _ = ax.hist(draws, bins=50, color="0.7")
        ax.set_ylim(0, 1.6 * counts.max())  # headroom: the legend and flags cover no bar
        centre, centre_label = float(draws.mean()), "posterior mean"
        if name in rows:
            row = intervals.isel(method_name=rows[name])
            bounds = [float(row["lower"]), float(row["upper"])]
            if reports_median(population, name):  # the table's estimate, as it reports it
                centre, centre_label = float(row["estimate"]), "posterior median"
            _shade_outside_range(ax, draws.min(), draws.max(), (low, high), axis="x")
            flag = str(row["flag"].values)
        else:
            bounds = np.quantile(draws, [(1 - level) / 2, (1 + level) / 2]).tolist()
            flag = ",".join(fit_flags)
        for i, bound in enumerate(bounds):
            ax.axvline(
                bound, color="C0", linestyle="--",
                label=f"{100 * level:g}% equal-tailed interval" if i == 0 else None,
            )  # fmt: skip
        ax.axvline(centre, color="C0", label=centre_label)
        ax.legend(loc="upper right", fontsize="small")
        if flag:
            _say_flagged(ax, flag)
        ax.set_title(titles[name])
        ax.set_xlabel(axis_label if name != "theta" else "variance of the CV estimate")
        ax.set_yticks([])
        _few_ticks(ax.xaxis)  # labels such as "0.00125" ran together on a 4-inch panel
    return axes


def _shade_outside_range(
    ax: Any, lowest: float, highest: float, loss_range: Any, *, axis: str
) -> None:
    """Shade what reaches from `lowest` to `highest` past the loss's range, drawing its edge.

    `axis` is the axis the values lie on: ``"x"`` for plot_targets' posterior draws, ``"y"``
    for plot_ppc's predictive intervals of the block means. One legend entry, even when
    both edges are crossed.
    """
    span, line = (ax.axvspan, ax.axvline) if axis == "x" else (ax.axhspan, ax.axhline)
    low, high = loss_range
    label = "edge of the loss range"
    for edge, end, out in ((low, lowest, lowest < low), (high, highest, highest > high)):
        if out:
            span(end, edge, color="C3", alpha=0.12)
            line(edge, color="C3", linewidth=1, label=label)
            label = None


def _say_flagged(ax: Any, flag: str) -> None:
    """Write the flags of what the panel shows in red, in its top left corner."""
    ax.text(
        0.02, 0.98, f"flagged: {flag}", transform=ax.transAxes, ha="left", va="top",
        color="C3", fontsize="small",
    )  # fmt: skip
