"""Defects found by using the population check as a new user would.

Reference values: the population-check p-values are the mid-p of
:func:`bayescv.bayes.predictive_check` (Gelman, Meng & Stern 1996); the tables are simulated
here with the generating error levels stated beside them.
"""

from __future__ import annotations

import warnings

import matplotlib
import numpy as np

from bayescv.bayes import fit, plot_population_check
from bayescv.losses import from_arrays, to_frame

matplotlib.use("Agg")

FAST = {"draws": 300, "tune": 300, "chains": 2, "rhat_max": 1.05, "ess_min": 50}
CLI_FAST = ["--draws", "300", "--tune", "300", "--chains", "2", "--random-state", "0"]


def _left_skewed_error_rates():
    """30 sources of 100 0-1 losses: 26 err at rate 0.45, four at 0.02 (left-skewed rates)."""
    rng = np.random.default_rng(2)
    rates = np.full(30, 0.45)
    rates[:4] = 0.02
    block = np.repeat(np.arange(30), 100)
    return from_arrays((rng.random(3000) < rates[block]).astype(float), block, scheme="source")


def test_cli_hint_for_zero_one_losses_suggests_no_refused_option(tmp_path, capsys):
    # The binomial model's population is logit-normal and `--population lognormal` is refused
    # for 0-1 losses: the hint must not send the user there. (It did: the hint offered the
    # lognormal population for every population other than the lognormal one.)
    from bayescv.cli import main

    path = tmp_path / "errors.csv"
    to_frame(_left_skewed_error_rates())[["loss", "block"]].to_csv(path, index=False)
    argv = ["bayes", str(path), "--scheme", "source", *CLI_FAST]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "new sources from the logit-normal population" in out
    assert "above 0.99" in out  # the left-skewed rates: skewness p-value near 1
    assert "--population lognormal" not in out
    assert "binomial model's only one" in out
    main([*argv, "--population", "lognormal"])  # what the old hint asked for
    assert "population='lognormal' is for the Gaussian model" in capsys.readouterr().err


def test_cli_hint_suggests_lognormal_only_for_sources_beyond_the_normal_draws(capsys):
    # A skewness p-value above 0.99 under the normal population: the sources are *less*
    # right-skewed than normal draws, which a lognormal population (skewed to the right)
    # would fit worse; only p-values below 0.01 point at it.
    from bayescv.cli.bayes import _print_population_check

    left = {
        "new_sources_spread": {"observed": 1.0, "p_value": 0.5},
        "new_sources_skewness": {"observed": -2.0, "p_value": 0.997},
    }
    _print_population_check(left, {"population": "normal"})
    out = capsys.readouterr().out
    assert "above 0.99" in out
    assert "--population lognormal" not in out
    assert "less right-skewed than its draws" in out
    right = {"new_sources_skewness": {"observed": 2.0, "p_value": 0.003}}
    _print_population_check(right, {"population": "normal"})
    assert "try --population lognormal" in capsys.readouterr().out


def test_population_plot_keeps_few_sources_readable():
    # Three sources whose levels differ (1, 2, 3 times a gamma loss): under the default
    # lognormal population τ rests mostly on its prior, and the replicated spread of three
    # new sources has a long right tail (its maximum some 400 times its median here). A
    # histogram of 40 linear bins over every draw put 80 % of them in its first bin; the
    # spread is now drawn on a log axis, where it spreads over the bins.
    import matplotlib.pyplot as plt

    rng = np.random.default_rng(7)
    block = np.repeat([0, 1, 2], 50)
    losses = rng.gamma(2.0, 0.5, 150) * (1 + block)
    table = from_arrays(losses, block, scheme="source", loss_range=(0, np.inf))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # three sources: τ rests on its prior
        idata = fit(table, random_state=0, **FAST)
    assert idata.sample_stats.attrs["population"] == "lognormal"
    axes = plot_population_check(idata)
    heights = np.array([patch.get_height() for patch in axes[0].patches])
    n_draws = idata.posterior_predictive.sizes["chain"] * idata.posterior_predictive.sizes["draw"]
    assert heights.sum() == n_draws  # every draw is drawn
    assert heights.max() < n_draws / 4
    assert axes[0].get_xscale() == "log"
    assert axes[0].get_xlabel().endswith("(log scale)")
    # The skewness of three means is bounded (|g1| <= 1/sqrt(2)): its axis stays linear.
    assert axes[1].get_xscale() == "linear"
    plt.close("all")


def test_population_plot_bins_stay_linear_without_a_long_tail_or_with_zeros():
    from bayescv.bayes.population_plot import _bins

    rng = np.random.default_rng(0)
    assert _bins(rng.normal(1.0, 0.1, 1000), 1.0) == (40, False)
    zeros = np.concatenate([np.zeros(900), rng.random(100)])  # a spread of exactly 0
    assert _bins(zeros, 0.0) == (40, False)
    heavy = np.exp(rng.normal(0.0, 2.0, 1000))
    bins, log_axis = _bins(heavy, 50.0)
    assert log_axis
    assert bins[0] == heavy.min()
    assert bins[-1] == max(heavy.max(), 50.0)


def test_equal_error_rates_have_no_skewness_row():
    # Three sources of 50 points with 5 errors each: every source mean is 0.1, so their
    # skewness is undefined and the row is left out (docs/bayes.md, "The population check").
    # Their average is 0.1 + 1.4e-17, and the rounding residues gave a skewness of exactly
    # -1 (scipy.stats.skew: NaN), reported as an observed value with a p-value.
    from scipy import stats as st

    from bayescv.bayes import predictive_check
    from bayescv.bayes.checks import replicated_statistics

    block = np.repeat(np.arange(3), 50)
    errors = np.tile(np.r_[np.ones(5), np.zeros(45)], 3)
    table = from_arrays(errors, block, scheme="source")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # three identical sources: τ rests on its prior
        idata = fit(table, random_state=0, **FAST)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # scipy: nearly identical data
        assert np.isnan(st.skew(idata.observed_data["ybar"].values))
        want = st.skew(idata.posterior_predictive["ybar_new"].values.reshape(-1, 3), axis=-1)
    check = predictive_check(idata)
    assert "new_sources_skewness" not in check["check"].values
    assert "new_sources_spread" in check["check"].values
    # Replicated sets of equal rates (equal error counts) are undefined too, as scipy's.
    rep = replicated_statistics(idata, "posterior")
    np.testing.assert_allclose(rep["new_sources_skewness"], want, rtol=1e-9, atol=1e-12)
