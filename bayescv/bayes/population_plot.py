"""Figure of the population check: the observed source means against sets of new sources."""

from __future__ import annotations

from typing import Any

import numpy as np

from bayescv.bayes.checks import POPULATION_STATISTICS, predictive_check, replicated_statistics

__all__ = ["plot_population_check"]

_LABELS = {
    # Titles name the comparison: plot_ppc's third panel is the spread of the same sources.
    "new_sources_spread": (
        "spread, against new sources",
        "standard deviation of the source means",
    ),
    "new_sources_skewness": ("skewness, against new sources", "skewness (g1) of the source means"),
}


def _bins(draws: np.ndarray, observed: float) -> tuple[Any, bool]:
    """Return the histogram's bins, and whether its axis is logarithmic.

    With few sources a lognormal population's spread has a tail so long (τ rests on its
    prior) that 40 bins over all draws put most of them in the first bin. Where the fullest
    of those bins holds over a third of the draws and every value is positive, the bins are
    spaced evenly on a log axis instead, which keeps every draw in view.
    """
    counts, _ = np.histogram(draws, bins=40)
    if counts.max() <= draws.size / 3 or draws.min() <= 0 or observed <= 0:
        return 40, False
    lo, hi = min(draws.min(), observed), max(draws.max(), observed)
    return np.geomspace(lo, hi, 41), True


def plot_population_check(idata, *, axes: Any = None) -> Any:
    """Draw the population rows of the predictive check: observed sources against new ones.

    One panel per statistic of :data:`~bayescv.bayes.checks.POPULATION_STATISTICS` (the
    standard deviation and skewness of the source means; skewness needs three sources): a
    histogram of the statistic over replicated data sets whose sources are new draws from
    the fitted population, the observed value as a line and its p-value in the title
    (:func:`~bayescv.bayes.predictive_check`); a positive statistic whose draws have a
    long tail (the spread, with few sources) is drawn on a log axis. An observed skewness far in
    the right tail says the sources are more right-skewed than the population the fit
    assumes: under the normal population, try ``fit(..., population="lognormal")`` for a
    positive loss.

    Parameters
    ----------
    idata : arviz.InferenceData
        A CVS result of :func:`bayescv.bayes.fit` (random K-fold fits have no population).
    axes : sequence of matplotlib Axes, optional
        One per statistic (two; one with two sources or where every observed source mean
        is equal, which leaves the skewness out); a new figure otherwise.

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
        The axes drawn.

    Raises
    ------
    ValueError
        When the fit has no population (a random K-fold fit) or `axes` has the wrong
        number of axes.

    See Also
    --------
    bayescv.bayes.plot_ppc : The check of the observed sources' own replicates.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import numpy as np
    >>> from bayescv.bayes import fit
    >>> from bayescv.losses import from_arrays
    >>> rng = np.random.default_rng(0)
    >>> block = np.repeat(np.arange(6), 40)
    >>> table = from_arrays(rng.normal(1.0, 0.3, 240) + 0.1 * block, block, scheme="source")
    >>> axes = plot_population_check(fit(table, random_state=1, population="normal"))
    >>> [ax.get_title().split(" (")[0] for ax in axes]
    ['spread, against new sources', 'skewness, against new sources']
    >>> plt.close(axes[0].figure)
    """
    import matplotlib.pyplot as plt

    check = predictive_check(idata)
    stats = [s for s in POPULATION_STATISTICS if s in check["statistic"].values]
    if not stats:
        raise ValueError(
            "this fit has no population of sources to check (a random K-fold fit, or a "
            "fit made before bayescv drew new sources); fit a CVS table (scheme='source')"
        )
    if axes is None:
        _, axes = plt.subplots(
            1, len(stats), figsize=(4.5 * len(stats), 3.8), layout="constrained"
        )
    axes = np.atleast_1d(np.asarray(axes, dtype=object)).ravel()
    if axes.size != len(stats):
        raise ValueError(f"plot_population_check draws {len(stats)} panels; got {axes.size} axes")
    population = idata.sample_stats.attrs.get("population", "normal")
    replicated = replicated_statistics(idata, "posterior")
    for ax, stat in zip(axes, stats, strict=True):
        row = check.sel(check=stat)
        draws = replicated[stat][np.isfinite(replicated[stat])]
        observed = float(row["observed"])
        bins, log_axis = _bins(draws, observed)
        ax.hist(draws, bins=bins, color="0.7", label=f"new sources ({population} population)")
        ax.axvline(observed, color="C3", label="observed sources")
        title, xlabel = _LABELS[stat]
        if log_axis:
            ax.set_xscale("log")
            xlabel += " (log scale)"
        ax.set_title(f"{title} (p = {float(row['p_value']):.2f})")
        ax.set_xlabel(xlabel)
        ax.set_ylabel("posterior predictive draws")
    axes[0].legend(loc="best", fontsize="small")
    return axes
