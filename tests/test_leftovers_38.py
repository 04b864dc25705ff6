"""Leftovers noticed in earlier rounds, each with what a user saw before."""

from __future__ import annotations

import numpy as np

from bayescv.bayes import fit, predictive_check
from bayescv.losses import from_arrays

FAST = {"draws": 400, "tune": 400, "chains": 2, "rhat_max": 1.05, "ess_min": 50}


def _sources_with_multiplicative_spread():
    rng = np.random.default_rng(1)
    block = np.repeat(np.arange(12), 60)
    levels = np.exp(rng.normal(0.0, 0.8, 12))
    return from_arrays(rng.exponential(levels[block]), block, scheme="source", loss_name="squared")


def test_prior_predictive_check_replicates_the_lognormal_population():
    # Before: under the lognormal population (the default for squared errors over sources)
    # the prior predictive still drew the normal model's block means, a third of them < 0.
    table = _sources_with_multiplicative_spread()
    lognormal = fit(table, random_state=0, **FAST)
    normal = fit(table, random_state=0, population="normal", **FAST)
    replicated = lognormal.prior_predictive["ybar"].values
    assert np.all(replicated > 0)
    assert np.any(normal.prior_predictive["ybar"].values < 0)
    # The replicated sources' levels come from the stored log-scale prior: the log of a
    # draw's geometric-mean block mean follows that draw's log_mu0 (α), whose prior sd
    # (2.5 × the log losses' sd) dwarfs the per-draw scatter of the K levels around it.
    log_mean = np.log(replicated).mean(axis=-1).ravel()
    alpha = lognormal.prior["log_mu0"].values.ravel()
    assert np.corrcoef(log_mean, alpha)[0, 1] > 0.8
    check = predictive_check(lognormal, group="prior")
    assert np.isfinite(check["p_value"].values).all()


def test_logit_normal_population_reports_the_posterior_median_for_new_sources():
    # Before: the binomial model's ose and new_source rows reported the posterior mean, which
    # its right tail in τ puts about 0.12 posterior sd above the median
    # (benchmarks/results/binomial_ose_skew.md), where the lognormal population's rows
    # already gave the median.
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from scipy.special import expit

    from bayescv.bayes import plot_targets, posterior_intervals

    rng = np.random.default_rng(3)
    block = np.repeat(np.arange(8), 50)
    rates = expit(rng.normal(-2.5, 0.4, 8))
    zero_one = (rng.random(400) < rates[block]).astype(float)
    idata = fit(from_arrays(zero_one, block, scheme="source"), random_state=0, **FAST)
    assert idata.sample_stats.attrs["population"] == "logit-normal"
    rows = posterior_intervals(idata).set_index(method_name="target")
    for target in ("ose", "new_source"):
        draws = idata.posterior[target].values.ravel()
        assert float(rows["estimate"].sel(method_name=target)) == np.median(draws)
    draws = idata.posterior["expected_cv"].values.ravel()
    assert float(rows["estimate"].sel(method_name="expected_cv")) == draws.mean()
    axes = plot_targets(idata)
    legends = [t.get_text() for ax in axes for t in ax.get_legend().get_texts()]
    assert "posterior median" in legends
    assert "posterior mean" in legends
    plt.close("all")


def test_comparison_plots_keep_long_learner_names_inside_the_figure():
    # Before: estimator reprs as learner names ran the x-label of plot_comparison off both
    # edges of the figure, and plot_best's right-hand label touched its edge.
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from bayescv import compare_several, correlated_ttest, fold_table
    from bayescv.plots import plot_best, plot_comparison

    names = [
        "LogisticRegression(C=1.0)",
        "RandomForestClassifier(n_estimators=500)",
        "HistGradientBoostingClassifier()",
    ]
    scores = [[0.90, 0.80, 0.85, 0.82], [0.70, 0.75, 0.72, 0.71], [0.88, 0.79, 0.86, 0.80]]
    table = fold_table(scores, learners=names, greater_is_better=True)
    first = plot_comparison(correlated_ttest(table, a=names[0], b=names[1], rope=0.01))
    best = plot_best(compare_several(table, random_state=0))
    for ax in (first, *best.figure.axes):
        fig = ax.figure
        fig.canvas.draw()
        box = ax.xaxis.label.get_window_extent()
        assert box.x0 >= 0
        assert box.x1 <= fig.bbox.x1
    plt.close("all")


def test_cli_says_which_estimate_the_intervals_report(tmp_path, capsys):
    # Before: bayescv bayes printed the summary's posterior mean of ose beside an interval
    # row whose estimate, the median, differed from it, with nothing saying why.
    import pandas as pd

    from bayescv.cli import main

    rng = np.random.default_rng(0)
    block = np.repeat(np.arange(8), 60)
    zero_one = (rng.random(480) < 0.08).astype(int)
    normal = rng.normal(1.0, 0.3, 480) + 0.1 * block
    fast = ["--source-col", "block", "--no-progress", "--draws", "300", "--tune", "300"]
    note = "(estimate: the posterior median for ose and new_source, the mean for expected_cv)"
    for loss, shown in ((zero_one, True), (normal, False)):
        path = tmp_path / "losses.csv"
        pd.DataFrame({"loss": loss, "block": block}).to_csv(path, index=False)
        main(["bayes", str(path), *fast])
        assert (note in capsys.readouterr().out) is shown
